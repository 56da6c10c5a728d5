//! `blend`: attained service and predictions together (issue 16 item 3, in the spirit
//! of Tiresias + Lucid), leaning on a prediction only as far as it deserves.
//!
//! `srtf` on a prediction trusts it: a job predicted short runs first, and a wrong guess
//! costs the jobs it jumps. `tiresias` trusts nothing: every job is short until its
//! attained service says otherwise. `blend` orders jobs by what the predictor
//! *believes* of each one's run time, a distribution ([`crate::predict::Belief`]: the
//! run times of past jobs like it, as many as there are), and ranks each by its
//! **Gittins rank given the service it has attained**, times its GPUs, smallest first:
//!
//! - a job whose past is sure (many jobs of its key, all about an hour) ranks by the
//!   time it has left: srtf's order on a prediction that deserves it;
//! - a job whose past is a guess (few jobs of its key, or jobs of every length) ranks
//!   small while it may still end soon and larger the longer it runs: least attained
//!   service, the rule for unknown sizes, to the degree the prediction is unsure;
//! - a job near the end of a belief that ends sharply (every job like it ends by about
//!   a day) keeps its GPUs against one that has just started, where plain least attained
//!   service would share the cluster among many long jobs and finish them all late;
//! - times its GPUs, as Tiresias' two dimensions and `srsf` weigh service;
//! - a job with nothing known (before [`crate::predict::BELIEF_MIN_JOBS`] jobs have
//!   ended, on a cluster without a predictor, or once it has outlived every run time in
//!   its belief) is ordered by its attained GPU-service alone: least attained service.
//!
//! A job that has an estimate but no belief (a walltime on the live cluster before the
//! predictor has history, or the simulator's `oracle`, `noisy` and `walltime` modes)
//! reads it as the median of a log-normal run time (spread [`SIGMA`]) and ranks by its
//! expected remaining GPU-service `E[S - a | S > a] x GPUs` (the first version of this
//! policy, kept for them).
//!
//! Pure and deterministic: the key is a function of the job's belief (fixed at
//! admission) or estimate, its attained time and its GPUs. The true remaining time
//! (`SchedJob::remaining`, known to a trace simulator) is never read, so the policy is as
//! honest as its predictions.

use crate::schedule::SchedJob;
use crate::Seconds;

/// Spread of log run time around an estimate without a belief (natural log). Chosen by
/// measurement: see docs/scheduling-results.md.
pub const SIGMA: f64 = 0.5;

/// The sort key, in GPU-seconds (smaller runs first).
pub fn key(job: &SchedJob) -> f64 {
    let gpus = job.spec.gpus.max(1) as f64;
    let attained = job.attained.max(0.0);
    if let Some(belief) = &job.belief {
        return belief.rank(attained).unwrap_or(attained) * gpus;
    }
    match job.spec.estimate {
        Some(median) if median > 0.0 && median.is_finite() => {
            expected_remaining(median, SIGMA, attained) * gpus
        }
        _ => attained * gpus,
    }
}

/// `E[S - a | S > a]` for `S` log-normal with median `median` and log-spread `sigma`.
pub fn expected_remaining(median: f64, sigma: f64, a: Seconds) -> Seconds {
    let mean = median * (sigma * sigma / 2.0).exp();
    if a <= 0.0 {
        return mean;
    }
    let z = (a.ln() - median.ln()) / sigma;
    // E[S | S > a] = mean * Q(z - sigma) / Q(z). Past the median both tails get tiny
    // (and underflow far out), so their ratio is taken from their logarithms.
    let ratio = if z - sigma > 0.0 {
        (ln_upper_tail(z - sigma) - ln_upper_tail(z)).exp()
    } else {
        upper_tail(z - sigma) / upper_tail(z)
    };
    (mean * ratio - a).max(0.0)
}

