//! Where a job's GPUs go.
//!
//! Every strategy is deterministic: ties go to the lowest-numbered node and switches are
//! tried in order. All of them keep a job inside one switch, except `pool` and
//! `topology`.
//!
//! - `consolidated`: the fewest nodes. A job that fits one node goes to the *first* node
//!   with enough free GPUs; a larger job takes whole idle nodes in order and puts the
//!   remainder on the first other node with room. This is the "yarn" scheme of the
//!   Tiresias and Muri simulators.
//! - `best-fit`: like `consolidated`, but the single node (or the remainder node) is the
//!   one left with the fewest free GPUs, which keeps large holes for large jobs.
//! - `spread`: one GPU at a time on the node with the most free GPUs, across switches;
//!   spreads load (and heat) at the cost of locality.
//! - `topology`: a job that fits one node goes to the tightest node of the cluster; a
//!   larger one is split into equal whole parts on the fewest nodes that fit now, placed
//!   as a gang by the live cluster's rule ([`crate::gang::choose_nodes`]): one switch,
//!   else the fewest switches (one rack first), then the tightest fit.
//! - `pool`: ignores topology; a job fits when the cluster has enough free GPUs in total.
//!   What the peer's Tiresias (`dlas-gpu`) simulation assumes; useful as an upper bound.

use crate::freemap::{FreeMap, Want};
use crate::ids::NodeId;
use crate::job::JobSpec;
use crate::room::{self, Room};

/// Whole GPUs of one job on each node it uses, ordered by node (a gang's parts are in
/// rank order instead, see [`crate::gang`]).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Placement {
    pub parts: Vec<(NodeId, u32)>,
}

impl Placement {
    pub fn gpus(&self) -> u32 {
        self.parts.iter().map(|p| p.1).sum()
    }
    pub fn nodes(&self) -> usize {
        self.parts.len()
    }
}

/// A named placement strategy.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PlacementStrategy {
    Consolidated,
    BestFit,
    Spread,
    Pool,
    Topology,
}

