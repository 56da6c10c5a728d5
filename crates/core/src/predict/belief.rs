//! A job's run time as the predictor believes it when the job is admitted: not one
//! number but a distribution, the run times of past jobs like it, so that a policy can
//! tell a sure prediction from a guess (`blend`, [`crate::policy::blend`]). Fixed at
//! admission, like the prediction itself.
//!
//! [`super::Predictor::belief`] builds it from the back-off chain: the histogram of the
//! key that answers, shrunk toward the coarser keys after it by its sample count, so a
//! key of three jobs is half its parents' history and a key of three hundred is its
//! own. A key whose past jobs ran anywhere from a minute to a month gives a wide belief;
//! one whose jobs all ran about an hour, a narrow one. With too little history (fewer
//! than [`super::BELIEF_MIN_JOBS`] ended jobs in all) it is [`Belief::unknown`].

use crate::Seconds;

/// A run-time distribution: bins `[lo, hi)`, ascending and disjoint, each with its
/// probability spread evenly over it (a bin with `lo == hi` is a point), summing to 1;
/// no bins at all when nothing is known.
#[derive(Clone, Debug, PartialEq)]
pub struct Belief {
    bins: Vec<(Seconds, Seconds, f64)>,
}

impl Belief {
    /// From `(lo, hi, weight)` bins, ascending and disjoint; weights are normalised and
    /// bins without weight dropped. `None` when no weight is positive or a bin is
    /// malformed (not finite, negative, `hi < lo`, overlapping the one before).
    pub fn from_bins(mut bins: Vec<(Seconds, Seconds, f64)>) -> Option<Self> {
        bins.retain(|b| b.2 > 0.0);
        let ok = bins.iter().all(|&(lo, hi, w)| {
            lo.is_finite() && hi.is_finite() && lo >= 0.0 && hi >= lo && w.is_finite()
        });
        let sorted = bins.windows(2).all(|p| p[0].1 <= p[1].0);
        let total: f64 = bins.iter().map(|b| b.2).sum();
        if !ok || !sorted || total <= 0.0 {
            return None;
        }
        for b in &mut bins {
            b.2 /= total;
        }
        Some(Belief { bins })
    }

    /// Nothing known of the run time: `blend` orders such a job by its attained service
    /// alone (least attained service).
    pub fn unknown() -> Self {
        Belief { bins: Vec::new() }
    }

    /// The bins, `(lo, hi, probability)`.
    pub fn bins(&self) -> &[(Seconds, Seconds, f64)] {
        &self.bins
    }

    /// Moves the probability above `cap` to a point at `cap` (a walltime: the job is
    /// stopped there). A cap that is not a positive number changes nothing.
    pub fn cap(&mut self, cap: Seconds) {
        if !(cap.is_finite() && cap > 0.0) || self.bins.is_empty() {
            return;
        }
        let mut above = 0.0;
        let mut kept = Vec::with_capacity(self.bins.len() + 1);
        for &(lo, hi, w) in &self.bins {
            if lo >= cap {
                above += w;
            } else if hi > cap {
                let inside = w * (cap - lo) / (hi - lo);
                kept.push((lo, cap, inside));
                above += w - inside;
            } else {
                kept.push((lo, hi, w));
            }
        }
        if above > 0.0 {
            kept.push((cap, cap, above));
        }
        kept.retain(|b| b.2 > 0.0);
        self.bins = kept;
    }

    /// The probability of a bin's part after `a`.
    fn after(&(lo, hi, w): &(Seconds, Seconds, f64), a: Seconds) -> f64 {
        if a < lo || (a == lo && hi > lo) {
            w
        } else if a >= hi {
            0.0
        } else {
            w * (hi - a) / (hi - lo)
        }
    }

