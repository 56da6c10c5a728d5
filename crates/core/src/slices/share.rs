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
/// room. `target` is FGD's target workload: the recent demand, from
/// [`crate::sharing::demand::target_pods`]. Ties go to the first node.
pub fn choose_share(
    hosts: &[ShareHost],
    milli: u32,
    mem_mib: u64,
    model: Option<&str>,
    target: &[SharePod],
    strategy: ShareStrategy,
) -> Option<(usize, u32)> {
    // Nodes without a GPU that could take the share are left out (the sharing model
    // handles at most 16 GPUs per node and 64 models).
    let usable: Vec<usize> = (0..hosts.len())
        .filter(|&i| {
            let h = &hosts[i];
            crate::resources::model_matches(&h.model, model)
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
    let typical = TypicalPods::from_pods(target, 100.0);
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
    use crate::sharing::demand::{live_pod, target_pods, Demand};

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

    fn pods(asks: &[(u32, Option<u32>)]) -> Vec<SharePod> {
        asks.iter().map(|&(g, m)| live_pod(g, m).unwrap()).collect()
    }

    #[test]
    fn a_half_goes_next_to_the_other_half_under_every_packing_strategy() {
        let hosts = [host(&[1000, 500, 1000])];
        let work = pods(&[(0, Some(500)), (0, Some(500)), (1, None)]);
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

    /// Places 0.5, 0.25 and 0.25 one after another on four idle GPUs by FGD, each with
    /// the target `target(shares submitted so far)`; the GPU each one took.
    fn three_shares(
        strategy: ShareStrategy,
        target: impl Fn(&[(u32, Option<u32>)]) -> Vec<SharePod>,
    ) -> Vec<u32> {
        let mut free = [1000u32; 4];
        let mut asked = Vec::new();
        let mut took = Vec::new();
        for milli in [500, 250, 250] {
            asked.push((0, Some(milli)));
            let hosts = [host(&free)];
            let (_, gpu) = choose_share(&hosts, milli, 0, None, &target(&asked), strategy).unwrap();
            free[gpu as usize] -= milli;
            took.push(gpu);
        }
        took
    }

    #[test]
    fn shares_alone_as_the_target_spread_and_whole_gpu_demand_packs_them() {
        // The old live target: only the shares. A fresh GPU fits every share type, so
        // FGD sees no cost in opening one, and 0.25 beside 0.5 strands 0.25 for the 0.5
        // type: the second share opens GPU 1 (score 50 against 46).
        assert_eq!(three_shares(ShareStrategy::Fgd, pods), vec![0, 1, 1]);
        // The demand target: no whole-GPU job in the window, so one whole GPU is added;
        // a GPU with shares on it is then fragment already and the shares fill GPU 0.
        let demand = |asked: &[(u32, Option<u32>)]| {
            let d: Vec<Demand<SharePod>> = pods(asked)
                .into_iter()
                .map(|ask| Demand {
                    submitted: 0.0,
                    active: true,
                    ask,
                })
                .collect();
            target_pods(&d, 0.0, 3600.0)
        };
        for s in [
            ShareStrategy::Fgd,
            ShareStrategy::FgdPack,
            ShareStrategy::FgdCoarse,
            ShareStrategy::FgdFit,
        ] {
            assert_eq!(three_shares(s, demand), vec![0, 0, 0], "{s:?}");
        }
        // A 3-GPU job in the window says the same with its own size.
        let with_job = |asked: &[(u32, Option<u32>)]| {
            let mut p = pods(asked);
            p.push(live_pod(3, None).unwrap());
            p
        };
        assert_eq!(three_shares(ShareStrategy::Fgd, with_job), vec![0, 0, 0]);
    }
}
