//! GPU telemetry end to end: a fake agent's samples reach the server (its node list),
//! a job makes its GPU read busy, a fault written into the agent's state directory
//! shows at the next pass, and the agent's `--metrics-listen` serves DCGM exporter's
//! series.

use serde_json::Value;

use crate::support::*;

/// The node's telemetry as the server shows it.
fn telemetry(url: &str, node: &str) -> Option<Value> {
    let (code, body) = http(url, "GET", "/api/nodes", None);
    if code != 200 {
        return None;
    }
    let v: Value = serde_json::from_str(&body).ok()?;
    v["nodes"]
        .as_array()?
        .iter()
        .find(|n| n["name"] == node)
        .map(|n| n["telemetry"].clone())
        .filter(|t| !t.is_null())
}

fn gpu(t: &Value, index: u64) -> Value {
    t["gpus"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["index"] == index))
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn fake_gpu_samples_reach_the_server_and_the_agents_metrics() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let port = free_port();
    let state = dir.join("agent");
    let listen = format!("127.0.0.1:{port}");
    let _agent = agent_with(
        &url,
        "tele",
        &state,
        Gpus::Fake(2),
        &["--telemetry-interval", "300ms", "--metrics-listen", &listen],
    );
    wait_until(SLOW, || telemetry(&url, "tele").is_some());
    let t = telemetry(&url, "tele").unwrap();
    for i in 0..2 {
        let g = gpu(&t, i);
        let temp = g["temp_c"].as_u64().unwrap();
        let mw = g["power_mw"].as_u64().unwrap();
        assert!((30..=40).contains(&temp), "idle: {g}");
        assert!((50_000..=70_000).contains(&mw), "idle: {g}");
        assert!(g["energy_mj"].is_u64() && g["lost"] == false, "{g}");
    }

    // A job on GPU 0: the server sees it busy at a later pass.
    let id = submit(&url, &["--gpus", "1", "--", "sleep", "60"]);
    wait_until(SLOW, || {
        telemetry(&url, "tele").is_some_and(|t| gpu(&t, 0)["util_pct"].as_u64() >= Some(90))
    });
    assert_eq!(gpu(&telemetry(&url, "tele").unwrap(), 1)["util_pct"], 0);

    // A fault written while the agent runs.
    let faults = state.join("fake-faults.toml");
    let tmp = state.join("fake-faults.tmp");
    std::fs::write(&tmp, "[gpu.1]\ntemp_c = 97\n").unwrap();
    std::fs::rename(&tmp, &faults).unwrap();
    wait_until(SLOW, || {
        telemetry(&url, "tele").is_some_and(|t| gpu(&t, 1)["temp_c"] == 97)
    });

    // The agent's own endpoint, DCGM exporter's names and labels.
    let (code, body) = http_with(&format!("http://{listen}"), None, "GET", "/metrics", None);
    assert_eq!(code, 200, "{body}");
    let line = body
        .lines()
        .find(|l| l.starts_with("DCGM_FI_DEV_GPU_TEMP{gpu=\"1\""))
        .unwrap_or_else(|| panic!("no GPU 1 temperature in {body}"));
    assert!(line.ends_with(" 97"), "{line}");
    for label in [
        "UUID=\"GPU-",
        "modelName=\"NVIDIA H100 80GB HBM3\"",
        "Hostname=\"tele\"",
    ] {
        assert!(line.contains(label), "{label} in {line}");
    }
    assert!(body.contains("gpusched_agent_jobs_running 1"), "{body}");
    assert!(
        body.contains("gpusched_agent_spawn_seconds_count 1"),
        "{body}"
    );

    let o = cli(&url, &["cancel", &id.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
}
