//! Priority preemption inside a queue (`preempt_lower_priority`, `priority_tiers` in
//! the queue file): under any policy, when a queue's first waiting job (in the policy's
//! order) is of a higher tier of base priority than running jobs of its own queue and no
//! node has room for it, the core's `tiers::plan` picks a node and the victims there
//! (lowest tier first, then least work lost; never protected jobs: `--min-runtime`, being
//! cancelled). They take the preemption path (checkpoint signal, grace, requeued without
//! using a retry); the claimant then starts first on that node (the core's claims, as for
//! quota reclaim). One such preemption at a time, and none while any preemption is under
//! way, so a round never stacks victims for a need already being met.

use gpusched_core::live::{ServingPreemption, TierPreemption};
use gpusched_wire::history::JobEventKind;

use super::State;

impl State {
    /// The round's priority-tier preemption, decided by the core
    /// ([`gpusched_core::live::round`]): its victims are asked to stop and the node told.
    pub(super) fn apply_tier(&mut self, t: TierPreemption) {
        let name = self
            .jobs
            .get(&t.job)
            .map(|j| j.view.queue.clone())
            .unwrap_or_default();
        let (node, tier) = (&t.node, t.tier);
        let why = format!(
            "priority preemption in queue `{name}`: job {} of priority tier {tier} needs \
             its GPUs on {node}",
            t.job
        );
        self.ask_to_stop(&t.victims, &why);
        tracing::info!(job = t.job, queue = %name, %node, victims = ?t.victims, "preempting lower priority tiers");
        self.bump(&t.node);
    }

    /// The round's serving preemption (the core's `live/serving.rs`): a replica of a
    /// service that found no GPUs takes a node from training jobs of any queue, which
    /// take the preemption path as a tier's victims do.
    pub(super) fn apply_serving(&mut self, s: ServingPreemption) {
        let service = self
            .jobs
            .get(&s.job)
            .and_then(|j| j.view.service.as_ref())
            .map(|r| r.service.clone())
            .unwrap_or_default();
        let node = &s.node;
        let why = format!(
            "serving preemption: replica {} of service {service} needs its GPUs on {node} \
             (services run above training)",
            s.job
        );
        self.ask_to_stop(&s.victims, &why);
        tracing::info!(job = s.job, %service, %node, victims = ?s.victims, "preempting training for a service replica");
        self.bump(&s.node);
    }

    /// Victims of a tier or serving preemption take the preemption path: asked to stop
    /// (the checkpoint signal, the grace), requeued without using a retry.
    pub(super) fn ask_to_stop(&mut self, victims: &[u64], why: &str) {
        for victim in victims {
            let Some(j) = self.jobs.get_mut(victim) else {
                continue;
            };
            j.view.preempt_requested = true;
            j.view.reason = format!("being requeued: {why}");
            self.policy_preempted.insert(*victim, why.to_string());
            self.note(*victim, JobEventKind::Preempted, why.to_string());
            self.bump_job(*victim);
        }
    }
}
