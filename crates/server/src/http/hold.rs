//! Hold, release and update of pending jobs (`/api/jobs/{id}/hold|release`,
//! `PATCH /api/jobs/{id}`; Slurm's `scontrol hold/release/update`).

use std::collections::BTreeSet;

use axum::extract::{Path, State};
use axum::{Extension, Json};
use gpusched_wire::{JobUpdate, JobView};

use super::auth::person;
use super::error::{job_id, ApiErr, JsonBody};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// Hold a pending job: it stays pending and out of the scheduler's queue until
/// released. The job's owner or an admin; 409 if it is not pending or already held.
#[utoipa::path(post, path = "/api/jobs/{id}/hold", operation_id = "hold_job", tag = "jobs", params(("id" = u64, Path)),
    responses((status = 200, body = JobView), super::responses::ChangeJobState))]
pub async fn hold(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<JobView>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    Ok(Json(app.ask(|r| Cmd::Hold(id, who, r)).await?))
}

/// Release a held job: it waits for its turn (and its dependencies) again. The job's
/// owner or an admin; 409 if it is not pending or not held.
#[utoipa::path(post, path = "/api/jobs/{id}/release", operation_id = "release_job", tag = "jobs", params(("id" = u64, Path)),
    responses((status = 200, body = JobView), super::responses::ChangeJobState))]
pub async fn release(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<JobView>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    Ok(Json(app.ask(|r| Cmd::Release(id, who, r)).await?))
}

/// Change a pending job's priority, walltime or queue, with the checks of a submit
/// (a priority above the queue's `max_priority` is for admins only). The job's owner or
/// an admin; 409 if it is not pending or the new values could never run.
#[utoipa::path(patch, path = "/api/jobs/{id}", operation_id = "update_job", tag = "jobs", params(("id" = u64, Path)),
    request_body = JobUpdate,
    responses((status = 200, body = JobView), super::responses::UpdateJob))]
pub async fn update(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    JsonBody(up): JsonBody<JobUpdate>,
) -> Result<Json<JobView>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    // A queue's access rule needs the owner's groups: an admin may update another
    // user's job, so the owner is looked up first (off the state task, as for submit).
    let mut users = BTreeSet::from([who.user.clone()]);
    if who.admin && up.queue.is_some() {
        let owner = app.ask(|r| Cmd::Get(id, who.clone(), r)).await?.user;
        users.insert(owner);
    }
    let groups = app.groups.resolve(users).await;
    Ok(Json(
        app.ask(|r| Cmd::Update(id, up, who, groups, r)).await?,
    ))
}
