//! A service's status in words: the core says what the service is doing
//! (`ServiceStatus`), the server says it.

use gpusched_core::services::ServiceStatus;
use gpusched_wire::count;

/// What the service is doing or waiting for; `last_failure` says what went wrong when
/// it backs off; `alive` is how many of its replicas have not ended.
pub(super) fn status(
    s: &ServiceStatus,
    now_ms: u64,
    last_failure: Option<&str>,
    alive: u32,
) -> String {
    match *s {
        ServiceStatus::Steady { ready } => format!("serving: {ready} of {ready} ready"),
        ServiceStatus::ScaledToZero => {
            "scaled to zero: the first request through a gateway starts a replica".into()
        }
        ServiceStatus::Starting { ready, desired } => {
            format!("starting: {ready} of {desired} ready")
        }
        ServiceStatus::Scaling { live, desired } => {
            format!("scaling from {live} to {desired} replicas")
        }
        ServiceStatus::RollingOut {
            version,
            ready_new,
            desired,
        } => format!("rolling out version {version}: {ready_new} of {desired} ready"),
        ServiceStatus::MovingOffNode {
            moving,
            ready,
            desired,
        } => format!(
            "moving {} off drained or unreachable nodes: {ready} of {desired} ready",
            count(moving, "replica")
        ),
        ServiceStatus::BackingOff { until_ms, failures } => format!(
            "{}; {} in a row, the next starts in {} s",
            last_failure.unwrap_or("a replica failed"),
            count(failures, "failure"),
            until_ms.saturating_sub(now_ms).div_ceil(1000)
        ),
        ServiceStatus::Deleting { left } => format!(
            "deleting: {} to stop, {} still running",
            count(left, "replica"),
            alive.saturating_sub(left)
        ),
    }
}
