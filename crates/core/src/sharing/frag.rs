//! Fragmentation of a node, measured against the typical pods (FGD, ATC'23, section 4).
//!
//! For one typical pod type `m`, the GPU capacity of node `n` that `m` cannot use:
//! - `m` needs no GPU, or `n`'s model is not allowed for `m`: all idle GPU capacity;
//! - `n` can host `m` (enough CPU, and `num` GPUs each with at least `milli` free): the
//!   free capacity of the GPUs that have less than `milli` free;
//! - otherwise: all idle GPU capacity.
//!
//! `F_n = sum over m of share_m x frag_n(m)`. Memory is not part of the measure.
//!
//! The sum is accumulated exactly as the authors' simulator does: one bucket per outcome
//! (lack of both, lack of GPU, satisfied, lack of CPU, CPU-only satisfied, CPU-only
//! lacking, no access), each filled in typical-pod order, then the buckets other than
//! "satisfied" added in that order. FGD truncates its score to an integer, so this
//! order decides ties.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::cluster::{NodeState, PodReq};
use super::typical::TypicalPods;
use super::{ShareCluster, MILLI};

const LACK_BOTH: usize = 0;
const LACK_GPU: usize = 1;
const SATISFIED: usize = 2;
const LACK_CPU: usize = 3;
const CPU_OK: usize = 4;
const CPU_LACK: usize = 5;
const NO_ACCESS: usize = 6;

/// The typical pods and a memo of node fragmentation by node shape.
pub struct FragModel {
    typical: Vec<(PodReq, f64)>,
    /// Distinct CPU requests of the typical pods, ascending: a node's CPU only matters
    /// through how many of them it can still satisfy.
    cpu_steps: Vec<u32>,
    memo: HashMap<u128, f64, BuildHasherDefault<MixHasher>>,
    /// Count only the GPU capacity a type can use with the node's CPU and memory (see
    /// [`FragModel::resource_limited`]); FGD itself does not.
    resource_limited: bool,
    /// With `resource_limited`, by the number of wholly free GPUs `g` (0..=8): the CPU and
    /// memory amounts at which the measure can change (the typical CPU requests, and 1..=g
    /// times each one-GPU type's CPU and memory).
    cpu_points: Vec<Vec<u32>>,
    mem_points: Vec<Vec<u64>>,
}

impl FragModel {
    pub fn new(typical: &TypicalPods, cluster: &ShareCluster) -> Self {
        let typical = typical.compile(cluster);
        let mut cpu_steps: Vec<u32> = typical.iter().map(|(p, _)| p.cpu).collect();
        cpu_steps.sort_unstable();
        cpu_steps.dedup();
        FragModel {
            typical,
            cpu_steps,
            memo: HashMap::default(),
            resource_limited: false,
            cpu_points: Vec::new(),
            mem_points: Vec::new(),
        }
    }

    /// The fragmentation of `fgd-fit`: a type that the node can host can use at most as
    /// many of its GPUs as the node's CPU and memory let it run pods of that type.
    pub fn resource_limited(typical: &TypicalPods, cluster: &ShareCluster) -> Self {
        let mut f = Self::new(typical, cluster);
        f.resource_limited = true;
        for g in 0..=8u32 {
            let mut cpu = f.cpu_steps.clone();
            let mut mem = Vec::new();
            for (m, _) in f.typical.iter().filter(|(m, _)| limited(m)) {
                for k in 1..=g {
                    cpu.push(m.cpu * k);
                    mem.push(m.mem * u64::from(k));
                }
            }
            cpu.sort_unstable();
            cpu.dedup();
            mem.sort_unstable();
            mem.dedup();
            f.cpu_points.push(cpu);
            f.mem_points.push(mem);
        }
        f
    }

    /// `F_n` of a node with `cpu_left` CPU, `mem_left` memory and `gpu_free` GPUs of
    /// `model` (FGD's measure ignores memory).
    pub fn node(&mut self, model: u8, cpu_left: u32, mem_left: u64, gpu_free: &[u32]) -> f64 {
        let Some(key) = self.key(model, cpu_left, mem_left, gpu_free) else {
            return self.compute(model, cpu_left, mem_left, gpu_free);
        };
        if let Some(&f) = self.memo.get(&key) {
            return f;
        }
        let f = self.compute(model, cpu_left, mem_left, gpu_free);
        self.memo.insert(key, f);
        f
    }

