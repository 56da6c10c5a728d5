//! A service replica's probes while its attempt runs (`Launch::serve`, protocol 5):
//! readiness, whose changes are reported (`Ready`), and liveness, whose
//! `failure_threshold` failures in a row stop the attempt as a cancel would, to end
//! `Unhealthy`. They run on a task of their own, so a slow or silent replica never
//! holds up the agent's polls, reports or other jobs; the supervisor stops them when
//! the attempt's processes have ended, before its end is reported, and nothing they
//! send comes after that.

use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use gpusched_wire::service::{Probe, ServeLaunch};
use gpusched_wire::{AttemptRef, RunEventKind};
use tokio::time::{interval_at, Instant, MissedTickBehavior};

use super::running::{Running, Stop};
use super::{event, EventSink};
use crate::probe::{probe, Failures, Kind};

/// Readiness as reported: a change at the first success, and at `failure_threshold`
/// failures in a row while ready; nothing else. Never ready, never reported.
#[derive(Debug)]
pub(super) struct Readiness {
    ready: bool,
    failures: u32,
    threshold: u32,
}

impl Readiness {
    pub(super) fn new(threshold: u32) -> Self {
        Readiness {
            ready: false,
            failures: 0,
            threshold: threshold.max(1),
        }
    }

    /// Takes one probe's result; returns the change to report, if any.
    pub(super) fn note(&mut self, result: &Result<(), String>) -> Option<RunEventKind> {
        match result {
            Ok(()) => {
                self.failures = 0;
                (!self.ready).then(|| {
                    self.ready = true;
                    RunEventKind::Ready {
                        ready: true,
                        message: None,
                    }
                })
            }
            Err(why) => {
                self.failures = self.failures.saturating_add(1);
                (self.ready && self.failures >= self.threshold).then(|| {
                    self.ready = false;
                    RunEventKind::Ready {
                        ready: false,
                        message: Some(why.clone()),
                    }
                })
            }
        }
    }
}

/// Liveness failures in a row; at the threshold, the message the attempt ends with.
#[derive(Debug)]
pub(super) struct Liveness {
    failures: u32,
    threshold: u32,
}

impl Liveness {
    pub(super) fn new(threshold: u32) -> Self {
        Liveness {
            failures: 0,
            threshold: threshold.max(1),
        }
    }

    pub(super) fn note(&mut self, result: &Result<(), String>) -> Option<String> {
        match result {
            Ok(()) => {
                self.failures = 0;
                None
            }
            Err(why) => {
                self.failures = self.failures.saturating_add(1);
                (self.failures >= self.threshold).then(|| {
                    format!(
                        "liveness probe failed {} times in a row: {why}",
                        self.failures
                    )
                })
            }
        }
    }
}

/// What the probes of one replica need.
pub(super) struct Replica {
    pub attempt: AttemptRef,
    pub port: u16,
    pub serve: ServeLaunch,
    pub events: EventSink,
    pub running: Running,
    pub failures: Failures,
}

/// The probes of one running replica; [`Watching::stop`] ends them.
pub(super) struct Watching {
    /// Set (under the lock) when the attempt ends: a probe reports only while it is
    /// not, holding the lock as it does, so no report follows the attempt's end.
    ended: Arc<Mutex<bool>>,
    task: tokio::task::JoinHandle<()>,
}

impl Watching {
    /// Starts probing on `runtime`, from now.
    pub(super) fn start(runtime: &tokio::runtime::Handle, r: Replica) -> Watching {
        let ended = Arc::new(Mutex::new(false));
        let task = runtime.spawn(watch(r, ended.clone()));
        Watching { ended, task }
    }

    /// Stops probing; nothing is reported after this returns.
    pub(super) fn stop(self) {
        *self.ended.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.task.abort();
    }
}

