//! The server on PostgreSQL (a throwaway cluster per test, see
//! `gpusched_store::testing`): jobs run and survive a server restart; PostgreSQL
//! restarted under load loses no acknowledged job; a backup taken while the server
//! accepts submissions holds every job acknowledged before it started, and restores.
//! Without PostgreSQL installed these skip with a line (and fail under CI).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gpusched_store::testing::TempPostgres;
use serde_json::Value;

use crate::support::*;

/// Keeps submitting held jobs (pending until released) until `stop`, recording the ids the
/// server acknowledged. Submissions refused while the store is away are not recorded.
fn submitter(
    url: String,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<u64>>>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut refused = 0;
        while !stop.load(Ordering::Relaxed) {
            let o = cli(&url, &["submit", "--json", "--hold", "--", "true"]);
            if !o.status.success() {
                refused += 1;
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
            acked
                .lock()
                .unwrap()
                .push(v["ids"][0].as_u64().expect("an id"));
        }
        refused
    })
}

fn acked_len(acked: &Mutex<Vec<u64>>) -> usize {
    acked.lock().unwrap().len()
}

#[test]
fn a_server_on_postgres_runs_jobs_and_keeps_them_across_a_restart() {
    let Some(pg) = TempPostgres::start_or_skip("a_server_on_postgres_runs_jobs") else {
        return;
    };
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let port = free_port();
    let store = pg.url();
    let (server1, url) = server(&data, port, &["--store", &store]);
    let _a = agent(&url, "node-a", &dir.join("a"), Gpus::Declared(1));
    let out = dir.join("out");
    let done = submit(
        &url,
        &["--", "sh", "-c", &format!("echo ran > {}", out.display())],
    );
    let v = wait_job(&url, done, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "ran\n");
    // Held: stays pending.
    let waiting = submit(&url, &["--hold", "--", "true"]);
    assert!(
        !gpusched_store::default_file(&data).exists(),
        "the state went to PostgreSQL, not to a SQLite file"
    );
    let mut server1 = server1;
    server1.kill();
    let (server2, url2) = server(&data, port, &["--store", &store]);
    assert_eq!(url, url2);
    let v = job(&url, done);
    assert_eq!(
        (v["state"].as_str(), v["attempt"].as_u64()),
        (Some("succeeded"), Some(1))
    );
    assert_eq!(job(&url, waiting)["state"], "pending");
    // Ids go on after the stored ones.
    let next = submit(&url, &["--hold", "--", "true"]);
    assert_eq!(next, waiting + 1);
    let o = cli(&url, &["show", &done.to_string(), "--events"]);
    assert!(stdout(&o).contains("submitted"), "{}", stdout(&o));

    // An array whose tasks (compact records on PostgreSQL too, store schema 10) run
    // across a restart: each index once, each task read back with its timeline.
    let ledger = dir.join("ledger");
    let script = format!(
        "echo $GPUSCHED_JOB_ID $GPUSCHED_ARRAY_INDEX >> {}; sleep 1",
        ledger.display()
    );
    let array = submit(&url, &["--array", "0-2", "--", "sh", "-c", &script]);
    wait_until(SLOW, || {
        std::fs::read_to_string(&ledger).is_ok_and(|l| !l.is_empty())
    });
    let mut server2 = server2;
    server2.kill();
    let (_server3, _) = server(&data, port, &["--store", &store]);
    let v = wait_job(&url, array, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    let ledger = std::fs::read_to_string(&ledger).unwrap();
    let mut ran: Vec<&str> = ledger
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap())
        .collect();
    ran.sort_unstable();
    assert_eq!(ran, ["0", "1", "2"], "{ledger}");
    for line in ledger.lines() {
        let (id, index) = line.split_once(' ').unwrap();
        let (code, b) = http(
            &url,
            "GET",
            &format!("/api/jobs/{array}/tasks/{index}"),
            None,
        );
        assert_eq!(code, 200, "{b}");
        let t: Value = serde_json::from_str(&b).unwrap();
        assert_eq!(t["id"].as_u64(), id.parse().ok(), "{t}");
        assert_eq!(t["state"], "succeeded", "{t}");
        let (code, b) = http(&url, "GET", &format!("/api/jobs/{id}/events"), None);
        assert_eq!(code, 200, "{b}");
        let kinds: Vec<String> = serde_json::from_str::<Value>(&b).unwrap()["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(kinds.first().map(String::as_str), Some("submitted"), "{b}");
        assert_eq!(kinds.last().map(String::as_str), Some("ended"), "{b}");
        assert!(kinds.iter().any(|k| k == "started"), "{b}");
    }
    let (_, b) = http(&url, "GET", &format!("/api/jobs/{array}/tasks"), None);
    let listed = serde_json::from_str::<Value>(&b).unwrap()["jobs"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(listed, 3, "{b}");
}

#[test]
fn postgres_restarted_under_load_loses_no_acknowledged_job() {
    let Some(pg) = TempPostgres::start_or_skip("postgres_restarted_under_load") else {
        return;
    };
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let port = free_port();
    let store = pg.url();
    let (server1, url) = server(&data, port, &["--store", &store]);
    let _a = agent(&url, "node-a", &dir.join("a"), Gpus::Declared(1));
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let load = submitter(url.clone(), stop.clone(), acked.clone());
    wait_until(SLOW, || acked_len(&acked) >= 20);
    pg.restart().expect("PostgreSQL restarts");
    let after_restart = acked_len(&acked);
    // The server reconnects by itself: submissions are acknowledged again.
    wait_until(SLOW, || acked_len(&acked) >= after_restart + 20);
    stop.store(true, Ordering::Relaxed);
    let refused = load.join().unwrap();
    let ids = acked.lock().unwrap().clone();
    eprintln!(
        "{} acknowledged, {refused} refused while PostgreSQL was away",
        ids.len()
    );
    for &id in &ids {
        assert_eq!(job(&url, id)["state"], "pending", "job {id}");
    }
    // And they are in the database, not only in the server's memory.
    let mut server1 = server1;
    server1.kill();
    let (_server2, _) = server(&data, port, &["--store", &store]);
    for &id in &ids {
        assert_eq!(
            job(&url, id)["state"],
            "pending",
            "job {id} after a server restart"
        );
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len(), "an id was acknowledged twice");
}

/// Submits held jobs through `server` (`token`: over TCP with it, else the server's own
/// target) until `stop`; every failure's message and the longest a submission took.
fn strict_submitter(
    server: String,
    token: Option<String>,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<u64>>>,
) -> std::thread::JoinHandle<(Vec<String>, Duration)> {
    std::thread::spawn(move || {
        let mut failures = Vec::new();
        let mut longest = Duration::ZERO;
        while !stop.load(Ordering::Relaxed) {
            let args = ["submit", "--json", "--hold", "--", "true"];
            let t = std::time::Instant::now();
            let o = match &token {
                Some(t) => cli_as(&server, Some(t), &args),
                None => cli(&server, &args),
            };
            longest = longest.max(t.elapsed());
            if !o.status.success() {
                failures.push(stderr(&o));
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
            acked
                .lock()
                .unwrap()
                .push(v["ids"][0].as_u64().expect("an id"));
        }
        (failures, longest)
    })
}

/// The store going away for a moment is not the user's problem: while PostgreSQL is
/// restarted (as a crash would, four times) under two submit loops, one over the Unix
/// socket and one over TCP with a token, no submission fails. The server answers what it
/// cannot save or read 503 with `Retry-After` and the CLI sends it again (the client
/// token makes that the same job); every acknowledged job is stored once.
#[test]
fn no_submission_fails_while_postgres_restarts() {
    let Some(pg) = TempPostgres::start_or_skip("no_submission_fails_while_postgres_restarts")
    else {
        return;
    };
    let (_d, dir) = scratch();
    let store = pg.url();
    let (_server, url) = server(&dir.join("data"), 0, &["--store", &store]);
    // A node that could hold the jobs: without one a submission is refused (409).
    let _a = agent(&url, "node-a", &dir.join("a"), Gpus::Declared(1));
    let o = cli(&url, &["token", "create", "nobody"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let token = stdout(&o).trim().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let loops = [
        strict_submitter(url.clone(), None, stop.clone(), acked.clone()),
        strict_submitter(url.clone(), Some(token), stop.clone(), acked.clone()),
    ];
    wait_until(SLOW, || acked_len(&acked) >= 10);
    for round in 0..4 {
        let t = std::time::Instant::now();
        pg.restart().expect("PostgreSQL restarts");
        let after = acked_len(&acked);
        wait_until(SLOW, || acked_len(&acked) >= after + 10);
        eprintln!(
            "restart {round}: PostgreSQL back and 10 more acknowledged {:?} after the stop",
            t.elapsed()
        );
    }
    stop.store(true, Ordering::Relaxed);
    let mut failures = Vec::new();
    for (how, l) in ["the socket", "TCP"].into_iter().zip(loops) {
        let (failed, longest) = l.join().unwrap();
        eprintln!("over {how}: the longest submission took {longest:?}");
        failures.extend(failed);
    }
    let ids = acked.lock().unwrap().clone();
    assert!(
        failures.is_empty(),
        "{} of {} submissions failed while PostgreSQL restarted; the first: {}",
        failures.len(),
        failures.len() + ids.len(),
        failures[0]
    );
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len(), "an id was acknowledged twice");
    let o = cli(&url, &["queue", "--json", "--all", "--limit", "100000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let stored: std::collections::BTreeSet<u64> = list["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .filter_map(|j| j["id"].as_u64())
        .collect();
    for id in &ids {
        assert!(stored.contains(id), "job {id} was acknowledged, not listed");
    }
}

#[test]
fn a_backup_taken_under_submissions_holds_every_job_acknowledged_before_it() {
    let Some(pg) = TempPostgres::start_or_skip("a_backup_taken_under_submissions") else {
        return;
    };
    let (_d, dir) = scratch();
    let store = pg.url();
    let (_server, url) = server(&dir.join("data"), 0, &["--store", &store]);
    let _a = agent(&url, "node-a", &dir.join("a"), Gpus::Declared(1));
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(Vec::new()));
    let load = submitter(url.clone(), stop.clone(), acked.clone());
    wait_until(SLOW, || acked_len(&acked) >= 10);
    let before: Vec<u64> = acked.lock().unwrap().clone();
    let file = dir.join("backup.db");
    let o = std::process::Command::new(BIN)
        .args(["admin", "backup", "--store", &store, "--to"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("backed up"), "{}", stdout(&o));
    wait_until(SLOW, || acked_len(&acked) >= before.len() + 5);
    stop.store(true, Ordering::Relaxed);
    load.join().unwrap();
    // Restored into a new SQLite file and served from there: every job acknowledged
    // before the backup started is in it.
    let restored = dir.join("restored.db");
    let o = std::process::Command::new(BIN)
        .args(["admin", "migrate-store", "--from"])
        .arg(format!("sqlite:{}", file.display()))
        .arg("--to")
        .arg(format!("sqlite:{}", restored.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let restored_url = format!("sqlite:{}", restored.display());
    let (_s2, url2) = server(&dir.join("data2"), 0, &["--store", &restored_url]);
    for &id in &before {
        assert_eq!(job(&url2, id)["state"], "pending", "job {id}");
    }
    // A second backup to the same file is refused with advice, and so is a copy into
    // a store that is not empty.
    let o = std::process::Command::new(BIN)
        .args(["admin", "backup", "--store", &store, "--to"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("exists already"), "{}", stderr(&o));
    let o = std::process::Command::new(BIN)
        .args([
            "admin",
            "migrate-store",
            "--from",
            &restored_url,
            "--to",
            &store,
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not empty"), "{}", stderr(&o));
}
