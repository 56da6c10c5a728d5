//! Which free GPUs of a node a job of `k` GPUs gets: those whose worst pairwise link is
//! best (all on one NVSwitch, or behind one PCIe switch, rather than across sockets),
//! then the ones with the best links overall (the fewest PCIe roots crossed), then the
//! coolest, least loaded ones ([`GpuLoad::key`], summed over the set), then the lowest
//! indices. A node that reports no links and no load gets its lowest free indices, as
//! before links were known.

use std::collections::BTreeMap;

use super::node::{Link, NodeTopology};

/// A GPU's latest utilisation and temperature (the agent's samples), for the tie-break.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuLoad {
    pub util_pct: u32,
    pub temp_c: u32,
}

impl GpuLoad {
    /// Smaller is better: utilisation in steps of 10 points, plus temperature in steps
    /// of 5 C, so jitter between samples does not reorder GPUs that are alike. A GPU
    /// without a sample counts as idle and cool (0).
    pub fn key(&self) -> u32 {
        self.util_pct / 10 + self.temp_c / 5
    }
}

/// GPU index → its latest load; empty when the node sent no samples.
pub type Loads = BTreeMap<u32, GpuLoad>;

fn load_key(g: u32, loads: &Loads) -> u32 {
    loads.get(&g).map_or(0, GpuLoad::key)
}

/// How good a set of GPUs is: smaller is better, compared field by field.
type Score = (Link, u32, u32, Vec<u32>);

fn score(set: &[u32], topo: &NodeTopology, loads: &Loads) -> Score {
    let mut worst = Link::NvSwitch;
    let mut sum = 0u32;
    for (i, &a) in set.iter().enumerate() {
        for &b in &set[i + 1..] {
            let l = topo.link(a, b);
            worst = worst.max(l);
            sum += l as u32;
        }
    }
    let load = set.iter().map(|&g| load_key(g, loads)).sum();
    (worst, sum, load, set.to_vec())
}

/// Sets past this many are not all tried: each GPU seeds a greedy set instead.
const EXHAUSTIVE: u64 = 5_000;

/// `k` of the `free` GPU indices (ascending) by the rule of the module documentation;
/// `None` when fewer than `k` are free. The result is ascending.
pub fn pick(free: &[u32], k: usize, topo: &NodeTopology, loads: &Loads) -> Option<Vec<u32>> {
    if free.len() < k {
        return None;
    }
    let mut free = free.to_vec();
    free.sort_unstable();
    if k == free.len() {
        return Some(free);
    }
    if k <= 1 || topo.links.is_empty() {
        // Links cannot differ: the least loaded, then the lowest indices.
        free.sort_by_key(|&g| (load_key(g, loads), g));
        let mut set = free[..k].to_vec();
        set.sort_unstable();
        return Some(set);
    }
    if combinations(free.len() as u64, k as u64) <= EXHAUSTIVE {
        let mut best: Option<Score> = None;
        let mut idx: Vec<usize> = (0..k).collect();
        loop {
            let set: Vec<u32> = idx.iter().map(|&i| free[i]).collect();
            let s = score(&set, topo, loads);
            if best.as_ref().is_none_or(|b| s < *b) {
                best = Some(s);
            }
            if !next_combination(&mut idx, free.len()) {
                break;
            }
        }
        return best.map(|b| b.3);
    }
    // Greedy from each seed: add the GPU whose worst link to the set is best.
    let mut best: Option<Score> = None;
    for &seed in &free {
        let mut set = vec![seed];
        while set.len() < k {
            let next = free
                .iter()
                .filter(|g| !set.contains(g))
                .min_by_key(|&&g| {
                    let worst = set.iter().map(|&s| topo.link(s, g)).max();
                    let sum: u32 = set.iter().map(|&s| topo.link(s, g) as u32).sum();
                    (worst, sum, load_key(g, loads), g)
                })
                .copied()?;
            set.push(next);
        }
        set.sort_unstable();
        let s = score(&set, topo, loads);
        if best.as_ref().is_none_or(|b| s < *b) {
            best = Some(s);
        }
    }
    best.map(|b| b.3)
}

fn combinations(n: u64, k: u64) -> u64 {
    let k = k.min(n - k);
    let mut c: u64 = 1;
    for i in 0..k {
        c = c.saturating_mul(n - i) / (i + 1);
        if c > EXHAUSTIVE {
            return c;
        }
    }
    c
}

