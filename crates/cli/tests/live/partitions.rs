//! Partitions, constraints, node lists and advance reservations with real processes
//! (issue 35): three agents with fake GPUs and features on loopback, a queue file with
//! partitions, jobs placed only where their rules admit (a gang per part), and a
//! reservation that keeps a job without a walltime off its node and starts its own job
//! as its window opens, and a maintenance window that drains its node as it opens.
//!
//! Every check waits for the evidence (the job's own file, its row's node), bounded.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::*;

const QUEUES: &str = r#"
[queues.default]

[partition.debug]
nodes = ["n2"]
max_walltime = "10m"

[partition.ib]
features = "ib"
"#;

fn nodes_of(v: &Value) -> BTreeSet<String> {
    match v["parts"].as_array() {
        Some(parts) if !parts.is_empty() => parts
            .iter()
            .filter_map(|p| p["node"].as_str().map(String::from))
            .collect(),
        _ => v["node"].as_str().map(String::from).into_iter().collect(),
    }
}

#[test]
fn jobs_run_only_where_their_partition_constraint_and_node_list_admit() {
    let (_d, dir) = scratch();
    let queues = dir.join("queues.toml");
    std::fs::write(&queues, QUEUES).unwrap();
    let (_server, url) = server(
        &dir.join("data"),
        0,
        &["--queues", queues.to_str().unwrap()],
    );
    let _a = agent_with(
        &url,
        "n1",
        &dir.join("a1"),
        Gpus::Fake(2),
        &["--feature", "a100,ib"],
    );
    let _b = agent_with(
        &url,
        "n2",
        &dir.join("a2"),
        Gpus::Fake(2),
        &["--feature", "a100"],
    );
    let _c = agent_with(
        &url,
        "n3",
        &dir.join("a3"),
        Gpus::Fake(2),
        &["--feature", "h100", "--feature", "ib"],
    );
    wait_until(SLOW, || {
        ["n1", "n2", "n3"]
            .iter()
            .all(|n| node_state(&url, n).as_deref() == Some("online"))
    });
    let listed = stdout(&cli(&url, &["nodes"]));
    assert!(
        listed.contains("FEATURES") && listed.contains("PARTITIONS"),
        "{listed}"
    );
    assert!(listed.contains("h100,ib"), "{listed}");

    // A gang of two one-GPU parts on nodes with ib: n1 and n3, never n2.
    let gang = submit(
        &url,
        &[
            "-C",
            "ib",
            "--nodes",
            "2",
            "--gpus-per-node",
            "1",
            "-t",
            "5m",
            "--",
            "true",
        ],
    );
    // debug is n2 alone; a100 without ib is n2 too; the node list minus the exclusion n3.
    let debug = submit(&url, &["-p", "debug", "-t", "5m", "--", "true"]);
    let plain = submit(&url, &["-C", "a100&!ib", "-t", "5m", "--", "true"]);
    let listed_job = submit(&url, &["-w", "n1,n3", "-x", "n1", "-t", "5m", "--", "true"]);
    for (id, want) in [
        (gang, &["n1", "n3"][..]),
        (debug, &["n2"][..]),
        (plain, &["n2"][..]),
        (listed_job, &["n3"][..]),
    ] {
        let v = wait_job(&url, id, SLOW);
        assert_eq!(v["state"], "succeeded", "{v}");
        let on: Vec<String> = nodes_of(&v).into_iter().collect();
        assert_eq!(on, want, "job {id}: {v}");
    }
    // The partition's limit and a constraint no node meets are refused, saying why.
    let o = cli(&url, &["submit", "-p", "debug", "-t", "1h", "--", "true"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("partition `debug` allows a walltime of at most 10m"),
        "{}",
        stderr(&o)
    );
    let o = cli(&url, &["submit", "-C", "v100", "--", "true"]);
    assert!(
        stderr(&o).contains("no node this cluster knows is one this job may use"),
        "{}",
        stderr(&o)
    );
    let o = cli(&url, &["submit", "-C", "a100&(ib", "--", "true"]);
    assert!(stderr(&o).contains("is never closed"), "{}", stderr(&o));
}

#[test]
fn a_reservation_keeps_a_job_out_and_starts_its_own_when_its_window_opens() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent(&url, "n1", &dir.join("a1"), Gpus::Fake(1));
    wait_until(SLOW, || node_state(&url, "n1").as_deref() == Some("online"));
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    // A window on n1 opening in 4 s.
    let body = serde_json::json!({
        "name": "demo", "start_ms": now_ms + 4000, "duration_s": 120, "nodes": ["n1"],
        "users": [std::env::var("USER").unwrap_or_else(|_| "root".into())]
    });
    let (code, text) = http(&url, "POST", "/api/reservations", Some(&body.to_string()));
    assert_eq!(code, 201, "{text}");
    // Audited, and the audit log reads back with it.
    let audit = stdout(&cli(&url, &["audit", "--json", "--since", "1d"]));
    assert!(audit.contains("reservation_create"), "{audit}");
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    // No walltime: never starts on n1 before the window (or in it).
    let outsider = submit(&url, &["--", "true"]);
    // The reservation's own job, started as the window opens: it writes when it ran.
    let stamp = out.join("member");
    let member = submit(
        &url,
        &[
            "--reservation",
            "demo",
            "-t",
            "1m",
            "--",
            "sh",
            "-c",
            &format!("date +%s%3N > {}", stamp.display()),
        ],
    );
    let ran = wait_for_text(&stamp, SLOW, |t| t.trim().parse::<u64>().is_ok());
    let ran_ms: u64 = ran.trim().parse().unwrap();
    assert!(
        ran_ms >= now_ms + 4000,
        "the member ran at {ran_ms}, before the window at {}",
        now_ms + 4000
    );
    assert_eq!(wait_job(&url, member, SLOW)["state"], "succeeded");
    let v = job(&url, outsider);
    assert_eq!(v["state"], "pending", "{v}");
    let reason = v["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("demo"),
        "the reason names the reservation: {reason}"
    );
    // Listed, and deleted once nothing runs in it; then the outsider runs.
    let listed = stdout(&cli(&url, &["reservation", "ls"]));
    assert!(
        listed.contains("demo") && listed.contains("active"),
        "{listed}"
    );
    let (code, text) = http(&url, "DELETE", "/api/reservations/demo", None);
    assert_eq!(code, 200, "{text}");
    assert_eq!(wait_job(&url, outsider, SLOW)["state"], "succeeded");
}

