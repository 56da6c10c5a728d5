//! Weighted dominant-resource fairness across tenants (users or queues).
//!
//! A tenant's dominant share is the largest of its shares of the cluster's GPUs, CPUs
//! and memory, divided by its weight (a resource the cluster does not declare, or no job
//! asks for, does not count). Placement reserves GPUs only; CPUs and memory count for
//! fairness.
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

/// An amount of each resource DRF weighs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Demand {
    pub gpus: u64,
    pub cpu_milli: u64,
    pub mem_mib: u64,
}

impl Demand {
    pub fn of(job: &SchedJob) -> Self {
        Demand {
            gpus: job.spec.gpus as u64,
            cpu_milli: job.spec.cpu_milli,
            mem_mib: job.spec.mem_mib,
        }
    }

    fn add(&mut self, o: Demand) {
        self.gpus += o.gpus;
        self.cpu_milli += o.cpu_milli;
        self.mem_mib += o.mem_mib;
    }
}

/// What each (tenant, user) pair's running jobs hold: for sharing inside a queue.
pub fn user_usage(cfg: &PolicyConfig, jobs: &[SchedJob]) -> Vec<(u32, u32, Demand)> {
    jobs.iter()
        .filter(|j| j.running)
        .map(|j| (tenant_of(cfg, j), j.spec.user.get(), Demand::of(j)))
        .collect()
}

/// What each tenant's running jobs hold.
pub fn usage(cfg: &PolicyConfig, jobs: &[SchedJob]) -> BTreeMap<u32, Demand> {
    let mut used: BTreeMap<u32, Demand> = BTreeMap::new();
    for j in jobs.iter().filter(|j| j.running) {
        used.entry(tenant_of(cfg, j))
            .or_default()
            .add(Demand::of(j));
    }
    used
}

/// One waiting job as DRF sees it.
#[derive(Copy, Clone, Debug)]
pub struct Waiting {
    pub index: usize,
    pub tenant: u32,
    /// Its user: inside a queue (tenants are queues) users share by the same rule.
    pub user: u32,
    pub demand: Demand,
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
        for (t, d) in usage(cfg, jobs) {
            *self.gpu_seconds.entry(t).or_default() += d.gpus as f64 * dt;
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

/// Offers `waiting` jobs (oldest first) tenant by tenant, smallest weighted dominant
/// share first; `try_start(index)` starts a job if it fits. `past` adds remembered GPU
/// use (in GPUs); `total` is the cluster.
pub fn offer(
    cfg: &PolicyConfig,
    mut used: BTreeMap<u32, Demand>,
    user_usage: Vec<(u32, u32, Demand)>,
    past: &BTreeMap<u32, f64>,
    waiting: &[Waiting],
    total: Demand,
    mut try_start: impl FnMut(usize) -> bool,
) {
    // Per tenant, per user (one user per tenant when tenants are users), in the order
    // given (the policy's: priority with aging, then age).
    let mut queues: BTreeMap<u32, BTreeMap<u32, VecDeque<Waiting>>> = BTreeMap::new();
    for w in waiting {
        let users = queues.entry(w.tenant).or_default();
        users.entry(w.user).or_default().push_back(*w);
    }
    // Shares as integers scaled by 1e9 keep the heap order free of float comparisons.
    let frac = |held: f64, of: u64| if of == 0 { 0.0 } else { held / of as f64 };
    let dominant = |used: Demand, extra_gpus: f64| {
        frac(used.gpus as f64 + extra_gpus, total.gpus.max(1))
            .max(frac(used.cpu_milli as f64, total.cpu_milli))
            .max(frac(used.mem_mib as f64, total.mem_mib))
    };
    let share = |t: u32, used: Demand| -> u64 {
        let w = cfg.weights.get(&t).copied().unwrap_or(1.0).max(1e-9);
        let past_gpus = past.get(&t).copied().unwrap_or(0.0);
        ((dominant(used, past_gpus) / w) * 1e9) as u64
    };
    // Inside a queue, what each of its users holds (equal weights).
    let mut user_used: BTreeMap<(u32, u32), Demand> = BTreeMap::new();
    if cfg.tenant == Tenant::Queue {
        for (t, u, d) in user_usage {
            user_used.entry((t, u)).or_default().add(d);
        }
    }
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = queues
        .keys()
        .map(|&t| Reverse((share(t, used.get(&t).copied().unwrap_or_default()), t)))
        .collect();
    while let Some(Reverse((_, t))) = heap.pop() {
        let users = queues
            .get_mut(&t)
            .expect("every tenant in the heap has a queue");
        // The user with the smallest share inside the tenant (ties: lower number).
        let pick = users
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(&u, _)| {
                let held = user_used.get(&(t, u)).copied().unwrap_or_default();
                ((dominant(held, 0.0) * 1e9) as u64, u)
            })
            .min();
        let Some((_, u)) = pick else {
            continue;
        };
        let queue = users.get_mut(&u).expect("picked from the map");
        let Some(w) = queue.front().copied() else {
            continue;
        };
        if try_start(w.index) {
            queue.pop_front();
            user_used.entry((t, u)).or_default().add(w.demand);
            let used_now = used.entry(t).or_default();
            used_now.add(w.demand);
            if users.values().any(|q| !q.is_empty()) {
                heap.push(Reverse((share(t, *used_now), t)));
            }
        }
    }
}