    /// The Gittins rank of a job that has run `a` seconds and is due in `within` seconds
    /// (its deadline less now), where finishing counts only by then: over every further
    /// quantum `d <= within` (ending at a bin's edge or at `within`), the least
    /// `E[min(S - a, d) | S > a] / P(S - a <= d | S > a)`, the service expected per
    /// chance of meeting the deadline (`edf` on a belief, [`crate::deadline`]). With
    /// `within` beyond every run time it is [`Belief::rank`].
    ///
    /// `None` when the belief gives no chance of ending within `within` (nothing is
    /// known, the job has outlived everything like it, or `within` is negative).
    pub fn rank_within(&self, a: Seconds, within: Seconds) -> Option<Seconds> {
        if within.is_nan() || within < 0.0 {
            return None;
        }
        let first = self.bins.partition_point(|b| b.1 <= a && b.0 < a);
        let rest = &self.bins[first..];
        let total: f64 = rest.iter().map(|b| Self::after(b, a)).sum();
        if total <= 0.0 {
            return None;
        }
        let limit = a + within;
        // As in `rank`, with each bin cut at `limit` and none after it.
        let (mut at, mut left, mut spent, mut best) = (a, total, 0.0, f64::INFINITY);
        for b in rest {
            let m = Self::after(b, a);
            let lo = b.0.max(a);
            if lo > limit {
                break;
            }
            let end = b.1.min(limit);
            let part = if b.1 > lo {
                m * (end - lo) / (b.1 - lo)
            } else {
                m
            };
            spent += (lo - at) * left + (end - lo) * (left - part / 2.0);
            left -= part;
            at = end;
            let done = total - left;
            if done > 0.0 {
                best = best.min(spent / done);
            }
        }
        best.is_finite().then_some(best)
    }

