//! How the server runs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use gpusched_core::PolicyKind;

/// The Unix socket's file name inside the data directory.
pub const SOCKET_NAME: &str = "gpusched.sock";

/// The leader lease by default: short enough that a follower leads within about five
/// seconds of a leader's crash (the lease, plus a retry), long enough that a busy
/// machine's stall of a second does not depose a healthy leader.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(4);

/// The node lease by default: long enough that a server restart or an upgrade (minutes)
/// kills no job on any agent; it is also how long a dead node's jobs wait before they are
/// requeued elsewhere.
pub const DEFAULT_NODE_LEASE: Duration = Duration::from_secs(300);

/// The longest a `wait` request is held by default; `gpusched wait` asks for at most a
/// minute at a time and asks again.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(300);

#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The server's own files: the Unix socket, the join token and, unless `store`
    /// says otherwise, the database.
    pub data_dir: PathBuf,
    /// `--store URL`; None: `sqlite:DATA_DIR/gpusched.db`.
    pub store: Option<gpusched_store::StoreUrl>,
    pub listen: SocketAddr,
    /// Silence after which nothing new is placed on a node (it is unreachable).
    pub heartbeat_timeout: Duration,
    /// The node lease: silence after which a node's jobs are declared lost and requeued,
    /// counted from the last request of its agent the server received, or from the
    /// server's start for a node not heard from since. Its agent stops them once the
    /// same span has passed since it sent the last request the server answered, so a
    /// job never runs twice (ARCHITECTURE.md, invariants). At least `heartbeat_timeout`.
    pub node_lease: Duration,
    /// Queue order on the live cluster; `srtf`, `srsf`, `tiresias` and `blend` preempt through
    /// the checkpoint contract (`state/preempt.rs`).
    pub policy: PolicyKind,
    /// `tiresias`: the attained GPU-seconds at which a job drops to the next queue
    /// (`--las-limits`; default 3250, 7200: Tiresias' own).
    pub las_limits: Vec<f64>,
    /// `srtf`, `srsf`, `blend`: the starvation guard (`--promote-after`,
    /// `gpusched_core::policy::PolicyConfig::promote_after`); None: the policy's default.
    pub promote_after: Option<f64>,
    /// `rr`: seconds of a turn (`--quantum`, `PolicyConfig::rr_quantum`).
    pub rr_quantum: f64,
    /// `rr`: a turn lasts at least this many times the slowest checkpoint measured
    /// lately (`--quantum-floor`; `state/checkpoint_cost.rs`); 0: `rr_quantum` as given.
    pub rr_quantum_floor: f64,
    /// Turns of `rr_quantum` under `fifo`, `priority`, `sjf`, `srtf`, `srsf` or `blend`
    /// (`--time-slice`, `PolicyConfig::time_slice`).
    pub time_slice: bool,
    /// Requeues of a job whose node was lost, unless the job says otherwise.
    pub default_max_retries: u32,
    /// Seconds between SIGTERM and SIGKILL when a job is stopped.
    pub grace_s: u64,
    /// The longest `GET /api/jobs/ID/wait` holds a request (`--max-wait`): a proxy in
    /// front of the server that drops idle requests sooner wants it shorter.
    pub max_wait: Duration,
    /// The most TCP connections open at once (`--max-connections`); fewer where the
    /// descriptor limit is lower. The Unix socket has a share of its own.
    pub max_connections: usize,
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
    /// What an elastic job's resize costs (`--resize-cost`; docs/elastic.md).
    pub resize_cost: Duration,
    /// Where shares of one GPU go (`fgd`, `best-fit`, `worst-fit`, ...).
    pub share_placement: gpusched_core::sharing::ShareStrategy,
    /// FGD's target workload for share placement: the jobs submitted within this window
    /// (and every job still waiting or running); `--share-demand-window`.
    pub share_demand_window: Duration,
    /// Slurm's `PrivateData=jobs`: non-admin users see only their own jobs (and
    /// `/metrics` names no job or user).
    pub private_jobs: bool,
    /// `GET /metrics` for anyone (`--metrics-public`); else admins and metrics tokens.
    pub metrics_public: bool,
    /// The event counters and histograms `/metrics` shows (one per server).
    pub metrics: crate::metrics::Metrics,
    pub limits: Limits,
    /// Where nodes sit (`--topology FILE`), over what their agents say.
    pub topology: crate::live_map::Topology,
    /// A GPU hotter than this (degrees C) is unhealthy (`--gpu-temp-limit`).
    pub gpu_temp_limit_c: u32,
    /// The power budget, GPU caps, consolidation and power hook (docs/power.md).
    pub power: crate::power::PowerConfig,
    /// What happens to jobs on a GPU found unhealthy (`--unhealthy-jobs`).
    pub unhealthy_jobs: UnhealthyJobs,
    /// How clients and agents reach this server (`--advertise-url`); what followers
    /// redirect to while it leads. None: `http(s)://LISTEN`.
    pub advertise_url: Option<String>,
    /// The leader lease (`--lease`): renewed every third of it; a leader that could not
    /// renew steps down before it runs out; a follower takes over once it has.
    pub lease: Duration,
    /// The agents' join token file (`--join-token-file`), the same for every server of
    /// a cluster. None: `DATA_DIR/join-token`.
    pub join_token_file: Option<PathBuf>,
    /// Short jobs queued behind running ones of their kind, started by the agent the
    /// moment those end (`--follow-under`, `--follow-depth`; the core's
    /// `live/follow.rs`). None: every start waits for a pass.
    pub follow: Option<gpusched_core::live::FollowConfig>,
}

