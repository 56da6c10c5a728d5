//! Weighted dominant-resource fairness across tenants (users or queues).
//!
//! A tenant's dominant share is the largest of its shares of the cluster's resources
//! divided by its weight; this core schedules GPUs, so the GPU share is the dominant one.
//! The tenant with the smallest share (ties: lower tenant number) offers its oldest
//! waiting job; if it starts, the tenant's share grows and the choice is made again; if
//! it does not fit, that tenant waits for the next pass and the others go on.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use crate::policy::{PolicyConfig, Tenant};
use crate::schedule::SchedJob;
use crate::Seconds;

/// The tenant number of `job` under `cfg`.
pub fn tenant_of(cfg: &PolicyConfig, job: &SchedJob) -> u32 {
    match cfg.tenant {
        Tenant::User => job.spec.user.get(),
        Tenant::Queue => job.spec.queue.get(),
    }
}

/// GPUs held by each tenant's running jobs.
pub fn usage(cfg: &PolicyConfig, jobs: &[SchedJob]) -> BTreeMap<u32, u64> {
    let mut used: BTreeMap<u32, u64> = BTreeMap::new();
    for j in jobs.iter().filter(|j| j.running) {
        *used.entry(tenant_of(cfg, j)).or_default() += j.spec.gpus as u64;
    }
    used
}

/// One waiting job as DRF sees it.
#[derive(Copy, Clone, Debug)]
pub struct Waiting {
    pub index: usize,
    pub tenant: u32,
    pub gpus: u32,
}

/// Past use per tenant, decayed with a half-life: GPU-seconds, as of `at`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    pub gpu_seconds: BTreeMap<u32, f64>,
    pub at: Option<Seconds>,
}

impl History {
    /// Decays what was remembered to `now` and adds the GPU-seconds the running jobs
    /// used since the last call (they are taken to have run the whole interval).
    pub fn advance(&mut self, cfg: &PolicyConfig, jobs: &[SchedJob], now: Seconds) {
        let Some(half) = cfg.usage_half_life.filter(|h| *h > 0.0) else {
            return;
        };
        let dt = self.at.map_or(0.0, |at| (now - at).max(0.0));
        self.at = Some(now);
        if dt == 0.0 {
            return;
        }
        let keep = (-dt / half).exp2();
        for v in self.gpu_seconds.values_mut() {
            *v *= keep;
        }
        for (t, gpus) in usage(cfg, jobs) {
            *self.gpu_seconds.entry(t).or_default() += gpus as f64 * dt;
        }
    }

    /// Past use in GPUs: decayed GPU-seconds over the half-life.
    pub fn gpus(&self, cfg: &PolicyConfig) -> BTreeMap<u32, f64> {
        match cfg.usage_half_life.filter(|h| *h > 0.0) {
            Some(half) => self
                .gpu_seconds
                .iter()
                .map(|(t, s)| (*t, s / half))
                .collect(),
            None => BTreeMap::new(),
        }
    }
}

/// Offers `waiting` jobs (oldest first) tenant by tenant, smallest weighted share first;
/// `try_start(index)` starts a job if it fits. `past` adds remembered use (in GPUs).
pub fn offer(
    cfg: &PolicyConfig,
    mut used: BTreeMap<u32, u64>,
    past: &BTreeMap<u32, f64>,
    waiting: &[Waiting],
    total_gpus: u64,
    mut try_start: impl FnMut(usize) -> bool,
) {
    let mut queues: BTreeMap<u32, VecDeque<Waiting>> = BTreeMap::new();
    for w in waiting {
        queues.entry(w.tenant).or_default().push_back(*w);
    }
    // Shares as integers scaled by 1e9 keep the heap order free of float comparisons.
    let share = |t: u32, used: u64| -> u64 {
        let w = cfg.weights.get(&t).copied().unwrap_or(1.0).max(1e-9);
        let held = used as f64 + past.get(&t).copied().unwrap_or(0.0);
        ((held / total_gpus.max(1) as f64 / w) * 1e9) as u64
    };
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = queues
        .keys()
        .map(|&t| Reverse((share(t, used.get(&t).copied().unwrap_or(0)), t)))
        .collect();
    while let Some(Reverse((_, t))) = heap.pop() {
        let queue = queues
            .get_mut(&t)
            .expect("every tenant in the heap has a queue");
        let Some(w) = queue.front().copied() else {
            continue;
        };
        if try_start(w.index) {
            queue.pop_front();
            let u = used.entry(t).or_default();
            *u += w.gpus as u64;
            if !queue.is_empty() {
                heap.push(Reverse((share(t, *u), t)));
            }
        }
    }
}
