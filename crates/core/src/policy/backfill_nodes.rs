//! EASY backfilling on real nodes (`PolicyConfig::backfill_nodes`, on in the live
//! server, `--backfill-nodes` in the simulator): the blocked head job reserves the node
//! where enough GPUs of its model free up earliest, from the running jobs' estimates on
//! that node. A later job may start now if it ends by that time (the shadow), or if it
//! leaves the reserved node's GPUs the head will need alone: elsewhere, or in the node's
//! "extra" GPUs.
//!
//! Unlike the cluster-wide reservation of `backfill.rs`, a job without an estimate never
//! counts as ending by the shadow, and when no running job on any node has an estimate
//! (the shadow is unknown) nothing ends by it: the head job is never delayed by a
//! backfilled one.

use crate::freemap::FreeMap;
use crate::placement::{place_job, Placement, PlacementStrategy};
use crate::room::Room;
use crate::schedule::SchedJob;
use crate::{JobId, JobSpec, NodeId, Seconds};

/// The head job's reservation on one node.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct NodeReservation {
    /// The blocked head job.
    pub head: JobId,
    pub node: NodeId,
    /// When enough of the node's GPUs are expected free; infinite when unknown.
    pub shadow: Seconds,
    /// GPUs of the node free at the shadow beyond what the head needs.
    pub extra: u32,
}

/// The node where `head` fits earliest. `None` when no node could ever hold it (then
/// nothing is reserved and it does not hold others up).
pub fn reserve(
    jobs: &[SchedJob],
    head: &JobSpec,
    free: &FreeMap,
    now: Seconds,
) -> Option<NodeReservation> {
    let mut best: Option<(NodeReservation, u32)> = None;
    for n in 0..free.nodes() {
        let node = NodeId(n as u32);
        if !free.model_matches(n, head.gpu_model.as_deref()) || free.capacity(node) < head.gpus {
            continue;
        }
        let mut ends: Vec<(Seconds, u32)> = jobs
            .iter()
            .filter(|j| j.running)
            .filter_map(|j| {
                let on: u32 = j
                    .placement
                    .as_ref()?
                    .parts
                    .iter()
                    .filter(|&&(p, _)| p == node)
                    .map(|&(_, k)| k)
                    .sum();
                (on > 0).then(|| (now + j.estimated_remaining(), on))
            })
            .collect();
        ends.sort_by(|a, b| a.0.total_cmp(&b.0));
        let now_free = free.free(node);
        let mut avail = now_free;
        let mut found = (avail >= head.gpus).then_some(now);
        for (end, k) in ends {
            if found.is_some() || !end.is_finite() {
                break;
            }
            avail += k;
            if avail >= head.gpus {
                found = Some(end);
            }
        }
        let r = NodeReservation {
            head: head.id,
            node,
            shadow: found.unwrap_or(f64::INFINITY),
            extra: avail.saturating_sub(head.gpus),
        };
        // Earliest shadow; with none known, the node with the most free now; then the
        // lowest node.
        let better = best.as_ref().is_none_or(|(b, b_free)| {
            r.shadow < b.shadow
                || (r.shadow == b.shadow && !r.shadow.is_finite() && now_free > *b_free)
        });
        if better {
            best = Some((r, now_free));
        }
    }
    best.map(|(r, _)| r)
}

impl NodeReservation {
    /// Whether `job` ends by the shadow (a known one).
    pub fn ends_by_shadow(&self, job: &SchedJob, now: Seconds) -> bool {
        self.shadow.is_finite() && now + job.estimated_remaining() <= self.shadow
    }

    /// Places `job` under the reservation: anywhere if it ends by the shadow, else with
    /// the reserved node's GPUs beyond its `extra` kept out of reach. Spends the extra
    /// GPUs it takes there.
    pub fn place(
        &mut self,
        job: &SchedJob,
        strategy: PlacementStrategy,
        free: &mut FreeMap,
        room: Option<&mut Room>,
        now: Seconds,
    ) -> Option<Placement> {
        let spec = &job.spec;
        if self.ends_by_shadow(job, now) {
            return place_job(strategy, free, room, spec);
        }
        let hidden = free.free(self.node).saturating_sub(self.extra);
        if hidden > 0 {
            free.take(self.node, hidden);
        }
        let p = place_job(strategy, free, room, spec);
        if hidden > 0 {
            free.give(self.node, hidden);
        }
        if let Some(p) = &p {
            let on: u32 = p
                .parts
                .iter()
                .filter(|&&(n, _)| n == self.node)
                .map(|&(_, k)| k)
                .sum();
            self.extra -= on.min(self.extra);
        }
        p
    }
}
