//! The drain when the agent is told to stop: every job stopped and its end delivered,
//! then the server told the node is leaving.

use std::time::{Duration, Instant};

use gpusched_wire::Report;

use super::client::send;
use super::outbox::sync_journal;
use super::Shared;

/// The most a stopping agent waits for its jobs' graces (a job's own grace bounds it;
/// this only guards against a supervisor that never ends).
const DRAIN_JOBS: Duration = Duration::from_secs(15 * 60);

/// The most a stopping agent waits for the server to acknowledge the ends; what is not
/// acknowledged by then is journalled and reported by the next agent life.
const DRAIN_REPORT: Duration = Duration::from_secs(10);

/// The agent was told to stop: every job is stopped with its grace and ends `Stopped`,
/// and the ends are delivered before the agent goes. No new job starts meanwhile (the
/// poll loop is no longer running). Then the server of `instance` is told the node is
/// leaving, so it places nothing more here.
pub(super) async fn drain(sh: &Shared, instance: Option<&str>) -> anyhow::Result<()> {
    // No attempt queued behind another starts while the agent stops its jobs.
    sh.followers.stop();
    sh.steps.stop_all();
    let running = sh.launcher.running();
    if !running.is_empty() {
        tracing::warn!(
            jobs = running.len(),
            "stopping: sending SIGTERM to every job (SIGKILL after its grace); they are requeued"
        );
        sh.launcher
            .stop_all("the agent was stopped (SIGTERM or SIGINT); the job goes back in the queue");
    }
    let began = Instant::now();
    while !sh.launcher.running().is_empty() && began.elapsed() < DRAIN_JOBS {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let began = Instant::now();
    while !sh.outbox.snapshot().is_empty() && began.elapsed() < DRAIN_REPORT {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // What the server did not confirm is reported by the next life: on disk by then.
    sync_journal(sh).await;
    let left = sh.outbox.snapshot().len();
    if left > 0 {
        tracing::warn!(
            events = left,
            "the server did not confirm every job's end before the agent stopped; the next \
             agent start reports them"
        );
    } else if let Some(instance) = instance {
        leave(sh, instance).await;
    }
    Ok(())
}

/// Tells the server this node runs nothing and is going (best effort, bounded: a server
/// that does not hear it takes the node out after the heartbeat timeout instead).
async fn leave(sh: &Shared, instance: &str) {
    let body = Report {
        node: sh.cfg.name.clone(),
        instance: instance.to_string(),
        events: Vec::new(),
        telemetry: None,
        leaving: true,
    };
    let req = |url: String| {
        sh.http
            .post(url)
            .json(&body)
            .timeout(Duration::from_secs(3))
    };
    match send(sh, "/api/agent/report", req).await {
        Ok(r) if r.status().is_success() => tracing::info!("told the server this node is leaving"),
        Ok(r) => tracing::debug!("the server did not take the node's leave ({})", r.status()),
        Err(e) => tracing::debug!("could not tell the server this node is leaving: {e}"),
    }
}
