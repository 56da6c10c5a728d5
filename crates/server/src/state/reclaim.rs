//! Giving queues their quota back: when a queue below its guaranteed GPUs has a job
//! that cannot start because other queues borrowed the GPUs, the core's reclaim planner
//! picks the borrowers' jobs to preempt (least work lost, on one node, or one node per
//! part for a gang claimant; a gang victim goes whole); they get the checkpoint signal
//! and a grace period, end `preempted` and are requeued; the claiming job then starts
//! first on those nodes.

use gpusched_core::live::QuotaReclaim;
use gpusched_wire::history::JobEventKind;

use super::State;

impl State {
    /// With quotas configured, a pass (and a reclaim check) is due on every tick: a
    /// victim's protection can run out without any other event.
    pub fn schedule_if_quotas(&mut self) {
        if self.queues.defs.values().any(|q| q.quota > 0) {
            self.sched_due = true;
        }
    }

    /// The round's quota reclaim, decided by the core ([`gpusched_core::live::round`]):
    /// its victims are asked to stop and their nodes told; with no victims the claimant
    /// only goes first on nodes that have room, and a pass is due to start it.
    pub(super) fn apply_reclaim(&mut self, r: QuotaReclaim) {
        let claimant = r.job;
        let name = self
            .jobs
            .get(&claimant)
            .map(|j| j.view.queue.clone())
            .unwrap_or_default();
        let node = r.nodes.join(", ");
        if r.victims.is_empty() {
            // Room already, but the policy's order held the job back (a borrower's
            // big job at the head of a strict queue): its quota lets it go first.
            tracing::info!(job = claimant, queue = %name, %node, "quota job goes first");
            self.sched_due = true;
            return;
        }
        for victim in &r.victims {
            if let Some(j) = self.jobs.get_mut(victim) {
                j.view.preempt_requested = true;
                j.view.reason = format!(
                    "being preempted on {node} to return GPUs to queue `{name}` (job {claimant})"
                );
            }
            let why =
                format!("quota reclaim: GPUs on {node} go back to queue `{name}` (job {claimant})");
            self.note(*victim, JobEventKind::Preempted, why);
        }
        // Every part of a gang victim is told, not only the claimed nodes.
        for victim in &r.victims {
            self.bump_job(*victim);
        }
        tracing::info!(job = claimant, queue = %name, %node, victims = ?r.victims, "reclaiming quota");
        for n in &r.nodes {
            self.bump(n);
        }
    }
}
