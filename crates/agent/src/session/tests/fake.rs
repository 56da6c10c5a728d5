//! The fake servers: what each answers to registrations, polls and reports, and what
//! they heard, in one world shared by all of them, in the order heard.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use gpusched_wire::agent::{from_msgpack, names_msgpack, to_msgpack, MSGPACK};
use gpusched_wire::compact::Offers;
use gpusched_wire::service::{Probe, ServeLaunch};
use gpusched_wire::{
    AttemptRef, Desired, DistHost, DistLaunch, GpuInfo, GpuSource, Launch, NodeTelemetry,
    PollQuery, PreemptOrder, QueuedLaunch, Register, Registered, Report, ReportAck, RunEvent,
    RunEventKind,
};

use super::{Order, Probes, Program};

/// What a server heard and acknowledged, in the order heard (across servers).
pub(super) enum Heard {
    Registered {
        server: &'static str,
        instance: String,
        body: Box<Register>,
    },
    /// An acknowledged event; `carried`: by a registration (printed on its line).
    Event {
        event: RunEvent,
        carried: bool,
    },
    Leave {
        instance: String,
    },
}

/// One fake server.
pub(super) struct Fake {
    pub(super) name: &'static str,
    pub(super) url: String,
    pub(super) desired: Desired,
    pub(super) epoch: u64,
    pub(super) stale_ms: u64,
    pub(super) down: bool,
    pub(super) refuse: bool,
    pub(super) forgotten: bool,
    pub(super) registrations: u32,
    /// Polls answered.
    pub(super) answered: u32,
    /// Every report received, with whether it was acknowledged.
    pub(super) reports: Vec<(Report, bool)>,
    pub(super) heartbeat_ms: u64,
    pub(super) lease_ms: Option<u64>,
    /// The server takes compact messages (`Registered::compact`): it answers a poll
    /// naming `have` with the launches the agent holds named (`gpusched_wire::compact`,
    /// as the server does), in MessagePack where asked, and reads MessagePack reports.
    pub(super) compact: bool,
    pub(super) offers: Offers,
    /// Its next compact answer names this job's attempt as held without ever having
    /// sent it (as after an answer that was lost).
    pub(super) unheld: Option<u64>,
    /// What it saw of the compact messages.
    pub(super) seen: Compact,
}

/// What a compact server saw, for `Check::Compact`.
#[derive(Default)]
pub(super) struct Compact {
    /// Answers that named launches, and that were MessagePack.
    pub(super) named: u32,
    pub(super) msgpack_answers: u32,
    /// Polls without `have` after its first answer.
    pub(super) whole_asks: u32,
    /// Reports in MessagePack, and in JSON.
    pub(super) msgpack_reports: u32,
    pub(super) json_reports: u32,
}

impl Fake {
    /// Takes the attempts whose ends it acknowledged out of its desired state (to run,
    /// queued, to cancel, to preempt, ports), as the server does (the agent relies on it: an attempt whose end was acknowledged before
    /// a poll was sent is forgotten once that poll is answered).
    pub(super) fn drop_ended(&mut self, events: &[RunEvent]) {
        let ended: BTreeSet<AttemptRef> = events
            .iter()
            .filter(|e| matches!(e.event, RunEventKind::Ended { .. }))
            .map(|e| AttemptRef {
                job: e.job,
                attempt: e.attempt,
            })
            .collect();
        if ended.is_empty() {
            return;
        }
        let d = &mut self.desired;
        d.run.retain(|l| !ended.contains(&l.attempt_ref()));
        d.queued
            .retain(|q| !ended.contains(&q.launch.attempt_ref()));
        d.cancel.retain(|a| !ended.contains(a));
        d.preempt.retain(|p| {
            !ended.contains(&AttemptRef {
                job: p.job,
                attempt: p.attempt,
            })
        });
        d.reserve_ports.retain(|a| !ended.contains(a));
        d.gen += 1;
    }
}

#[derive(Default)]
pub(super) struct World {
    pub(super) servers: Vec<Fake>,
    pub(super) heard: Vec<Heard>,
}

