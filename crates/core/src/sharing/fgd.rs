//! Fragmentation gradient descent (FGD, ATC'23): place the pod where it increases the
//! node's fragmentation ([`super::frag`]) the least.
//!
//! Score, as in the authors' simulator: `trunc(sigmoid((F_before - F_after) / 1000) x 100)`,
//! an integer in 0..=100, higher is better. For a share of one GPU every GPU of the node
//! that fits is tried and the best taken (the lowest index among equals); whole GPUs are
//! taken from the GPUs with the least free capacity that suffices (for whole GPUs: free
//! ones), and CPU-only pods change only the CPU left.

use super::cluster::{NodeState, PodReq};
use super::frag::FragModel;

/// Calls `each(F_after, gpus)` for each way of placing `pod` on `n` (`gpus` is the GPU
/// bitmask of a share; 0 for whole GPUs, which go to the first free ones, and for
/// CPU-only pods).
pub fn for_each_outcome(
    frag: &mut FragModel,
    n: &NodeState,
    pod: &PodReq,
    mut each: impl FnMut(f64, u16),
) {
    let cpu = n.cpu_left.saturating_sub(pod.cpu);
    let mem = n.mem_left.saturating_sub(pod.mem);
    let mut buf = [0u32; 16];
    let free = &mut buf[..n.gpu_free.len()];
    free.copy_from_slice(&n.gpu_free);
    if pod.is_share() {
        let mut seen = [u32::MAX; 16];
        for g in 0..free.len() {
            let f = free[g];
            // Two GPUs with equal free capacity leave the same node shape: the first wins.
            if f < pod.milli || seen[..g].contains(&f) {
                continue;
            }
            seen[g] = f;
            free[g] = f - pod.milli;
            each(frag.node(n.model, cpu, mem, free), 1 << g);
            free[g] = f;
        }
        return;
    }
    if pod.needs_gpu() {
        // The tightest GPUs that suffice, ties by index (a stable ascending sort).
        let mut order = [0usize; 16];
        let order = &mut order[..free.len()];
        for (i, o) in order.iter_mut().enumerate() {
            *o = i;
        }
        order.sort_by_key(|&g| free[g]);
        let mut left = pod.num;
        for &g in order.iter() {
            if left == 0 {
                break;
            }
            if free[g] >= pod.milli {
                free[g] -= pod.milli;
                left -= 1;
            }
        }
    }
    each(frag.node(n.model, cpu, mem, free), 0);
}

/// The authors' integer score of moving a node from `before` to `after`.
pub fn score(before: f64, after: f64) -> f64 {
    let x = (before - after) / 1000.0;
    (1.0 / (1.0 + (-x).exp()) * 100.0).trunc()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_is_fifty_when_nothing_changes_and_rises_as_fragmentation_falls() {
        assert_eq!(score(500.0, 500.0), 50.0);
        assert!(score(500.0, 0.0) > 50.0);
        assert!(score(0.0, 500.0) < 50.0);
        // Small differences tie: the score is an integer.
        assert_eq!(score(500.0, 510.0), score(500.0, 505.0));
    }
}
