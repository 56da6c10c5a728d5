//! Gangs: one job on N nodes with G GPUs each, placed all-or-nothing as one placement
//! whose parts are in rank order (part 0 is the master, `NODE_RANK` 0).
//!
//! The node choice, one rule for the live cluster and the simulator's `topology`
//! placement ([`choose_nodes`]):
//! 1. nodes under one switch if any switch has N candidates;
//! 2. else the fewest switches, preferring switches of one rack;
//! 3. among equals, the tightest fit (fewest free GPUs left on the chosen nodes), then
//!    the lowest node (the live cluster orders nodes by name).
//!
//! A candidate is a node with G free GPUs of the job's model (a prefix, if given) and,
//! where the scheduler reserves them, the job's CPUs, memory and generic resources (the
//! job's ask holds on every node). Unless the job allows mixed models, every node of a
//! gang has the same GPU model. Nodes whose agent gave no switch count as a switch of
//! their own, so an unlabelled cluster simply gets the tightest fit.

use std::collections::BTreeMap;

use crate::freemap::{FreeMap, Location, Want};
use crate::ids::NodeId;
use crate::job::JobSpec;
use crate::room::{self, Room};

/// How a job's GPUs spread over nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gang {
    pub shape: GangShape,
    /// Nodes may differ in GPU model (still within the job's model prefix).
    pub mixed_models: bool,
}

/// The node count and GPUs per node of a gang.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GangShape {
    /// Exactly `nodes` nodes with `per_node` GPUs each.
    Nodes { nodes: u32, per_node: u32 },
    /// The job's GPUs in equal parts: per-node `g` among the divisors of the total,
    /// largest first (fewest nodes), with `tasks_per_node` dividing `g`.
    Split { tasks_per_node: Option<u32> },
}

impl Gang {
    /// The (nodes, GPUs per node) shapes to try for `gpus` GPUs in all, fewest nodes
    /// first.
    pub fn shapes(&self, gpus: u32) -> Vec<(u32, u32)> {
        match self.shape {
            GangShape::Nodes { nodes, per_node } => vec![(nodes, per_node)],
            GangShape::Split { tasks_per_node } => (1..=gpus)
                .rev()
                .filter(|g| {
                    gpus.is_multiple_of(*g)
                        && tasks_per_node.is_none_or(|k| k > 0 && g.is_multiple_of(k))
                })
                .map(|g| (gpus / g, g))
                .collect(),
        }
    }
}

/// A node a gang part could go on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub node: NodeId,
    /// Free GPUs it would have left.
    pub left: u32,
    pub location: Location,
}

/// How good a choice of nodes is: smaller is better, compared field by field.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Score {
    pub switches: usize,
    pub racks: usize,
    pub left: u64,
    pub first: NodeId,
}

/// A rack, or (for a switch whose rack nobody named) the switch alone.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum RackKey {
    Rack(u32),
    Alone(u32),
}

fn rack_key(l: Location) -> RackKey {
    l.rack.map_or(RackKey::Alone(l.switch), RackKey::Rack)
}

/// `n` of `candidates` by the rule of the module documentation, in rank order (rack,
/// switch, node), with the choice's score; `None` when fewer than `n` are given.
pub fn choose_nodes(candidates: &[Candidate], n: usize) -> Option<(Score, Vec<NodeId>)> {
    if n == 0 || candidates.len() < n {
        return None;
    }
    // Candidates grouped by switch (slices of one sorted list: no allocation per
    // switch, which matters on large unlabelled clusters), tightest first in each.
    let mut sorted = candidates.to_vec();
    sorted.sort_unstable_by_key(|c| (c.location.switch, c.left, c.node));
    let by_switch: Vec<&[Candidate]> = sorted
        .chunk_by(|a, b| a.location.switch == b.location.switch)
        .collect();
    let score_of = |picked: &[Candidate]| {
        let mut switches: Vec<u32> = picked.iter().map(|c| c.location.switch).collect();
        switches.sort_unstable();
        switches.dedup();
        let mut racks: Vec<RackKey> = picked.iter().map(|c| rack_key(c.location)).collect();
        racks.sort_unstable();
        racks.dedup();
        Score {
            switches: switches.len(),
            racks: racks.len(),
            left: picked.iter().map(|c| u64::from(c.left)).sum(),
            first: picked.iter().map(|c| c.node).min().unwrap_or(NodeId(0)),
        }
    };
    let mut best: Option<(Score, Vec<Candidate>)> = None;
    let consider = |best: &mut Option<(Score, Vec<Candidate>)>, picked: Vec<Candidate>| {
        let s = score_of(&picked);
        if best.as_ref().is_none_or(|(b, _)| s < *b) {
            *best = Some((s, picked));
        }
    };
    // 1. One switch.
    for v in by_switch.iter().filter(|v| v.len() >= n) {
        consider(&mut best, v[..n].to_vec());
    }
    // 2. The fewest switches of one rack, else of any racks.
    if best.is_none() {
        let mut racks: Vec<(RackKey, &[Candidate])> = by_switch
            .iter()
            .map(|v| (rack_key(v[0].location), *v))
            .collect();
        racks.sort_by_key(|r| r.0);
        for rack in racks.chunk_by(|a, b| a.0 == b.0) {
            if rack.iter().map(|r| r.1.len()).sum::<usize>() < n {
                continue;
            }
            let switches: Vec<&[Candidate]> = rack.iter().map(|r| r.1).collect();
            if let Some(p) = largest_first(&switches, n) {
                consider(&mut best, p);
            }
        }
        if best.is_none() {
            consider(&mut best, largest_first(&by_switch, n)?);
        }
    }
    let (score, mut picked) = best?;
    picked.sort_by_key(|c| (rack_key(c.location), c.location.switch, c.node));
    Some((score, picked.into_iter().map(|c| c.node).collect()))
}

