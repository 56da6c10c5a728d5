//! Priority preemption inside a queue (`preempt_lower_priority`, `priority_tiers` in
//! the queue file): under any policy, when a queue's first waiting job (in the policy's
//! order) is of a higher tier of base priority than running jobs of its own queue and no
//! node has room for it, the core's `tiers::plan` picks a node and the victims there
//! (lowest tier first, then least work lost; never protected jobs: `--min-runtime`, being
//! cancelled). They take the preemption path (checkpoint signal, grace, requeued without
//! using a retry); the claimant then starts first on that node (the core's claims, as for
//! quota reclaim). One such preemption at a time, and none while any preemption is under
//! way, so a round never stacks victims for a need already being met.

use gpusched_core::reclaim::Claim;
use gpusched_core::{tiers, JobId};
use gpusched_wire::history::JobEventKind;
use gpusched_wire::JobState;

use super::State;

impl State {
    pub(super) fn preempt_lower_tiers(&mut self, now_ms: u64) {
        if self.queues.defs.values().all(|q| !q.preempt_lower_priority)
            || self.placed().any(|j| j.view.preempt_requested)
        {
            return;
        }
        let (online, running, rooms) = self.running_view(now_ms);
        let order = self.queue.waiting_order();
        let names: Vec<String> = self
            .queues
            .defs
            .iter()
            .filter(|(_, d)| d.preempt_lower_priority)
            .map(|(n, _)| n.clone())
            .collect();
        for name in names {
            // One claim per queue at a time.
            if self
                .queue
                .claims()
                .any(|(id, _)| self.jobs.get(&id).is_some_and(|j| j.view.queue == name))
            {
                continue;
            }
            let Some(claimant) = order
                .iter()
                .filter_map(|id| self.jobs.get(id))
                .find(|j| j.view.state == JobState::Pending && j.view.queue == name)
                .map(|j| j.view.clone())
            else {
                continue;
            };
            if claimant.slice.is_some() {
                continue;
            }
            let bounds = self.queues.defs[&name].priority_tiers.clone();
            let claim = Claim {
                job: JobId(claimant.id),
                queue: self.queue_id(&name),
                gpus: claimant.gpus,
                nodes: if crate::live_map::gang(&claimant).is_some() {
                    2
                } else {
                    1
                },
                model: claimant.gpu_model.clone(),
                priority: claimant.priority,
            };
            let Some(plan) = tiers::plan(&bounds, &running, &rooms, &claim) else {
                continue;
            };
            let node = online[plan.node.index()].clone();
            let tier = tiers::tier(&bounds, claimant.priority);
            for victim in &plan.victims {
                let why = format!(
                    "priority preemption in queue `{name}`: job {} of priority tier {tier} \
                     needs its GPUs on {node}",
                    claimant.id
                );
                let Some(j) = self.jobs.get_mut(&victim.0) else {
                    continue;
                };
                j.view.preempt_requested = true;
                j.view.reason = format!("being requeued: {why}");
                self.policy_preempted.insert(victim.0, why.clone());
                self.note(victim.0, JobEventKind::Preempted, why);
                self.bump_job(victim.0);
            }
            tracing::info!(job = claimant.id, queue = %name, %node, victims = ?plan.victims, "preempting lower priority tiers");
            self.queue
                .claim_nodes(claimant.id, std::slice::from_ref(&node));
            self.bump(&node);
            return;
        }
    }
}
