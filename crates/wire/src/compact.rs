//! The compact desired state (issue 39 item 2): a launch travels once. The server keeps,
//! per node, each attempt it sent a launch of, where (GPUs, rank), and the generation
//! of the first desired state that carried it so ([`Offers`]); a poll naming the
//! generation the agent last applied ([`crate::PollQuery::have`]) is answered with
//! only the launches the agent cannot hold yet, the others named
//! ([`crate::Desired::run_known`], [`crate::Desired::queued_known`]), and the server
//! does not even build those. The agent keeps the launches of the state it applied
//! ([`Held`]) and puts the named ones back before reconciling, so what it reconciles is
//! the whole desired state, as before.
//!
//! Why it is safe:
//! - A launch is a function of its attempt and where it runs: a job's record does not
//!   change while an attempt of it is placed or queued on a node (only pending jobs
//!   not yet queued anywhere can be updated; a registration, which could change what
//!   the node is sent, empties the node's offers). So an attempt named again with the
//!   same GPUs and rank is the launch sent before; with others it is sent again.
//! - A node's generation moves with every change of its desired state, so every
//!   answer of a generation at or after the one that first carried a launch carried it
//!   too, while its attempt stayed listed there (an entry leaves [`Offers`] at the
//!   first answer that does not list it). An agent that applied generation `have`
//!   therefore holds it.
//! - Where that fails (an answer lost, a node entry made anew), the agent finds a name
//!   it does not hold and asks again for everything whole ([`Held::expand`]'s error);
//!   nothing is guessed.

use std::collections::BTreeMap;

use crate::agent::{AttemptRef, Desired, Launch, QueuedKnown, QueuedLaunch};

/// The server's side: what it sent one node in this registration.
#[derive(Debug, Default)]
pub struct Offers {
    sent: BTreeMap<AttemptRef, Offered>,
    /// Answers made so far (marks what the current one lists).
    answers: u64,
}

#[derive(Debug)]
struct Offered {
    /// The generation of the first desired state that carried the launch.
    gen: u64,
    gpus: Vec<u32>,
    rank: u32,
    /// The last answer that listed it.
    listed: u64,
}

/// One answer being made: which launches to send whole ([`Answer::holds`]).
pub struct Answer<'a> {
    offers: &'a mut Offers,
    gen: u64,
    have: Option<u64>,
}

impl Offers {
    /// Forgets everything (the agent registered again: it holds nothing).
    pub fn clear(&mut self) {
        self.sent.clear();
    }

    /// How many launches are kept.
    pub fn len(&self) -> usize {
        self.sent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sent.is_empty()
    }

    /// Starts the answer of generation `gen` for an agent that applied generation
    /// `have` (`None`: it holds nothing). Every attempt the answer lists must be asked
    /// of [`Answer::holds`]; the others are forgotten when it is [`Answer::done`].
    pub fn answer(&mut self, gen: u64, have: Option<u64>) -> Answer<'_> {
        self.answers += 1;
        Answer {
            offers: self,
            gen,
            // An agent's generation past this state's is from another sequence: it
            // holds nothing this one sent.
            have: have.filter(|&h| h <= gen),
        }
    }
}

impl Offers {
    /// The answer to an agent that applied `have`, from the whole state `whole`: for a
    /// caller that has every launch at hand already (the agent's tests' fake server; the
    /// server itself asks [`Answer::holds`] before it builds a launch). A launch's rank
    /// is its `dist.node_rank` (0 without one); a queued launch's is 0.
    pub fn compact(&mut self, whole: Desired, have: Option<u64>) -> Desired {
        let mut d = Desired {
            run: Vec::new(),
            queued: Vec::new(),
            ..whole
        };
        let mut ans = self.answer(d.gen, have);
        for l in whole.run {
            let rank = l.dist.as_ref().map_or(0, |x| x.node_rank);
            if ans.holds(l.attempt_ref(), &l.gpus, rank) {
                d.run_known.push(l.attempt_ref());
            } else {
                d.run.push(l);
            }
        }
        for q in whole.queued {
            if ans.holds(q.launch.attempt_ref(), &q.launch.gpus, 0) {
                d.queued_known.push(QueuedKnown {
                    after: q.after,
                    attempt: q.launch.attempt_ref(),
                });
            } else {
                d.queued.push(q);
            }
        }
        ans.done();
        d
    }
}