impl PlacementStrategy {
    pub const ALL: [PlacementStrategy; 5] = [
        PlacementStrategy::Consolidated,
        PlacementStrategy::BestFit,
        PlacementStrategy::Spread,
        PlacementStrategy::Pool,
        PlacementStrategy::Topology,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PlacementStrategy::Consolidated => "consolidated",
            PlacementStrategy::BestFit => "best-fit",
            PlacementStrategy::Spread => "spread",
            PlacementStrategy::Pool => "pool",
            PlacementStrategy::Topology => "topology",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Places `spec`'s GPUs by [`Self::place`] on the first of its node sets that holds
    /// them (a partition each, in its order).
    pub fn place_spec(self, map: &mut FreeMap, spec: &JobSpec) -> Option<Placement> {
        spec.wants()
            .find_map(|want| self.place(map, spec.gpus, want))
    }

    /// Finds room for `gpus` GPUs on nodes `want` accepts (its GPU model, its node set)
    /// and takes it from `map`; `None` leaves `map` untouched.
    pub fn place(self, map: &mut FreeMap, gpus: u32, want: Want<'_>) -> Option<Placement> {
        if gpus == 0 || map.total_free() < gpus as u64 {
            return None;
        }
        let parts = match self {
            PlacementStrategy::Consolidated => per_switch(map, gpus, want, false),
            PlacementStrategy::BestFit => per_switch(map, gpus, want, true),
            PlacementStrategy::Spread => spread(map, gpus, want),
            PlacementStrategy::Pool => pool(map, gpus, want),
            PlacementStrategy::Topology => topology(map, gpus, want),
        }?;
        for &(node, k) in &parts {
            map.take(node, k);
        }
        Some(Placement { parts })
    }
}

/// Places `spec` and takes what it holds. Without `room` (the scheduler does not reserve
/// node resources) or for a job that asks GPUs and nothing else, this is
/// [`PlacementStrategy::place`] unchanged: the free map's fast queries. Otherwise the
/// job goes on one node that has both its GPUs and its room free (0 GPUs: any node with
/// room), chosen in the strategy's spirit: `best-fit` the node left with the fewest free
/// GPUs (so CPU-only jobs fill nodes whose GPUs are taken), `spread` the most, the
/// others the first. A scan of the nodes: only jobs that ask for room pay it.
pub fn place_job(
    strategy: PlacementStrategy,
    map: &mut FreeMap,
    mut room: Option<&mut Room>,
    spec: &JobSpec,
) -> Option<Placement> {
    // A job with partitions tries each in order: the first that holds it wins.
    spec.wants()
        .find_map(|want| place_in(strategy, map, room.as_deref_mut(), spec, want))
}

/// [`place_job`] on the nodes `want` accepts.
fn place_in(
    strategy: PlacementStrategy,
    map: &mut FreeMap,
    room: Option<&mut Room>,
    spec: &JobSpec,
    want: Want<'_>,
) -> Option<Placement> {
    if let Some(gang) = &spec.gang {
        // A gang ignores the strategy: its own node rule (`crate::gang`), all or nothing.
        let parts = crate::gang::place_in(map, room.as_deref(), spec, gang, want)?;
        for &(node, k) in &parts {
            map.take(node, k);
        }
        if let (Some(r), true) = (room, room::asks(spec)) {
            for &(node, _) in &parts {
                r.take(node, spec);
            }
        }
        return Some(Placement { parts });
    }
    let room = match room {
        Some(r) if spec.gpus == 0 || room::asks(spec) => r,
        _ => return strategy.place(map, spec.gpus, want),
    };
    let gpus = spec.gpus;
    let candidates = (0..map.nodes()).map(|i| NodeId(i as u32)).filter(|&n| {
        map.free(n) >= gpus
            && (if gpus == 0 {
                want.nodes.is_none_or(|m| m.contains(n.index()))
            } else {
                map.admits(n.index(), want)
            })
            && room.open(n)
            && room.fits(n, spec)
    });
    let node = match strategy {
        PlacementStrategy::BestFit | PlacementStrategy::Topology => {
            candidates.min_by_key(|&n| (map.free(n), n))
        }
        PlacementStrategy::Spread => {
            candidates.max_by_key(|&n| (map.free(n), std::cmp::Reverse(n)))
        }
        PlacementStrategy::Consolidated | PlacementStrategy::Pool => candidates.min(),
    }?;
    if gpus > 0 {
        map.take(node, gpus);
    }
    room.take(node, spec);
    Some(Placement {
        parts: vec![(node, gpus)],
    })
}

fn per_switch(
    map: &FreeMap,
    gpus: u32,
    want: Want<'_>,
    tightest: bool,
) -> Option<Vec<(NodeId, u32)>> {
    (0..map.switches())
        .filter(|&s| map.switch_free(s) >= gpus as u64)
        .find_map(|s| {
            let per_node = map.capacity(NodeId(map.switch_nodes(s).start as u32));
            if gpus <= per_node {
                single_node(map, s, gpus, want, tightest, &[]).map(|n| vec![(n, gpus)])
            } else {
                multi_node(map, s, gpus, per_node, want, tightest)
            }
        })
}

/// A node of switch `s` with `k` free GPUs, not in `exclude`: the first, or the tightest.
fn single_node(
    map: &FreeMap,
    s: usize,
    k: u32,
    want: Want<'_>,
    tightest: bool,
    exclude: &[(NodeId, u32)],
) -> Option<NodeId> {
    if want.any_node() && exclude.is_empty() {
        return if tightest {
            map.tightest_with_at_least(s, k)
        } else {
            map.first_with_at_least(s, k)
        };
    }
    // Slow path for picky jobs: a scan of the switch.
    let candidates = map.switch_nodes(s).map(|i| NodeId(i as u32)).filter(|&n| {
        map.free(n) >= k && map.admits(n.index(), want) && !exclude.iter().any(|e| e.0 == n)
    });
    if tightest {
        candidates.min_by_key(|&n| (map.free(n), n))
    } else {
        candidates.min()
    }
}

fn multi_node(
    map: &FreeMap,
    s: usize,
    gpus: u32,
    per_node: u32,
    want: Want<'_>,
    tightest: bool,
) -> Option<Vec<(NodeId, u32)>> {
    let full = gpus / per_node;
    let rest = gpus % per_node;
    let mut parts = Vec::with_capacity(full as usize + 1);
    let mut from = map.switch_nodes(s).start;
    while parts.len() < full as usize {
        let n = map.next_idle(s, from)?;
        from = n.index() + 1;
        if map.admits(n.index(), want) {
            parts.push((n, per_node));
        }
    }
    if rest > 0 {
        let n = single_node(map, s, rest, want, tightest, &parts)?;
        parts.push((n, rest));
        parts.sort();
    }
    Some(parts)
}

fn topology(map: &FreeMap, gpus: u32, want: Want<'_>) -> Option<Vec<(NodeId, u32)>> {
    if gpus <= map.max_per_node() {
        let one = (0..map.switches())
            .filter_map(|s| single_node(map, s, gpus, want, true, &[]))
            .min_by_key(|&n| (map.free(n), n));
        if let Some(n) = one {
            return Some(vec![(n, gpus)]);
        }
    }
    crate::gang::place_split(map, gpus, want)
}

fn spread(map: &FreeMap, gpus: u32, want: Want<'_>) -> Option<Vec<(NodeId, u32)>> {
    // Work on a copy of the free counts: one GPU at a time to the loosest node.
    let mut free: Vec<u32> = (0..map.nodes())
        .map(|i| map.free(NodeId(i as u32)))
        .collect();
    let mut taken = vec![0u32; free.len()];
    for _ in 0..gpus {
        let best = (0..free.len())
            .filter(|&i| free[i] > 0 && map.admits(i, want))
            .max_by_key(|&i| (free[i], std::cmp::Reverse(i)))?;
        free[best] -= 1;
        taken[best] += 1;
    }
    Some(
        taken
            .into_iter()
            .enumerate()
            .filter(|(_, k)| *k > 0)
            .map(|(i, k)| (NodeId(i as u32), k))
            .collect(),
    )
}

fn pool(map: &FreeMap, gpus: u32, want: Want<'_>) -> Option<Vec<(NodeId, u32)>> {
    let mut parts = Vec::new();
    let mut left = gpus;
    for s in 0..map.switches() {
        for i in map.switch_nodes(s) {
            let n = NodeId(i as u32);
            let k = map.free(n).min(left);
            if k > 0 && map.admits(i, want) {
                parts.push((n, k));
                left -= k;
                if left == 0 {
                    return Some(parts);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::PlacementStrategy::*;
    use super::*;
    use crate::cluster::Cluster;

    fn map(shape: &str) -> FreeMap {
        FreeMap::new(&Cluster::parse_shape(shape, "V100").unwrap())
    }

    fn nodes(p: &Placement) -> Vec<(u32, u32)> {
        p.parts.iter().map(|(n, k)| (n.get(), *k)).collect()
    }

    #[test]
    fn consolidated_is_first_fit_and_takes_whole_nodes_for_big_jobs() {
        let mut m = map("4x8");
        assert_eq!(
            nodes(&Consolidated.place(&mut m, 3, Want::default()).unwrap()),
            [(0, 3)]
        );
        assert_eq!(
            nodes(&Consolidated.place(&mut m, 6, Want::default()).unwrap()),
            [(1, 6)]
        );
        assert_eq!(
            nodes(&Consolidated.place(&mut m, 2, Want::default()).unwrap()),
            [(0, 2)]
        );
        // 12 GPUs: one idle node (2) plus 4 on the first node with 4 free (3).
        assert_eq!(
            nodes(&Consolidated.place(&mut m, 12, Want::default()).unwrap()),
            [(2, 8), (3, 4)]
        );
        assert_eq!(m.total_free(), 32 - 23);
        // 9 free GPUs in total but no idle node: a 9-GPU job does not fit.
        assert_eq!(Consolidated.place(&mut m, 9, Want::default()), None);
        assert_eq!(m.total_free(), 9, "a failed placement takes nothing");
    }

    #[test]
    fn best_fit_prefers_the_tightest_node() {
        let mut m = map("3x8");
        Consolidated.place(&mut m, 5, Want::default()).unwrap(); // node 0: 3 free
        Consolidated.place(&mut m, 7, Want::default()).unwrap(); // node 1: 1 free
        assert_eq!(
            nodes(&BestFit.place(&mut m, 1, Want::default()).unwrap()),
            [(1, 1)]
        );
        assert_eq!(
            nodes(&BestFit.place(&mut m, 2, Want::default()).unwrap()),
            [(0, 2)]
        );
    }

    #[test]
    fn spread_puts_one_gpu_per_node_while_it_can() {
        let mut m = map("4x8");
        assert_eq!(
            nodes(&Spread.place(&mut m, 6, Want::default()).unwrap()),
            [(0, 2), (1, 2), (2, 1), (3, 1)]
        );
    }

    #[test]
    fn pool_ignores_topology_but_not_switch_totals() {
        let mut m = map("2x4x2");
        for _ in 0..4 {
            Consolidated.place(&mut m, 1, Want::default()).unwrap();
        }
        // 12 free GPUs scattered; consolidated cannot place 6 on one switch (it can: switch 1 is idle).
        assert!(Consolidated
            .place(&mut m.clone(), 6, Want::default())
            .is_some());
        assert_eq!(Pool.place(&mut m, 12, Want::default()).unwrap().gpus(), 12);
        assert_eq!(m.total_free(), 0);
    }

    #[test]
    fn topology_splits_large_jobs_under_the_fewest_switches() {
        // 2 switches x 3 nodes x 8 GPUs.
        let mut m = map("2x3x8");
        // A job of one node goes to the tightest node anywhere.
        m.take(NodeId(4), 5);
        assert_eq!(
            nodes(&Topology.place(&mut m, 2, Want::default()).unwrap()),
            [(4, 2)]
        );
        // Switch 0 has three idle nodes: 24 GPUs as 3 x 8 there.
        assert_eq!(
            nodes(&Topology.place(&mut m, 24, Want::default()).unwrap()),
            [(0, 8), (1, 8), (2, 8)]
        );
        // 16 more: switch 1 has two idle nodes (3, 5): one switch.
        assert_eq!(
            nodes(&Topology.place(&mut m, 16, Want::default()).unwrap()),
            [(3, 8), (5, 8)]
        );
        assert_eq!(m.total_free(), 1);
        // Across switches when no switch has room: 2 x 4 on nodes of switch 0 and 1.
        let mut m = map("2x2x8");
        for n in 0..4 {
            m.take(NodeId(n), if n % 2 == 0 { 8 } else { 4 });
        }
        assert_eq!(
            nodes(&Topology.place(&mut m, 8, Want::default()).unwrap()),
            [(1, 4), (3, 4)]
        );
        assert_eq!(
            Consolidated.place(&mut m, 8, Want::default()),
            None,
            "one switch only"
        );
    }

    #[test]
    fn model_constraints_are_respected() {
        let mut c = Cluster::parse_shape("2x4", "V100").unwrap();
        for g in &mut c.nodes[1].gpus {
            g.model = "A100-80GB".into();
        }
        let mut m = FreeMap::new(&c);
        assert_eq!(
            nodes(
                &Consolidated
                    .place(&mut m, 2, Want::model(Some("A100")))
                    .unwrap()
            ),
            [(1, 2)]
        );
        assert_eq!(
            Consolidated.place(&mut m, 3, Want::model(Some("H100"))),
            None
        );
    }
}