    /// The typical pods (compiled) and their current weights.
    pub fn types(&self) -> &[(PodReq, f64)] {
        &self.typical
    }

    /// Replaces the weights of the typical pods (same order as [`FragModel::types`]) and
    /// forgets every memoised `F_n`.
    pub fn set_weights(&mut self, weights: &[f64]) {
        for ((_, w), &x) in self.typical.iter_mut().zip(weights) {
            *w = x;
        }
        self.memo.clear();
    }

    pub fn of(&mut self, n: &NodeState) -> f64 {
        self.node(n.model, n.cpu_left, n.mem_left, &n.gpu_free)
    }

    /// Model, CPU step and the sorted free capacities: everything `F_n` depends on (with
    /// [`FragModel::resource_limited`]: the CPU and memory breakpoints instead of the step).
    /// `None` for nodes too large to pack into 128 bits (then no memo).
    fn key(&self, model: u8, cpu_left: u32, mem_left: u64, gpu_free: &[u32]) -> Option<u128> {
        if gpu_free.len() > 8 {
            return None;
        }
        let mut sorted = [0u32; 8];
        sorted[..gpu_free.len()].copy_from_slice(gpu_free);
        sorted[..gpu_free.len()].sort_unstable();
        let mut key = if self.resource_limited {
            // The measure depends on CPU and memory only through how many breakpoints they
            // reach (a few hundred at most; 9 bits each).
            // A type's runs matter only up to the node's wholly free GPUs (beyond, the GPUs
            // are the limit, as in FGD), so only the breakpoints up to that many count.
            let fresh = gpu_free.iter().filter(|&&f| f >= MILLI).count();
            let cpu = self.cpu_points[fresh].partition_point(|&c| c <= cpu_left) as u128;
            let mem = self.mem_points[fresh].partition_point(|&m| m <= mem_left) as u128;
            if cpu >= 1 << 9 || mem >= 1 << 9 {
                return None;
            }
            ((u128::from(model) << 9 | cpu) << 9 | mem) << 4 | gpu_free.len() as u128
        } else {
            let step = self.cpu_steps.partition_point(|&c| c <= cpu_left) as u128;
            (u128::from(model) << 8 | step) << 4 | gpu_free.len() as u128
        };
        for f in &sorted[..gpu_free.len()] {
            key = key << 11 | u128::from(*f);
        }
        Some(key)
    }

    fn compute(&self, model: u8, cpu_left: u32, mem_left: u64, gpu_free: &[u32]) -> f64 {
        let idle: i64 = gpu_free.iter().map(|&f| i64::from(f)).sum();
        let mut bucket = [0.0f64; 7];
        for (m, share) in &self.typical {
            let cpu_ok = cpu_left >= m.cpu;
            if m.milli == 0 {
                bucket[if cpu_ok { CPU_OK } else { CPU_LACK }] += share * idle as f64;
                continue;
            }
            if !m.accepts(model) || gpu_free.is_empty() {
                bucket[NO_ACCESS] += share * idle as f64;
                continue;
            }
            let fitting = gpu_free.iter().filter(|&&f| f >= m.milli).count() as u32;
            let hostable = m.num > 0 && fitting >= m.num;
            match (hostable, cpu_ok) {
                (true, true) => {
                    let mut stranded: i64 = gpu_free
                        .iter()
                        .filter(|&&f| f < m.milli)
                        .map(|&f| i64::from(f))
                        .sum();
                    if self.resource_limited && limited(m) {
                        let runs = u64::from(cpu_left / m.cpu.max(1))
                            .min(mem_left.checked_div(m.mem).unwrap_or(u64::MAX));
                        let usable = runs.saturating_mul(u64::from(MILLI)).min(idle as u64);
                        stranded = stranded.max(idle - usable as i64);
                    }
                    bucket[LACK_GPU] += share * stranded as f64;
                    bucket[SATISFIED] += share * (idle - stranded) as f64;
                }
                (true, false) => bucket[LACK_CPU] += share * idle as f64,
                (false, true) => bucket[LACK_GPU] += share * idle as f64,
                (false, false) => bucket[LACK_BOTH] += share * idle as f64,
            }
        }
        let mut sum = 0.0;
        for (i, b) in bucket.iter().enumerate() {
            if i != SATISFIED {
                sum += b;
            }
        }
        sum
    }
}

