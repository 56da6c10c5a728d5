//! Defects a new user met trying the live cluster: usage by queue, a job above its
//! queue's cap, cancelling several jobs at once, more than a page of jobs, what `show`
//! prints, and a CA certificate given to the server.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

fn json(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{} {}", stdout(o), stderr(o));
    serde_json::from_str(&stdout(o)).expect("JSON on stdout")
}

#[test]
fn usage_by_queue_and_jobs_above_their_queues_max() {
    let (_d, dir) = scratch();
    let file = dir.join("queues.toml");
    std::fs::write(&file, "[queues.a]\n\n[queues.b]\nmax = 2\n").unwrap();
    let (_server, url) = server(&dir.join("data"), 0, &["--queues", file.to_str().unwrap()]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(4));

    // Above the cap: refused at once with the limit, instead of waiting forever.
    let o = cli(&url, &["submit", "-q", "b", "--gpus", "3", "--", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("asks for 3 GPUs but queue `b` may hold at most 2 GPUs")
            && stderr(&o).contains("HTTP 409"),
        "{}",
        stderr(&o)
    );

    let a = submit(&url, &["-q", "a", "--", "true"]);
    let b = submit(
        &url,
        &["-q", "b", "--gpus", "2", "--", "sh", "-c", "exit 3"],
    );
    wait_job(&url, a, Duration::from_secs(30));
    wait_job(&url, b, Duration::from_secs(30));
    let r = json(&cli(&url, &["usage", "--by", "queue", "--json"]));
    assert_eq!(r["by"], "queue");
    let rows: Vec<(String, u64, u64, u64)> = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["key"].as_str().unwrap().to_string(),
                row["jobs"].as_u64().unwrap(),
                row["succeeded"].as_u64().unwrap(),
                row["failed"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![("a".to_string(), 1, 1, 0), ("b".to_string(), 1, 0, 1)],
        "{r}"
    );
    let table = stdout(&cli(&url, &["usage", "--by", "queue"]));
    assert!(
        table.contains("QUEUE") && table.lines().any(|l| l.starts_with("b ")),
        "{table}"
    );

    // A window that starts in the future is refused, by the CLI and by the API.
    let o = cli(&url, &["usage", "--since", "2999-01-01"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is in the future"), "{}", stderr(&o));
    let (code, body) = http(&url, "GET", "/api/usage?since_ms=32503680000000", None);
    assert_eq!(code, 409, "{body}");
    assert!(body.contains("in the future"), "{body}");
}

#[test]
fn cancelling_a_running_and_pending_jobs_at_once_never_starts_the_pending_ones() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    let marks = dir.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let running = submit(&url, &["--", "sleep", "60"]);
    // Each pending job leaves a mark the moment it starts.
    let pending: Vec<u64> = (0..3)
        .map(|i| {
            let line = format!("touch {}/{i}; sleep 60", marks.display());
            submit(&url, &["--", "sh", "-c", &line])
        })
        .collect();
    wait_until(Duration::from_secs(20), || {
        job(&url, running)["state"] == "running"
    });

    let mut args = vec!["cancel".to_string(), running.to_string()];
    args.extend(pending.iter().map(u64::to_string));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = cli(&url, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(&format!("job {running}: cancelling")), "{out}");
    for id in &pending {
        assert!(out.contains(&format!("job {id}: cancelled")), "{out}");
    }
    assert_eq!(
        wait_job(&url, running, Duration::from_secs(30))["state"],
        "cancelled"
    );
    // Evidence that the freed GPU was handed out again: a later job ran on it. Had a
    // pending job of the list been started, it would have been before this one.
    let later = submit(&url, &["--", "true"]);
    assert_eq!(
        wait_job(&url, later, Duration::from_secs(30))["state"],
        "succeeded"
    );
    for id in &pending {
        let v = job(&url, *id);
        assert_eq!(v["state"], "cancelled", "{v}");
        assert!(v["start_ms"].is_null(), "job {id} started: {v}");
    }
    let started: Vec<_> = std::fs::read_dir(&marks).unwrap().collect();
    assert!(started.is_empty(), "pending jobs ran: {started:?}");

    // The endpoint itself: unknown ids are refused one by one, the rest still cancelled;
    // an empty list is a 400; the OpenAPI document describes it.
    let victim = submit(&url, &["--", "sleep", "60"]);
    let (code, body) = http(
        &url,
        "POST",
        "/api/jobs/cancel",
        Some(&format!("{{\"ids\": [{victim}, 999999]}}")),
    );
    assert_eq!(code, 200, "{body}");
    let r: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(r["results"][0]["id"], victim);
    assert_ne!(r["results"][0]["result"], "refused", "{r}");
    assert_eq!(r["results"][1]["result"], "refused", "{r}");
    assert!(
        r["results"][1]["error"]
            .as_str()
            .unwrap()
            .contains("no job with id 999999"),
        "{r}"
    );
    let o = cli(&url, &["cancel", "999999"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("job 999999: no job"), "{}", stderr(&o));
    let (code, body) = http(&url, "POST", "/api/jobs/cancel", Some("{\"ids\": []}"));
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("`ids` is empty"), "{body}");
    let (_, doc) = http(&url, "GET", "/api/openapi.json", None);
    let doc: Value = serde_json::from_str(&doc).unwrap();
    assert!(doc["paths"]["/api/jobs/cancel"]["post"].is_object());
}

#[test]
fn more_than_a_page_of_jobs_pages_newest_first_and_show_prints_resources() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    // One running job holds 1,100 more by dependency: cheap to keep, never started.
    let head = submit(
        &url,
        &[
            "--cpus",
            "1.5",
            "--mem",
            "2G",
            "--gpu-model",
            "A100",
            "-e",
            "SECRET_TOKEN=hunter2",
            "-e",
            "HF_HOME=/tmp/hf",
            "--",
            "sleep",
            "120",
        ],
    );
    // 1,100 jobs in one batch (an `--array` is one job now, see arrays.rs).
    let one = format!(r#"{{"command": ["true"], "cwd": "/tmp", "after": [{head}]}}"#);
    let batch = format!(r#"{{"jobs": [{}]}}"#, vec![one; 1100].join(","));
    let (code, body) = http_unix(&url, "POST", "/api/jobs/batch", Some(&batch));
    assert_eq!(code, 201, "{body}");
    let ids: Vec<u64> = serde_json::from_str::<Value>(&body).unwrap()["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), 1100);
    let newest = *ids.last().unwrap();

    let first = json(&cli(&url, &["queue", "--all", "--json"]));
    let page: Vec<u64> = first["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_u64().unwrap())
        .collect();
    assert_eq!(page.len(), 1000);
    assert_eq!(page[0], newest, "newest first");
    assert!(page.windows(2).all(|w| w[0] > w[1]));
    let cursor = first["next_before"]
        .as_u64()
        .expect("a cursor: more jobs exist");
    assert_eq!(cursor, page[999]);
    let second = json(&cli(
        &url,
        &["queue", "--all", "--json", "--before", &cursor.to_string()],
    ));
    let rest: Vec<u64> = second["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_u64().unwrap())
        .collect();
    assert_eq!(rest.len(), 101, "the other 100 and the head job");
    assert_eq!(*rest.last().unwrap(), head);
    assert!(second["next_before"].is_null(), "{}", second["next_before"]);

    // Filters page the same way.
    let pending = json(&cli(&url, &["queue", "-s", "pending", "--json"]));
    assert_eq!(pending["jobs"].as_array().unwrap().len(), 1000);
    assert!(pending["next_before"].is_u64());
    let user = first["jobs"][0]["user"].as_str().unwrap().to_string();
    let mine = json(&cli(
        &url,
        &["queue", "-u", &user, "--json", "--limit", "1100"],
    ));
    assert_eq!(mine["jobs"].as_array().unwrap().len(), 1100);
    assert!(mine["next_before"].is_u64(), "the head job is older");

    // The table says that more exist and how to see them.
    let table = stdout(&cli(&url, &["queue", "--all"]));
    assert!(
        table.contains(&format!(
            "older ones match too: `gpusched queue --all --before {cursor}`"
        )),
        "{}",
        table.lines().last().unwrap_or("")
    );

    // `show`: CPUs, memory, GPU model and the environment's names, never its values.
    let shown = stdout(&cli(&url, &["show", &head.to_string()]));
    for line in [
        "cpus: 1.5",
        "memory: 2048 MiB",
        "gpu model: A100*",
        "env: HF_HOME, SECRET_TOKEN (names only)",
    ] {
        assert!(shown.contains(line), "{line:?} missing from:\n{shown}");
    }
    assert!(!shown.contains("hunter2"), "{shown}");
}

/// What `openssl req -x509` makes unless told otherwise: a CA certificate. The server
/// refuses it at start with the command that makes a usable one.
#[test]
fn a_ca_certificate_is_refused_at_start_with_the_command_for_a_leaf() {
    let (_d, dir) = scratch();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let Some(openssl) = gpusched_store::testing::require_program(
        "a_ca_certificate_is_refused_at_start_with_the_command_for_a_leaf",
        "openssl",
        "openssl",
    ) else {
        return;
    };
    let made = Command::new(openssl)
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"])
        .args(["-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        // Spelt out: OpenSSL's default configuration adds it too.
        .args(["-addext", "basicConstraints=critical,CA:TRUE", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("run openssl");
    assert!(
        made.status.success(),
        "openssl req could not make a certificate: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let mut server = Proc {
        child: Command::new(BIN)
            .args(["server", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.join("data"))
            .arg("--tls-cert")
            .arg(&cert)
            .arg("--tls-key")
            .arg(&key)
            .env("GPUSCHED_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    };
    // Bounded: a server that accepted the certificate would serve forever.
    let mut status = None;
    wait_until(Duration::from_secs(30), || {
        status = server.child.try_wait().unwrap();
        status.is_some()
    });
    let mut e = String::new();
    std::io::Read::read_to_string(server.child.stderr.as_mut().unwrap(), &mut e).unwrap();
    assert_eq!(status.unwrap().code(), Some(2), "{e}");
    assert!(
        e.contains("is a CA certificate")
            && e.contains("-addext basicConstraints=critical,CA:FALSE")
            && e.contains("--ca-cert"),
        "{e}"
    );
}
