//! Elastic jobs in the simulator (issue 37 item 2; `--elastic SHARE`): a share of a
//! trace's single-node jobs may run on any GPU count from `--elastic-min` to
//! `--elastic-max` times their trace size (capped by a node's GPUs), under the core's
//! rules ([`gpusched_core::elastic`]).
//!
//! A trace job's run time is its time at its trace size `g`; on `n` GPUs it progresses
//! `speedup(n) / speedup(g)` as fast (the job's Amdahl model). At every event, before the
//! pass, each running elastic job hands back the GPUs it holds above its minimum, so the
//! policy's pass sees them as free and waiting jobs take them in the policy's order;
//! after the pass each gets back what is still free of them on its node, then the idle
//! GPUs are spread by [`gpusched_core::elastic::spread`]. A job that was running and
//! ends the event with another size has resized: it loses `--resize-cost` seconds of
//! progress (a checkpoint and a restart), and may not grow again for
//! [`COOLDOWN_RESIZES`] resize costs. A job that starts at some size pays nothing more.

use gpusched_core::elastic::{spread, Elastic, Member, COOLDOWN_RESIZES};
use gpusched_core::{JobSpec, Placement, SchedJob, Scheduler, Seconds};

/// Which jobs are elastic, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct SimElastic {
    /// The share of single-node jobs made elastic (drawn per job id).
    pub share: f64,
    pub seed: u64,
    /// The range as factors of the trace size: min = max(1, floor(g x min)), max =
    /// min(GPUs per node, ceil(g x max)).
    pub min_factor: f64,
    pub max_factor: f64,
    /// Amdahl's serial fraction of every elastic job.
    pub serial: f64,
    /// Seconds of progress a resize costs.
    pub resize_cost: Seconds,
}

impl SimElastic {
    /// Checks the options, naming the one that is wrong.
    pub fn checked(self) -> Result<Self, String> {
        if !(self.share > 0.0 && self.share <= 1.0) {
            return Err(format!(
                "--elastic {}: give the share of single-node jobs made elastic, above 0 and \
                 at most 1, e.g. 0.5",
                self.share
            ));
        }
        if !(self.min_factor > 0.0 && self.min_factor <= 1.0) {
            return Err(format!(
                "--elastic-min {}: give the smallest size as a factor of the trace's, above 0 \
                 and at most 1, e.g. 0.5",
                self.min_factor
            ));
        }
        if !(self.max_factor >= 1.0 && self.max_factor.is_finite()) {
            return Err(format!(
                "--elastic-max {}: give the largest size as a factor of the trace's, at least \
                 1, e.g. 2",
                self.max_factor
            ));
        }
        if !(self.resize_cost >= 0.0 && self.resize_cost.is_finite()) {
            return Err(format!(
                "--resize-cost {}: give the seconds a resize costs (a checkpoint and a \
                 restart), 0 or more",
                self.resize_cost
            ));
        }
        Elastic {
            min: 1,
            max: 1,
            serial: self.serial,
        }
        .checked()
        .map_err(|e| format!("--elastic-serial: {e}"))?;
        Ok(self)
    }

    /// The range of the trace job `spec` if it is drawn elastic; `None` for the others
    /// and for jobs larger than a node.
    pub fn of(&self, spec: &JobSpec, per_node: u32) -> Option<Elastic> {
        let g = spec.gpus;
        if g == 0 || g > per_node || spec.gang.is_some() {
            return None;
        }
        if crate::deadlines::draw(self.seed, spec.id.0, 2) >= self.share {
            return None;
        }
        let min = ((f64::from(g) * self.min_factor).floor() as u32).clamp(1, g);
        let max = ((f64::from(g) * self.max_factor).ceil() as u32).clamp(g, per_node);
        Some(Elastic {
            min,
            max,
            serial: self.serial,
        })
    }
}

/// What the engine keeps of an elastic job beside the scheduler's view.
#[derive(Clone, Debug, PartialEq)]
pub struct ElasticRun {
    pub elastic: Elastic,
    /// Its trace size: the run time is counted at this size.
    pub trace_gpus: u32,
    /// Seconds of progress still owed to resizes.
    pub debt: Seconds,
    pub resized_at: Seconds,
    pub resizes: u32,
}

impl ElasticRun {
    pub fn new(elastic: Elastic, trace_gpus: u32) -> Self {
        ElasticRun {
            elastic,
            trace_gpus,
            debt: 0.0,
            resized_at: f64::NEG_INFINITY,
            resizes: 0,
        }
    }

    /// How fast it runs on `gpus` against its trace size.
    pub fn rate(&self, gpus: u32) -> f64 {
        self.elastic.speedup(gpus) / self.elastic.speedup(self.trace_gpus)
    }
}

