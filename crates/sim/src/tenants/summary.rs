//! Per-tenant metrics of a run, and how fair the split of the GPUs was.
//!
//! - JCT, wait and percentiles follow [`crate::metrics`] (nearest-rank percentiles).
//! - GPU-hours are what the tenant's running jobs held, integrated over the run.
//! - A tenant's *entitlement* in each time bin is its max-min fair (water-filled) part of
//!   the bin's GPU-seconds, given every tenant's demand in that bin (GPUs of its running
//!   and waiting jobs), all weights equal: a tenant asking for less than an equal split
//!   is entitled to all it asks, the rest is shared equally by the others. Its *fair
//!   ratio* is GPU-hours received / GPU-hours entitled, summed over the run: 1 = it got
//!   exactly its fair share, below 1 = it was short-changed, above 1 = it took some of
//!   another's. Raw shares would mostly measure how much each tenant asked for; the
//!   entitlement takes demand out.
//! - Jain's index over tenants of their fair ratios; and, per contended bin (total
//!   demand above capacity), Jain's index of received / entitled over the tenants with
//!   demand, averaged over those bins.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::engine::SimRun;
use crate::metrics::{jain, percentile};
use crate::tenants::TenantUsage;
use crate::trace::Workload;

/// One tenant's results under one policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TenantSummary {
    pub tenant: String,
    pub jobs: usize,
    pub avg_jct: f64,
    pub p50_jct: f64,
    pub p95_jct: f64,
    pub avg_wait: f64,
    pub gpu_hours: f64,
    /// Its part of all GPU-hours delivered in the run.
    pub gpu_share: f64,
    pub entitled_gpu_hours: f64,
    /// `gpu_hours / entitled_gpu_hours` (1 when it was entitled to nothing).
    pub fair_ratio: f64,
}

/// Every tenant's results under one policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TenantReport {
    pub policy: String,
    pub bin_seconds: f64,
    /// Jain's index over tenants of their fair ratios.
    pub jain_fair_ratio: f64,
    /// Bins in which the tenants together asked for more than the cluster.
    pub contended_bins: usize,
    /// Mean over contended bins of Jain's index of received / entitled (1 if none).
    pub jain_contended_bins: f64,
    /// Ordered by tenant number (the order tenants first appear in the trace).
    pub tenants: Vec<TenantSummary>,
}

/// Max-min fair split of `capacity` over `demand` (equal weights), in `demand`'s order.
pub fn water_fill(demand: &[f64], capacity: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..demand.len()).collect();
    order.sort_by(|&a, &b| demand[a].total_cmp(&demand[b]).then(a.cmp(&b)));
    let mut out = vec![0.0; demand.len()];
    let mut left = capacity.max(0.0);
    for (done, &i) in order.iter().enumerate() {
        let level = left / (order.len() - done) as f64;
        let take = demand[i].max(0.0).min(level);
        out[i] = take;
        left -= take;
    }
    out
}

