//! `/api/jobs` and `/api/nodes`.

use std::collections::BTreeSet;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use gpusched_wire::{
    ApiError, BatchSubmit, CancelResult, JobList, JobListQuery, JobSubmit, JobView, NodeList,
    QueueList, Submitted, UsageQuery, UsageReport,
};
use serde::Deserialize;
use utoipa::IntoParams;

use super::auth::person;
use super::error::{job_id, ApiErr, JsonBody, QueryArgs};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;
use crate::groups::UserGroups;
use crate::state::{redact, WaitResult, Who};

/// Submit one job. Over a limit of the server: 400 (command or environment size), 403
/// (pending jobs per user), 413 (body size), 429 (submit rate).
#[utoipa::path(post, path = "/api/jobs", operation_id = "submit_job", tag = "jobs", request_body = JobSubmit,
    responses((status = 201, body = Submitted), super::responses::Submit))]
pub async fn submit(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(job): JsonBody<JobSubmit>,
) -> Result<(StatusCode, Json<Submitted>), ApiErr> {
    let who = person(&caller)?;
    let jobs = vec![job];
    let groups = groups_for(&app, &jobs, &who).await;
    let ids = app.ask(|r| Cmd::Submit(jobs, who, groups, r)).await?;
    Ok((StatusCode::CREATED, Json(ids)))
}

/// Submit many jobs in one transaction: all are accepted or none. Over a limit of the
/// server: 400 (batch, command or environment size), 403 (pending jobs per user), 413
/// (body size), 429 (submit rate).
#[utoipa::path(post, path = "/api/jobs/batch", operation_id = "submit_jobs", tag = "jobs", request_body = BatchSubmit,
    responses((status = 201, body = Submitted), super::responses::Submit))]
pub async fn submit_batch(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(batch): JsonBody<BatchSubmit>,
) -> Result<(StatusCode, Json<Submitted>), ApiErr> {
    let who = person(&caller)?;
    let groups = groups_for(&app, &batch.jobs, &who).await;
    let ids = app.ask(|r| Cmd::Submit(batch.jobs, who, groups, r)).await?;
    Ok((StatusCode::CREATED, Json(ids)))
}

/// The Unix groups of the users a submission is for, looked up here (on a blocking
/// thread, cached) so the state task never waits on the directory. Other users' groups
/// only for an admin: anyone else naming another user is refused by the state anyway,
/// and must not make the server look up (and cache) arbitrary names.
async fn groups_for(app: &App, jobs: &[JobSubmit], who: &Who) -> UserGroups {
    let mut users: BTreeSet<String> = BTreeSet::from([who.user.clone()]);
    if who.admin {
        users.extend(jobs.iter().filter_map(|j| j.user.clone()));
    }
    app.groups.resolve(users).await
}

/// List jobs, newest first, a page at a time (`limit`, default 1000); `next_before` in
/// the answer is the cursor for the next page.
#[utoipa::path(get, path = "/api/jobs", operation_id = "list_jobs", tag = "jobs", params(JobListQuery),
    responses((status = 200, body = JobList), super::responses::ReadQuery))]
pub async fn list(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    QueryArgs(q): QueryArgs<JobListQuery>,
) -> Result<Json<JobList>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(app.ask(|r| Cmd::List(q, who, r)).await?))
}

/// One job (404 for another user's job when the server runs with `--private-jobs`).
#[utoipa::path(get, path = "/api/jobs/{id}", operation_id = "get_job", tag = "jobs", params(("id" = u64, Path)),
    responses((status = 200, body = JobView), super::responses::ReadJob))]
pub async fn get_job(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<JobView>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    Ok(Json(app.ask(|r| Cmd::Get(id, who, r)).await?))
}

