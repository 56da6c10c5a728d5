//! The agent's conversation with the server: register (reconciling what runs here with
//! what the server believes), then long-poll the node's desired state and make it so,
//! while a reporter sends what happened. Both sides are idempotent, so every failure
//! is handled the same way: retry, re-register if the server forgot us.
//!
//! Nothing is lost across crashes: an attempt's end sits in the outbox until the server
//! has acknowledged it (and in the journal, an outcome without `acked`, until then too).
//!
//! GPU telemetry rides on the reports: a sampling loop reads the GPUs every
//! `--telemetry-interval` and wakes the reporter only when a report is due on its
//! account (see [`crate::telemetry`]); every report carries the latest samples.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use gpusched_wire::servers::ServerList;
use gpusched_wire::{
    AttemptRef, Desired, GpuInfo, Outcome, Register, Registered, Report, RunEvent, RunEventKind,
};
use reqwest::StatusCode;
use tokio::sync::{mpsc, watch};

use crate::follow::Followers;
use crate::launcher::{EventSink, Launcher};
use crate::metrics::AgentMetrics;
use crate::slices::SliceSetup;
use crate::telemetry::Telemetry;

#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// `http://host:port` of the server, or several comma-separated: the agent follows
    /// the leader among them.
    pub server: String,
    pub name: String,
    pub state_dir: PathBuf,
    pub gpus: Vec<GpuInfo>,
    pub cpus: u32,
    pub mem_mib: u64,
    /// Where to serve logs to the server (port 0 picks one).
    pub log_listen: SocketAddr,
    /// The URL the server should use for logs, if not `http://<log_listen>`.
    pub log_url: Option<String>,
    /// The server's join token: proves to the server that this is an agent, and to this
    /// agent's log endpoint that the caller is the server.
    pub join_token: String,
    /// When the agent runs as root: whether jobs submitted by root may run (as root).
    pub allow_root_jobs: bool,
    /// A PEM certificate (or CA) to trust for an https:// server, besides the system's.
    pub ca_cert: Option<PathBuf>,
    /// The GPU library, for MIG instances.
    pub control: crate::gpu::GpuControl,
    /// The node runs NVIDIA MPS: shares get MPS limits.
    pub mps: bool,
    /// Generic counted resources this node offers (`--resource fpga=2`).
    pub resources: std::collections::BTreeMap<String, u64>,
    /// The address other nodes reach this one at (`--advertise-addr`): `MASTER_ADDR`
    /// of jobs whose first part runs here, and this node's hostfile line. `None`: the
    /// local address of the agent's route to the server, found at registration.
    pub advertise_addr: Option<String>,
    /// Where the node sits (`--switch`, `--rack`).
    pub location: gpusched_wire::NodeLocation,
    /// How often the GPUs are sampled (`--telemetry-interval`); zero: never.
    pub telemetry_interval: Duration,
    /// Where to serve Prometheus metrics (`--metrics-listen`); `None`: nowhere.
    pub metrics_listen: Option<SocketAddr>,
    /// How long ended jobs' logs (and checkpoint directories kept for a restart) stay
    /// (`--log-retention`, `--log-max-total`).
    pub retention: crate::retention::Policy,
    /// How jobs are contained (cgroups, default limits per GPU).
    pub contain: crate::launcher::ContainConfig,
    /// The container runtime of `--image` jobs (`--image-runtime`); `None`: none here.
    pub image: Option<Arc<crate::image::Runtime>>,
}

/// Says in the agent's log what its jobs are held to, and why not more.
fn log_containment(c: &gpusched_wire::contain::Containment) {
    if c.enforced.is_empty() {
        tracing::warn!(
            "jobs are not contained (accounting only): {}",
            c.notes.join("; ")
        );
    } else {
        tracing::info!(
            "jobs are contained by cgroup {}: {}",
            c.cgroup.as_str(),
            c.enforced.join(", ")
        );
        for note in &c.notes {
            tracing::info!("containment: {note}");
        }
    }
}

/// Events not yet acknowledged by the server, oldest first, each with whether the
/// server needs it soon, and a counter that wakes the reporter whenever one is added.
#[derive(Clone)]
struct Outbox {
    events: Arc<Mutex<Vec<(RunEvent, bool)>>>,
    wake: watch::Sender<u64>,
}

/// The shortest time between two reports that carry nothing urgent: starts, and ends
/// whose GPUs a queued attempt took at once (`follow.rs`). Those ride together, so a
/// node turning over many short jobs costs the server one round per this interval, not
/// one per job; an end that leaves GPUs idle, a checkpoint or a port goes at once.
const ROUTINE_REPORT_EVERY: Duration = Duration::from_millis(20);

impl Outbox {
    /// Adds an event the server needs soon: the reporter sends it at once.
    fn push(&self, ev: RunEvent) {
        self.push_as(ev, true);
    }

    /// Adds an event; a routine one (`urgent` false) may wait for others, up to
    /// [`ROUTINE_REPORT_EVERY`].
    fn push_as(&self, ev: RunEvent, urgent: bool) {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((ev, urgent));
        self.wake.send_modify(|n| *n += 1);
    }

    fn snapshot(&self) -> Vec<RunEvent> {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(e, _)| e.clone())
            .collect()
    }

    /// Whether any event waiting is urgent.
    fn urgent(&self) -> bool {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|(_, u)| *u)
    }

    /// Drops `sent` (a prefix-ordered subsequence of the outbox) once acknowledged.
    fn remove(&self, sent: &[RunEvent]) {
        let mut out = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let mut k = 0;
        out.retain(|(e, _)| {
            let acked = k < sent.len() && *e == sent[k];
            if acked {
                k += 1;
            }
            !acked
        });
    }
}

