//! The session against a small fake server on loopback: what the agent registers with
//! (address, place, GPU links), the port reservation of a gang's first part, and GPU
//! telemetry riding on reports.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use gpusched_wire::{
    AttemptRef, Desired, DistHost, DistLaunch, GpuInfo, GpuSource, Launch, LinkKind, NodeLocation,
    PollQuery, Register, Registered, Report, ReportAck, RunEvent, RunEventKind,
};
use tokio::sync::watch;

use super::{run, AgentConfig};
use crate::gpu::{FakeNvml, FakeTopology, GpuControl};

const WAIT: Duration = Duration::from_secs(60);

#[derive(Default)]
struct Fake {
    registrations: Vec<Register>,
    events: Vec<RunEvent>,
    desired: Option<Desired>,
    /// Every report received, acknowledged or refused, in order, with whether it was
    /// acknowledged.
    reports: Vec<(Report, bool)>,
    /// Refuse reports (500) while set.
    refuse_reports: bool,
    /// Answer polls this late with the desired state read when the poll came (an
    /// answer computed before a report that overtakes it).
    stale_ms: u64,
    /// Drop an attempt from the desired state when its end is reported, as the server
    /// does.
    drop_ended: bool,
    /// The leader epoch its desired states carry.
    epoch: u64,
    /// Answer polls and reports 503 (a server stepping down) while set.
    unavailable: bool,
    /// Polls answered.
    polls: u32,
    /// The heartbeat timeout and node lease registration announces (0: 120 s, none).
    heartbeat_ms: u64,
    lease_ms: Option<u64>,
}

type Shared = Arc<Mutex<Fake>>;

async fn register(State(s): State<Shared>, Json(r): Json<Register>) -> Json<Registered> {
    let mut f = s.lock().unwrap();
    f.events.extend(r.events.iter().cloned());
    f.registrations.push(r);
    Json(Registered {
        instance: "i1".into(),
        poll_wait_ms: 100,
        heartbeat_timeout_ms: if f.heartbeat_ms == 0 {
            120_000
        } else {
            f.heartbeat_ms
        },
        lease_ms: f.lease_ms,
        protocol: gpusched_wire::agent::AGENT_PROTOCOL,
    })
}

