//! `GET /api/history/jobs`: the ended jobs that ran, as trace rows for
//! `gpusched history --format gpusched` (replayed with `gpusched simulate`). A page of
//! the job list's ended jobs (the store's `EndedQuery` through the actor's list), cut
//! down to what a trace needs. Whose jobs and which of their fields a caller sees is the
//! job list's rule, through the same list (`state/privacy.rs`): other users' jobs without
//! their commands (a command line may hold secrets), none of them under
//! `--private-jobs`.

use axum::extract::State;
use axum::{Extension, Json};
use gpusched_wire::export::{HistoryJob, HistoryPage, HistoryQuery};
use gpusched_wire::{JobListQuery, JobView};

use super::auth::person;
use super::error::{ApiErr, QueryArgs};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// The most jobs one page of the history gives.
const MAX_LIMIT: usize = 10_000;

/// The page size asked for (1000 by default), refused outside 1 to [`MAX_LIMIT`].
fn page_limit(limit: Option<usize>) -> Result<usize, ApiErr> {
    let limit = limit.unwrap_or(1000);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ApiErr::bad(format!(
            "`limit` must be between 1 and {MAX_LIMIT} (jobs per page); got {limit}"
        )));
    }
    Ok(limit)
}

/// The ended jobs that ran (succeeded, failed, cancelled or timed out after starting),
/// newest first, a page at a time, with the run-time predictor's features: user, queue,
/// name, command, GPUs, GPU model, walltime. Without `user`, a user's own jobs (an
/// admin's: everyone's). Another user's jobs come as the job list shows them: without
/// their commands (`command` empty; only their owner and admins see it), and none at all
/// under `--private-jobs`.
#[utoipa::path(get, path = "/api/history/jobs", operation_id = "export_history", tag = "history", params(HistoryQuery),
    responses((status = 200, body = HistoryPage), super::responses::ReadQuery))]
pub async fn jobs(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    QueryArgs(q): QueryArgs<HistoryQuery>,
) -> Result<Json<HistoryPage>, ApiErr> {
    let who = person(&caller)?;
    let limit = page_limit(q.limit)?;
    // The list applies the one rule of who sees what (`state/privacy.rs`); here only the
    // default differs: a user's own history, as `gpusched history` means.
    let user = match q.user {
        Some(u) => Some(u),
        None if who.admin => None,
        None => Some(who.user.clone()),
    };
    let list = JobListQuery {
        state: Some("succeeded,failed,cancelled,timed_out".into()),
        user,
        node: None,
        after: None,
        before: q.before,
        limit: Some(limit),
        // An array's tasks are what ran; the array itself is dropped below.
        tasks: Some(true),
    };
    let page = app.ask(|r| Cmd::List(list, who, r)).await?;
    let since = q.since_ms.unwrap_or(0);
    // Ids grow with submission: once the page reaches a job submitted before `since`,
    // no older page can hold one after it.
    let past_since = page.jobs.iter().any(|j| j.submit_ms < since);
    Ok(Json(HistoryPage {
        jobs: page
            .jobs
            .into_iter()
            .filter(|j| j.submit_ms >= since)
            .filter_map(row)
            .collect(),
        next_before: if past_since { None } else { page.next_before },
    }))
}

/// The trace row of an ended job, if it ran (a job cancelled while pending never did,
/// and an array is its tasks).
fn row(v: JobView) -> Option<HistoryJob> {
    if v.array.is_some() {
        return None;
    }
    let (start_ms, end_ms) = (v.start_ms?, v.end_ms?);
    Some(HistoryJob {
        id: v.id,
        user: v.user,
        queue: v.queue,
        name: v.name,
        command: v.command,
        gpus: v.gpus,
        gpu_model: v.gpu_model,
        priority: v.priority,
        walltime_s: v.walltime_s,
        state: v.state.name().to_string(),
        submit_ms: v.submit_ms,
        start_ms,
        end_ms: end_ms.max(start_ms),
        preemptions: v.preemptions,
        usage: v.usage.map(|u| *u),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The export carries what a run used where it was measured, and nothing (not
    /// zeros) where it was not.
    #[test]
    fn a_row_carries_what_its_last_run_used() {
        let view = |usage: serde_json::Value| -> JobView {
            let mut v = serde_json::json!({
                "id": 7, "name": "t", "user": "ann", "state": "succeeded", "reason": "",
                "command": ["true"], "cwd": "/", "gpus": 1, "priority": 0,
                "gpu_indices": [0], "attempt": 1, "max_retries": 0, "submit_ms": 1,
                "start_ms": 2, "end_ms": 3, "cancel_requested": false
            });
            if !usage.is_null() {
                v["usage"] = usage;
            }
            serde_json::from_value(v).unwrap()
        };
        let measured = row(view(
            serde_json::json!({"cpu_ms": 5, "mem_peak_bytes": 1024}),
        ));
        let line = serde_json::to_string(&measured.unwrap()).unwrap();
        assert!(
            line.ends_with(r#""usage":{"cpu_ms":5,"mem_peak_bytes":1024}}"#),
            "{line}"
        );
        let line = serde_json::to_string(&row(view(serde_json::Value::Null)).unwrap()).unwrap();
        assert!(!line.contains("usage"), "{line}");
    }

    #[test]
    fn a_page_size_out_of_range_is_refused_in_words() {
        assert_eq!(page_limit(None).unwrap(), 1000);
        assert_eq!(page_limit(Some(10_000)).unwrap(), 10_000);
        for bad in [0, 10_001] {
            let e = page_limit(Some(bad)).unwrap_err();
            assert_eq!(e.0, axum::http::StatusCode::BAD_REQUEST);
            assert_eq!(
                e.1,
                format!("`limit` must be between 1 and 10000 (jobs per page); got {bad}")
            );
        }
    }
}
