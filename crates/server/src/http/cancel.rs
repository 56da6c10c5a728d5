//! `POST /api/jobs/cancel`: several jobs cancelled in one request.

use axum::extract::State;
use axum::{Extension, Json};
use gpusched_wire::{CancelMany, CancelManyResult};

use super::auth::person;
use super::error::{ApiErr, JsonBody};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// Cancel several jobs at once, in one transaction: GPUs freed by one of them never go to
/// another of them. Each id gets its own result; one that cannot be cancelled (unknown,
/// another user's) is `refused` with the reason while the others are still cancelled.
#[utoipa::path(post, path = "/api/jobs/cancel", operation_id = "cancel_jobs", tag = "jobs", request_body = CancelMany,
    responses((status = 200, body = CancelManyResult), super::responses::ChangeJobs))]
pub async fn cancel_many(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<CancelMany>,
) -> Result<Json<CancelManyResult>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(app.ask(|r| Cmd::CancelMany(req.ids, who, r)).await?))
}
