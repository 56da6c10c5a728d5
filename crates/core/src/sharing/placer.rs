//! One entry point for every sharing strategy: score each node that fits, take the best
//! (the lowest rank among equals), pick its GPUs, carry it out.

use super::cluster::{Choice, PodReq, ShareCluster};
use super::frag::FragModel;
use super::typical::TypicalPods;
use super::{fgd, fgd_coarse, fgd_fit, fgd_pack, fit, scarcity};

/// A placement strategy for shared GPUs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ShareStrategy {
    BestFit,
    WorstFit,
    Fgd,
    FgdPack,
    FgdCoarse,
    FgdFit,
}

/// A strategy name gpusched does not know.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "unknown sharing strategy `{0}`; use one of: best-fit, worst-fit, fgd, fgd-pack, fgd-coarse, fgd-fit"
)]
pub struct UnknownStrategy(pub String);

impl ShareStrategy {
    pub const ALL: [ShareStrategy; 6] = [
        ShareStrategy::BestFit,
        ShareStrategy::WorstFit,
        ShareStrategy::Fgd,
        ShareStrategy::FgdPack,
        ShareStrategy::FgdCoarse,
        ShareStrategy::FgdFit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ShareStrategy::BestFit => "best-fit",
            ShareStrategy::WorstFit => "worst-fit",
            ShareStrategy::Fgd => "fgd",
            ShareStrategy::FgdPack => "fgd-pack",
            ShareStrategy::FgdCoarse => "fgd-coarse",
            ShareStrategy::FgdFit => "fgd-fit",
        }
    }

    pub fn parse(name: &str) -> Result<Self, UnknownStrategy> {
        Self::ALL
            .into_iter()
            .find(|s| s.name() == name.trim())
            .ok_or_else(|| UnknownStrategy(name.to_string()))
    }
}

/// A strategy with its state: the fragmentation model and each node's current `F_n`.
pub struct Placer {
    strategy: ShareStrategy,
    frag: FragModel,
    node_frag: Vec<Option<f64>>,
    /// `fgd-fit` only: the typical pods' shares and slots at start, and placements so far.
    scarcity: Option<(Vec<f64>, Vec<f64>, u32)>,
    /// `fgd-fit` only: FGD's own measure and each node's `F_n` under it, for shares.
    share_frag: Option<(FragModel, Vec<Option<f64>>)>,
}

impl Placer {
    pub fn new(strategy: ShareStrategy, typical: &TypicalPods, cluster: &ShareCluster) -> Self {
        let (frag, scarcity, share_frag) = if strategy == ShareStrategy::FgdFit {
            // The target workload: FGD's typical pods and the groups that carry most of
            // the GPU demand (typical.rs).
            let mut target = typical.clone();
            target.pods.extend(typical.by_demand.iter().cloned());
            let typical = &target;
            let mut frag = FragModel::resource_limited(typical, cluster);
            let mut plain = FragModel::new(typical, cluster);
            // Shares scaled by how few nodes can host each type (scarcity.rs).
            let pod_shares: Vec<f64> = frag.types().iter().map(|t| t.1).collect();
            let gpus = cluster.nodes.iter().map(|n| n.gpu_free.len() as f64).sum();
            let room = scarcity::room(frag.types(), cluster);
            let shares = scarcity::exclusive(&pod_shares, &room, gpus);
            frag.set_weights(&shares);
            plain.set_weights(&shares);
            let start = scarcity::slots(frag.types(), cluster);
            let cache = vec![None; cluster.nodes.len()];
            (frag, Some((shares, start, 0)), Some((plain, cache)))
        } else {
            (FragModel::new(typical, cluster), None, None)
        };
        Placer {
            strategy,
            frag,
            node_frag: vec![None; cluster.nodes.len()],
            scarcity,
            share_frag,
        }
    }

    pub fn strategy(&self) -> ShareStrategy {
        self.strategy
    }

    /// `F_n` of node `i` now (cached until the node changes).
    pub fn node_frag(&mut self, cluster: &ShareCluster, i: usize) -> f64 {
        if let Some(f) = self.node_frag[i] {
            return f;
        }
        let f = self.frag.of(&cluster.nodes[i]);
        self.node_frag[i] = Some(f);
        f
    }

    /// The cluster's fragmentation: the sum of `F_n` over nodes, in node order.
    pub fn cluster_frag(&mut self, cluster: &ShareCluster) -> f64 {
        (0..cluster.nodes.len()).fold(0.0, |acc, i| acc + self.node_frag(cluster, i))
    }

