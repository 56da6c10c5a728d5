//! Scarcity weights for `fgd-fit`: a typical pod type counts more in the fragmentation
//! measure as the cluster's room for it runs out.
//!
//! FGD weighs each typical type by how often it arrives, whatever the cluster's state. But
//! losing a place for a type matters only when few are left: early on, a whole-GPU type
//! has thousands of hosts, near the end a handful; and when pods are tied to a GPU model
//! (the gpuspec lists), that model's room can run out long before the rest. So each type's
//! weight is its arrival share times `slots at start / slots now` (how many pods of that
//! type the cluster could still host, node by node), renormalised so that the weights keep
//! their sum. The weights are refreshed every [`EPOCH`] placements rather than after each,
//! since a change drops the memo of node fragmentation.
//!
//! The shares themselves are first scaled by how exclusive each type's hosts are
//! ([`exclusive`]): `slots at start / slots now` only rises once a type's few hosts are
//! being taken, by when most are gone. On the multigpu lists 8-GPU pods that ask for 120
//! CPUs and 625-720 GiB fit only on the 39 largest nodes (312 of 6,212 GPUs); at their
//! pod share (under 1%) an idle one of those nodes looked as cheap as any other, and
//! one-GPU pods took most of them before half the load had arrived.

use super::cluster::{PodReq, ShareCluster};

/// Placements between two refreshes of the weights.
pub const EPOCH: u32 = 128;

/// How many pods of each type the cluster could host now, each node counted on its own
/// (CPU, memory and GPUs); 0 for types that need no GPU (their fragmentation does not
/// depend on where a pod goes).
pub fn slots(types: &[(PodReq, f64)], cluster: &ShareCluster) -> Vec<f64> {
    types
        .iter()
        .map(|(m, _)| {
            if !m.needs_gpu() {
                return 0.0;
            }
            let mut total = 0u64;
            for n in &cluster.nodes {
                if n.gpu_free.is_empty() || !m.accepts(n.model) || n.cpu_left < m.cpu {
                    continue;
                }
                let by_cpu = u64::from(n.cpu_left.checked_div(m.cpu).unwrap_or(u32::MAX));
                let by_mem = n.mem_left.checked_div(m.mem).unwrap_or(u64::MAX);
                let by_gpu = if m.is_share() {
                    n.gpu_free
                        .iter()
                        .map(|&f| u64::from(f / m.milli))
                        .sum::<u64>()
                } else {
                    n.gpu_free.iter().filter(|&&f| f >= m.milli).count() as u64 / u64::from(m.num)
                };
                total += by_cpu.min(by_mem).min(by_gpu);
            }
            total as f64
        })
        .collect()
}

/// GPUs (counted whole) on the nodes that can host at least one pod of each type now (its
/// CPU, memory, model and GPUs); 0 for types that need no GPU.
pub fn room(types: &[(PodReq, f64)], cluster: &ShareCluster) -> Vec<f64> {
    types
        .iter()
        .map(|(m, _)| {
            if !m.needs_gpu() {
                return 0.0;
            }
            let hosts = cluster.nodes.iter().filter(|n| {
                !n.gpu_free.is_empty()
                    && m.accepts(n.model)
                    && n.cpu_left >= m.cpu
                    && n.mem_left >= m.mem
                    && n.gpu_free.iter().filter(|&&f| f >= m.milli).count() as u32 >= m.num
            });
            hosts.map(|n| n.gpu_free.len() as f64).sum()
        })
        .collect()
}

/// The shares of the typical types, each scaled by `sqrt(cluster GPUs / room)` (the
/// [`room`] of the idle cluster) and renormalised to the shares' sum: a type that only a
/// small part of the cluster can host counts more, since every one of those hosts that
/// other pods take is lost to it. Types without room (CPU-only, or nowhere to go) keep
/// their share before the renormalisation.
pub fn exclusive(shares: &[f64], room: &[f64], gpus: f64) -> Vec<f64> {
    let mut w: Vec<f64> = shares
        .iter()
        .zip(room)
        .map(|(&p, &r)| if r > 0.0 { p * (gpus / r).sqrt() } else { p })
        .collect();
    let (want, got): (f64, f64) = (shares.iter().sum(), w.iter().sum());
    if got > 0.0 {
        for x in &mut w {
            *x *= want / got;
        }
    }
    w
}

