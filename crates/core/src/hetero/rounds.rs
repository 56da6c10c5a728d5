//! Gavel's round rule: an allocation matrix (the time share each job should get on each
//! type) turned into rounds.
//!
//! The rule, as Gavel's scheduler applies it (`scheduler.py`: `_update_priorities`,
//! `_reset_time_run_so_far`, `_schedule_jobs_on_workers_helper`):
//! - The allocation is recomputed when jobs came or went, but no sooner than
//!   `min_reset` seconds after the last recomputation (Gavel: 1920 s), except while the
//!   last one was at time 0. A job that arrived since runs only once it has a row.
//! - At each recomputation every job's time on each type restarts at half a round, and
//!   what it got less than its share since the last one is added to its deficit.
//! - On each type, a job's priority is its share there over the fraction of the type's
//!   time it received since the last recomputation (its share x 10^9 before it received
//!   any; 0 with no share, or where it cannot run).
//! - Types are walked in order (aware: the cluster's order; agnostic: Gavel shuffles
//!   them, here they rotate each round), and on each the jobs by priority, then deficit,
//!   then share, highest first, ties to the earlier job; a job takes the type if it has
//!   room and it is not placed yet. A job with no row holds its GPUs idle for the round,
//!   as in Gavel.
//!
//! The caller runs the round and reports each job's time with [`Rounds::ran`].

use std::collections::BTreeMap;

use crate::ids::JobId;

use super::{GpuTypes, HeteroJob, RoundPlan};

/// The round rule's state between rounds.
#[derive(Clone, Debug)]
pub struct Rounds {
    round: f64,
    min_reset: f64,
    /// Seconds each job ran on each type since the last recomputation (from half a round).
    time: BTreeMap<JobId, Vec<f64>>,
    deficit: BTreeMap<JobId, Vec<f64>>,
    /// Seconds each type ran jobs since the last recomputation (the sum of `time`).
    type_time: Vec<f64>,
    allocation: BTreeMap<JobId, Vec<f64>>,
    last_reset: f64,
    stale: bool,
    rounds: usize,
    /// FIFO allocations: a job never runs on a type where its share is 0 (Gavel skips
    /// zero-priority jobs under FIFO only).
    only_shared: bool,
}

impl Rounds {
    /// `types` GPU types, rounds of `round` seconds, recomputations at least `min_reset`
    /// seconds apart.
    pub fn new(types: usize, round: f64, min_reset: f64) -> Self {
        Rounds {
            round,
            min_reset,
            time: BTreeMap::new(),
            deficit: BTreeMap::new(),
            type_time: vec![0.0; types],
            allocation: BTreeMap::new(),
            last_reset: 0.0,
            stale: false,
            rounds: 0,
            only_shared: false,
        }
    }

    /// For FIFO's allocation: a job runs only where it has a share.
    pub fn only_where_shared(mut self) -> Self {
        self.only_shared = true;
        self
    }

    /// A job arrived.
    pub fn add(&mut self, id: JobId) {
        let n = self.type_time.len();
        self.time.insert(id, vec![self.round / 2.0; n]);
        self.deficit.insert(id, vec![0.0; n]);
        self.stale = true;
    }

    /// A job ended.
    pub fn remove(&mut self, id: JobId) {
        self.time.remove(&id);
        self.deficit.remove(&id);
        self.allocation.remove(&id);
        self.stale = true;
    }

    /// Job `id` ran `seconds` on type `k` in the last round.
    pub fn ran(&mut self, id: JobId, k: usize, seconds: f64) {
        if let Some(t) = self.time.get_mut(&id) {
            t[k] += seconds;
            self.type_time[k] += seconds;
        }
    }

    /// Lets the next plan recompute the allocation whatever the time since the last
    /// recomputation (Gavel does so when nothing runs and no job is left to arrive).
    pub fn allow_recompute(&mut self) {
        self.last_reset = 0.0;
    }