/// The next `k`-combination of `0..n` in lexicographic order; false after the last.
fn next_combination(idx: &mut [usize], n: usize) -> bool {
    let k = idx.len();
    let mut i = k;
    while i > 0 {
        i -= 1;
        if idx[i] < n - k + i {
            idx[i] += 1;
            for j in i + 1..k {
                idx[j] = idx[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// 8 GPUs on one NVSwitch fabric.
    fn dgx() -> NodeTopology {
        let mut links = BTreeMap::new();
        for a in 0..8 {
            for b in a + 1..8 {
                links.insert((a, b), Link::NvSwitch);
            }
        }
        NodeTopology {
            links,
            ..Default::default()
        }
    }

    /// 8 GPUs, two sockets; per socket two PCIe switches of two GPUs: {0,1} {2,3} on
    /// socket 0, {4,5} {6,7} on socket 1.
    fn pcie() -> NodeTopology {
        let mut links = BTreeMap::new();
        for a in 0..8u32 {
            for b in a + 1..8 {
                let kind = if a / 2 == b / 2 {
                    Link::PcieSwitch
                } else if a / 4 == b / 4 {
                    Link::HostBridge
                } else {
                    Link::System
                };
                links.insert((a, b), kind);
            }
        }
        NodeTopology {
            links,
            ..Default::default()
        }
    }

    #[test]
    fn two_gpus_on_the_pcie_box_come_from_one_pcie_switch() {
        // 1, 2 and 5, 6 free beside 4 (socket 1) and 7: the pair {4, 5} shares a switch.
        let free = [1, 2, 4, 5, 7];
        assert_eq!(pick(&free, 2, &pcie(), &Loads::new()).unwrap(), [4, 5]);
        // Four GPUs: one socket (0-3) over the lowest indices across sockets.
        let free = [0, 1, 2, 3, 4, 6];
        assert_eq!(
            pick(&free, 4, &pcie(), &Loads::new()).unwrap(),
            [0, 1, 2, 3]
        );
        // No pair under one switch: the pair under one host bridge, not across sockets.
        let free = [0, 2, 5, 7];
        assert_eq!(pick(&free, 2, &pcie(), &Loads::new()).unwrap(), [0, 2]);
        let free = [1, 4, 6];
        assert_eq!(pick(&free, 2, &pcie(), &Loads::new()).unwrap(), [4, 6]);
    }

    #[test]
    fn a_dgx_or_an_unknown_box_gives_the_lowest_free_indices() {
        let free = [1, 3, 4, 6, 7];
        assert_eq!(pick(&free, 3, &dgx(), &Loads::new()).unwrap(), [1, 3, 4]);
        assert_eq!(
            pick(&free, 3, &NodeTopology::default(), &Loads::new()).unwrap(),
            [1, 3, 4]
        );
        assert_eq!(pick(&free, 6, &dgx(), &Loads::new()), None);
    }

    #[test]
    fn large_nodes_are_searched_greedily_with_the_same_preference() {
        // 32 GPUs in groups of 4 under one PCIe switch; every other pair System.
        let mut links = BTreeMap::new();
        for a in 0..32u32 {
            for b in a + 1..32 {
                let kind = if a / 4 == b / 4 {
                    Link::PcieSwitch
                } else {
                    Link::System
                };
                links.insert((a, b), kind);
            }
        }
        let topo = NodeTopology {
            links,
            ..Default::default()
        };
        // Groups 0-3 and 4-7 partly taken; group 8-11 is whole.
        let free: Vec<u32> = [1, 2, 3, 5, 6, 7].into_iter().chain(8..32).collect();
        assert!(combinations(free.len() as u64, 4) > EXHAUSTIVE);
        assert_eq!(
            pick(&free, 4, &topo, &Loads::new()).unwrap(),
            [8, 9, 10, 11]
        );
        assert_eq!(pick(&free, 3, &topo, &Loads::new()).unwrap(), [1, 2, 3]);
    }

    #[test]
    fn among_equally_linked_sets_the_coolest_least_loaded_gpus_win() {
        let load = |util_pct, temp_c| GpuLoad { util_pct, temp_c };
        // GPU 0 hot, 1 busy: an unlinked box gives 2 and 3, not the lowest indices.
        let loads = Loads::from([(0, load(0, 85)), (1, load(90, 40)), (2, load(0, 40))]);
        let free = [0, 1, 2, 3];
        assert_eq!(
            pick(&free, 2, &NodeTopology::default(), &loads).unwrap(),
            [2, 3]
        );
        assert_eq!(pick(&free, 1, &dgx(), &loads).unwrap(), [3]);
        // Jitter (41 vs 43 C, 1 vs 8 %) does not reorder: the lowest index.
        let alike = Loads::from([(0, load(8, 43)), (1, load(1, 41))]);
        assert_eq!(pick(&[0, 1], 1, &dgx(), &alike).unwrap(), [0]);
        // Links first: on the PCIe box {4, 5} share a switch and win although 4 is hot;
        // between two equal pairs, the cooler one.
        let hot4 = Loads::from([(4, load(0, 90))]);
        assert_eq!(pick(&[1, 2, 4, 5, 7], 2, &pcie(), &hot4).unwrap(), [4, 5]);
        let hot0 = Loads::from([(0, load(100, 80))]);
        assert_eq!(pick(&[0, 1, 2, 3], 2, &pcie(), &hot0).unwrap(), [2, 3]);
        // Every DGX pair is alike: the coolest GPUs of the eight.
        let warm = Loads::from([(0, load(50, 70)), (1, load(50, 70))]);
        assert_eq!(pick(&[0, 1, 2, 3], 2, &dgx(), &warm).unwrap(), [2, 3]);
    }
}
