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
    /// Slurm's `PrivateData=jobs`: non-admin users see only their own jobs.
    pub private_jobs: bool,
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
            private_jobs: false,
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
