//! Which cores a part is pinned to: as many as it asked CPUs for (rounded up), free
//! ones first, those near its GPUs (NVML's CPU affinity) before others; when every
//! core is taken, the least shared ones.

use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct CorePool {
    all: Vec<u32>,
    /// Each GPU's nearby cores (empty: no affinity known).
    near: BTreeMap<u32, Vec<u32>>,
    /// The cores each running part holds, by its cgroup name.
    taken: Mutex<BTreeMap<String, Vec<u32>>>,
}

impl CorePool {
    pub fn new(all: Vec<u32>, near: BTreeMap<u32, Vec<u32>>) -> CorePool {
        CorePool {
            all,
            near,
            taken: Mutex::default(),
        }
    }

    /// Picks `count` cores for part `name` on `gpus` and holds them until
    /// [`CorePool::release`]. Deterministic: ties go to the lower core.
    pub fn pick(&self, name: &str, count: usize, gpus: &[u32]) -> Vec<u32> {
        let mut taken = self.taken.lock().unwrap_or_else(|p| p.into_inner());
        let mut users: BTreeMap<u32, usize> = self.all.iter().map(|&c| (c, 0)).collect();
        for cores in taken.values() {
            for c in cores {
                if let Some(n) = users.get_mut(c) {
                    *n += 1;
                }
            }
        }
        let near: Vec<u32> = gpus
            .iter()
            .filter_map(|g| self.near.get(g))
            .flatten()
            .copied()
            .collect();
        let mut order: Vec<u32> = self.all.clone();
        order.sort_by_key(|c| (users[c], !near.contains(c), *c));
        let mut chosen: Vec<u32> = order.into_iter().take(count.max(1)).collect();
        chosen.sort_unstable();
        taken.insert(name.to_string(), chosen.clone());
        chosen
    }

    pub fn release(&self, name: &str) {
        self.taken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(name);
    }

    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }
}

/// The fake backend's affinity: the GPUs split over two sockets, each socket half the
/// cores, as a two-socket 8-GPU server is wired (GPUs 0-3 near the first half).
pub fn two_socket_model(gpus: &[u32], cores: &[u32]) -> BTreeMap<u32, Vec<u32>> {
    if cores.len() < 2 || gpus.is_empty() {
        return BTreeMap::new();
    }
    let half = cores.len() / 2;
    let (first, second) = cores.split_at(half);
    let gpu_half = gpus.len().div_ceil(2);
    gpus.iter()
        .enumerate()
        .map(|(i, &g)| {
            (
                g,
                if i < gpu_half {
                    first.to_vec()
                } else {
                    second.to_vec()
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_cores_near_the_gpus_first_then_the_least_shared() {
        let cores: Vec<u32> = (0..8).collect();
        let pool = CorePool::new(cores.clone(), two_socket_model(&[0, 1, 2, 3], &cores));
        // GPU 2 sits on the second socket.
        assert_eq!(pool.pick("a", 2, &[2]), vec![4, 5]);
        assert_eq!(pool.pick("b", 3, &[3]), vec![0, 6, 7]);
        // Nothing near GPU 0 is taken but core 0.
        assert_eq!(pool.pick("c", 2, &[0]), vec![1, 2]);
        pool.release("a");
        assert_eq!(pool.pick("d", 2, &[]), vec![3, 4]);
        // Every core taken: the least shared, lowest first.
        assert_eq!(pool.pick("e", 8, &[]).len(), 8);
        assert_eq!(pool.pick("f", 1, &[]), vec![5]);
        // A part asking for a fraction of a CPU still gets a core.
        assert_eq!(pool.pick("g", 0, &[]).len(), 1);
    }
}