/// The one node of a single-node placement.
fn one_node(job: &SchedJob) -> Option<(gpusched_core::NodeId, u32)> {
    match job.placement.as_ref()?.parts.as_slice() {
        [(node, k)] => Some((*node, *k)),
        _ => None,
    }
}

/// What it holds: its placement's GPUs. `spec.gpus` stays its minimum, what the pass
/// places and what every policy's key reads (a loan lives outside the pass).
fn set_size(job: &mut SchedJob, node: gpusched_core::NodeId, gpus: u32) {
    job.placement = Some(Placement {
        parts: vec![(node, gpus)],
    });
}

/// The GPUs a job holds now.
pub(crate) fn size(job: &SchedJob) -> u32 {
    job.placement
        .as_ref()
        .map_or(job.spec.gpus, Placement::gpus)
}

/// Before the pass: each running elastic job (indices in `running`, ascending) gives back the GPUs
/// above its minimum. Returns `(index, size)` of each, its size before.
pub(crate) fn lend_back(
    sched: &mut Scheduler,
    jobs: &mut [SchedJob],
    running: &[usize],
) -> Vec<(usize, u32)> {
    let mut before = Vec::new();
    for &i in running {
        let job = &mut jobs[i];
        let (Some(e), Some((node, k))) = (job.elastic, one_node(job)) else {
            continue;
        };
        before.push((i, k));
        if k > e.min {
            sched.release(&Placement {
                parts: vec![(node, k - e.min)],
            });
            set_size(job, node, e.min);
        }
    }
    before
}

