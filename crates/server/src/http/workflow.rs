//! Workflows (`POST /api/workflows`): steps and the edges between them, submitted as one.

use std::collections::BTreeSet;

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use gpusched_wire::workflow::{WorkflowSubmit, WorkflowSubmitted};

use super::auth::person;
use super::error::{ApiErr, JsonBody};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// Submit a workflow: every step (a job or an array) in one transaction, all or none,
/// its edges (`after`, `after_any`, `after_notok` by step key) turned into dependencies
/// on the new ids. 409 for repeated keys, an edge naming no step, and a cycle (named);
/// each step's job is checked as a submit checks it, and a refusal names the step.
#[utoipa::path(post, path = "/api/workflows", operation_id = "submit_workflow", tag = "workflows", request_body = WorkflowSubmit,
    responses((status = 201, body = WorkflowSubmitted), super::responses::Submit))]
pub async fn submit_workflow(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(wf): JsonBody<WorkflowSubmit>,
) -> Result<(StatusCode, Json<WorkflowSubmitted>), ApiErr> {
    let who = person(&caller)?;
    let mut users = BTreeSet::from([who.user.clone()]);
    if who.admin {
        users.extend(wf.steps.iter().filter_map(|s| s.job.user.clone()));
    }
    let groups = app.groups.resolve(users).await;
    let ids = app.ask(|r| Cmd::Workflow(wf, who, groups, r)).await?;
    Ok((StatusCode::CREATED, Json(ids)))
}