    /// The current allocation of job `id`, if it has one.
    pub fn share(&self, id: JobId) -> Option<&[f64]> {
        self.allocation.get(&id).map(Vec::as_slice)
    }

    /// Plans the round starting at `now` over `jobs` (every job present, in arrival
    /// order). `compute` is the policy: the allocation matrix for `jobs`, called only
    /// when the rule recomputes. `aware` fixes the type order.
    pub fn plan(
        &mut self,
        jobs: &[HeteroJob],
        types: &GpuTypes,
        now: f64,
        aware: bool,
        compute: impl FnOnce(&[HeteroJob]) -> Vec<Vec<f64>>,
    ) -> RoundPlan {
        let n = types.len();
        if self.stale && (now - self.last_reset >= self.min_reset || self.last_reset == 0.0) {
            self.reset(now);
            let rows = compute(jobs);
            self.allocation = jobs.iter().map(|j| j.id).zip(rows).collect();
            self.stale = false;
        }
        let mut order: Vec<usize> = (0..n).collect();
        if !aware && n > 0 {
            order.rotate_left(self.rounds % n);
        }
        self.rounds += 1;
        let mut left = types.gpus.clone();
        let mut plan: RoundPlan = vec![None; jobs.len()];
        let mut taken = vec![false; jobs.len()];
        for &k in &order {
            // (priority, deficit, share, job index)
            let mut entries: Vec<(f64, f64, f64, usize)> = jobs
                .iter()
                .enumerate()
                .map(|(i, j)| {
                    let share = self.allocation.get(&j.id).map_or(0.0, |a| a[k]);
                    let deficit = self.deficit.get(&j.id).map_or(0.0, |d| d[k]);
                    (self.priority(j, k), deficit, share, i)
                })
                .collect();
            entries.sort_by(|a, b| {
                b.0.total_cmp(&a.0)
                    .then(b.1.total_cmp(&a.1))
                    .then(b.2.total_cmp(&a.2))
                    .then(a.3.cmp(&b.3))
            });
            for (_, _, _, i) in entries {
                let job = &jobs[i];
                if left[k] == 0 {
                    break;
                }
                if taken[i] || job.speeds[k] <= 0.0 || job.gpus > left[k] {
                    continue;
                }
                if self.only_shared && self.priority(job, k) <= 0.0 {
                    continue;
                }
                left[k] -= job.gpus;
                taken[i] = true;
                // Without a row it holds the GPUs but does not run (Gavel's rule).
                if self.allocation.contains_key(&job.id) {
                    plan[i] = Some(k);
                }
            }
        }
        plan
    }

    /// Job `j`'s priority on type `k`.
    fn priority(&self, j: &HeteroJob, k: usize) -> f64 {
        let Some(a) = self.allocation.get(&j.id) else {
            return 0.0;
        };
        let share = a[k];
        if share == 0.0 || j.speeds[k] <= 0.0 {
            return 0.0;
        }
        let fraction = match (self.time.get(&j.id), self.type_time[k]) {
            (Some(t), tt) if tt > 0.0 => t[k] / tt,
            _ => 0.0,
        };
        if fraction > 0.0 {
            share / fraction
        } else {
            share * 1e9
        }
    }

    /// A recomputation at `now`: deficits grow by what each job got less than its share.
    fn reset(&mut self, now: f64) {
        let elapsed = now - self.last_reset;
        let half = self.round / 2.0;
        for k in 0..self.type_time.len() {
            self.type_time[k] = 0.0;
            for (id, t) in self.time.iter_mut() {
                let received = t[k] - half;
                let owed = self.allocation.get(id).map_or(0.0, |a| a[k] * elapsed);
                if let Some(d) = self.deficit.get_mut(id) {
                    d[k] += owed - received;
                }
                t[k] = half;
                self.type_time[k] += half;
            }
        }
        self.last_reset = now;
    }
}
