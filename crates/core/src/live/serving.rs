//! The serving tier: replicas of inference services ([`super::LiveJob::serving`]) rank
//! above all training. They are never victims of any preemption (the policy's, quota
//! reclaim, priority tiers: they are protected like young runs), never follow nor are
//! followed (`follow.rs`), they go first in every pass, and a waiting one that cannot
//! start may take one node from running training jobs of any queue.
//!
//! In the pass ([`LiveCluster::pass`]): after the claims, the waiting serving slices,
//! then the scheduler's pass over the running jobs and the waiting whole-GPU serving
//! jobs only (in the policy's order among themselves, within queue, user and group
//! caps), then the normal pass over everyone at the same `now`. So a training job at
//! the head that cannot start (`fifo`) does not hold a replica back. The serving part
//! leaves no trace but its starts (ranks and LAS state put back) and, under a
//! preemptive policy, asks nobody to stop: every running job is protected in it.
//!
//! The round's step ([`LiveCluster::round`]): the first waiting whole-GPU serving job in
//! the policy's order for which some online node that could hold it (GPUs enough, its
//! model) can be freed: no node with room already (then it waits for something else:
//! CPUs, memory, a cap, its turn), victims that are not serving, not protected (young,
//! being cancelled) and hold GPUs on that node, lowest base priority first, then least
//! work lost (GPUs x seconds since the last checkpoint), then fewest jobs; a gang victim
//! goes whole ([`crate::tiers::cheapest_node`], the walk priority tiers use). At most
//! one per round, none while any preemption is under way. The claimant then goes first
//! on that node as a quota claim does (`claims.rs`), once its victims have stopped.

use super::round::Field;
use super::LiveCluster;
use crate::reclaim::Claim;
use crate::tiers;

/// A serving job takes `node` from running training jobs (`victims`, each asked to stop
/// with its grace); it starts first there once they have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServingPreemption {
    pub job: u64,
    pub node: String,
    pub victims: Vec<u64>,
}

impl LiveCluster {
    /// Whether job `id` is a serving job (a replica of an inference service).
    pub fn is_serving(&self, id: u64) -> bool {
        self.serving.contains(&id)
    }

    /// A waiting whole-GPU serving job without a claim, that may claim a node.
    fn may_claim(&self, id: u64) -> bool {
        self.serving.contains(&id)
            && !self.claims.contains_key(&id)
            && self
                .find(id)
                .is_some_and(|i| !self.jobs[i].running && self.jobs[i].spec.gang.is_none())
    }

    /// The round's serving preemption (see the module's doc), its victims marked as
    /// stopping and its claim made.
    pub(super) fn serving_step(
        &mut self,
        now_ms: u64,
        field: &mut Option<Field>,
    ) -> Option<ServingPreemption> {
        if self.preempting() || !self.serving.iter().any(|&id| self.may_claim(id)) {
            return None;
        }
        let field = field.get_or_insert_with(|| self.field(now_ms));
        let mut found = None;
        for &id in field.order.iter().filter(|&&id| self.may_claim(id)) {
            let Some(i) = self.find(id) else { continue };
            let spec = &self.jobs[i].spec;
            let claim = Claim {
                job: spec.id,
                queue: spec.queue,
                gpus: spec.gpus,
                nodes: 1,
                model: spec.gpu_model.clone(),
                priority: spec.priority,
                node_sets: spec.nodes.clone(),
            };
            let rank = |r: &crate::reclaim::RunningJob| Some(i64::from(r.priority));
            if let Some(plan) = tiers::cheapest_node(&field.running, &field.rooms, &claim, rank) {
                let node = field.online.get(plan.node.index())?.clone();
                found = Some(ServingPreemption {
                    job: id,
                    node,
                    victims: plan.victims.iter().map(|v| v.0).collect(),
                });
                break;
            }
        }
        let s = found?;
        self.stopping(&s.victims);
        self.claim_nodes(s.job, std::slice::from_ref(&s.node));
        Some(s)
    }
}
