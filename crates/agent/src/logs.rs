//! The agent's small HTTP endpoint that serves job logs to the server, which proxies
//! them to `gpusched logs`. Logs stay on the node that wrote them (as with kubelet).

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use gpusched_wire::{ApiError, AttemptRef};
use serde::Deserialize;

use crate::jobdir::{JobDir, Stream};

/// Largest chunk per request; followers ask again from the new offset.
const CHUNK: u64 = 1 << 20;

#[derive(Deserialize)]
struct Offset {
    offset: Option<u64>,
    /// The global `RANK` of one process of a part started with `tasks_per_node`;
    /// absent: the part's first process (or its only one).
    rank: Option<u32>,
    /// Only the last this many bytes written so far (at most a chunk), and none before
    /// `offset`; the `x-gpusched-log-offset` header says where they start.
    tail: Option<u64>,
}

/// Where the bytes of an answer start in the file.
pub const OFFSET_HEADER: &str = "x-gpusched-log-offset";

/// The log endpoint; only the server (holding the join token) may read.
pub fn router(jobs: Arc<JobDir>, join_token: &str) -> Router {
    let expected = format!("Bearer {join_token}");
    Router::new()
        .route("/logs/{job}/{attempt}/{stream}", get(read_log))
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let ok = req
                    .headers()
                    .get(axum::http::header::AUTHORIZATION)
                    .is_some_and(|v| v.as_bytes() == expected.as_bytes());
                async move {
                    if ok {
                        next.run(req).await
                    } else {
                        err(
                            StatusCode::UNAUTHORIZED,
                            "job logs are served to the gpusched server only".into(),
                        )
                    }
                }
            },
        ))
        .with_state(jobs)
}

fn err(code: StatusCode, msg: String) -> Response {
    (code, Json(ApiError { error: msg })).into_response()
}

