//! EASY backfilling on real nodes (`PolicyConfig::backfill_nodes`, on in the live
//! server, `--backfill-nodes` in the simulator): the blocked head job reserves the node
//! where enough GPUs of its model free up earliest, from the running jobs' estimates on
//! that node. A later job may start now if it ends by that time (the shadow), or if it
//! leaves the reserved node's GPUs the head will need alone: elsewhere, or in the node's
//! "extra" GPUs.
//!
//! A gang at the head (N nodes x G GPUs) reserves N nodes: for each node that could hold
//! a part, the time G of its GPUs are expected free; the N earliest (of one GPU model
//! unless the job mixes models) are reserved, and the shadow is the latest of them. A
//! later job may use a reserved node's GPUs only beyond the G its part will need, unless
//! it ends by the shadow.
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
use std::collections::BTreeMap;

/// The head job's reservation on its node (a gang: on each of its nodes).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeReservation {
    /// The blocked head job.
    pub head: JobId,
    /// The reserved node (a gang's first) and each reserved node with its "extra"
    /// GPUs: free at the shadow beyond what the head needs there.
    pub node: NodeId,
    pub nodes: Vec<(NodeId, u32)>,
    /// When enough GPUs of every reserved node are expected free; infinite when unknown.
    pub shadow: Seconds,
}

/// One node's outlook for the head: when `need` of its GPUs are expected free, how
/// many it has free now, and how many beyond `need` it has free then.
struct Outlook {
    node: NodeId,
    at: Seconds,
    now_free: u32,
    extra: u32,
}

fn outlook(jobs: &[SchedJob], node: NodeId, need: u32, free: &FreeMap, now: Seconds) -> Outlook {
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
    let mut found = (avail >= need).then_some(now);
    for (end, k) in ends {
        if found.is_some() || !end.is_finite() {
            break;
        }
        avail += k;
        if avail >= need {
            found = Some(end);
        }
    }
    Outlook {
        node,
        at: found.unwrap_or(f64::INFINITY),
        now_free,
        extra: avail.saturating_sub(need),
    }
}

/// Earliest first; with none known, the most free now; then the lowest node.
fn earlier(a: &Outlook, b: &Outlook) -> std::cmp::Ordering {
    a.at.total_cmp(&b.at)
        .then_with(|| {
            if a.at.is_finite() {
                std::cmp::Ordering::Equal
            } else {
                b.now_free.cmp(&a.now_free)
            }
        })
        .then(a.node.cmp(&b.node))
}

/// The node (a gang: the nodes) where `head` fits earliest. `None` when no node (set)
/// could ever hold it (then nothing is reserved and it does not hold others up).
pub fn reserve(
    jobs: &[SchedJob],
    head: &JobSpec,
    free: &FreeMap,
    now: Seconds,
) -> Option<NodeReservation> {
    // (nodes, per node): a gang's first shape whose node count some model has.
    let shapes = match &head.gang {
        Some(g) => g.shapes(head.gpus),
        None => vec![(1, head.gpus)],
    };
    let mixed = head.gang.as_ref().is_some_and(|g| g.mixed_models);
    for (n, need) in shapes {
        let mut groups: BTreeMap<u16, Vec<Outlook>> = BTreeMap::new();
        for i in 0..free.nodes() {
            let node = NodeId(i as u32);
            if !head.admits(free, i) || free.capacity(node) < need {
                continue;
            }
            let key = if mixed || head.gang.is_none() {
                0
            } else {
                free.model_of(i)
            };
            groups
                .entry(key)
                .or_default()
                .push(outlook(jobs, node, need, free, now));
        }
        let mut best: Option<(Seconds, Vec<Outlook>)> = None;
        for mut g in groups.into_values() {
            if g.len() < n as usize {
                continue;
            }
            g.sort_by(earlier);
            g.truncate(n as usize);
            let shadow = g.iter().map(|o| o.at).fold(f64::NEG_INFINITY, f64::max);
            let better = best.as_ref().is_none_or(|(b, bg)| {
                shadow < *b || (shadow == *b && earlier(&g[0], &bg[0]).is_lt())
            });
            if better {
                best = Some((shadow, g));
            }
        }
        if let Some((shadow, g)) = best {
            return Some(NodeReservation {
                head: head.id,
                node: g[0].node,
                nodes: g.iter().map(|o| (o.node, o.extra)).collect(),
                shadow,
            });
        }
    }
    None
}

impl NodeReservation {
    /// Whether `job` ends by the shadow (a known one).
    pub fn ends_by_shadow(&self, job: &SchedJob, now: Seconds) -> bool {
        self.shadow.is_finite() && now + job.estimated_remaining() <= self.shadow
    }

    /// Places `job` under the reservation: anywhere if it ends by the shadow, else with
    /// each reserved node's GPUs beyond its `extra` kept out of reach. Spends the extra
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
        let hidden: Vec<(NodeId, u32)> = self
            .nodes
            .iter()
            .map(|&(n, extra)| (n, free.free(n).saturating_sub(extra)))
            .filter(|&(_, h)| h > 0)
            .collect();
        for &(n, h) in &hidden {
            free.take(n, h);
        }
        let p = place_job(strategy, free, room, spec);
        for &(n, h) in &hidden {
            free.give(n, h);
        }
        if let Some(p) = &p {
            for (n, extra) in &mut self.nodes {
                let on: u32 = p
                    .parts
                    .iter()
                    .filter(|&&(x, _)| x == *n)
                    .map(|&(_, k)| k)
                    .sum();
                *extra -= on.min(*extra);
            }
        }
        p
    }
}