impl Answer<'_> {
    /// Whether the agent holds the launch of `a` on `gpus` as rank `rank`: true, name
    /// it; false, send it whole (it is recorded as sent in this answer's generation).
    pub fn holds(&mut self, a: AttemptRef, gpus: &[u32], rank: u32) -> bool {
        let (gen, listed) = (self.gen, self.offers.answers);
        match self.offers.sent.get_mut(&a) {
            Some(o) if o.gpus == gpus && o.rank == rank => {
                o.listed = listed;
                self.have.is_some_and(|h| o.gen <= h)
            }
            Some(o) => {
                *o = Offered {
                    gen,
                    gpus: gpus.to_vec(),
                    rank,
                    listed,
                };
                false
            }
            None => {
                self.offers.sent.insert(
                    a,
                    Offered {
                        gen,
                        gpus: gpus.to_vec(),
                        rank,
                        listed,
                    },
                );
                false
            }
        }
    }

    /// The answer is made: what it did not list is forgotten.
    pub fn done(self) {
        let listed = self.offers.answers;
        self.offers.sent.retain(|_, o| o.listed == listed);
    }
}

/// The agent's side: the launches of the desired state it applied last.
#[derive(Debug, Default)]
pub struct Held {
    launches: BTreeMap<AttemptRef, Launch>,
}

/// A launch named in a desired state that the agent does not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the server named job {}'s attempt {} as held, and it is not: asking for the whole desired state", .0.job, .0.attempt)]
pub struct NotHeld(pub AttemptRef);

impl Held {
    /// Forgets everything (a new registration, or an answer that could not be read).
    pub fn clear(&mut self) {
        self.launches.clear();
    }

    /// Makes `d` whole again: the named launches go back into `run` and `queued`, moved
    /// out of what is held (what `d` does not name is dropped). On a name not held the
    /// agent must ask again without `have`; what it held is then forgotten.
    pub fn expand(&mut self, d: &mut Desired) -> Result<(), NotHeld> {
        let mut held = std::mem::take(&mut self.launches);
        for a in std::mem::take(&mut d.run_known) {
            d.run.push(held.remove(&a).ok_or(NotHeld(a))?);
        }
        for q in std::mem::take(&mut d.queued_known) {
            let launch = held.remove(&q.attempt).ok_or(NotHeld(q.attempt))?;
            d.queued.push(QueuedLaunch {
                after: q.after,
                launch,
            });
        }
        Ok(())
    }

