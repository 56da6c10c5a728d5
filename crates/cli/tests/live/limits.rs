//! Limits that protect the server: each is refused with a 4xx that names it and its
//! value; overload answers 503 and a fast submitter 429, both with Retry-After, and the
//! CLI waits and tries again; the defaults admit a 10,000-job batch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

fn error_of(body: &str) -> String {
    serde_json::from_str::<Value>(body).unwrap_or(Value::Null)["error"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// A server with `extra` flags and a one-GPU node held by a long job of the admin's, so
/// every job submitted next stays pending.
fn held_cluster(extra: &[&str]) -> (tempfile::TempDir, Proc, Proc, String) {
    let (d, dir) = scratch();
    let (server, url) = server(&dir.join("data"), 0, extra);
    let agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    let blocker = submit(&url, &["--cwd", "/tmp", "--", "sleep", "300"]);
    wait_until(Duration::from_secs(20), || {
        job(&url, blocker)["state"] != "pending"
    });
    (d, server, agent, url)
}

fn token(url: &str, user: &str) -> String {
    let o = cli(url, &["token", "create", user]);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o).trim().to_string()
}

#[test]
fn each_submission_limit_refuses_with_its_value() {
    let (_d, _server, _agent, url) = held_cluster(&[
        "--max-batch",
        "3",
        "--max-command-bytes",
        "64",
        "--max-env-bytes",
        "64",
        "--max-pending-per-user",
        "4",
        "--max-body",
        "2048",
    ]);
    let alice = token(&url, "alice");
    let post = |path: &str, body: &str| http_with(&url, Some(&alice), "POST", path, Some(body));
    let refused = |(code, body): (u16, String), want_code: u16, want: &[&str]| {
        assert_eq!(code, want_code, "{body}");
        let e = error_of(&body);
        for w in want {
            assert!(e.contains(w), "{w:?} not in {e:?}");
        }
    };
    let job = r#"{"command": ["true"]}"#;
    refused(
        post(
            "/api/jobs/batch",
            &format!(r#"{{"jobs": [{job}, {job}, {job}, {job}]}}"#),
        ),
        400,
        &["4 jobs in one submission", "at most 3 (--max-batch)"],
    );
    let long = "x".repeat(70);
    refused(
        post(
            "/api/jobs",
            &format!(r#"{{"command": ["echo", "{long}"]}}"#),
        ),
        400,
        &[
            "the command is 74 bytes",
            "at most 64 (--max-command-bytes)",
        ],
    );
    refused(
        post(
            "/api/jobs",
            &format!(r#"{{"command": ["true"], "env": {{"K": "{long}"}}}}"#),
        ),
        400,
        &[
            "the environment is 71 bytes",
            "at most 64 (--max-env-bytes)",
        ],
    );
    let padded = format!(r#"{{"command": ["true"]{}}}"#, " ".repeat(3000));
    refused(
        post("/api/jobs", &padded),
        413,
        &["limit of 2048 bytes (--max-body)"],
    );

    // Pending jobs per user.
    let (code, body) = post(
        "/api/jobs/batch",
        &format!(r#"{{"jobs": [{job}, {job}, {job}]}}"#),
    );
    assert_eq!(code, 201, "{body}");
    assert_eq!(post("/api/jobs", job).0, 201);
    refused(
        post("/api/jobs", job),
        403,
        &[
            "alice has 4 pending jobs",
            "at most 4 pending (--max-pending-per-user)",
        ],
    );
    // The limit is per user, and the CLI shows the message.
    let bob = token(&url, "bob");
    assert_eq!(
        http_with(&url, Some(&bob), "POST", "/api/jobs", Some(job)).0,
        201
    );
    let o = cli_as(&url, Some(&alice), &["submit", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--max-pending-per-user"),
        "{}",
        stderr(&o)
    );
    // Cancelling one makes room.
    let first = serde_json::from_str::<Value>(&body).unwrap()["ids"][0]
        .as_u64()
        .unwrap();
    let o = cli_as(&url, Some(&alice), &["cancel", &first.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(post("/api/jobs", job).0, 201);
}

#[test]
fn the_defaults_admit_a_batch_of_10000_jobs_and_10000_pending() {
    let (_d, _server, _agent, url) = held_cluster(&[]);
    let jobs: Vec<&str> = vec![r#"{"command": ["sleep", "1"], "env": {"A": "1"}}"#; 10_000];
    let batch = format!(r#"{{"jobs": [{}]}}"#, jobs.join(", "));
    let (code, body) = http(&url, "POST", "/api/jobs/batch", Some(&batch));
    assert_eq!(code, 201, "{}", error_of(&body));
    let ids = serde_json::from_str::<Value>(&body).unwrap()["ids"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(ids, 10_000);
    // The same user still submits with 10,000 pending.
    let (code, body) = http(&url, "POST", "/api/jobs", Some(jobs[0]));
    assert_eq!(code, 201, "{body}");
}

#[test]
fn a_fast_submitter_gets_429_and_the_cli_waits_its_turn() {
    let (_d, _server, _agent, url) = held_cluster(&["--submit-rate", "1", "--submit-burst", "1"]);
    let alice = token(&url, "alice");
    let job = Some(r#"{"command": ["true"]}"#);
    let (code, _, body) = http_full(&url, Some(&alice), "POST", "/api/jobs", job);
    assert_eq!(code, 201, "{body}");
    let (code, head, body) = http_full(&url, Some(&alice), "POST", "/api/jobs", job);
    assert_eq!(code, 429, "{body}");
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 1"),
        "{head}"
    );
    assert!(
        error_of(&body).contains("limit of 1 submissions per second (--submit-rate"),
        "{body}"
    );
    // Reading is not rate-limited.
    assert_eq!(
        http_with(&url, Some(&alice), "GET", "/api/jobs", None).0,
        200
    );

    // Two CLI submissions in a row: the second is turned away, waits, and succeeds.
    let start = Instant::now();
    for _ in 0..2 {
        let o = cli_as(&url, Some(&alice), &["submit", "--", "true"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert!(
        start.elapsed() >= Duration::from_millis(900),
        "{:?}",
        start.elapsed()
    );
    let o = cli_as(&url, Some(&alice), &["submit", "--", "true"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("busy (HTTP 429)"), "{}", stderr(&o));

    // The OpenAPI document says so: 429 on submissions, 503 on user routes, each with
    // Retry-After; never on the agent protocol.
    let (code, doc) = http_with(&url, None, "GET", "/api/openapi.json", None);
    assert_eq!(code, 200);
    let doc: Value = serde_json::from_str(&doc).unwrap();
    let paths = &doc["paths"];
    for (path, method, status) in [
        ("/api/jobs", "post", "429"),
        ("/api/jobs/batch", "post", "429"),
        ("/api/jobs", "get", "503"),
        ("/api/nodes", "get", "503"),
    ] {
        let r = &paths[path][method]["responses"][status];
        assert!(
            r["headers"]["Retry-After"].is_object(),
            "{path} {method} {status}: {r}"
        );
    }
    // The agent protocol is never shed, but its 503 (a server shutting down or stepping
    // down) says when to retry, as every 503 does.
    assert!(
        paths["/api/agent/poll"]["get"]["responses"]["503"]["headers"]["Retry-After"].is_object()
    );
}

#[test]
fn an_overloaded_server_answers_503_with_retry_after() {
    let (_d, _server, _agent, url) = held_cluster(&["--max-inbox", "1"]);
    let alice = token(&url, "alice");
    // Many clients at once, until one is turned away (each submission is a commit, so
    // requests pile up behind the state task); bounded.
    let seen: Arc<std::sync::Mutex<Option<(String, String)>>> = Default::default();
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let threads: Vec<_> = (0..32)
        .map(|_| {
            let (seen, stop, url, alice) = (seen.clone(), stop.clone(), url.clone(), alice.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(60) {
                    let (code, head, body) = http_full(
                        &url,
                        Some(&alice),
                        "POST",
                        "/api/jobs",
                        Some(r#"{"command": ["true"]}"#),
                    );
                    if code == 503 {
                        *seen.lock().unwrap() = Some((head, body));
                        stop.store(true, Ordering::SeqCst);
                    } else {
                        assert_eq!(code, 201, "{body}");
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let (head, body) = seen
        .lock()
        .unwrap()
        .clone()
        .expect("32 clients at once overloaded a server with --max-inbox 1 within 60 s");
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 1"),
        "{head}"
    );
    assert!(
        error_of(&body).contains("more than its limit of 1 (--max-inbox)"),
        "{body}"
    );
    // The server serves again once the load is gone.
    assert_eq!(
        http_with(&url, Some(&alice), "GET", "/api/jobs?limit=1", None).0,
        200
    );
}

#[test]
fn a_user_holds_at_most_max_gpus_per_user_in_a_queue() {
    let (_d, dir) = scratch();
    let file = dir.join("queues.toml");
    std::fs::write(&file, "[queues.batch]\nmax_gpus_per_user = 2\n").unwrap();
    let (_server, url) = server(&dir.join("data"), 0, &["--queues", file.to_str().unwrap()]);
    // Four GPUs: the per-user cap, not a lack of GPUs, holds the third job.
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(4));
    let me = stdout(&cli(&url, &["whoami"]));
    let me = me.split_whitespace().next().unwrap().to_string();

    let mine: Vec<u64> = (0..3)
        .map(|_| submit(&url, &["--cwd", "/tmp", "--", "sleep", "30"]))
        .collect();
    for &id in &mine[..2] {
        wait_until(Duration::from_secs(20), || {
            job(&url, id)["state"] == "running"
        });
    }
    let third = job(&url, mine[2]);
    assert_eq!(third["state"], "pending", "{third}");
    let want = format!(
        "{me}'s jobs hold 2 of the 2 GPUs one user may hold in queue `batch` (max_gpus_per_user)"
    );
    assert!(third["reason"].as_str().unwrap().contains(&want), "{third}");

    // Another user's job starts on a free GPU meanwhile (whether its account exists on
    // this node or not, it leaves `pending`).
    let (code, body) = http(
        &url,
        "POST",
        "/api/jobs",
        Some(r#"{"command": ["sleep", "30"], "cwd": "/tmp", "user": "nobody"}"#),
    );
    assert_eq!(code, 201, "{body}");
    let other = serde_json::from_str::<Value>(&body).unwrap()["ids"][0]
        .as_u64()
        .unwrap();
    wait_until(Duration::from_secs(20), || {
        job(&url, other)["state"] != "pending"
    });
    assert_eq!(job(&url, mine[2])["state"], "pending");

    // A job larger than the cap could never start: refused at once.
    let o = cli(&url, &["submit", "--gpus", "3", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("one user's jobs may hold at most 2 in queue `batch`"),
        "{}",
        stderr(&o)
    );

    // When one of the user's jobs ends, the third starts.
    let o = cli(&url, &["cancel", &mine[0].to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    wait_until(Duration::from_secs(20), || {
        job(&url, mine[2])["state"] == "running"
    });
}
