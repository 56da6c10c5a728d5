//! A cluster stopped by a crash under the release of 2026-11-30 (schema 1), started again
//! by this binary: the store upgrades, every old job is still there with its facts, and
//! the jobs that were running when the server died are recovered by the usual rules.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// The database `scripts/make_store_fixture.sh` wrote with that release (see its README).
fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../store/tests/fixtures/v1-2026-11-30/gpusched.db")
}

/// The queue file the fixture was made with (job 6 is in `research`).
const QUEUES: &str =
    "[queues.research]\nquota = 2\ndefault_priority = 1\nmax_priority = 10\n\n[queues.default]\n";

#[test]
fn a_store_from_the_previous_release_upgrades_and_keeps_its_jobs() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(fixture(), data.join("gpusched.db")).unwrap();
    let queues = dir.join("queues.toml");
    std::fs::write(&queues, QUEUES).unwrap();
    let (_server, url) = server(
        &data,
        0,
        &[
            "--queues",
            queues.to_str().unwrap(),
            "--heartbeat-timeout",
            "10s",
        ],
    );

    let all = stdout(&cli(&url, &["queue", "--all"]));
    for name in [
        "ok",
        "failed",
        "cancelled",
        "timed-out",
        "requeued",
        "running",
        "share",
        "too-big",
        "after",
    ] {
        assert!(all.contains(name), "`queue --all` lacks job {name}:\n{all}");
    }
    let state = |id: u64| job(&url, id)["state"].as_str().unwrap_or("").to_string();
    assert_eq!(state(1), "succeeded");
    assert_eq!(state(2), "failed");
    assert_eq!(state(3), "cancelled");
    assert_eq!(state(4), "timed_out");
    let failed = job(&url, 2);
    assert_eq!(failed["exit_code"], 1);
    assert!(
        failed["reason"].as_str().unwrap().contains('1'),
        "the end reason is kept: {failed}"
    );
    let ok = stdout(&cli(&url, &["show", "1"]));
    assert!(ok.contains("GREETING"), "`show` lists the env names:\n{ok}");
    // Its timeline starts with what its row knew at the upgrade (schema 5), said so.
    let (code, body) = http(&url, "GET", "/api/jobs/2/events", None);
    assert_eq!(code, 200, "{body}");
    let t: serde_json::Value = serde_json::from_str(&body).unwrap();
    let kinds: Vec<&str> = t["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["submitted", "ended"], "{t}");
    assert!(
        body.contains("before gpusched kept timelines") && body.contains("failed: exited"),
        "{body}"
    );

    // The pending job's reason is worked out by this server, not read from the store:
    // n1 is known from the store, its agent not heard from yet, so nothing goes there.
    let too_big = job(&url, 8);
    assert_eq!(too_big["state"], "pending");
    assert!(
        too_big["reason"]
            .as_str()
            .unwrap()
            .starts_with("no node can hold it now: n1 is unreachable"),
        "a reason about n1's agent: {too_big}"
    );
    assert_eq!(job(&url, 9)["state"], "pending");

    // The agent of n1 comes back without the jobs the crash stopped: they are lost and
    // run again with the next attempt number (job 5 already had attempt 2).
    let _agent = agent(&url, "n1", &dir.join("n1"), Gpus::Fake(4));
    let started = |id: u64, attempt: u64| {
        let limit = SLOW;
        let t = Instant::now();
        loop {
            let j: Value = job(&url, id);
            if j["state"] == "running" && j["attempt"] == attempt {
                return j;
            }
            assert!(
                t.elapsed() < limit,
                "job {id} not running attempt {attempt}: {j}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let running = started(6, 2);
    assert_eq!(running["queue"], "research");
    assert_eq!(running["priority"], 7);
    assert_eq!(running["walltime_s"], 7200);
    started(5, 3);
    let share = started(7, 2);
    assert_eq!(share["slice"]["kind"], "share");
    assert_eq!(share["slice"]["milli"], 500);
}
