//! How the server runs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use gpusched_core::PolicyKind;

/// The Unix socket's file name inside the data directory.
pub const SOCKET_NAME: &str = "gpusched.sock";

#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Where the database lives.
    pub data_dir: PathBuf,
    pub listen: SocketAddr,
    /// Silence after which a node is declared lost and its jobs requeued.
    pub heartbeat_timeout: Duration,
    /// Queue order on the live cluster (non-preemptive policies only, for now).
    pub policy: PolicyKind,
    /// Requeues of a job whose node was lost, unless the job says otherwise.
    pub default_max_retries: u32,
    /// Seconds between SIGTERM and SIGKILL when a job is stopped.
    pub grace_s: u64,
    /// The local socket whose callers are known by uid (default `DATA_DIR/gpusched.sock`).
    pub unix_socket: Option<PathBuf>,
    /// PEM certificate chain and private key: serve HTTPS instead of HTTP on TCP.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The queue file (TOML); reloaded on SIGHUP. None: one open `default` queue.
    pub queues_file: Option<PathBuf>,
    /// `drf`: half-life of remembered usage (None: only current use counts).
    pub usage_half_life: Option<Duration>,
    /// Preemption: the signal that asks a job to checkpoint (default SIGUSR1).
    pub preempt_signal: i32,
    /// Preemption: time a job has to save and exit after the signal.
    pub preempt_grace: Duration,
    /// A job that (re)started less than this ago is not preempted (no preemption loops).
    pub min_runtime: Duration,
    /// Where shares of one GPU go (`fgd`, `best-fit`, `worst-fit`, ...).
    pub share_placement: gpusched_core::sharing::ShareStrategy,
    /// FGD's target workload for share placement: the jobs submitted within this window
    /// (and every job still waiting or running); `--share-demand-window`.
    pub share_demand_window: Duration,
    /// Slurm's `PrivateData=jobs`: non-admin users see only their own jobs.
    pub private_jobs: bool,
    pub limits: Limits,
}

/// What protects the server from one client's mistake or flood. Each refusal names the
/// limit, its value and the server flag that sets it.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Largest request body (`--max-body`).
    pub max_body_bytes: usize,
    /// Jobs in one submission (`--max-batch`).
    pub max_batch: usize,
    /// Bytes of a job's command: its arguments together (`--max-command-bytes`).
    pub max_command_bytes: usize,
    /// Bytes of a job's environment: keys and values together (`--max-env-bytes`).
    pub max_env_bytes: usize,
    /// Pending jobs one user may have (`--max-pending-per-user`; Slurm's MaxSubmitJobs).
    pub max_pending_per_user: usize,
    /// Commands waiting for the state task above which user requests get 503 with
    /// `Retry-After` (`--max-inbox`); the agent protocol is never shed.
    pub max_inbox: usize,
    /// Submissions (requests) per second per user, sustained (`--submit-rate`;
    /// 0: no limit); above it 429 with `Retry-After`.
    pub submit_rate: f64,
    /// Submissions a user may make at once above the sustained rate (`--submit-burst`).
    pub submit_burst: f64,
}

impl Default for Limits {
    /// Generous enough for a 10,000-job batch (about 2 MB of JSON) and 10,000 pending
    /// jobs per user; tight enough that one client cannot exhaust the server's memory.
    fn default() -> Self {
        Limits {
            max_body_bytes: 64 << 20,
            max_batch: 100_000,
            max_command_bytes: 128 << 10,
            max_env_bytes: 128 << 10,
            max_pending_per_user: 100_000,
            max_inbox: 8192,
            submit_rate: 200.0,
            submit_burst: 1000.0,
        }
    }
}

impl ServerConfig {
    pub fn new(data_dir: PathBuf, listen: SocketAddr) -> Self {
        ServerConfig {
            data_dir,
            listen,
            heartbeat_timeout: Duration::from_secs(30),
            policy: PolicyKind::Fifo,
            default_max_retries: 3,
            grace_s: 10,
            unix_socket: None,
            tls: None,
            queues_file: None,
            usage_half_life: None,
            preempt_signal: 10,
            preempt_grace: Duration::from_secs(30),
            min_runtime: Duration::from_secs(600),
            share_placement: gpusched_core::sharing::ShareStrategy::Fgd,
            share_demand_window: Duration::from_secs(3600),
            private_jobs: false,
            limits: Limits::default(),
        }
    }

    pub fn socket_path(&self) -> PathBuf {
        self.unix_socket
            .clone()
            .unwrap_or_else(|| self.data_dir.join(SOCKET_NAME))
    }

    /// Where the agents' join token is kept (mode 0600).
    pub fn join_token_path(&self) -> PathBuf {
        self.data_dir.join("join-token")
    }

    /// How long the server holds an agent's poll: a third of the heartbeat timeout, so
    /// a live agent is heard from at least twice per timeout.
    pub fn poll_wait(&self) -> Duration {
        (self.heartbeat_timeout / 3).max(Duration::from_millis(50))
    }
}

/// The policies the live server can run today. Preemptive ones need the checkpoint
/// contract (SIGUSR1, grace, requeue with service kept) that lands with multi-tenancy.
pub fn check_live_policy(kind: PolicyKind) -> Result<(), String> {
    if kind.preemptive() {
        return Err(format!(
            "policy `{}` preempts running jobs, which the live cluster does not do yet; \
             use one of fifo, priority, sjf, drf, backfill",
            kind.name()
        ));
    }
    Ok(())
}