struct Shared {
    cfg: AgentConfig,
    http: reqwest::Client,
    /// The servers of `cfg.server`, the one that answered last first.
    servers: ServerList,
    /// The highest leader epoch seen in a desired state: older ones are refused.
    max_epoch: AtomicU64,
    outbox: Outbox,
    launcher: Launcher,
    slices: Arc<SliceSetup>,
    log_url: String,
    /// The secret the server presents to this agent's log endpoint; new every start.
    log_token: String,
    /// When a poll last succeeded: the agent's lease on its jobs.
    last_contact: Mutex<Instant>,
    /// The advertised address once known (the flag, or found at the first successful
    /// look-up of the route to the server).
    advertise: Mutex<Option<String>>,
    /// How the node's GPUs are linked, read once at start.
    gpu_links: Vec<gpusched_wire::GpuLink>,
    /// Samples and Xids not yet acknowledged by the server.
    telemetry: Telemetry,
    metrics: Arc<AgentMetrics>,
    /// The GPUs of each attempt started in this life (the fake device's load).
    launched_gpus: Mutex<BTreeMap<AttemptRef, Vec<u32>>>,
    /// Attempts queued behind others here (`follow.rs`).
    followers: Arc<Followers>,
}

/// Runs the agent until `shutdown` fires; then stops every job (SIGTERM to its process
/// group, its grace, SIGKILL) and waits, bounded, for the server to have their ends, so
/// they are requeued without using a retry. A killed agent's jobs die with it (they
/// carry PDEATHSIG) and are reported lost by the next agent life.
pub async fn run(cfg: AgentConfig, mut shutdown: watch::Receiver<bool>) -> anyhow::Result<()> {
    let jobs_root = cfg.state_dir.join("jobs");
    let (wake, wake_rx) = watch::channel(0u64);
    let outbox = Outbox {
        events: Arc::new(Mutex::new(Vec::new())),
        wake,
    };
    let slices = Arc::new(SliceSetup::new(cfg.control.clone(), cfg.mps));
    let followers = Arc::new(Followers::default());
    let (follow_tx, follow_rx) = mpsc::unbounded_channel::<gpusched_wire::Launch>();
    let sink: EventSink = {
        let outbox = outbox.clone();
        let slices = slices.clone();
        let followers = followers.clone();
        Arc::new(move |ev| {
            let a = AttemptRef {
                job: ev.job,
                attempt: ev.attempt,
            };
            let urgent = match &ev.event {
                RunEventKind::Ended { outcome, .. } => {
                    // A MIG instance made for the attempt goes before the server hears of
                    // the end.
                    slices.ended(a);
                    // The attempt queued behind it starts now, on its GPUs; the server
                    // then has nothing to decide and hears of both in a routine report.
                    match followers.ended(a, outcome) {
                        Some(next) => follow_tx.send(next).is_err(),
                        None => true,
                    }
                }
                RunEventKind::Started { .. } => false,
                _ => true,
            };
            outbox.push_as(ev, urgent)
        })
    };
    let mut launcher = if cfg.allow_root_jobs {
        Launcher::with_root_jobs(&jobs_root, sink)
    } else {
        Launcher::new(&jobs_root, sink)
    }
    .with_context(|| {
        format!(
            "cannot use the agent state directory {}",
            cfg.state_dir.display()
        )
    })?;
    launcher.set_image_runtime(cfg.image.clone());
    let contain = crate::launcher::Contain::new(
        cfg.contain.clone(),
        &crate::cgroup::agent_key(&cfg.name, &cfg.state_dir),
        cfg.control.minors(&cfg.gpus),
        |cores| cfg.control.affinity(&cfg.gpus, cores),
    );
    log_containment(&contain.containment());
    let launcher = launcher.with_contain(contain);
    let recovered = launcher
        .recover()
        .context("cannot recover the jobs of the last agent life")?;
    if !recovered.is_empty() {
        tracing::info!(
            count = recovered.len(),
            "reporting attempts of the last agent life"
        );
    }
    for ev in recovered {
        outbox.push(ev);
    }

    let log_token = random_secret()?;
    let listener = tokio::net::TcpListener::bind(cfg.log_listen)
        .await
        .with_context(|| format!("cannot listen for log requests on {}", cfg.log_listen))?;
    let log_url = match &cfg.log_url {
        Some(u) => u.clone(),
        None => default_log_url(listener.local_addr()?),
    };
    let logs = crate::logs::router(Arc::new(launcher.records().clone()), &log_token);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, logs).await {
            tracing::error!("log server stopped: {e}");
        }
    });

    let mut auth = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", cfg.join_token))
        .context("the join token has characters that cannot go in an HTTP header")?;
    auth.set_sensitive(true);
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::AUTHORIZATION, auth);
    // The protocol this agent speaks, on every request (a server of the previous release
    // ignores the header; this one refuses a protocol it cannot serve, saying which).
    headers.insert(
        gpusched_wire::agent::PROTOCOL_HEADER,
        reqwest::header::HeaderValue::from(gpusched_wire::agent::AGENT_PROTOCOL),
    );
    let mut builder = reqwest::Client::builder();
    if let Some(path) = &cfg.ca_cert {
        for cert in crate::ca::read_ca_certs(path)? {
            builder = builder.add_root_certificate(cert);
        }
    }
    let servers = ServerList::parse(&cfg.server).map_err(|e| anyhow::anyhow!("--server: {e}"))?;
    // Redirects are followed by `send`, not reqwest, which would drop the join token
    // when the host changes (a follower always points at another).
    let http = builder
        .redirect(reqwest::redirect::Policy::none())
        .default_headers(headers)
        .connect_timeout(Duration::from_secs(3))
        .build()
        .context("cannot build the HTTP client")?;
    let gpu_links = cfg.control.links(&cfg.gpus);
    let metrics = Arc::new(
        AgentMetrics::new(&cfg.name, &cfg.control.facts(&cfg.gpus)).with_collector(
            crate::job_metrics::JobUsageCollector {
                contain: launcher.contain().clone(),
                node: cfg.name.clone(),
            },
        ),
    );
    let metrics_listener =
        match cfg.metrics_listen {
            Some(addr) => Some(tokio::net::TcpListener::bind(addr).await.with_context(|| {
                format!("cannot listen for metrics on {addr} (--metrics-listen)")
            })?),
            None => None,
        };
    if let Some(addr) = &cfg.advertise_addr {
        launcher.set_advertise_addr(addr);
    }
    let shared = Arc::new(Shared {
        advertise: Mutex::new(cfg.advertise_addr.clone()),
        gpu_links,
        cfg,
        http,
        servers,
        max_epoch: AtomicU64::new(0),
        outbox,
        launcher,
        slices,
        log_url,
        log_token,
        last_contact: Mutex::new(Instant::now()),
        telemetry: Telemetry::default(),
        metrics,
        launched_gpus: Mutex::default(),
        followers,
    });
    if let Some(listener) = metrics_listener {
        let running = {
            let sh = shared.clone();
            move || sh.launcher.running().len()
        };
        let app = crate::metrics::router(shared.metrics.clone(), running);
        tracing::info!(
            "serving metrics on http://{}/metrics",
            listener.local_addr()?
        );
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!("metrics server stopped: {e}");
            }
        });
    }
    tokio::spawn(retention_loop(shared.clone()));
    tokio::spawn(follow_loop(shared.clone(), follow_rx));
    let interval = shared.cfg.telemetry_interval;
    if !interval.is_zero() && shared.cfg.control.0.is_some() && !shared.cfg.gpus.is_empty() {
        tokio::spawn(sample_loop(shared.clone(), interval));
    }

    let (instance_tx, instance_rx) = watch::channel(String::new());
    let (rereg_tx, mut rereg_rx) = mpsc::unbounded_channel::<()>();
    let (lease_tx, lease_rx) = watch::channel(Duration::MAX);
    tokio::spawn(reporter(
        shared.clone(),
        wake_rx,
        instance_rx,
        rereg_tx.clone(),
    ));
    tokio::spawn(guard_lease(shared.clone(), lease_rx));

    loop {
        let reg = tokio::select! {
            r = register(&shared) => r?,
            _ = shutdown.changed() => return drain(&shared, None).await,
        };
        lease_tx.send_replace(fence_after(&reg));
        instance_tx.send_replace(reg.instance.clone());
        while rereg_rx.try_recv().is_ok() {}
        let poll_wait = Duration::from_millis(reg.poll_wait_ms);
        tokio::select! {
            _ = poll_loop(&shared, &reg.instance, poll_wait) => {}
            _ = rereg_rx.recv() => {}
            _ = shutdown.changed() => return drain(&shared, Some(&reg.instance)).await,
        }
        tracing::info!("the server does not know this node (it restarted?); registering again");
    }
}