/// `Q(z) = P(N(0,1) > z)`.
fn upper_tail(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// `ln Q(z)` for `z >= 0`, without underflow: `erfc` below is `t * exp(poly)`.
fn ln_upper_tail(z: f64) -> f64 {
    let (t, poly) = erfc_parts(z / std::f64::consts::SQRT_2);
    0.5f64.ln() + t.ln() + poly
}

/// The complementary error function (Numerical Recipes' `erfcc`, fractional error below
/// 1.2e-7 everywhere): std has none, and a crate for one function is not worth it.
fn erfc(x: f64) -> f64 {
    let (t, poly) = erfc_parts(x);
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// `erfc(|x|) = t * exp(poly)`.
fn erfc_parts(x: f64) -> (f64, f64) {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    (t, poly)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::JobSpec;
    use crate::predict::Belief;
    use crate::{JobId, QueueId, UserId};

    fn job(gpus: u32, estimate: Option<f64>, attained: f64) -> SchedJob {
        let spec = JobSpec {
            id: JobId(1),
            gpus,
            gpu_model: None,
            user: UserId(0),
            queue: QueueId(0),
            account: Default::default(),
            priority: 0,
            submit: 0.0,
            estimate,
            cpu_milli: 0,
            mem_mib: 0,
            generic: Default::default(),
            gang: None,
            nodes: Vec::new(),
            prefer: Vec::new(),
            deadline: None,
        };
        let mut j = SchedJob::new(spec);
        j.attained = attained;
        j
    }

    #[test]
    fn erfc_matches_known_values() {
        for (x, want) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122),
            (1.0, 0.157_299_207),
            (2.0, 0.004_677_735),
            (-1.0, 1.842_700_793),
        ] {
            assert!((erfc(x) - want).abs() < 1e-6, "erfc({x}) = {}", erfc(x));
        }
    }

    #[test]
    fn a_fresh_job_expects_the_mean_and_a_young_one_about_its_prediction_minus_its_run() {
        let mean = 3600.0 * (0.5f64).exp();
        assert!((expected_remaining(3600.0, 1.0, 0.0) - mean).abs() < 1e-6);
        // Early on, the expectation falls as the job runs (it nears its prediction).
        let early = expected_remaining(3600.0, 1.0, 60.0);
        let later = expected_remaining(3600.0, 1.0, 1800.0);
        assert!(later < early, "{later} < {early}");
    }

    #[test]
    fn a_job_that_outlived_its_prediction_sinks_like_least_attained_service() {
        // Far past the prediction, more service means more expected to go.
        let r = |a| expected_remaining(600.0, 1.0, a);
        assert!(r(36_000.0) < r(360_000.0));
        assert!(r(360_000.0) < r(3_600_000.0));
        // Finite and still growing where both tails underflow (z in the hundreds).
        let far = r(600.0 * 1e80);
        assert!(far.is_finite() && far > r(600.0 * 1e40), "{far}");
        // Smooth where the ratio switches to logarithms (z = sigma).
        let a = 600.0 * 1.0f64.exp();
        let (below, above) = (r(a * 0.999), r(a * 1.001));
        assert!((below - above).abs() / above < 0.01, "{below} vs {above}");
        // And a fresh job predicted short goes ahead of one that has run a hundred times
        // its prediction (at SIGMA = 0.5 a log-normal's tail is thin: ten times is not yet
        // enough; the simulator's doubling rule moves such a job's prediction anyway).
        assert!(key(&job(1, Some(600.0), 0.0)) < key(&job(1, Some(600.0), 60_000.0)));
    }

    fn believed(gpus: u32, bins: Vec<(f64, f64, f64)>, attained: f64) -> SchedJob {
        let mut j = job(gpus, Some(1.0), attained);
        j.belief = Some(std::sync::Arc::new(
            Belief::from_bins(bins).unwrap_or_else(Belief::unknown),
        ));
        j
    }

    #[test]
    fn a_belief_ranks_by_its_gittins_rank_and_nothing_known_is_least_attained_service() {
        // Sure of an hour: the time left, times the GPUs (the estimate is not read).
        let sure = believed(2, vec![(3600.0, 3600.0, 1.0)], 600.0);
        assert!((key(&sure) - 6000.0).abs() < 1e-9);
        // Nothing known, or outlived: attained GPU-service.
        assert_eq!(key(&believed(2, vec![], 100.0)), 200.0);
        assert_eq!(key(&believed(2, vec![(50.0, 50.0, 1.0)], 100.0)), 200.0);
    }

    #[test]
    fn a_job_near_the_end_of_a_sharp_belief_keeps_its_place_against_a_fresh_long_one() {
        // Jobs like the running one end between 20 and 25 hours; it has run 24. A fresh
        // job sure to need 10 hours goes after it (least attained service would put
        // the fresh one first), a fresh one that may end in a minute goes before it.
        let h = 3600.0;
        let near = believed(1, vec![(20.0 * h, 25.0 * h, 1.0)], 24.0 * h);
        let fresh_long = believed(1, vec![(10.0 * h, 10.0 * h, 1.0)], 0.0);
        let fresh_maybe_short =
            believed(1, vec![(60.0, 60.0, 0.5), (30.0 * h, 30.0 * h, 0.5)], 0.0);
        assert!(
            key(&near) < key(&fresh_long),
            "{} {}",
            key(&near),
            key(&fresh_long)
        );
        assert!(key(&fresh_maybe_short) < key(&near));
    }

    #[test]
    fn gpus_weigh_and_unpredicted_jobs_order_by_attained_service() {
        assert!(key(&job(1, Some(3600.0), 0.0)) < key(&job(8, Some(3600.0), 0.0)));
        assert_eq!(key(&job(2, None, 0.0)), 0.0);
        assert_eq!(key(&job(2, None, 100.0)), 200.0);
        // Deterministic: the same job gives the same key, bit for bit.
        let j = job(4, Some(1234.5), 99.0);
        assert_eq!(key(&j).to_bits(), key(&j).to_bits());
    }
}
