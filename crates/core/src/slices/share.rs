//! Which GPU a share of one GPU goes to on the live cluster: the simulator's sharing
//! strategies run over the cluster's free GPU thousandths right now.

use crate::sharing::{Placer, ShareCluster, ShareNode, SharePod, ShareStrategy, TypicalPods};

/// One GPU as the share placement sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareGpu {
    pub index: u32,
    /// Free compute thousandths: 1000 for an idle GPU, 0 for one held whole or in MIG
    /// mode.
    pub free_milli: u32,
    pub free_mem_mib: u64,
}

/// One node as the share placement sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareHost {
    pub model: String,
    pub cpu_milli: u64,
    pub mem_mib: u64,
    pub gpus: Vec<ShareGpu>,
}

/// The node and GPU index for a share of `milli` thousandths and `mem_mib` MiB of a GPU
/// whose model starts with `model` (if given), by `strategy`, or `None` if no GPU has
/// room. `workload` is the GPU thousandths of the jobs on the cluster (running and
/// waiting; 1000 for whole GPUs): FGD's target workload. Ties go to the first node.
pub fn choose_share(
    hosts: &[ShareHost],
    milli: u32,
    mem_mib: u64,
    model: Option<&str>,
    workload: &[(u32, u32)],
    strategy: ShareStrategy,
) -> Option<(usize, u32)> {
    // Nodes without a GPU that could take the share are left out (the sharing model
    // handles at most 16 GPUs per node and 64 models).
    let usable: Vec<usize> = (0..hosts.len())
        .filter(|&i| {
            let h = &hosts[i];
            model.is_none_or(|m| h.model.starts_with(m))
                && h.gpus.len() <= 16
                && h.gpus
                    .iter()
                    .any(|g| g.free_milli >= milli && g.free_mem_mib >= mem_mib)
        })
        .collect();
    if usable.is_empty() {
        return None;
    }
    let nodes: Vec<ShareNode> = usable
        .iter()
        .map(|&i| ShareNode {
            name: i.to_string(),
            cpu_milli: u32::try_from(hosts[i].cpu_milli).unwrap_or(u32::MAX),
            mem_mib: hosts[i].mem_mib,
            gpus: hosts[i].gpus.len() as u32,
            model: hosts[i].model.clone(),
        })
        .collect();
    let mut cluster = ShareCluster::new(&nodes).ok()?;
    for (k, &i) in usable.iter().enumerate() {
        for (g, gpu) in hosts[i].gpus.iter().enumerate() {
            // A GPU without the memory counts as full: the sharing model has no GPU
            // memory, so it must not be offered.
            cluster.nodes[k].gpu_free[g] = if gpu.free_mem_mib >= mem_mib {
                gpu.free_milli
            } else {
                0
            };
        }
    }
    let pods: Vec<SharePod> = workload
        .iter()
        .map(|&(num, m)| SharePod {
            name: String::new(),
            cpu_milli: 0,
            mem_mib: 0,
            num_gpu: num,
            gpu_milli: m,
            models: Vec::new(),
        })
        .collect();
    let typical = TypicalPods::from_pods(&pods, 100.0);
    let pod = cluster
        .compile(&SharePod {
            name: String::new(),
            cpu_milli: 0,
            mem_mib: 0,
            num_gpu: 1,
            gpu_milli: milli,
            models: Vec::new(),
        })
        .ok()?;
    let mut placer = Placer::new(strategy, &typical, &cluster);
    let choice = placer.choose(&cluster, &pod)?;
    let host = usable[choice.node];
    let position = (0..16).find(|g| choice.gpus >> g & 1 == 1)?;
    Some((host, hosts[host].gpus[position].index))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(free: &[u32]) -> ShareHost {
        ShareHost {
            model: "A100-SXM4-80GB".into(),
            cpu_milli: 64_000,
            mem_mib: 1 << 20,
            gpus: free
                .iter()
                .enumerate()
                .map(|(i, &f)| ShareGpu {
                    index: i as u32,
                    free_milli: f,
                    free_mem_mib: u64::from(f) * 80,
                })
                .collect(),
        }
    }

    #[test]
    fn a_half_goes_next_to_the_other_half_under_every_packing_strategy() {
        let hosts = [host(&[1000, 500, 1000])];
        let work = [(1, 500), (1, 500), (1, 1000)];
        for s in [ShareStrategy::BestFit, ShareStrategy::Fgd] {
            assert_eq!(
                choose_share(&hosts, 500, 0, None, &work, s),
                Some((0, 1)),
                "{s:?}"
            );
        }
        // Worst-fit spreads instead.
        assert_eq!(
            choose_share(&hosts, 500, 0, None, &work, ShareStrategy::WorstFit),
            Some((0, 0))
        );
    }

    #[test]
    fn full_gpus_wrong_models_and_short_memory_are_never_chosen() {
        let hosts = [host(&[0, 0]), host(&[1000, 300])];
        assert_eq!(
            choose_share(&hosts, 250, 0, None, &[], ShareStrategy::BestFit),
            Some((1, 1))
        );
        assert_eq!(
            choose_share(&hosts, 250, 0, Some("H100"), &[], ShareStrategy::Fgd),
            None
        );
        // 30_000 MiB is more than GPU 1's 24_000 free: GPU 0 it is.
        assert_eq!(
            choose_share(&hosts, 250, 30_000, None, &[], ShareStrategy::BestFit),
            Some((1, 0))
        );
        assert_eq!(
            choose_share(&hosts, 999, 0, None, &[], ShareStrategy::BestFit),
            Some((1, 0))
        );
        assert_eq!(
            choose_share(&[host(&[0, 300])], 999, 0, None, &[], ShareStrategy::Fgd),
            None
        );
    }
}