/// Followers by default: jobs estimated to run at most a second, four behind each
/// running job. A job ranked higher that arrives later waits for at most four such jobs
/// more on a GPU set; a job of a few milliseconds no longer waits a round of the server
/// for its GPU.
pub const DEFAULT_FOLLOW: gpusched_core::live::FollowConfig = gpusched_core::live::FollowConfig {
    under: 1.0,
    depth: 4,
};

/// What happens to the jobs on a GPU found unhealthy.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum UnhealthyJobs {
    /// They run on until they end; nothing new starts on the GPU.
    #[default]
    Finish,
    /// They are requeued through the preemption path (checkpoint signal, grace; no
    /// retry used).
    Requeue,
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
    /// Whether jobs take turns: `rr`, or another policy with `--time-slice`.
    pub fn takes_turns(&self) -> bool {
        self.policy == PolicyKind::Rr || (self.time_slice && self.policy.sliceable())
    }

    pub fn new(data_dir: PathBuf, listen: SocketAddr) -> Self {
        ServerConfig {
            data_dir,
            store: None,
            listen,
            heartbeat_timeout: Duration::from_secs(30),
            node_lease: DEFAULT_NODE_LEASE,
            policy: PolicyKind::Fifo,
            las_limits: vec![3250.0, 7200.0],
            promote_after: None,
            rr_quantum: 3600.0,
            rr_quantum_floor: 10.0,
            time_slice: false,
            default_max_retries: 3,
            grace_s: 10,
            max_wait: DEFAULT_MAX_WAIT,
            max_connections: 4096,
            follow: Some(DEFAULT_FOLLOW),
            unix_socket: None,
            tls: None,
            queues_file: None,
            usage_half_life: None,
            preempt_signal: 10,
            preempt_grace: Duration::from_secs(30),
            min_runtime: Duration::from_secs(600),
            resize_cost: Duration::from_secs(60),
            share_placement: gpusched_core::sharing::ShareStrategy::Fgd,
            share_demand_window: Duration::from_secs(3600),
            private_jobs: false,
            metrics_public: false,
            metrics: Default::default(),
            limits: Limits::default(),
            topology: Default::default(),
            gpu_temp_limit_c: 90,
            power: Default::default(),
            unhealthy_jobs: UnhealthyJobs::Finish,
            advertise_url: None,
            lease: DEFAULT_LEASE,
            join_token_file: None,
        }
    }

    /// Where the store lives.
    pub fn store_url(&self) -> gpusched_store::StoreUrl {
        self.store.clone().unwrap_or_else(|| {
            gpusched_store::StoreUrl::Sqlite(gpusched_store::default_file(&self.data_dir))
        })
    }

    pub fn socket_path(&self) -> PathBuf {
        self.unix_socket
            .clone()
            .unwrap_or_else(|| self.data_dir.join(SOCKET_NAME))
    }

    /// Where the agents' join token is kept (mode 0600).
    pub fn join_token_path(&self) -> PathBuf {
        self.join_token_file
            .clone()
            .unwrap_or_else(|| self.data_dir.join("join-token"))
    }

    /// The node lease in force: never shorter than the heartbeat timeout (the CLI refuses
    /// one that is; a config built in code is held to it here).
    pub fn lease(&self) -> Duration {
        self.node_lease.max(self.heartbeat_timeout)
    }

    /// How long the server holds an agent's poll: a third of the heartbeat timeout, so
    /// a live agent is heard from at least twice per timeout, and at most an eighth of
    /// the node lease. The agent counts its lease from when it sent the last answered
    /// poll, so between two answers its count reaches twice this wait; it must stay well
    /// short of the point where the agent fences (three quarters of the lease at the
    /// least, see the agent's `fence_after`).
    pub fn poll_wait(&self) -> Duration {
        (self.heartbeat_timeout / 3)
            .min(self.lease() / 8)
            .max(Duration::from_millis(50))
    }
}