/// The most a stopping agent waits for its jobs' graces (a job's own grace bounds it;
/// this only guards against a supervisor that never ends).
const DRAIN_JOBS: Duration = Duration::from_secs(15 * 60);

/// The most a stopping agent waits for the server to acknowledge the ends; what is not
/// acknowledged by then is journalled and reported by the next agent life.
const DRAIN_REPORT: Duration = Duration::from_secs(10);

/// How long the server may be silent before this agent stops its jobs: the node lease
/// the server announced, less the time a fenced job takes to stop (its short grace and
/// a margin; a quarter of a lease too short for that), so they are gone before the
/// server, counting the same lease from the request it received (never before this
/// agent sent it), requeues them. The server holds a poll at most an eighth of the
/// lease, so a live server is never silent that long between two answers. A server that
/// announces no lease (an older release) requeues after its heartbeat timeout: half of
/// that, as before.
fn fence_after(reg: &Registered) -> Duration {
    match reg.lease_ms {
        Some(ms) => {
            let lease = Duration::from_millis(ms);
            lease.saturating_sub(FENCE_MARGIN.min(lease / 4))
        }
        None => Duration::from_millis(reg.heartbeat_timeout_ms / 2),
    }
}

/// What a fence takes before its jobs are gone: their grace before SIGKILL, and a margin
/// for a busy machine.
const FENCE_MARGIN: Duration = Duration::from_secs(crate::launcher::FENCE_GRACE.as_secs() + 5);

