//! `gpusched agent --server URL`: the node agent of one GPU host.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::{Args as ClapArgs, ValueEnum};
use gpusched_agent::gpu::{discover, FakeTopology, GpuBackend, GpuOptions};
use gpusched_agent::session::AgentConfig;
use tokio::sync::watch;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// NVML where the library exists, else the declared GPUs.
    Auto,
    /// NVML or fail.
    Nvml,
    /// Only the GPUs declared with --gpus.
    Declared,
    /// A fake NVML device (for tests): --gpus of --gpu-model, with UUIDs.
    Fake,
}

#[derive(ClapArgs, Debug, Clone)]
pub struct GpuArgs {
    /// GPUs to declare when NVML is not available (shown as "declared").
    #[arg(long)]
    pub gpus: Option<u32>,
    /// Model of the declared GPUs, e.g. A100-SXM4-80GB.
    #[arg(long)]
    pub gpu_model: Option<String>,
    /// Memory of each declared GPU in MiB.
    #[arg(long)]
    pub gpu_mem_mib: Option<u64>,
    /// Where the GPU list comes from.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub gpu_backend: Backend,
    /// Create and destroy MIG instances on this node's MIG GPUs to fit the queue (only
    /// ever on slices no job uses). Without it their existing instances are used.
    #[arg(long)]
    pub mig_dynamic: bool,
    /// This node runs NVIDIA MPS (`nvidia-cuda-mps-control -d`): shares of its GPUs get
    /// MPS limits (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT).
    #[arg(long)]
    pub mps: bool,
    /// With --gpu-backend fake: GPUs in MIG mode and their layout, e.g.
    /// `0:3g.40gb@0+3g.40gb@4,1` (GPU 0 with two instances, GPU 1 empty).
    #[arg(long, value_name = "SPEC")]
    pub fake_mig: Option<String>,
    /// With --gpu-backend fake: how the fake GPUs are linked, `dgx` (every pair through
    /// NVSwitch) or `pcie` (two sockets of 4 GPUs, pairs under one PCIe switch). Real
    /// GPUs report their links through NVML.
    #[arg(long, value_name = "MODEL", value_parser = parse_fake_topology)]
    pub fake_topology: Option<FakeTopology>,
}

fn parse_fake_topology(s: &str) -> Result<FakeTopology, String> {
    s.parse()
}

/// What the node offers besides GPUs.
#[derive(ClapArgs, Debug, Clone)]
pub struct NodeArgs {
    /// A generic counted resource this node offers, NAME=COUNT (repeatable), e.g.
    /// fpga=2: jobs asking `--resource fpga=1` are scheduled here, at most 2 at a time,
    /// and find their count in GPUSCHED_RESOURCE_FPGA. Accounting only: nothing stops
    /// a job from using a device it was not given.
    #[arg(long, value_name = "NAME=COUNT")]
    pub resource: Vec<String>,
    /// Features this node offers, comma-separated or repeated (`--feature a100,nvlink`):
    /// jobs' `--constraint` and the server's partitions select nodes by them. Names are
    /// letters, digits, `_`, `-` and `.` (docs/partitions.md).
    #[arg(long, value_name = "NAME[,NAME...]")]
    pub feature: Vec<String>,
    /// CPUs jobs may reserve here (default: all of the host's): jobs asking --cpus
    /// wait when this is taken. Each job's CPU quota is enforced by its cgroup where
    /// there is one (--cgroup).
    #[arg(long, value_name = "N")]
    pub cpus: Option<u32>,
    /// Memory jobs may reserve here, e.g. 64G (default: the host's MemTotal). Each
    /// job's --mem is its memory limit where it has a cgroup (--cgroup).
    #[arg(long, value_name = "SIZE")]
    pub mem: Option<String>,
}

impl NodeArgs {
    /// The features the node offers, checked, sorted and without repeats.
    pub fn features(&self) -> anyhow::Result<Vec<String>> {
        let items = self.feature.iter().flat_map(|f| f.split(','));
        gpusched_core::eligible::feature_set(items).map_err(|e| anyhow::anyhow!("--feature {e}"))
    }

