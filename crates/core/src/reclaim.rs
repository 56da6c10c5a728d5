//! Taking lent quota back: which running jobs to preempt so that a queue below its
//! guaranteed quota can start its next job (Kueue's "reclaim within cohort").
//!
//! A queue may borrow GPUs beyond its quota while others leave theirs idle; when an owner
//! needs its quota back, jobs of queues that are over their own quota are preempted, on
//! one node (a job runs on one node), choosing the node and victims that lose the least
//! work: GPUs x seconds since each victim's last checkpoint (or start). Never a job of a
//! queue that is not preemptible, a job that ran less than its protection time since it
//! last started, a job of higher priority than the claimant, nor so many that a
//! victim's queue drops below its own quota by more than one job.

use std::collections::BTreeMap;

use crate::ids::{JobId, NodeId, QueueId};
use crate::Seconds;

/// What reclaiming needs to know of a queue.
#[derive(Clone, Debug, PartialEq)]
pub struct QuotaQueue {
    /// GPUs guaranteed.
    pub quota: u32,
    /// Whether its jobs may be preempted to return borrowed GPUs.
    pub preemptible: bool,
}

/// A running job as a possible victim.
#[derive(Clone, Debug, PartialEq)]
pub struct RunningJob {
    pub job: JobId,
    pub queue: QueueId,
    pub node: NodeId,
    pub gpus: u32,
    pub priority: i32,
    /// Seconds of work lost if it stopped now (since its last checkpoint, or its start).
    pub unsaved: Seconds,
    /// Started (or restarted) too recently to be preempted again.
    pub protected: bool,
}

/// A node as reclaiming sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRoom {
    pub node: NodeId,
    pub free: u32,
    pub capacity: u32,
    pub model: String,
}

/// The job that wants its queue's quota back.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub job: JobId,
    pub queue: QueueId,
    pub gpus: u32,
    pub model: Option<String>,
    pub priority: i32,
}

/// Where the claim will run and whom to preempt for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reclaim {
    pub node: NodeId,
    pub victims: Vec<JobId>,
    /// GPU-seconds of work the victims lose.
    pub cost: Seconds,
}

