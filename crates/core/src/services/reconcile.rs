//! What a service's replicas should do now: start, drain, stop. The server hands in the
//! service's facts, every replica it has (of any version, in any phase) and the time; it
//! creates, drains and cancels as told and calls again when something changes, or at
//! the plan's `wake_ms` at the latest.
//!
//! The rules are Kubernetes' rolling update, counted in replicas:
//! - **Live** replicas are those not draining; a live replica is **current** when it is
//!   of the service's version and its node is not being left (drained or unhealthy),
//!   else **outdated**. A replica on a leaving node is thus replaced like one of an old
//!   version: its replacement starts elsewhere first, and it drains only once enough
//!   are ready.
//! - **Start** `min(desired - current, desired + max_surge - live)` new replicas (never
//!   below 0), `live` counted after this round's stops and drains; without outdated
//!   replicas that is `desired - current`.
//! - An outdated replica that is not ready (waiting or starting) serves nobody: it is
//!   **stopped at once**. An outdated ready one is **drained** (taken out of the
//!   endpoints) only while the ready replicas, old and new, stay at least
//!   `desired - max_unavailable` without it. With `max_surge = 0` that drain is what
//!   makes room for the new replica.
//! - **Scale down** (no outdated replica, more current than desired): the extras go,
//!   waiting ones first (stopped), then starting ones (stopped), then ready ones
//!   (drained), the newest (highest job) first in each.
//! - A **draining** replica is stopped once `drain_ms` has passed since it began
//!   draining, so no new request reaches a stopping replica.
//! - **Back-off**: after `failures` unexpected replica ends in a row, nothing starts
//!   until `last_failure_ms + backoff_ms(failures)`: 1 s, doubling, at most 5 min, like
//!   Kubernetes' CrashLoopBackOff (whose base is 10 s). Drains and stops go on.
//! - **Deleting**: waiting and starting replicas are stopped at once, ready ones
//!   drained, and drained ones stopped after `drain_ms`.
//!
//! Every walk is in job order, so the same facts give the same plan.

/// The first back-off after a failure.
pub const BACKOFF_BASE_MS: u64 = 1_000;
/// The longest back-off.
pub const BACKOFF_CAP_MS: u64 = 300_000;

/// Where a replica is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaPhase {
    /// Pending in its queue, holding nothing.
    Waiting,
    /// Placed or running, not (yet, or no longer) passing its readiness probe.
    Starting,
    /// Passing its readiness probe: in the gateways' endpoints.
    Ready,
    /// Out of the endpoints since `since_ms`; stopped `drain_ms` later.
    Draining { since_ms: u64 },
}

/// One replica of a service, as the server knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplicaFacts {
    pub job: u64,
    /// The service version it runs.
    pub version: u32,
    pub phase: ReplicaPhase,
    /// Its node is drained or unhealthy: move it.
    pub node_leaving: bool,
}

/// A service, as the server knows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServiceFacts {
    /// The current version of its spec.
    pub version: u32,
    /// Replicas wanted now (the autoscaler's, else the spec's).
    pub desired: u32,
    pub max_surge: u32,
    pub max_unavailable: u32,
    pub drain_ms: u64,
    /// Unexpected replica ends in a row (the server resets it when one becomes ready).
    pub failures: u32,
    /// When the last of them happened.
    pub last_failure_ms: Option<u64>,
    /// The service is being deleted: every replica goes.
    pub deleting: bool,
}

/// What the service is doing, for the server to word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceStatus {
    /// Every desired replica is current and ready.
    Steady { ready: u32 },
    /// Scaled to zero: no replica wanted.
    ScaledToZero,
    /// The desired replicas exist but not all are ready yet.
    Starting { ready: u32, desired: u32 },
    /// Current replicas are being added or removed.
    Scaling { live: u32, desired: u32 },
    /// Replicas of an older version are being replaced by `version`'s.
    RollingOut {
        version: u32,
        ready_new: u32,
        desired: u32,
    },
    /// Replicas on drained or unhealthy nodes are being replaced.
    MovingOffNode {
        moving: u32,
        ready: u32,
        desired: u32,
    },
    /// A replica failed: nothing starts until `until_ms`.
    BackingOff { until_ms: u64, failures: u32 },
    /// The service is being deleted; `left` replicas are not stopped yet.
    Deleting { left: u32 },
}

/// What to do now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServicePlan {
    /// New replicas of the current version to create now.
    pub start: u32,
    /// Replicas to take out of the endpoints now (they become draining).
    pub drain: Vec<u64>,
    /// Replicas to cancel now.
    pub stop: Vec<u64>,
    /// Reconcile again at this time at the latest (a drain ends, a back-off ends).
    pub wake_ms: Option<u64>,
    pub status: ServiceStatus,
}

impl ServicePlan {
    fn wake(&mut self, at: u64) {
        self.wake_ms = Some(self.wake_ms.map_or(at, |w| w.min(at)));
    }
}

