//! The lease on the node's jobs: counted from the last request the server answered;
//! when it runs out, every running job is fenced (stopped and reported lost).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpusched_wire::{AttemptRef, Registered};
use tokio::sync::watch;

use super::checkpoints::report_checkpoints;
use super::Shared;

/// How long the server may be silent before this agent stops its jobs: the node lease
/// the server announced, less the time a fenced job takes to stop (its short grace and
/// a margin; a quarter of a lease too short for that), so they are gone before the
/// server, counting the same lease from the request it received (never before this
/// agent sent it), requeues them. The server holds a poll at most an eighth of the
/// lease, so a live server is never silent that long between two answers. A server that
/// announces no lease (an older release) requeues after its heartbeat timeout: half of
/// that, as before.
pub(super) fn fence_after(reg: &Registered) -> Duration {
    match reg.lease_ms {
        Some(ms) => {
            let lease = Duration::from_millis(ms);
            lease.saturating_sub(FENCE_MARGIN.min(lease / 4))
        }
        None => Duration::from_millis(reg.heartbeat_timeout_ms / 2),
    }
}

/// What a fence takes before its jobs are gone: their grace before SIGKILL, and a margin
/// for a busy machine.
const FENCE_MARGIN: Duration = Duration::from_secs(crate::launcher::FENCE_GRACE.as_secs() + 5);

/// The server answered a request sent at `sent`: the lease counts from then (the latest
/// such time wins; an answer to an older request does not move it back).
pub(super) fn heard(sh: &Shared, sent: Instant) {
    let mut last = sh.last_contact.lock().unwrap_or_else(|p| p.into_inner());
    if sent > *last {
        *last = sent;
    }
}

/// Fences the node: when no poll has succeeded for the lease, every running attempt is
/// stopped and reported lost, because the server is about to requeue it elsewhere.
pub(super) async fn guard_lease(sh: Arc<Shared>, lease: watch::Receiver<Duration>) {
    let mut checkpoints: BTreeMap<AttemptRef, u64> = BTreeMap::new();
    let mut tick = 0u32;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        tick += 1;
        if tick.is_multiple_of(8) {
            report_checkpoints(&sh, &mut checkpoints);
        }
        let limit = *lease.borrow();
        let silent = sh
            .last_contact
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed();
        if silent > limit && !sh.launcher.running().is_empty() {
            let why = format!(
                "the agent heard nothing from the server for {:.0} s and stopped the job so it \
                 does not run twice when the server requeues it",
                silent.as_secs_f64()
            );
            tracing::warn!("{why}");
            sh.launcher.fence(&why);
        }
    }
}
