//! Job groups: jobs that run as one (the tasks of an array with a `%K` limit). At most
//! `max_running` of a group's jobs hold GPUs at once, whatever waits of it, and its jobs
//! follow only each other (`follow.rs`), so a follower never adds a running member.

use std::collections::{BTreeMap, BTreeSet};

use super::cluster::LiveCluster;
use crate::SchedJob;

/// A job's group (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobGroup {
    pub id: u64,
    pub max_running: u32,
}

impl LiveCluster {
    /// Waiting whole-GPU jobs that must not start in this pass: in the order of the last
    /// pass, a group's jobs are let in while its running ones and those let in stay
    /// within its `max_running`.
    pub(super) fn over_group_caps(&self) -> BTreeSet<u64> {
        self.over_group_caps_among(|_| true)
    }

    /// [`LiveCluster::over_group_caps`] among the waiting jobs `among` admits only.
    pub(super) fn over_group_caps_among(&self, among: impl Fn(&SchedJob) -> bool) -> BTreeSet<u64> {
        let mut out = BTreeSet::new();
        if self.groups.is_empty() {
            return out;
        }
        let mut running: BTreeMap<u64, u32> = BTreeMap::new();
        for j in self.jobs.iter().filter(|j| j.running) {
            if let Some(g) = self.groups.get(&j.spec.id.0) {
                *running.entry(g.id).or_default() += 1;
            }
        }
        let mut waiting: Vec<&SchedJob> = self
            .jobs
            .iter()
            .filter(|j| !j.running && self.groups.contains_key(&j.spec.id.0) && among(j))
            .collect();
        waiting.sort_by_key(|j| (j.rank, j.spec.id));
        for j in waiting {
            let g = self.groups[&j.spec.id.0];
            let n = running.entry(g.id).or_default();
            if *n >= g.max_running {
                out.insert(j.spec.id.0);
            } else {
                *n += 1;
            }
        }
        out
    }
}
