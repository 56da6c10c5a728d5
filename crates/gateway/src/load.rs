//! A service's load at this gateway, as the sync reports it: requests at replicas,
//! requests waiting here, and the latencies answered since the last report.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Latencies kept between two syncs: past this the newest overwrite the oldest, so a
/// burst between syncs costs bounded memory (the p95 of the last 8192 is close enough).
const KEPT: usize = 8192;

#[derive(Debug, Default)]
pub struct Load {
    in_flight: AtomicU32,
    queued: AtomicU32,
    answered: AtomicU64,
    latencies: Mutex<Vec<f64>>,
}

/// What one sync reports of a service.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub in_flight: u32,
    pub queued: u32,
    pub p95_ms: Option<f64>,
    pub answered: u64,
}

impl Load {
    pub fn in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::Relaxed)
    }

    pub fn queued(&self) -> u32 {
        self.queued.load(Ordering::Relaxed)
    }

    /// Counts a request waiting here until the guard drops; refused (None) when `cap`
    /// are already waiting.
    pub fn try_queue(self: &std::sync::Arc<Self>, cap: u32) -> Option<Waiting> {
        let mut cur = self.queued.load(Ordering::Relaxed);
        loop {
            if cur >= cap {
                return None;
            }
            match self.queued.compare_exchange_weak(
                cur,
                cur + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(Waiting(self.clone())),
                Err(now) => cur = now,
            }
        }
    }

    /// Counts a request sent to a replica until the guard drops.
    pub fn start(self: &std::sync::Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }

    /// A request answered after `took` (from its arrival at the gateway).
    pub fn answered(&self, took: Duration) {
        let n = self.answered.fetch_add(1, Ordering::AcqRel);
        let ms = took.as_secs_f64() * 1000.0;
        let mut l = self.latencies.lock().unwrap_or_else(|p| p.into_inner());
        if l.len() < KEPT {
            l.push(ms);
        } else {
            l[(n as usize) % KEPT] = ms;
        }
    }

    /// The load now, and the answers since the last report (which this one resets).
    pub fn report(&self) -> Report {
        let mut lat =
            std::mem::take(&mut *self.latencies.lock().unwrap_or_else(|p| p.into_inner()));
        Report {
            in_flight: self.in_flight(),
            queued: self.queued(),
            p95_ms: p95(&mut lat),
            answered: self.answered.swap(0, Ordering::AcqRel),
        }
    }
}

/// The nearest-rank 95th percentile.
fn p95(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((v.len() as f64) * 0.95).ceil() as usize;
    Some(v[rank.clamp(1, v.len()) - 1])
}

/// A request waiting in the gateway (held for a replica, or in a batch queue).
#[derive(Debug)]
pub struct Waiting(std::sync::Arc<Load>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.queued.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A request (or a batch's request) at a replica.
#[derive(Debug)]
pub struct InFlight(std::sync::Arc<Load>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn guards_count_and_a_report_resets_the_answers() {
        let l = Arc::new(Load::default());
        let w = l.try_queue(2).unwrap();
        let _w2 = l.try_queue(2).unwrap();
        assert!(l.try_queue(2).is_none(), "a third is over the cap");
        drop(w);
        let f = l.start();
        for ms in 1..=100 {
            l.answered(Duration::from_millis(ms));
        }
        let r = l.report();
        assert_eq!((r.in_flight, r.queued, r.answered), (1, 1, 100));
        assert_eq!(r.p95_ms, Some(95.0));
        drop(f);
        let r = l.report();
        assert_eq!((r.in_flight, r.answered, r.p95_ms), (0, 0, None));
    }
}