pub(super) type Shared = Arc<Mutex<World>>;
pub(super) type At = State<(Shared, usize)>;

pub(super) fn lock(w: &Shared) -> std::sync::MutexGuard<'_, World> {
    w.lock().unwrap_or_else(|p| p.into_inner())
}

pub(super) async fn register(
    State((w, i)): At,
    Json(r): Json<Register>,
) -> Result<Json<Registered>, StatusCode> {
    let mut w = lock(&w);
    let f = &mut w.servers[i];
    if f.down {
        return Err(StatusCode::SERVICE_UNAVAILABLE);
    }
    f.forgotten = false;
    f.registrations += 1;
    f.offers.clear();
    let instance = format!("i{}", f.registrations);
    let answer = Registered {
        instance: instance.clone(),
        poll_wait_ms: 100,
        heartbeat_timeout_ms: f.heartbeat_ms,
        lease_ms: f.lease_ms,
        protocol: gpusched_wire::agent::AGENT_PROTOCOL,
        compact: f.compact,
    };
    f.drop_ended(&r.events);
    let server = f.name;
    let carried = r.events.clone();
    w.heard.push(Heard::Registered {
        server,
        instance,
        body: Box::new(r),
    });
    w.heard
        .extend(carried.into_iter().map(|event| Heard::Event {
            event,
            carried: true,
        }));
    Ok(Json(answer))
}