    /// CPUs, memory (MiB) and generic resources the node offers.
    pub fn offer(&self) -> anyhow::Result<(u32, u64, std::collections::BTreeMap<String, u64>)> {
        let resources = gpusched_wire::resource::parse_all(&self.resource)
            .map_err(|e| anyhow::anyhow!("--resource {e}"))?;
        let cpus = match self.cpus {
            Some(0) => anyhow::bail!("--cpus must be at least 1"),
            Some(n) => n,
            None => std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1),
        };
        let mem = match &self.mem {
            Some(m) => gpusched_wire::parse_mib(m).map_err(|e| anyhow::anyhow!("--mem {e}"))?,
            None => host_mem_mib(),
        };
        Ok((cpus, mem, resources))
    }
}

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// The server, e.g. http://head:6450, or several comma-separated (the agent follows
    /// the leader among them).
    #[arg(long, env = "GPUSCHED_SERVER")]
    pub server: String,
    /// Node name (default: the host name).
    #[arg(long)]
    pub name: Option<String>,
    /// Where job records and logs live (default: ~/.local/share/gpusched/agent-NAME).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Address for serving job logs to the server.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub log_listen: SocketAddr,
    /// URL the server should fetch logs from (default: http://LOG_LISTEN).
    #[arg(long)]
    pub log_url: Option<String>,
    /// The server's join token (the server writes it to DATA_DIR/join-token). Only from
    /// the environment: a command-line flag would show it to every user in `ps`.
    #[arg(skip = std::env::var("GPUSCHED_JOIN_TOKEN").ok())]
    pub join_token: Option<String>,
    /// A file holding the join token.
    #[arg(long)]
    pub join_token_file: Option<PathBuf>,
    /// When the agent runs as root, also run jobs submitted by root (as root). Off by
    /// default: a root agent runs every job as its submitting Unix user.
    #[arg(long)]
    pub allow_root_jobs: bool,
    /// For benchmarks of the server only: run no job at all; every launch is recorded
    /// and reported as started and exited 0 at once, so what is measured is the server
    /// and the protocol, not process starts (HyperQueue's zero-worker mode).
    #[arg(long, hide = true)]
    pub bench_instant_jobs: bool,
    /// PEM certificate (or CA) to trust for an https:// server, besides the system's.
    #[arg(long, env = "GPUSCHED_CA_CERT", value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    #[command(flatten)]
    pub gpu: GpuArgs,
    #[command(flatten)]
    pub node: NodeArgs,
    #[command(flatten)]
    pub place: PlaceArgs,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
    #[command(flatten)]
    pub retention: RetentionArgs,
    #[command(flatten)]
    pub contain: super::agent_contain_args::ContainArgs,
    #[command(flatten)]
    pub image: super::agent_image_args::ImageArgs,
}

/// How long the agent keeps what ended jobs left on the node.
#[derive(ClapArgs, Debug, Clone)]
pub struct RetentionArgs {
    /// Delete an ended job's logs this long after its end, e.g. 7d, 12h; 0 or off keeps
    /// them regardless of age. Checkpoint directories kept in case a job restarts here
    /// go after this long without a change too.
    #[arg(long, value_name = "DURATION", default_value = "7d", value_parser = parse_retention)]
    pub log_retention: Duration,
    /// Keep at most this much of ended jobs' logs on this node, e.g. 10G, 500M; the
    /// oldest ended jobs' logs go first (a running job's never); 0 or off: no limit.
    #[arg(long, value_name = "SIZE", default_value = "10G", value_parser = parse_total)]
    pub log_max_total: u64,
}

impl RetentionArgs {
    pub fn policy(&self) -> gpusched_agent::retention::Policy {
        gpusched_agent::retention::Policy {
            max_age: Some(self.log_retention).filter(|d| !d.is_zero()),
            max_total: Some(self.log_max_total).filter(|n| *n > 0),
        }
    }
}

/// `--log-retention`: a duration; `0` or `off` (zero) for no age limit.
fn parse_retention(s: &str) -> Result<Duration, String> {
    if s.trim() == "off" {
        return Ok(Duration::ZERO);
    }
    gpusched_wire::duration::parse_duration(s)
        .map(Duration::from_secs)
        .map_err(|e| format!("{e}; write e.g. 7d, 12h, or off"))
}