impl TenantReport {
    /// The report of `run`; tenants are users, or queues when `by_queue`. Without
    /// recorded usage ([`crate::SimOptions::tenant_bins`]) the GPU-hour columns are 0.
    pub fn of(run: &SimRun, w: &Workload, policy: &str, by_queue: bool) -> Self {
        let names = if by_queue { &w.queues } else { &w.users };
        let mut jobs: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
        for j in &run.jobs {
            let t = if by_queue {
                j.queue.get()
            } else {
                j.user.get()
            };
            jobs.entry(t)
                .or_default()
                .push((j.jct(), j.start - j.submit));
        }
        let empty = TenantUsage {
            bin_seconds: 3600.0,
            origin: 0.0,
            end: 0.0,
            held: BTreeMap::new(),
            demand: BTreeMap::new(),
        };
        let usage = run.tenants.as_ref().unwrap_or(&empty);
        let fair = Entitlements::of(usage, run.total_gpus);
        let tenants: BTreeSet<u32> = jobs.keys().chain(usage.held.keys()).copied().collect();
        let all_held: f64 = usage.held.values().flatten().sum();
        let summaries: Vec<TenantSummary> = tenants
            .iter()
            .map(|&t| {
                let mine = jobs.get(&t).map_or(&[][..], Vec::as_slice);
                let n = mine.len();
                let mut jcts: Vec<f64> = mine.iter().map(|m| m.0).collect();
                let avg_jct = jcts.iter().sum::<f64>() / n.max(1) as f64;
                jcts.sort_by(f64::total_cmp);
                let held: f64 = usage.held.get(&t).map_or(0.0, |v| v.iter().sum());
                let entitled = fair.total.get(&t).copied().unwrap_or(0.0);
                TenantSummary {
                    tenant: names
                        .get(t as usize)
                        .cloned()
                        .unwrap_or_else(|| t.to_string()),
                    jobs: n,
                    avg_jct,
                    p50_jct: percentile(&jcts, 0.50),
                    p95_jct: percentile(&jcts, 0.95),
                    avg_wait: mine.iter().map(|m| m.1).sum::<f64>() / n.max(1) as f64,
                    gpu_hours: held / 3600.0,
                    gpu_share: if all_held > 0.0 { held / all_held } else { 0.0 },
                    entitled_gpu_hours: entitled / 3600.0,
                    fair_ratio: if entitled > 0.0 { held / entitled } else { 1.0 },
                }
            })
            .collect();
        let ratios: Vec<f64> = summaries
            .iter()
            .filter(|s| s.entitled_gpu_hours > 0.0)
            .map(|s| s.fair_ratio)
            .collect();
        TenantReport {
            policy: policy.to_string(),
            bin_seconds: usage.bin_seconds,
            jain_fair_ratio: jain(&ratios),
            contended_bins: fair.contended.len(),
            jain_contended_bins: if fair.contended.is_empty() {
                1.0
            } else {
                fair.contended.iter().sum::<f64>() / fair.contended.len() as f64
            },
            tenants: summaries,
        }
    }
}

/// Entitlements summed over the run, and Jain's index of each contended bin.
struct Entitlements {
    total: BTreeMap<u32, f64>,
    contended: Vec<f64>,
}

impl Entitlements {
    fn of(u: &TenantUsage, gpus: u32) -> Self {
        let ids: Vec<u32> = u.demand.keys().copied().collect();
        let at = |m: &BTreeMap<u32, Vec<f64>>, t: u32, k: usize| {
            m.get(&t).and_then(|v| v.get(k)).copied().unwrap_or(0.0)
        };
        let mut total: BTreeMap<u32, f64> = BTreeMap::new();
        let mut contended = Vec::new();
        for k in 0..u.bins() {
            let cap = u.capacity(k, gpus);
            let demand: Vec<f64> = ids.iter().map(|&t| at(&u.demand, t, k)).collect();
            let fair = water_fill(&demand, cap);
            for (&t, &e) in ids.iter().zip(&fair) {
                *total.entry(t).or_default() += e;
            }
            // A relative margin keeps float noise in a full, exactly-matched bin from
            // counting as contention.
            if demand.iter().sum::<f64>() > cap * (1.0 + 1e-9) {
                let ratios: Vec<f64> = ids
                    .iter()
                    .zip(&fair)
                    .filter(|(_, &e)| e > 0.0)
                    .map(|(&t, &e)| at(&u.held, t, k) / e)
                    .collect();
                contended.push(jain(&ratios));
            }
        }
        Entitlements { total, contended }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_filling_gives_small_demands_in_full_and_splits_the_rest() {
        assert_eq!(water_fill(&[2.0, 10.0, 10.0], 10.0), vec![2.0, 4.0, 4.0]);
        assert_eq!(water_fill(&[1.0, 2.0], 10.0), vec![1.0, 2.0]);
        assert_eq!(water_fill(&[8.0, 8.0], 8.0), vec![4.0, 4.0]);
        assert!(water_fill(&[], 8.0).is_empty());
    }
}
