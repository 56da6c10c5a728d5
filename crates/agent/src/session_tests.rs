//! The session against a small fake server on loopback: what the agent registers with
//! (address, place, GPU links), and the port reservation of a gang's first part.

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
}

type Shared = Arc<Mutex<Fake>>;

async fn register(State(s): State<Shared>, Json(r): Json<Register>) -> Json<Registered> {
    let mut f = s.lock().unwrap();
    f.events.extend(r.events.iter().cloned());
    f.registrations.push(r);
    Json(Registered {
        instance: "i1".into(),
        poll_wait_ms: 100,
        heartbeat_timeout_ms: 120_000,
    })
}

async fn poll(State(s): State<Shared>, Query(q): Query<PollQuery>) -> Json<Desired> {
    // Holds the poll briefly when nothing changed, as the server does (shorter).
    let unchanged = s.lock().unwrap().desired.as_ref().map(|d| d.gen) == Some(q.gen);
    if unchanged {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let d = s.lock().unwrap().desired.clone();
    Json(d.unwrap_or(Desired {
        gen: 0,
        run: vec![],
        cancel: vec![],
        preempt: vec![],
        reserve_ports: vec![],
    }))
}

async fn report(State(s): State<Shared>, Json(r): Json<Report>) -> Json<ReportAck> {
    s.lock().unwrap().events.extend(r.events);
    Json(ReportAck { ok: true })
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
    });
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
    let state: Shared = Arc::default();
    let app = Router::new()
        .route("/api/agent/register", post(register))
        .route("/api/agent/poll", get(poll))
        .route("/api/agent/report", post(report))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    let http = tokio::spawn(async move { axum::serve(listener, app).await });
    let dir = tempfile::tempdir().unwrap();
    let cfg = AgentConfig {
        server,
        name: "n0".into(),
        state_dir: dir.path().to_path_buf(),
        gpus: gpus(),
        cpus: 1,
        mem_mib: 1024,
        log_listen: "127.0.0.1:0".parse().unwrap(),
        log_url: None,
        join_token: "t".into(),
        allow_root_jobs: true,
        ca_cert: None,
        control: GpuControl(Some(Arc::new(
            FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920).with_topology(FakeTopology::Pcie),
        ))),
        mps: false,
        resources: BTreeMap::new(),
        advertise_addr: None,
        location: NodeLocation {
            switch: Some("s1".into()),
            rack: None,
        },
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
        RunEventKind::Ended { outcome } => Some(outcome.clone()),
        _ => None,
    })
    .await;
    assert!(
        matches!(outcome, gpusched_wire::Outcome::Stopped { .. }),
        "{outcome:?}"
    );
    http.abort();
}