async fn poll(
    State(s): State<Shared>,
    Query(q): Query<PollQuery>,
) -> Result<Json<Desired>, axum::http::StatusCode> {
    if s.lock().unwrap().unavailable {
        return Err(axum::http::StatusCode::SERVICE_UNAVAILABLE);
    }
    // Holds the poll briefly when nothing changed, as the server does (shorter).
    let unchanged = s.lock().unwrap().desired.as_ref().map(|d| d.gen) == Some(q.gen);
    if unchanged {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (d, stale, epoch) = {
        let mut f = s.lock().unwrap();
        f.polls += 1;
        (f.desired.clone(), f.stale_ms, f.epoch)
    };
    tokio::time::sleep(Duration::from_millis(stale)).await;
    let mut d = d.unwrap_or(Desired {
        gen: 0,
        run: vec![],
        cancel: vec![],
        preempt: vec![],
        reserve_ports: vec![],
        epoch: 0,
        queued: vec![],
    });
    d.epoch = epoch;
    Ok(Json(d))
}

async fn report(
    State(s): State<Shared>,
    Json(r): Json<Report>,
) -> Result<Json<ReportAck>, axum::http::StatusCode> {
    let mut f = s.lock().unwrap();
    if f.unavailable {
        return Err(axum::http::StatusCode::SERVICE_UNAVAILABLE);
    }
    let ok = !f.refuse_reports;
    f.reports.push((r.clone(), ok));
    if !ok {
        return Err(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
    }
    if f.drop_ended {
        for e in &r.events {
            if let RunEventKind::Ended { .. } = e.event {
                if let Some(d) = f.desired.as_mut() {
                    d.run.retain(|l| (l.job, l.attempt) != (e.job, e.attempt));
                    d.gen += 1;
                }
            }
        }
    }
    f.events.extend(r.events);
    Ok(Json(ReportAck { ok: true }))
}

/// A fake server on loopback: its state, URL and task.
async fn fake_server() -> (Shared, String, tokio::task::JoinHandle<std::io::Result<()>>) {
    let state: Shared = Arc::default();
    let app = Router::new()
        .route("/api/agent/register", post(register))
        .route("/api/agent/poll", get(poll))
        .route("/api/agent/report", post(report))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    let http = tokio::spawn(async move { axum::serve(listener, app).await });
    (state, server, http)
}

fn config(server: String, dir: &std::path::Path, lib: FakeNvml) -> AgentConfig {
    AgentConfig {
        server,
        name: "n0".into(),
        state_dir: dir.to_path_buf(),
        gpus: gpus(),
        cpus: 1,
        mem_mib: 1024,
        log_listen: "127.0.0.1:0".parse().unwrap(),
        log_url: None,
        join_token: "t".into(),
        allow_root_jobs: true,
        ca_cert: None,
        control: GpuControl(Some(Arc::new(lib))),
        mps: false,
        resources: BTreeMap::new(),
        advertise_addr: None,
        location: NodeLocation::default(),
        telemetry_interval: Duration::ZERO,
        metrics_listen: None,
        retention: Default::default(),
        contain: Default::default(),
        image: None,
    }
}

fn set_desired(s: &Shared, run: Vec<Launch>, reserve: Vec<AttemptRef>) {
    let mut f = s.lock().unwrap();
    let gen = f.desired.as_ref().map_or(1, |d| d.gen + 1);
    f.desired = Some(Desired {
        gen,
        run,
        cancel: vec![],
        preempt: vec![],
        reserve_ports: reserve,
        epoch: 0,
        queued: vec![],
    });
}

/// Stops the agent (it must stop in time, cleanly) and the fake server.
async fn shut_down(
    stop: watch::Sender<bool>,
    agent: tokio::task::JoinHandle<anyhow::Result<()>>,
    http: tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let _ = stop.send(true);
    tokio::time::timeout(WAIT, agent)
        .await
        .expect("agent stops")
        .unwrap()
        .unwrap();
    http.abort();
}

/// Waits for an event of `a` that `pick` accepts.
async fn wait_event<T>(s: &Shared, a: AttemptRef, pick: impl Fn(&RunEventKind) -> Option<T>) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        {
            let f = s.lock().unwrap();
            let found = f
                .events
                .iter()
                .filter(|e| e.job == a.job && e.attempt == a.attempt)
                .find_map(|e| pick(&e.event));
            if let Some(t) = found {
                return t;
            }
        }
        assert!(Instant::now() < deadline, "no such event for {a:?} in time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn port_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

async fn wait_port_free(port: u16) {
    let deadline = Instant::now() + WAIT;
    while !port_free(port) {
        assert!(Instant::now() < deadline, "port {port} still held");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn me() -> String {
    nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| "root".into())
}

fn gpus() -> Vec<GpuInfo> {
    (0..2)
        .map(|index| GpuInfo {
            index,
            uuid: None,
            model: "A100-SXM4-80GB".into(),
            mem_mib: 81920,
            source: GpuSource::Fake,
            mig: None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gangs_first_part_reserves_its_port_holds_it_and_lets_go_at_start() {
    let (state, server, http) = fake_server().await;
    let dir = tempfile::tempdir().unwrap();
    let lib =
        FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920).with_topology(FakeTopology::Pcie);
    let cfg = AgentConfig {
        location: NodeLocation {
            switch: Some("s1".into()),
            rack: None,
        },
        ..config(server, dir.path(), lib)
    };
    let (stop, stop_rx) = watch::channel(false);
    let agent = tokio::spawn(run(cfg, stop_rx));

    let (a, b) = (
        AttemptRef { job: 7, attempt: 1 },
        AttemptRef { job: 8, attempt: 1 },
    );
    set_desired(&state, vec![], vec![a, b]);
    let port = wait_event(&state, a, |e| match e {
        RunEventKind::PortReserved { port } => Some(*port),
        _ => None,
    })
    .await;
    let port_b = wait_event(&state, b, |e| match e {
        RunEventKind::PortReserved { port } => Some(*port),
        _ => None,
    })
    .await;
    assert_ne!(port, port_b);
    {
        let f = state.lock().unwrap();
        let r = &f.registrations[0];
        assert_eq!(r.advertise_addr.as_deref(), Some("127.0.0.1"));
        assert_eq!(r.location.switch.as_deref(), Some("s1"));
        assert_eq!(r.gpu_links.len(), 1);
        assert_eq!(
            (r.gpu_links[0].a, r.gpu_links[0].b, r.gpu_links[0].kind),
            (0, 1, LinkKind::PcieSwitch)
        );
    }
    assert!(!port_free(port), "the reserved port is not held");
    // The order repeated: the same port, never another.
    set_desired(&state, vec![], vec![a, b]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    {
        let f = state.lock().unwrap();
        for e in f.events.iter().filter(|e| e.job == 7) {
            assert_eq!(e.event, RunEventKind::PortReserved { port }, "{e:?}");
        }
    }
    // The gang is launched (b was given up by the server): a's port is let go just
    // before its process starts, b's because it is no longer asked for.
    let launch = Launch {
        job: 7,
        attempt: 1,
        name: "gang".into(),
        user: me(),
        command: vec![
            "sh".into(),
            "-c".into(),
            "echo $MASTER_PORT; sleep 30".into(),
        ],
        cwd: "/".into(),
        env: BTreeMap::new(),
        gpus: vec![0, 1],
        walltime_s: None,
        grace_s: 1,
        slice: None,
        resources: BTreeMap::new(),
        dist: Some(DistLaunch {
            nnodes: 2,
            node_rank: 0,
            gpus_per_node: 2,
            tasks_per_node: None,
            master_addr: Some("127.0.0.1".into()),
            master_port: Some(port),
            hosts: vec![
                DistHost {
                    addr: "127.0.0.1".into(),
                    slots: 2,
                },
                DistHost {
                    addr: "127.0.0.2".into(),
                    slots: 2,
                },
            ],
        }),
        cpu_milli: 0,
        mem_mib: 0,
        pids_max: None,
        image: None,
    };
    set_desired(&state, vec![launch], vec![]);
    wait_event(&state, a, |e| {
        matches!(e, RunEventKind::Started { .. }).then_some(())
    })
    .await;
    wait_port_free(port).await;
    wait_port_free(port_b).await;

    let _ = stop.send(true);
    let done = tokio::time::timeout(WAIT, agent)
        .await
        .expect("agent stops");
    done.unwrap().unwrap();
    let outcome = wait_event(&state, a, |e| match e {
        RunEventKind::Ended { outcome, .. } => Some(outcome.clone()),
        _ => None,
    })
    .await;
    assert!(
        matches!(outcome, gpusched_wire::Outcome::Stopped { .. }),
        "{outcome:?}"
    );
    http.abort();
}

/// Waits until `check` holds on the fake server's state.
async fn wait_until(s: &Shared, what: &str, check: impl Fn(&Fake) -> bool) {
    let deadline = Instant::now() + WAIT;
    loop {
        if check(&s.lock().unwrap()) {
            return;
        }
        assert!(Instant::now() < deadline, "not in time: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Acknowledged reports carrying telemetry.
fn acked_telemetry(f: &Fake) -> Vec<&gpusched_wire::NodeTelemetry> {
    f.reports
        .iter()
        .filter(|(_, ok)| *ok)
        .filter_map(|(r, _)| r.telemetry.as_ref())
        .collect()
}

/// Xid events of GPU `gpu` in reports (`acked`: acknowledged ones, else refused ones).
fn xids_of(f: &Fake, gpu: u32, acked: bool) -> Vec<u64> {
    f.reports
        .iter()
        .filter(|(_, ok)| *ok == acked)
        .filter_map(|(r, _)| r.telemetry.as_ref())
        .flat_map(|t| t.gpus.iter().filter(|g| g.index == gpu))
        .flat_map(|g| g.xids.iter().map(|x| x.code))
        .collect()
}

/// Writes the fault file whole (a reader never sees half of it).
fn write_faults(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

async fn scrape(url: &str) -> Vec<crate::metrics::Line> {
    let text = reqwest::get(url).await.unwrap().text().await.unwrap();
    crate::metrics::parse(&text)
}

fn metric(lines: &[crate::metrics::Line], name: &str, label: Option<(&str, &str)>) -> f64 {
    lines
        .iter()
        .find(|(n, l, _)| {
            n == name && label.is_none_or(|(k, v)| l.get(k).map(String::as_str) == Some(v))
        })
        .unwrap_or_else(|| panic!("no {name} {label:?}"))
        .2
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_carry_gpu_samples_alone_or_with_events_and_each_xid_arrives_once() {
    let (state, server, http) = fake_server().await;
    let dir = tempfile::tempdir().unwrap();
    let faults = crate::gpu::fake_telemetry::faults_path(dir.path());
    let lib = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920).with_faults_file(faults.clone());
    let metrics_addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let metrics_url = format!("http://{metrics_addr}/metrics");
    let cfg = AgentConfig {
        telemetry_interval: Duration::from_millis(200),
        metrics_listen: Some(metrics_addr),
        ..config(server, dir.path(), lib)
    };
    let (stop, stop_rx) = watch::channel(false);
    let agent = tokio::spawn(run(cfg, stop_rx));

    // With no job event to send, samples go on their own.
    wait_until(&state, "3 telemetry reports", |f| {
        acked_telemetry(f).len() >= 3
    })
    .await;
    {
        let f = state.lock().unwrap();
        for t in acked_telemetry(&f) {
            assert_eq!(t.gpus.iter().map(|g| g.index).collect::<Vec<_>>(), [0, 1]);
            for g in &t.gpus {
                assert!((30..=40).contains(&g.temp_c.unwrap()), "{g:?}");
                assert!((50_000..=70_000).contains(&g.power_mw.unwrap()), "{g:?}");
                assert!(g.energy_mj.is_some() && g.xids.is_empty() && !g.lost);
            }
        }
        assert!(f.reports.iter().all(|(r, _)| r.telemetry.is_some()));
    }

    // Never a request per sample: at most one report per pass of 2 GPUs.
    let before = scrape(&metrics_url).await;
    let reports_before = state.lock().unwrap().reports.len();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = scrape(&metrics_url).await;
    let reports = state.lock().unwrap().reports.len() - reports_before;
    let passes = metric(&after, "gpusched_agent_telemetry_pass_seconds_count", None)
        - metric(&before, "gpusched_agent_telemetry_pass_seconds_count", None);
    assert!(passes >= 2.0, "{passes} passes in 2 s at 200 ms");
    assert!(
        reports as f64 <= passes + 1.0,
        "{reports} reports for {passes} passes"
    );
    assert!(reports >= 1, "no telemetry report in 2 s");

    // A job: its events carry samples, and its GPU reads busy.
    let a = AttemptRef { job: 5, attempt: 1 };
    let launch = Launch {
        job: 5,
        attempt: 1,
        name: "busy".into(),
        user: me(),
        command: vec!["sleep".into(), "30".into()],
        cwd: "/".into(),
        env: BTreeMap::new(),
        gpus: vec![0],
        walltime_s: None,
        grace_s: 1,
        slice: None,
        resources: BTreeMap::new(),
        dist: None,
        cpu_milli: 0,
        mem_mib: 0,
        pids_max: None,
        image: None,
    };
    set_desired(&state, vec![launch], vec![]);
    wait_event(&state, a, |e| {
        matches!(e, RunEventKind::Started { .. }).then_some(())
    })
    .await;
    {
        let f = state.lock().unwrap();
        let started = f
            .reports
            .iter()
            .find(|(r, ok)| {
                *ok && r
                    .events
                    .iter()
                    .any(|e| matches!(e.event, RunEventKind::Started { .. }))
            })
            .expect("the report of the start");
        assert!(started.0.telemetry.is_some(), "events go with samples");
    }
    wait_until(&state, "GPU 0 busy", |f| {
        acked_telemetry(f)
            .last()
            .is_some_and(|t| t.gpus[0].util_pct >= Some(90) && t.gpus[1].util_pct == Some(0))
    })
    .await;

    // An Xid while the server refuses reports: kept, and delivered once it accepts.
    state.lock().unwrap().refuse_reports = true;
    write_faults(&faults, "[gpu.1]\nxid = 79\ntemp_c = 95\n");
    wait_until(&state, "the Xid offered twice", |f| {
        xids_of(f, 1, false).len() >= 2
    })
    .await;
    state.lock().unwrap().refuse_reports = false;
    wait_until(&state, "the Xid acknowledged", |f| {
        !xids_of(f, 1, true).is_empty()
    })
    .await;
    let acked_then = acked_telemetry(&state.lock().unwrap()).len();
    wait_until(&state, "3 more reports", |f| {
        acked_telemetry(f).len() >= acked_then + 3
    })
    .await;
    assert_eq!(
        xids_of(&state.lock().unwrap(), 1, true),
        [79],
        "exactly once"
    );

    // The agent's metrics show it all.
    let lines = scrape(&metrics_url).await;
    assert_eq!(
        metric(&lines, "DCGM_FI_DEV_GPU_TEMP", Some(("gpu", "1"))),
        95.0
    );
    assert_eq!(
        metric(&lines, "DCGM_FI_DEV_XID_ERRORS", Some(("gpu", "1"))),
        79.0
    );
    assert!(metric(&lines, "DCGM_FI_DEV_GPU_UTIL", Some(("gpu", "0"))) >= 90.0);
    assert_eq!(metric(&lines, "gpusched_agent_jobs_running", None), 1.0);
    assert_eq!(
        metric(&lines, "gpusched_agent_spawn_seconds_count", None),
        1.0
    );
    assert!(
        metric(
            &lines,
            "gpusched_agent_reports_total",
            Some(("kind", "events"))
        ) >= 1.0
    );

    // A GPU falls off the bus: reported lost at the next pass.
    write_faults(&faults, "[gpu.0]\nlost = true\n");
    wait_until(&state, "GPU 0 lost", |f| {
        acked_telemetry(f)
            .last()
            .is_some_and(|t| t.gpus[0].lost && t.gpus[0].temp_c.is_none() && !t.gpus[1].lost)
    })
    .await;

    shut_down(stop, agent, http).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_older_than_an_acknowledged_end_does_not_start_the_attempt_again() {
    let (state, server, http) = fake_server().await;
    {
        let mut f = state.lock().unwrap();
        f.stale_ms = 300;
        f.drop_ended = true;
    }
    let dir = tempfile::tempdir().unwrap();
    let lib = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920);
    let (stop, stop_rx) = watch::channel(false);
    let agent = tokio::spawn(run(config(server, dir.path(), lib), stop_rx));
    let jobs: Vec<Launch> = (1..=5)
        .map(|job| Launch {
            job,
            attempt: 1,
            name: "quick".into(),
            user: me(),
            command: vec!["true".into()],
            cwd: "/".into(),
            env: BTreeMap::new(),
            gpus: vec![0],
            walltime_s: None,
            grace_s: 1,
            slice: None,
            resources: BTreeMap::new(),
            dist: None,
            cpu_milli: 0,
            mem_mib: 0,
            pids_max: None,
            image: None,
        })
        .collect();
    set_desired(&state, jobs, vec![]);
    for job in 1..=5 {
        let a = AttemptRef { job, attempt: 1 };
        wait_event(&state, a, |e| {
            matches!(e, RunEventKind::Ended { .. }).then_some(())
        })
        .await;
    }
    // Every poll answer is 300 ms stale, so answers listing the ended (and
    // acknowledged) attempts keep arriving for a while: none may start them again.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    {
        let f = state.lock().unwrap();
        for job in 1..=5 {
            let starts = f
                .events
                .iter()
                .filter(|e| e.job == job && matches!(e.event, RunEventKind::Started { .. }))
                .count();
            assert_eq!(starts, 1, "job {job} started {starts} times");
        }
    }
    // The jobs wrote nothing into their checkpoint directories: none is left under a
    // job's name; empty ones may be kept for the next jobs (`spare_dirs.rs`).
    let ckpts = dir.path().join("jobs").join("checkpoints");
    let left: Vec<_> = std::fs::read_dir(&ckpts)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.len() <= crate::spare_dirs::KEPT, "{left:?}");
    for n in &left {
        assert!(
            n.to_string_lossy().starts_with(crate::spare_dirs::PREFIX),
            "{left:?}"
        );
        let inside = std::fs::read_dir(ckpts.join(n)).unwrap().count();
        assert_eq!(inside, 0, "{n:?}");
    }
    shut_down(stop, agent, http).await;
}

fn launch(job: u64) -> Launch {
    Launch {
        job,
        attempt: 1,
        name: "epoch".into(),
        user: me(),
        command: vec!["true".into()],
        cwd: "/".into(),
        env: BTreeMap::new(),
        gpus: vec![0],
        walltime_s: None,
        grace_s: 1,
        slice: None,
        resources: BTreeMap::new(),
        dist: None,
        cpu_milli: 0,
        mem_mib: 0,
        pids_max: None,
        image: None,
    }
}

/// Two servers: the leader of epoch 5, and a deposed one of epoch 3 that still answers.
/// While the leader is unavailable the agent reaches the deposed one, whose desired
/// state (a job to start) it refuses; back on the leader, it does what it says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn desired_state_of_an_older_epoch_is_refused_and_another_server_asked() {
    let (new, new_url, new_http) = fake_server().await;
    let (old, old_url, old_http) = fake_server().await;
    new.lock().unwrap().epoch = 5;
    old.lock().unwrap().epoch = 3;
    set_desired(&old, vec![launch(7)], vec![]);
    let dir = tempfile::tempdir().unwrap();
    let lib = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920);
    let (stop, stop_rx) = watch::channel(false);
    let list = format!("{new_url},{old_url}");
    let agent = tokio::spawn(run(config(list, dir.path(), lib), stop_rx));
    wait_until(&new, "polls of the leader", |f| f.polls >= 2).await;
    new.lock().unwrap().unavailable = true;
    wait_until(&old, "polls of the deposed server", |f| f.polls >= 3).await;
    // The leader is back, with a job of its own.
    {
        let mut f = new.lock().unwrap();
        f.unavailable = false;
    }
    set_desired(&new, vec![launch(8)], vec![]);
    // Its end may be reported to either (the deposed fake acknowledges reports).
    let ended = |f: &Fake| {
        f.events
            .iter()
            .any(|e| e.job == 8 && matches!(e.event, RunEventKind::Ended { .. }))
    };
    let deadline = Instant::now() + WAIT;
    while !ended(&new.lock().unwrap()) && !ended(&old.lock().unwrap()) {
        assert!(Instant::now() < deadline, "job 8 of the leader did not run");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for (who, s) in [("leader", &new), ("deposed server", &old)] {
        let f = s.lock().unwrap();
        assert!(
            !f.events.iter().any(|e| e.job == 7),
            "job 7 of the deposed server (epoch 3) ran; events at the {who}: {:?}",
            f.events
        );
    }
    shut_down(stop, agent, new_http).await;
    old_http.abort();
}

/// A launch of one job on GPU 0 running `script` as the test's user.
fn sh_launch(job: u64, script: &str) -> Launch {
    Launch {
        job,
        attempt: 1,
        name: format!("j{job}"),
        user: me(),
        command: vec!["sh".into(), "-c".into(), script.into()],
        cwd: "/".into(),
        env: BTreeMap::new(),
        gpus: vec![0],
        walltime_s: None,
        grace_s: 1,
        slice: None,
        resources: BTreeMap::new(),
        dist: None,
        cpu_milli: 0,
        mem_mib: 0,
        pids_max: None,
        image: None,
    }
}

/// The desired state: `run` to run, `queued` as (after, launch), `preempt` to preempt.
fn set_queued(s: &Shared, run: Vec<Launch>, queued: Vec<(u64, Launch)>, preempt: Vec<u64>) {
    let mut f = s.lock().unwrap();
    let gen = f.desired.as_ref().map_or(1, |d| d.gen + 1);
    f.desired = Some(Desired {
        gen,
        run,
        cancel: vec![],
        preempt: preempt
            .into_iter()
            .map(|job| gpusched_wire::PreemptOrder {
                job,
                attempt: 1,
                signal: 10,
                grace_s: 1,
            })
            .collect(),
        reserve_ports: vec![],
        epoch: 0,
        queued: queued
            .into_iter()
            .map(|(after, launch)| gpusched_wire::QueuedLaunch {
                after: AttemptRef {
                    job: after,
                    attempt: 1,
                },
                launch,
            })
            .collect(),
    });
}

fn at_of(s: &Shared, job: u64, started: bool) -> Option<u64> {
    let f = s.lock().unwrap();
    f.events
        .iter()
        .find(|e| {
            e.job == job
                && match e.event {
                    RunEventKind::Started { .. } => started,
                    RunEventKind::Ended { .. } => !started,
                    _ => false,
                }
        })
        .map(|e| e.at_ms)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_attempts_start_the_moment_the_one_ahead_ends_and_are_reported_in_batches() {
    let (state, server, http) = fake_server().await;
    let dir = tempfile::tempdir().unwrap();
    let lib = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920);
    let (stop, stop_rx) = watch::channel(false);
    let agent = tokio::spawn(run(config(server, dir.path(), lib), stop_rx));
    // Jobs 2..=31 wait in a chain behind job 1; the desired state never changes, so
    // only the agent can start them, each when the one before it ends.
    const LAST: u64 = 31;
    let chain = (2..=LAST)
        .map(|job| {
            let script = if job == LAST { "exit 4" } else { "true" };
            (job - 1, sh_launch(job, script))
        })
        .collect();
    set_queued(&state, vec![sh_launch(1, "sleep 0.2")], chain, vec![]);
    let code = wait_event(
        &state,
        AttemptRef {
            job: LAST,
            attempt: 1,
        },
        |e| match e {
            RunEventKind::Ended { outcome, .. } => Some(outcome.clone()),
            _ => None,
        },
    )
    .await;
    assert_eq!(code, gpusched_wire::Outcome::Exited { code: 4 });
    for job in 2..=LAST {
        let (ended, started) = (at_of(&state, job - 1, false), at_of(&state, job, true));
        assert!(
            started >= ended,
            "job {job} started before job {} ended",
            job - 1
        );
    }
    {
        let f = state.lock().unwrap();
        let starts = f
            .events
            .iter()
            .filter(|e| matches!(e.event, RunEventKind::Started { .. }))
            .count();
        assert_eq!(starts, LAST as usize, "each once: {:?}", f.events);
        // Starts, and ends whose GPU was taken at once, ride together: far fewer
        // reports than events (one each would be 62).
        let reports = f
            .reports
            .iter()
            .filter(|(r, _)| !r.events.is_empty())
            .count();
        assert!(
            reports < LAST as usize,
            "{reports} reports for {} events",
            f.events.len()
        );
    }
    shut_down(stop, agent, http).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_attempt_never_starts_behind_a_preempted_one() {
    let (state, server, http) = fake_server().await;
    let dir = tempfile::tempdir().unwrap();
    let lib = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920);
    let (stop, stop_rx) = watch::channel(false);
    let agent = tokio::spawn(run(config(server, dir.path(), lib), stop_rx));
    let first = sh_launch(1, "sleep 30");
    set_queued(
        &state,
        vec![first.clone()],
        vec![(1, sh_launch(2, "true"))],
        vec![],
    );
    wait_event(&state, AttemptRef { job: 1, attempt: 1 }, |e| {
        matches!(e, RunEventKind::Started { .. }).then_some(())
    })
    .await;
    // The server preempts job 1; its follower stays queued in the desired state.
    set_queued(
        &state,
        vec![first],
        vec![(1, sh_launch(2, "true"))],
        vec![1],
    );
    let outcome = wait_event(&state, AttemptRef { job: 1, attempt: 1 }, |e| match e {
        RunEventKind::Ended { outcome, .. } => Some(outcome.clone()),
        _ => None,
    })
    .await;
    assert_eq!(outcome, gpusched_wire::Outcome::Preempted);
    // A later poll (the desired state unchanged) does not start it either.
    let polls = state.lock().unwrap().polls;
    let deadline = Instant::now() + WAIT;
    while state.lock().unwrap().polls < polls + 3 {
        assert!(Instant::now() < deadline, "the agent stopped polling");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        at_of(&state, 2, true),
        None,
        "job 2 started behind a preempted job"
    );
    shut_down(stop, agent, http).await;
}

/// The node lease, as the agent keeps it: a server that announces one is given all of
/// it less the time a fenced job takes to stop; an older one half its heartbeat timeout.
#[test]
fn the_agent_fences_before_the_lease_ends_on_the_server() {
    let reg = |hb: u64, lease: Option<u64>| Registered {
        instance: "i".into(),
        poll_wait_ms: 1,
        heartbeat_timeout_ms: hb,
        lease_ms: lease,
        protocol: gpusched_wire::agent::AGENT_PROTOCOL,
    };
    let fence = |r: Registered| super::fence_after(&r);
    // 5 minutes: the last 8 s (3 s of grace, 5 s of margin) are the fence's.
    assert_eq!(fence(reg(30_000, Some(300_000))), Duration::from_secs(292));
    // A lease too short for that margin keeps three quarters of it.
    assert_eq!(fence(reg(2_000, Some(2_000))), Duration::from_millis(1_500));
    // An older server: half its heartbeat timeout, as before.
    assert_eq!(fence(reg(30_000, None)), Duration::from_secs(15));
}

/// A server silent for longer than half its heartbeat timeout (the old fence) but
/// shorter than its lease: the job runs on; past the lease it is fenced and reported
/// lost, well before the server (counting from the poll it received) would requeue it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_kills_nothing_within_the_lease() {
    let (s, url, http) = fake_server().await;
    {
        let mut f = s.lock().unwrap();
        f.heartbeat_ms = 1_000;
        f.lease_ms = Some(6_000);
    }
    let mut l = launch(9);
    l.command = vec!["sleep".into(), "30".into()];
    set_desired(&s, vec![l], vec![]);
    let dir = tempfile::tempdir().unwrap();
    let lib = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920);
    let (stop, stop_rx) = watch::channel(false);
    let agent = tokio::spawn(run(config(url, dir.path(), lib), stop_rx));
    let a = AttemptRef { job: 9, attempt: 1 };
    wait_event(&s, a, |e| {
        matches!(e, RunEventKind::Started { .. }).then_some(())
    })
    .await;
    let silent = Instant::now();
    s.lock().unwrap().unavailable = true;
    // Twice the old fence (half the heartbeat timeout): still running.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(
        !s.lock()
            .unwrap()
            .events
            .iter()
            .any(|e| e.job == 9 && matches!(e.event, RunEventKind::Ended { .. })),
        "the job ended while the server was silent for less than its lease"
    );
    // The fence comes at three quarters of the 6 s lease (its margin), and its end is
    // reported once the server answers again.
    tokio::time::sleep(Duration::from_millis(4_000)).await;
    s.lock().unwrap().unavailable = false;
    let outcome = wait_event(&s, a, |e| match e {
        RunEventKind::Ended { outcome, .. } => Some(outcome.clone()),
        _ => None,
    })
    .await;
    assert!(
        matches!(&outcome, gpusched_wire::Outcome::Lost { message } if message.contains("heard nothing")),
        "{outcome:?}"
    );
    assert!(silent.elapsed() < Duration::from_secs(8), "fenced too late");
    shut_down(stop, agent, http).await;
}

/// An agent told to stop while it runs nothing tells the server it is leaving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_agent_says_it_leaves() {
    let (s, url, http) = fake_server().await;
    let dir = tempfile::tempdir().unwrap();
    let lib = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920);
    let (stop, stop_rx) = watch::channel(false);
    let agent = tokio::spawn(run(config(url, dir.path(), lib), stop_rx));
    wait_until(&s, "a poll", |f| f.polls >= 1).await;
    shut_down(stop, agent, http).await;
    let f = s.lock().unwrap();
    let leaves: Vec<_> = f.reports.iter().filter(|(r, _)| r.leaving).collect();
    assert_eq!(leaves.len(), 1, "{:?}", f.reports);
    assert!(leaves[0].0.events.is_empty() && leaves[0].0.instance == "i1");
}

#[test]
fn an_unreachable_server_says_why_and_a_refused_certificate_what_to_give() {
    let chain = "error sending request for url (https://gpu1:6450/api/agents/register): \
                 client error (Connect): invalid peer certificate: UnknownIssuer";
    let said = super::client::unreachable("https://gpu1:6450", chain, None);
    assert_eq!(
        said,
        "cannot reach the server: the server at https://gpu1:6450 presents a certificate \
         this host does not trust (UnknownIssuer); give the server's certificate (the file \
         its --tls-cert names) or the CA that signed it with --ca-cert FILE (or \
         GPUSCHED_CA_CERT=FILE); retrying"
    );
    let said = super::client::unreachable(
        "https://gpu1:6450",
        chain,
        Some(std::path::Path::new("/etc/gpusched/ca.pem")),
    );
    assert!(
        said.contains("/etc/gpusched/ca.pem (--ca-cert, GPUSCHED_CA_CERT)"),
        "{said}"
    );
    let refused = "error sending request for url (http://gpu1:6450/): client error \
                   (Connect): tcp connect error: Connection refused (os error 111)";
    assert_eq!(
        super::client::unreachable("http://gpu1:6450", refused, None),
        format!("cannot reach the server at http://gpu1:6450 ({refused}); retrying")
    );
}
