//! A run-time distribution in logarithmic buckets: constant memory and O(1) updates per
//! observation, any quantile in one walk, and the same answer for the same observations
//! in the same order (integer counts; no floats are accumulated).

/// Buckets per doubling: a bucket spans a factor of 2^(1/4) = 1.19, so a quantile is
/// within about 9% of the bucket's geometric middle.
const PER_OCTAVE: f64 = 4.0;
/// Bucket 0 holds everything up to one second; the last everything from 2^30 s (34
/// years) up.
const BUCKETS: usize = 121;
/// Once a histogram holds this many observations every count is halved, so older jobs
/// weigh less than recent ones (a user's runs drift as their work changes) and counts
/// stay small.
const HALVE_AT: u32 = 512;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogHist {
    counts: Vec<u32>,
    total: u32,
}

impl Default for LogHist {
    fn default() -> Self {
        LogHist {
            counts: vec![0; BUCKETS],
            total: 0,
        }
    }
}

fn bucket(seconds: f64) -> usize {
    // NaN and anything up to a second land in bucket 0.
    if seconds.is_nan() || seconds <= 1.0 {
        return 0;
    }
    let b = (seconds.log2() * PER_OCTAVE).floor() + 1.0;
    b.min((BUCKETS - 1) as f64) as usize
}

/// The seconds a bucket holds, `[lo, hi)`: bucket 0 from 0 s to 1 s, the last one as
/// wide as the others (what lies beyond 2^30 s is counted there).
pub(super) fn range(b: usize) -> (f64, f64) {
    if b == 0 {
        return (0.0, 1.0);
    }
    (
        ((b as f64 - 1.0) / PER_OCTAVE).exp2(),
        (b as f64 / PER_OCTAVE).exp2(),
    )
}

/// The geometric middle of a bucket, in seconds.
fn middle(b: usize) -> f64 {
    if b == 0 {
        return 1.0;
    }
    ((b as f64 - 0.5) / PER_OCTAVE).exp2()
}

impl LogHist {
    pub fn add(&mut self, seconds: f64) {
        self.counts[bucket(seconds)] += 1;
        self.total += 1;
        if self.total >= HALVE_AT {
            self.total = 0;
            for c in &mut self.counts {
                *c /= 2;
                self.total += *c;
            }
        }
    }

    /// Observations it holds (after halvings).
    pub fn len(&self) -> u32 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The `q` quantile (0 < q <= 1) in seconds; `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        let want = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u32).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return Some(middle(b));
            }
        }
        Some(middle(BUCKETS - 1))
    }

    /// Every bucket's count, lowest first (bucket `b` holds [`range`]`(b)`).
    pub(super) fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// The non-empty buckets as (bucket, count), lowest first (for a snapshot).
    pub fn buckets(&self) -> Vec<(u16, u32)> {
        let nonzero = self.counts.iter().enumerate().filter(|(_, &c)| c > 0);
        nonzero.map(|(b, &c)| (b as u16, c)).collect()
    }

    /// A histogram from [`LogHist::buckets`]; `None` when a bucket is out of range or
    /// the total reaches the halving point (a snapshot this code did not write).
    pub fn from_buckets(buckets: &[(u16, u32)]) -> Option<Self> {
        let mut h = LogHist::default();
        for &(b, c) in buckets {
            *h.counts.get_mut(b as usize)? += c;
            h.total = h.total.checked_add(c)?;
        }
        (h.total < HALVE_AT).then_some(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_land_within_a_bucket() {
        let mut h = LogHist::default();
        for s in [10.0, 100.0, 1000.0, 10_000.0, 100_000.0] {
            h.add(s);
        }
        let med = h.quantile(0.5).unwrap();
        assert!((med / 1000.0 - 1.0).abs() < 0.1, "{med}");
        let top = h.quantile(1.0).unwrap();
        assert!((top / 100_000.0 - 1.0).abs() < 0.1, "{top}");
        assert!(h.quantile(0.0).unwrap() < 11.0);
        assert_eq!(LogHist::default().quantile(0.5), None);
    }

    #[test]
    fn old_observations_fade() {
        let mut h = LogHist::default();
        for _ in 0..600 {
            h.add(10.0);
        }
        for _ in 0..400 {
            h.add(5000.0);
        }
        // Without halving the median would be 10 s; recent runs dominate.
        assert!(h.quantile(0.5).unwrap() > 1000.0);
        assert!(h.len() < HALVE_AT);
    }

    #[test]
    fn every_observation_lands_in_its_range() {
        for s in [0.5, 1.0, 1.5, 10.0, 3600.0, 86_400.0 * 30.0] {
            let (lo, hi) = range(bucket(s));
            assert!(
                lo <= s && s < hi || (s == 1.0 && bucket(s) == 0),
                "{s} in [{lo}, {hi})"
            );
        }
        assert_eq!(range(1).0, 1.0);
        assert_eq!(range(4).1, 2.0);
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        let mut h = LogHist::default();
        for s in [0.0, -5.0, f64::NAN, f64::INFINITY, 1e300] {
            h.add(s);
        }
        assert_eq!(h.len(), 5);
    }
}