async fn watch(r: Replica, ended: Arc<Mutex<bool>>) {
    let started = Instant::now();
    // No readiness probe given: ready once the port accepts a connection.
    let readiness = r.serve.readiness.clone().unwrap_or_default();
    let ready = {
        let mut state = Readiness::new(readiness.failure_threshold);
        let (r, ended) = (&r, &ended);
        every(started, &readiness, r.port, move |result| {
            if result.is_err() {
                r.failures.inc(Kind::Readiness);
            }
            if let Some(change) = state.note(&result) {
                let ended = ended.lock().unwrap_or_else(PoisonError::into_inner);
                if *ended {
                    return ControlFlow::Break(());
                }
                (r.events)(event(r.attempt, change));
            }
            ControlFlow::Continue(())
        })
    };
    let live = async {
        let Some(liveness) = r.serve.liveness.clone() else {
            return;
        };
        let mut state = Liveness::new(liveness.failure_threshold);
        every(started, &liveness, r.port, |result| {
            if result.is_err() {
                r.failures.inc(Kind::Liveness);
            }
            match state.note(&result) {
                Some(message) => {
                    tracing::warn!(
                        job = r.attempt.job,
                        attempt = r.attempt.attempt,
                        "stopping the replica: {message}"
                    );
                    // The cancel's path (SIGTERM, grace, SIGKILL, its cgroup); a stop
                    // already under way keeps its own outcome.
                    r.running.stop(r.attempt, Stop::Unhealthy(message));
                    // It is stopping: more failures would say nothing new.
                    ControlFlow::Break(())
                }
                None => ControlFlow::Continue(()),
            }
        })
        .await;
    };
    tokio::join!(ready, live);
}

/// Probes `port` as `p` says, from `initial_delay_s` after `started` then every
/// `period_s` (a probe slower than the period delays the next, never overlaps it),
/// handing each result to `take` until it says to stop.
async fn every(
    started: Instant,
    p: &Probe,
    port: u16,
    mut take: impl FnMut(Result<(), String>) -> ControlFlow<()>,
) {
    let first = started + Duration::from_secs(u64::from(p.initial_delay_s));
    let mut ticks = interval_at(first, Duration::from_secs(u64::from(p.period_s.max(1))));
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if take(probe(port, p).await).is_break() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Result<(), String> {
        Ok(())
    }

    fn fail(n: u32) -> Result<(), String> {
        Err(format!("status 50{n}"))
    }

    fn ready(yes: bool, message: Option<&str>) -> Option<RunEventKind> {
        Some(RunEventKind::Ready {
            ready: yes,
            message: message.map(String::from),
        })
    }

    #[test]
    fn readiness_reports_changes_only_after_the_threshold_while_ready() {
        let mut r = Readiness::new(3);
        // Failures before the first success are not news: it was never ready.
        for n in 0..5 {
            assert_eq!(r.note(&fail(n)), None);
        }
        assert_eq!(r.note(&ok()), ready(true, None));
        assert_eq!(r.note(&ok()), None);
        // Two failures, then a success: the streak is broken, nothing to say.
        assert_eq!(r.note(&fail(1)), None);
        assert_eq!(r.note(&fail(2)), None);
        assert_eq!(r.note(&ok()), None);
        assert_eq!(r.note(&fail(1)), None);
        assert_eq!(r.note(&fail(2)), None);
        assert_eq!(r.note(&fail(3)), ready(false, Some("status 503")));
        // Once not ready, more failures say nothing; the next success does.
        assert_eq!(r.note(&fail(4)), None);
        assert_eq!(r.note(&ok()), ready(true, None));
    }

    #[test]
    fn a_threshold_of_one_flips_at_the_first_failure() {
        let mut r = Readiness::new(1);
        assert_eq!(r.note(&ok()), ready(true, None));
        assert_eq!(r.note(&fail(0)), ready(false, Some("status 500")));
        // 0 is read as 1 (the server refuses it; this is defence).
        let mut r = Readiness::new(0);
        assert_eq!(r.note(&ok()), ready(true, None));
        assert_eq!(r.note(&fail(0)), ready(false, Some("status 500")));
    }

    #[test]
    fn liveness_stops_at_the_threshold_of_failures_in_a_row_naming_the_last() {
        let mut l = Liveness::new(3);
        assert_eq!(l.note(&fail(1)), None);
        assert_eq!(l.note(&fail(2)), None);
        assert_eq!(l.note(&ok()), None);
        assert_eq!(l.note(&fail(1)), None);
        assert_eq!(l.note(&fail(2)), None);
        assert_eq!(
            l.note(&fail(3)).as_deref(),
            Some("liveness probe failed 3 times in a row: status 503")
        );
    }
}
