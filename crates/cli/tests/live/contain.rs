//! Containment through the whole stack: a real agent puts each job in a cgroup; the
//! server learns what the node enforces, a job over its `--mem` fails saying so, a
//! daemon a job left when its agent was SIGKILLed dies when the agent comes back, and
//! what a job used reaches its view. Skipped (saying why) where this process may not
//! manage cgroups; under CI that fails instead.

use serde_json::Value;

use crate::support::*;

fn enforced(url: &str, node: &str) -> Vec<String> {
    let (code, body) = http(url, "GET", "/api/nodes", None);
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == node)
        .and_then(|n| n["containment"]["enforced"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|e| e.as_str().map(String::from))
        .collect()
}

#[test]
fn jobs_are_held_to_their_memory_leave_nothing_behind_and_report_what_they_used() {
    // The memory hog is a Python one-liner.
    let Some(_python) = gpusched_store::testing::require_program(
        "jobs_are_held_to_their_memory_leave_nothing_behind_and_report_what_they_used",
        "python3",
        "python3",
    ) else {
        return;
    };
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), free_port(), &[]);
    let state = dir.join("a");
    let mut agent1 = agent(&url, "n1", &state, Gpus::Declared(2));
    let what = enforced(&url, "n1");
    if !what.iter().any(|e| e == "memory") {
        let why = format!("SKIPPED: the agent enforces only {what:?} here");
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("{why}");
        return;
    }
    assert!(what.iter().any(|e| e == "kill"), "{what:?}");

    // Over its memory: the kernel kills it, and the job says why.
    let hog = submit(
        &url,
        &[
            "--mem",
            "64M",
            "--",
            "python3",
            "-c",
            "b = bytearray(256 << 20)",
        ],
    );
    let v = wait_job(&url, hog, SLOW);
    assert_eq!(v["state"], "failed", "{v}");
    let reason = v["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("out of memory: peak") && reason.contains("of its 64 MiB limit"),
        "{v}"
    );

    // What a job used reaches its view.
    let work = submit(
        &url,
        &[
            "--cpus",
            "1",
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done",
        ],
    );
    let v = wait_job(&url, work, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert!(v["usage"]["cpu_ms"].as_u64().unwrap_or(0) > 20, "{v}");
    assert!(
        v["usage"]["mem_peak_bytes"].as_u64().unwrap_or(0) > 0,
        "{v}"
    );
    let shown = stdout(&cli(&url, &["show", &work.to_string()]));
    assert!(shown.to_lowercase().contains("cpu"), "{shown}");

    // A daemon outside the job's process group, left when its agent is SIGKILLed, is
    // ended by the agent's next life.
    let pidfile = dir.join("daemon.pid");
    let script = format!(
        "setsid sh -c 'echo $$ > {p}; exec sleep 1000' & sleep 1000",
        p = pidfile.display()
    );
    let id = submit(&url, &["--", "sh", "-c", &script]);
    let text = wait_for_text(&pidfile, SLOW, |t| t.ends_with('\n'));
    let daemon: i32 = text.trim().parse().unwrap();
    agent1.kill();
    assert!(pid_alive(daemon), "the daemon dies only with its cgroup");
    let _agent2 = agent(&url, "n1", &state, Gpus::Declared(2));
    wait_until(SLOW, || !pid_alive(daemon));
    // The job itself is requeued (lost with its agent) and may run again: stop it.
    assert!(cli(&url, &["cancel", &id.to_string()]).status.success());
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "cancelled", "{v}");
}
