//! The target workload of FGD: the typical pod types and how often each arrives.
//!
//! Pods are grouped by (CPU, GPU thousandths, GPU count, GPU model constraint); groups
//! are taken from the most to the least frequent until they hold at least `threshold`
//! percent of all pods; their shares are then renormalised to sum to 1. With the FGD
//! authors' 95% on the default Alibaba list this keeps 35 types.
//!
//! The arithmetic follows the authors' simulator step by step (share = count / total,
//! then divided by covered / total), because FGD's score is truncated to an integer and
//! a last-bit difference in a share can flip a tie between nodes.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::cluster::{PodReq, ShareCluster, SharePod};

/// One typical pod type and its share of the workload.
#[derive(Clone, Debug, PartialEq)]
pub struct TypicalPod {
    pub cpu: u32,
    pub milli: u32,
    pub num: u32,
    /// The model constraint as written, `|`-joined (part of the grouping key).
    pub spec: String,
    /// Mean memory of the group's pods, MiB (not part of the key; FGD does not use it).
    pub mem: u64,
    pub share: f64,
}

/// The typical pods of a workload, most frequent first.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TypicalPods {
    pub pods: Vec<TypicalPod>,
    /// The groups outside `pods` that are needed, taking groups from the largest GPU demand
    /// (GPU thousandths x GPU count x pods) down, to cover the same threshold of the
    /// workload's GPU demand; largest demand first. Each share is its pod count over the
    /// pods `pods` cover (the scale of `pods`' shares, so they do not sum to 1 with them).
    /// FGD does not use them; `fgd-fit` adds them to its target workload, because a type
    /// that is rare by count can carry much of the GPU demand (8-GPU pods).
    pub by_demand: Vec<TypicalPod>,
}

/// The grouping key, ordered as the authors' tie-break among equally frequent types.
type Key = (u32, u32, u32, String);

impl TypicalPods {
    /// Typical pods covering at least `threshold_pct` percent of `pods`.
    pub fn from_pods(pods: &[SharePod], threshold_pct: f64) -> Self {
        let mut counts: BTreeMap<Key, f64> = BTreeMap::new();
        let mut mem: BTreeMap<Key, u64> = BTreeMap::new();
        for p in pods {
            // A CPU-only pod carries no GPU fields (its milli and models are ignored).
            let key = if p.num_gpu == 0 {
                (p.cpu_milli, 0, 0, String::new())
            } else {
                let spec: Vec<&str> = p
                    .models
                    .iter()
                    .map(String::as_str)
                    .filter(|m| !m.is_empty())
                    .collect();
                (p.cpu_milli, p.gpu_milli, p.num_gpu, spec.join("|"))
            };
            *mem.entry(key.clone()).or_insert(0) += p.mem_mib;
            *counts.entry(key).or_insert(0.0) += 1.0;
        }
        let total = pods.len() as f64;
        let mut groups: Vec<(Key, f64)> = counts.into_iter().collect();
        // Most frequent first; among equals, the larger key first.
        groups.sort_by(|a, b| match b.1.partial_cmp(&a.1) {
            Some(Ordering::Equal) | None => b.0.cmp(&a.0),
            Some(o) => o,
        });
        let expected = threshold_pct * total / 100.0;
        let mut covered = 0.0;
        let mut kept = 0;
        let mut shares: Vec<f64> = groups.iter().map(|g| g.1).collect();
        while covered < expected && kept < groups.len() {
            covered += shares[kept];
            shares[kept] /= total;
            kept += 1;
        }
        if kept < groups.len() {
            for s in shares.iter_mut().take(kept) {
                *s /= covered / total;
            }
        }
        // The groups of largest GPU demand (ties: larger key first) until they cover the
        // threshold of all GPU demand; those not already kept above.
        let demand = |g: &(Key, f64)| f64::from(g.0 .1) * f64::from(g.0 .2) * g.1;
        let total_demand: f64 = groups.iter().map(demand).sum();
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by(|&a, &b| {
            demand(&groups[b])
                .total_cmp(&demand(&groups[a]))
                .then_with(|| groups[b].0.cmp(&groups[a].0))
        });
        let mut by_demand = Vec::new();
        let mut got = 0.0;
        for i in order {
            if got >= threshold_pct * total_demand / 100.0 || demand(&groups[i]) == 0.0 {
                break;
            }
            got += demand(&groups[i]);
            if i >= kept {
                let ((cpu, milli, num, spec), count) = groups[i].clone();
                by_demand.push(TypicalPod {
                    mem: (mem[&groups[i].0] as f64 / count) as u64,
                    cpu,
                    milli,
                    num,
                    spec,
                    share: count / covered,
                });
            }
        }
        TypicalPods {
            by_demand,
            pods: groups
                .into_iter()
                .zip(shares)
                .take(kept)
                .map(|((key, count), share)| TypicalPod {
                    mem: (mem[&key] as f64 / count) as u64,
                    cpu: key.0,
                    milli: key.1,
                    num: key.2,
                    spec: key.3,
                    share,
                })
                .collect(),
        }
    }