pub(super) async fn poll(
    State((w, i)): At,
    headers: HeaderMap,
    Query(q): Query<PollQuery>,
) -> Result<Response, StatusCode> {
    let unchanged = {
        let w = lock(&w);
        let f = &w.servers[i];
        if f.down {
            return Err(StatusCode::SERVICE_UNAVAILABLE);
        }
        if f.forgotten {
            return Err(StatusCode::CONFLICT);
        }
        f.desired.gen == q.gen
    };
    // Holds the poll briefly when nothing changed, as the server does (shorter).
    if unchanged {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (mut d, stale) = {
        let w = lock(&w);
        let f = &w.servers[i];
        (f.desired.clone(), f.stale_ms)
    };
    tokio::time::sleep(Duration::from_millis(stale)).await;
    let mut w = lock(&w);
    let f = &mut w.servers[i];
    f.answered += 1;
    d.epoch = f.epoch;
    if !f.compact {
        return Ok(Json(d).into_response());
    }
    if q.have.is_none() && f.answered > 1 {
        f.seen.whole_asks += 1;
    }
    let mut d = f.offers.compact(d, q.have);
    if q.have.is_some() {
        if let Some(job) = f.unheld.take() {
            d.run.retain(|l| l.job != job);
            d.run_known.push(AttemptRef { job, attempt: 1 });
        }
    }
    if !d.run_known.is_empty() || !d.queued_known.is_empty() {
        f.seen.named += 1;
    }
    let asks = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(names_msgpack);
    if !asks {
        return Ok(Json(d).into_response());
    }
    f.seen.msgpack_answers += 1;
    let bytes = to_msgpack(&d).expect("a desired state writes as MessagePack");
    Ok(([(header::CONTENT_TYPE, MSGPACK)], bytes).into_response())
}

pub(super) async fn report(
    State((w, i)): At,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<ReportAck>, StatusCode> {
    let msgpack = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(names_msgpack);
    let r: Report = if msgpack {
        from_msgpack(&body).map_err(|_| StatusCode::BAD_REQUEST)?
    } else {
        serde_json::from_slice(&body).map_err(|_| StatusCode::BAD_REQUEST)?
    };
    let mut w = lock(&w);
    let f = &mut w.servers[i];
    if msgpack {
        f.seen.msgpack_reports += 1;
    } else {
        f.seen.json_reports += 1;
    }
    if f.down {
        return Err(StatusCode::SERVICE_UNAVAILABLE);
    }
    if f.forgotten {
        return Err(StatusCode::CONFLICT);
    }
    if f.refuse {
        f.reports.push((r, false));
        return Err(StatusCode::INTERNAL_SERVER_ERROR);
    }
    f.reports.push((r.clone(), true));
    f.drop_ended(&r.events);
    w.heard
        .extend(r.events.into_iter().map(|event| Heard::Event {
            event,
            carried: false,
        }));
    if r.leaving {
        w.heard.push(Heard::Leave {
            instance: r.instance,
        });
    }
    Ok(Json(ReportAck { ok: true }))
}

/// Serves a new fake server `name` (epoch 0, nothing wanted) on loopback: its index in
/// the world and its task.
pub(super) async fn serve(
    world: &Shared,
    name: &'static str,
) -> (usize, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let i = {
        let mut w = lock(world);
        w.servers.push(Fake {
            name,
            url,
            desired: desired(0, &[], &BTreeMap::new()),
            epoch: 0,
            stale_ms: 0,
            down: false,
            refuse: false,
            forgotten: false,
            registrations: 0,
            answered: 0,
            reports: Vec::new(),
            heartbeat_ms: 120_000,
            lease_ms: None,
            compact: false,
            offers: Offers::default(),
            unheld: None,
            seen: Compact::default(),
        });
        w.servers.len() - 1
    };
    let app = Router::new()
        .route("/api/agent/register", post(register))
        .route("/api/agent/poll", get(poll))
        .route("/api/agent/report", post(report))
        .with_state((world.clone(), i));
    (
        i,
        tokio::spawn(async move { axum::serve(listener, app).await }),
    )
}

/// Every acknowledged event, in the order heard.
pub(super) fn acked_events(w: &World) -> impl Iterator<Item = &RunEvent> {
    w.heard.iter().filter_map(|h| match h {
        Heard::Event { event, .. } => Some(event),
        _ => None,
    })
}

pub(super) fn find_event(w: &World, job: u64, kind: impl Fn(&RunEventKind) -> bool) -> bool {
    acked_events(w).any(|e| e.job == job && e.attempt == 1 && kind(&e.event))
}

pub(super) fn port_of(w: &World, job: u64) -> Option<u16> {
    acked_events(w).find_map(|e| match e.event {
        RunEventKind::PortReserved { port } if e.job == job => Some(port),
        _ => None,
    })
}

pub(super) fn pid_of(w: &World, job: u64) -> Option<u32> {
    acked_events(w).find_map(|e| match e.event {
        RunEventKind::Started { pid, .. } if e.job == job => Some(pid),
        _ => None,
    })
}

/// Every report every server received, with whether it was acknowledged.
pub(super) fn all_reports(w: &World) -> impl Iterator<Item = (&Report, bool)> {
    w.servers
        .iter()
        .flat_map(|f| f.reports.iter().map(|(r, ok)| (r, *ok)))
}

/// The samples of acknowledged reports, in order.
pub(super) fn acked_samples(w: &World) -> Vec<&NodeTelemetry> {
    all_reports(w)
        .filter(|(_, ok)| *ok)
        .filter_map(|(r, _)| r.telemetry.as_ref())
        .collect()
}

/// The Xid codes of GPU `gpu` in reports (`acked`: acknowledged ones, else refused ones).
pub(super) fn xids(w: &World, gpu: u32, acked: bool) -> Vec<u64> {
    all_reports(w)
        .filter(|(_, ok)| *ok == acked)
        .filter_map(|(r, _)| r.telemetry.as_ref())
        .flat_map(|t| t.gpus.iter().filter(|g| g.index == gpu))
        .flat_map(|g| g.xids.iter().map(|x| x.code))
        .collect()
}

/// The desired state of generation `gen` for `orders`; a gang's `MASTER_PORT` is the
/// port reported for it (`ports`).
pub(super) fn desired(gen: u64, orders: &[Order], ports: &BTreeMap<u64, u16>) -> Desired {
    let mut d = Desired {
        gen,
        run: vec![],
        cancel: vec![],
        preempt: vec![],
        reserve_ports: vec![],
        epoch: 0,
        queued: vec![],
        steps: vec![],
        power_caps: BTreeMap::new(),
        run_known: vec![],
        queued_known: vec![],
    };
    let first = |job| AttemptRef { job, attempt: 1 };
    let queued = |job, after, script| QueuedLaunch {
        after: first(after),
        launch: launch(job, script),
    };
    for o in orders {
        match *o {
            Order::Run(job, script) => d.run.push(launch(job, script)),
            Order::Gang(job, script) => {
                let port = *ports
                    .get(&job)
                    .unwrap_or_else(|| panic!("a gang {job} before its port was reported"));
                d.run.push(gang(job, script, port));
            }
            Order::Queued(job, after, script) => d.queued.push(queued(job, after, script)),
            Order::Chain(from, to, script, last) => d.queued.extend(
                (from..=to).map(|job| queued(job, job - 1, if job == to { last } else { script })),
            ),
            Order::Preempt(job) => d.preempt.push(PreemptOrder {
                job,
                attempt: 1,
                signal: 10,
                grace_s: 1,
            }),
            Order::Cancel(job) => d.cancel.push(first(job)),
            Order::Reserve(job) => d.reserve_ports.push(first(job)),
            Order::Serve(job, program, probes) => d.run.push(replica(job, program, probes)),
        }
    }
    d
}

/// Attempt 1 of `job` on GPU 0 running `sh -c script` as the test's user.
pub(super) fn launch(job: u64, script: &str) -> Launch {
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
        serve: None,
        hold: false,
    }
}

/// [`Program::Http`]; the single quotes are the shell's.
const HTTP_SERVER: &str = r#"exec python3 -c '
import http.server as h, os
d = os.environ["GPUSCHED_CHECKPOINT_DIR"]
port = os.environ["PORT"]
if os.environ.get("GPUSCHED_PORT") != port: raise SystemExit(1)
class H(h.BaseHTTPRequestHandler):
    def do_GET(s):
        s.send_response(503 if os.path.exists(d + "/no-" + s.path[1:]) else 200)
        s.end_headers()
    def log_message(s, *a): pass
srv = h.HTTPServer(("", int(port)), H)
srv.timeout = 0.1
while not os.path.exists(d + "/quit"): srv.handle_request()
'"#;

/// A service replica running `program`, probed as `probes` says.
pub(super) fn replica(job: u64, program: Program, probes: Probes) -> Launch {
    let script = match program {
        Program::Http => HTTP_SERVER,
        Program::Sleep => "sleep 60",
    };
    let every_second = |path: Option<&str>, failure_threshold, initial_delay_s| Probe {
        path: path.map(String::from),
        period_s: 1,
        timeout_s: 1,
        failure_threshold,
        initial_delay_s,
    };
    let (readiness, liveness) = match probes {
        Probes::Tcp => (Some(every_second(None, 3, 0)), None),
        Probes::Http => (Some(every_second(Some("/ready"), 2, 0)), None),
        Probes::Live => (
            Some(every_second(None, 3, 0)),
            Some(every_second(Some("/live"), 3, 3)),
        ),
    };
    Launch {
        serve: Some(ServeLaunch {
            readiness,
            liveness,
        }),
        ..launch(job, script)
    }
}

/// The first part of a two-node gang on GPUs 0 and 1, `MASTER_PORT` `port`.
pub(super) fn gang(job: u64, script: &str, port: u16) -> Launch {
    let host = |addr: &str| DistHost {
        addr: addr.into(),
        slots: 2,
    };
    Launch {
        gpus: vec![0, 1],
        dist: Some(DistLaunch {
            nnodes: 2,
            node_rank: 0,
            gpus_per_node: 2,
            tasks_per_node: None,
            master_addr: Some("127.0.0.1".into()),
            master_port: Some(port),
            hosts: vec![host("127.0.0.1"), host("127.0.0.2")],
        }),
        ..launch(job, script)
    }
}

pub(super) fn me() -> String {
    nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| "root".into())
}

pub(super) fn gpus() -> Vec<GpuInfo> {
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