/// The agent was told to stop: every job is stopped with its grace and ends `Stopped`,
/// and the ends are delivered before the agent goes. No new job starts meanwhile (the
/// poll loop is no longer running). Then the server of `instance` is told the node is
/// leaving, so it places nothing more here.
async fn drain(sh: &Shared, instance: Option<&str>) -> anyhow::Result<()> {
    // No attempt queued behind another starts while the agent stops its jobs.
    sh.followers.stop();
    let running = sh.launcher.running();
    if !running.is_empty() {
        tracing::warn!(
            jobs = running.len(),
            "stopping: sending SIGTERM to every job (SIGKILL after its grace); they are requeued"
        );
        sh.launcher
            .stop_all("the agent was stopped (SIGTERM or SIGINT); the job goes back in the queue");
    }
    let began = Instant::now();
    while !sh.launcher.running().is_empty() && began.elapsed() < DRAIN_JOBS {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let began = Instant::now();
    while !sh.outbox.snapshot().is_empty() && began.elapsed() < DRAIN_REPORT {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // What the server did not confirm is reported by the next life: on disk by then.
    sync_journal(sh).await;
    let left = sh.outbox.snapshot().len();
    if left > 0 {
        tracing::warn!(
            events = left,
            "the server did not confirm every job's end before the agent stopped; the next \
             agent start reports them"
        );
    } else if let Some(instance) = instance {
        leave(sh, instance).await;
    }
    Ok(())
}

/// Tells the server this node runs nothing and is going (best effort, bounded: a server
/// that does not hear it takes the node out after the heartbeat timeout instead).
async fn leave(sh: &Shared, instance: &str) {
    let body = Report {
        node: sh.cfg.name.clone(),
        instance: instance.to_string(),
        events: Vec::new(),
        telemetry: None,
        leaving: true,
    };
    let req = |url: String| {
        sh.http
            .post(url)
            .json(&body)
            .timeout(Duration::from_secs(3))
    };
    match send(sh, "/api/agent/report", req).await {
        Ok(r) if r.status().is_success() => tracing::info!("told the server this node is leaving"),
        Ok(r) => tracing::debug!("the server did not take the node's leave ({})", r.status()),
        Err(e) => tracing::debug!("could not tell the server this node is leaving: {e}"),
    }
}

/// Fences the node: when no poll has succeeded for the lease, every running attempt is
/// stopped and reported lost, because the server is about to requeue it elsewhere.
async fn guard_lease(sh: Arc<Shared>, lease: watch::Receiver<Duration>) {
    let mut checkpoints: BTreeMap<AttemptRef, u64> = BTreeMap::new();
    let mut tick = 0u32;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        tick += 1;
        if tick.is_multiple_of(8) {
            report_checkpoints(&sh, &mut checkpoints);
        }
        let limit = *lease.borrow();
        let silent = sh
            .last_contact
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed();
        if silent > limit && !sh.launcher.running().is_empty() {
            let why = format!(
                "the agent heard nothing from the server for {:.0} s and stopped the job so it \
                 does not run twice when the server requeues it",
                silent.as_secs_f64()
            );
            tracing::warn!("{why}");
            sh.launcher.fence(&why);
        }
    }
}

/// Reports a new checkpoint time (the mtime of `$GPUSCHED_CHECKPOINT_DIR/checkpoint`) of
/// each running attempt, so the server preempts whoever loses the least work.
fn report_checkpoints(sh: &Shared, seen: &mut BTreeMap<AttemptRef, u64>) {
    let running = sh.launcher.running();
    seen.retain(|a, _| running.contains(a));
    for a in running {
        let mark = sh
            .launcher
            .checkpoint_dir(a.job)
            .join(crate::launcher::CHECKPOINT_MARK);
        let Ok(modified) = std::fs::symlink_metadata(&mark).and_then(|m| m.modified()) else {
            continue;
        };
        let at_ms = modified
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        if seen.get(&a).is_none_or(|&t| at_ms > t) {
            seen.insert(a, at_ms);
            sh.outbox.push(RunEvent {
                job: a.job,
                attempt: a.attempt,
                at_ms,
                event: RunEventKind::Checkpoint,
            });
        }
    }
}

fn random_secret() -> anyhow::Result<String> {
    let mut bytes = [0u8; 24];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| anyhow::anyhow!("the OS random generator failed: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether the server's refusal of a registration is final: a malformed registration
/// (an invalid node name, GPUs of several models) is refused the same way at every try,
/// so the agent stops with the server's reason instead of retrying forever. Refusals a
/// retry can outlive are not: a token an admin may still fix (401, 403), a timeout
/// (408), a server of another protocol during an upgrade (409), load shedding (429).
fn refusal_is_final(status: StatusCode) -> bool {
    status.is_client_error()
        && ![
            StatusCode::UNAUTHORIZED,
            StatusCode::FORBIDDEN,
            StatusCode::REQUEST_TIMEOUT,
            StatusCode::CONFLICT,
            StatusCode::TOO_MANY_REQUESTS,
        ]
        .contains(&status)
}

/// Registers, retrying until the server answers; an error for a refusal that no retry
/// can change ([`refusal_is_final`]).
async fn register(sh: &Shared) -> anyhow::Result<Registered> {
    let mut backoff = Backoff::new();
    loop {
        let advertise_addr = advertised(sh).await;
        // Running first, then the outbox: an attempt that ends in between delivers its
        // end before it leaves `running`, so it shows in one or the other.
        let running = sh.launcher.running();
        let events: Vec<RunEvent> = sh.outbox.snapshot();
        sync_journal(sh).await;
        let body = Register {
            node: sh.cfg.name.clone(),
            agent_version: env!("CARGO_PKG_VERSION").to_string(),
            gpus: sh.cfg.control.refresh(&sh.cfg.gpus),
            cpus: sh.cfg.cpus,
            mem_mib: sh.cfg.mem_mib,
            mps: sh.cfg.mps,
            resources: sh.cfg.resources.clone(),
            log_url: Some(sh.log_url.clone()),
            log_token: Some(sh.log_token.clone()),
            advertise_addr,
            location: sh.cfg.location.clone(),
            gpu_links: sh.gpu_links.clone(),
            containment: Some(sh.launcher.containment()),
            running,
            events: events.clone(),
        };
        // Bounded: a server that is stopped or cut off accepts the connection and never
        // answers; the next try goes to the next server.
        let sent = Instant::now();
        match send(sh, "/api/agent/register", |url| {
            sh.http
                .post(url)
                .timeout(Duration::from_secs(30))
                .json(&body)
        })
        .await
        {
            Ok(r) if r.status().is_success() => match r.json::<Registered>().await {
                Ok(reg) => {
                    // The server counts this node's lease from this request: so does
                    // the agent (a job it places now must not be fenced at once).
                    heard(sh, sent);
                    acknowledge(sh, &events);
                    tracing::info!(node = %sh.cfg.name, server = %sh.servers.current(), gpus = sh.cfg.gpus.len(), server_protocol = reg.protocol, "registered");
                    if reg.protocol < gpusched_wire::agent::AGENT_PROTOCOL {
                        tracing::warn!(
                            "the server speaks agent protocol {} (an older release), this agent {}: \
                             it works, but upgrade the servers",
                            reg.protocol,
                            gpusched_wire::agent::AGENT_PROTOCOL
                        );
                    }
                    return Ok(reg);
                }
                Err(e) => tracing::warn!("unreadable registration answer: {e}"),
            },
            Ok(r) => {
                let status = r.status();
                let text = r.text().await.unwrap_or_default();
                // With nothing running here (the agent's first registration) a final
                // refusal stops the agent; jobs already running are never abandoned.
                if refusal_is_final(status) && body.running.is_empty() {
                    // The API's errors are `{"error": "..."}`: the reason alone reads best.
                    let why = serde_json::from_str::<serde_json::Value>(&text)
                        .ok()
                        .and_then(|v| v["error"].as_str().map(str::to_string))
                        .unwrap_or(text);
                    anyhow::bail!(
                        "the server at {} refused to register node {:?} ({status}): {why}",
                        sh.servers.current(),
                        sh.cfg.name
                    );
                }
                tracing::error!("the server refused the registration ({status}): {text}");
                if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                    tracing::error!(
                        "check the join token (the server keeps it in DATA_DIR/join-token)"
                    );
                }
            }
            Err(e) => backoff.note(&sh.servers.shown(), &e, sh.cfg.ca_cert.as_deref()),
        }
        backoff.sleep().await;
    }
}

/// Sends a request (built by `build` for a URL) to the current server, following a
/// follower's 307 to the leader with the request rebuilt there (body and join token
/// kept). A server that cannot be reached, or answers 503, is left for the next one
/// of the list at the next try; one that answers is remembered.
async fn send(
    sh: &Shared,
    path: &str,
    build: impl Fn(String) -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, reqwest::Error> {
    let mut base = sh.servers.current();
    let mut hops = 0;
    loop {
        let r = match build(format!("{base}{path}")).send().await {
            Ok(r) => r,
            Err(e) => {
                sh.servers.skip();
                return Err(e);
            }
        };
        if r.status() == StatusCode::TEMPORARY_REDIRECT && hops < 4 {
            let to = r
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(gpusched_wire::servers::origin_of);
            if let Some(origin) = to {
                hops += 1;
                base = origin;
                continue;
            }
        }
        if r.status() == StatusCode::SERVICE_UNAVAILABLE {
            sh.servers.skip();
        } else {
            sh.servers.answered(&base);
        }
        return Ok(r);
    }
}

/// Whether a desired state of `epoch` may steer this agent: not if it is older than an
/// epoch already seen (a deposed leader's). Records the highest seen.
fn accept_epoch(seen: &AtomicU64, epoch: u64) -> bool {
    let before = seen.fetch_max(epoch, Ordering::SeqCst);
    epoch >= before
}

/// The advertised address: the flag's, else the local address of this host's route
/// to the server, looked up once (again at the next registration if it failed).
async fn advertised(sh: &Shared) -> Option<String> {
    if let Some(a) = sh
        .advertise
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
    {
        return Some(a);
    }
    match crate::route::local_addr_towards(&sh.servers.current()).await {
        Ok(ip) => {
            let addr = ip.to_string();
            tracing::info!(
                "advertising {addr} to other nodes (the address of the route to the server; \
                 --advertise-addr overrides it)"
            );
            sh.launcher.set_advertise_addr(&addr);
            *sh.advertise.lock().unwrap_or_else(|p| p.into_inner()) = Some(addr.clone());
            Some(addr)
        }
        Err(e) => {
            tracing::warn!(
                "cannot tell which address other nodes reach this one at ({e}); pass \
                 --advertise-addr ADDR for multi-node jobs"
            );
            None
        }
    }
}

/// The server answered a request sent at `sent`: the lease counts from then (the latest
/// such time wins; an answer to an older request does not move it back).
fn heard(sh: &Shared, sent: Instant) {
    let mut last = sh.last_contact.lock().unwrap_or_else(|p| p.into_inner());
    if sent > *last {
        *last = sent;
    }
}

/// Long-polls the desired state and reconciles, until the server forgets the node.
async fn poll_loop(sh: &Shared, instance: &str, poll_wait: Duration) {
    let mut gen = u64::MAX; // never equal: the first poll answers at once
    let mut backoff = Backoff::new();
    let mut cancelled_unseen = BTreeSet::new();
    loop {
        // Acknowledged before this request is sent: the answer cannot list them.
        let acked_before = sh.launcher.records().ack_mark();
        let gen_s = gen.to_string();
        let req = |url: String| {
            sh.http
                .get(url)
                .query(&[
                    ("node", sh.cfg.name.as_str()),
                    ("instance", instance),
                    ("gen", &gen_s),
                ])
                .timeout(poll_wait + Duration::from_secs(10))
        };
        // The lease counts from when the request left: the server counts from when it
        // arrived, never earlier (`fence_after`).
        let sent = Instant::now();
        match send(sh, "/api/agent/poll", req).await {
            Ok(r) if r.status() == StatusCode::CONFLICT => return,
            Ok(r) if r.status().is_success() => match r.json::<Desired>().await {
                Ok(d) if !accept_epoch(&sh.max_epoch, d.epoch) => {
                    tracing::warn!(
                        epoch = d.epoch,
                        seen = sh.max_epoch.load(Ordering::SeqCst),
                        server = %sh.servers.current(),
                        "refused a desired state from an older leader epoch than one already \
                         seen (a deposed leader); asking another server"
                    );
                    sh.servers.skip();
                }
                Ok(d) => {
                    backoff.reset();
                    heard(sh, sent);
                    gen = d.gen;
                    reconcile(sh, &d, &mut cancelled_unseen);
                    sh.launcher.records().forget_acked_before(acked_before);
                    sh.followers.forget_acked_before(acked_before);
                    continue;
                }
                Err(e) => tracing::warn!("unreadable poll answer: {e}"),
            },
            Ok(r) => {
                let status = r.status();
                tracing::warn!(
                    "poll refused ({status}): {}",
                    r.text().await.unwrap_or_default()
                );
            }
            Err(e) => backoff.note(&sh.servers.shown(), &e, sh.cfg.ca_cert.as_deref()),
        }
        backoff.sleep().await;
    }
}

/// Makes the node run what the server wants: starts new attempts, stops cancelled or
/// no longer wanted ones. Attempts seen before are never started again.
fn reconcile(sh: &Shared, d: &Desired, cancelled_unseen: &mut BTreeSet<AttemptRef>) {
    // A queued attempt is wanted too: it may have started here the moment the one ahead
    // of it ended, before the server heard.
    let wanted: BTreeSet<AttemptRef> = d
        .run
        .iter()
        .chain(d.queued.iter().map(|q| &q.launch))
        .map(|l| l.attempt_ref())
        .collect();
    let cancel: BTreeSet<AttemptRef> = d.cancel.iter().copied().collect();
    // Only what the server still lists needs remembering (the set grew with every
    // cancelled job before); an older answer listing one again at worst repeats an end
    // the server ignores.
    cancelled_unseen.retain(|a| {
        wanted.contains(a)
            || cancel.contains(a)
            || d.preempt
                .iter()
                .any(|p| p.job == a.job && p.attempt == a.attempt)
    });
    for launch in &d.run {
        if sh.launcher.seen(launch.attempt_ref()) {
            continue;
        }
        // Spawn latency counts the slice's preparation (a MIG instance may be created).
        let began = Instant::now();
        let launch = match sh.slices.prepare(launch) {
            Ok(l) => l,
            Err(message) => {
                tracing::error!(
                    job = launch.job,
                    attempt = launch.attempt,
                    "cannot start: {message}"
                );
                // Lost, not failed: the node could not give the slice; the server requeues.
                if cancelled_unseen.insert(launch.attempt_ref()) {
                    sh.outbox.push(RunEvent {
                        job: launch.job,
                        attempt: launch.attempt,
                        at_ms: now_ms(),
                        event: RunEventKind::Ended {
                            outcome: Outcome::Lost { message },
                            usage: None,
                        },
                    });
                }
                continue;
            }
        };
        start(sh, &launch, began);
    }
    // What is queued behind attempts here; those whose attempt ahead already ended by
    // itself start now.
    for launch in sh.followers.set(&d.queued, |a| sh.launcher.seen(a)) {
        start(sh, &launch, Instant::now());
    }
    reserve_ports(sh, d);
    let running: BTreeSet<AttemptRef> = sh.launcher.running().into_iter().collect();
    for a in &cancel {
        if running.contains(a) {
            sh.launcher.cancel(*a);
        } else if !sh.launcher.seen(*a) && cancelled_unseen.insert(*a) {
            // Cancelled before it reached us: it never runs; say so.
            sh.outbox.push(RunEvent {
                job: a.job,
                attempt: a.attempt,
                at_ms: now_ms(),
                event: RunEventKind::Ended {
                    outcome: Outcome::Cancelled,
                    usage: None,
                },
            });
        }
    }
    let mut preempting = BTreeSet::new();
    for p in &d.preempt {
        let a = AttemptRef {
            job: p.job,
            attempt: p.attempt,
        };
        preempting.insert(a);
        if running.contains(&a) {
            sh.launcher
                .preempt(a, p.signal, Duration::from_secs(p.grace_s));
        } else if !sh.launcher.seen(a) && cancelled_unseen.insert(a) {
            // Preempted before it reached us: it never ran; the server requeues it.
            sh.outbox.push(RunEvent {
                job: a.job,
                attempt: a.attempt,
                at_ms: now_ms(),
                event: RunEventKind::Ended {
                    outcome: Outcome::Preempted,
                    usage: None,
                },
            });
        }
    }
    for a in running.difference(&wanted) {
        if !cancel.contains(a) && !preempting.contains(a) {
            tracing::info!(
                job = a.job,
                attempt = a.attempt,
                "no longer wanted by the server; stopping it"
            );
            sh.launcher.cancel(*a);
        }
    }
}

/// Starts one attempt (`began`: when its start began, for the spawn latency).
fn start(sh: &Shared, launch: &gpusched_wire::Launch, began: Instant) {
    match sh.launcher.start(launch, &sh.cfg.gpus) {
        Ok(()) if sh.launcher.running().contains(&launch.attempt_ref()) => {
            sh.metrics.spawned(began.elapsed().as_secs_f64());
            sh.launched_gpus
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(launch.attempt_ref(), launch.gpus.clone());
        }
        Ok(()) => {}
        Err(e) => tracing::error!(
            job = launch.job,
            attempt = launch.attempt,
            "cannot start: {e}"
        ),
    }
}

/// Starts the attempts queued behind others as those end (`follow.rs`), in the order
/// they come. On the task that runs the session (the main thread for `gpusched agent`),
/// like every start.
async fn follow_loop(sh: Arc<Shared>, mut next: mpsc::UnboundedReceiver<gpusched_wire::Launch>) {
    while let Some(launch) = next.recv().await {
        if sh.followers.stopped() || sh.launcher.seen(launch.attempt_ref()) {
            continue;
        }
        start(&sh, &launch, Instant::now());
    }
}

/// Holds a port for each gang whose first part runs here and reports it
/// (`PortReserved`, through the outbox like every event); a repeated order reports the
/// same port. Ports no longer asked for (the attempt started, was cancelled, or left
/// the desired state) are let go.
fn reserve_ports(sh: &Shared, d: &Desired) {
    let asked: BTreeSet<AttemptRef> = d
        .reserve_ports
        .iter()
        .copied()
        .filter(|a| !sh.launcher.seen(*a))
        .collect();
    for a in sh.launcher.ports().retain(|a| asked.contains(&a)) {
        tracing::debug!(
            job = a.job,
            attempt = a.attempt,
            "port released: no longer asked for"
        );
    }
    if asked.is_empty() {
        return;
    }
    let addr = sh.launcher.advertise_addr();
    let pending = sh.outbox.snapshot();
    for a in asked {
        let port = match sh.launcher.ports().reserve(a, &addr) {
            Ok(port) => port,
            Err(e) => {
                // The server asks again at the next poll.
                tracing::warn!(
                    job = a.job,
                    attempt = a.attempt,
                    "cannot reserve MASTER_PORT: {e}"
                );
                continue;
            }
        };
        let event = RunEventKind::PortReserved { port };
        let queued = pending
            .iter()
            .any(|e| e.job == a.job && e.attempt == a.attempt && e.event == event);
        if !queued {
            sh.outbox.push(RunEvent {
                job: a.job,
                attempt: a.attempt,
                at_ms: now_ms(),
                event,
            });
        }
    }
}

/// Sends the outbox whenever it grows, until acknowledged.
async fn reporter(
    sh: Arc<Shared>,
    mut wake: watch::Receiver<u64>,
    mut instance: watch::Receiver<String>,
    rereg: mpsc::UnboundedSender<()>,
) {
    let mut backoff = Backoff::new();
    // When the last report went out: routine events wait for the next interval.
    let mut last_sent: Option<Instant> = None;
    loop {
        let events: Vec<RunEvent> = sh.outbox.snapshot();
        let inst = instance.borrow().clone();
        let due = sh.telemetry.due();
        if (events.is_empty() && !due) || inst.is_empty() {
            tokio::select! {
                r = wake.changed() => if r.is_err() { return },
                r = instance.changed() => if r.is_err() { return },
            }
            continue;
        }
        let wait = last_sent
            .map(|t| ROUTINE_REPORT_EVERY.saturating_sub(t.elapsed()))
            .filter(|w| !w.is_zero() && !due && !sh.outbox.urgent());
        if let Some(wait) = wait {
            // Only routine events: let more gather, unless an urgent one comes.
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                r = wake.changed() => if r.is_err() { return },
            }
            continue;
        }
        last_sent = Some(Instant::now());
        // The ends it carries are durable before the server hears of them.
        sync_journal(&sh).await;
        let (telemetry, sent) = sh.telemetry.snapshot().unzip();
        let body = Report {
            node: sh.cfg.name.clone(),
            instance: inst,
            events: events.clone(),
            telemetry,
            leaving: false,
        };
        let req = |url: String| {
            sh.http
                .post(url)
                .json(&body)
                .timeout(Duration::from_secs(30))
        };
        match send(&sh, "/api/agent/report", req).await {
            Ok(r) if r.status().is_success() => {
                backoff.reset();
                acknowledge(&sh, &events);
                sh.telemetry.acknowledged(sent.as_ref(), Instant::now());
                sh.metrics.reported(!events.is_empty());
                continue;
            }
            Ok(r) if r.status() == StatusCode::CONFLICT => {
                let _ = rereg.send(());
                // Registration carries the outbox; wait for the new instance.
                let _ = instance.changed().await;
                continue;
            }
            Ok(r) => {
                let status = r.status();
                tracing::warn!(
                    "report refused ({status}): {}",
                    r.text().await.unwrap_or_default()
                );
            }
            Err(e) => backoff.note(&sh.servers.shown(), &e, sh.cfg.ca_cert.as_deref()),
        }
        backoff.sleep().await;
    }
}

/// Samples the GPUs every `interval` on a blocking thread (NVML calls block), hands
/// the readings to the metrics and the telemetry, and wakes the reporter when a report
/// is due.
async fn sample_loop(sh: Arc<Shared>, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let busy = busy_gpus(&sh);
        let began = Instant::now();
        let pass = {
            let sh = sh.clone();
            tokio::task::spawn_blocking(move || {
                sh.cfg.control.sample(&sh.cfg.gpus, &busy, now_ms())
            })
        };
        let readings = match pass.await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("a GPU telemetry pass failed: {e}");
                continue;
            }
        };
        sh.metrics.observe(&readings, began.elapsed().as_secs_f64());
        if sh.telemetry.record(&readings, Instant::now()) {
            sh.outbox.wake.send_modify(|n| *n += 1);
        }
    }
}

