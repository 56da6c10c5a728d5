//! What the agent has sampled and not yet told the server: the latest sample of each
//! GPU (each report carries them, replacing the server's), and the Xid events, which
//! accumulate until a report carrying them is acknowledged, so each reaches the server
//! exactly once even when reports fail.
//!
//! When a report is due: whenever one goes out anyway (job events), telemetry rides on
//! it; a pass that finds no report went out since the pass before makes one due on its
//! own, so the server hears from every node at least once per interval and never more
//! than once per pass on telemetry's account. A new Xid or a GPU that just fell off
//! makes a report due at once: the server takes such GPUs out of placement.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use gpusched_wire::{GpuSample, NodeTelemetry, XidEvent};

use crate::gpu::GpuReading;

#[derive(Default)]
pub struct Telemetry {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The latest sample per GPU, without Xids.
    latest: BTreeMap<u32, GpuSample>,
    /// Xids not yet acknowledged, oldest first, per GPU.
    xids: BTreeMap<u32, Vec<XidEvent>>,
    /// Passes so far.
    pass: u64,
    /// The pass that made a report due, until a report sent at or after it is acked.
    due_since: Option<u64>,
    /// When the last report was acknowledged, and when the previous pass ran.
    last_sent: Option<Instant>,
    prev_pass: Option<Instant>,
}

/// What one report carried, to acknowledge.
#[derive(Clone, Debug, Default)]
pub struct Sent {
    pass: u64,
    /// How many Xids of each GPU went out (the oldest ones: Xids are only appended).
    xids: BTreeMap<u32, usize>,
}

impl Telemetry {
    /// Takes one pass's readings; whether a report is now due.
    pub fn record(&self, readings: &[GpuReading], now: Instant) -> bool {
        let mut s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        s.pass += 1;
        let mut urgent = false;
        for r in readings {
            let mut sample = r.to_wire();
            let xids = std::mem::take(&mut sample.xids);
            urgent |= !xids.is_empty();
            if !xids.is_empty() {
                s.xids.entry(r.index).or_default().extend(xids);
            }
            let was_lost = s.latest.get(&r.index).is_some_and(|l| l.lost);
            urgent |= r.lost && !was_lost;
            s.latest.insert(r.index, sample);
        }
        // Quiet: nothing acknowledged since the pass before; the first pass always is
        // (whatever went out before it carried no samples).
        let quiet = match (s.last_sent, s.prev_pass) {
            (Some(sent), Some(prev)) => sent <= prev,
            _ => true,
        };
        s.prev_pass = Some(now);
        if (urgent || quiet) && !s.latest.is_empty() && s.due_since.is_none() {
            s.due_since = Some(s.pass);
        }
        s.due_since.is_some()
    }

    /// Whether a report should go out for telemetry's sake.
    pub fn due(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .due_since
            .is_some()
    }

    /// The samples to send (each GPU's latest, with its unacknowledged Xids); `None`
    /// before the first pass.
    pub fn snapshot(&self) -> Option<(NodeTelemetry, Sent)> {
        let s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if s.latest.is_empty() {
            return None;
        }
        let mut sent = Sent {
            pass: s.pass,
            xids: BTreeMap::new(),
        };
        let gpus = s
            .latest
            .iter()
            .map(|(index, sample)| {
                let mut sample = sample.clone();
                if let Some(x) = s.xids.get(index).filter(|x| !x.is_empty()) {
                    sample.xids = x.clone();
                    sent.xids.insert(*index, x.len());
                }
                sample
            })
            .collect();
        Some((NodeTelemetry { gpus }, sent))
    }

    /// The server acknowledged a report carrying `sent` (or, `None`, carrying no
    /// telemetry): its Xids are delivered, and a report due since before it is done.
    pub fn acknowledged(&self, sent: Option<&Sent>, now: Instant) {
        let mut s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        s.last_sent = Some(now);
        let Some(sent) = sent else {
            return;
        };
        for (index, n) in &sent.xids {
            if let Some(x) = s.xids.get_mut(index) {
                x.drain(..(*n).min(x.len()));
            }
        }
        s.xids.retain(|_, x| !x.is_empty());
        if s.due_since.is_some_and(|p| p <= sent.pass) {
            s.due_since = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn reading(index: u32, xid: Option<u64>, lost: bool) -> GpuReading {
        GpuReading {
            index,
            at_ms: 1,
            lost,
            temp_c: (!lost).then_some(35),
            xids: xid
                .map(|code| vec![XidEvent { code, at_ms: 1 }])
                .unwrap_or_default(),
            ..GpuReading::default()
        }
    }

    #[test]
    fn a_report_is_due_once_per_quiet_interval_and_at_once_for_an_xid() {
        let t = Telemetry::default();
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        assert!(t.snapshot().is_none());
        // A report (job events) before any pass carries no samples.
        t.acknowledged(None, at(0));
        // The first pass: due (the server has nothing yet).
        assert!(t.record(&[reading(0, None, false)], at(0)));
        let (tel, sent) = t.snapshot().unwrap();
        assert_eq!(tel.gpus.len(), 1);
        t.acknowledged(Some(&sent), at(1));
        assert!(!t.due());
        // A report went out since the pass before: not due.
        assert!(!t.record(&[reading(0, None, false)], at(5)));
        // None since the pass before: due.
        assert!(t.record(&[reading(0, None, false)], at(10)));
        // An event report carrying it settles it.
        let (_, sent) = t.snapshot().unwrap();
        t.acknowledged(Some(&sent), at(11));
        assert!(!t.due());
        assert!(!t.record(&[reading(0, None, false)], at(15)));
        // An Xid or a GPU lost now is due at once, even right after a report.
        t.acknowledged(None, at(16));
        assert!(t.record(&[reading(0, Some(79), false)], at(20)));
        let (_, sent) = t.snapshot().unwrap();
        t.acknowledged(Some(&sent), at(21));
        assert!(t.record(&[reading(0, None, true)], at(25)));
        let (_, sent) = t.snapshot().unwrap();
        t.acknowledged(Some(&sent), at(26));
        assert!(
            !t.record(&[reading(0, None, true)], at(30)),
            "still lost: no news"
        );
    }

    #[test]
    fn xids_accumulate_until_a_report_carrying_them_is_acknowledged() {
        let t = Telemetry::default();
        let now = Instant::now();
        t.record(&[reading(0, Some(79), false), reading(1, None, false)], now);
        // A report that failed: sent, never acknowledged.
        let (first, _) = t.snapshot().unwrap();
        assert_eq!(first.gpus[0].xids.len(), 1);
        t.record(&[reading(0, Some(48), false), reading(1, None, false)], now);
        let (tel, sent) = t.snapshot().unwrap();
        let codes: Vec<u64> = tel.gpus[0].xids.iter().map(|x| x.code).collect();
        assert_eq!(codes, [79, 48]);
        assert!(tel.gpus[1].xids.is_empty());
        // A third arrives while that report is in flight: it stays for the next one.
        t.record(&[reading(0, Some(31), false)], now);
        t.acknowledged(Some(&sent), now);
        let (tel, sent) = t.snapshot().unwrap();
        let codes: Vec<u64> = tel.gpus[0].xids.iter().map(|x| x.code).collect();
        assert_eq!(codes, [31]);
        t.acknowledged(Some(&sent), now);
        let (tel, _) = t.snapshot().unwrap();
        assert!(tel.gpus.iter().all(|g| g.xids.is_empty()));
    }
}
