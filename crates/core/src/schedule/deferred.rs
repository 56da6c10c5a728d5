//! Preemptive policies on a live cluster ([`PreemptMode::Deferred`]).
//!
//! In the simulator a preempted job stops at once; on a live cluster it gets the
//! checkpoint signal and a grace period, and its GPUs are free only once it has exited.
//! So a deferred pass only *asks*: it decides, as the in-place mode does, which jobs
//! should run (a greedy packing in the policy's order onto the GPUs that are free plus
//! those of every running job that may be preempted), starts the wanted waiting jobs
//! that fit the GPUs free right now, and returns a [`Decision::Preempt`] for each running
//! job left out, which keeps running (and holding its GPUs) until the caller requeues it
//! ([`Scheduler::finish`] through the caller's requeue). The wanted jobs that did not fit
//! start in a later pass, on the GPUs the victims give back.
//!
//! Protected jobs ([`Scheduler::set_protected`]: started less than `--min-runtime` ago,
//! being cancelled) are never preempted and keep their GPUs in the packing, which is what
//! rules out preemption loops: a job preempted and restarted cannot be preempted again
//! before it has run its minimum. A running job is asked to stop only when some wanted
//! job waits for GPUs, so a packing that merely moves jobs around preempts nobody.

use super::{Decision, PassOutcome, PreemptMode, Scheduler};
use crate::placement::place_job;
use crate::schedule::SchedJob;
use crate::{PolicyConfig, Seconds};

impl Scheduler {
    /// One deferred pass over `order` (every job, policy order); see the module docs.
    pub(super) fn deferred(
        &mut self,
        jobs: &mut [SchedJob],
        order: &[usize],
        now: Seconds,
        out: &mut PassOutcome,
    ) {
        debug_assert_eq!(self.mode, PreemptMode::Deferred);
        // The GPUs free if every unprotected running job stopped.
        self.work.clone_from(&self.actual);
        let protected = |j: &SchedJob| self.protected.contains(&j.spec.id);
        for j in jobs.iter().filter(|j| j.running && !protected(j)) {
            if let Some(p) = &j.placement {
                for &(node, k) in &p.parts {
                    self.work.give(node, k);
                }
            }
        }
        let mut wanted = vec![false; jobs.len()];
        // As in `pack_from_idle`: a plain job no smaller than one that failed cannot fit
        // either, which keeps a long queue cheap.
        let monotone = self.placement != crate::PlacementStrategy::Topology;
        let mut smallest_failure = u32::MAX;
        for &i in order {
            let j = &jobs[i];
            let plain = monotone && j.spec.any_node() && j.spec.gang.is_none();
            wanted[i] = if j.running && protected(j) {
                true
            } else if plain && j.spec.gpus >= smallest_failure {
                false
            } else {
                let placed = place_job(self.placement, &mut self.work, None, &j.spec).is_some();
                if !placed && plain {
                    smallest_failure = smallest_failure.min(j.spec.gpus);
                }
                placed
            };
        }
        // Starts first, in order, on what is free now; a wanted job that does not fit
        // waits for the victims.
        let mut used = self.queue_usage(jobs);
        let mut blocked = false;
        for &i in order {
            if jobs[i].running || !wanted[i] {
                continue;
            }
            let spec = &jobs[i].spec;
            if !self.within_limit(&used, spec) {
                continue;
            }
            match place_job(self.placement, &mut self.actual, self.room.as_mut(), spec) {
                Some(p) => {
                    *used.entry(spec.queue).or_insert(0) += spec.gpus;
                    Self::start(&mut jobs[i], i, p, now, out);
                }
                None => blocked = true,
            }
        }
        if !blocked {
            return;
        }
        // Victims: the running jobs left out, lowest in the policy's order first.
        for &i in order.iter().rev() {
            let j = &jobs[i];
            if j.running && !wanted[i] && !protected(j) {
                out.decisions.push(Decision::Preempt {
                    index: i,
                    job: j.spec.id,
                });
            }
        }
    }

    /// The jobs a deferred pass must not preempt (replaces the previous set).
    pub fn set_protected(&mut self, ids: std::collections::BTreeSet<crate::JobId>) {
        self.protected = ids;
    }

    /// The jobs a deferred pass must not preempt, as last set.
    pub fn protected(&self) -> &std::collections::BTreeSet<crate::JobId> {
        &self.protected
    }
}

/// Gives a job the service it had attained before (a restart of the caller): its run
/// time so far and, under `tiresias`, the queue that service puts it in.
pub fn restore_service(cfg: &PolicyConfig, job: &mut SchedJob, attained: Seconds) {
    job.attained = attained;
    job.las.service = attained;
    let gpu_service = attained * job.spec.gpus as f64;
    job.las.level = cfg
        .las_limits
        .iter()
        .take_while(|&&limit| gpu_service >= limit)
        .count() as u8;
}

#[cfg(test)]
#[path = "deferred_tests.rs"]
mod tests;
