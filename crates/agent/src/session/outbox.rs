//! The outbox: events not yet acknowledged by the server, and the reporter that sends
//! them (with the latest GPU samples) until they are, making the ends durable first.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpusched_wire::{AttemptRef, Report, RunEvent, RunEventKind};
use reqwest::StatusCode;
use tokio::sync::{mpsc, watch};

use super::client::{send, Backoff};
use super::Shared;

/// Events not yet acknowledged by the server, oldest first, each with whether the
/// server needs it soon, and a counter that wakes the reporter whenever one is added.
#[derive(Clone)]
pub(super) struct Outbox {
    pub(super) events: Arc<Mutex<Vec<(RunEvent, bool)>>>,
    pub(super) wake: watch::Sender<u64>,
}

/// The shortest time between two reports that carry nothing urgent: starts, and ends
/// whose GPUs a queued attempt took at once (`follow.rs`). Those ride together, so a
/// node turning over many short jobs costs the server one round per this interval, not
/// one per job; an end that leaves GPUs idle, a checkpoint or a port goes at once.
const ROUTINE_REPORT_EVERY: Duration = Duration::from_millis(20);

impl Outbox {
    /// Adds an event the server needs soon: the reporter sends it at once.
    pub(super) fn push(&self, ev: RunEvent) {
        self.push_as(ev, true);
    }

    /// Adds an event; a routine one (`urgent` false) may wait for others, up to
    /// [`ROUTINE_REPORT_EVERY`].
    pub(super) fn push_as(&self, ev: RunEvent, urgent: bool) {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((ev, urgent));
        self.wake.send_modify(|n| *n += 1);
    }

    pub(super) fn snapshot(&self) -> Vec<RunEvent> {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(e, _)| e.clone())
            .collect()
    }

    /// Whether any event waiting is urgent.
    pub(super) fn urgent(&self) -> bool {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|(_, u)| *u)
    }

    /// Drops `sent` (a prefix-ordered subsequence of the outbox) once acknowledged.
    pub(super) fn remove(&self, sent: &[RunEvent]) {
        let mut out = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let mut k = 0;
        out.retain(|(e, _)| {
            let acked = k < sent.len() && *e == sent[k];
            if acked {
                k += 1;
            }
            !acked
        });
    }
}

/// Sends the outbox whenever it grows, until acknowledged.
pub(super) async fn reporter(
    sh: Arc<Shared>,
    mut wake: watch::Receiver<u64>,
    mut instance: watch::Receiver<String>,
    rereg: mpsc::UnboundedSender<()>,
) {
    let mut backoff = Backoff::new();
    // When the last report went out: routine events wait for the next interval.
    let mut last_sent: Option<Instant> = None;
    loop {
        let events: Vec<RunEvent> = sh.outbox.snapshot();
        let inst = instance.borrow().clone();
        let due = sh.telemetry.due();
        if (events.is_empty() && !due) || inst.is_empty() {
            tokio::select! {
                r = wake.changed() => if r.is_err() { return },
                r = instance.changed() => if r.is_err() { return },
            }
            continue;
        }
        let wait = last_sent
            .map(|t| ROUTINE_REPORT_EVERY.saturating_sub(t.elapsed()))
            .filter(|w| !w.is_zero() && !due && !sh.outbox.urgent());
        if let Some(wait) = wait {
            // Only routine events: let more gather, unless an urgent one comes.
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                r = wake.changed() => if r.is_err() { return },
            }
            continue;
        }
        last_sent = Some(Instant::now());
        // The ends it carries are durable before the server hears of them.
        sync_journal(&sh).await;
        let (telemetry, sent) = sh.telemetry.snapshot().unzip();
        let body = Report {
            node: sh.cfg.name.clone(),
            instance: inst,
            events: events.clone(),
            telemetry,
            leaving: false,
        };
        let compact = sh.compact.load(std::sync::atomic::Ordering::SeqCst);
        let req = |url: String| {
            let r = sh.http.post(url).timeout(Duration::from_secs(30));
            match compact.then(|| gpusched_wire::agent::to_msgpack(&body)) {
                Some(Ok(bytes)) => r
                    .header(reqwest::header::CONTENT_TYPE, gpusched_wire::agent::MSGPACK)
                    .body(bytes),
                _ => r.json(&body),
            }
        };
        match send(&sh, "/api/agent/report", req).await {
            Ok(r) if r.status().is_success() => {
                backoff.reset();
                acknowledge(&sh, &events);
                sh.telemetry.acknowledged(sent.as_ref(), Instant::now());
                sh.metrics.reported(!events.is_empty());
                continue;
            }
            Ok(r) if r.status() == StatusCode::CONFLICT => {
                let _ = rereg.send(());
                // Registration carries the outbox; wait for the new instance.
                let _ = instance.changed().await;
                continue;
            }
            Ok(r) => {
                let status = r.status();
                tracing::warn!(
                    "report refused ({status}): {}",
                    r.text().await.unwrap_or_default()
                );
            }
            Err(e) => backoff.note(&sh.servers.shown(), &e, sh.cfg.ca_cert.as_deref()),
        }
        backoff.sleep().await;
    }
}

/// Makes the journal durable (the outcomes appended since the last sync) on a blocking
/// thread, if anything is left to sync: once per report, not once per job. A failure is
/// logged; the report still goes (the outcome is in the journal, only not yet synced).
pub(super) async fn sync_journal(sh: &Shared) {
    if !sh.launcher.records().unsynced() {
        return;
    }
    let dir = sh.launcher.records().clone();
    match tokio::task::spawn_blocking(move || dir.sync()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::error!("cannot sync the agent's journal: {e}"),
        Err(e) => tracing::error!("cannot sync the agent's journal: {e}"),
    }
}

/// Drops acknowledged events from the outbox and marks ended attempts acked on disk.
pub(super) fn acknowledge(sh: &Shared, sent: &[RunEvent]) {
    if sent.is_empty() {
        return;
    }
    sh.outbox.remove(sent);
    for e in sent {
        if let RunEventKind::Ended { .. } = e.event {
            let a = AttemptRef {
                job: e.job,
                attempt: e.attempt,
            };
            sh.launched_gpus
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&a);
            sh.followers.acked(a, sh.launcher.records().ack_mark());
            if !sh.launcher.seen(a) {
                continue; // cancelled before it arrived: no directory to mark
            }
            if let Err(err) = sh.launcher.mark_acked(a) {
                tracing::warn!(job = e.job, "cannot mark the attempt acknowledged: {err}");
            }
        }
    }
}