/// After the pass: the jobs of `before` still running take back what is free of their
/// GPUs, then idle GPUs are spread over the running elastic jobs (`running`: every
/// running job's index, `runs[i]` the elastic state of job `i`); a job running before
/// whose size changed pays a resize. Returns how many resized.
pub(crate) fn settle(
    sched: &mut Scheduler,
    jobs: &mut [SchedJob],
    state: &mut [crate::engine::Progress],
    running: &[usize],
    before: &[(usize, u32)],
    now: Seconds,
    resize_cost: Seconds,
) -> u64 {
    // Back what is still free of each one's loan, on the node it now runs on.
    for &(i, was) in before {
        let job = &mut jobs[i];
        let Some((node, k)) = one_node(job).filter(|_| job.running) else {
            continue;
        };
        let want = was.saturating_sub(k);
        let back = want.min(sched.free_map().free(node));
        if back > 0
            && sched.occupy(&Placement {
                parts: vec![(node, back)],
            })
        {
            set_size(job, node, k + back);
        }
    }
    // The idle GPUs, spread.
    let mut idx = Vec::new();
    let mut members = Vec::new();
    for &i in running {
        let job = &jobs[i];
        let (Some(run), Some((node, k))) = (state[i].elastic.as_ref(), one_node(job)) else {
            continue;
        };
        // `before` is in index order, as `running` was.
        let was = before
            .binary_search_by_key(&i, |b| b.0)
            .ok()
            .map(|k| before[k].1);
        let remaining = job
            .remaining
            .or(job.spec.estimate.map(|_| job.estimated_remaining()))
            .map(|r| r / run.rate(k));
        members.push(Member {
            node: node.index(),
            size: k,
            elastic: run.elastic,
            remaining,
            starting: was.is_none(),
            may_grow: was.is_none() || now - run.resized_at >= COOLDOWN_RESIZES * resize_cost,
        });
        idx.push(i);
    }
    let mut resized = 0;
    if !members.is_empty() {
        let free_map = sched.free_map();
        let mut free: Vec<u32> = (0..free_map.nodes())
            .map(|n| free_map.free(gpusched_core::NodeId(n as u32)))
            .collect();
        let sizes = spread(&members, &mut free, resize_cost);
        for ((m, &i), &size) in members.iter().zip(&idx).zip(&sizes) {
            if size > m.size {
                let node = gpusched_core::NodeId(m.node as u32);
                let took = sched.occupy(&Placement {
                    parts: vec![(node, size - m.size)],
                });
                debug_assert!(took, "spread gave only free GPUs");
                if took {
                    set_size(&mut jobs[i], node, size);
                }
            }
        }
    }
    // Who changed size since the event began.
    for &(i, was) in before {
        let job = &jobs[i];
        let Some(run) = state[i].elastic.as_mut() else {
            continue;
        };
        if job.running && size(job) != was {
            run.debt += resize_cost;
            run.resized_at = now;
            run.resizes += 1;
            resized += 1;
        }
    }
    resized
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{simulate, SimOptions};
    use gpusched_core::{Cluster, PolicyConfig, PolicyKind};

    fn opts(share: f64) -> SimOptions {
        let mut o = SimOptions::new(PolicyConfig::new(PolicyKind::Fifo));
        o.elastic = Some(
            SimElastic {
                share,
                seed: 1,
                min_factor: 0.5,
                max_factor: 2.0,
                serial: 0.05,
                resize_cost: 5.0,
            }
            .checked()
            .unwrap(),
        );
        o
    }

    fn ends(o: &SimOptions) -> (Vec<(u64, f64)>, Option<crate::engine::ElasticCount>) {
        let csv = "submit,gpus,duration\n0,4,100\n10,8,50\n";
        let w = crate::trace::native::parse_csv("e.csv", csv).unwrap();
        let cluster = Cluster::parse_shape("1x8", "V100").unwrap();
        let run = simulate(&w, &cluster, o, &mut |_, _| {}).unwrap();
        let mut e: Vec<(u64, f64)> = run.jobs.iter().map(|j| (j.id.0, j.end)).collect();
        e.sort_by_key(|x| x.0);
        (e, run.elastic)
    }

    /// On one 8-GPU node: job 0 (4 GPUs, 100 s) starts alone and grows to 8 for free;
    /// job 1 (8 GPUs, 50 s) arrives at 10 s, takes its minimum of 4 from job 0's loan,
    /// and job 0 shrinks back to 4 paying the 5 s resize. Rigid, job 1 would wait for
    /// job 0 until 100 s and end at 150 s.
    #[test]
    fn a_job_grows_into_idle_gpus_and_shrinks_for_a_waiting_one() {
        let e = Elastic {
            min: 1,
            max: 1,
            serial: 0.05,
        };
        let (s4, s8) = (e.speedup(4), e.speedup(8));
        let (got, count) = ends(&opts(1.0));
        let job0 = 10.0 + 5.0 + (100.0 - 10.0 * s8 / s4);
        let job1 = 10.0 + 50.0 * s8 / s4;
        assert!(
            job1 < job0,
            "job 1 ends first at its minimum: {job1} {job0}"
        );
        assert_eq!(got.len(), 2);
        assert!((got[0].1 - job0).abs() < 1e-6, "{got:?} want {job0}");
        assert!((got[1].1 - job1).abs() < 1e-6, "{got:?} want {job1}");
        // Job 0 resized once (8 -> 4); job 1 never (job 0 ends 2.8 s after it: too
        // little left to pay for a grow).
        assert_eq!(count.map(|c| (c.jobs, c.resizes)), Some((2, 1)));
        // Without elastic jobs: the rigid order.
        let mut rigid = opts(1.0);
        rigid.elastic = None;
        assert_eq!(ends(&rigid).0, vec![(0, 100.0), (1, 150.0)]);
    }

    #[test]
    fn options_are_checked_and_ranges_follow_the_trace_size() {
        let base = SimElastic {
            share: 0.5,
            seed: 1,
            min_factor: 0.5,
            max_factor: 2.0,
            serial: 0.05,
            resize_cost: 60.0,
        };
        for (bad, flag) in [
            (
                SimElastic {
                    share: 0.0,
                    ..base.clone()
                },
                "--elastic",
            ),
            (
                SimElastic {
                    min_factor: 1.5,
                    ..base.clone()
                },
                "--elastic-min",
            ),
            (
                SimElastic {
                    max_factor: 0.5,
                    ..base.clone()
                },
                "--elastic-max",
            ),
            (
                SimElastic {
                    serial: 1.0,
                    ..base.clone()
                },
                "--elastic-serial",
            ),
            (
                SimElastic {
                    resize_cost: -1.0,
                    ..base.clone()
                },
                "--resize-cost",
            ),
        ] {
            let e = bad.checked().unwrap_err();
            assert!(e.starts_with(flag), "{e}");
        }
        let all = SimElastic { share: 1.0, ..base };
        let spec = |gpus| gpusched_core::JobSpec {
            id: gpusched_core::JobId(3),
            gpus,
            gpu_model: None,
            user: Default::default(),
            queue: Default::default(),
            account: Default::default(),
            priority: 0,
            submit: 0.0,
            estimate: None,
            cpu_milli: 0,
            mem_mib: 0,
            generic: Default::default(),
            gang: None,
            nodes: Vec::new(),
            prefer: Vec::new(),
            deadline: None,
        };
        let range = |g| all.of(&spec(g), 8).map(|e| (e.min, e.max));
        assert_eq!(range(1), Some((1, 2)));
        assert_eq!(range(3), Some((1, 6)));
        assert_eq!(range(8), Some((4, 8)));
        assert_eq!(range(16), None, "larger than a node: rigid");
        // A share draws per job id, the same whatever else changes.
        let half = SimElastic { share: 0.5, ..all };
        let n = (0..1000)
            .filter(|&id| {
                let mut s = spec(2);
                s.id = gpusched_core::JobId(id);
                half.of(&s, 8).is_some()
            })
            .count();
        assert!((450..550).contains(&n), "{n}");
    }
}