    /// The typical pods compiled against a cluster, with their shares.
    pub fn compile(&self, cluster: &ShareCluster) -> Vec<(PodReq, f64)> {
        self.pods
            .iter()
            .map(|t| {
                let named: Vec<&str> = t.spec.split('|').filter(|m| !m.is_empty()).collect();
                let models = (!named.is_empty()).then(|| {
                    named.iter().fold(0u64, |mask, m| {
                        match cluster.models.iter().position(|x| x == m) {
                            Some(i) => mask | 1 << i,
                            None => mask,
                        }
                    })
                });
                let req = PodReq {
                    cpu: t.cpu,
                    mem: t.mem,
                    num: t.num,
                    milli: t.milli,
                    models,
                };
                (req, t.share)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(cpu: u32, num: u32, milli: u32) -> SharePod {
        SharePod {
            name: String::new(),
            cpu_milli: cpu,
            mem_mib: 0,
            num_gpu: num,
            gpu_milli: milli,
            models: Vec::new(),
        }
    }

    #[test]
    fn keeps_the_most_frequent_types_and_renormalises() {
        let mut pods = vec![p(1000, 1, 500); 6];
        pods.extend(vec![p(2000, 1, 1000); 3]);
        pods.push(p(4000, 0, 0));
        let t = TypicalPods::from_pods(&pods, 85.0);
        assert_eq!(t.pods.len(), 2);
        assert_eq!((t.pods[0].milli, t.pods[1].milli), (500, 1000));
        let sum: f64 = t.pods.iter().map(|x| x.share).sum();
        assert!((sum - 1.0).abs() < 1e-12);
        assert!((t.pods[0].share - 6.0 / 9.0).abs() < 1e-12);
        // 100% keeps all, unrenormalised shares of the whole.
        let all = TypicalPods::from_pods(&pods, 100.0);
        assert_eq!(all.pods.len(), 3);
        assert!((all.pods[2].share - 0.1).abs() < 1e-12);
        assert!(all.by_demand.is_empty());
    }

    #[test]
    fn groups_rare_by_count_but_heavy_in_gpus_are_listed_by_demand() {
        // 18 pods of half a GPU and 1 of 8 GPUs: by count 90% keeps the halves only, but
        // the 8-GPU pod holds 8000 of the 17,000 GPU thousandths asked for.
        let mut pods = vec![p(1000, 1, 500); 18];
        pods.push(p(64_000, 8, 1000));
        let t = TypicalPods::from_pods(&pods, 90.0);
        assert_eq!(t.pods.len(), 1);
        assert_eq!(t.by_demand.len(), 1);
        assert_eq!((t.by_demand[0].num, t.by_demand[0].cpu), (8, 64_000));
        // On the scale of the kept shares: 1 pod over the 18 covered.
        assert!((t.by_demand[0].share - 1.0 / 18.0).abs() < 1e-12);
    }
}
