//! Elastic jobs on the live cluster (`submit --gpus MIN-MAX`; the rules are
//! [`crate::elastic`]'s, the simulator's too):
//!
//! - **At start** an elastic job waits for its minimum like any job of that size; when
//!   it starts, the GPUs the pass left idle on its node are spread over the elastic jobs
//!   starting in it ([`LiveCluster::enlarge_elastic_starts`]): free, since nothing runs
//!   yet.
//! - **Taking back** (a round's step, [`LiveCluster::elastic_step`]): when the first
//!   waiting job in the policy's order has no room but would on a node where running
//!   elastic jobs hold GPUs above their minimum, the fewest of them are asked to stop
//!   (the checkpoint contract) and the node is claimed for it; they restart at their
//!   minimum and grow from what it left.
//! - **Growing**: when nobody is asked to give GPUs back, the first running elastic job
//!   that the spreading would grow and whose grow pays for its resize (its remaining
//!   time, where known, saves twice `--resize-cost`) is asked to stop, and restarts on
//!   more GPUs. Not within [`COOLDOWN_RESIZES`] resize costs of its start, nor while
//!   `--min-runtime` protects it.
//!
//! One such resize at a time, and none while any preemption is under way, as for the
//! other steps of the round. Only single-node jobs of whole GPUs are elastic.

use super::{LiveCluster, LivePlacement};
use crate::elastic::{spread, take_back, Member, COOLDOWN_RESIZES};
use crate::{NodeId, Placement};

/// A round's elastic resize: `victims` are asked to stop and restart at (about) their
/// new sizes; `claimant`, if any, goes first on `node` once they have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElasticResize {
    pub claimant: Option<u64>,
    pub node: String,
    /// `(job, GPUs it is expected to restart on)`.
    pub victims: Vec<(u64, u32)>,
}

impl LiveCluster {
    /// What a resize costs (`--resize-cost`), seconds: the payback rule's unit.
    pub fn set_resize_cost(&mut self, secs: f64) {
        self.resize_cost = secs.max(0.0);
    }

    /// Whether an elastic job holds GPUs: then time alone may make a resize due (its run
    /// ages past `--min-runtime` or its cooldown), so the server runs a round on its tick.
    pub fn elastic_running(&self) -> bool {
        self.jobs.iter().any(|j| j.running && j.elastic.is_some())
    }

    /// Spreads the GPUs the pass left idle over the elastic jobs it starts (see the
    /// module's doc). Call before the pass's holds are lifted, so held GPUs stay out.
    pub(super) fn enlarge_elastic_starts(&mut self, starts: &mut [LivePlacement]) {
        let mut members = Vec::new();
        let mut at = Vec::new();
        for (k, s) in starts.iter().enumerate() {
            let Some(i) = self.find(s.job) else { continue };
            let Some(e) = self.jobs[i].elastic else {
                continue;
            };
            let [part] = s.parts.as_slice() else { continue };
            let Some(n) = self.node_index(&part.node).filter(|_| part.slice.is_none()) else {
                continue;
            };
            members.push(Member {
                node: n,
                size: part.gpus.len() as u32,
                elastic: e,
                remaining: None,
                starting: true,
                may_grow: true,
            });
            at.push(k);
        }
        if members.is_empty() {
            return;
        }
        let mut free = self.free_whole();
        let sizes = spread(&members, &mut free, 0.0);
        for ((m, &k), size) in members.iter().zip(&at).zip(sizes) {
            if size > m.size {
                self.grow_start(&mut starts[k], m.node, size - m.size);
            }
        }
    }

    /// Free whole GPUs per node, as the scheduler counts them (holds taken out).
    fn free_whole(&self) -> Vec<u32> {
        let map = self.scheduler.free_map();
        (0..self.nodes.len())
            .map(|n| map.free(NodeId(n as u32)))
            .collect()
    }

    /// Free whole GPUs per node a job could be placed on now (the book's, none on a
    /// drained or unreachable node), outside a pass.
    fn placeable_free(&self) -> Vec<u32> {
        self.nodes
            .iter()
            .map(|n| match n.closed() {
                true => 0,
                false => self
                    .book
                    .get(&n.name)
                    .map_or(0, |b| b.whole_free().count() as u32),
            })
            .collect()
    }

