//! Deadlines on a trace that has none (issue 37): each job, or a share of them, is given
//! one as ElasticFlow's evaluation does (ASPLOS 2023, as we read it): its submit time
//! plus a factor, drawn uniformly from a range, times its run time alone. A factor
//! below 1 cannot be met by a job of fixed size (only one that grows could); the range
//! is an option so that runs say what they assumed. Draws are seeded and per job id, so
//! the same trace, range, share and seed give the same deadlines whatever the policy.
//!
//! [`DeadlineSummary::of`] says how a run did: the share of deadlines met, how late the
//! others were, and the JCT of the jobs without one (best-effort).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::SimRun;
use crate::trace::Workload;

/// How deadlines are drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct DeadlineSpec {
    /// The factor's range: deadline = submit + factor x run time.
    pub lo: f64,
    pub hi: f64,
    /// The share of jobs that get one (the rest are best-effort).
    pub share: f64,
    pub seed: u64,
}

impl DeadlineSpec {
    /// `LO-HI` (e.g. `0.5-1.5`) or one factor, a share in (0, 1], a seed.
    pub fn parse(range: &str, share: f64, seed: u64) -> Result<Self, String> {
        let bad = || {
            format!(
                "--deadlines {range:?}: give a factor range LO-HI of positive numbers with LO \
                 <= HI (deadline = submit + factor x run time), e.g. 0.5-1.5"
            )
        };
        let num = |s: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
        };
        let (lo, hi) = match range.split_once('-') {
            Some((a, b)) => (num(a).ok_or_else(bad)?, num(b).ok_or_else(bad)?),
            None => {
                let v = num(range).ok_or_else(bad)?;
                (v, v)
            }
        };
        if lo > hi {
            return Err(bad());
        }
        if !(share > 0.0 && share <= 1.0) {
            return Err(format!(
                "--deadline-share {share}: give the share of jobs with a deadline, above 0 and \
                 at most 1, e.g. 0.5"
            ));
        }
        Ok(DeadlineSpec {
            lo,
            hi,
            share,
            seed,
        })
    }
}

/// SplitMix64: a seeded draw per (seed, job id, stream) without a dependency. Streams:
/// 0 and 1 deadlines, 2 elastic jobs ([`crate::elastic`]).
pub(crate) fn draw(seed: u64, id: u64, stream: u64) -> f64 {
    let mut z = seed
        .wrapping_add(id.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// Gives jobs of `w` deadlines by `spec`.
pub fn assign(w: &mut Workload, spec: &DeadlineSpec) {
    for j in &mut w.jobs {
        let id = j.spec.id.0;
        if draw(spec.seed, id, 0) >= spec.share {
            j.spec.deadline = None;
            continue;
        }
        let factor = spec.lo + (spec.hi - spec.lo) * draw(spec.seed, id, 1);
        j.spec.deadline = Some(j.spec.submit + factor * j.work.duration());
    }
}

/// How a run did against the deadlines.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeadlineSummary {
    /// Jobs with a deadline, and how many ended by it.
    pub jobs: u64,
    pub met: u64,
    pub met_share: f64,
    /// Mean seconds past the deadline of those that missed it.
    pub avg_lateness: f64,
    /// Jobs without a deadline, and their mean JCT.
    pub best_effort_jobs: u64,
    pub best_effort_avg_jct: f64,
}

impl DeadlineSummary {
    /// None when no job of `w` has a deadline.
    pub fn of(run: &SimRun, w: &Workload) -> Option<Self> {
        let due: BTreeMap<u64, f64> = w
            .jobs
            .iter()
            .filter_map(|j| j.spec.deadline.map(|d| (j.spec.id.0, d)))
            .collect();
        if due.is_empty() {
            return None;
        }
        let (mut jobs, mut met, mut late) = (0u64, 0u64, 0.0);
        let (mut be, mut be_jct) = (0u64, 0.0);
        for o in &run.jobs {
            match due.get(&o.id.0) {
                Some(&d) => {
                    jobs += 1;
                    // A part in 10^9 of slack: float noise, not lateness.
                    if o.end <= d + 1e-9 * d.abs().max(1.0) {
                        met += 1;
                    } else {
                        late += o.end - d;
                    }
                }
                None => {
                    be += 1;
                    be_jct += o.jct();
                }
            }
        }
        let missed = jobs - met;
        Some(DeadlineSummary {
            jobs,
            met,
            met_share: if jobs > 0 {
                met as f64 / jobs as f64
            } else {
                0.0
            },
            avg_lateness: if missed > 0 {
                late / missed as f64
            } else {
                0.0
            },
            best_effort_jobs: be,
            best_effort_avg_jct: if be > 0 { be_jct / be as f64 } else { 0.0 },
        })
    }

    /// One line for the table's foot.
    pub fn line(&self, policy: &str) -> String {
        format!(
            "deadlines ({policy}): {} of {} met ({:.1}%), the others {} late on average; {} best-effort jobs, avg JCT {}\n",
            self.met,
            self.jobs,
            self.met_share * 100.0,
            crate::report::secs(self.avg_lateness),
            self.best_effort_jobs,
            crate::report::secs(self.best_effort_avg_jct),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_shares_and_seeds_are_checked_and_draws_are_per_job() {
        assert!(DeadlineSpec::parse("0.5-1.5", 1.0, 1).is_ok());
        assert_eq!(DeadlineSpec::parse("2", 1.0, 1).unwrap().lo, 2.0);
        for bad in ["1.5-0.5", "x", "-1", "0-1", ""] {
            let e = DeadlineSpec::parse(bad, 1.0, 1).unwrap_err();
            assert!(e.contains("LO-HI"), "{bad}: {e}");
        }
        assert!(DeadlineSpec::parse("1-2", 0.0, 1).is_err());
        assert!(DeadlineSpec::parse("1-2", 1.5, 1).is_err());
        // Draws depend on the seed and the job, and are in [0, 1).
        let xs: Vec<f64> = (0..1000).map(|id| draw(7, id, 1)).collect();
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5).abs() < 0.05, "{mean}");
        assert_ne!(draw(7, 3, 1), draw(8, 3, 1));
        assert_ne!(draw(7, 3, 1), draw(7, 4, 1));
        assert_eq!(draw(7, 3, 1), draw(7, 3, 1));
    }
}
