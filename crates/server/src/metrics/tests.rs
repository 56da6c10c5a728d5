//! The exposition as Prometheus reads it: names, labels, values, formats, privacy, and
//! the counters' round discipline.

use std::collections::BTreeMap;

use gpusched_core::JobState as Core;
use gpusched_wire::{
    Drain, GpuHealth, GpuInfo, GpuSample, GpuSource, GpuView, JobState, JobView, NodeList,
    NodeState, NodeTelemetry, NodeView, SliceView, XidEvent,
};

use super::{render, Format, Metrics, QueueLevel, View};

fn gpu(index: u32, job: Option<(u64, &str)>) -> GpuView {
    GpuView {
        info: GpuInfo {
            index,
            uuid: Some(format!("GPU-0000-{index}")),
            model: "NVIDIA A100-SXM4-80GB".into(),
            mem_mib: 81920,
            source: GpuSource::Fake,
            mig: None,
        },
        job: job.map(|(j, _)| j),
        user: job.map(|(_, u)| u.to_string()),
        slices: Vec::new(),
    }
}

fn node(name: &str, state: NodeState, gpus: Vec<GpuView>) -> NodeView {
    serde_json::from_value::<NodeView>(serde_json::json!({
        "name": name, "state": state, "gpus": [], "cpus": 8, "mem_mib": 1024,
        "last_seen_ms_ago": 1500, "agent_version": "test",
    }))
    .map(|mut n| {
        n.gpus = gpus;
        n
    })
    .expect("a node view")
}

fn sample(index: u32, temp: u32) -> GpuSample {
    GpuSample {
        index,
        at_ms: 1,
        util_pct: Some(87),
        mem_used_mib: Some(20480),
        temp_c: Some(temp),
        power_mw: Some(250_500),
        energy_mj: Some(123_456_789),
        ecc_uncorrected: Some(0),
        ..Default::default()
    }
}

/// n1: online, GPU 0 held by alice's job 7, GPU 1 free, GPU 2 unhealthy, with samples;
/// n2: offline with a stale sample; n3: drained, GPU 0 shared by two jobs, GPU 1 free.
fn world(private: bool) -> View {
    let mut n1 = node(
        "n1",
        NodeState::Online,
        vec![gpu(0, Some((7, "alice"))), gpu(1, None), gpu(2, None)],
    );
    n1.telemetry = Some(NodeTelemetry {
        gpus: vec![
            sample(0, 71),
            sample(1, 40),
            GpuSample {
                index: 2,
                lost: true,
                ..Default::default()
            },
        ],
    });
    n1.gpu_health.insert(
        2,
        GpuHealth::Unhealthy {
            reason: "lost".into(),
            since_ms: 1,
        },
    );
    let mut n2 = node("n2", NodeState::Offline, vec![gpu(0, None)]);
    n2.telemetry = Some(NodeTelemetry {
        gpus: vec![sample(0, 99)],
    });
    let share = |job: u64, user: &str| SliceView {
        kind: "share".into(),
        profile: None,
        start: None,
        uuid: None,
        milli: 500,
        mem_mib: 0,
        job: Some(job),
        user: Some(user.into()),
    };
    let mut shared = gpu(0, None);
    shared.slices = vec![share(8, "bob"), share(9, "carol")];
    let mut n3 = node("n3", NodeState::Online, vec![shared, gpu(1, None)]);
    n3.drain = Some(Drain {
        reason: "maintenance".into(),
        since_ms: 1,
        by: "root".into(),
        now: false,
    });
    let queue = |name: &str, quota, max, used| QueueLevel {
        name: name.into(),
        quota,
        max,
        used,
    };
    let mut jobs = BTreeMap::new();
    jobs.insert(("default".to_string(), JobState::Running), 2);
    jobs.insert(("default".to_string(), JobState::Pending), 5);
    jobs.insert(("research".to_string(), JobState::Succeeded), 3);
    View {
        nodes: NodeList {
            nodes: vec![n1, n2, n3],
        },
        queues: vec![
            queue("default", 0, None, 1),
            queue("research", 4, Some(8), 2),
        ],
        jobs,
        private,
        metrics: Metrics::default(),
        power: Default::default(),
        checkpoint_slowest_s: Some(46.5),
        rr_quantum_s: Some(3600.0),
        services: vec![crate::metrics::ServiceLevel {
            name: "resnet".into(),
            version: 2,
            desired: 3,
            ready: 2,
            updated_ready: 1,
            failures: 0,
            in_flight: 7,
        }],
    }
}

