//! Priority preemption inside a queue: a waiting job whose base priority (without aging)
//! is in a higher tier than running jobs of its own queue may have them preempted.
//!
//! Tiers come from ascending bounds: with `[100, 1000]` a priority below 100 is tier 0,
//! 100 to 999 tier 1, 1000 and up tier 2. Only a job of one node claims (a gang waits
//! like any job); its victims are on one node, of its own queue, in lower tiers, not
//! protected (started less than the minimum run time ago, being cancelled): the node
//! and victims chosen lose the lowest tiers first, then the least work (GPUs x seconds
//! since each victim's last checkpoint or start), then the fewest jobs. A gang victim
//! goes whole. Nothing is preempted when some node already has room: the job waits for
//! something other than GPUs.

use crate::reclaim::{Claim, NodeRoom, Reclaim, RunningJob};
use crate::Seconds;

/// The tier of `priority` under ascending `bounds`.
pub fn tier(bounds: &[i32], priority: i32) -> usize {
    bounds.iter().filter(|&&b| priority >= b).count()
}

/// Whom to preempt, and on which node, so `claim` can start; `None` when its tier is the
/// lowest, it is a gang, a node has room already, or no node can be freed.
pub fn plan(
    bounds: &[i32],
    running: &[RunningJob],
    nodes: &[NodeRoom],
    claim: &Claim,
) -> Option<Reclaim> {
    let claim_tier = tier(bounds, claim.priority);
    if claim_tier == 0 || claim.nodes > 1 {
        return None;
    }
    cheapest_node(running, nodes, claim, |r| {
        let t = tier(bounds, r.priority);
        (r.queue == claim.queue && t < claim_tier).then_some(t as i64)
    })
}