/// The GPUs running attempts hold now.
fn busy_gpus(sh: &Shared) -> BTreeSet<u32> {
    let running: BTreeSet<AttemptRef> = sh.launcher.running().into_iter().collect();
    let mut launched = sh.launched_gpus.lock().unwrap_or_else(|p| p.into_inner());
    launched.retain(|a, _| running.contains(a));
    launched.values().flatten().copied().collect()
}

/// Makes the journal durable (the outcomes appended since the last sync) on a blocking
/// thread, if anything is left to sync: once per report, not once per job. A failure is
/// logged; the report still goes (the outcome is in the journal, only not yet synced).
async fn sync_journal(sh: &Shared) {
    if !sh.launcher.records().unsynced() {
        return;
    }
    let dir = sh.launcher.records().clone();
    match tokio::task::spawn_blocking(move || dir.sync()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::error!("cannot sync the agent's journal: {e}"),
        Err(e) => tracing::error!("cannot sync the agent's journal: {e}"),
    }
}

/// Drops acknowledged events from the outbox and marks ended attempts acked on disk.
fn acknowledge(sh: &Shared, sent: &[RunEvent]) {
    if sent.is_empty() {
        return;
    }
    sh.outbox.remove(sent);
    for e in sent {
        if let RunEventKind::Ended { .. } = e.event {
            let a = AttemptRef {
                job: e.job,
                attempt: e.attempt,
            };
            sh.launched_gpus
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&a);
            sh.followers.acked(a, sh.launcher.records().ack_mark());
            if !sh.launcher.seen(a) {
                continue; // cancelled before it arrived: no directory to mark
            }
            if let Err(err) = sh.launcher.mark_acked(a) {
                tracing::warn!(job = e.job, "cannot mark the attempt acknowledged: {err}");
            }
        }
    }
}

