//! EASY backfilling (Lifka, 1995; Slurm's `sched/backfill` without multiple
//! reservations): the first waiting job that does not fit gets a reservation at the
//! earliest time enough GPUs will be free (the "shadow time", from running jobs'
//! estimates); a later job may start now if it fits and either ends by the shadow time
//! or only uses GPUs the reserved job will not need then ("extra" GPUs).
//!
//! The reservation counts GPUs across the cluster and ignores topology. A job without an
//! estimate is taken to run forever: it never ends by the shadow time, not even by an
//! unknown (infinite) one, so it passes the reserved job only in the extra GPUs (none
//! when the shadow is unknown) and never delays it.

use std::collections::BinaryHeap;

use crate::schedule::SchedJob;
use crate::Seconds;

/// The reservation of the blocked head job.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Reservation {
    pub shadow: Seconds,
    pub extra: u64,
}

/// Computes the head job's reservation from the running jobs' expected ends.
pub fn reserve(jobs: &[SchedJob], head_gpus: u32, free_now: u64, now: Seconds) -> Reservation {
    let running = jobs.iter().filter(|j| j.running);
    let ends = running.map(|j| (now + j.estimated_remaining(), j.spec.gpus));
    reserve_from(ends, head_gpus, free_now)
}

/// The reservation from the running jobs' `(expected end, GPUs)` in job order: the ends
/// taken earliest first (equal ends in job order) until enough GPUs are free.
///
/// Only the earliest ends count, usually a few of the running jobs, so instead of sorting
/// them all this keeps, as it reads them, the shortest prefix of that order (so far) that
/// frees enough: a max-heap by (end, position), whose largest leaves once the others
/// free enough without it. Its largest is then the shadow, exactly where the sorted walk
/// would have stopped.
pub fn reserve_from(
    ends: impl Iterator<Item = (Seconds, u32)>,
    head_gpus: u32,
    free_now: u64,
) -> Reservation {
    let none = Reservation {
        shadow: f64::INFINITY,
        extra: 0,
    };
    // GPUs the prefix must free (at least one end is always taken, even if none are).
    let need = head_gpus as i64 - free_now as i64;
    let mut prefix: BinaryHeap<(i64, u32, u32)> = BinaryHeap::new();
    let mut freed: i64 = 0;
    for (pos, (end, gpus)) in ends.enumerate() {
        if !end.is_finite() {
            if end < 0.0 || (end.is_nan() && end.is_sign_negative()) {
                // It sorts before every finite end: the walk stops at once.
                return none;
            }
            continue; // after every finite end: the walk stops before it
        }
        let item = (total_order_key(end), pos as u32, gpus);
        if freed >= need && prefix.peek().is_some_and(|top| item > *top) {
            continue;
        }
        prefix.push(item);
        freed += gpus as i64;
        while prefix.len() > 1 && freed - prefix.peek().map_or(0, |t| t.2 as i64) >= need {
            freed -= prefix.pop().map_or(0, |t| t.2 as i64);
        }
    }
    match prefix.peek() {
        Some(&(key, _, _)) if freed >= need => Reservation {
            shadow: from_total_order_key(key),
            extra: (free_now as i64 + freed - head_gpus as i64) as u64,
        },
        _ => none,
    }
}

/// An integer ordered as [`f64::total_cmp`] orders the floats (the standard's own
/// transform: negative floats' magnitude bits flipped), and back.
pub(crate) fn total_order_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

fn from_total_order_key(key: i64) -> f64 {
    f64::from_bits((key ^ (((key >> 63) as u64) >> 1) as i64) as u64)
}

impl Reservation {
    /// Whether `job` may jump the queue now: it ends by the shadow time, or it fits in
    /// the extra GPUs.
    pub fn allows(&self, job: &SchedJob, now: Seconds) -> bool {
        self.allows_queued(job.spec.gpus, job.estimated_remaining(), now)
    }