#[test]
fn a_maintenance_window_drains_its_node_as_it_opens_and_the_job_comes_back_after() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent(&url, "n1", &dir.join("a1"), Gpus::Fake(1));
    wait_until(SLOW, || node_state(&url, "n1").as_deref() == Some("online"));
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    // Started before any window exists; each attempt says it runs.
    let started = out.join("started");
    let script = format!(
        "echo $GPUSCHED_ATTEMPT >> {}; exec sleep 600",
        started.display()
    );
    let id = submit(&url, &["--", "sh", "-c", &script]);
    wait_for_text(&started, SLOW, |t| t.lines().count() == 1);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let opens = now_ms + 3000;
    let body = serde_json::json!({
        "name": "fw-upgrade", "start_ms": opens, "duration_s": 600, "nodes": ["n1"],
        "maintenance": true
    });
    let (code, text) = http(&url, "POST", "/api/reservations", Some(&body.to_string()));
    assert_eq!(code, 201, "{text}");
    // As the window opens the job is stopped and requeued; it waits, the reason naming
    // the window.
    wait_until(SLOW, || {
        let v = job(&url, id);
        v["attempt"] == 2
            && v["state"] == "pending"
            && v["reason"].as_str().unwrap_or("").contains("fw-upgrade")
    });
    // Not before the window opened: the preemption's own time says so.
    let o = cli(&url, &["show", &id.to_string(), "--events", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("show --json prints JSON");
    let preempted = v["events"]["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["kind"] == "preempted")
        .cloned()
        .unwrap_or_else(|| panic!("a preempted event: {v}"));
    let at = preempted["at_ms"].as_u64().expect("at_ms");
    assert!(
        at >= opens,
        "preempted at {at}, before the window at {opens}"
    );
    assert!(
        preempted["detail"]
            .as_str()
            .unwrap_or("")
            .contains("maintenance reservation fw-upgrade"),
        "{preempted}"
    );
    // The window ended early by an admin: the job runs again, its second attempt.
    let (code, text) = http(&url, "DELETE", "/api/reservations/fw-upgrade", None);
    assert_eq!(code, 200, "{text}");
    let runs = wait_for_text(&started, SLOW, |t| t.lines().count() == 2);
    assert_eq!(runs.lines().collect::<Vec<_>>(), ["1", "2"]);
    let (code, text) = http(&url, "POST", &format!("/api/jobs/{id}/cancel"), None);
    assert!(code == 200 || code == 202, "{code} {text}");
    assert_eq!(wait_job(&url, id, SLOW)["state"], "cancelled");
}