/// `n` candidates from the fewest of `switches` (each sorted tightest first): the
/// largest switches first, the tightest nodes of each.
fn largest_first(switches: &[&[Candidate]], n: usize) -> Option<Vec<Candidate>> {
    if switches.iter().map(|v| v.len()).sum::<usize>() < n {
        return None;
    }
    // Largest first (the fewest switches); among switches of one size, the tightest.
    let mut order: Vec<&[Candidate]> = switches.to_vec();
    order.sort_by_key(|v| {
        let left: u64 = v.iter().take(n).map(|c| u64::from(c.left)).sum();
        (std::cmp::Reverse(v.len()), left, v[0].node)
    });
    let mut picked = Vec::with_capacity(n);
    for v in order {
        let need = n - picked.len();
        if need == 0 {
            break;
        }
        picked.extend_from_slice(&v[..need.min(v.len())]);
    }
    Some(picked)
}

/// Where gang `spec` goes on `map` now (and `room`, where the scheduler reserves it): a
/// part of G GPUs on each of N nodes, in rank order; `None` when no shape fits. Takes
/// nothing: the caller does.
pub fn place(
    map: &FreeMap,
    room: Option<&Room>,
    spec: &JobSpec,
    gang: &Gang,
) -> Option<Vec<(NodeId, u32)>> {
    spec.wants()
        .find_map(|want| place_in(map, room, spec, gang, want))
}

/// [`place`] on the nodes `want` accepts (one of the job's node sets).
pub fn place_in(
    map: &FreeMap,
    room: Option<&Room>,
    spec: &JobSpec,
    gang: &Gang,
    want: Want<'_>,
) -> Option<Vec<(NodeId, u32)>> {
    let room = room.filter(|_| room::asks(spec)).map(|r| (r, spec));
    let shapes = gang.shapes(spec.gpus);
    place_shapes(map, room, want, gang.mixed_models, &shapes)
}

/// `gpus` GPUs in equal whole parts on the fewest nodes that hold them now (the
/// simulator's `topology` placement; its nodes may mix models, as its other strategies'
/// do). Takes nothing.
pub fn place_split(map: &FreeMap, gpus: u32, want: Want<'_>) -> Option<Vec<(NodeId, u32)>> {
    let split = Gang {
        shape: GangShape::Split {
            tasks_per_node: None,
        },
        mixed_models: true,
    };
    place_shapes(map, None, want, true, &split.shapes(gpus))
}

fn place_shapes(
    map: &FreeMap,
    room: Option<(&Room, &JobSpec)>,
    want: Want<'_>,
    mixed_models: bool,
    shapes: &[(u32, u32)],
) -> Option<Vec<(NodeId, u32)>> {
    for &(n, g) in shapes {
        if g == 0 || g > map.max_per_node() || u64::from(n) * u64::from(g) > map.total_free() {
            continue;
        }
        // Candidates by GPU model (one group when models may mix).
        let mut groups: BTreeMap<u16, Vec<Candidate>> = BTreeMap::new();
        for i in 0..map.nodes() {
            let node = NodeId(i as u32);
            let free = map.free(node);
            if free < g || !map.admits(i, want) || room.is_some_and(|(r, spec)| !r.fits(node, spec))
            {
                continue;
            }
            let key = if mixed_models { 0 } else { map.model_of(i) };
            groups.entry(key).or_default().push(Candidate {
                node,
                left: free - g,
                location: map.location(i),
            });
        }
        let best = groups
            .values()
            .filter_map(|c| choose_nodes(c, n as usize))
            .min_by(|a, b| a.0.cmp(&b.0));
        if let Some((_, nodes)) = best {
            return Some(nodes.into_iter().map(|x| (x, g)).collect());
        }
    }
    None
}

#[cfg(test)]
#[path = "gang_tests.rs"]
mod tests;