/// Weights: `share x slots at start / slots now` (at least one slot counted), scaled to
/// the sum of the shares. Types with no slot at start keep their share.
pub fn weights(shares: &[f64], start: &[f64], now: &[f64]) -> Vec<f64> {
    let mut w: Vec<f64> = shares
        .iter()
        .zip(start.iter().zip(now))
        .map(|(&p, (&s0, &s))| if s0 > 0.0 { p * s0 / s.max(1.0) } else { p })
        .collect();
    let (want, got): (f64, f64) = (shares.iter().sum(), w.iter().sum());
    if got > 0.0 {
        for x in &mut w {
            *x *= want / got;
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharing::{ShareNode, SharePod};

    #[test]
    fn the_type_whose_room_shrinks_gains_weight() {
        let node = |n: &str| ShareNode {
            name: n.into(),
            cpu_milli: 32_000,
            mem_mib: 1 << 16,
            gpus: 2,
            model: "T4".into(),
        };
        let mut c = ShareCluster::new(&[node("a"), node("b")]).unwrap();
        let pod = |num, milli| SharePod {
            name: String::new(),
            cpu_milli: 1000,
            mem_mib: 1024,
            num_gpu: num,
            gpu_milli: milli,
            models: vec![],
        };
        let types = vec![
            (c.compile(&pod(1, 500)).unwrap(), 0.5),
            (c.compile(&pod(2, 1000)).unwrap(), 0.5),
        ];
        let start = slots(&types, &c);
        assert_eq!(start, vec![8.0, 2.0]);
        // A half GPU on node a: the two-GPU type has one host left, the half type 7 slots.
        let half = c.compile(&pod(1, 500)).unwrap();
        c.apply(&half, crate::sharing::Choice { node: 0, gpus: 1 });
        let now = slots(&types, &c);
        assert_eq!(now, vec![7.0, 1.0]);
        let w = weights(&[0.5, 0.5], &start, &now);
        assert!(w[1] > w[0]);
        assert!((w[0] + w[1] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_type_few_nodes_can_host_counts_more() {
        let node = |n: &str, gpus| ShareNode {
            name: n.into(),
            cpu_milli: 32_000,
            mem_mib: 1 << 16,
            gpus,
            model: "T4".into(),
        };
        // 3 nodes of 2 GPUs and one of 8: only the last can host the 8-GPU type.
        let c =
            ShareCluster::new(&[node("a", 2), node("b", 2), node("c", 2), node("d", 8)]).unwrap();
        let pod = |num| SharePod {
            name: String::new(),
            cpu_milli: 1000,
            mem_mib: 1024,
            num_gpu: num,
            gpu_milli: 1000,
            models: vec![],
        };
        let types = vec![
            (c.compile(&pod(1)).unwrap(), 0.9),
            (c.compile(&pod(8)).unwrap(), 0.1),
            (c.compile(&pod(0)).unwrap(), 0.1),
        ];
        let room = room(&types, &c);
        assert_eq!(room, vec![14.0, 8.0, 0.0]);
        let w = exclusive(&[0.9, 0.1, 0.1], &room, 14.0);
        // sqrt(14/8) against 1, before the renormalisation to the sum 1.1.
        assert!((w[1] / w[0] - (14.0f64 / 8.0).sqrt() / 9.0).abs() < 1e-12);
        assert!((w[2] / w[0] - 1.0 / 9.0).abs() < 1e-12);
        assert!((w.iter().sum::<f64>() - 1.1).abs() < 1e-12);
    }
}