/// Cancel a job: a pending one ends at once; a running one is stopped by its node
/// (SIGTERM to its process group, a grace period, then SIGKILL).
#[utoipa::path(post, path = "/api/jobs/{id}/cancel", operation_id = "cancel_job", tag = "jobs", params(("id" = u64, Path)),
    responses((status = 200, body = CancelResult), super::responses::ChangeJob))]
pub async fn cancel(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<CancelResult>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    Ok(Json(app.ask(|r| Cmd::Cancel(id, who, r)).await?))
}

/// Report that a running job saved a checkpoint now (the same as touching
/// `$GPUSCHED_CHECKPOINT_DIR/checkpoint`): a preemption then picks jobs that lose less.
#[utoipa::path(post, path = "/api/jobs/{id}/checkpoint", operation_id = "checkpoint_job", tag = "jobs", params(("id" = u64, Path)),
    responses((status = 200, body = JobView), super::responses::ChangeJobState))]
pub async fn checkpoint(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<JobView>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    Ok(Json(app.ask(|r| Cmd::Checkpoint(id, who, r)).await?))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct WaitQuery {
    /// Longest wait in seconds (default 30, at most the server's `--max-wait`, 300 by
    /// default); the job is returned as it is then, ended or not.
    pub timeout_s: Option<u64>,
}

/// Wait for a job to end.
#[utoipa::path(get, path = "/api/jobs/{id}/wait", operation_id = "wait_for_job", tag = "jobs", params(("id" = u64, Path), WaitQuery),
    responses((status = 200, body = JobView), super::responses::ReadJob))]
pub async fn wait(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    QueryArgs(q): QueryArgs<WaitQuery>,
) -> Result<Json<JobView>, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    let timeout = Duration::from_secs(q.timeout_s.unwrap_or(30)).min(app.max_wait);
    match app.ask(|r| Cmd::Wait(id, who.clone(), r)).await? {
        WaitResult::Done(v) => Ok(Json(*v)),
        WaitResult::Pending(rx) => match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(mut v)) => {
                redact(&mut v, &who);
                Ok(Json(v))
            }
            _ => Ok(Json(app.ask(|r| Cmd::Get(id, who, r)).await?)),
        },
    }
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LogQuery {
    /// `stdout` (default) or `stderr`.
    #[param(pattern = "^(stdout|stderr)$")]
    pub stream: Option<String>,
    /// Byte offset to read from (default 0).
    pub offset: Option<u64>,
    /// Only the last this many bytes written so far (at most 1 MiB; 0 for none, to
    /// follow from the end), and none before `offset`. The `x-gpusched-log-offset`
    /// header says where they start: read on with `offset` set to it plus their length.
    pub tail: Option<u64>,
    /// Which attempt's output (default: the current one); earlier attempts stay on the
    /// node they ran on. An attempt the job has not had yet is 404.
    #[param(minimum = 1)]
    pub attempt: Option<u32>,
    /// Which part: the node it runs on (default: the first node). A node the job does
    /// not run on is 404.
    #[param(min_length = 1, max_length = 253)]
    pub node: Option<String>,
    /// Which process: its global `RANK` (it runs on node rank `rank / tasks_per_node`);
    /// default the node's first process. A rank the job does not have is 404.
    pub rank: Option<u32>,
}

/// The body of a logs answer in the document: the output's bytes as they are (not
/// necessarily UTF-8), a binary string, so generated clients hand back bytes or a file
/// rather than a list of numbers (what `Vec<u8>` would document).
pub struct LogBytes;

impl utoipa::PartialSchema for LogBytes {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .into()
    }
}

impl utoipa::ToSchema for LogBytes {}

/// Bytes of a job's stdout or stderr from `offset` (at most 1 MiB per call), fetched
/// from the agent of the node it ran on. The `x-gpusched-job-state` header gives the
/// job's state, so a follower knows when to stop. Only the job's owner and admins may
/// read it (403 for others).
#[utoipa::path(get, path = "/api/jobs/{id}/logs", operation_id = "get_job_logs", tag = "jobs", params(("id" = u64, Path), LogQuery),
    responses((status = 200, content_type = "application/octet-stream", body = inline(LogBytes),
        headers(("x-gpusched-job-state" = String, description = "the job's state"),
            ("x-gpusched-job-attempt" = u32, description = "the attempt whose output this is"),
            ("x-gpusched-log-offset" = u64, description = "the offset of the first byte returned"))),
        super::responses::ReadLogs))]
