//! `/api/jobs/{id}/tasks*`: the tasks of an array (the array itself is a job, read and
//! cancelled through `/api/jobs/{id}`).

use axum::extract::{Path, State};
use axum::{Extension, Json};
use gpusched_wire::{CancelResult, JobList, JobListQuery, JobView};

use super::auth::person;
use super::error::{job_id, ApiErr, QueryArgs};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// A task index from the path.
fn task_index(raw: &str) -> Result<u32, ApiErr> {
    raw.parse::<u32>().map_err(|_| {
        ApiErr::bad(format!(
            "task index must be a whole number from 0 to 4294967295, got {raw:?}"
        ))
    })
}

/// The started tasks of an array, newest first, paged and filtered like `GET /api/jobs`
/// (`tasks` is ignored). Tasks not started yet are not listed one by one: the array's
/// `array_counts.pending` counts them, and `GET /api/jobs/{id}/tasks/{index}` shows any
/// one of them. 404 if the job is not an array.
#[utoipa::path(get, path = "/api/jobs/{id}/tasks", operation_id = "list_tasks", tag = "arrays", params(("id" = u64, Path), JobListQuery),
    responses((status = 200, body = JobList), super::responses::ReadJob))]
pub async fn list(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    QueryArgs(q): QueryArgs<JobListQuery>,
) -> Result<Json<JobList>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    Ok(Json(app.ask(|r| Cmd::Tasks(id, q, who, r)).await?))
}

/// One task of an array: a started task's own job (its `id`, state and node), or for an
/// index not started yet a pending view of it with id 0 (it has no id until it starts).
/// 404 if the job is not an array or the index is not one of its tasks.
#[utoipa::path(get, path = "/api/jobs/{id}/tasks/{index}", operation_id = "get_task", tag = "arrays",
    params(("id" = u64, Path), ("index" = u32, Path)),
    responses((status = 200, body = JobView), super::responses::ReadJob))]
pub async fn get(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path((id, index)): Path<(String, String)>,
) -> Result<Json<JobView>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    let index = task_index(&index)?;
    Ok(Json(app.ask(|r| Cmd::Task(id, index, who, r)).await?))
}

/// Cancel one task of an array: a started task as any job; an unstarted one becomes a
/// job of its own, cancelled at once, so it never starts and is listed with the array's
/// tasks. The answer's `id` is the task's (the array's for a task that ended before and
/// is no longer in the server's memory). The array goes on with its other tasks.
#[utoipa::path(post, path = "/api/jobs/{id}/tasks/{index}/cancel", operation_id = "cancel_task", tag = "arrays",
    params(("id" = u64, Path), ("index" = u32, Path)),
    responses((status = 200, body = CancelResult), super::responses::ChangeJob))]
pub async fn cancel(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path((id, index)): Path<(String, String)>,
) -> Result<Json<CancelResult>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    let index = task_index(&index)?;
    Ok(Json(app.ask(|r| Cmd::CancelTask(id, index, who, r)).await?))
}