    /// [`Self::allows`] for a job of `gpus` GPUs expected to run `remaining` more seconds.
    pub fn allows_queued(&self, gpus: u32, remaining: Seconds, now: Seconds) -> bool {
        self.ends_by_shadow(remaining, now) || gpus as u64 <= self.extra
    }

    /// Whether a job expected to run `remaining` more seconds ends by the shadow time. A
    /// job without an estimate (infinite) never does: `now + inf <= inf` holds, and
    /// would let it jump a head whose shadow is unknown and hold its GPUs for ever.
    fn ends_by_shadow(&self, remaining: Seconds, now: Seconds) -> bool {
        remaining.is_finite() && now + remaining <= self.shadow
    }

    /// Records that `job` (which [`Self::allows`]) started: a job that outlives the
    /// shadow time spends extra GPUs.
    pub fn admit(&mut self, job: &SchedJob, now: Seconds) {
        if !self.ends_by_shadow(job.estimated_remaining(), now) {
            self.extra -= job.spec.gpus as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job without an estimate never ends by the shadow: not by a known one, and not by
    /// an unknown one (issue 31: `now + inf <= inf` let every such job backfill). It may
    /// still use the extra GPUs, which no one else's shadow needs.
    #[test]
    fn a_job_without_an_estimate_passes_only_in_the_extra_gpus() {
        let unknown = Reservation {
            shadow: f64::INFINITY,
            extra: 0,
        };
        assert!(!unknown.allows_queued(1, f64::INFINITY, 50.0));
        let known = Reservation {
            shadow: 100.0,
            extra: 2,
        };
        assert!(!known.allows_queued(3, f64::INFINITY, 50.0));
        assert!(known.allows_queued(2, f64::INFINITY, 50.0));
        assert!(known.allows_queued(3, 50.0, 50.0), "it ends by the shadow");
        assert!(!known.allows_queued(3, 50.5, 50.0));
        // Known-length jobs still pass an unknown shadow, as before: they end.
        assert!(unknown.allows_queued(4, 1e6, 50.0));
    }

    /// The reservation as first written: every running end, stably sorted.
    fn by_sort(ends: &[(Seconds, u32)], head_gpus: u32, free_now: u64) -> Reservation {
        let mut ends = ends.to_vec();
        ends.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut free = free_now;
        for (end, gpus) in ends {
            if !end.is_finite() {
                break;
            }
            free += gpus as u64;
            if free >= head_gpus as u64 {
                return Reservation {
                    shadow: end,
                    extra: free - head_gpus as u64,
                };
            }
        }
        Reservation {
            shadow: f64::INFINITY,
            extra: 0,
        }
    }

    #[test]
    fn the_prefix_heap_reserves_as_the_sort_does() {
        let mut x: u64 = 7;
        let mut below = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        // Few distinct ends (many ties, where the job order decides the extra GPUs),
        // infinite ones (no estimate), jobs holding no GPU, heads the free GPUs cover.
        let values = [0.0, 5.0, 5.0, 7.5, 10.0, 1e9, f64::INFINITY];
        for case in 0..20_000 {
            let n = below(12) as usize;
            let ends: Vec<(Seconds, u32)> = (0..n)
                .map(|_| (values[below(7) as usize], below(9) as u32))
                .collect();
            let (head, free) = (below(40) as u32, below(6));
            let got = reserve_from(ends.iter().copied(), head, free);
            let want = by_sort(&ends, head, free);
            assert_eq!(
                (got.shadow.to_bits(), got.extra),
                (want.shadow.to_bits(), want.extra),
                "case {case}: {ends:?} head {head} free {free}"
            );
        }
        for odd in [f64::NEG_INFINITY, -f64::NAN, f64::NAN] {
            let ends = [(3.0, 2), (odd, 4), (1.0, 1)];
            for head in 0..8 {
                let got = reserve_from(ends.iter().copied(), head, 1);
                let want = by_sort(&ends, head, 1);
                assert_eq!(
                    (got.shadow.to_bits(), got.extra),
                    (want.shadow.to_bits(), want.extra)
                );
            }
        }
    }
}
