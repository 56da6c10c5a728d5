//! The power budget and consolidation end to end (docs/power.md): a server with
//! `--power-budget`, `--gpu-power-cap`, `--consolidate-after` and a `--power-hook` script
//! that records its calls, two agents of fake H100s. What is drawn at the caps never
//! passes the budget, a job held back says why and starts once power frees, the caps
//! reach the fake GPUs (a job's energy follows the cap, not the board power), and idle
//! nodes go down and come up through the hook.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::*;

/// A series' value in a Prometheus text exposition.
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

#[test]
fn the_budget_is_never_exceeded_and_the_hook_takes_idle_nodes_down_and_up() {
    let (_d, dir) = scratch();
    let calls = dir.join("hook-calls");
    let hook = dir.join("hook.sh");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\necho \"$1 $2\" >> {}\n", calls.display()),
    )
    .unwrap();
    let hook_cmd = format!("sh {}", hook.display());
    // Fake H100s (700 W board, 60 W idle) capped at 400 W: four idle GPUs count 240 W,
    // each busy one 340 W more, so 1,000 W lets two run at once and holds a third back.
    let (_server, url) = server(
        &dir.join("data"),
        0,
        &[
            "--power-budget",
            "1000",
            "--gpu-power-cap",
            "400",
            "--consolidate-after",
            "3s",
            "--power-hook",
            &hook_cmd,
            "--power-hook-timeout",
            "30s",
        ],
    );
    let interval = ["--telemetry-interval", "200ms"];
    let _p1 = agent_with(&url, "p1", &dir.join("p1"), Gpus::Fake(2), &interval);
    let _p2 = agent_with(&url, "p2", &dir.join("p2"), Gpus::Fake(2), &interval);

    // Both nodes run nothing: 3 s after each went idle it goes down (in the order their
    // idle times began).
    let long = Duration::from_secs(120);
    wait_for_text(&calls, long, |t| full_lines(t).len() >= 2);

    // Sample the budget's gauges every 100 ms while the jobs run.
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (url, done) = (url.clone(), done.clone());
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !done.load(Ordering::SeqCst) {
                let (code, body) = http(&url, "GET", "/metrics", None);
                if code == 200 {
                    let drawn = metric(&body, "gpusched_power_drawn_at_caps_watts");
                    let held = metric(&body, "gpusched_power_held_jobs");
                    samples.push((drawn.unwrap_or(-1.0), held.unwrap_or(-1.0)));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            samples
        })
    };
    let ids: Vec<u64> = (0..3)
        .map(|_| submit(&url, &["--gpus", "1", "--", "sleep", "4"]))
        .collect();
    // The third waits for power, and says so, until one of the first two ends.
    let held = ids[2];
    wait_until(long, || {
        let v = job(&url, held);
        v["state"] == "pending"
            && v["reason"]
                .as_str()
                .unwrap_or("")
                .contains("power budget 1 kW")
    });
    let ended: Vec<serde_json::Value> = ids.iter().map(|&id| wait_job(&url, id, long)).collect();
    done.store(true, Ordering::SeqCst);
    let samples = sampler.join().unwrap();
    for v in &ended {
        assert_eq!(v["state"], "succeeded", "{v}");
    }
    assert!(!samples.is_empty(), "no /metrics sample");
    for &(drawn, _) in &samples {
        assert!(
            (0.0..=1000.0).contains(&drawn),
            "drawn at caps {drawn} W: {samples:?}"
        );
    }
    assert!(
        samples.iter().any(|&(_, h)| h >= 1.0),
        "never held: {samples:?}"
    );
    assert!(
        samples.iter().any(|&(d, _)| d == 920.0),
        "two busy never seen: {samples:?}"
    );
    // The held job started only after one of the first two ended.
    let first_end = ended[..2]
        .iter()
        .filter_map(|v| v["end_ms"].as_u64())
        .min()
        .unwrap();
    assert!(
        ended[2]["start_ms"].as_u64().unwrap() >= first_end,
        "{ended:?}"
    );

    // The caps reached the fake GPUs: a job's energy is at most the 400 W cap over its
    // run (uncapped, a busy fake H100 draws ~630 W), give or take a sampling interval.
    for v in &ended {
        let ran_s = (v["end_ms"].as_u64().unwrap() - v["start_ms"].as_u64().unwrap()) as f64 / 1e3;
        if let Some(j) = v["energy_j"].as_u64() {
            assert!(
                (j as f64) <= 400.0 * (ran_s + 1.0),
                "{j} J over {ran_s} s: {v}"
            );
        }
    }

    // The hook: both nodes down (in either order: each goes when its own idle time is
    // up, and on a loaded machine p2's may come first), then p1 up for the first job (p2
    // stayed down: the budget, not a lack of GPUs, held the third job back).
    let text = wait_for_text(&calls, long, |t| full_lines(t).len() >= 3);
    let lines = full_lines(&text);
    let mut downs = lines[..2].to_vec();
    downs.sort_unstable();
    assert_eq!(downs, ["down p1", "down p2"], "{text}");
    assert_eq!(lines[2], "up p1", "{text}");
    assert!(!lines.contains(&"up p2"), "{text}");
    let (_, body) = http(&url, "GET", "/metrics", None);
    assert_eq!(
        metric(&body, "gpusched_power_hook_failures"),
        Some(0.0),
        "{body}"
    );
    assert!(metric(&body, "gpusched_power_idle_node_seconds").unwrap() > 0.0);
}
