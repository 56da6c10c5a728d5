//! `/api/agent`: the node agents' side of the protocol (see gpusched_wire::agent).

use axum::extract::State;
use axum::{Extension, Json};
use gpusched_wire::{ApiError, Desired, PollQuery, Register, Registered, Report};

use super::auth::agent;
use super::error::{ApiErr, JsonBody, QueryArgs};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;
use crate::state::PollResult;

/// An agent joins (or re-joins) and reconciles what it runs with what the server knows.
#[utoipa::path(post, path = "/api/agent/register", request_body = Register,
    responses((status = 200, body = Registered), (status = 400, body = ApiError)))]
pub async fn register(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(reg): JsonBody<Register>,
) -> Result<Json<Registered>, ApiErr> {
    agent(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Register(reg, r)).await?))
}

/// Long-poll for the node's desired state; also the node's heartbeat.
#[utoipa::path(get, path = "/api/agent/poll", params(PollQuery),
    responses((status = 200, body = Desired), (status = 409, body = ApiError)))]
pub async fn poll(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    QueryArgs(q): QueryArgs<PollQuery>,
) -> Result<Json<Desired>, ApiErr> {
    agent(&caller)?;
    let q2 = q.clone();
    match app.ask(|r| Cmd::Poll(q2, false, r)).await? {
        PollResult::Ready(d) => Ok(Json(d)),
        PollResult::Wait(mut rx) => {
            // Woken by a change of the node's generation, or by the poll timeout.
            let _ = tokio::time::timeout(app.poll_wait, rx.changed()).await;
            match app.ask(|r| Cmd::Poll(q, true, r)).await? {
                PollResult::Ready(d) => Ok(Json(d)),
                PollResult::Wait(_) => Err(ApiErr::gone()),
            }
        }
    }
}

/// What happened on the node: attempts started and ended. Answered once durable.
#[utoipa::path(post, path = "/api/agent/report", request_body = Report,
    responses((status = 200), (status = 409, body = ApiError)))]
pub async fn report(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(rep): JsonBody<Report>,
) -> Result<Json<serde_json::Value>, ApiErr> {
    agent(&caller)?;
    app.ask(|r| Cmd::Report(rep, r)).await?;
    Ok(Json(serde_json::json!({ "ok": true })))
}