async fn read_log(
    State(jobs): State<Arc<JobDir>>,
    Path((job, attempt, stream)): Path<(u64, u32, String)>,
    Query(q): Query<Offset>,
) -> Response {
    let stream = match stream.as_str() {
        "stdout" => Stream::Stdout,
        "stderr" => Stream::Stderr,
        other => {
            return err(
                StatusCode::BAD_REQUEST,
                format!("stream must be stdout or stderr, got {other:?}"),
            )
        }
    };
    // A job that printed nothing has no file: that reads as empty, like the server's
    // view of any attempt that ran here.
    let a = AttemptRef { job, attempt };
    if removed_by_retention(&jobs, a) {
        return err(
            StatusCode::GONE,
            format!(
                "the logs of job {job} (attempt {attempt}) were deleted from this node by log \
                 retention (the agent's --log-retention and --log-max-total); a job that needs \
                 its output longer should write it to shared storage"
            ),
        );
    }
    let path = match pick_file(&jobs, a, q.rank) {
        Ok(rank) => jobs.rank_log_path(a, rank, stream),
        Err(message) => return err(StatusCode::NOT_FOUND, message),
    };
    let offset = q.offset.unwrap_or(0);
    let from = match q.tail {
        Some(n) => ReadFrom::End(n.min(CHUNK), offset),
        None => ReadFrom::Start(offset),
    };
    match tokio::task::spawn_blocking(move || read_chunk(path, from)).await {
        Ok(Ok((start, bytes))) => {
            let mut r = bytes.into_response();
            r.headers_mut()
                .insert(OFFSET_HEADER, axum::http::HeaderValue::from(start));
            r
        }
        Ok(Err(e)) => err(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot read the log: {e}"),
        ),
        Err(e) => err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// Whether the attempt ended, its logs are gone, and retention removed logs of its job
/// (a job that printed nothing never had files: that still reads as empty).
fn removed_by_retention(jobs: &JobDir, a: AttemptRef) -> bool {
    // The index's lock is let go first: `holds` takes the journal's (taken before the
    // index's elsewhere).
    let removed = jobs.log_index().was_removed(a.job);
    removed && !jobs.holds(a) && !jobs.has_logs(a)
}

/// Which process's files to read: `Some(rank)` for a part of several processes
/// (`None` asked: its first), `None` for an attempt's only process. An unknown rank is
/// an error naming the ranks that ran here.
fn pick_file(jobs: &JobDir, a: AttemptRef, asked: Option<u32>) -> Result<Option<u32>, String> {
    let ranks = jobs.log_ranks(a);
    match (asked, ranks.first()) {
        (None, first) => Ok(first.copied()),
        (Some(r), _) if ranks.contains(&r) => Ok(Some(r)),
        (Some(r), None) => Err(format!(
            "job {}.{} ran one process on this node, without ranks (no --tasks-per-node); \
             ask without rank={r}",
            a.job, a.attempt
        )),
        (Some(r), Some(_)) => Err(format!(
            "rank {r} of job {}.{} did not run on this node; the ranks here are {}",
            a.job,
            a.attempt,
            ranks
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Where a read starts: a byte offset, or this many bytes before the end but not
/// before an offset.
#[derive(Clone, Copy)]
enum ReadFrom {
    Start(u64),
    End(u64, u64),
}

/// Up to a chunk from `from`, with the offset it starts at.
fn read_chunk(path: PathBuf, from: ReadFrom) -> std::io::Result<(u64, Vec<u8>)> {
    let mut f = match std::fs::File::open(&path) {
        Ok(f) => f,
        // Not created yet (the job is about to start): nothing to show.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((
                match from {
                    ReadFrom::Start(o) | ReadFrom::End(_, o) => o,
                },
                Vec::new(),
            ))
        }
        Err(e) => return Err(e),
    };
    let start = match from {
        ReadFrom::Start(o) => o,
        ReadFrom::End(n, o) => f.metadata()?.len().saturating_sub(n).max(o),
    };
    f.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    f.take(CHUNK).read_to_end(&mut buf)?;
    Ok((start, buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a() -> AttemptRef {
        AttemptRef { job: 9, attempt: 2 }
    }

    #[test]
    fn ranks_pick_their_own_files_and_an_unknown_rank_names_the_ranks_here() {
        let tmp = tempfile::tempdir().unwrap();
        let jobs = JobDir::open(tmp.path()).unwrap();
        // An attempt of one process: no ranks.
        assert_eq!(pick_file(&jobs, a(), None), Ok(None));
        let e = pick_file(&jobs, a(), Some(0)).unwrap_err();
        assert!(e.contains("without ranks"), "{e}");
        // A part with ranks 6 and 7 (node rank 3 of a job with 2 tasks per node), after
        // its end was acknowledged: the files say which ranks ran here.
        for r in [7, 6] {
            jobs.open_rank_log(a(), Some(r), Stream::Stdout).unwrap();
        }
        assert_eq!(pick_file(&jobs, a(), None), Ok(Some(6)));
        assert_eq!(pick_file(&jobs, a(), Some(7)), Ok(Some(7)));
        let e = pick_file(&jobs, a(), Some(2)).unwrap_err();
        assert!(e.contains("rank 2") && e.contains("6, 7"), "{e}");
    }

    #[tokio::test]
    async fn the_endpoint_serves_each_ranks_output_and_404s_an_unknown_rank() {
        use std::io::Write;
        let tmp = tempfile::tempdir().unwrap();
        let jobs = JobDir::open(tmp.path()).unwrap();
        for r in [6, 7] {
            let mut f = jobs.open_rank_log(a(), Some(r), Stream::Stdout).unwrap();
            writeln!(f, "I am rank {r}").unwrap();
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/logs/9/2", listener.local_addr().unwrap());
        let app = router(Arc::new(jobs), "secret");
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let http = reqwest::Client::new();
        let get = |q: &'static str| {
            let req = http.get(format!("{base}/stdout{q}")).bearer_auth("secret");
            async move {
                let r = req.send().await.unwrap();
                (r.status().as_u16(), r.text().await.unwrap())
            }
        };
        assert_eq!(get("?rank=7").await, (200, "I am rank 7\n".to_string()));
        assert_eq!(get("").await, (200, "I am rank 6\n".to_string()));
        assert_eq!(get("?rank=7&offset=5").await, (200, "rank 7\n".to_string()));
        // The tail: the last bytes, and where they start.
        let r = http
            .get(format!("{base}/stdout?rank=7&tail=7"))
            .bearer_auth("secret")
            .send()
            .await
            .unwrap();
        assert_eq!(r.headers()[OFFSET_HEADER], "5");
        assert_eq!(r.text().await.unwrap(), "rank 7\n");
        let (_, all) = get("?rank=7&tail=1000").await;
        assert_eq!(all, "I am rank 7\n");
        // Never before the offset given.
        assert_eq!(
            get("?rank=7&tail=1000&offset=10").await,
            (200, "7\n".into())
        );
        let (status, body) = get("?rank=3").await;
        assert_eq!(status, 404, "{body}");
        assert!(body.contains("rank 3") && body.contains("6, 7"), "{body}");
        server.abort();
    }

    #[tokio::test]
    async fn a_log_removed_by_retention_answers_410_saying_so() {
        use std::io::Write;
        let tmp = tempfile::tempdir().unwrap();
        let jobs = JobDir::open(tmp.path()).unwrap();
        let mut l: gpusched_wire::Launch = serde_json::from_value(serde_json::json!({
            "job": 9, "attempt": 2, "name": "n", "user": "nobody", "command": ["true"],
            "cwd": "/", "env": {}, "gpus": [], "walltime_s": null, "grace_s": 1
        }))
        .unwrap();
        jobs.create(&l).unwrap();
        let mut f = jobs.open_log(a(), Stream::Stdout).unwrap();
        writeln!(f, "hello").unwrap();
        jobs.write_outcome(a(), &gpusched_wire::Outcome::Exited { code: 0 })
            .unwrap();
        jobs.mark_acked(a()).unwrap();
        // Another job printed nothing: it still reads as empty.
        l.job = 10;
        jobs.create(&l).unwrap();
        jobs.mark_acked(AttemptRef {
            job: 10,
            attempt: 2,
        })
        .unwrap();
        let policy = crate::retention::Policy {
            max_age: None,
            max_total: Some(1),
        };
        crate::retention::sweep(&jobs, &policy, 0);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/logs", listener.local_addr().unwrap());
        let app = router(Arc::new(jobs), "secret");
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let http = reqwest::Client::new();
        let r = http
            .get(format!("{base}/9/2/stdout"))
            .bearer_auth("secret")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 410);
        let body = r.text().await.unwrap();
        assert!(
            body.contains("log retention") && body.contains("--log-max-total"),
            "{body}"
        );
        let r = http
            .get(format!("{base}/10/2/stdout"))
            .bearer_auth("secret")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        server.abort();
    }
}