/// `--log-max-total` in bytes: a size (`10G`, `500M`, plain MiB); `0` or `off` (zero)
/// for no limit.
fn parse_total(s: &str) -> Result<u64, String> {
    match s.trim() {
        "off" | "0" => Ok(0),
        t => gpusched_wire::parse_mib(t)
            .map(|mib| mib.saturating_mul(1 << 20))
            .map_err(|e| format!("{e}; or off for no limit")),
    }
}

/// GPU telemetry and the agent's Prometheus metrics.
#[derive(ClapArgs, Debug, Clone)]
pub struct TelemetryArgs {
    /// How often to sample the GPUs (utilisation, memory, temperature, power, energy,
    /// ECC, Xid events) for the server and the metrics, e.g. 5s or 500ms; 0 turns
    /// sampling off. Samples ride on the agent's reports: one report per interval at
    /// most on their own account.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_interval)]
    pub telemetry_interval: Duration,
    /// Serve Prometheus metrics at http://ADDR/metrics: each GPU under DCGM exporter's
    /// names and labels, and the agent's gpusched_agent_* counters. Off by default. No
    /// authentication (like node_exporter): bind it to a management address or
    /// firewall it.
    #[arg(long, env = "GPUSCHED_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
}

/// `5s`, `500ms`, `1m`, or plain seconds.
fn parse_interval(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if let Some(ms) = t.strip_suffix("ms") {
        return ms
            .trim()
            .parse::<u64>()
            .map(Duration::from_millis)
            .map_err(|_| format!("{s:?} is not a duration: write e.g. 5s, 500ms or 0 (off)"));
    }
    gpusched_wire::duration::parse_duration(t)
        .map(Duration::from_secs)
        .map_err(|e| format!("{e}; write e.g. 5s, 500ms or 0 (off)"))
}

/// Where the node is, for multi-node jobs.
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct PlaceArgs {
    /// The address other nodes reach this one at: MASTER_ADDR of jobs whose first part
    /// runs here, and this node's hostfile line (default: the local address of this
    /// host's route to the server; 127.0.0.1 when the server is on loopback).
    #[arg(long, env = "GPUSCHED_ADVERTISE_ADDR", value_name = "ADDR")]
    pub advertise_addr: Option<String>,
    /// The network switch this node hangs off: a gang is kept under as few switches as
    /// possible (the server's --topology file overrides it).
    #[arg(long, env = "GPUSCHED_SWITCH", value_name = "NAME")]
    pub switch: Option<String>,
    /// The rack this node is in.
    #[arg(long, env = "GPUSCHED_RACK", value_name = "NAME")]
    pub rack: Option<String>,
}

impl PlaceArgs {
    /// The advertised address (checked) and the location.
    pub fn place(&self) -> anyhow::Result<(Option<String>, gpusched_wire::NodeLocation)> {
        let label = |flag: &str, v: &Option<String>| -> anyhow::Result<Option<String>> {
            match v.as_deref().map(str::trim) {
                None => Ok(None),
                Some("") => anyhow::bail!("{flag} must not be empty (leave it out instead)"),
                Some(s) if s.chars().any(char::is_whitespace) => {
                    anyhow::bail!("{flag} {s:?} must be one word, without spaces")
                }
                Some(s) => Ok(Some(s.to_string())),
            }
        };
        let addr = label("--advertise-addr", &self.advertise_addr)?;
        if let Some(a) = &addr {
            // An IP address or a host name; a URL or a port here is a common slip.
            if a.contains("://") || (a.parse::<std::net::IpAddr>().is_err() && a.contains(':')) {
                anyhow::bail!(
                    "--advertise-addr {a:?} must be an IP address or a host name, without a \
                     scheme or port (e.g. 10.0.0.5)"
                );
            }
        }
        let location = gpusched_wire::NodeLocation {
            switch: label("--switch", &self.switch)?,
            rack: label("--rack", &self.rack)?,
        };
        Ok((addr, location))
    }
}

