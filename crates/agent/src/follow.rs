//! Attempts queued behind others on this node (`Desired::queued`, agent protocol 3): the
//! agent starts one the moment the attempt ahead of it ends by itself
//! ([`Outcome::follows`]), on the GPUs that attempt held, with no round of the server in
//! between; the server, told of both in one report, makes the same hand-over.
//!
//! What is queued follows the latest desired state (level-triggered, like `run`). An
//! attempt that ended before the desired state naming its follower arrived is
//! remembered, with whether its follower may start, until the server has its end and a
//! later poll was answered (the same mark as the journal's, `JobDir::ack_mark`); so a
//! follower starts at most once, and never behind an attempt that was preempted,
//! stopped or lost (the server sends those followers back to the queue).

use std::collections::BTreeMap;
use std::sync::Mutex;

use gpusched_wire::{AttemptRef, Launch, Outcome, QueuedLaunch};

#[derive(Default)]
pub struct Followers {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The agent is stopping: nothing starts any more.
    stopped: bool,
    /// The launch queued behind each attempt, from the latest desired state.
    behind: BTreeMap<AttemptRef, Launch>,
    /// Attempts that ended in this agent life, until the server has their ends.
    ended: BTreeMap<AttemptRef, Ended>,
}

struct Ended {
    /// It ended by itself: the attempt queued behind it starts.
    follows: bool,
    /// Its follower was handed out to start.
    taken: bool,
    /// The acknowledgement mark its end was acknowledged at.
    acked: Option<u64>,
}

impl Followers {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Attempt `a` ended with `outcome`: the launch to start now in its place, if one is
    /// queued behind it and it ended by itself.
    pub fn ended(&self, a: AttemptRef, outcome: &Outcome) -> Option<Launch> {
        let mut inner = self.lock();
        let follows = outcome.follows();
        let next = inner
            .behind
            .remove(&a)
            .filter(|_| follows && !inner.stopped);
        inner.ended.insert(
            a,
            Ended {
                follows,
                taken: next.is_some(),
                acked: None,
            },
        );
        next
    }

    /// The queue of a new desired state: it replaces the old one, but for attempts
    /// already received (`seen`). Returns the launches to start now: their attempt
    /// ahead already ended by itself here.
    pub fn set(&self, queued: &[QueuedLaunch], seen: impl Fn(AttemptRef) -> bool) -> Vec<Launch> {
        let mut inner = self.lock();
        inner.behind.clear();
        let mut now = Vec::new();
        if inner.stopped {
            return now;
        }
        for q in queued {
            if seen(q.launch.attempt_ref()) {
                continue;
            }
            match inner.ended.get_mut(&q.after) {
                Some(e) if e.follows && !e.taken => {
                    e.taken = true;
                    now.push(q.launch.clone());
                }
                // Preempted, stopped or lost: the server sends it back to the queue.
                Some(_) => {}
                None => {
                    inner.behind.insert(q.after, q.launch.clone());
                }
            }
        }
        now
    }

    /// The agent is stopping (it stops its jobs): nothing queued starts from now on.
    pub fn stop(&self) {
        let mut inner = self.lock();
        inner.stopped = true;
        inner.behind.clear();
    }

    /// Whether [`Followers::stop`] was called.
    pub fn stopped(&self) -> bool {
        self.lock().stopped
    }

    /// The server acknowledged the end of `a` at acknowledgement mark `mark`.
    pub fn acked(&self, a: AttemptRef, mark: u64) {
        if let Some(e) = self.lock().ended.get_mut(&a) {
            e.acked.get_or_insert(mark);
        }
    }

    /// Forgets the ends acknowledged before `mark`: a poll sent after that was answered,
    /// so no desired state names a follower of theirs any more.
    pub fn forget_acked_before(&self, mark: u64) {
        self.lock()
            .ended
            .retain(|_, e| e.acked.is_none_or(|m| m >= mark));
    }

    /// How many launches are queued and how many ends are remembered (for tests).
    #[cfg(test)]
    fn sizes(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.behind.len(), inner.ended.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(job: u64) -> Launch {
        Launch {
            job,
            attempt: 1,
            name: "t".into(),
            user: "u".into(),
            command: vec!["true".into()],
            cwd: "/".into(),
            env: Default::default(),
            gpus: vec![0],
            walltime_s: None,
            grace_s: 1,
            slice: None,
            resources: Default::default(),
            dist: None,
            cpu_milli: 0,
            mem_mib: 0,
            pids_max: None,
            image: None,
            serve: None,
            hold: false,
        }
    }

    fn a(job: u64) -> AttemptRef {
        AttemptRef { job, attempt: 1 }
    }

    fn q(after: u64, job: u64) -> QueuedLaunch {
        QueuedLaunch {
            after: a(after),
            launch: launch(job),
        }
    }

    #[test]
    fn a_follower_starts_once_when_the_attempt_ahead_ends_by_itself() {
        let f = Followers::default();
        assert!(f.set(&[q(1, 2), q(2, 3)], |_| false).is_empty());
        assert_eq!(f.sizes(), (2, 0));
        let next = f
            .ended(a(1), &Outcome::Exited { code: 3 })
            .expect("job 2 starts");
        assert_eq!(next.job, 2);
        // A desired state computed before the server heard of the end names job 2 again:
        // it is not handed out twice.
        assert!(f.set(&[q(1, 2), q(2, 3)], |_| false).is_empty());
        assert_eq!(f.ended(a(2), &Outcome::Cancelled).map(|l| l.job), Some(3));
    }

    #[test]
    fn nothing_starts_once_the_agent_stops() {
        let f = Followers::default();
        f.set(&[q(1, 2)], |_| false);
        f.stop();
        assert!(f.ended(a(1), &Outcome::Exited { code: 0 }).is_none());
        assert!(f.set(&[q(1, 2), q(3, 4)], |_| false).is_empty());
        assert!(f.stopped());
    }

    #[test]
    fn a_follower_never_starts_behind_a_preempted_stopped_or_lost_attempt() {
        for outcome in [
            Outcome::Preempted,
            Outcome::Stopped {
                message: "agent stopping".into(),
            },
            Outcome::Lost {
                message: "gone".into(),
            },
        ] {
            let f = Followers::default();
            f.set(&[q(1, 2)], |_| false);
            assert!(f.ended(a(1), &outcome).is_none(), "{outcome:?}");
            // Nor when a later desired state still names it.
            assert!(f.set(&[q(1, 2)], |_| false).is_empty(), "{outcome:?}");
        }
    }

    #[test]
    fn a_follower_named_after_its_predecessor_ended_starts_at_once_and_ends_are_forgotten() {
        let f = Followers::default();
        assert!(f.ended(a(1), &Outcome::Exited { code: 0 }).is_none());
        let now = f.set(&[q(1, 2)], |_| false);
        assert_eq!(now.iter().map(|l| l.job).collect::<Vec<_>>(), vec![2]);
        // Already received: not started again.
        assert!(f.set(&[q(1, 2)], |_| true).is_empty());
        f.acked(a(1), 5);
        f.forget_acked_before(5);
        assert_eq!(f.sizes(), (0, 1), "acknowledged at mark 5: kept");
        f.forget_acked_before(6);
        assert_eq!(f.sizes(), (0, 0));
    }
}
