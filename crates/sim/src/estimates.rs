//! What the policies are told of run times (`simulate --estimates`): nothing, the user's
//! walltime, a noisy estimate, the predictor's, or the truth. Policies that sort by run
//! time (sjf, srtf, srsf) and backfill look good with perfect estimates and real
//! clusters never have them; this makes the simulator say which it used.

use gpusched_core::predict::{Accuracy, Features, Predictor, PredictorConfig};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use serde::Serialize;
use std::collections::BTreeMap;

use crate::trace::{TraceJob, Workload};

/// Where a job's estimate comes from.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Estimates {
    /// The trace's estimate column, else the true run time (what every reproduction has
    /// used; the report calls it `oracle` when no job had its own estimate).
    #[default]
    Trace,
    /// No estimates: sjf and srtf see every job as unbounded; nothing backfills.
    None,
    /// The user's walltime, where the trace has one.
    Walltime,
    /// The true run time times a log-normal error `exp(N(0, sigma))`, seeded.
    Noisy { sigma: f64, seed: u64 },
    /// The core's run-time predictor, learning from jobs as they end.
    Predicted,
    /// The true run time, for every job.
    Oracle,
}

impl Estimates {
    /// `trace`, `none`, `walltime`, `noisy:SIGMA[:SEED]`, `predicted`, `oracle`.
    pub fn parse(text: &str) -> Result<Estimates, String> {
        let bad = || {
            format!(
                "unknown --estimates `{text}`; use none, walltime, noisy:SIGMA[:SEED] \
                 (e.g. noisy:1.0), predicted, oracle or trace"
            )
        };
        Ok(match text {
            "trace" => Estimates::Trace,
            "none" => Estimates::None,
            "walltime" => Estimates::Walltime,
            "predicted" => Estimates::Predicted,
            "oracle" => Estimates::Oracle,
            _ => {
                let rest = text.strip_prefix("noisy:").ok_or_else(bad)?;
                let (sigma, seed) = match rest.split_once(':') {
                    Some((s, seed)) => (s, seed.parse::<u64>().map_err(|_| bad())?),
                    None => (rest, 1),
                };
                let sigma: f64 = sigma.parse().map_err(|_| bad())?;
                if !(sigma.is_finite() && sigma >= 0.0) {
                    return Err(format!(
                        "--estimates noisy: sigma must be a finite number of at least 0; got {sigma}"
                    ));
                }
                Estimates::Noisy { sigma, seed }
            }
        })
    }

    /// The name a report prints for this mode on `w`.
    pub fn name(&self, w: &Workload) -> String {
        match self {
            Estimates::Trace if w.jobs.iter().any(|j| j.known.estimate_given) => {
                "trace (its estimates; the true run time where it has none)".into()
            }
            Estimates::Trace | Estimates::Oracle => "oracle".into(),
            Estimates::None => "none".into(),
            Estimates::Walltime => "walltime".into(),
            Estimates::Noisy { sigma, seed } => format!("noisy:{sigma}:{seed}"),
            Estimates::Predicted => "predicted".into(),
        }
    }

    /// Whether the scheduler may read job `t`'s true remaining time (srtf's and srsf's
    /// key): only where what the policy is told of it is the true run time, i.e.
    /// `oracle`, or `trace` for a job without its own estimate (the column's default).
    /// A job whose trace gives an estimate is ranked by that estimate, as sjf and
    /// backfill rank it, and has it doubled when it outlives it (the user's guess).
    pub fn knows_truth(&self, t: &TraceJob) -> bool {
        match self {
            Estimates::Oracle => true,
            Estimates::Trace => !t.known.estimate_given,
            _ => false,
        }
    }
}

/// How good the predictor's estimates were over a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PredictionReport {
    /// Jobs admitted with a prediction, and without (before any job had ended).
    pub predicted: u64,
    pub unpredicted: u64,
    /// `|predicted - actual| / actual`.
    pub median_rel_error: f64,
    pub p90_rel_error: f64,
    /// Share of predictions below the actual run time.
    pub underestimated: f64,
    /// Keys the predictor held at the end.
    pub keys: usize,
}

/// Gives each admitted job its estimate and learns from each ended one.
pub struct Estimator {
    mode: Estimates,
    predictor: Predictor,
    accuracy: Accuracy,
    names: BTreeMap<String, u64>,
    /// Per trace index: the features and prediction at admission (predicted mode).
    admitted: BTreeMap<usize, (Features, Option<f64>)>,
    rng: ChaCha8Rng,
    noise: Option<LogNormal<f64>>,
    /// Jobs the predictor has learnt from.
    observed: u64,
    /// The number of ended jobs at which the waiting jobs' beliefs are next refreshed.
    next_refresh: u64,
}

