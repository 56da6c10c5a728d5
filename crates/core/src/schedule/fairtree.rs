//! The `fairtree` pass: waiting jobs by their association's Fair Tree factor, best
//! first, each association's in the policy's order (priority with aging, then submit
//! time); a job that does not fit (or is over its queue's cap) holds back the later jobs
//! of its association for this pass, and the others go on.
//!
//! The factors are computed once per pass from the decayed usage, as Slurm computes them
//! once per `PriorityCalcPeriod`: starts within a pass do not move them.

use std::collections::BTreeSet;

use super::{PassOutcome, SchedJob, Scheduler};
use crate::placement::place_job;
use crate::policy::fairtree::rank::{self, Standings};
use crate::policy::fairtree::usage::Usage;
use crate::policy::fairtree::Assoc;
use crate::Seconds;

/// The association a job is charged to.
pub fn assoc_of(job: &SchedJob) -> Assoc {
    Assoc {
        account: job.spec.account,
        user: job.spec.user,
    }
}

impl Scheduler {
    /// Charges the running jobs' GPUs since the last point of the usage history and
    /// decays the rest: every pass is one, and the live server makes one before it
    /// shows or stores the usage (no pass may have run for a while).
    pub fn advance_fair_usage(&mut self, jobs: &[SchedJob], now: Seconds) {
        let half = self.policy.fair_tree.half_life;
        let running = jobs
            .iter()
            .filter(|j| j.running)
            .map(|j| (assoc_of(j), j.spec.gpus));
        self.fair_usage.advance(half, running, now);
    }

    /// A running job leaves (it ended, or goes back to the queue): its GPUs are charged
    /// up to its last accounting, which the caller brought to the time it left.
    pub(super) fn charge_leaving(&mut self, job: &SchedJob) {
        if self.policy.kind != crate::policy::PolicyKind::FairTree || !job.running {
            return;
        }
        if let Some(at) = self.fair_usage.at {
            let dt = job.last_update - at;
            if dt > 0.0 {
                self.fair_usage
                    .charge(assoc_of(job), job.spec.gpus as f64 * dt);
            }
        }
    }

    pub(super) fn fair_tree(
        &mut self,
        jobs: &mut [SchedJob],
        order: &[usize],
        now: Seconds,
        out: &mut PassOutcome,
    ) {
        let standings = rank::standings(
            &self.policy.fair_tree.tree,
            &self.fair_usage.gpu_seconds,
            order.iter().map(|&i| assoc_of(&jobs[i])),
        );
        let mut keyed: Vec<(f64, usize, usize)> = order
            .iter()
            .enumerate()
            .map(|(pos, &i)| (standings.factor(assoc_of(&jobs[i])), pos, i))
            .collect();
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut queue_used = self.queue_usage(jobs);
        let mut held: BTreeSet<Assoc> = BTreeSet::new();
        for (_, _, i) in keyed {
            if self.actual.total_free() == 0 && self.room.is_none() {
                break;
            }
            let a = assoc_of(&jobs[i]);
            if held.contains(&a) {
                continue;
            }
            let spec = &jobs[i].spec;
            if let Some(&cap) = self.queue_limits.get(&spec.queue) {
                if queue_used.get(&spec.queue).copied().unwrap_or(0) + spec.gpus > cap {
                    held.insert(a);
                    continue;
                }
            }
            match place_job(self.placement, &mut self.actual, self.room.as_mut(), spec) {
                Some(p) => {
                    *queue_used.entry(spec.queue).or_insert(0) += spec.gpus;
                    Self::start(&mut jobs[i], i, p, now, out);
                }
                None => {
                    held.insert(a);
                }
            }
        }
    }

    /// Each association's decayed usage, as of the last pass (for the store and the
    /// views).
    pub fn fair_usage(&self) -> &Usage {
        &self.fair_usage
    }

    /// Puts back usage a store kept (at startup or a takeover, before the first pass).
    pub fn set_fair_usage(&mut self, usage: Usage) {
        self.fair_usage = usage;
    }

    /// The Fair Tree standings now: every declared user, every association with usage,
    /// and the associations of `jobs`.
    pub fn fair_standings(&self, jobs: &[SchedJob]) -> Standings {
        rank::standings(
            &self.policy.fair_tree.tree,
            &self.fair_usage.gpu_seconds,
            jobs.iter().map(assoc_of),
        )
    }
}
