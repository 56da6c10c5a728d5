//! Admission: a request for a service with no ready replica (starting, scaled to zero,
//! or the gateway not yet synced) waits, counted as queued (what makes the server start
//! a replica), until one is ready, within `--hold-timeout` and `--max-queue`.

use std::sync::Arc;
use std::time::Instant;

use crate::error::{Reject, Style};
use crate::load::Waiting;
use crate::state::Gateway;
use crate::table::{Service, Snapshot};

/// What a request is for: the service serving a model, or a service by name.
pub type Lookup<'a> = &'a (dyn Fn(&Snapshot) -> Result<Arc<Service>, Reject> + Sync);

/// The service once it has a ready replica. Before the first sync every request waits
/// (the gateway cannot tell an unknown model yet); after, an unknown one is refused by
/// `lookup`.
pub async fn ready(
    gw: &Gateway,
    lookup: Lookup<'_>,
    arrived: Instant,
    style: Style,
) -> Result<Arc<Service>, Reject> {
    let deadline = arrived + gw.limits.hold_timeout;
    let mut changes = gw.table.watch();
    let mut waiting: Option<Waiting> = None;
    let mut service = String::new();
    loop {
        changes.borrow_and_update();
        if gw.table.synced() {
            let svc = lookup(&gw.table.snapshot()).map_err(|r| r.styled(style))?;
            if !svc.endpoints.is_empty() {
                return Ok(svc);
            }
            if waiting.is_none() {
                waiting = Some(svc.load.try_queue(gw.limits.max_queue).ok_or_else(|| {
                    gw.metrics.shed(&svc.name);
                    Reject::busy(
                        format!(
                            "service {} has {} requests waiting for a replica at this \
                             gateway (--max-queue); retry later",
                            svc.name, gw.limits.max_queue
                        ),
                        gw.limits.retry_after,
                    )
                    .styled(style)
                })?);
                service = svc.name.clone();
            }
        }
        let now = Instant::now();
        let timed_out = now >= deadline
            || tokio::time::timeout(deadline - now, changes.changed())
                .await
                .is_err();
        if timed_out {
            let what = if gw.table.synced() {
                gw.metrics.shed(&service);
                format!(
                    "no replica of service {service} became ready within {} s (it may be \
                     starting or scaled to zero); retry later",
                    gw.limits.hold_timeout.as_secs()
                )
            } else {
                format!(
                    "the gateway has not reached a gpusched server within {} s, so it knows \
                     no replica yet; retry later (its operator should check its --server \
                     and token)",
                    gw.limits.hold_timeout.as_secs()
                )
            };
            return Err(Reject::busy(what, gw.limits.retry_after).styled(style));
        }
    }
}