pub async fn logs(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    QueryArgs(q): QueryArgs<LogQuery>,
) -> Result<Response, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    let stream = q.stream.unwrap_or_else(|| "stdout".into());
    if stream != "stdout" && stream != "stderr" {
        return Err(ApiErr::bad(format!(
            "`stream` must be stdout or stderr, got {stream:?}"
        )));
    }
    let ask = crate::state::LogAsk {
        attempt: q.attempt,
        node: q.node,
        rank: q.rank,
    };
    let (target, view) = app.ask(|r| Cmd::Logs(id, ask, who, r)).await?;
    let mut url = format!(
        "{}/logs/{}/{}/{stream}?offset={}",
        target.url.trim_end_matches('/'),
        target.job,
        target.attempt,
        q.offset.unwrap_or(0)
    );
    if let Some(rank) = target.rank {
        url.push_str(&format!("&rank={rank}"));
    }
    if let Some(tail) = q.tail {
        url.push_str(&format!("&tail={tail}"));
    }
    let unreachable = |e: String| {
        ApiErr(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "could not fetch the logs from the agent at {}: {e}",
                target.url
            ),
        )
    };
    let mut req = app.http.get(&url);
    if let Some(t) = &target.token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.map_err(|e| unreachable(e.to_string()))?;
    let status = resp.status();
    // An agent older than `tail` ignores it and answers from `offset`.
    let start = resp
        .headers()
        .get("x-gpusched-log-offset")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(q.offset.unwrap_or(0));
    let body = resp.bytes().await.map_err(|e| unreachable(e.to_string()))?;
    if !status.is_success() {
        let msg = serde_json::from_slice::<ApiError>(&body)
            .map(|e| e.error)
            .unwrap_or_else(|_| String::from_utf8_lossy(&body).into_owned());
        let code = StatusCode::from_u16(status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
        return Err(ApiErr(code, msg));
    }
    let mut resp = body.into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    h.insert(
        "x-gpusched-job-state",
        HeaderValue::from_static(view.state.name()),
    );
    // Which attempt these bytes are of: a follower whose job was requeued and started
    // again must start over at offset 0 of the new attempt.
    h.insert("x-gpusched-job-attempt", HeaderValue::from(target.attempt));
    h.insert("x-gpusched-log-offset", HeaderValue::from(start));
    Ok(resp)
}

/// Nodes, their GPUs (with the source: nvml, declared or fake) and who holds them.
#[utoipa::path(get, path = "/api/nodes", operation_id = "list_nodes", tag = "nodes",
    responses((status = 200, body = NodeList), super::responses::Read))]
pub async fn nodes(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<NodeList>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Nodes(who, r)).await?))
}

/// GPU-hours, job counts and mean wait per user (or queue) since a time.
#[utoipa::path(get, path = "/api/usage", operation_id = "get_usage", tag = "usage", params(UsageQuery),
    responses((status = 200, body = UsageReport), super::responses::ReadUsage))]
pub async fn usage(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    QueryArgs(q): QueryArgs<UsageQuery>,
) -> Result<Json<UsageReport>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Usage(q, who, r)).await?))
}

/// The queues: limits, weights, who may use them, and what they hold now.
#[utoipa::path(get, path = "/api/queues", operation_id = "list_queues", tag = "queues",
    responses((status = 200, body = QueueList), super::responses::Read))]
pub async fn queues(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<QueueList>, ApiErr> {
    person(&caller)?;
    Ok(Json(app.ask(Cmd::Queues).await?))
}
