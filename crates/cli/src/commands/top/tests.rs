//! Frames of `gpusched top` drawn from fixture snapshots, checked as text.

use serde_json::{json, Value};

use super::model::{self, JobSort, Snapshot};
use super::render::{frame, full_height, max_scroll, text, Panel, View};

/// 2026-12-01 00:00:00 UTC.
const NOW: u64 = 1_796_083_200_000;

fn gpu(index: u32, model: &str, job: Option<u64>, user: Option<&str>) -> Value {
    json!({"index": index, "uuid": format!("GPU-{index}"), "model": model, "mem_mib": 81920,
           "source": "fake", "job": job, "user": user, "slices": []})
}

fn node(name: &str, gpus: Vec<Value>) -> Value {
    json!({"name": name, "state": "online", "gpus": gpus, "cpus": 64, "mem_mib": 524288,
           "last_seen_ms_ago": 500, "agent_version": "0.1.0"})
}

fn sample(index: u32, util: u32, temp: u32, watts: u32) -> Value {
    json!({"index": index, "at_ms": NOW, "util_pct": util, "mem_used_mib": 40960,
           "temp_c": temp, "power_mw": watts * 1000})
}

fn job(id: u64, user: &str, state: &str, extra: Value) -> Value {
    let mut j = json!({
        "id": id, "name": format!("job{id}"), "user": user, "state": state, "reason": "",
        "command": ["sleep", "60"], "cwd": "/", "gpus": 1, "priority": 0, "gpu_indices": [],
        "attempt": 1, "max_retries": 3, "submit_ms": NOW - 125_000,
        "cancel_requested": false, "queue": "default"
    });
    for (k, v) in extra.as_object().unwrap() {
        j[k] = v.clone();
    }
    j
}

fn snap(nodes: Vec<Value>, jobs: Vec<Value>) -> Snapshot {
    Snapshot {
        server: "http://head:6450".into(),
        nodes: serde_json::from_value(Value::Array(nodes)).unwrap(),
        jobs: serde_json::from_value(Value::Array(jobs)).unwrap(),
        queues: serde_json::from_value(json!([{"name": "default", "quota": 0, "max": null,
            "weight": 1.0, "users": [], "groups": [], "default_priority": 0,
            "max_priority": null, "used_gpus": 1, "running": 1, "pending": 1}]))
        .unwrap(),
        now_ms: NOW,
        fetched_ms: Some(NOW),
        error: None,
        interval_ms: 2000,
        more_jobs: false,
    }
}

/// A healthy node with one busy and one free GPU, one running and one pending job.
fn healthy() -> Snapshot {
    let mut a = node(
        "gpu-a",
        vec![
            gpu(0, "H100", Some(7), Some("alice")),
            gpu(1, "H100", None, None),
        ],
    );
    a["telemetry"] = json!({"gpus": [sample(0, 97, 71, 650), sample(1, 0, 33, 60)]});
    snap(
        vec![a],
        vec![
            job(
                7,
                "alice",
                "running",
                json!({"node": "gpu-a", "gpu_indices": [0], "start_ms": NOW - 65_000}),
            ),
            job(
                8,
                "bob",
                "pending",
                json!({"gpus": 2, "reason": "waiting for 2 free H100 GPUs",
                       "est_start_ms": NOW + 300_000}),
            ),
        ],
    )
}

fn draw(s: &Snapshot, w: u16, h: u16) -> String {
    text(&frame(s, &View::default(), w, h))
}

/// The first line holding `needle`, without the panel's borders (panics with the frame
/// if none).
fn line<'a>(frame: &'a str, needle: &str) -> &'a str {
    frame
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{frame}"))
        .trim_matches(|c: char| c.is_whitespace() || c == '│' || c == '┃')
}