/// How long nothing starts after `failures` unexpected ends in a row: 0 for none, then
/// 1 s doubling, at most 5 min (Kubernetes' CrashLoopBackOff, with a 10 s base there).
pub fn backoff_ms(failures: u32) -> u64 {
    if failures == 0 {
        return 0;
    }
    let shift = (failures - 1).min(20);
    (BACKOFF_BASE_MS << shift).min(BACKOFF_CAP_MS)
}

fn is_ready(r: &ReplicaFacts) -> bool {
    r.phase == ReplicaPhase::Ready
}

fn count(rs: &[&ReplicaFacts], f: impl Fn(&ReplicaFacts) -> bool) -> u32 {
    rs.iter().filter(|r| f(r)).count() as u32
}

/// The plan for service `s` with `replicas` at `now_ms` (see the module's doc).
pub fn reconcile(s: &ServiceFacts, replicas: &[ReplicaFacts], now_ms: u64) -> ServicePlan {
    let mut sorted: Vec<&ReplicaFacts> = replicas.iter().collect();
    sorted.sort_by_key(|r| r.job);
    let mut plan = ServicePlan {
        start: 0,
        drain: Vec::new(),
        stop: Vec::new(),
        wake_ms: None,
        status: ServiceStatus::Steady { ready: 0 },
    };
    let drain_end = now_ms.saturating_add(s.drain_ms);
    let mut live = Vec::with_capacity(sorted.len());
    for r in sorted {
        match r.phase {
            ReplicaPhase::Draining { since_ms } => {
                let end = since_ms.saturating_add(s.drain_ms);
                if now_ms >= end {
                    plan.stop.push(r.job);
                } else {
                    plan.wake(end);
                }
            }
            _ => live.push(r),
        }
    }
    if s.deleting {
        for r in &live {
            if is_ready(r) {
                plan.drain.push(r.job);
                plan.wake(drain_end);
            } else {
                plan.stop.push(r.job);
            }
        }
        plan.stop.sort_unstable();
        let left = replicas.len().saturating_sub(plan.stop.len()) as u32;
        plan.status = ServiceStatus::Deleting { left };
        return plan;
    }
    let (current, outdated): (Vec<&ReplicaFacts>, Vec<&ReplicaFacts>) = live
        .iter()
        .partition(|r| r.version == s.version && !r.node_leaving);
    let current_live = current.len() as u32;
    let ready_new = count(&current, is_ready);
    let mut ready_total = count(&live, is_ready);
    let floor = s.desired.saturating_sub(s.max_unavailable);
    let mut outdated_kept = 0u32;
    for r in &outdated {
        if !is_ready(r) {
            plan.stop.push(r.job);
        } else if ready_total > floor {
            plan.drain.push(r.job);
            plan.wake(drain_end);
            ready_total -= 1;
        } else {
            outdated_kept += 1;
        }
    }
    let live_after = current_live + outdated_kept;
    let wanted = s.desired.saturating_sub(current_live).min(
        s.desired
            .saturating_add(s.max_surge)
            .saturating_sub(live_after),
    );
    let backoff_until = s
        .last_failure_ms
        .filter(|_| s.failures > 0)
        .map(|t| t.saturating_add(backoff_ms(s.failures)))
        .filter(|&until| now_ms < until);
    match backoff_until {
        Some(until) if wanted > 0 => plan.wake(until),
        _ => plan.start = wanted,
    }
    if outdated.is_empty() && current_live > s.desired {
        scale_down(&current, current_live - s.desired, drain_end, &mut plan);
    }
    plan.stop.sort_unstable();
    plan.status = if let (Some(until_ms), true) = (backoff_until, wanted > 0) {
        ServiceStatus::BackingOff {
            until_ms,
            failures: s.failures,
        }
    } else if outdated.iter().any(|r| r.node_leaving) {
        ServiceStatus::MovingOffNode {
            moving: count(&outdated, |r| r.node_leaving),
            ready: count(&live, is_ready),
            desired: s.desired,
        }
    } else if !outdated.is_empty() {
        ServiceStatus::RollingOut {
            version: s.version,
            ready_new,
            desired: s.desired,
        }
    } else if current_live != s.desired {
        ServiceStatus::Scaling {
            live: current_live,
            desired: s.desired,
        }
    } else if ready_new < s.desired {
        ServiceStatus::Starting {
            ready: ready_new,
            desired: s.desired,
        }
    } else if s.desired == 0 {
        ServiceStatus::ScaledToZero
    } else {
        ServiceStatus::Steady { ready: ready_new }
    };
    plan
}

/// Removes `extras` of the current replicas: waiting ones first, then starting ones
/// (stopped), then ready ones (drained), the newest first in each.
fn scale_down(current: &[&ReplicaFacts], extras: u32, drain_end: u64, plan: &mut ServicePlan) {
    let mut left = extras as usize;
    for phase in [
        ReplicaPhase::Waiting,
        ReplicaPhase::Starting,
        ReplicaPhase::Ready,
    ] {
        for r in current.iter().rev().filter(|r| r.phase == phase) {
            if left == 0 {
                return;
            }
            left -= 1;
            if phase == ReplicaPhase::Ready {
                plan.drain.push(r.job);
                plan.wake(drain_end);
            } else {
                plan.stop.push(r.job);
            }
        }
    }
}
