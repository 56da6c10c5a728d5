//! `MASTER_PORT` reservations: a port held for each gang whose first part runs here,
//! reported through the outbox.

use std::collections::BTreeSet;

use gpusched_wire::{AttemptRef, Desired, RunEvent, RunEventKind};

use super::Shared;
use crate::clock::now_ms;

/// Holds a port for each gang whose first part runs here and reports it
/// (`PortReserved`, through the outbox like every event); a repeated order reports the
/// same port. Ports no longer asked for (the attempt started, was cancelled, or left
/// the desired state) are let go.
pub(super) fn reserve_ports(sh: &Shared, d: &Desired) {
    let asked: BTreeSet<AttemptRef> = d
        .reserve_ports
        .iter()
        .copied()
        .filter(|a| !sh.launcher.seen(*a))
        .collect();
    for a in sh.launcher.ports().retain(|a| asked.contains(&a)) {
        tracing::debug!(
            job = a.job,
            attempt = a.attempt,
            "port released: no longer asked for"
        );
    }
    if asked.is_empty() {
        return;
    }
    let addr = sh.launcher.advertise_addr();
    let pending = sh.outbox.snapshot();
    for a in asked {
        let port = match sh.launcher.ports().reserve(a, &addr) {
            Ok(port) => port,
            Err(e) => {
                // The server asks again at the next poll.
                tracing::warn!(
                    job = a.job,
                    attempt = a.attempt,
                    "cannot reserve MASTER_PORT: {e}"
                );
                continue;
            }
        };
        let event = RunEventKind::PortReserved { port };
        let queued = pending
            .iter()
            .any(|e| e.job == a.job && e.attempt == a.attempt && e.event == event);
        if !queued {
            sh.outbox.push(RunEvent {
                job: a.job,
                attempt: a.attempt,
                at_ms: now_ms(),
                event,
            });
        }
    }
}
