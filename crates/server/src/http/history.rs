//! `/api/jobs/{id}/events` (a job's timeline: its owner or an admin) and `/api/audit`
//! (the admin actions: admins only). Both are read from the store (`state/history.rs`).
//! `/api/admin/purge` (admins) deletes ended jobs from it.

use axum::extract::{Path, State};
use axum::{Extension, Json};
use gpusched_wire::history::{AuditList, AuditQuery, JobEvents, PurgeRequest, PurgeResult};

use super::auth::{admin, person};
use super::error::{job_id, ApiErr, JsonBody, QueryArgs};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// A job's timeline, oldest first: submitted, each placement, start, checkpoints,
/// preemptions and requeues with their reasons, a cancel request and who made it, the
/// end. Its owner or an admin may read it; at most 256 events are kept per job (the
/// first and the newest), `dropped` counts the others.
#[utoipa::path(get, path = "/api/jobs/{id}/events", operation_id = "get_job_events", tag = "history", params(("id" = u64, Path)),
    responses((status = 200, body = JobEvents), super::responses::ReadJob))]
pub async fn events(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<JobEvents>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    Ok(Json(app.ask(|r| Cmd::Events(id, who, r)).await?))
}

/// The audit log of admin actions (tokens, drains, queue reloads, cancels of other
/// users' jobs), newest first, a page at a time (admins only).
#[utoipa::path(get, path = "/api/audit", operation_id = "list_audit", tag = "history", params(AuditQuery),
    responses((status = 200, body = AuditList), super::responses::ReadQuery))]
pub async fn audit(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    QueryArgs(q): QueryArgs<AuditQuery>,
) -> Result<Json<AuditList>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Audit(q, who, r)).await?))
}

/// Delete the jobs that ended before `before_ms` from the history, with their timelines
/// (admins only; recorded in the audit log). Live jobs are never deleted. A time in the
/// future is refused (409).
#[utoipa::path(post, path = "/api/admin/purge", operation_id = "purge_history", tag = "history", request_body = PurgeRequest,
    responses((status = 200, body = PurgeResult), super::responses::AdminBodyState))]
pub async fn purge(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<PurgeRequest>,
) -> Result<Json<PurgeResult>, ApiErr> {
    let who = admin(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Purge(req, who, r)).await?))
}