/// `--las-limits`: ascending attained GPU-service limits (`30m,2h`, or seconds), one
/// per queue but the last. Errors say what to write.
pub fn parse_las_limits(text: &str) -> Result<Vec<f64>, String> {
    let mut out: Vec<f64> = Vec::new();
    for part in text.split(',').map(str::trim) {
        let secs = gpusched_wire::parse_duration(part).map_err(|e| {
            format!("--las-limits {text:?}: {part:?} is not a duration ({e}); write e.g. 30m,2h")
        })?;
        if secs == 0 || out.last().is_some_and(|&l| secs as f64 <= l) {
            return Err(format!(
                "--las-limits {text:?}: limits must be above zero and ascending (each queue's \
                 limit above the one before); write e.g. 30m,2h"
            ));
        }
        out.push(secs as f64);
    }
    Ok(out)
}

/// The topology file: `[nodes.NAME]` tables with `switch` and `rack` labels and
/// `features`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TopologyFile {
    #[serde(default)]
    nodes: std::collections::BTreeMap<String, NodeAt>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeAt {
    switch: Option<String>,
    rack: Option<String>,
    #[serde(default)]
    features: Vec<String>,
}

/// Reads the topology file (`--topology`): where each named node sits, over what its
/// agent's `--switch`/`--rack` say, and features it has beside its agent's `--feature`.
/// A node it names that never registers is harmless.
/// Errors name the file and line and say what to write.
pub fn parse_topology(
    path: &std::path::Path,
    text: &str,
) -> Result<crate::live_map::Topology, String> {
    let shown = path.display();
    let file: TopologyFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        format!(
            "{shown}:{line}: {}; the topology file has one table per node, e.g. \
             `[nodes.gpu01]` with `switch = \"s1\"`, `rack = \"r1\"` and \
             `features = [\"a100\", \"ib\"]`",
            e.message().trim_end()
        )
    })?;
    let mut out = crate::live_map::Topology::new();
    for (name, at) in file.nodes {
        let line = text
            .lines()
            .position(|l| {
                l.contains(&format!("nodes.{name}")) || l.contains(&format!("nodes.\"{name}\""))
            })
            .map_or(1, |i| i + 1);
        for (what, v) in [("switch", &at.switch), ("rack", &at.rack)] {
            if v.as_deref().is_some_and(|v| v.trim().is_empty()) {
                return Err(format!(
                    "{shown}:{line}: node `{name}` has an empty {what}; give it a name or \
                     leave the key out"
                ));
            }
        }
        let features = gpusched_core::eligible::feature_set(at.features.iter().map(String::as_str))
            .map_err(|e| format!("{shown}:{line}: node `{name}`: features: {e}"))?;
        out.insert(
            name,
            crate::live_map::NodePlace {
                location: gpusched_wire::NodeLocation {
                    switch: at.switch,
                    rack: at.rack,
                },
                features,
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_topology_file_places_nodes_and_its_errors_say_where() {
        let t = parse_topology(
            Path::new("t.toml"),
            "[nodes.a]\nswitch = \"s1\"\nrack = \"r1\"\n\n[nodes.b]\nswitch = \"s2\"\n",
        )
        .unwrap();
        assert_eq!(t["a"].location.switch.as_deref(), Some("s1"));
        assert_eq!(t["a"].location.rack.as_deref(), Some("r1"));
        assert_eq!(
            (
                t["b"].location.switch.as_deref(),
                t["b"].location.rack.as_deref()
            ),
            (Some("s2"), None)
        );
        let t = parse_topology(
            Path::new("t.toml"),
            "[nodes.a]\nfeatures = [\"ib\", \"a100\", \"ib\"]\n",
        )
        .unwrap();
        assert_eq!(t["a"].features, ["a100", "ib"]);
        let e =
            parse_topology(Path::new("t.toml"), "\n[nodes.a]\nfeatures = [\"a b\"]\n").unwrap_err();
        assert!(e.starts_with("t.toml:2: node `a`: features: "), "{e}");
        let e = parse_topology(
            Path::new("t.toml"),
            "[nodes.a]\nswitch = \"s1\"\nrak = \"r1\"\n",
        )
        .unwrap_err();
        assert!(e.starts_with("t.toml:3: "), "{e}");
        assert!(e.contains("rak") && e.contains("[nodes.gpu01]"), "{e}");
        let e = parse_topology(Path::new("t.toml"), "[nodes.a]\nswitch = 3\n").unwrap_err();
        assert!(e.starts_with("t.toml:2: "), "{e}");
        let e = parse_topology(Path::new("t.toml"), "\n[nodes.a]\nswitch = \" \"\n").unwrap_err();
        assert!(
            e.starts_with("t.toml:2: ") && e.contains("empty switch"),
            "{e}"
        );
        assert!(parse_topology(Path::new("t.toml"), "").unwrap().is_empty());
    }
}
