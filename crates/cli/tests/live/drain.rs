//! Drains with a real agent: a drained node starts nothing new (the waiting job says
//! why), `drain --now` requeues its running job through the preemption path without
//! using a retry, `resume` puts the node back and the waiting jobs start.

use crate::support::*;

#[test]
fn drain_holds_new_jobs_drain_now_requeues_and_resume_starts_them() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &["--preempt-grace", "5s"]);
    let _agent = agent(&url, "gpu-a", &dir.join("agent"), Gpus::Fake(1));
    // A job that saves and leaves on the checkpoint signal, and says which run it is.
    let body = "trap 'echo got-usr1; exit 0' USR1; \
                echo start restart=$GPUSCHED_RESTART_COUNT; \
                while true; do sleep 0.2; done";
    let long = submit(&url, &["--max-retries", "0", "--", "sh", "-c", body]);
    let first_log = dir.join(format!("agent/jobs/logs/{long}.1.stdout"));
    wait_for_text(&first_log, SLOW, |t| t.contains("start restart=0"));

    // Admins only: over TCP without a token the CLI is refused, and says so.
    let refused = cli_as(&url, None, &["drain", "gpu-a"]);
    assert!(!refused.status.success(), "{}", stdout(&refused));
    let unknown = cli(&url, &["drain", "gpu-zz", "--reason", "maintenance"]);
    assert!(
        !unknown.status.success() && stderr(&unknown).contains("gpu-a"),
        "a 404 naming the known nodes: {}",
        stderr(&unknown)
    );
    let o = cli(&url, &["drain", "gpu-a", "--reason", "maintenance"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("gpu-a drained (maintenance)"),
        "{}",
        stdout(&o)
    );

    // A new job waits, and says why; the running job runs on.
    let short = submit(&url, &["--", "echo", "hello"]);
    wait_until(SLOW, || {
        job(&url, short)["reason"]
            .as_str()
            .is_some_and(|r| r.contains("no node can hold it now: gpu-a is drained (maintenance)"))
    });
    assert_eq!(job(&url, short)["state"], "pending");
    assert_eq!(job(&url, long)["state"], "running");
    let nodes = stdout(&cli(&url, &["nodes"]));
    assert!(
        nodes.contains("online, drained")
            && nodes.contains("drained by")
            && nodes.contains("maintenance"),
        "{nodes}"
    );

    // --now: the running job gets the checkpoint signal and is requeued, no retry used
    // (it has none), and it stays pending while the node is drained.
    let o = cli(&url, &["drain", "gpu-a", "--now", "--reason", "reboot"]);
    assert!(o.status.success(), "{}", stderr(&o));
    wait_for_text(&first_log, SLOW, |t| t.contains("got-usr1"));
    wait_until(SLOW, || {
        let v = job(&url, long);
        v["state"] == "pending" && v["attempt"] == 2
    });
    let v = job(&url, long);
    assert_eq!(v["preemptions"], 1, "{v}");
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("gpu-a is drained (reboot)")),
        "{v}"
    );

    // Resume: the requeued job (submitted first) starts again, knowing it restarted;
    // the short one runs once it leaves the GPU.
    let o = cli(&url, &["resume", "gpu-a"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let second_log = dir.join(format!("agent/jobs/logs/{long}.2.stdout"));
    wait_for_text(&second_log, SLOW, |t| t.contains("start restart=1"));
    assert!(!stdout(&cli(&url, &["nodes"])).contains("drained"));
    let o = cli(&url, &["cancel", &long.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = wait_job(&url, short, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
}

/// GPU `index`'s health on `node` as the server shows it (`null` when healthy).
fn health(url: &str, node: &str, index: u32) -> serde_json::Value {
    let (code, body) = http(url, "GET", "/api/nodes", None);
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["nodes"]
        .as_array()
        .and_then(|ns| ns.iter().find(|n| n["name"] == node))
        .map(|n| n["gpu_health"][index.to_string()].clone())
        .unwrap_or_default()
}

#[test]
fn a_gpu_with_a_fatal_xid_is_avoided_until_resume() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let state = dir.join("agent");
    let _agent = agent_with(
        &url,
        "gpu-x",
        &state,
        Gpus::Fake(2),
        &["--telemetry-interval", "300ms"],
    );
    // The fake device raises Xid 79 on GPU 0 at its next pass (telemetry.md).
    let tmp = state.join("fake-faults.tmp");
    std::fs::write(&tmp, "[gpu.0]\nxid = 79\n").unwrap();
    std::fs::rename(&tmp, state.join("fake-faults.toml")).unwrap();
    wait_until(SLOW, || health(&url, "gpu-x", 0)["state"] == "unhealthy");
    assert_eq!(health(&url, "gpu-x", 0)["reason"], "Xid 79");
    assert!(health(&url, "gpu-x", 1).is_null(), "GPU 1 stays healthy");

    // Two one-GPU jobs: the first gets GPU 1, the second waits for a GPU.
    let first = submit(&url, &["--", "sleep", "60"]);
    wait_until(SLOW, || job(&url, first)["state"] == "running");
    assert_eq!(job(&url, first)["gpu_indices"], serde_json::json!([1]));
    let second = submit(&url, &["--", "echo", "on GPU 0 again"]);
    let nodes = stdout(&cli(&url, &["nodes"]));
    assert!(
        nodes.contains("online, 1 GPU unhealthy") && nodes.contains("GPU 0 unhealthy since"),
        "{nodes}"
    );
    let gpus = stdout(&cli(&url, &["nodes", "--gpus"]));
    assert!(gpus.contains("unhealthy: Xid 79"), "{gpus}");
    assert_eq!(job(&url, second)["state"], "pending");

    // Resume puts GPU 0 back (the Xid is not raised again) and the second job runs.
    let o = cli(&url, &["resume", "gpu-x"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = wait_job(&url, second, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["gpu_indices"], serde_json::json!([0]));
    let o = cli(&url, &["cancel", &first.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
}
