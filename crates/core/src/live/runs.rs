//! What the core knows of each placed job's run beyond the GPUs it holds: when it
//! started, when it last saved a checkpoint, and whether it is already being stopped
//! (cancelled, or preempted). The round ([`super::round`]) protects young runs and
//! weighs the work a preemption would lose from these; the server tells the core each
//! fact when its row changes (it owns the job), and the core forgets a run when the job
//! leaves its GPUs.

use std::collections::BTreeMap;

use super::LiveCluster;
use crate::reclaim::{NodeRoom, RunningJob};
use crate::{JobId, NodeId};

/// One placed job's run, in the server's milliseconds (whole milliseconds keep the
/// comparisons with the minimum run time exact).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunFacts {
    /// It runs (its start was reported); `false` while it is starting.
    pub running: bool,
    /// When its current attempt started; `None` until reported.
    pub start_ms: Option<u64>,
    /// Its last checkpoint in this attempt.
    pub saved_ms: Option<u64>,
    /// A person asked to cancel it: it is on its way out and never preempted.
    pub cancelling: bool,
    /// It was asked to stop for someone else (a preemption under way).
    pub stopping: bool,
}

impl RunFacts {
    /// Whether a preemption must leave it alone at `now_ms`: it is being cancelled, or it
    /// started less than `min_ms` ago (or has not started: then "now").
    fn young_or_leaving(&self, now_ms: u64, min_ms: u64) -> bool {
        let since = self.start_ms.unwrap_or(now_ms);
        self.cancelling || now_ms.saturating_sub(since) < min_ms
    }

    /// Seconds of work lost if it stopped at `now_ms`: since its last checkpoint, or its
    /// start.
    fn unsaved(&self, now_ms: u64) -> f64 {
        let since = self.start_ms.unwrap_or(now_ms);
        let saved = self.saved_ms.unwrap_or(since).max(since);
        now_ms.saturating_sub(saved) as f64 / 1000.0
    }
}

impl LiveCluster {
    /// The server's facts of job `id`'s run (it changed). Ignored for a job that holds
    /// nothing; a job that left its GPUs is forgotten by the core itself.
    pub fn set_run(&mut self, id: u64, facts: RunFacts) {
        if self.holds_anything(id) {
            self.runs.insert(id, facts);
        } else {
            self.runs.remove(&id);
        }
    }

    /// The facts the core has of job `id`'s run (none: not placed, or nothing reported).
    pub fn run(&self, id: u64) -> Option<RunFacts> {
        self.runs.get(&id).copied()
    }

    /// Forgets the run of a job that left its GPUs.
    pub(super) fn forget_run(&mut self, id: u64) {
        self.runs.remove(&id);
    }

    /// Whether job `id` holds GPUs, a slice, or a GPU-less place on a node.
    fn holds_anything(&self, id: u64) -> bool {
        if let Some(i) = self.find(id) {
            return self.jobs[i].running;
        }
        self.find_slice(id)
            .is_some_and(|i| self.slice_jobs[i].at.is_some())
    }

    /// Whether some run is being stopped for someone else: a preemption under way, so
    /// no other is planned until it is done.
    pub fn preempting(&self) -> bool {
        self.runs.values().any(|r| r.stopping)
    }

    /// The running jobs the passes must not preempt at `now_ms`: starting, started less
    /// than the minimum run time ago, or being cancelled.
    pub(super) fn protect_young(&mut self, now_ms: u64) {
        let min_ms = self.min_runtime_ms;
        let protected: Vec<u64> = self
            .placed()
            .into_iter()
            .filter(|id| {
                self.runs.get(id).is_none_or(|r| {
                    !r.running || r.start_ms.is_none() || r.young_or_leaving(now_ms, min_ms)
                })
            })
            .collect();
        self.set_protected(protected);
    }

    /// The online nodes (a node's id is its index here), each one's room for whole
    /// GPUs, and the whole-GPU jobs holding GPUs on them with the work each would lose:
    /// what quota reclaim, priority tiers and the serving tier choose victims from
    /// (serving jobs are protected: never victims). Slices are never
    /// victims (quotas count whole GPUs); a gang's parts on nodes that are not online
    /// do not count.
    pub(super) fn running_view(
        &self,
        now_ms: u64,
    ) -> (Vec<String>, Vec<RunningJob>, Vec<NodeRoom>) {
        let online: Vec<&super::LiveNode> = self
            .nodes
            .iter()
            .filter(|n| n.unreachable.is_none())
            .collect();
        let mut parts: BTreeMap<u64, Vec<(NodeId, u32)>> = BTreeMap::new();
        let mut rooms = Vec::with_capacity(online.len());
        for (i, n) in online.iter().enumerate() {
            let node = NodeId(i as u32);
            if let Some(b) = self.book.get(&n.name) {
                let mut on: BTreeMap<u64, u32> = BTreeMap::new();
                for &job in b.whole.values() {
                    *on.entry(job).or_insert(0) += 1;
                }
                for (job, k) in on {
                    parts.entry(job).or_default().push((node, k));
                }
            }
            rooms.push(NodeRoom {
                node,
                free: self.whole_free(&n.name),
                // A drained node, or one whose GPUs are unhealthy, is not worth
                // preempting anyone on for GPUs nobody may use.
                capacity: self.whole_usable(&n.name),
                model: n.model.clone(),
            });
        }
        let min_ms = self.min_runtime_ms;
        let running = parts
            .into_iter()
            .filter_map(|(id, parts)| {
                let spec = &self.jobs[self.find(id)?].spec;
                let run = self.runs.get(&id).copied().unwrap_or_default();
                Some(RunningJob {
                    job: JobId(id),
                    queue: spec.queue,
                    parts,
                    gpus: spec.gpus,
                    priority: spec.priority,
                    unsaved: run.unsaved(now_ms),
                    protected: run.young_or_leaving(now_ms, min_ms) || self.serving.contains(&id),
                })
            })
            .collect();
        let names = online.into_iter().map(|n| n.name.clone()).collect();
        (names, running, rooms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_protected_while_young_or_cancelled_and_loses_work_since_its_last_save() {
        let r = RunFacts {
            running: true,
            start_ms: Some(10_000),
            saved_ms: Some(40_000),
            ..Default::default()
        };
        assert!(r.young_or_leaving(69_999, 60_000));
        assert!(!r.young_or_leaving(70_000, 60_000));
        assert_eq!(r.unsaved(70_000), 30.0);
        // A checkpoint of an earlier attempt (before this start) saves nothing.
        let old = RunFacts {
            saved_ms: Some(5_000),
            ..r
        };
        assert_eq!(old.unsaved(70_000), 60.0);
        let leaving = RunFacts {
            cancelling: true,
            ..r
        };
        assert!(leaving.young_or_leaving(1_000_000, 0));
        // Not started yet: it started "now", so it is young unless there is no minimum.
        let starting = RunFacts::default();
        assert!(starting.young_or_leaving(5_000, 1));
        assert!(!starting.young_or_leaving(5_000, 0));
        assert_eq!(starting.unsaved(5_000), 0.0);
    }
}
