//! Taking lent quota back: which running jobs to preempt so that a queue below its
//! guaranteed quota can start its next job (Kueue's "reclaim within cohort").
//!
//! A queue may borrow GPUs beyond its quota while others leave theirs idle; when an owner
//! needs its quota back, jobs of queues that are over their own quota are preempted, on
//! one node (a gang claimant: on as many nodes as it has parts), choosing the nodes and
//! victims that lose the least work: GPUs x seconds since each victim's last checkpoint
//! (or start). Victims are whole jobs: a gang victim frees its GPUs on every node it
//! runs on, and costs its whole GPUs. Never a job of a
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
    /// GPUs it holds on each node (a gang: several).
    pub parts: Vec<(NodeId, u32)>,
    /// GPUs in all.
    pub gpus: u32,
    pub priority: i32,
    /// Seconds of work lost if it stopped now (since its last checkpoint, or its start).
    pub unsaved: Seconds,
    /// Started (or restarted) too recently to be preempted again.
    pub protected: bool,
}

impl RunningJob {
    /// GPUs it holds on `node`.
    pub fn on(&self, node: NodeId) -> u32 {
        self.parts.iter().filter(|p| p.0 == node).map(|p| p.1).sum()
    }
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
    /// GPUs in all.
    pub gpus: u32,
    /// Nodes it runs on (1 unless a gang; its parts hold `gpus / nodes` each, on nodes
    /// of one GPU model).
    pub nodes: u32,
    pub model: Option<String>,
    pub priority: i32,
    /// The node sets it may use (`JobSpec::nodes`); empty: any node.
    pub node_sets: Vec<crate::eligible::NodeMask>,
}

impl Claim {
    /// Whether it may run on `n`: its GPU model and its node sets.
    pub fn admits(&self, n: &NodeRoom) -> bool {
        crate::resources::model_matches(&n.model, self.model.as_deref())
            && (self.node_sets.is_empty()
                || self.node_sets.iter().any(|m| m.contains(n.node.index())))
    }
}

/// Where the claim will run and whom to preempt for it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reclaim {
    /// The first of `nodes`.
    pub node: NodeId,
    /// Every node the claim needs freed (one unless a gang).
    pub nodes: Vec<NodeId>,
    pub victims: Vec<JobId>,
    /// GPU-seconds of work the victims lose.
    pub cost: Seconds,
}

