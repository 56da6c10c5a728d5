//! Queue caps (`max`) and per-user caps (`max_gpus_per_user`) on the live cluster. A
//! queue's cap counts its slices by their fraction of a GPU, rounded up over the queue
//! (two halves hold one GPU of the cap); fair share (`drf`) and quota reclaim count whole
//! GPUs only.

use std::collections::{BTreeMap, BTreeSet};

use super::cluster::LiveCluster;
use crate::{QueueId, SchedJob, UserId};

/// The caps the whole-GPU pass sees: each capped queue's cap less the GPUs its placed
/// slices hold (rounded up).
pub fn whole_caps(
    caps: &BTreeMap<QueueId, u32>,
    slice_milli: &BTreeMap<QueueId, u64>,
) -> BTreeMap<QueueId, u32> {
    caps.iter()
        .map(|(q, &cap)| {
            let held = slice_milli.get(q).map_or(0, |m| m.div_ceil(1000) as u32);
            (*q, cap.saturating_sub(held))
        })
        .collect()
}

/// Whether a queue whose running jobs hold `whole` GPUs and `slices` thousandths takes
/// one more slice of `milli` thousandths under its cap.
pub fn slice_fits(whole: u64, slices: u64, milli: u64, cap: u32) -> bool {
    (whole * 1000 + slices + milli).div_ceil(1000) <= u64::from(cap)
}

impl LiveCluster {
    /// Thousandths of a GPU each user's placed jobs hold in each queue.
    pub(super) fn held_by_user(&self) -> BTreeMap<(QueueId, UserId), u64> {
        let mut held: BTreeMap<(QueueId, UserId), u64> = BTreeMap::new();
        for j in self.jobs.iter().filter(|j| j.running) {
            *held.entry((j.spec.queue, j.spec.user)).or_default() += u64::from(j.spec.gpus) * 1000;
        }
        for j in &self.slice_jobs {
            if let (Some((_, at)), Some(&user)) = (&j.at, self.users.get(&j.user)) {
                *held.entry((j.queue, user)).or_default() += u64::from(at.milli);
            }
        }
        held
    }

    /// Waiting whole-GPU jobs that must not start in this pass: in the order of the last
    /// pass, a user's jobs in a capped queue are let in while what they would hold
    /// together with what the user's running jobs (and placed slices, rounded up) hold
    /// stays within the cap. Conservative: a let-in job that does not fit keeps a later
    /// smaller one of the same user out until the next pass.
    pub fn over_user_caps(&self) -> BTreeSet<u64> {
        self.over_user_caps_among(|_| true)
    }

    /// [`LiveCluster::over_user_caps`] among the waiting jobs `among` admits only (the
    /// serving tier's part of a pass lets in serving jobs alone).
    pub(super) fn over_user_caps_among(&self, among: impl Fn(&SchedJob) -> bool) -> BTreeSet<u64> {
        let mut held = self.held_by_user();
        let mut waiting: Vec<&SchedJob> = self
            .jobs
            .iter()
            .filter(|j| !j.running && among(j))
            .collect();
        waiting.sort_by_key(|j| (j.rank, j.spec.id));
        let mut out = BTreeSet::new();
        for j in waiting {
            let Some(&cap) = self.user_caps.get(&j.spec.queue) else {
                continue;
            };
            let h = held.entry((j.spec.queue, j.spec.user)).or_default();
            let after = h.div_ceil(1000) + u64::from(j.spec.gpus);
            if after > u64::from(cap) {
                out.insert(j.spec.id.0);
            } else {
                *h += u64::from(j.spec.gpus) * 1000;
            }
        }
        out
    }

    /// Thousandths of a GPU each queue's placed jobs hold (whole GPUs and slices).
    pub fn queue_milli(&self) -> BTreeMap<QueueId, u64> {
        let mut m = self.slice_milli_by_queue();
        for (q, g) in self.whole_by_queue() {
            *m.entry(q).or_insert(0) += g * 1000;
        }
        m
    }
}
