//! Several servers on one store, one leader (issue 15): three `gpusched server`s share
//! one SQLite file (WAL lets processes on one host share it; across machines the store
//! is PostgreSQL), agents and the CLI are given every server's URL.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// One server of the cluster.
struct Srv {
    proc: Proc,
    url: String,
    dir: PathBuf,
}

/// Starts a server on the shared store `store` with the cluster's join token file.
fn start(dir: &Path, store: &str, join: &Path, extra: &[&str]) -> Srv {
    let listen = format!("127.0.0.1:{}", free_port());
    let mut child = Command::new(BIN)
        .args(["server", "--listen", &listen, "--data-dir"])
        .arg(dir)
        .args(["--store", store, "--join-token-file"])
        .arg(join)
        // Longer than any failover here: agents keep their jobs through it.
        .args(["--heartbeat-timeout", "30s", "--grace", "1s"])
        .args(extra)
        .env("GPUSCHED_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gpusched server");
    let stderr = child.stderr.take().expect("piped stderr");
    let url = read_url(stderr, "listening on ");
    Srv {
        proc: Proc { child },
        url,
        dir: dir.to_path_buf(),
    }
}

fn health(url: &str) -> Value {
    let (code, body) = http_with(url, None, "GET", "/api/health", None);
    if code != 200 {
        return Value::Null;
    }
    serde_json::from_str(&body).unwrap_or(Value::Null)
}

