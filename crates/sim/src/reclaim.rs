//! Quota reclaim in the simulator, with the live server's rules (the core's
//! [`gpusched_core::reclaim`] planner): after each pass, the first waiting job of a
//! queue below its quota takes GPUs back from queues over theirs, preempting the jobs
//! that lose the least work (the seconds since they last started: traces have no
//! checkpoints), never one younger than the protection time; it then starts on that
//! node. A preempted job keeps its progress and waits again.

use std::collections::BTreeMap;

use gpusched_core::reclaim::{self, Claim, NodeRoom, QuotaQueue, RunningJob};
use gpusched_core::{Cluster, Placement, QueueId, SchedJob, Scheduler, Seconds};

/// What reclaiming needs: each queue's quota, and the protection time.
#[derive(Clone, Debug, PartialEq)]
pub struct ReclaimOptions {
    pub queues: BTreeMap<QueueId, QuotaQueue>,
    pub min_runtime: Seconds,
}

/// One reclaim at most per pass (the core's [`reclaim::one_per_round`]). `started[i]` is when job `i` last started (updated
/// here for the jobs it starts). Returns whether anything changed.
pub fn step(
    sched: &mut Scheduler,
    jobs: &mut [SchedJob],
    started: &mut [Seconds],
    cluster: &Cluster,
    opts: &ReclaimOptions,
    now: Seconds,
) -> bool {
    let mut running = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        // Jobs on one node only: a reclaim frees one node.
        let Some(p) = j
            .placement
            .as_ref()
            .filter(|p| j.running && p.parts.len() == 1)
        else {
            continue;
        };
        running.push(RunningJob {
            job: j.spec.id,
            queue: j.spec.queue,
            parts: p.parts.clone(),
            gpus: j.spec.gpus,
            priority: j.spec.priority,
            unsaved: now - started[i],
            protected: now - started[i] < opts.min_runtime,
        });
    }
    let map = sched.free_map();
    let rooms: Vec<NodeRoom> = cluster
        .nodes
        .iter()
        .map(|n| NodeRoom {
            node: n.id,
            free: map.free(n.id),
            capacity: map.capacity(n.id),
            model: n.gpus.first().map(|g| g.model.clone()).unwrap_or_default(),
        })
        .collect();
    let mut usage: BTreeMap<QueueId, u32> = BTreeMap::new();
    for j in jobs.iter().filter(|j| j.running) {
        *usage.entry(j.spec.queue).or_insert(0) += j.spec.gpus;
    }
    let mut waiting: Vec<usize> = (0..jobs.len()).filter(|&i| !jobs[i].running).collect();
    waiting.sort_by_key(|&i| (jobs[i].rank, jobs[i].spec.id));
    // Each queue below its quota (in id order) claims for its first waiting job; the
    // core's rule picks the round's one reclaim (preemption here is immediate, so none
    // is ever under way).
    let claims = opts.queues.iter().filter_map(|(&queue, def)| {
        if usage.get(&queue).copied().unwrap_or(0) >= def.quota {
            return None;
        }
        let &c = waiting.iter().find(|&&i| jobs[i].spec.queue == queue)?;
        let spec = &jobs[c].spec;
        let claim = Claim {
            job: spec.id,
            queue,
            gpus: spec.gpus,
            nodes: 1,
            model: spec.gpu_model.clone(),
            priority: spec.priority,
            node_sets: Vec::new(),
        };
        Some((c, claim))
    });
    let Some((c, claim, plan)) =
        reclaim::one_per_round(&opts.queues, &running, &rooms, false, claims)
    else {
        return false;
    };
    for v in &plan.victims {
        if let Some(i) = jobs.iter().position(|j| j.spec.id == *v) {
            sched.preempt_now(&mut jobs[i], now);
        }
    }
    let at = Placement {
        parts: vec![(plan.node, claim.gpus)],
    };
    if sched.start_at(&mut jobs[c], at, now) {
        started[c] = now;
    }
    true
}
