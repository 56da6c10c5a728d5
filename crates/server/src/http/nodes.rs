//! `/api/nodes/{name}/drain` and `/api/nodes/{name}/resume` (admins): an operator takes
//! a node out of placement for maintenance and puts it back (`state/health.rs`).

use axum::extract::{Path, State};
use axum::{Extension, Json};
use gpusched_wire::{DrainRequest, NodeView};

use super::auth::admin;
use super::error::{ApiErr, JsonBody};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// Drain a node (admins only): nothing new starts there; running jobs finish, or with
/// `now` are requeued through the preemption path (checkpoint signal, grace, no retry
/// used). A drained node stays drained across restarts until resumed.
#[utoipa::path(post, path = "/api/nodes/{name}/drain", operation_id = "drain_node", tag = "nodes", params(("name" = String, Path)),
    request_body = DrainRequest,
    responses((status = 200, body = NodeView), super::responses::AdminNodeBody))]
pub async fn drain(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
    JsonBody(req): JsonBody<DrainRequest>,
) -> Result<Json<NodeView>, ApiErr> {
    let who = admin(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Drain(name, req, who, r)).await?))
}

/// Resume a node (admins only): ends its drain and puts its unhealthy GPUs back in
/// placement (their next samples judge them again).
#[utoipa::path(post, path = "/api/nodes/{name}/resume", operation_id = "resume_node", tag = "nodes", params(("name" = String, Path)),
    responses((status = 200, body = NodeView), super::responses::AdminNode))]
pub async fn resume(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> Result<Json<NodeView>, ApiErr> {
    let who = admin(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Resume(name, who, r)).await?))
}
