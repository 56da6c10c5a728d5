//! How many replicas a service's load asks for, stabilised so the count does not flap.
//!
//! Each call makes a **recommendation** from the load the gateways report:
//! `ceil((in_flight + queued) / target_in_flight)`; when a latency objective is set and
//! the p95 passes it while replicas run, at least one more than now; within
//! `[min, max]`; and with `min = 0`, at least 1 while any request was seen in the last
//! `idle_to_zero_ms`.
//!
//! The desired count then moves as Kubernetes' HPA moves it with stabilisation windows:
//! it **rises** to the lowest recommendation of the last `up_window_ms` (0: at once, so
//! only a rise that held for the whole window counts), and **falls** to the highest
//! recommendation of the last `down_window_ms` (a dip must last the whole window), so a
//! noisy load does not flap.
//!
//! Scale to and from zero follow Knative's KPA: the last replica goes only once no
//! request was seen for `idle_to_zero_ms` (the idle time is that step's window: the down
//! window does not delay it further), and a service at zero with requests queued (held
//! at a gateway for a replica) scales up at once, without the up window.
//!
//! Before its first call the autoscaler has seen nothing: it treats its starting count
//! as recommended, and load as seen, at that first call, so a restart of the server
//! neither scales up at once nor drops idle replicas before the windows pass.
//! Recommendations older than both windows are pruned: memory is bounded by the calls
//! within the longer window. No clock: `now_ms` is an argument.

use std::collections::VecDeque;

/// How a service scales on load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AutoscaleRule {
    pub min: u32,
    pub max: u32,
    /// Requests in flight (at replicas or queued at gateways) one replica should carry.
    pub target_in_flight: f64,
    /// Scale up as for load when the gateways' p95 latency passes this.
    pub latency_p95_ms: Option<u64>,
    pub up_window_ms: u64,
    pub down_window_ms: u64,
    /// With `min = 0`: how long without any request before the last replica goes.
    pub idle_to_zero_ms: u64,
}

/// The load the gateways report now, summed over them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Load {
    /// Requests sent to replicas and not answered yet.
    pub in_flight: u32,
    /// Requests waiting in gateways (batch queues, held for a replica to start).
    pub queued: u32,
    /// The p95 latency of the requests answered lately, ms.
    pub p95_ms: Option<f64>,
}

/// One service's autoscaler: the recommendations within its windows, when load was
/// last seen, and the count it desires now.
#[derive(Clone, Debug, PartialEq)]
pub struct Autoscaler {
    /// (time, recommendation), oldest first.
    samples: VecDeque<(u64, u32)>,
    /// When a request was last seen (in flight or queued).
    last_seen_ms: Option<u64>,
    current: u32,
    started: bool,
}

impl Autoscaler {
    /// An autoscaler whose service runs `current` replicas.
    pub fn new(current: u32) -> Self {
        Autoscaler {
            samples: VecDeque::new(),
            last_seen_ms: None,
            current,
            started: false,
        }
    }

    /// The count it desires now (the last [`Autoscaler::desired`]).
    pub fn current(&self) -> u32 {
        self.current
    }

    /// Recommendations kept (for the tests of its bound).
    #[cfg(test)]
    pub(super) fn history(&self) -> usize {
        self.samples.len()
    }

    /// The desired count at `now_ms` with `load` (see the module's doc). Calls come
    /// with times that do not go back; an earlier time is taken as the latest seen.
    pub fn desired(&mut self, rule: &AutoscaleRule, load: Load, now_ms: u64) -> u32 {
        let now_ms = self.samples.back().map_or(now_ms, |&(t, _)| now_ms.max(t));
        if !self.started {
            self.started = true;
            self.samples.push_back((now_ms, self.current));
            if self.current > 0 {
                self.last_seen_ms = Some(now_ms);
            }
        }
        let requests = u64::from(load.in_flight) + u64::from(load.queued);
        if requests > 0 {
            self.last_seen_ms = Some(now_ms);
        }
        let rec = self.recommend(rule, load, requests, now_ms);
        self.samples.push_back((now_ms, rec));
        let keep = rule.up_window_ms.max(rule.down_window_ms);
        while self
            .samples
            .front()
            .is_some_and(|&(t, _)| now_ms - t > keep)
        {
            self.samples.pop_front();
        }
        // The lowest recommendation of the up window and the highest of the down window
        // (a window of 0: this one alone).
        let within = |w: u64| {
            let samples = self.samples.iter().filter(move |&&(t, _)| now_ms - t <= w);
            samples.map(|s| s.1).filter(move |_| w > 0)
        };
        let up = within(rule.up_window_ms).min().unwrap_or(rec).min(rec);
        let down = within(rule.down_window_ms).max().unwrap_or(rec).max(rec);
        let mut next = self.current.max(up).min(down);
        if self.current == 0 && load.queued > 0 {
            next = rec; // a request is held: no up window
        }
        if rec == 0 && rule.min == 0 {
            next = 0; // idle for idle_to_zero_ms: the idle time was the window
        }
        self.current = next;
        next
    }

    /// This call's recommendation.
    fn recommend(&self, rule: &AutoscaleRule, load: Load, requests: u64, now_ms: u64) -> u32 {
        let target = if rule.target_in_flight > 0.0 {
            rule.target_in_flight
        } else {
            1.0
        };
        // A float to u32 saturates; the clamp bounds it anyway.
        let mut raw = (requests as f64 / target).ceil() as u32;
        let slow = matches!((rule.latency_p95_ms, load.p95_ms),
            (Some(objective), Some(p95)) if p95 > objective as f64);
        if slow && self.current > 0 {
            raw = raw.max(self.current.saturating_add(1));
        }
        let max = rule.max.max(rule.min);
        let mut rec = raw.clamp(rule.min, max);
        let recent = self
            .last_seen_ms
            .is_some_and(|t| now_ms - t < rule.idle_to_zero_ms);
        if rec == 0 && recent {
            rec = 1.min(max);
        }
        rec
    }
}