    /// Where `pod` should go, or `None` if no node can take it.
    pub fn choose(&mut self, cluster: &ShareCluster, pod: &PodReq) -> Option<Choice> {
        let mut best: Option<((f64, f64), u32, Choice)> = None;
        for i in 0..cluster.nodes.len() {
            if !cluster.fits(i, pod) {
                continue;
            }
            let n = &cluster.nodes[i];
            let (score, gpus) = match self.strategy {
                ShareStrategy::BestFit => (
                    (fit::best_fit_score(n, pod), 0.0),
                    fit::gpus(cluster, i, pod, true),
                ),
                ShareStrategy::WorstFit => (
                    (fit::worst_fit_score(n, pod), 0.0),
                    fit::gpus(cluster, i, pod, false),
                ),
                ShareStrategy::Fgd => {
                    let before = self.node_frag(cluster, i);
                    let mut best_here: Option<(f64, u16)> = None;
                    fgd::for_each_outcome(&mut self.frag, n, pod, |after, gpus| {
                        let s = fgd::score(before, after);
                        if best_here.is_none_or(|(b, _)| s > b) {
                            best_here = Some((s, gpus));
                        }
                    });
                    let (s, gpus) = best_here.unwrap_or((0.0, 0));
                    ((s, 0.0), gpus)
                }
                ShareStrategy::FgdPack => {
                    let before = self.node_frag(cluster, i);
                    fgd_pack::score(&mut self.frag, before, n, pod)
                }
                ShareStrategy::FgdCoarse => {
                    let before = self.node_frag(cluster, i);
                    fgd_coarse::score(&mut self.frag, before, n, pod)
                }
                ShareStrategy::FgdFit => match &mut self.share_frag {
                    // A share is placed on FGD's own measure (fgd_fit.rs says why).
                    Some((plain, cache)) if pod.is_share() => {
                        let before = *cache[i].get_or_insert_with(|| plain.of(n));
                        fgd_fit::score(plain, before, n, pod)
                    }
                    _ => {
                        let before = self.node_frag(cluster, i);
                        fgd_fit::score(&mut self.frag, before, n, pod)
                    }
                },
            };
            let gpus = if pod.needs_gpu() && !pod.is_share() {
                cluster.first_free_gpus(i, pod)
            } else {
                gpus
            };
            let rank = n.rank;
            let better = match &best {
                None => true,
                Some((s, r, _)) => match score.0.total_cmp(&s.0).then(score.1.total_cmp(&s.1)) {
                    std::cmp::Ordering::Greater => true,
                    std::cmp::Ordering::Equal => rank < *r,
                    std::cmp::Ordering::Less => false,
                },
            };
            if better {
                best = Some((score, rank, Choice { node: i, gpus }));
            }
        }
        best.map(|(_, _, c)| c)
    }

    /// Chooses and carries out; `None` (and no change) if the pod fits nowhere.
    pub fn place(&mut self, cluster: &mut ShareCluster, pod: &PodReq) -> Option<Choice> {
        let choice = self.choose(cluster, pod)?;
        cluster.apply(pod, choice);
        self.node_frag[choice.node] = None;
        if let Some((_, cache)) = &mut self.share_frag {
            cache[choice.node] = None;
        }
        if let Some((shares, start, placed)) = &mut self.scarcity {
            *placed += 1;
            if *placed % scarcity::EPOCH == 0 {
                let now = scarcity::slots(self.frag.types(), cluster);
                let w = scarcity::weights(shares, start, &now);
                self.frag.set_weights(&w);
                self.node_frag.iter_mut().for_each(|f| *f = None);
                if let Some((plain, cache)) = &mut self.share_frag {
                    plain.set_weights(&w);
                    cache.iter_mut().for_each(|f| *f = None);
                }
            }
        }
        Some(choice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharing::{ShareNode, SharePod};

    fn cluster() -> (ShareCluster, TypicalPods) {
        let node = |name: &str| ShareNode {
            name: name.into(),
            cpu_milli: 32_000,
            mem_mib: 1 << 20,
            gpus: 2,
            model: "T4".into(),
        };
        let c = ShareCluster::new(&[node("a"), node("b")]).unwrap();
        let pod = |milli| SharePod {
            name: String::new(),
            cpu_milli: 1000,
            mem_mib: 0,
            num_gpu: 1,
            gpu_milli: milli,
            models: vec![],
        };
        let t = TypicalPods::from_pods(&[pod(500), pod(1000)], 100.0);
        (c, t)
    }

    #[test]
    fn names_round_trip_and_unknown_names_say_what_is_known() {
        for s in ShareStrategy::ALL {
            assert_eq!(ShareStrategy::parse(s.name()), Ok(s));
        }
        let e = ShareStrategy::parse("tetris").unwrap_err().to_string();
        assert!(e.contains("fgd-pack"), "{e}");
    }

    #[test]
    fn fgd_puts_a_half_gpu_next_to_another_half() {
        let (mut c, t) = cluster();
        let half = c
            .compile(&SharePod {
                name: "h".into(),
                cpu_milli: 1000,
                mem_mib: 0,
                num_gpu: 1,
                gpu_milli: 500,
                models: vec![],
            })
            .unwrap();
        for s in [
            ShareStrategy::Fgd,
            ShareStrategy::FgdPack,
            ShareStrategy::BestFit,
        ] {
            let (mut c2, _) = cluster();
            let mut p = Placer::new(s, &t, &c2);
            let first = p.place(&mut c2, &half).unwrap();
            let second = p.place(&mut c2, &half).unwrap();
            assert_eq!(
                (first.node, first.gpus),
                (second.node, second.gpus),
                "{s:?}"
            );
        }
        // worst-fit spreads instead.
        let mut p = Placer::new(ShareStrategy::WorstFit, &t, &c);
        let first = p.place(&mut c, &half).unwrap();
        let second = p.place(&mut c, &half).unwrap();
        assert_ne!(first, second);
    }

    #[test]
    fn a_pod_that_fits_nowhere_changes_nothing() {
        let (mut c, t) = cluster();
        let big = c
            .compile(&SharePod {
                name: "b".into(),
                cpu_milli: 1000,
                mem_mib: 0,
                num_gpu: 4,
                gpu_milli: 1000,
                models: vec![],
            })
            .unwrap();
        let before = c.clone();
        let mut p = Placer::new(ShareStrategy::Fgd, &t, &c);
        assert_eq!(p.place(&mut c, &big), None);
        assert_eq!(c, before);
    }
}
