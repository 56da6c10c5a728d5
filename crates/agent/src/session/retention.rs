//! The retention timer: ended jobs' logs and expired checkpoint directories swept on a
//! blocking thread (what is kept is decided in [`crate::retention`]).

use std::sync::Arc;

use super::Shared;
use crate::clock::now_ms;

/// Sweeps ended jobs' logs and expired checkpoint directories on a timer (see
/// [`crate::retention::Policy::sweep_every`]; the first sweep at start).
pub(super) async fn retention_loop(sh: Arc<Shared>) {
    // Even with both limits off, the count bound (`MAX_ENDED_WITH_LOGS`) applies.
    let policy = sh.cfg.retention;
    let mut tick = tokio::time::interval(policy.sweep_every());
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let dir = sh.launcher.records().clone();
        let swept =
            tokio::task::spawn_blocking(move || crate::retention::sweep(&dir, &policy, now_ms()))
                .await;
        match swept {
            Ok(s) if s.attempts > 0 || s.checkpoint_dirs > 0 => tracing::info!(
                attempts = s.attempts,
                bytes = s.bytes,
                checkpoint_dirs = s.checkpoint_dirs,
                "log retention removed the logs of ended jobs"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!("a log retention sweep failed: {e}"),
        }
    }
}
