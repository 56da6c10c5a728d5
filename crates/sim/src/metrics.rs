//! Summary metrics of a run.
//!
//! - JCT (job completion time) = end - submit. Percentiles use the nearest-rank rule of
//!   the Muri/Tiresias `calc.py`: the value at index `floor(n * q)` of the sorted list
//!   (clamped to the last), so p99 of 992 jobs is the 983rd smallest.
//! - Queueing delay = first start - submit.
//! - Makespan = last end - first submit.
//! - Utilisation = busy GPU-seconds / (GPUs x makespan).
//! - Jain's fairness index over tenants (users, or virtual clusters for Philly) of the
//!   mean *service ratio* (run time alone / JCT, 1 = never waited or slowed):
//!   `(sum x)^2 / (n * sum x^2)`, 1 when every tenant is served equally well, 1/n when one
//!   tenant gets everything.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::SimRun;

/// One policy's results, as printed and as written to JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub policy: String,
    pub placement: String,
    pub jobs: usize,
    pub avg_jct: f64,
    pub p50_jct: f64,
    pub p95_jct: f64,
    pub p99_jct: f64,
    pub makespan: f64,
    pub avg_queue_delay: f64,
    pub utilization: f64,
    pub jain_fairness: f64,
    pub preemptions: u64,
    pub passes: u64,
    /// With a power model (`--power-model`) only, so reports without one are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::power::Energy>,
    /// Deadlines met, when the trace's jobs were given some (`--deadlines`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlines: Option<crate::deadlines::DeadlineSummary>,
    /// With elastic jobs (`--elastic`): how many, and how often they resized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elastic: Option<crate::engine::ElasticCount>,
    /// What the policy was told of run times (`oracle`: the truth).
    pub estimates: String,
    /// Under `--estimates predicted`: how good the predictions were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<crate::PredictionReport>,
}

/// Nearest-rank percentile (`calc.py`'s rule) of an ascending list.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * q) as usize).min(sorted.len() - 1);
    sorted[i]
}

/// Jain's index of `xs`.
pub fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        1.0
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

impl Summary {
    pub fn of(run: &SimRun, policy: &str, placement: &str, by_queue: bool) -> Self {
        let n = run.jobs.len();
        let mut jcts: Vec<f64> = run.jobs.iter().map(|j| j.jct()).collect();
        let avg_jct = jcts.iter().sum::<f64>() / n.max(1) as f64;
        jcts.sort_by(f64::total_cmp);
        let first = run
            .jobs
            .iter()
            .map(|j| j.submit)
            .min_by(f64::total_cmp)
            .unwrap_or(0.0);
        let last = run
            .jobs
            .iter()
            .map(|j| j.end)
            .max_by(f64::total_cmp)
            .unwrap_or(0.0);
        let makespan = last - first;
        let delay = run.jobs.iter().map(|j| j.start - j.submit).sum::<f64>() / n.max(1) as f64;
        let mut per_tenant: BTreeMap<u32, (f64, u32)> = BTreeMap::new();
        for j in &run.jobs {
            let t = if by_queue {
                j.queue.get()
            } else {
                j.user.get()
            };
            let e = per_tenant.entry(t).or_default();
            let jct = j.jct();
            e.0 += if jct > 0.0 {
                (j.duration / jct).min(1.0)
            } else {
                1.0
            };
            e.1 += 1;
        }
        let ratios: Vec<f64> = per_tenant.values().map(|(s, c)| s / *c as f64).collect();
        Summary {
            policy: policy.to_string(),
            placement: placement.to_string(),
            jobs: n,
            avg_jct,
            p50_jct: percentile(&jcts, 0.50),
            p95_jct: percentile(&jcts, 0.95),
            p99_jct: percentile(&jcts, 0.99),
            makespan,
            avg_queue_delay: delay,
            utilization: if makespan > 0.0 {
                run.busy_gpu_seconds / (run.total_gpus as f64 * makespan)
            } else {
                0.0
            },
            jain_fairness: jain(&ratios),
            preemptions: run.jobs.iter().map(|j| j.preemptions as u64).sum(),
            passes: run.passes,
            energy: None,
            deadlines: None,
            elastic: run.elastic,
            estimates: run.estimates.clone(),
            prediction: run.prediction.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_follows_the_peer_rule() {
        let v: Vec<f64> = (0..992).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.99), 982.0);
        assert_eq!(percentile(&v, 0.5), 496.0);
        assert_eq!(percentile(&[5.0], 0.99), 5.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }

    #[test]
    fn jain_is_one_when_equal_and_one_over_n_when_one_takes_all() {
        assert!((jain(&[0.5, 0.5, 0.5]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
