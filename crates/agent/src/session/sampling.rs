//! GPU telemetry: the sampling loop that reads the GPUs every interval for the metrics
//! and the reports.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpusched_wire::AttemptRef;

use super::Shared;
use crate::clock::now_ms;

/// Samples the GPUs every `interval` on a blocking thread (NVML calls block), hands
/// the readings to the metrics and the telemetry, and wakes the reporter when a report
/// is due.
pub(super) async fn sample_loop(sh: Arc<Shared>, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let busy = busy_gpus(&sh);
        let began = Instant::now();
        let pass = {
            let sh = sh.clone();
            tokio::task::spawn_blocking(move || {
                sh.cfg.control.sample(&sh.cfg.gpus, &busy, now_ms())
            })
        };
        let readings = match pass.await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("a GPU telemetry pass failed: {e}");
                continue;
            }
        };
        sh.metrics.observe(&readings, began.elapsed().as_secs_f64());
        if sh.telemetry.record(&readings, Instant::now()) {
            sh.outbox.wake.send_modify(|n| *n += 1);
        }
    }
}

/// The GPUs running attempts hold now.
fn busy_gpus(sh: &Shared) -> BTreeSet<u32> {
    let running: BTreeSet<AttemptRef> = sh.launcher.running().into_iter().collect();
    let mut launched = sh.launched_gpus.lock().unwrap_or_else(|p| p.into_inner());
    launched.retain(|a, _| running.contains(a));
    launched.values().flatten().copied().collect()
}