/// The cheapest way to make room for `claim` by preempting borrowers, if there is one
/// (None also when the claim's queue would exceed its quota). When nodes already have
/// room, those nodes with no victims.
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
    let want = claim.nodes.max(1) as usize;
    let per_node = claim.gpus / want as u32;
    let fits_model = |n: &NodeRoom| claim.admits(n);
    // Nodes of one GPU model (any, for a job of one node) with room already: the policy's
    // order held the job back; nothing to take back, but the quota entitles it to go
    // first there.
    fn key(want: usize, n: &NodeRoom) -> &str {
        if want == 1 {
            ""
        } else {
            n.model.as_str()
        }
    }
    let mut roomy: BTreeMap<&str, Vec<NodeId>> = BTreeMap::new();
    for n in nodes.iter().filter(|n| fits_model(n) && n.free >= per_node) {
        roomy.entry(key(want, n)).or_default().push(n.node);
    }
    if let Some(ready) = roomy.into_values().find(|v| v.len() >= want) {
        return Some(Reclaim {
            node: ready[0],
            nodes: ready[..want].to_vec(),
            victims: Vec::new(),
            cost: 0.0,
        });
    }
    let victims_on = |n: &NodeRoom, planned: &mut BTreeMap<QueueId, u32>, chosen: &[JobId]| {
        // GPUs of victims chosen for other nodes of the claim come back here too.
        let freed: u32 = running
            .iter()
            .filter(|r| chosen.contains(&r.job))
            .map(|r| r.on(n.node))
            .sum();
        let mut candidates: Vec<&RunningJob> = running
            .iter()
            .filter(|r| {
                r.on(n.node) > 0
                    && !chosen.contains(&r.job)
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
        let (mut room, mut cost, mut victims) = (n.free + freed, 0.0, Vec::new());
        for c in candidates {
            if room >= per_node {
                break;
            }
            let held = planned.get(&c.queue).copied().unwrap_or(0);
            if held <= quota(c.queue) {
                continue; // that queue is back within its quota
            }
            planned.insert(c.queue, held - c.gpus);
            room += c.on(n.node);
            cost += c.unsaved * c.gpus as f64;
            victims.push(c.job);
        }
        (room >= per_node).then_some((cost, victims))
    };
    // Each node alone, cheapest first (ties: fewer victims, then node order).
    let mut options: Vec<(Seconds, usize, usize, &NodeRoom)> = Vec::new();
    for (order, n) in nodes
        .iter()
        .filter(|n| fits_model(n) && n.capacity >= per_node)
        .enumerate()
    {
        let mut planned = usage.clone();
        if let Some((cost, victims)) = victims_on(n, &mut planned, &[]) {
            options.push((cost, victims.len(), order, n));
        }
    }
    options.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    // Per GPU model (one group for a job of one node): the cheapest nodes together,
    // victims shared, each queue's use counted once.
    let mut groups: BTreeMap<&str, Vec<&NodeRoom>> = BTreeMap::new();
    for o in &options {
        groups.entry(key(want, o.3)).or_default().push(o.3);
    }
    let mut best: Option<Reclaim> = None;
    for group in groups.values().filter(|g| g.len() >= want) {
        let mut planned = usage.clone();
        let (mut picked, mut victims, mut cost) = (Vec::new(), Vec::new(), 0.0);
        for n in group {
            if picked.len() == want {
                break;
            }
            let mut trial = planned.clone();
            if let Some((c, v)) = victims_on(n, &mut trial, &victims) {
                planned = trial;
                picked.push(n.node);
                victims.extend(v);
                cost += c;
            }
        }
        if picked.len() < want {
            continue;
        }
        let better = best.as_ref().is_none_or(|b| {
            cost.total_cmp(&b.cost)
                .then(victims.len().cmp(&b.victims.len()))
                .is_lt()
        });
        if better {
            best = Some(Reclaim {
                node: picked[0],
                nodes: picked,
                victims,
                cost,
            });
        }
    }
    best
}

/// Whether a round may reclaim at all: some queue has a quota and no earlier reclaim's
/// preemption is under way ([`one_per_round`] asks; a caller may too, to skip building
/// its views).
pub fn round_due(queues: &BTreeMap<QueueId, QuotaQueue>, preempting: bool) -> bool {
    !preempting && queues.values().any(|q| q.quota > 0)
}

/// A round's reclaim: at most one per round, and none while an earlier one's preemption
/// is under way (`preempting`) or when no queue has a quota. The claims come one per
/// queue, in the order the caller tries the queues (each queue's first waiting job);
/// the first that [`plan`] can make room for is the round's reclaim, with its tag, and
/// the others wait for a later round. Lazy: claims after that one are not made.
pub fn one_per_round<T>(
    queues: &BTreeMap<QueueId, QuotaQueue>,
    running: &[RunningJob],
    nodes: &[NodeRoom],
    preempting: bool,
    claims: impl IntoIterator<Item = (T, Claim)>,
) -> Option<(T, Claim, Reclaim)> {
    if !round_due(queues, preempting) {
        return None;
    }
    claims
        .into_iter()
        .find_map(|(tag, claim)| plan(queues, running, nodes, &claim).map(|r| (tag, claim, r)))
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
            parts: vec![(NodeId(node), gpus)],
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
            nodes: 1,
            model: None,
            priority: 0,
            node_sets: Vec::new(),
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

    #[test]
    fn a_gang_claimant_frees_several_nodes_and_gang_victims_go_whole() {
        // Queue 0 (quota 2) borrows all of nodes 0-2 (4 GPUs each); queue 1 (quota 8)
        // wants 2 nodes x 4.
        let mut qs = queues();
        qs.insert(QueueId(1), q(8));
        let gang = RunningJob {
            parts: vec![(NodeId(0), 4), (NodeId(1), 4)],
            gpus: 8,
            ..run(1, 0, 0, 8, 10.0)
        };
        let running = [gang, run(2, 0, 2, 4, 30.0)];
        let nodes = [room(0, 0), room(1, 0), room(2, 0)];
        let c = Claim {
            nodes: 2,
            ..claim(8)
        };
        // The gang (80 GPU-seconds) frees nodes 0 and 1 at once: cheaper than it plus
        // job 2 (120 more).
        let r = plan(&qs, &running, &nodes, &c).unwrap();
        assert_eq!(r.nodes, [NodeId(0), NodeId(1)]);
        assert_eq!(r.victims, [JobId(1)]);
        assert_eq!(r.cost, 80.0);
        // Two nodes with room already: no victims.
        let r = plan(&qs, &running, &[room(0, 4), room(1, 0), room(2, 4)], &c).unwrap();
        assert_eq!(
            (r.nodes.clone(), r.victims.len()),
            (vec![NodeId(0), NodeId(2)], 0)
        );
        // One node of another model does not count for a gang of one model.
        let mut other = room(2, 4);
        other.model = "H100".into();
        let r = plan(&qs, &running, &[room(0, 4), room(1, 0), other], &c).unwrap();
        assert_eq!(r.nodes, [NodeId(0), NodeId(1)]);
        assert_eq!(r.victims, [JobId(1)]);
    }

    fn claim_of(job: u64, queue: u32, gpus: u32) -> Claim {
        Claim {
            job: JobId(job),
            queue: QueueId(queue),
            ..claim(gpus)
        }
    }

    #[test]
    fn one_reclaim_per_round_the_first_claim_that_has_a_plan() {
        // Queue 0 (quota 2) borrows all 4 GPUs; queues 1 and 2 (quota 2 each) claim.
        let qs: BTreeMap<QueueId, QuotaQueue> = [(0, q(2)), (1, q(2)), (2, q(2))]
            .into_iter()
            .map(|(i, d)| (QueueId(i), d))
            .collect();
        let running = [run(1, 0, 0, 2, 10.0), run(2, 0, 0, 2, 20.0)];
        let nodes = [room(0, 0)];
        // Queue 1's claim is over its quota (no plan): queue 2's is the round's one, and
        // queue 3's claim after it is never made.
        let mut made = Vec::new();
        let claims = [("one", claim_of(7, 1, 3)), ("two", claim_of(8, 2, 2))]
            .into_iter()
            .chain(std::iter::once_with(|| ("three", claim_of(9, 2, 1))))
            .inspect(|(t, _)| made.push(*t));
        let (tag, c, r) = one_per_round(&qs, &running, &nodes, false, claims).unwrap();
        assert_eq!((tag, c.job), ("two", JobId(8)));
        assert_eq!((r.node, r.victims), (NodeId(0), vec![JobId(1)]));
        assert_eq!(made, ["one", "two"]);
        // The same round in the other order: queue 2 first again wins.
        let (tag, ..) = one_per_round(
            &qs,
            &running,
            &nodes,
            false,
            [("two", claim_of(8, 2, 2)), ("one", claim_of(7, 1, 2))],
        )
        .unwrap();
        assert_eq!(tag, "two");
    }

    #[test]
    fn no_reclaim_while_preempting_or_without_quotas() {
        let running = [run(1, 0, 0, 4, 10.0)];
        let nodes = [room(0, 0)];
        let claims = || [((), claim(2))];
        assert!(one_per_round(&queues(), &running, &nodes, false, claims()).is_some());
        // An earlier reclaim's victims are still stopping: none this round.
        assert_eq!(
            one_per_round(&queues(), &running, &nodes, true, claims()),
            None
        );
        // No queue has a quota: no claim is even made.
        let none: BTreeMap<QueueId, QuotaQueue> = [(QueueId(0), q(0)), (QueueId(1), q(0))]
            .into_iter()
            .collect();
        let mut made = false;
        let lazy = std::iter::once_with(|| {
            made = true;
            ((), claim(2))
        });
        assert_eq!(one_per_round(&none, &running, &nodes, false, lazy), None);
        assert!(!made);
    }
}
