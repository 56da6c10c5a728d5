//! The order in which pods arrive and the order that breaks ties between nodes, drawn as
//! the FGD authors' simulator draws them from Go's global `math/rand` seeded with the
//! seed:
//!
//! 1. one `Int()` (the peer logs it);
//! 2. the pods sorted by name, then `Shuffle`d;
//! 3. "tuning": pods drawn with `Intn` from the original list (file order) and appended
//!    while the requested GPU total stays within `ratio` x the cluster's GPUs. The peer
//!    tests the bound with the pod's per-GPU thousandths but adds its total, and stops
//!    at the first pod that would cross it; both kept here, since they decide the count
//!    (10,866 pods for the default list at 1.3);
//! 4. the nodes sorted by name, and `Perm(nodes)` gives each its tie-break rank (the peer
//!    prefixes node names with it, and ties go to the smallest name).

use gpusched_core::sharing::{ShareNode, SharePod};

use super::gorand::GoRand;

/// Arrival order (indices into the pod list, repeats allowed) and node ranks (by index
/// into the node list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Draw {
    pub order: Vec<usize>,
    pub node_rank: Vec<u32>,
}

fn total_milli(p: &SharePod) -> u64 {
    u64::from(p.num_gpu) * u64::from(p.gpu_milli)
}

pub fn draw(pods: &[SharePod], nodes: &[ShareNode], seed: i64, ratio: f64) -> Draw {
    let mut rng = GoRand::new(seed);
    let _ = rng.int();
    let mut order: Vec<usize> = (0..pods.len()).collect();
    order.sort_by(|&a, &b| pods[a].name.cmp(&pods[b].name));
    rng.shuffle(&mut order);

    let capacity: u64 = nodes.iter().map(|n| u64::from(n.gpus) * 1000).sum();
    let target = ratio * capacity as f64;
    let mut requested: u64 = pods.iter().map(total_milli).sum();
    if ratio > 0.0 && (requested as f64) < target && !pods.is_empty() {
        loop {
            let i = rng.intn(pods.len());
            if (requested + u64::from(pods[i].gpu_milli)) as f64 > target {
                break;
            }
            requested += total_milli(&pods[i]);
            order.push(i);
        }
    } else if ratio > 0.0 {
        while requested as f64 > target && !order.is_empty() {
            let k = rng.intn(order.len());
            requested -= total_milli(&pods[order.remove(k)]);
        }
    }

    let mut by_name: Vec<usize> = (0..nodes.len()).collect();
    by_name.sort_by(|&a, &b| nodes[a].name.cmp(&nodes[b].name));
    let perm = rng.perm(nodes.len());
    let mut node_rank = vec![0u32; nodes.len()];
    for (sorted_pos, &node) in by_name.iter().enumerate() {
        node_rank[node] = perm[sorted_pos] as u32;
    }
    Draw { order, node_rank }
}