impl Estimator {
    pub fn new(mode: &Estimates) -> Self {
        let (seed, noise) = match mode {
            Estimates::Noisy { sigma, seed } => (*seed, LogNormal::new(0.0, *sigma).ok()),
            _ => (0, None),
        };
        Estimator {
            mode: mode.clone(),
            predictor: Predictor::new(PredictorConfig::default()),
            accuracy: Accuracy::default(),
            names: BTreeMap::new(),
            admitted: BTreeMap::new(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            noise,
            observed: 0,
            next_refresh: u64::from(gpusched_core::predict::BELIEF_MIN_JOBS),
        }
    }

    fn intern(&mut self, name: &Option<String>) -> Option<u64> {
        let n = name.as_ref()?;
        let next = self.names.len() as u64;
        Some(*self.names.entry(n.clone()).or_insert(next))
    }

    fn features(&mut self, w: &Workload, t: &TraceJob) -> Features {
        let gpu_model = self.intern(&t.spec.gpu_model);
        Features {
            user: u64::from(t.spec.user.get()),
            queue: u64::from(t.spec.queue.get()),
            name: self.intern(&t.known.name),
            detail: self.intern(&t.known.detail),
            gpus: t.spec.gpus,
            gpu_model,
            walltime: t.known.walltime,
            submit: t.spec.submit + w.week_offset.unwrap_or(0.0),
        }
    }

    /// The estimate job `ti` of `w` is admitted with (jobs are admitted in a fixed order,
    /// so the noise stream is reproducible).
    pub fn admit(&mut self, w: &Workload, ti: usize) -> Option<f64> {
        let t = &w.jobs[ti];
        let truth = t.work.duration();
        match &self.mode {
            Estimates::Trace => t.spec.estimate,
            Estimates::Oracle => Some(truth),
            Estimates::None => None,
            Estimates::Walltime => t.known.walltime,
            Estimates::Noisy { .. } => {
                let factor = self.noise.map_or(1.0, |n| n.sample(&mut self.rng));
                Some(truth * factor)
            }
            Estimates::Predicted => {
                let f = self.features(w, t);
                let p = self.predictor.predict(&f).map(|p| p.seconds);
                self.admitted.insert(ti, (f, p));
                p
            }
        }
    }

    /// What the predictor believes of job `ti`'s run time (`blend` orders by it): call
    /// right after [`Estimator::admit`], so it sees what the prediction saw. `None`
    /// outside `predicted` or before any job has ended.
    pub fn belief(&self, ti: usize) -> Option<gpusched_core::predict::Belief> {
        let (f, _) = self.admitted.get(&ti)?;
        self.predictor.belief(f)
    }

    /// Whether the beliefs of waiting jobs that have none should be refreshed now
    /// (predicted mode only):
    /// once [`gpusched_core::predict::BELIEF_MIN_JOBS`] jobs have ended, and again each
    /// time the number of ended jobs has doubled since, so a batch admitted before any
    /// job ended gets beliefs as the predictor learns (issue 37), at the cost of a walk
    /// over the waiting jobs a logarithmic number of times.
    pub fn refresh_due(&mut self) -> bool {
        if self.mode != Estimates::Predicted || self.observed < self.next_refresh {
            return false;
        }
        self.next_refresh = self.observed.saturating_mul(2);
        true
    }

    /// What the predictor believes of waiting job `ti` now ([`Estimator::belief`] with
    /// all it has learnt since). A job admitted without a prediction gets the one the
    /// predictor makes now, which the accuracy report then counts.
    pub fn refresh(&mut self, ti: usize) -> Option<gpusched_core::predict::Belief> {
        let (f, p) = self.admitted.get_mut(&ti)?;
        if p.is_none() {
            *p = self.predictor.predict(f).map(|p| p.seconds);
        }
        self.predictor.belief(f)
    }

    /// Job `ti` ended having run `seconds` (its run time alone, what a server measures).
    pub fn ended(&mut self, ti: usize, seconds: f64) {
        if let Some((f, p)) = self.admitted.remove(&ti) {
            self.accuracy.record(p, seconds);
            self.predictor.observe(&f, seconds);
            self.observed += 1;
        }
    }

    pub fn report(&self) -> Option<PredictionReport> {
        if self.mode != Estimates::Predicted {
            return None;
        }
        let (predicted, unpredicted) = self.accuracy.counts();
        let (median_rel_error, p90_rel_error, underestimated) =
            self.accuracy.summary().unwrap_or((0.0, 0.0, 0.0));
        Some(PredictionReport {
            predicted,
            unpredicted,
            median_rel_error,
            p90_rel_error,
            underestimated,
            keys: self.predictor.keys(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_mode() {
        assert_eq!(Estimates::parse("none").unwrap(), Estimates::None);
        assert_eq!(
            Estimates::parse("noisy:0.5").unwrap(),
            Estimates::Noisy {
                sigma: 0.5,
                seed: 1
            }
        );
        assert_eq!(
            Estimates::parse("noisy:1:7").unwrap(),
            Estimates::Noisy {
                sigma: 1.0,
                seed: 7
            }
        );
        for bad in ["", "noisy", "noisy:x", "noisy:-1", "perfect", "noisy:1:x"] {
            assert!(Estimates::parse(bad).is_err(), "{bad}");
        }
    }
}

#[cfg(test)]
mod learning_tests {
    use super::*;
    use crate::trace::synthetic::{generate, SyntheticSpec};

    /// The predictor answers nothing before a job has ended, learns only from ended jobs,
    /// and the accuracy counts every admitted job once.
    #[test]
    fn predictions_come_only_from_ended_jobs() {
        let w = generate(&SyntheticSpec {
            jobs: 50,
            seed: 1,
            load: 1.0,
            cluster_gpus: 8,
            max_job_gpus: 8,
            tenants: 2,
        });
        let mut e = Estimator::new(&Estimates::Predicted);
        assert_eq!(e.admit(&w, 0), None);
        assert_eq!(e.admit(&w, 1), None);
        e.ended(0, w.jobs[0].work.duration());
        let after_one = e
            .admit(&w, 2)
            .expect("one ended job is history enough for `all`");
        let d = w.jobs[0].work.duration();
        assert!((after_one / d - 1.0).abs() < 0.1, "{after_one} vs {d}");
        e.ended(1, w.jobs[1].work.duration());
        e.ended(2, w.jobs[2].work.duration());
        let r = e.report().unwrap();
        assert_eq!((r.predicted, r.unpredicted), (1, 2));
    }
}