fn words(l: &str) -> Vec<&str> {
    l.split(|c: char| c.is_whitespace() || c == '│' || c == '┃')
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn a_healthy_cluster_shows_totals_gpus_and_jobs() {
    let s = healthy();
    let f = draw(&s, 140, full_height(&s));
    let totals = line(&f, "nodes ");
    assert!(totals.contains("nodes 1 up, 0 drained, 0 offline"), "{f}");
    assert!(
        totals.contains("GPUs 1 busy, 1 free, 0 unhealthy, 0 out"),
        "{f}"
    );
    let work = line(&f, "jobs ");
    assert!(work.contains("jobs 1 running, 1 pending"), "{f}");
    assert!(work.contains("power 710 W"), "{f}");
    assert!(work.contains("queues default 1 GPUs, 1 run, 1 pend"), "{f}");
    assert!(line(&f, "gpusched top").contains("http://head:6450"), "{f}");

    let busy = words(line(&f, "job 7 alice"));
    assert_eq!(
        busy,
        [
            "gpu-a",
            "0",
            "H100",
            "job",
            "7",
            "alice",
            "97%",
            "40.0/80.0",
            "GiB",
            "71",
            "C",
            "650",
            "W",
            "ok"
        ],
        "{f}"
    );
    let free = words(line(&f, "33 C"));
    assert_eq!(free[..4], ["gpu-a", "1", "H100", "-"], "{f}");

    let run = words(line(&f, "gpu-a:0"));
    assert_eq!(
        run,
        ["7", "alice", "default", "1", "running", "gpu-a:0", "1:05"],
        "{f}"
    );
    let wait = line(&f, "bob");
    assert!(wait.contains("pending"), "{wait}");
    assert!(wait.contains("2:05"), "the wait so far: {wait}");
    assert!(wait.contains("in 5:00"), "the estimated start: {wait}");
    assert!(wait.contains("waiting for 2 free H100 GPUs"), "{wait}");
    // Plain text: no escape codes.
    assert!(!f.contains('\u{1b}'));
    // No key help in --once; the live view has it, and marks the focused panel.
    assert!(!f.contains("q quit"), "{f}");
    let live = View {
        interactive: true,
        focus: Panel::Jobs,
        ..View::default()
    };
    let f = text(&frame(&s, &live, 100, full_height(&s)));
    assert!(f.contains("q quit  Tab focus"), "{f}");
    assert!(line(&f, "Jobs:").starts_with('┏'), "{f}");
    assert!(line(&f, "GPUs:").starts_with('┌'), "{f}");
}

#[test]
fn a_drained_node_and_an_unhealthy_gpu_say_why() {
    let mut a = node(
        "gpu-a",
        vec![
            gpu(0, "H100", Some(7), Some("alice")),
            gpu(1, "H100", None, None),
        ],
    );
    a["drain"] = json!({"reason": "swap PSU", "since_ms": NOW - 1000, "by": "root", "now": false});
    let mut b = node(
        "gpu-b",
        vec![gpu(0, "A100", None, None), gpu(1, "A100", None, None)],
    );
    b["gpu_health"] = json!({"1": {"state": "unhealthy", "reason": "Xid 79 (fell off the bus)",
                                   "since_ms": NOW - 5000}});
    let mut c = node("gpu-c", vec![gpu(0, "A100", None, None)]);
    c["state"] = json!("offline");
    c["telemetry"] = json!({"gpus": [sample(0, 50, 90, 300)]});
    let s = snap(vec![a, b, c], vec![]);
    let f = draw(&s, 140, full_height(&s));
    let totals = line(&f, "nodes ");
    assert!(totals.contains("nodes 1 up, 1 drained, 1 offline"), "{f}");
    assert!(
        totals.contains("GPUs 1 busy, 1 free, 1 unhealthy, 2 out"),
        "{f}"
    );
    // An offline node's readings are stale: not counted, not shown.
    assert!(line(&f, "jobs ").contains("power -"), "{f}");
    assert!(
        line(&f, "job 7 alice").ends_with("drained: swap PSU"),
        "{f}"
    );
    let sick = line(&f, "Xid 79");
    assert!(sick.starts_with("gpu-b  1"), "{sick}");
    assert!(
        sick.contains("unhealthy: Xid 79 (fell off the bus)"),
        "{sick}"
    );
    let gone = line(&f, "gpu-c");
    assert!(gone.ends_with("offline"), "{gone}");
    assert!(!gone.contains("90 C"), "{gone}");
    assert!(f.contains("no jobs queued or running"), "{f}");
}

#[test]
fn slices_list_their_holders() {
    let mut g = gpu(0, "A100", None, None);
    g["mig"] = json!({"dynamic": true, "instances": []});
    g["slices"] = json!([
        {"kind": "mig", "profile": "3g.40gb", "start": 0, "uuid": null, "milli": 500,
         "mem_mib": 40960, "job": 21, "user": "carol"},
        {"kind": "mig", "profile": "3g.40gb", "start": 4, "uuid": null, "milli": 500,
         "mem_mib": 40960, "job": null, "user": "(another user)"}
    ]);
    let mut idle = gpu(1, "A100", None, None);
    idle["mig"] = json!({"dynamic": true, "instances": []});
    let s = snap(
        vec![node("mig-a", vec![g, idle])],
        vec![job(
            21,
            "carol",
            "running",
            json!({"gpus": 0, "slice": {"kind": "mig", "profile": "3g.40gb"}, "node": "mig-a",
                   "gpu_indices": [0], "start_ms": NOW - 1000}),
        )],
    );
    let f = draw(&s, 160, full_height(&s));
    assert!(
        line(&f, "2 slices").contains("2 slices: 21 carol, (another user)"),
        "{f}"
    );
    assert!(line(&f, "2 slices").starts_with("mig-a  0"), "{f}");
    assert!(line(&f, "sliced, idle").contains("mig-a"), "{f}");
    assert!(line(&f, "nodes ").contains("GPUs 1 busy, 1 free"), "{f}");
    assert!(line(&f, "mig-a:0").contains("mig 3g.40gb"), "{f}");
}

#[test]
fn a_gang_shows_every_node_it_spans() {
    let s = snap(
        vec![
            node("n1", vec![gpu(0, "H100", Some(30), Some("dave"))]),
            node("n2", vec![gpu(0, "H100", Some(30), Some("dave"))]),
        ],
        vec![job(
            30,
            "dave",
            "running",
            json!({"gpus": 2, "nodes": 2, "gpus_per_node": 1, "node": "n1",
                   "gpu_indices": [0], "start_ms": NOW - 10_000,
                   "parts": [{"rank": 0, "node": "n1", "gpu_indices": [0], "state": "running"},
                             {"rank": 1, "node": "n2", "gpu_indices": [0], "state": "running"}]}),
        )],
    );
    let f = draw(&s, 140, full_height(&s));
    assert_eq!(f.matches("job 30 dave").count(), 2, "{f}");
    let j = words(line(&f, "n1,n2"));
    assert_eq!(
        j[..6],
        ["30", "dave", "default", "2x1", "running", "n1,n2"],
        "{f}"
    );
}

#[test]
fn long_names_are_cut_with_an_ellipsis() {
    let long = "a-very-long-node-name-from-a-cloud-provider-0042";
    let s = snap(
        vec![node(
            long,
            vec![gpu(
                0,
                "NVIDIA H100 80GB HBM3 with a very long name",
                Some(9),
                Some("someone-with-a-long-login"),
            )],
        )],
        vec![
            job(
                9,
                "someone-with-a-long-login",
                "running",
                json!({"node": long, "gpu_indices": [0], "start_ms": NOW, "queue": "a-queue-with-a-long-name"}),
            ),
            job(
                10,
                "bob",
                "pending",
                json!({"reason": format!("waiting for 8 free GPUs on one node {}end", "x".repeat(200))}),
            ),
        ],
    );
    let f = draw(&s, 120, full_height(&s));
    assert!(f.contains("a-very-long-nod…"), "{f}");
    assert!(!f.contains(long), "{f}");
    assert!(f.contains("NVIDIA H100 80GB HBM3…"), "{f}");
    assert!(f.contains("someone-wit…"), "{f}");
    // The last column is cut where the panel ends, with an ellipsis too.
    let reason = line(&f, "waiting for 8 free GPUs");
    assert!(reason.ends_with('…'), "{reason}");
    // Every line fits the width.
    assert!(f.lines().all(|l| l.chars().count() <= 120), "{f}");
}

#[test]
fn no_nodes_says_how_to_add_one() {
    let s = snap(vec![], vec![]);
    let f = draw(&s, 100, full_height(&s));
    assert!(f.contains("no nodes yet: start `gpusched agent"), "{f}");
    assert!(
        line(&f, "nodes ").contains("nodes 0 up, 0 drained, 0 offline"),
        "{f}"
    );
    assert!(f.contains("GPUs: 0 on 0 nodes"), "{f}");
}

#[test]
fn a_server_that_is_down_shows_its_error_in_the_header() {
    let mut s = healthy();
    s.error =
        Some("cannot reach the gpusched server at http://head:6450 (Connection refused)".into());
    let f = draw(&s, 120, full_height(&s));
    assert!(
        line(&f, "gpusched top").contains("data from 00:00:00 UTC, retrying every 2s"),
        "{f}"
    );
    assert!(line(&f, "error:").contains("Connection refused"), "{f}");
    // The last data stays on screen.
    assert!(f.contains("job 7 alice"), "{f}");
    let mut never = snap(vec![], vec![]);
    never.fetched_ms = None;
    never.error = s.error.clone();
    let f = draw(&never, 80, 20);
    assert!(f.contains("no data yet, retrying every 2s"), "{f}");
    assert_eq!(f.matches("waiting for the server").count(), 2, "{f}");
    assert!(!f.contains("no jobs"), "{f}");
}

#[test]
fn tiny_terminals_draw_without_panicking() {
    let s = healthy();
    let f = draw(&s, 40, 10);
    assert_eq!(f.lines().count(), 10);
    assert!(f.contains("gpusched top"), "{f}");
    assert!(f.contains("GPUs"), "{f}");
    for (w, h) in [
        (0, 0),
        (1, 1),
        (29, 7),
        (30, 8),
        (40, 3),
        (200, 5),
        (3, 100),
    ] {
        let f = draw(&s, w, h);
        assert_eq!(f.lines().count(), usize::from(h), "{w}x{h}");
    }
    assert!(draw(&s, 20, 5).contains("terminal too small"));
}

#[test]
fn scrolling_and_sorting_move_the_rows() {
    let gpus = (0..16).map(|i| gpu(i, "H100", None, None)).collect();
    let jobs = (1..=12)
        .map(|i| {
            job(
                i,
                if i % 2 == 0 { "zed" } else { "amy" },
                "pending",
                json!({"gpus": i}),
            )
        })
        .collect();
    let s = snap(vec![node("big", gpus)], jobs);
    let mut v = View {
        focus: Panel::Gpus,
        ..View::default()
    };
    let area = ratatui::layout::Rect::new(0, 0, 100, 20);
    let (max_g, max_j) = max_scroll(&s, &v, area);
    assert!(max_g > 0 && max_j > 0, "{max_g} {max_j}");
    v.gpu_scroll = 2;
    let f = text(&frame(&s, &v, 100, 20));
    assert!(f.contains("GPUs: 16 on 1 node (rows 3-9 of 16)"), "{f}");
    assert!(line(&f, "big  ").starts_with("big   2 "), "{f}");
    // Past the end the last page stays full.
    v.gpu_scroll = 999;
    let f = text(&frame(&s, &v, 100, 20));
    assert!(f.contains("(rows 10-16 of 16)"), "{f}");
    assert!(line(&f, "big  ").starts_with("big   9 "), "{f}");
    assert!(line(&f, "big   15").contains("H100"), "{f}");

    let ids = |v: &View| -> Vec<String> {
        model::job_rows(&s, v.sort)
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids(&v)[..3], ["1", "2", "3"]);
    v.sort = JobSort::Newest;
    assert_eq!(ids(&v)[..3], ["12", "11", "10"]);
    v.sort = JobSort::Gpus;
    assert_eq!(ids(&v)[0], "12");
    v.sort = JobSort::User;
    assert_eq!(ids(&v)[..2], ["1", "3"]);
    let f = text(&frame(&s, &v, 100, 20));
    assert!(f.contains("sort: user"), "{f}");
    let mut capped = s.clone();
    capped.more_jobs = true;
    let f = text(&frame(&capped, &v, 100, 20));
    assert!(
        f.contains("12 pending (the newest 12; more not shown)"),
        "{f}"
    );
    // The header then counts from the queues, which see every job.
    capped.queues[0].pending = 4000;
    let f = text(&frame(&capped, &v, 100, 20));
    assert!(
        line(&f, "jobs ").contains("jobs 1 running, 4000 pending"),
        "{f}"
    );
    assert_eq!(JobSort::User.next(), JobSort::State);
}

#[test]
fn names_with_control_characters_are_shown_escaped() {
    // A bidi override makes "gpu-a\u{202e}lave" read as "gpu-aevil"; a newline in a
    // reason would start a line of its own.
    let mut s = snap(
        vec![node("gpu\u{202e}-a", vec![gpu(0, "H100", None, None)])],
        vec![job(
            9,
            "bob",
            "pending",
            json!({"reason": "waiting\nfor \u{1b}[2Jnode"}),
        )],
    );
    s.queues[0].name = "q\u{9b}31m".into();
    let f = draw(&s, 160, 30);
    assert!(
        !f.contains(['\u{202e}', '\u{1b}', '\u{9b}']),
        "raw controls in the frame: {f:?}"
    );
    assert!(f.contains(r"gpu\u{202e}-a"), "{f}");
    assert!(f.contains(r"waiting\nfor \x1b[2Jnode"), "{f}");
    assert!(f.contains(r"q\x9b31m"), "{f}");
}