/// Sweeps ended jobs' logs and expired checkpoint directories on a timer (see
/// [`crate::retention::Policy::sweep_every`]; the first sweep at start).
async fn retention_loop(sh: Arc<Shared>) {
    // Even with both limits off, the count bound (`MAX_ENDED_WITH_LOGS`) applies.
    let policy = sh.cfg.retention;
    let mut tick = tokio::time::interval(policy.sweep_every());
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let dir = sh.launcher.records().clone();
        let swept =
            tokio::task::spawn_blocking(move || crate::retention::sweep(&dir, &policy, now_ms()))
                .await;
        match swept {
            Ok(s) if s.attempts > 0 || s.checkpoint_dirs > 0 => tracing::info!(
                attempts = s.attempts,
                bytes = s.bytes,
                checkpoint_dirs = s.checkpoint_dirs,
                "log retention removed the logs of ended jobs"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!("a log retention sweep failed: {e}"),
        }
    }
}

/// `http://ADDR` of the log listener; a wildcard address (0.0.0.0) is replaced by the
/// host name, which is what the server can reach.
fn default_log_url(addr: SocketAddr) -> String {
    if !addr.ip().is_unspecified() {
        return format!("http://{addr}");
    }
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".into());
    format!("http://{host}:{}", addr.port())
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;

/// Why the server at `server` could not be reached (`chain`: the request's error with its
/// causes, where a refused certificate is named), and for a refused certificate what to
/// give the agent instead.
fn unreachable(server: &str, chain: &str, ca_cert: Option<&std::path::Path>) -> String {
    match crate::ca::certificate_advice(server, chain, ca_cert) {
        Some(advice) => format!("cannot reach the server: {advice}; retrying"),
        None => format!("cannot reach the server at {server} ({chain}); retrying"),
    }
}

/// 100 ms doubling to 2 s; logs the first failure of a run of them, then every 10th.
struct Backoff {
    delay: Duration,
    failures: u32,
}

impl Backoff {
    fn new() -> Self {
        Backoff {
            delay: Duration::from_millis(100),
            failures: 0,
        }
    }
    fn reset(&mut self) {
        *self = Backoff::new();
    }
    fn note(&mut self, server: &str, e: &reqwest::Error, ca_cert: Option<&std::path::Path>) {
        if self.failures.is_multiple_of(10) {
            let chain = crate::ca::error_chain(e);
            tracing::warn!("{}", unreachable(server, &chain, ca_cert));
        }
        self.failures += 1;
    }
    async fn sleep(&mut self) {
        tokio::time::sleep(self.delay).await;
        self.delay = (self.delay * 2).min(Duration::from_secs(2));
    }
}

#[cfg(test)]
mod epoch_tests {
    use super::*;

    #[test]
    fn desired_state_of_an_older_epoch_is_refused() {
        let seen = AtomicU64::new(0);
        // A server from before leader election says epoch 0: accepted while nothing
        // newer was seen.
        assert!(accept_epoch(&seen, 0));
        assert!(accept_epoch(&seen, 3));
        assert!(accept_epoch(&seen, 3));
        // The deposed leader of epoch 2 (woken up after a takeover) is refused, and
        // refusing it does not lower what was seen.
        assert!(!accept_epoch(&seen, 2));
        assert!(!accept_epoch(&seen, 0));
        assert_eq!(seen.load(Ordering::SeqCst), 3);
        assert!(accept_epoch(&seen, 4));
    }
}

#[cfg(test)]
mod refusal_tests {
    use super::*;

    #[test]
    fn a_malformed_registration_is_final_and_what_may_change_is_retried() {
        assert!(refusal_is_final(StatusCode::BAD_REQUEST));
        assert!(refusal_is_final(StatusCode::UNPROCESSABLE_ENTITY));
        for retried in [
            StatusCode::UNAUTHORIZED,
            StatusCode::FORBIDDEN,
            StatusCode::REQUEST_TIMEOUT,
            StatusCode::CONFLICT,
            StatusCode::TOO_MANY_REQUESTS,
            StatusCode::SERVICE_UNAVAILABLE,
            StatusCode::INTERNAL_SERVER_ERROR,
        ] {
            assert!(!refusal_is_final(retried), "{retried}");
        }
    }
}