    /// The Gittins rank of a job that has run `a` seconds, in seconds: over every further
    /// quantum `d` (ending at a bin's edge), the least
    /// `E[min(S - a, d) | S > a] / P(S - a <= d | S > a)`, the service expected per
    /// chance of finishing. Serving the job with the smallest rank first is optimal for
    /// one server with known run-time distributions (Gittins' index policy).
    ///
    /// - For a certain run time it is the time left: srtf's key.
    /// - For a wide belief it stays small while short outcomes are still possible, and
    ///   grows as they are ruled out, the way least-attained-service demotes a job.
    /// - Near the end of a belief that ends sharply it shrinks, so a job about to finish
    ///   is not preempted for one that has only started (what plain least attained
    ///   service gets wrong when many long jobs of similar length share the cluster).
    ///
    /// `None` when the belief holds no run time after `a`: nothing is known, or the job
    /// has outlived everything like it.
    pub fn rank(&self, a: Seconds) -> Option<Seconds> {
        let first = self.bins.partition_point(|b| b.1 <= a && b.0 < a);
        let rest = &self.bins[first..];
        let total: f64 = rest.iter().map(|b| Self::after(b, a)).sum();
        if total <= 0.0 {
            return None;
        }
        // `spent`: the integral of the survival P(S > t | S > a) * total from `a` to
        // `at`; `left`: the probability after `at`.
        let (mut at, mut left, mut spent, mut best) = (a, total, 0.0, f64::INFINITY);
        for b in rest {
            let m = Self::after(b, a);
            let lo = b.0.max(a);
            spent += (lo - at) * left + (b.1 - lo) * (left - m / 2.0);
            left -= m;
            at = b.1;
            let done = total - left;
            if done > 0.0 {
                best = best.min(spent / done);
            }
        }
        Some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn a_certain_run_time_ranks_by_the_time_left() {
        let b = Belief::from_bins(vec![(100.0, 100.0, 1.0)]).unwrap();
        assert!(close(b.rank(0.0).unwrap(), 100.0));
        assert!(close(b.rank(30.0).unwrap(), 70.0));
        assert_eq!(b.rank(100.0), None, "outlived");
        assert_eq!(Belief::unknown().rank(0.0), None);
    }

    #[test]
    fn within_a_deadline_only_the_run_times_that_end_by_it_count() {
        // Half end at 10 s, half at 1000 s.
        let b = Belief::from_bins(vec![(10.0, 10.0, 1.0), (1000.0, 1000.0, 1.0)]).unwrap();
        // Due in 2000 s: as without a deadline.
        assert!(close(
            b.rank_within(0.0, 2000.0).unwrap(),
            b.rank(0.0).unwrap()
        ));
        // Due in 500 s: only the 10 s outcome meets it; the same 20 s per chance.
        assert!(close(b.rank_within(0.0, 500.0).unwrap(), 20.0));
        // Past 10 s and due in 500 s more: no chance left.
        assert_eq!(b.rank_within(11.0, 500.0), None);
        assert!(close(b.rank_within(11.0, 989.0).unwrap(), 989.0));
        // Due in 5 s: nothing ends by then.
        assert_eq!(b.rank_within(0.0, 5.0), None);
        assert_eq!(b.rank_within(0.0, -1.0), None);
        // Uniform over [0, 100), due in 50 s: E[min(S, 50)] = 37.5 s for a chance of
        // 1/2, 75 s per deadline met (the whole belief would give 50 s).
        let u = Belief::from_bins(vec![(0.0, 100.0, 1.0)]).unwrap();
        assert!(close(u.rank_within(0.0, 50.0).unwrap(), 75.0));
        assert!(close(u.rank_within(0.0, 100.0).unwrap(), 50.0));
        assert_eq!(Belief::unknown().rank_within(0.0, 10.0), None);
    }

    #[test]
    fn a_chance_of_ending_soon_ranks_a_job_early_until_it_is_ruled_out() {
        // Half end at 10 s, half at 1000 s: try 10 s first (20 s of service per
        // completion), then it is a 1000 s job.
        let b = Belief::from_bins(vec![(10.0, 10.0, 1.0), (1000.0, 1000.0, 1.0)]).unwrap();
        assert!(close(b.rank(0.0).unwrap(), 20.0));
        assert!(close(b.rank(11.0).unwrap(), 989.0));
        // A spread bin: uniform over [0, 100) expects 50 s.
        let u = Belief::from_bins(vec![(0.0, 100.0, 1.0)]).unwrap();
        assert!(close(u.rank(0.0).unwrap(), 50.0));
        // Halfway through it, 25 s.
        assert!(close(u.rank(50.0).unwrap(), 25.0));
    }

    #[test]
    fn a_wide_belief_demotes_with_service_and_a_sharp_one_keeps_a_job_near_its_end() {
        // Log-uniform over 10 s .. 10^6 s (every power of ten alike): the longer a job
        // has run, the larger its rank, as least attained service.
        let wide: Vec<_> = (1..6)
            .map(|k| (10f64.powi(k), 10f64.powi(k + 1), 1.0))
            .collect();
        let wide = Belief::from_bins(wide).unwrap();
        let r = |a| wide.rank(a).unwrap();
        assert!(
            r(0.0) < r(1000.0) && r(1000.0) < r(100_000.0),
            "{} {} {}",
            r(0.0),
            r(1000.0),
            r(100_000.0)
        );
        // Half end within 100 s, half between 8 * 10^4 and 10^5 s: a job at 9 * 10^4 s
        // is nearly done and goes before one at 1,000 s (least attained service would
        // order them the other way); a fresh one, which may still end within 100 s,
        // before both.
        let sharp =
            Belief::from_bins(vec![(10.0, 100.0, 0.5), (80_000.0, 100_000.0, 0.5)]).unwrap();
        let r = |a| sharp.rank(a).unwrap();
        assert!(close(r(90_000.0), 5_000.0) && close(r(1000.0), 89_000.0));
        assert!(r(0.0) < r(90_000.0));
    }

    #[test]
    fn a_cap_moves_what_lies_beyond_it_to_a_point() {
        let mut b = Belief::from_bins(vec![(0.0, 100.0, 1.0), (100.0, 200.0, 1.0)]).unwrap();
        b.cap(50.0);
        assert_eq!(b.bins(), &[(0.0, 50.0, 0.25), (50.0, 50.0, 0.75)]);
        assert!(b.rank(49.0).unwrap() < 1.0 + 1e-9);
        let before = b.clone();
        b.cap(f64::NAN);
        assert_eq!(b, before);
    }

    #[test]
    fn malformed_bins_are_refused() {
        assert_eq!(Belief::from_bins(vec![]), None);
        assert_eq!(Belief::from_bins(vec![(0.0, 1.0, 0.0)]), None);
        assert_eq!(Belief::from_bins(vec![(5.0, 1.0, 1.0)]), None);
        assert_eq!(
            Belief::from_bins(vec![(0.0, 10.0, 1.0), (5.0, 20.0, 1.0)]),
            None
        );
        assert_eq!(Belief::from_bins(vec![(0.0, f64::INFINITY, 1.0)]), None);
        let b = Belief::from_bins(vec![(0.0, 1.0, 3.0), (1.0, 2.0, 1.0)]).unwrap();
        assert_eq!(b.bins()[0].2, 0.75);
    }
}