/// The types whose room `resource_limited` caps by CPU and memory: one whole GPU.
/// (Capping shares too was measured worse on the gpushare and multigpu lists.)
fn limited(m: &PodReq) -> bool {
    m.num == 1 && m.milli == MILLI
}

/// A fixed multiplicative hasher for the memo: fast, and the same on every run (the memo
/// is never iterated, so its order cannot leak; this only keeps runs reproducible in time).
#[derive(Default)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_u128(&mut self, v: u128) {
        let x = (v as u64) ^ ((v >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        self.0 ^= self.0 >> 32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharing::{ShareNode, SharePod};

    fn setup() -> (ShareCluster, TypicalPods) {
        let nodes = vec![ShareNode {
            name: "n".into(),
            cpu_milli: 8000,
            mem_mib: 1 << 20,
            gpus: 2,
            model: "T4".into(),
        }];
        let c = ShareCluster::new(&nodes).unwrap();
        let pod = |num, milli| SharePod {
            name: String::new(),
            cpu_milli: 4000,
            mem_mib: 0,
            num_gpu: num,
            gpu_milli: milli,
            models: vec![],
        };
        // Half of the pods want 600/1000 of a GPU, half a whole one.
        let t = TypicalPods::from_pods(&[pod(1, 600), pod(1, 1000)], 100.0);
        (c, t)
    }

    #[test]
    fn fragmentation_counts_what_typical_pods_cannot_use() {
        let (c, t) = setup();
        let mut f = FragModel::new(&t, &c);
        // Idle node: every typical pod fits, nothing is stranded.
        assert_eq!(f.node(0, 8000, 0, &[1000, 1000]), 0.0);
        // GPU 0 has 500 free: too little for either type, so its 500 is fragment for
        // both (0.5 x 500 + 0.5 x 500).
        assert_eq!(f.node(0, 8000, 0, &[500, 1000]), 500.0);
        // 700 free: the 600 type can use it, the whole-GPU type cannot: 0.5 x 700.
        assert_eq!(f.node(0, 8000, 0, &[700, 1000]), 350.0);
        // Not enough CPU for any typical pod: all idle capacity is fragment.
        assert_eq!(f.node(0, 1000, 0, &[1000, 1000]), 2000.0);
        // The memo returns the same for the same shape, in any GPU order.
        assert_eq!(f.node(0, 8000, 0, &[1000, 700]), 350.0);
    }

    #[test]
    fn resource_limited_counts_whole_gpus_that_cpu_or_memory_cannot_feed() {
        let (c, _) = setup();
        let pod = |milli, mem| SharePod {
            name: String::new(),
            cpu_milli: 4000,
            mem_mib: mem,
            num_gpu: 1,
            gpu_milli: milli,
            models: vec![],
        };
        let t = TypicalPods::from_pods(&[pod(600, 1024), pod(1000, 8192)], 100.0);
        let (mut fgd, mut fit) = (FragModel::new(&t, &c), FragModel::resource_limited(&t, &c));
        // Enough CPU and memory for two whole-GPU pods: as FGD.
        assert_eq!(fit.node(0, 8000, 16_384, &[1000, 1000]), 0.0);
        // CPU for one: FGD sees no fragment, fgd-fit one GPU for the whole-GPU half.
        assert_eq!(fgd.node(0, 4000, 16_384, &[1000, 1000]), 0.0);
        assert_eq!(fit.node(0, 4000, 16_384, &[1000, 1000]), 500.0);
        // Memory for one (FGD ignores memory).
        assert_eq!(fgd.node(0, 8000, 8192, &[1000, 1000]), 0.0);
        assert_eq!(fit.node(0, 8000, 8192, &[1000, 1000]), 500.0);
        // Share types are measured as FGD does.
        assert_eq!(fit.node(0, 8000, 16_384, &[700, 1000]), 350.0);
    }
}
