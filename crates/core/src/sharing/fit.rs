//! `best-fit` and `worst-fit`: score a node by what it has left after the pod.
//!
//! The leftover is `0.5 x CPU left / 128 CPUs + 0.5 x GPU left / 8 GPUs` (the largest
//! node of the Alibaba trace), as in the FGD authors' BestFit baseline. `best-fit` takes
//! the node with the least left, scored as the authors do (`(1 - leftover) x 100`,
//! truncated to an integer, so that near-equal nodes tie and the tie-break decides);
//! within the node, the GPU with the least free capacity that still fits. `worst-fit`
//! takes the node with the most left and the GPU with the most free.

use super::cluster::{NodeState, PodReq, ShareCluster};

const MAX_CPU: f64 = 128_000.0;
const MAX_GPU: f64 = 8_000.0;

/// Share of the largest node left after placing `pod` on `n` (0 = full, about 1 = idle).
fn leftover(n: &NodeState, pod: &PodReq) -> f64 {
    let cpu = (f64::from(n.cpu_left) - f64::from(pod.cpu)) / MAX_CPU * 0.5;
    let gpu = (n.idle_milli() as f64 - pod.total_milli() as f64) / MAX_GPU * 0.5;
    0.0 + cpu + gpu
}

/// The GPU of a share pod: the one with the least (`tightest`) or most free that fits;
/// the lowest index among equals.
pub fn share_gpu(n: &NodeState, milli: u32, tightest: bool) -> u16 {
    let mut best: Option<(usize, u32)> = None;
    for (g, &f) in n.gpu_free.iter().enumerate() {
        if f < milli {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, b)) => (tightest && f < b) || (!tightest && f > b),
        };
        if better {
            best = Some((g, f));
        }
    }
    best.map_or(0, |(g, _)| 1 << g)
}

/// The GPUs `pod` takes on node `i` when the node is picked by fit: share pods by
/// `tightest`, whole GPUs the first free ones.
pub fn gpus(cluster: &ShareCluster, i: usize, pod: &PodReq, tightest: bool) -> u16 {
    if !pod.needs_gpu() {
        0
    } else if pod.is_share() {
        share_gpu(&cluster.nodes[i], pod.milli, tightest)
    } else {
        cluster.first_free_gpus(i, pod)
    }
}

/// `best-fit`: higher is better, integer-valued.
pub fn best_fit_score(n: &NodeState, pod: &PodReq) -> f64 {
    ((1.0 - leftover(n, pod)) * 100.0).trunc()
}

/// `worst-fit`: higher is better.
pub fn worst_fit_score(n: &NodeState, pod: &PodReq) -> f64 {
    leftover(n, pod)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharing::{ShareNode, SharePod};

    #[test]
    fn best_fit_prefers_the_fuller_node_and_the_tighter_gpu() {
        let node = |n: &str| ShareNode {
            name: n.into(),
            cpu_milli: 64_000,
            mem_mib: 1 << 20,
            gpus: 4,
            model: "T4".into(),
        };
        let mut c = ShareCluster::new(&[node("a"), node("b")]).unwrap();
        c.nodes[1].gpu_free = vec![1000, 300, 600, 1000];
        let pod = c
            .compile(&SharePod {
                name: "p".into(),
                cpu_milli: 1000,
                mem_mib: 0,
                num_gpu: 1,
                gpu_milli: 250,
                models: vec![],
            })
            .unwrap();
        assert!(best_fit_score(&c.nodes[1], &pod) > best_fit_score(&c.nodes[0], &pod));
        assert!(worst_fit_score(&c.nodes[0], &pod) > worst_fit_score(&c.nodes[1], &pod));
        assert_eq!(gpus(&c, 1, &pod, true), 0b0010);
        assert_eq!(gpus(&c, 1, &pod, false), 0b0001);
    }
}
