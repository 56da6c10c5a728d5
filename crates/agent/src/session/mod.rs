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
//!
//! One file per task: registration (`register.rs`), the long poll (`poll.rs`) and making
//! its answer so (`reconcile.rs`), the `MASTER_PORT` reservations (`ports.rs`), the
//! outbox and its reporter (`outbox.rs`), the lease that fences jobs when the server is
//! silent (`lease.rs`), checkpoint marks (`checkpoints.rs`), GPU sampling
//! (`sampling.rs`), the retention sweep (`retention.rs`) and the drain at stop
//! (`drain.rs`); `client.rs` sends requests to the servers. This file holds the
//! configuration and wires the tasks together ([`run`]).

mod checkpoints;
mod client;
mod drain;
mod lease;
mod outbox;
mod poll;
mod ports;
mod reconcile;
mod register;
mod retention;
mod sampling;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use gpusched_wire::servers::ServerList;
use gpusched_wire::{AttemptRef, GpuInfo, RunEventKind};
use tokio::sync::{mpsc, watch};

use crate::follow::Followers;
use crate::launcher::{EventSink, Launcher};
use crate::metrics::AgentMetrics;
use crate::slices::SliceSetup;
use crate::telemetry::Telemetry;
use drain::drain;
use lease::{fence_after, guard_lease};
use outbox::{reporter, Outbox};
use poll::poll_loop;
use reconcile::follow_loop;
use register::register;
use retention::retention_loop;
use sampling::sample_loop;

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
    /// Benchmarks of the server only (`--bench-instant-jobs`): no job is run; each
    /// launch is recorded and reported started and exited 0 at once.
    pub instant_jobs: bool,
    /// A PEM certificate (or CA) to trust for an https:// server, besides the system's.
    pub ca_cert: Option<PathBuf>,
    /// The GPU library, for MIG instances.
    pub control: crate::gpu::GpuControl,
    /// The node runs NVIDIA MPS: shares get MPS limits.
    pub mps: bool,
    /// Generic counted resources this node offers (`--resource fpga=2`).
    pub resources: std::collections::BTreeMap<String, u64>,
    /// Features the node offers (`--feature`), which constraints and partitions select by.
    pub features: Vec<String>,
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

struct Shared {
    cfg: AgentConfig,
    http: reqwest::Client,
    /// The servers of `cfg.server`, the one that answered last first.
    servers: ServerList,
    /// The highest leader epoch seen in a desired state: older ones are refused.
    max_epoch: AtomicU64,
    /// The server this agent registered with last takes the compact agent messages
    /// (`Registered::compact`: MessagePack, polls answered with the launches not held).
    compact: std::sync::atomic::AtomicBool,
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
    /// Job steps running here (`crate::steps`).
    steps: crate::steps::Steps,
    /// The GPU power caps set on the server's word (`crate::power`).
    power_caps: crate::power::PowerCaps,
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
                // A replica's port rides with its start (it comes just before it); a
                // readiness change goes at once (gateways route by it).
                RunEventKind::Started { .. } | RunEventKind::Listening { .. } => false,
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
    if cfg.instant_jobs {
        tracing::warn!(
            "--bench-instant-jobs: this agent runs NO job; every launch is reported \
             started and exited 0 at once (for benchmarks of the server only)"
        );
        launcher.set_instant_jobs();
    }
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
        AgentMetrics::new(&cfg.name, &cfg.control.facts(&cfg.gpus))
            .with_collector(crate::job_metrics::JobUsageCollector {
                contain: launcher.contain().clone(),
                node: cfg.name.clone(),
            })
            .with_probe_failures(launcher.probe_failures()),
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
        compact: Default::default(),
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
        steps: Default::default(),
        power_caps: Default::default(),
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
        shared
            .compact
            .store(reg.compact, std::sync::atomic::Ordering::SeqCst);
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

fn random_secret() -> anyhow::Result<String> {
    let mut bytes = [0u8; 24];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| anyhow::anyhow!("the OS random generator failed: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
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

#[cfg(test)]
mod tests;