    /// Adds `extra` free GPUs of node `n` to a start; nothing when the book lacks them.
    fn grow_start(&mut self, start: &mut LivePlacement, n: usize, extra: u32) {
        let id = start.job;
        let name = self.nodes[n].name.clone();
        let Some(picked) = self.pick_free(&name, extra) else {
            return;
        };
        let more = Placement {
            parts: vec![(NodeId(n as u32), extra)],
        };
        // The scheduler's count first: a book that refuses then gives back only that.
        if !self.scheduler.occupy(&more) {
            return;
        }
        if !self
            .book
            .get_mut(&name)
            .is_some_and(|b| b.take_whole(id, &picked))
        {
            self.scheduler.release(&more);
            return;
        }
        if let Some(i) = self.find(id) {
            let job = &mut self.jobs[i];
            job.spec.gpus += extra;
            if let Some(p) = job.placement.as_mut() {
                p.parts[0].1 += extra;
            }
        }
        let part = &mut start.parts[0];
        part.gpus.extend(picked);
        part.gpus.sort_unstable();
    }

    /// The running elastic jobs as the rules see them, with their ids and whether each
    /// may give GPUs back (not protected by `--min-runtime`, not being stopped or
    /// cancelled); `may_grow` is false also within the cooldown after its start.
    fn elastic_members(&self, now_ms: u64) -> (Vec<Member>, Vec<u64>, Vec<bool>) {
        let cooldown_ms = (COOLDOWN_RESIZES * self.resize_cost * 1000.0) as u64;
        let protected = self.scheduler.protected();
        let mut members = Vec::new();
        let mut ids = Vec::new();
        let mut shrinkable = Vec::new();
        for job in self.jobs.iter().filter(|j| j.running) {
            let Some(e) = job.elastic else { continue };
            let Some([(node, k)]) = job.placement.as_ref().map(|p| p.parts.as_slice()) else {
                continue;
            };
            let id = job.spec.id.0;
            let run = self.runs.get(&id);
            let age = run
                .filter(|r| r.running && !r.stopping && !r.cancelling)
                .and_then(|r| r.start_ms)
                .map(|s| now_ms.saturating_sub(s))
                .filter(|&age| age >= self.min_runtime_ms && !protected.contains(&job.spec.id));
            members.push(Member {
                node: node.index(),
                size: *k,
                elastic: e,
                remaining: job.spec.estimate.map(|_| job.estimated_remaining()),
                starting: false,
                may_grow: age.is_some_and(|a| a >= cooldown_ms),
            });
            ids.push(id);
            shrinkable.push(age.is_some());
        }
        (members, ids, shrinkable)
    }

    /// The round's elastic step (see the module's doc): a take-back for the first
    /// waiting job, else one grow.
    pub(super) fn elastic_step(
        &mut self,
        now_ms: u64,
        field: &mut Option<super::round::Field>,
    ) -> Option<ElasticResize> {
        if self.preempting() || !self.elastic_running() {
            return None;
        }
        let (members, ids, shrinkable) = self.elastic_members(now_ms);
        let mut free = self.placeable_free();
        let order = &field.get_or_insert_with(|| self.field(now_ms)).order;
        if let Some(&head) = order.first() {
            let givers: Vec<Member> = members
                .iter()
                .zip(&shrinkable)
                .map(|(m, &may)| Member {
                    may_grow: may,
                    ..m.clone()
                })
                .collect();
            if let Some(t) = self.take_back_for(head, &givers, &free) {
                let victims: Vec<(u64, u32)> =
                    t.shrinks.iter().map(|&(m, size)| (ids[m], size)).collect();
                let node = self.nodes[t.node].name.clone();
                let stop: Vec<u64> = victims.iter().map(|v| v.0).collect();
                self.stopping(&stop);
                self.claim_nodes(head, std::slice::from_ref(&node));
                return Some(ElasticResize {
                    claimant: Some(head),
                    node,
                    victims,
                });
            }
        }
        let sizes = spread(&members, &mut free, self.resize_cost);
        let (m, size) = members
            .iter()
            .enumerate()
            .zip(sizes)
            .find(|((_, m), size)| *size > m.size)
            .map(|((i, _), size)| (i, size))?;
        let id = ids[m];
        self.stopping(&[id]);
        Some(ElasticResize {
            claimant: None,
            node: self.nodes[members[m].node].name.clone(),
            victims: vec![(id, size)],
        })
    }

    /// The take-back that would give waiting job `id` room: on a node it may use (its
    /// model, its node sets, online and open, GPUs enough), from elastic loans.
    fn take_back_for(
        &self,
        id: u64,
        members: &[Member],
        free: &[u32],
    ) -> Option<crate::elastic::TakeBack> {
        let i = self.find(id)?;
        let spec = &self.jobs[i].spec;
        if self.jobs[i].running || spec.gang.is_some() || spec.gpus == 0 {
            return None;
        }
        let allowed = |n: usize| {
            let node = &self.nodes[n];
            !node.closed()
                && node.whole_gpus() >= spec.gpus
                && crate::resources::model_matches(&node.model, spec.gpu_model.as_deref())
                && (spec.nodes.is_empty() || spec.nodes.iter().any(|m| m.contains(n)))
        };
        take_back(members, free, spec.gpus, allowed)
    }
}