/// Waits (bounded) until one of `urls` says it leads; its index and epoch.
fn wait_leader(urls: &[&str], limit: Duration) -> (usize, u64) {
    let start = Instant::now();
    loop {
        for (i, u) in urls.iter().enumerate() {
            let h = health(u);
            if h["role"] == "leader" {
                return (i, h["epoch"].as_u64().expect("a leader's epoch"));
            }
        }
        assert!(
            start.elapsed() < limit,
            "no server of {urls:?} led within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An admin token, made over the leader's Unix socket (it is in the store: every
/// later leader knows it).
fn admin_token(leader: &Srv) -> String {
    let sock = format!("unix:{}", leader.dir.join("gpusched.sock").display());
    // For this Unix user: jobs run as their submitter.
    let me = Command::new("id").arg("-un").output().expect("id -un");
    let me = String::from_utf8_lossy(&me.stdout).trim().to_string();
    let o = cli_as(&sock, None, &["token", "create", &me, "--admin"]);
    assert!(o.status.success(), "token create: {}", stderr(&o));
    stdout(&o).trim().to_string()
}

/// Starts an agent given every server (`list`), with two declared GPUs.
fn agent_of(list: &str, name: &str, state: &Path, join: &Path) -> Proc {
    let child = Command::new(BIN)
        .args(["agent", "--server", list, "--name", name, "--state-dir"])
        .arg(state)
        .arg("--join-token-file")
        .arg(join)
        .args([
            "--allow-root-jobs",
            "--gpus",
            "2",
            "--gpu-model",
            "A100-SXM4-80GB",
        ])
        .args(["--gpu-backend", "declared"])
        .env("GPUSCHED_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gpusched agent");
    Proc { child }
}

fn nodes_online(url: &str, token: &str) -> usize {
    let (code, body) = http_with(url, Some(token), "GET", "/api/nodes", None);
    if code != 200 {
        return 0;
    }
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    v["nodes"]
        .as_array()
        .map_or(0, |n| n.iter().filter(|n| n["state"] == "online").count())
}

/// Waits (bounded) for job `id` to end, asking the servers of `list` in turn.
fn wait_end(urls: &[&str], token: &str, id: u64, limit: Duration) -> Value {
    let start = Instant::now();
    loop {
        for u in urls {
            let path = format!("/api/jobs/{id}/wait?timeout_s=1");
            let (code, body) = http_with(u, Some(token), "GET", &path, None);
            if code == 200 {
                let v: Value = serde_json::from_str(&body).expect("job JSON");
                if ["succeeded", "failed", "cancelled", "timed_out"]
                    .contains(&v["state"].as_str().unwrap_or(""))
                {
                    return v;
                }
            }
        }
        assert!(
            start.elapsed() < limit,
            "job {id} did not end within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("run kill")
        .success();
    assert!(ok, "kill {sig} {pid}");
}

/// Every line `job attempt` of the ledger, counted.
fn ledger_counts(text: &str) -> BTreeMap<(u64, u64), usize> {
    let mut out = BTreeMap::new();
    for l in full_lines(text) {
        let mut f = l.split(' ').map(str::parse::<u64>);
        if let (Some(Ok(j)), Some(Ok(a))) = (f.next(), f.next()) {
            *out.entry((j, a)).or_default() += 1;
        }
    }
    out
}

#[test]
fn killing_the_leader_under_submission_loses_duplicates_and_reruns_nothing() {
    let (_d, dir) = scratch();
    let store = format!("sqlite:{}", dir.join("shared.db").display());
    let join = dir.join("join-token");
    // The first makes the schema and leads; the others follow.
    let mut first = start(&dir.join("s0"), &store, &join, &[]);
    wait_leader(&[&first.url], SLOW);
    let s1 = start(&dir.join("s1"), &store, &join, &[]);
    let s2 = start(&dir.join("s2"), &store, &join, &[]);
    let urls = [first.url.clone(), s1.url.clone(), s2.url.clone()];
    for u in &urls[1..] {
        assert_eq!(health(u)["role"], "follower", "{u}");
    }
    let list = urls.join(",");
    let token = admin_token(&first);
    // One agent is given a follower first: it reaches the leader through the 307.
    let reversed: Vec<&str> = urls.iter().rev().map(String::as_str).collect();
    let _a = agent_of(&reversed.join(","), "node-a", &dir.join("a"), &join);
    let _b = agent_of(&list, "node-b", &dir.join("b"), &join);
    wait_until(SLOW, || nodes_online(&first.url, &token) == 2);

    let ledger = dir.join("ledger");
    // A job that runs across the takeover (until the gate opens): the takeover grace
    // must let it run on, never requeue it.
    let gate = dir.join("gate");
    let long_cmd = format!(
        "echo \"$GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT\" >> {}; while [ ! -e {} ]; do sleep 0.05; done",
        ledger.display(),
        gate.display()
    );
    let o = cli_as(
        &list,
        Some(&token),
        &[
            "submit",
            "--json",
            "--name",
            "across",
            "--max-retries",
            "2",
            "--",
            "sh",
            "-c",
            &long_cmd,
        ],
    );
    assert!(o.status.success(), "submit: {}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("submit --json");
    let across = v["ids"][0].as_u64().expect("an id");
    wait_for_text(&ledger, SLOW, |t| {
        ledger_counts(t).contains_key(&(across, 1))
    });
    let accepted: Arc<Mutex<Vec<u64>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let submitter = {
        let (accepted, stop, ledger) = (accepted.clone(), stop.clone(), ledger.clone());
        let (list, token) = (list.clone(), token.clone());
        std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let name = format!("f-{i}");
                let cmd = format!(
                    "echo \"$GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT\" >> {}; sleep 0.3",
                    ledger.display()
                );
                let o = cli_as(
                    &list,
                    Some(&token),
                    &["submit", "--json", "--name", &name, "--max-retries", "0"]
                        .into_iter()
                        .chain(["--", "sh", "-c", &cmd])
                        .collect::<Vec<_>>(),
                );
                if o.status.success() {
                    let v: Value = serde_json::from_str(&stdout(&o)).expect("submit --json");
                    let id = v["ids"][0].as_u64().expect("an id");
                    accepted.lock().unwrap().push(id);
                }
                i += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let count = |a: &Arc<Mutex<Vec<u64>>>| a.lock().unwrap().len();
    wait_until(SLOW, || count(&accepted) >= 6);
    let before = count(&accepted);
    first.proc.kill();
    let killed = Instant::now();
    let (_, epoch) = wait_leader(&[&s1.url, &s2.url], SLOW);
    let failover = killed.elapsed();
    eprintln!("failover: a follower led {failover:?} after the leader's SIGKILL (epoch {epoch})");
    assert!(epoch >= 2, "a takeover bumps the epoch (got {epoch})");
    wait_until(SLOW, || count(&accepted) >= before + 6);
    stop.store(true, Ordering::SeqCst);
    submitter.join().expect("the submitter");
    let mut accepted = accepted.lock().unwrap().clone();
    std::fs::write(&gate, "").expect("open the gate");
    accepted.push(across);

    let live = [s1.url.as_str(), s2.url.as_str()];
    for &id in &accepted {
        let v = wait_end(&live, &token, id, SLOW);
        assert_eq!(v["state"], "succeeded", "job {id}: {v}");
        assert_eq!(v["attempt"], 1, "job {id} ran again: {v}");
    }
    // Each accepted job ran exactly once; no job ran twice.
    let text = wait_for_text(&ledger, SLOW, |t| {
        let c = ledger_counts(t);
        accepted.iter().all(|id| c.contains_key(&(*id, 1)))
    });
    for ((job, attempt), n) in ledger_counts(&text) {
        assert_eq!(n, 1, "job {job} attempt {attempt} ran {n} times");
        assert_eq!(attempt, 1, "job {job} needed attempt {attempt}");
    }
    // Nothing duplicated: each submission (its name) is one job.
    let (code, body) = http_with(live[0], Some(&token), "GET", "/api/jobs?limit=100000", None);
    let (code, body) = if code == 307 || code == 503 {
        http_with(live[1], Some(&token), "GET", "/api/jobs?limit=100000", None)
    } else {
        (code, body)
    };
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).expect("job list");
    let mut names = BTreeMap::new();
    for j in v["jobs"].as_array().expect("jobs") {
        *names
            .entry(j["name"].as_str().unwrap_or("").to_string())
            .or_insert(0) += 1;
    }
    assert!(names.values().all(|&n| n == 1), "duplicated: {names:?}");
    assert!(
        failover < Duration::from_secs(20),
        "failover took {failover:?} (about 4-5 s on an idle machine with the default lease)"
    );
}

#[test]
fn a_stopped_leader_commits_nothing_after_a_takeover_and_redirects_its_clients() {
    let (_d, dir) = scratch();
    let store = format!("sqlite:{}", dir.join("shared.db").display());
    let join = dir.join("join-token");
    let lease = ["--lease", "2s"];
    let s0 = start(&dir.join("s0"), &store, &join, &lease);
    wait_leader(&[&s0.url], SLOW);
    let s1 = start(&dir.join("s1"), &store, &join, &lease);
    let token = admin_token(&s0);
    let _a = agent_of(
        &format!("{},{}", s1.url, s0.url),
        "node-a",
        &dir.join("a"),
        &join,
    );
    wait_until(SLOW, || nodes_online(&s0.url, &token) == 1);

    // A follower's health names the leader; any other route is a 307 to the same path
    // there.
    let h = health(&s1.url);
    assert_eq!(h["status"], "follower", "{h}");
    assert_eq!(h["leader_url"], s0.url.as_str(), "{h}");
    assert_eq!(h["epoch"], 1, "{h}");
    let (code, head, _) = http_full(&s1.url, None, "POST", "/api/jobs?x=1", Some("{}"));
    assert_eq!(code, 307, "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("location: {}/api/jobs?x=1", s0.url)),
        "{head}"
    );
    // The CLI given only the follower gets there, body and token kept.
    let o = cli_as(
        &s1.url,
        Some(&token),
        &["submit", "--json", "--name", "via-follower", "--", "true"],
    );
    assert!(
        o.status.success(),
        "submit via the follower: {}",
        stderr(&o)
    );
    // Quiet before the stop: the job is over and its end committed.
    let v: Value = serde_json::from_str(&stdout(&o)).expect("submit --json");
    let first = v["ids"][0].as_u64().expect("an id");
    let v = wait_end(&[&s0.url], &token, first, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");

    // Stop the leader past its lease; the follower takes over. On a shared SQLite file
    // a stop that lands inside a write transaction (a renewal's fsync) keeps the write
    // lock, and nobody can take over until it resumes (docs/failover.md): then resume
    // it and stop it again.
    let pid = s0.proc.child.id();
    let mut epoch = None;
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(300));
        signal(pid, "-STOP");
        let stopped = Instant::now();
        let deadline = stopped + Duration::from_secs(10);
        while Instant::now() < deadline && epoch.is_none() {
            let h = health(&s1.url);
            if h["role"] == "leader" {
                epoch = h["epoch"].as_u64();
                eprintln!("takeover {:?} after SIGSTOP (lease 2 s)", stopped.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if epoch.is_some() {
            break;
        }
        eprintln!("the stop landed inside a write transaction; resuming and stopping again");
        signal(pid, "-CONT");
        wait_leader(&[&s0.url, &s1.url], SLOW);
    }
    let epoch = epoch.expect("a takeover while the leader was stopped");
    assert!(epoch >= 2, "a takeover bumps the epoch (got {epoch})");
    // A request reaches the stopped leader (the kernel queues it), then it wakes up.
    let (url0, tok) = (s0.url.clone(), token.clone());
    let late = std::thread::spawn(move || {
        let body = r#"{"name":"from-the-deposed-leader","command":["true"]}"#;
        http_full(&url0, Some(&tok), "POST", "/api/jobs", Some(body))
    });
    std::thread::sleep(Duration::from_millis(300));
    signal(pid, "-CONT");
    let (code, head, body) = late.join().expect("the late request");
    assert!(
        code == 307 || code == 503,
        "the deposed leader answered {code}: {head}\n{body}"
    );
    // It follows now, and sends its clients to the new leader.
    wait_until(SLOW, || {
        let h = health(&s0.url);
        h["status"] == "follower" && h["leader_url"] == s1.url.as_str()
    });
    let (code, head, _) = http_full(&s0.url, Some(&token), "GET", "/api/jobs", None);
    assert_eq!(code, 307, "{head}");
    // The store holds nothing it was asked after the takeover, and the new leader has
    // the job accepted before.
    let (code, body) = http_with(&s1.url, Some(&token), "GET", "/api/jobs", None);
    assert_eq!(code, 200, "{body}");
    assert!(!body.contains("from-the-deposed-leader"), "{body}");
    assert!(body.contains("via-follower"), "{body}");
    // And it is still the epoch of the takeover: the old leader took nothing back.
    assert_eq!(health(&s1.url)["epoch"], epoch);
    drop(s0);
}
