//! A seeded synthetic workload with Philly-like job sizes and durations, so that
//! `gpusched simulate` needs no data.
//!
//! - GPUs per job follow the Philly job table's histogram (82,247 jobs: 1 GPU 93.2%,
//!   2: 2.2%, 4: 2.3%, 8: 2.0%, 16: 0.24%, 32: 0.08%, and a few larger), dropping sizes
//!   larger than the cluster can hold.
//! - Durations are log-normal with Philly's median (1,144 s) and mean (13,136 s), so
//!   `mu = ln 1144` and `sigma = sqrt(2 ln(13136 / 1144)) = 2.21`, capped at 4.6e6 s (the
//!   trace's longest job) and floored at 1 s.
//! - Arrivals are a Poisson process whose rate makes the offered load (GPU-seconds
//!   asked per second) `load` times the cluster's GPUs.
//! - Jobs belong to `tenants` users, uniformly.
//!
//! The same seed gives the same workload on every machine (ChaCha8).

use gpusched_core::{JobId, JobSpec, QueueId, UserId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, LogNormal, WeightedIndex};

use super::{TraceJob, Work, Workload};

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticSpec {
    pub jobs: usize,
    pub seed: u64,
    /// Offered load as a fraction of the cluster's GPUs (1.0 = exactly full on average).
    pub load: f64,
    pub cluster_gpus: u32,
    /// The largest job the cluster can hold.
    pub max_job_gpus: u32,
    pub tenants: u32,
}

const SIZES: [(u32, f64); 10] = [
    (1, 76_627.0),
    (2, 1_818.0),
    (4, 1_870.0),
    (8, 1_643.0),
    (12, 7.0),
    (16, 199.0),
    (24, 7.0),
    (32, 67.0),
    (64, 6.0),
    (128, 3.0),
];

pub fn generate(spec: &SyntheticSpec) -> Workload {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let sizes: Vec<(u32, f64)> = SIZES
        .iter()
        .copied()
        .filter(|(g, _)| *g <= spec.max_job_gpus.max(1))
        .collect();
    let pick = WeightedIndex::new(sizes.iter().map(|s| s.1)).expect("size weights are positive");
    let sigma = (2.0 * (13_136.0f64 / 1_144.0).ln()).sqrt();
    let duration = LogNormal::new(1_144.0f64.ln(), sigma).expect("valid log-normal");
    let mut drawn: Vec<(u32, f64, u32)> = (0..spec.jobs)
        .map(|_| {
            let gpus = sizes[pick.sample(&mut rng)].0;
            let secs = duration.sample(&mut rng).clamp(1.0, 4.6e6).round();
            let tenant = rng.gen_range(0..spec.tenants.max(1));
            (gpus, secs, tenant)
        })
        .collect();
    let demand: f64 = drawn.iter().map(|(g, d, _)| *g as f64 * d).sum();
    let span = demand / (spec.load.max(1e-6) * spec.cluster_gpus.max(1) as f64);
    let gap = Exp::new(spec.jobs.max(1) as f64 / span.max(1.0)).expect("positive rate");
    let mut now = 0.0f64;
    let jobs = drawn
        .drain(..)
        .enumerate()
        .map(|(i, (gpus, secs, tenant))| {
            if i > 0 {
                now += gap.sample(&mut rng).round();
            }
            TraceJob {
                spec: JobSpec {
                    id: JobId(i as u64),
                    gpus,
                    gpu_model: None,
                    user: UserId(tenant),
                    queue: QueueId(tenant),
                    account: Default::default(),
                    priority: 0,
                    submit: now,
                    estimate: Some(secs),
                    cpu_milli: 0,
                    mem_mib: 0,
                    generic: Default::default(),
                    gang: None,
                    nodes: Vec::new(),
                    prefer: Vec::new(),
                    deadline: None,
                },
                work: Work {
                    units: secs,
                    unit_time: 1.0,
                },
                model: None,
                line: 0,
                known: Default::default(),
            }
        })
        .collect();
    let names: Vec<String> = (0..spec.tenants.max(1))
        .map(|t| format!("user{t}"))
        .collect();
    Workload {
        jobs,
        users: names.clone(),
        queues: names,
        source: format!(
            "synthetic(jobs={}, seed={}, load={})",
            spec.jobs, spec.seed, spec.load
        ),
        week_offset: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(seed: u64) -> SyntheticSpec {
        SyntheticSpec {
            jobs: 20_000,
            seed,
            load: 0.9,
            cluster_gpus: 64,
            max_job_gpus: 64,
            tenants: 4,
        }
    }

    #[test]
    fn same_seed_same_workload_and_philly_like_shape() {
        let a = generate(&spec(7));
        assert_eq!(a, generate(&spec(7)));
        assert_ne!(a, generate(&spec(8)));
        let one_gpu = a.jobs.iter().filter(|j| j.spec.gpus == 1).count() as f64 / 20_000.0;
        assert!((0.91..0.95).contains(&one_gpu), "{one_gpu}");
        let mut d: Vec<f64> = a.jobs.iter().map(|j| j.work.duration()).collect();
        d.sort_by(f64::total_cmp);
        let median = d[d.len() / 2];
        assert!((900.0..1_450.0).contains(&median), "median {median}");
        assert!(a.jobs.iter().all(|j| j.spec.gpus <= 64));
        assert!(a
            .jobs
            .windows(2)
            .all(|w| w[0].spec.submit <= w[1].spec.submit));
    }
}