fn text(view: &View) -> String {
    render(view, Format::Text).expect("rendered")
}

/// The value of the one sample line `series` (name and labels as written), or None.
fn value(out: &str, series: &str) -> Option<f64> {
    out.lines().find_map(|l| {
        let rest = l.strip_prefix(series)?;
        rest.strip_prefix(' ')?.trim().parse().ok()
    })
}

fn dcgm_labels(node: &str, gpu: u32) -> String {
    format!(
        "{{gpu=\"{gpu}\",UUID=\"GPU-0000-{gpu}\",device=\"nvidia{gpu}\",\
         modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"{node}\",node=\"{node}\"}}"
    )
}

#[test]
fn levels_count_jobs_queues_nodes_and_gpus() {
    let out = text(&world(false));
    let v = |s: &str| value(&out, s).unwrap_or_else(|| panic!("no {s} in\n{out}"));
    assert_eq!(v(r#"gpusched_jobs{state="running",queue="default"}"#), 2.0);
    assert_eq!(v(r#"gpusched_jobs{state="pending",queue="default"}"#), 5.0);
    // Every state of every queue is written, zeros too.
    assert_eq!(
        v(r#"gpusched_jobs{state="timed_out",queue="research"}"#),
        0.0
    );
    assert_eq!(
        v(r#"gpusched_jobs{state="succeeded",queue="research"}"#),
        3.0
    );
    assert_eq!(v(r#"gpusched_queue_gpus_quota{queue="research"}"#), 4.0);
    assert_eq!(v(r#"gpusched_queue_gpus_max{queue="research"}"#), 8.0);
    assert_eq!(v(r#"gpusched_queue_gpus_used{queue="research"}"#), 2.0);
    assert_eq!(
        v(r#"gpusched_service_replicas_desired{service="resnet"}"#),
        3.0
    );
    assert_eq!(
        v(r#"gpusched_service_replicas_ready{service="resnet"}"#),
        2.0
    );
    assert_eq!(v(r#"gpusched_service_in_flight{service="resnet"}"#), 7.0);
    assert_eq!(
        value(&out, r#"gpusched_queue_gpus_max{queue="default"}"#),
        None
    );
    assert_eq!(v(r#"gpusched_nodes{state="online"}"#), 1.0);
    assert_eq!(v(r#"gpusched_nodes{state="offline"}"#), 1.0);
    assert_eq!(v(r#"gpusched_nodes{state="drained"}"#), 1.0);
    // n1: used, free, unhealthy; n2: offline; n3: used (shared), drained.
    assert_eq!(v(r#"gpusched_gpus{state="used"}"#), 2.0);
    assert_eq!(v(r#"gpusched_gpus{state="free"}"#), 1.0);
    assert_eq!(v(r#"gpusched_gpus{state="unhealthy"}"#), 1.0);
    assert_eq!(v(r#"gpusched_gpus{state="offline"}"#), 1.0);
    assert_eq!(v(r#"gpusched_gpus{state="drained"}"#), 1.0);
    assert_eq!(v(r#"gpusched_gpu_healthy{node="n1",gpu="2"}"#), 0.0);
    assert_eq!(v(r#"gpusched_gpu_healthy{node="n1",gpu="0"}"#), 1.0);
    assert_eq!(v(r#"gpusched_node_last_seen_seconds{node="n2"}"#), 1.5);
    assert_eq!(v("gpusched_checkpoint_save_seconds"), 46.5);
    assert_eq!(v("gpusched_rr_quantum_seconds"), 3600.0);
}

#[test]
fn each_held_gpu_is_one_info_series_naming_its_job_and_user() {
    let out = text(&world(false));
    let info: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("gpusched_gpu_job_info{"))
        .collect();
    assert_eq!(
        info,
        [
            r#"gpusched_gpu_job_info{node="n1",gpu="0",job_id="7",user="alice",kind="whole"} 1"#,
            r#"gpusched_gpu_job_info{node="n3",gpu="0",job_id="8",user="bob",kind="share"} 1"#,
            r#"gpusched_gpu_job_info{node="n3",gpu="0",job_id="9",user="carol",kind="share"} 1"#,
        ],
        "{out}"
    );
}

#[test]
fn private_jobs_leave_out_every_job_and_user() {
    let out = text(&world(true));
    for secret in ["alice", "bob", "carol", "job_id"] {
        assert!(!out.contains(secret), "{secret} in\n{out}");
    }
    let info: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("gpusched_gpu_job_info{"))
        .collect();
    // Two shares of one GPU are one series: the GPU is held.
    assert_eq!(
        info,
        [
            r#"gpusched_gpu_job_info{node="n1",gpu="0",kind="whole"} 1"#,
            r#"gpusched_gpu_job_info{node="n3",gpu="0",kind="share"} 1"#,
        ]
    );
}

#[test]
fn samples_appear_under_dcgm_names_with_dcgm_labels() {
    let view = world(false);
    view.metrics.saw_telemetry(
        "n1",
        &NodeTelemetry {
            gpus: vec![GpuSample {
                index: 1,
                xids: vec![
                    XidEvent {
                        code: 79,
                        at_ms: 20,
                    },
                    XidEvent {
                        code: 13,
                        at_ms: 10,
                    },
                ],
                ..Default::default()
            }],
        },
    );
    // A late copy of an older Xid (resent until acknowledged) changes nothing.
    view.metrics.saw_telemetry(
        "n1",
        &NodeTelemetry {
            gpus: vec![GpuSample {
                index: 1,
                xids: vec![XidEvent {
                    code: 13,
                    at_ms: 10,
                }],
                ..Default::default()
            }],
        },
    );
    let out = text(&view);
    let v = |name: &str, node: &str, gpu: u32| {
        let series = format!("{name}{}", dcgm_labels(node, gpu));
        value(&out, &series)
    };
    assert_eq!(v("DCGM_FI_DEV_GPU_TEMP", "n1", 0), Some(71.0));
    assert_eq!(v("DCGM_FI_DEV_GPU_TEMP", "n1", 1), Some(40.0));
    assert_eq!(v("DCGM_FI_DEV_GPU_UTIL", "n1", 0), Some(87.0));
    assert_eq!(v("DCGM_FI_DEV_FB_USED", "n1", 0), Some(20480.0));
    assert_eq!(v("DCGM_FI_DEV_FB_FREE", "n1", 0), Some(81920.0 - 20480.0));
    assert_eq!(v("DCGM_FI_DEV_POWER_USAGE", "n1", 0), Some(250.5));
    assert_eq!(
        v("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "n1", 0),
        Some(123_456_789.0)
    );
    assert_eq!(v("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "n1", 0), Some(0.0));
    // The last Xid by time, not by order; other GPUs 0.
    assert_eq!(v("DCGM_FI_DEV_XID_ERRORS", "n1", 1), Some(79.0));
    assert_eq!(v("DCGM_FI_DEV_XID_ERRORS", "n1", 0), Some(0.0));
    // Not read: absent, not 0. A lost GPU has no readings, and says it is lost.
    assert_eq!(v("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "n1", 0), None);
    assert_eq!(v("DCGM_FI_DEV_GPU_TEMP", "n1", 2), None);
    assert_eq!(v("gpusched_gpu_lost", "n1", 2), Some(1.0));
    assert_eq!(v("gpusched_gpu_lost", "n1", 0), Some(0.0));
    // An offline node's last sample is not its GPUs' state now.
    assert_eq!(v("DCGM_FI_DEV_GPU_TEMP", "n2", 0), None);
    assert!(
        out.contains("# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"),
        "the name is verbatim, with no suffix: {out}"
    );
    assert!(!out.contains("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total"));
}

#[test]
fn openmetrics_when_asked_and_prometheus_text_otherwise() {
    let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    assert_eq!(Format::from_accept(prom), Format::OpenMetrics);
    assert_eq!(Format::from_accept("*/*"), Format::Text);
    assert_eq!(Format::from_accept(""), Format::Text);
    let view = world(false);
    let open = render(&view, Format::OpenMetrics).unwrap();
    assert!(open.ends_with("# EOF\n"), "{open}");
    assert!(open.contains("# TYPE gpusched_gpu_job info\n"), "{open}");
    assert!(open.contains("# TYPE gpusched_jobs_submitted counter\n"));
    assert!(open.contains("gpusched_jobs_submitted_total 0\n"));
    assert!(open.contains("# UNIT gpusched_job_wait_seconds seconds\n"));
    let plain = text(&view);
    assert!(!plain.contains("# EOF"));
    assert!(
        plain.contains("gpusched_jobs_submitted_total 0\n"),
        "{plain}"
    );
    // Every configured queue has its wait histogram from the start.
    assert!(plain.contains("gpusched_job_wait_seconds_bucket{queue=\"research\",le=\"1\"} 0\n"));
    assert!(plain.contains("gpusched_jobs_finished_total{state=\"cancelled\"} 0\n"));
}

fn job(attempt: u32, state: JobState) -> JobView {
    let mut v: JobView = serde_json::from_value(serde_json::json!({
        "id": 1, "name": "j", "user": "u", "state": "pending", "reason": "", "command": ["true"],
        "cwd": "/", "gpus": 1, "queue": "default", "priority": 0, "attempt": attempt,
        "max_retries": 3, "submit_ms": 10_000, "cancel_requested": false,
        "gpu_indices": [], "walltime_s": null, "node": null, "exit_code": null,
        "signal": null, "start_ms": null, "end_ms": null, "after": [],
    }))
    .expect("a job view");
    v.state = state;
    v
}

#[test]
fn events_count_once_their_round_is_committed() {
    let m = Metrics::default();
    let view = |m: &Metrics| {
        let mut v = world(false);
        v.metrics = m.clone();
        text(&v)
    };
    m.submitted();
    // Started at 70 s, submitted at 10 s: waited a minute.
    m.moved(
        &job(1, JobState::Running),
        JobState::Starting,
        &[Core::Running],
        70_000,
    );
    let before = view(&m);
    assert_eq!(value(&before, "gpusched_jobs_submitted_total"), Some(0.0));
    m.settle_round();
    let after = view(&m);
    assert_eq!(value(&after, "gpusched_jobs_submitted_total"), Some(1.0));
    assert_eq!(value(&after, "gpusched_jobs_started_total"), Some(1.0));
    assert_eq!(
        value(&after, r#"gpusched_job_wait_seconds_sum{queue="default"}"#),
        Some(60.0)
    );
    assert_eq!(
        value(
            &after,
            r#"gpusched_job_wait_seconds_bucket{queue="default",le="30"}"#
        ),
        Some(0.0)
    );
    assert_eq!(
        value(
            &after,
            r#"gpusched_job_wait_seconds_bucket{queue="default",le="60"}"#
        ),
        Some(1.0)
    );

    // A round whose commit failed is undone, and so are its events.
    m.submitted();
    m.discard_round();
    m.settle_round();
    assert_eq!(value(&view(&m), "gpusched_jobs_submitted_total"), Some(1.0));

    // A second attempt's start counts as a start, not as a wait; an end that ran
    // (starting, running, succeeded in one step) counts both.
    m.moved(
        &job(2, JobState::Succeeded),
        JobState::Starting,
        &[Core::Running, Core::Succeeded],
        90_000,
    );
    m.moved(
        &job(1, JobState::Cancelled),
        JobState::Pending,
        &[Core::Cancelled],
        90_000,
    );
    m.settle_round();
    let out = view(&m);
    assert_eq!(value(&out, "gpusched_jobs_started_total"), Some(2.0));
    assert_eq!(
        value(&out, r#"gpusched_job_wait_seconds_count{queue="default"}"#),
        Some(1.0)
    );
    assert_eq!(
        value(&out, r#"gpusched_jobs_finished_total{state="succeeded"}"#),
        Some(1.0)
    );
    assert_eq!(
        value(&out, r#"gpusched_jobs_finished_total{state="cancelled"}"#),
        Some(1.0)
    );
    assert_eq!(
        value(&out, r#"gpusched_jobs_finished_total{state="failed"}"#),
        Some(0.0)
    );
}

#[test]
fn passes_and_commits_are_timed() {
    let m = Metrics::default();
    m.pass_took(None);
    m.pass_took(Some(std::time::Instant::now()));
    drop(m.commit_timer());
    let mut v = world(false);
    v.metrics = m.clone();
    let out = text(&v);
    assert_eq!(
        value(&out, "gpusched_schedule_pass_seconds_count"),
        Some(1.0)
    );
    assert_eq!(
        value(&out, "gpusched_store_commit_seconds_count"),
        Some(1.0)
    );
}