/// The cheapest way to make room for `claim` by preempting borrowers, if there is one
/// (None also when the claim's queue would exceed its quota). When a node already has
/// room, that node with no victims.
pub fn plan(
    queues: &BTreeMap<QueueId, QuotaQueue>,
    running: &[RunningJob],
    nodes: &[NodeRoom],
    claim: &Claim,
) -> Option<Reclaim> {
    let mut usage: BTreeMap<QueueId, u32> = BTreeMap::new();
    for r in running {
        *usage.entry(r.queue).or_insert(0) += r.gpus;
    }
    let quota = |q: QueueId| queues.get(&q).map_or(0, |d| d.quota);
    // Only a job that stays within its queue's guarantee may reclaim.
    if usage.get(&claim.queue).copied().unwrap_or(0) + claim.gpus > quota(claim.queue) {
        return None;
    }
    let fits_model = |n: &NodeRoom| {
        claim
            .model
            .as_deref()
            .is_none_or(|m| n.model.starts_with(m))
    };
    if let Some(n) = nodes.iter().find(|n| fits_model(n) && n.free >= claim.gpus) {
        // Room already (the policy's order held the job back): nothing to take back,
        // but the quota entitles it to go first there.
        return Some(Reclaim {
            node: n.node,
            victims: Vec::new(),
            cost: 0.0,
        });
    }
    let mut best: Option<Reclaim> = None;
    for n in nodes
        .iter()
        .filter(|n| fits_model(n) && n.capacity >= claim.gpus)
    {
        let mut candidates: Vec<&RunningJob> = running
            .iter()
            .filter(|r| {
                r.node == n.node
                    && r.queue != claim.queue
                    && !r.protected
                    && r.priority <= claim.priority
                    && queues.get(&r.queue).is_some_and(|q| q.preemptible)
                    && usage.get(&r.queue).copied().unwrap_or(0) > quota(r.queue)
            })
            .collect();
        // Least work lost first; then lower priority; then the younger job id.
        candidates.sort_by(|a, b| {
            (a.unsaved * a.gpus as f64)
                .total_cmp(&(b.unsaved * b.gpus as f64))
                .then(a.priority.cmp(&b.priority))
                .then(b.job.cmp(&a.job))
        });
        let mut planned = usage.clone();
        let (mut room, mut cost, mut victims) = (n.free, 0.0, Vec::new());
        for c in candidates {
            if room >= claim.gpus {
                break;
            }
            let held = planned.get(&c.queue).copied().unwrap_or(0);
            if held <= quota(c.queue) {
                continue; // that queue is back within its quota
            }
            planned.insert(c.queue, held - c.gpus);
            room += c.gpus;
            cost += c.unsaved * c.gpus as f64;
            victims.push(c.job);
        }
        if room < claim.gpus {
            continue;
        }
        let better = best.as_ref().is_none_or(|b| {
            cost.total_cmp(&b.cost)
                .then(victims.len().cmp(&b.victims.len()))
                .is_lt()
        });
        if better {
            best = Some(Reclaim {
                node: n.node,
                victims,
                cost,
            });
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(quota: u32) -> QuotaQueue {
        QuotaQueue {
            quota,
            preemptible: true,
        }
    }

    fn run(job: u64, queue: u32, node: u32, gpus: u32, unsaved: f64) -> RunningJob {
        RunningJob {
            job: JobId(job),
            queue: QueueId(queue),
            node: NodeId(node),
            gpus,
            priority: 0,
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

    fn claim(gpus: u32) -> Claim {
        Claim {
            job: JobId(99),
            queue: QueueId(1),
            gpus,
            model: None,
            priority: 0,
        }
    }

    fn queues() -> BTreeMap<QueueId, QuotaQueue> {
        [(QueueId(0), q(2)), (QueueId(1), q(2))]
            .into_iter()
            .collect()
    }

    #[test]
    fn borrowers_lose_the_least_work_on_the_cheapest_node() {
        // Queue 0 (quota 2) holds all 8 GPUs of two nodes; queue 1 wants 2 back.
        let running = [
            run(1, 0, 0, 2, 100.0),
            run(2, 0, 0, 2, 5000.0),
            run(3, 0, 1, 1, 50.0),
            run(4, 0, 1, 1, 60.0),
            run(5, 0, 1, 2, 10_000.0),
        ];
        let r = plan(&queues(), &running, &[room(0, 0), room(1, 0)], &claim(2)).unwrap();
        assert_eq!(r.node, NodeId(1));
        assert_eq!(r.victims, [JobId(3), JobId(4)]);
        assert_eq!(r.cost, 110.0);
    }

    #[test]
    fn no_reclaim_beyond_the_quota_within_it_or_against_the_rules() {
        let running = [run(1, 0, 0, 4, 10.0)];
        let nodes = [room(0, 0)];
        // Asking for more than its quota is not reclaiming.
        assert_eq!(plan(&queues(), &running, &nodes, &claim(3)), None);
        // Room already: that node, nobody preempted.
        let r = plan(&queues(), &running, &[room(0, 1), room(1, 2)], &claim(2)).unwrap();
        assert_eq!((r.node, r.victims.len()), (NodeId(1), 0));
        // Not preemptible, protected, or of higher priority.
        let mut qs = queues();
        qs.get_mut(&QueueId(0)).unwrap().preemptible = false;
        assert_eq!(plan(&qs, &running, &nodes, &claim(2)), None);
        let mut p = running.clone();
        p[0].protected = true;
        assert_eq!(plan(&queues(), &p, &nodes, &claim(2)), None);
        p[0].protected = false;
        p[0].priority = 5;
        assert_eq!(plan(&queues(), &p, &nodes, &claim(2)), None);
        // A queue within its quota is never a victim.
        let within = [run(1, 0, 0, 2, 10.0), run(2, 2, 0, 2, 10.0)];
        let mut qs = queues();
        qs.insert(QueueId(2), q(2));
        assert_eq!(plan(&qs, &within, &nodes, &claim(2)), None);
    }
}