/// The host's memory in MiB (`MemTotal` of /proc/meminfo), 0 if it cannot be read.
pub fn host_mem_mib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

pub fn host_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

impl GpuArgs {
    /// Discovers the GPUs of node `node`, printing what the operator should know. Fake
    /// GPUs read their injected faults from `STATE_DIR/fake-faults.toml` and take their
    /// UUIDs from the node's name.
    pub fn discover(
        &self,
        state_dir: &Path,
        node: &str,
    ) -> anyhow::Result<gpusched_agent::gpu::Discovery> {
        let backend = match self.gpu_backend {
            Backend::Auto => GpuBackend::Auto,
            Backend::Nvml => GpuBackend::Nvml,
            Backend::Declared => GpuBackend::Declared,
            Backend::Fake => GpuBackend::Fake {
                count: self.gpus.context("--gpu-backend fake needs --gpus N")?,
                model: self
                    .gpu_model
                    .clone()
                    .unwrap_or_else(|| "NVIDIA A100-SXM4-80GB".into()),
            },
        };
        let opts = GpuOptions {
            backend,
            declared_count: self.gpus,
            declared_model: self.gpu_model.clone(),
            declared_mem_mib: self.gpu_mem_mib,
            mig_dynamic: self.mig_dynamic,
            fake_mig: self.fake_mig.clone(),
            fake_topology: self.fake_topology,
            fake_faults: Some(gpusched_agent::gpu::fake_telemetry::faults_path(state_dir)),
            fake_node: Some(node.to_string()),
        };
        let found = discover(&opts)?;
        for note in &found.notes {
            eprintln!("note: {note}");
        }
        if self.mps
            && !std::path::Path::new(&mps_pipe_dir())
                .join("control")
                .exists()
        {
            eprintln!(
                "note: --mps is set but no MPS control daemon was found at {}/control; start \
                 it with `nvidia-cuda-mps-control -d`, or CUDA runs shares without MPS limits",
                mps_pipe_dir()
            );
        }
        Ok(found)
    }
}

/// Where MPS clients look for the control daemon (NVIDIA's default, or the variable).
fn mps_pipe_dir() -> String {
    std::env::var("CUDA_MPS_PIPE_DIRECTORY").unwrap_or_else(|_| "/tmp/nvidia-mps".into())
}

pub fn config(args: &Args) -> anyhow::Result<AgentConfig> {
    let name = args.name.clone().unwrap_or_else(host_name);
    let state_dir = match &args.state_dir {
        Some(d) => d.clone(),
        None => super::server::default_data_dir()?.join(format!("agent-{name}")),
    };
    // Jobs that run as their submitters pass through it to their own checkpoint
    // directories and hostfiles; nobody but the agent lists it.
    gpusched_server::unlistable_dir(&state_dir, "the agent's state directory", "--state-dir")?;
    let found = args.gpu.discover(&state_dir, &name)?;
    let (cpus, mem_mib, resources) = args.node.offer()?;
    let (advertise_addr, location) = args.place.place()?;
    let name_for_images = name.clone();
    Ok(AgentConfig {
        server: args.server.trim_end_matches('/').to_string(),
        name,
        state_dir,
        gpus: found.gpus,
        control: found.control,
        mps: args.gpu.mps,
        cpus,
        mem_mib,
        resources,
        features: args.node.features()?,
        log_listen: args.log_listen,
        log_url: args.log_url.clone(),
        join_token: join_token(args)?,
        allow_root_jobs: args.allow_root_jobs,
        instant_jobs: args.bench_instant_jobs,
        ca_cert: args.ca_cert.clone(),
        advertise_addr,
        location,
        telemetry_interval: args.telemetry.telemetry_interval,
        metrics_listen: args.telemetry.metrics_listen,
        retention: args.retention.policy(),
        contain: args.contain.config(),
        image: args
            .image
            .runtime(&name_for_images, &args.contain.gpu_device_dir)?,
    })
}

