//! What the live cluster needs of preemptive policies (`srtf`, `srsf`, `tiresias`,
//! `blend`) and
//! of predicted run times, beside the pass itself (the core's deferred mode,
//! `schedule/deferred.rs`): which running jobs the server must not preempt, the victims
//! of the last pass, each job's attained service (kept over a requeue by the core, and
//! over a server restart by the server, which stores it), and estimates the server
//! predicted for jobs without a walltime.

use std::collections::BTreeSet;

use super::LiveCluster;
use crate::{JobId, Seconds};

impl LiveCluster {
    /// The running jobs the next passes must not preempt (started less than the minimum
    /// run time ago, being cancelled); replaces the previous set. Serving jobs are
    /// always protected besides.
    pub fn set_protected(&mut self, ids: impl IntoIterator<Item = u64>) {
        let ids: BTreeSet<JobId> = ids
            .into_iter()
            .chain(self.serving.iter().copied())
            .map(JobId)
            .collect();
        self.scheduler.set_protected(ids);
    }

    /// The running jobs the passes since the last call asked to stop, each once, lowest
    /// in the policy's order first. They keep their GPUs until the caller requeues them
    /// ([`LiveCluster::requeue`]) or removes them.
    pub fn take_preemptions(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.preempts)
    }

    /// Seconds a job has run over all its runs, up to its last accounting (a pass, a
    /// requeue); `None` for a job not in the queue or on part of a GPU.
    pub fn attained(&self, id: u64) -> Option<Seconds> {
        self.find(id).map(|i| self.jobs[i].attained)
    }

    /// Every whole-GPU job with service attained, by id (what the server stores so a
    /// restart keeps it).
    pub fn attained_all(&self) -> Vec<(u64, Seconds)> {
        self.jobs
            .iter()
            .filter(|j| j.attained > 0.0)
            .map(|j| (j.spec.id.0, j.attained))
            .collect()
    }

    /// Gives a job (added again after a server restart) the service it had attained;
    /// under `tiresias` it goes to the queue that service earned.
    pub fn restore_attained(&mut self, id: u64, attained: Seconds) {
        let Some(i) = self.find(id) else {
            return;
        };
        let cfg = self.scheduler.policy().clone();
        crate::schedule::restore_service(&cfg, &mut self.jobs[i], attained);
    }

    /// Sets a predicted run time as the estimate of a job the user gave no walltime
    /// (sjf, srtf and the start-time estimate use it). A prediction outlived is doubled
    /// at each pass (`SchedJob::grow_estimate`); the job is never stopped for it.
    pub fn set_predicted(&mut self, id: u64, seconds: Seconds) {
        if let Some(i) = self.find(id) {
            if self.jobs[i].spec.estimate.is_none() {
                self.jobs[i].spec.estimate = Some(seconds);
                self.predicted.insert(id);
            }
        }
    }

    /// Replaces a job's predicted estimate (the server's: its time on the GPU model it
    /// started on); a walltime is never replaced.
    pub fn reset_predicted(&mut self, id: u64, seconds: Seconds) {
        if !self.predicted.contains(&id) {
            return;
        }
        if let Some(i) = self.find(id) {
            self.jobs[i].spec.estimate = Some(seconds);
        }
    }

    /// Gives a job what the predictor believes of its run time (`blend` orders by it; see
    /// [`crate::predict::Belief`]), fixed from now on like a predicted estimate.
    pub fn set_belief(&mut self, id: u64, belief: crate::predict::Belief) {
        if let Some(i) = self.find(id) {
            self.jobs[i].belief = Some(std::sync::Arc::new(belief));
        }
    }

    /// The waiting jobs whose belief knows nothing (none, or given before the predictor
    /// had learnt anything): the server asks the predictor again for them as it learns.
    pub fn waiting_unbelieved(&self) -> Vec<u64> {
        self.jobs
            .iter()
            .filter(|j| !j.running && !knows(j))
            .map(|j| j.spec.id.0)
            .collect()
    }

    /// Whether the job has a belief that knows something.
    pub fn believed(&self, id: u64) -> bool {
        self.find(id).is_some_and(|i| knows(&self.jobs[i]))
    }

    /// The job's current estimate and whether it is a prediction (else the walltime).
    pub fn estimate(&self, id: u64) -> Option<(Seconds, bool)> {
        let j = &self.jobs[self.find(id)?];
        j.spec.estimate.map(|e| (e, self.predicted.contains(&id)))
    }

    /// Grows the predicted estimates that running jobs have outlived (before a pass).
    pub(super) fn grow_predictions(&mut self) {
        if self.predicted.is_empty() {
            return;
        }
        for j in self.jobs.iter_mut().filter(|j| j.running) {
            if self.predicted.contains(&j.spec.id.0) {
                j.grow_estimate();
            }
        }
    }
}

/// Whether `job`'s belief knows something (one given before the predictor had learnt
/// from enough jobs is empty).
fn knows(job: &crate::schedule::SchedJob) -> bool {
    job.belief.as_ref().is_some_and(|b| !b.bins().is_empty())
}