    /// Keeps the launches of the whole desired state `d` once it is applied (moved out
    /// of it).
    pub fn keep(&mut self, d: &mut Desired) {
        self.launches.clear();
        for l in std::mem::take(&mut d.run) {
            self.launches.insert(l.attempt_ref(), l);
        }
        for q in std::mem::take(&mut d.queued) {
            self.launches.insert(q.launch.attempt_ref(), q.launch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(job: u64, gpus: Vec<u32>) -> Launch {
        Launch {
            job,
            attempt: 1,
            name: format!("j{job}"),
            user: "u".into(),
            command: vec!["true".into()],
            cwd: "/".into(),
            env: BTreeMap::new(),
            gpus,
            walltime_s: None,
            grace_s: 10,
            slice: None,
            resources: BTreeMap::new(),
            dist: None,
            cpu_milli: 0,
            mem_mib: 0,
            pids_max: None,
            image: None,
            serve: None,
            hold: false,
        }
    }

    /// The whole state of generation `gen`: jobs running on the GPU of their number,
    /// jobs queued (after, job) on the GPU of the one they follow.
    fn desired(gen: u64, run: &[u64], queued: &[(u64, u64)]) -> Desired {
        Desired {
            gen,
            run: run.iter().map(|&j| launch(j, vec![j as u32])).collect(),
            cancel: Vec::new(),
            preempt: Vec::new(),
            reserve_ports: Vec::new(),
            epoch: 1,
            queued: queued
                .iter()
                .map(|&(after, j)| QueuedLaunch {
                    after: a(after),
                    launch: launch(j, vec![after as u32]),
                })
                .collect(),
            steps: Vec::new(),
            power_caps: BTreeMap::new(),
            run_known: Vec::new(),
            queued_known: Vec::new(),
        }
    }

    fn a(job: u64) -> AttemptRef {
        AttemptRef { job, attempt: 1 }
    }

    fn answer(offers: &mut Offers, whole: &Desired, have: Option<u64>) -> Desired {
        offers.compact(whole.clone(), have)
    }

    fn jobs(d: &Desired) -> Vec<u64> {
        d.run
            .iter()
            .map(|l| l.job)
            .chain(d.queued.iter().map(|q| q.launch.job))
            .collect()
    }

    /// The server's answers and the agent's reading through a run of generations: each
    /// launch travels once, and what the agent reconciles is always the whole state.
    #[test]
    fn a_launch_travels_once_and_the_agent_always_sees_the_whole_state() {
        let mut offers = Offers::default();
        let mut held = Held::default();
        let mut have = None;
        type Step<'a> = (u64, &'a [u64], &'a [(u64, u64)]);
        let steps: [Step; 5] = [
            (1, &[1, 2], &[(1, 3)]),
            (2, &[1, 2, 4], &[(1, 3)]),
            // Job 1 ended and job 3 took its place; 5 queued behind 3.
            (3, &[2, 3, 4], &[(3, 5)]),
            (4, &[2, 3, 4], &[(3, 5)]),
            // Job 2 left the state, then came back: it is sent again.
            (5, &[3, 4], &[(3, 5)]),
        ];
        let mut whole_sent = Vec::new();
        for (gen, run, queued) in steps {
            let whole = desired(gen, run, queued);
            let mut got = answer(&mut offers, &whole, have);
            whole_sent.push(jobs(&got));
            held.expand(&mut got).unwrap();
            got.run.sort_by_key(|l| l.job);
            let mut expect = whole.clone();
            expect.run.sort_by_key(|l| l.job);
            assert_eq!(got, expect, "generation {gen}");
            held.keep(&mut got);
            have = Some(gen);
        }
        let whole = desired(6, &[2, 3, 4], &[(3, 5)]);
        whole_sent.push(jobs(&answer(&mut offers, &whole, have)));
        // Job 3 went whole twice: queued behind 1 (GPU 1), then running on GPU 3: it
        // runs elsewhere than it was queued.
        assert_eq!(
            whole_sent,
            vec![vec![1, 2, 3], vec![4], vec![3, 5], vec![], vec![], vec![2]]
        );
        assert_eq!(offers.len(), 4);
    }

    /// An agent that did not apply an answer (it was lost) names an older generation
    /// and gets the launches of the newer one whole.
    #[test]
    fn a_lost_answer_is_sent_again_whole() {
        let mut offers = Offers::default();
        answer(&mut offers, &desired(1, &[1], &[]), None);
        let d2 = answer(&mut offers, &desired(2, &[1, 2], &[]), Some(1));
        assert_eq!((jobs(&d2), d2.run_known), (vec![2], vec![a(1)]));
        // The answer of generation 2 never arrived: the agent still says 1.
        let again = answer(&mut offers, &desired(2, &[1, 2], &[]), Some(1));
        assert_eq!((jobs(&again), again.run_known), (vec![2], vec![a(1)]));
        // A generation from another sequence (past this one) holds nothing.
        let other = answer(&mut offers, &desired(2, &[1, 2], &[]), Some(9));
        assert_eq!((jobs(&other), other.run_known), (vec![1, 2], vec![]));
        // Nor does a registration.
        offers.clear();
        let fresh = answer(&mut offers, &desired(3, &[1, 2], &[]), Some(2));
        assert_eq!(jobs(&fresh), vec![1, 2]);
    }

    /// A name the agent does not hold is an error it recovers from by asking again
    /// without `have`.
    #[test]
    fn a_name_not_held_asks_for_everything() {
        let mut held = Held::default();
        let mut d = desired(5, &[], &[]);
        d.run_known.push(a(7));
        assert_eq!(held.expand(&mut d), Err(NotHeld(a(7))));
        let mut d = desired(5, &[], &[]);
        d.queued_known.push(QueuedKnown {
            after: a(1),
            attempt: a(8),
        });
        assert_eq!(held.expand(&mut d), Err(NotHeld(a(8))));
    }

    /// The compact fields are absent from a whole state, so agents that never asked for
    /// them read what they always read.
    #[test]
    fn a_whole_state_has_no_compact_fields() {
        let d = answer(&mut Offers::default(), &desired(1, &[1], &[(1, 2)]), None);
        let text = serde_json::to_string(&d).unwrap();
        assert!(!text.contains("known"), "{text}");
    }
}