fn join_token(args: &Args) -> anyhow::Result<String> {
    if let Some(t) = &args.join_token {
        return Ok(t.trim().to_string());
    }
    // On the server's own host the default data directory holds it.
    let local = super::server::default_data_dir()
        .ok()
        .map(|d| d.join("join-token"))
        .filter(|p| p.exists());
    let Some(path) = args.join_token_file.as_ref().or(local.as_ref()) else {
        anyhow::bail!(
            "the agent needs the server's join token: --join-token-file PATH (the server \
             writes it to DATA_DIR/join-token) or GPUSCHED_JOIN_TOKEN"
        );
    };
    let t = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the join token from {}", path.display()))?;
    Ok(t.trim().to_string())
}

/// Logs and ignores SIGHUP: the agent has nothing to reload.
fn ignore_sighup() -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hup = signal(SignalKind::hangup()).context("cannot listen for SIGHUP")?;
    tokio::spawn(async move {
        while hup.recv().await.is_some() {
            tracing::warn!("SIGHUP received: the agent has nothing to reload; ignored");
        }
    });
    Ok(())
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let cfg = config(&args)?;
    eprintln!(
        "gpusched agent {} with {}, joining {} (state in {})",
        cfg.name,
        gpusched_wire::count(cfg.gpus.len() as u64, "GPU"),
        cfg.server,
        cfg.state_dir.display()
    );
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        super::shutdown_signal().await;
        eprintln!(
            "stopping: the running jobs get SIGTERM and their grace, then are requeued; \
             signal again to quit at once"
        );
        let _ = tx.send(true);
        // A second signal: quit now; the jobs die with the agent (parent-death signal).
        super::shutdown_signal().await;
        eprintln!("quitting at once");
        std::process::exit(130);
    });
    // SIGHUP (a closed terminal) must not kill the agent and its jobs.
    ignore_sighup()?;
    gpusched_agent::session::run(cfg, rx).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(
        addr: Option<&str>,
        switch: Option<&str>,
    ) -> anyhow::Result<(Option<String>, gpusched_wire::NodeLocation)> {
        PlaceArgs {
            advertise_addr: addr.map(str::to_string),
            switch: switch.map(str::to_string),
            rack: Some("r1".into()),
        }
        .place()
    }

    #[test]
    fn telemetry_intervals_read_as_operators_write_them() {
        assert_eq!(parse_interval("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_interval("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_interval("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_interval("0"), Ok(Duration::ZERO));
        for bad in ["fast", "5x", "-1ms"] {
            let e = parse_interval(bad).unwrap_err();
            assert!(e.contains("500ms"), "{bad}: {e}");
        }
    }

    #[test]
    fn retention_flags_read_as_operators_write_them() {
        let policy = |age: &str, total: &str| {
            RetentionArgs {
                log_retention: parse_retention(age).unwrap(),
                log_max_total: parse_total(total).unwrap(),
            }
            .policy()
        };
        let p = policy("7d", "10G");
        assert_eq!(p.max_age, Some(Duration::from_secs(7 * 86_400)));
        assert_eq!(p.max_total, Some(10 << 30));
        assert_eq!(p, gpusched_agent::retention::Policy::default());
        let p = policy("off", "0");
        assert_eq!((p.max_age, p.max_total), (None, None));
        assert_eq!(policy("0", "500M").max_total, Some(500 << 20));
        assert!(parse_retention("soon").unwrap_err().contains("7d"));
        assert!(parse_total("lots").unwrap_err().contains("16G"));
    }

    #[test]
    fn advertise_address_and_location_are_checked() {
        let (addr, loc) = place(Some("10.0.0.5"), Some("s1")).unwrap();
        assert_eq!(addr.as_deref(), Some("10.0.0.5"));
        assert_eq!(loc.switch.as_deref(), Some("s1"));
        assert_eq!(loc.rack.as_deref(), Some("r1"));
        assert!(place(Some("fe80::1"), None).is_ok());
        assert!(place(Some("gpu-07.lab"), None).is_ok());
        for bad in ["http://10.0.0.5", "10.0.0.5:6450", ""] {
            let e = place(Some(bad), None).unwrap_err().to_string();
            assert!(e.contains("--advertise-addr"), "{e}");
        }
        let e = place(None, Some("a b")).unwrap_err().to_string();
        assert!(e.contains("--switch") && e.contains("one word"), "{e}");
    }
}