/// The node walk of a preemption for a claimant of one node (priority tiers here, the
/// serving tier in `live/serving.rs`): `None` when some node that could hold `claim`
/// (GPUs enough, its model) has room already, or none can be freed. Victims are the
/// unprotected jobs on the node that `rank` ranks (`None`: never a victim), taken lowest
/// rank first, then least work lost (GPUs x unsaved seconds), then lowest job, until
/// the claim fits; those not needed after all are dropped, the costliest first. The node
/// chosen loses the lowest highest rank, then the least work, then the fewest jobs, then
/// is the lowest. A gang victim goes whole (its GPUs on other nodes are freed too).
pub fn cheapest_node(
    running: &[RunningJob],
    nodes: &[NodeRoom],
    claim: &Claim,
    rank: impl Fn(&RunningJob) -> Option<i64>,
) -> Option<Reclaim> {
    let fits = |n: &&NodeRoom| n.capacity >= claim.gpus && claim.admits(n);
    let usable: Vec<&NodeRoom> = nodes.iter().filter(fits).collect();
    if usable.iter().any(|n| n.free >= claim.gpus) {
        return None;
    }
    // (highest victim rank, work lost, victims, node) of the best node so far.
    let mut best: Option<((i64, Seconds, usize, u32), Reclaim)> = None;
    for n in usable {
        let mut candidates: Vec<(&RunningJob, i64, Seconds)> = running
            .iter()
            .filter(|r| !r.protected && r.on(n.node) > 0)
            .filter_map(|r| Some((r, rank(r)?, r.unsaved * r.gpus as f64)))
            .collect();
        candidates.sort_by(|a, b| {
            (a.1, a.2, a.0.job)
                .partial_cmp(&(b.1, b.2, b.0.job))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let mut free = n.free;
        let mut picked = Vec::new();
        for c in candidates {
            if free >= claim.gpus {
                break;
            }
            free += c.0.on(n.node);
            picked.push(c);
        }
        if free < claim.gpus {
            continue;
        }
        // Drop victims not needed after all, the costliest first.
        let mut i = picked.len();
        while i > 0 {
            i -= 1;
            let on = picked[i].0.on(n.node);
            if free - on >= claim.gpus {
                free -= on;
                picked.remove(i);
            }
        }
        let key = (
            picked.iter().map(|c| c.1).max().unwrap_or(i64::MIN),
            picked.iter().map(|c| c.2).sum::<Seconds>(),
            picked.len(),
            n.node.get(),
        );
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((
                key,
                Reclaim {
                    node: n.node,
                    nodes: vec![n.node],
                    victims: picked.iter().map(|c| c.0.job).collect(),
                    cost: key.1,
                },
            ));
        }
    }
    best.map(|(_, plan)| plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JobId, NodeId, QueueId};

    fn running(
        id: u64,
        queue: u32,
        node: u32,
        gpus: u32,
        priority: i32,
        unsaved: f64,
    ) -> RunningJob {
        RunningJob {
            job: JobId(id),
            queue: QueueId(queue),
            parts: vec![(NodeId(node), gpus)],
            gpus,
            priority,
            unsaved,
            protected: false,
        }
    }

    fn room(node: u32, free: u32) -> NodeRoom {
        NodeRoom {
            node: NodeId(node),
            free,
            capacity: 4,
            model: "A100".into(),
        }
    }

    fn claim(gpus: u32, priority: i32) -> Claim {
        Claim {
            job: JobId(99),
            queue: QueueId(0),
            gpus,
            nodes: 1,
            model: None,
            priority,
            node_sets: Vec::new(),
        }
    }

    const TIERS: [i32; 2] = [100, 1000];

    #[test]
    fn tiers_follow_the_bounds() {
        assert_eq!(
            [-5, 99, 100, 999, 1000, 5000].map(|p| tier(&TIERS, p)),
            [0, 0, 1, 1, 2, 2]
        );
    }

    #[test]
    fn lowest_tier_first_then_least_work_lost_and_never_another_queue() {
        let jobs = [
            running(1, 0, 0, 2, 500, 10.0), // tier 1, cheap
            running(2, 0, 0, 2, 0, 900.0),  // tier 0, costly
            running(3, 1, 1, 4, 0, 1.0),    // another queue
            running(4, 0, 1, 2, 0, 50.0),   // tier 0 on node 1
            running(5, 0, 1, 2, 2000, 1.0), // tier 2: never for a tier-2 claim
        ];
        let nodes = [room(0, 0), room(1, 0)];
        // A tier-2 job of 2 GPUs: a tier-0 victim beats the cheaper tier-1 one; of the
        // tier-0 ones, the least work lost (job 4 on node 1).
        let p = plan(&TIERS, &jobs, &nodes, &claim(2, 1000)).unwrap();
        assert_eq!((p.node, p.victims.clone()), (NodeId(1), vec![JobId(4)]));
        // A tier-1 job may take only tier-0 victims.
        let p = plan(&TIERS, &jobs, &nodes, &claim(4, 100));
        assert_eq!(
            p, None,
            "node 0 has one tier-0 job, node 1 one and a tier-2"
        );
        // Tier 0 preempts nobody.
        assert_eq!(plan(&TIERS, &jobs, &nodes, &claim(1, 5)), None);
    }

    #[test]
    fn protected_jobs_and_nodes_with_room_mean_no_preemption() {
        let mut jobs = [running(1, 0, 0, 4, 0, 10.0)];
        assert!(plan(&TIERS, &jobs, &[room(0, 0)], &claim(1, 100)).is_some());
        jobs[0].protected = true;
        assert_eq!(plan(&TIERS, &jobs, &[room(0, 0)], &claim(1, 100)), None);
        jobs[0].protected = false;
        assert_eq!(
            plan(&TIERS, &jobs, &[room(0, 0), room(1, 1)], &claim(1, 100)),
            None
        );
    }

    #[test]
    fn only_the_victims_needed() {
        let jobs = [
            running(1, 0, 0, 1, 0, 5.0),
            running(2, 0, 0, 1, 0, 6.0),
            running(3, 0, 0, 2, 0, 100.0),
        ];
        let p = plan(&TIERS, &jobs, &[room(0, 0)], &claim(2, 100)).unwrap();
        assert_eq!(p.victims, vec![JobId(1), JobId(2)]);
    }
}
