//! `gpusched server`: the control plane alone (agents join over HTTP).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args as ClapArgs;
use gpusched_core::PolicyKind;
use gpusched_server::{Limits, ServerConfig};

use super::fmt::parse_duration;

#[derive(ClapArgs, Debug, Clone)]
pub struct ServerArgs {
    /// The server's files: its socket, the agents' join token and, by default, the
    /// database (default: ~/.local/share/gpusched).
    #[arg(long, env = "GPUSCHED_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Where the state is stored: sqlite:PATH (default: sqlite:DATA_DIR/gpusched.db) or
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE (docs/postgres.md).
    #[arg(
        long,
        env = "GPUSCHED_STORE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub store: Option<String>,
    /// Address to listen on.
    #[arg(long, default_value_t = SocketAddr::from(([127, 0, 0, 1], gpusched_wire::DEFAULT_PORT)))]
    pub listen: SocketAddr,
    /// How clients and agents reach this server (e.g. https://sched2.example:8420);
    /// followers send requests here while this server leads. Default: http(s)://LISTEN.
    #[arg(long, value_name = "URL")]
    pub advertise_url: Option<String>,
    /// The leader lease: renewed every third of it; a leader that cannot renew steps
    /// down before it runs out, and another server leads once it has (see
    /// docs/failover.md).
    #[arg(long, default_value = "4s", value_name = "DURATION")]
    pub lease: String,
    /// The agents' join token (default DATA_DIR/join-token, made on first start). Give
    /// every server of a cluster the same file, so agents join whichever leads.
    #[arg(long, value_name = "FILE")]
    pub join_token_file: Option<PathBuf>,
    /// Queue order: fifo, priority, sjf, drf, backfill, fairtree (Slurm's Fair Tree over
    /// the queue file's accounts, docs/accounts.md), edf-backfill (deadlines without
    /// preemption, docs/deadlines.md), or a preemptive one: srtf (shortest remaining
    /// time), srsf (remaining time x GPUs), tiresias (least attained service), blend
    /// (predicted run times weighed by how sure they are, least attained service
    /// without one), edf (earliest deadline first) or rr (turns of --quantum);
    /// preemption sends --preempt-signal and requeues the job.
    #[arg(long, default_value = "fifo")]
    pub policy: String,
    /// With --policy tiresias: the attained GPU-service (GPUs x run time) at which a job
    /// drops to the next queue, one per queue but the last (e.g. 1h,4h).
    #[arg(long, value_name = "DURATIONS", default_value = "3250s,7200s")]
    pub las_limits: String,
    /// With --policy srtf, srsf or blend: the starvation guard: a job that has run
    /// and then waited K times the service it attained since its last promotion is
    /// promoted (it ranks by its service since then, least attained service restarted);
    /// 0 turns it off. Default 0 (off) for every policy.
    #[arg(long, value_name = "K")]
    pub promote_after: Option<f64>,
    /// With --policy rr: how long a job runs before it makes way for one that waits
    /// (through the checkpoint contract). Keep it many times your jobs' checkpoint and
    /// restart time; --min-runtime protects each turn's start.
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub quantum: String,
    /// With --policy rr: a turn lasts at least this many times the slowest checkpoint
    /// of the last 32 preemptions (from the checkpoint signal to the job's exit), so
    /// slicing never spends most of a GPU's time saving; 0 takes --quantum as given.
    #[arg(long, value_name = "X", default_value_t = 10.0)]
    pub quantum_floor: f64,
    /// Take turns of --quantum under fifo, priority, sjf, srtf, srsf or blend: while
    /// jobs wait, a job that has run its turn is stopped through the checkpoint contract,
    /// and the waiting jobs take the GPUs in the policy's order (docs/preemption.md).
    #[arg(long)]
    pub time_slice: bool,
    /// A node whose agent is silent this long is unreachable: nothing new is placed on
    /// it, and its jobs are kept (they may still run) until the node lease ends.
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub heartbeat_timeout: String,
    /// The node lease: a node whose agent is silent this long (or that has not
    /// registered this long after the server started) has its jobs declared lost and
    /// requeued; the agent stops them itself once the server has been silent this long.
    /// Long enough that a server restart or upgrade kills nothing; short enough that a
    /// dead node's jobs do not wait too long to run elsewhere (docs/live-cluster.md).
    #[arg(long, default_value = "5m", value_name = "DURATION")]
    pub node_lease: String,
    /// The longest the server holds a `wait` request before answering with the job as it
    /// is (clients ask again); shorter than the idle timeout of a proxy in front of it.
    #[arg(long, default_value = "300s", value_name = "DURATION")]
    pub max_wait: String,
    /// The most TCP connections open at once (fewer where the open-files limit is
    /// lower); more wait in the kernel's queue until one closes. A connection idle for
    /// --max-wait plus a minute is closed. The Unix socket has a share of its own.
    #[arg(long, default_value_t = 4096, value_name = "N",
          value_parser = clap::value_parser!(u32).range(16..))]
    pub max_connections: u32,
    /// Worker threads of the server's runtime (default: one per CPU). One costs less
    /// CPU per job (no hand-offs between workers: about a fifth less per array task on
    /// 2 cores, docs/benchmarks-log.md (y)), but then a long scheduling pass or a large
    /// listing holds up everything else, the leader lease's renewal included.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Jobs whose run time is estimated (a walltime, or a prediction from the cluster's
    /// history) at most this long wait on a busy node behind a running job of their kind
    /// (same user, queue and shape) and start the moment it ends, without a round of the
    /// server in between. Only jobs at the head of the queue follow, so none passes
    /// another. 0s: never.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub follow_under: String,
    /// With --follow-under: at most this many jobs wait behind one running job. A job
    /// ranked higher that comes later waits for at most this many such jobs more.
    #[arg(long, default_value_t = 4, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub follow_depth: u32,
    /// Requeues of a job whose node was lost (a job may set its own).
    #[arg(long, default_value_t = 3)]
    pub max_retries: u32,
    /// Time between SIGTERM and SIGKILL when a job is stopped.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub grace: String,
    /// With --policy drf: remember past use with this half-life (e.g. 7d), so a tenant
    /// that used the cluster a lot recently waits behind one that did not. (`fairtree`
    /// takes its half-life from the queue file's `[fairshare]` table.)
    #[arg(long, value_name = "DURATION")]
    pub usage_half_life: Option<String>,
    /// Preemption: time a job has between the checkpoint signal and being stopped.
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub preempt_grace: String,
    /// Preemption: the signal asking a job to checkpoint (USR1, USR2, TERM, INT, HUP).
    #[arg(long, default_value = "USR1")]
    pub preempt_signal: String,
    /// A job that (re)started less than this ago is not preempted (no preemption loops).
    #[arg(long, default_value = "10m", value_name = "DURATION")]
    pub min_runtime: String,
    /// Elastic jobs (docs/elastic.md): what a resize costs them (a checkpoint and a
    /// restart). A running job grows only when its remaining time, where known, saves
    /// twice this, and not within 10 times this of its start.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub resize_cost: String,
    /// Where shares of one GPU go: fgd (fragmentation gradient descent, keeps whole
    /// GPUs free for the jobs that need them), best-fit, worst-fit, fgd-pack, fgd-coarse.
    #[arg(long, default_value = "fgd", value_name = "STRATEGY")]
    pub share_placement: String,
    /// FGD's idea of demand when it places a share: the jobs submitted within this
    /// window (e.g. 1h, 30m; 0s: only the jobs waiting or running now), whole-GPU jobs
    /// included.
    #[arg(long, default_value = "1h", value_name = "DURATION")]
    pub share_demand_window: String,
    /// Queue file (TOML: quotas, limits, weights, who may use each); SIGHUP reloads it.
    #[arg(long, value_name = "FILE")]
    pub queues: Option<PathBuf>,
    /// Where nodes sit (TOML: `[nodes.NAME]` with `switch = "s1"` and `rack = "r1"`),
    /// over what their agents' --switch/--rack say; gangs go under as few switches as
    /// they can. Read at start-up.
    #[arg(long, value_name = "FILE")]
    pub topology: Option<PathBuf>,
    /// PEM certificate chain: serve HTTPS on --listen (with --tls-key).
    #[arg(long, requires = "tls_key", value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert", value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Users see only their own jobs (like Slurm's PrivateData=jobs): others' jobs are
    /// missing from queue, show, wait, cancel and usage, and their GPUs on nodes show
    /// "(another user)". Admins still see everything.
    #[arg(long)]
    pub private_jobs: bool,
    /// A GPU hotter than this (degrees C) is taken out of placement until `gpusched
    /// resume NODE`.
    #[arg(long, value_name = "CELSIUS", default_value_t = 90)]
    pub gpu_temp_limit: u32,
    /// Jobs on a GPU found unhealthy: `finish` (they run on) or `requeue` (preempted
    /// with the checkpoint signal and grace, requeued without using a retry).
    #[arg(long, value_name = "RULE", value_enum, default_value_t = UnhealthyJobs::Finish)]
    pub unhealthy_jobs: UnhealthyJobs,
    /// The cluster's power budget in watts (docs/power.md): no job starts that would
    /// take what the online nodes' GPUs draw at their caps (busy GPUs at their power
    /// cap, idle ones at their idle draw) over it; such jobs wait, their reason saying
    /// so. Without it nothing is held back for power.
    #[arg(long, value_name = "WATTS")]
    pub power_budget: Option<u64>,
    /// Each node's power budget in watts, counted the same way over its own GPUs: a
    /// node's GPUs beyond it take no new work.
    #[arg(long, value_name = "WATTS")]
    pub node_power_budget: Option<u64>,
    /// The power limit every GPU gets, in watts (at most its board power; the agents
    /// set it through NVML, which needs root). Without it GPUs count their board power.
    #[arg(long, value_name = "WATTS")]
    pub gpu_power_cap: Option<u32>,
    /// Consolidation: a node that ran nothing for this long (e.g. 10m) is taken down:
    /// nothing is placed there, and --power-hook is called, until waiting work needs it.
    #[arg(long, value_name = "DURATION")]
    pub consolidate_after: Option<String>,
    /// A command run as `CMD down NODE` when consolidation takes a node down and `CMD up
    /// NODE` when work needs it back (through /bin/sh, one call at a time, never waited
    /// for by the scheduler; failures are logged and counted in gpusched_power_hook_*).
    #[arg(long, value_name = "CMD", requires = "consolidate_after")]
    pub power_hook: Option<String>,
    /// How long a power hook call may run before it is killed and counted as failed.
    #[arg(long, value_name = "DURATION", default_value = "2m")]
    pub power_hook_timeout: String,
    /// Serve GET /metrics (Prometheus) to anyone who can reach --listen, without a
    /// token. Without it, scrapers need a token of the metrics role (`gpusched token
    /// create prometheus --role metrics`) or an admin's. Under --private-jobs the series
    /// name no job and no user either way.
    #[arg(long)]
    pub metrics_public: bool,
    /// Largest request body in bytes (the default holds a batch of 100,000 jobs).
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_body_bytes)]
    pub max_body: usize,
    /// Jobs in one submission.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_batch)]
    pub max_batch: usize,
    /// Bytes of one job's command (its arguments together).
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_command_bytes)]
    pub max_command_bytes: usize,
    /// Bytes of one job's environment (keys and values together).
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_env_bytes)]
    pub max_env_bytes: usize,
    /// Pending jobs one user may have (Slurm's MaxSubmitJobs).
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_pending_per_user)]
    pub max_pending_per_user: usize,
    /// Requests waiting for the server's state task above which users get 503 with
    /// Retry-After (agents are never turned away).
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_inbox)]
    pub max_inbox: usize,
    /// Submissions per second one user may make, sustained (0: no limit); above it 429
    /// with Retry-After. A batch counts once.
    #[arg(long, value_name = "PER_SECOND", default_value_t = Limits::default().submit_rate)]
    pub submit_rate: f64,
    /// Submissions one user may make at once above --submit-rate.
    #[arg(long, value_name = "N", default_value_t = Limits::default().submit_burst)]
    pub submit_burst: f64,
}

/// The default data directory: `$XDG_DATA_HOME/gpusched` or `~/.local/share/gpusched`.
pub fn default_data_dir() -> anyhow::Result<PathBuf> {
    dirs::data_local_dir()
        .map(|d| d.join("gpusched"))
        .context("cannot find a home directory for the data; pass --data-dir")
}

impl ServerArgs {
    pub fn config(&self) -> anyhow::Result<ServerConfig> {
        let data_dir = match &self.data_dir {
            Some(d) => d.clone(),
            None => default_data_dir()?,
        };
        // The SQLite store made it as it created its file; with the store elsewhere
        // (PostgreSQL) the socket and join token still need it.
        std::fs::create_dir_all(&data_dir).with_context(|| {
            format!(
                "cannot create the data directory {}; pass a writable --data-dir",
                data_dir.display()
            )
        })?;
        let mut cfg = ServerConfig::new(data_dir, self.listen);
        cfg.store = self
            .store
            .as_deref()
            .map(gpusched_server::StoreUrl::parse)
            .transpose()?;
        cfg.policy = PolicyKind::parse(&self.policy).with_context(|| {
            format!(
                "unknown policy `{}`; use fifo, priority, sjf, drf, backfill, srtf, srsf, \
                 tiresias, blend, fairtree, edf, edf-backfill or rr",
                self.policy
            )
        })?;
        cfg.las_limits =
            gpusched_server::parse_las_limits(&self.las_limits).map_err(anyhow::Error::msg)?;
        let quantum =
            parse_duration(&self.quantum).map_err(|e| anyhow::anyhow!("--quantum: {e}"))?;
        anyhow::ensure!(quantum >= 1, "--quantum must be at least 1 second, e.g. 1h");
        cfg.rr_quantum = quantum as f64;
        anyhow::ensure!(
            self.quantum_floor.is_finite() && self.quantum_floor >= 0.0,
            "--quantum-floor must be 0 or more (times the slowest checkpoint measured), e.g. 10"
        );
        cfg.rr_quantum_floor = self.quantum_floor;
        if self.time_slice {
            if let Some(why) = cfg.policy.slice_refusal() {
                anyhow::bail!(why);
            }
            cfg.time_slice = true;
        }
        if let Some(a) = self.promote_after {
            anyhow::ensure!(
                a.is_finite() && a >= 0.0,
                "--promote-after must be a number of at least 0"
            );
            cfg.promote_after = Some(a);
        }
        let hb = parse_duration(&self.heartbeat_timeout).map_err(anyhow::Error::msg)?;
        anyhow::ensure!(hb >= 1, "--heartbeat-timeout must be at least 1 second");
        cfg.heartbeat_timeout = std::time::Duration::from_secs(hb);
        let lease = parse_duration(&self.node_lease).map_err(anyhow::Error::msg)?;
        anyhow::ensure!(
            lease >= hb,
            "--node-lease {} is shorter than --heartbeat-timeout {}; the lease counts from \
             the same silence and must be at least as long (e.g. --node-lease 5m)",
            self.node_lease,
            self.heartbeat_timeout
        );
        cfg.node_lease = std::time::Duration::from_secs(lease);
        let max_wait = parse_duration(&self.max_wait).map_err(anyhow::Error::msg)?;
        anyhow::ensure!(
            max_wait >= 1,
            "--max-wait {:?} is under a second; give e.g. 60s (a wait request is held at most that long)",
            self.max_wait
        );
        cfg.max_wait = std::time::Duration::from_secs(max_wait);
        cfg.max_connections = self.max_connections as usize;
        let under = parse_duration(&self.follow_under)
            .map_err(|e| anyhow::anyhow!("--follow-under: {e}"))?;
        cfg.follow = (under > 0).then_some(gpusched_core::live::FollowConfig {
            under: under as f64,
            depth: self.follow_depth,
        });
        cfg.default_max_retries = self.max_retries;
        cfg.grace_s = parse_duration(&self.grace).map_err(anyhow::Error::msg)?;
        cfg.tls = self.tls_cert.clone().zip(self.tls_key.clone());
        cfg.queues_file = self.queues.clone();
        if let Some(path) = &self.topology {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the topology file {}", path.display()))?;
            cfg.topology =
                gpusched_server::parse_topology(path, &text).map_err(anyhow::Error::msg)?;
        }
        cfg.private_jobs = self.private_jobs;
        if let Some(url) = &self.advertise_url {
            anyhow::ensure!(
                (url.starts_with("http://") || url.starts_with("https://"))
                    && url.len() > "https://".len(),
                "--advertise-url {url:?}: give the URL clients reach this server at, e.g. \
                 http://sched1.example:{}",
                gpusched_wire::DEFAULT_PORT
            );
            cfg.advertise_url = Some(url.trim_end_matches('/').to_string());
        }
        let lease = parse_duration(&self.lease).map_err(|e| anyhow::anyhow!("--lease: {e}"))?;
        anyhow::ensure!(
            (2..=600).contains(&lease),
            "--lease must be between 2s and 10m (it is renewed every third of it)"
        );
        cfg.lease = std::time::Duration::from_secs(lease);
        cfg.join_token_file = self.join_token_file.clone();
        cfg.metrics_public = self.metrics_public;
        anyhow::ensure!(
            self.submit_rate.is_finite() && self.submit_rate >= 0.0,
            "--submit-rate must be a number of submissions per second, 0 for no limit"
        );
        anyhow::ensure!(
            self.submit_burst.is_finite() && self.submit_burst >= 1.0,
            "--submit-burst must be at least 1"
        );
        for (flag, v) in [
            ("--max-body", self.max_body),
            ("--max-batch", self.max_batch),
            ("--max-command-bytes", self.max_command_bytes),
            ("--max-pending-per-user", self.max_pending_per_user),
        ] {
            anyhow::ensure!(v >= 1, "{flag} must be at least 1");
        }
        cfg.limits = Limits {
            max_body_bytes: self.max_body,
            max_batch: self.max_batch,
            max_command_bytes: self.max_command_bytes,
            max_env_bytes: self.max_env_bytes,
            max_pending_per_user: self.max_pending_per_user,
            max_inbox: self.max_inbox,
            submit_rate: self.submit_rate,
            submit_burst: self.submit_burst,
        };
        cfg.gpu_temp_limit_c = self.gpu_temp_limit;
        cfg.power = self.power_config()?;
        cfg.unhealthy_jobs = match self.unhealthy_jobs {
            UnhealthyJobs::Finish => gpusched_server::config::UnhealthyJobs::Finish,
            UnhealthyJobs::Requeue => gpusched_server::config::UnhealthyJobs::Requeue,
        };
        cfg.share_placement = gpusched_core::sharing::ShareStrategy::parse(&self.share_placement)
            .map_err(|e| anyhow::anyhow!("--share-placement: {e}"))?;
        cfg.share_demand_window = std::time::Duration::from_secs(
            parse_duration(&self.share_demand_window)
                .map_err(|e| anyhow::anyhow!("--share-demand-window: {e}"))?,
        );
        cfg.preempt_grace = std::time::Duration::from_secs(
            parse_duration(&self.preempt_grace).map_err(anyhow::Error::msg)?,
        );
        cfg.min_runtime = std::time::Duration::from_secs(
            parse_duration(&self.min_runtime).map_err(anyhow::Error::msg)?,
        );
        cfg.resize_cost = std::time::Duration::from_micros(
            gpusched_wire::parse_duration_us(&self.resize_cost)
                .map_err(|e| anyhow::anyhow!("--resize-cost: {e}"))?,
        );
        cfg.preempt_signal = match self.preempt_signal.trim_start_matches("SIG") {
            "USR1" => 10,
            "USR2" => 12,
            "TERM" => 15,
            "INT" => 2,
            "HUP" => 1,
            other => anyhow::bail!("--preempt-signal {other:?}: use USR1, USR2, TERM, INT or HUP"),
        };
        if let Some(h) = &self.usage_half_life {
            let secs = parse_duration(h).map_err(anyhow::Error::msg)?;
            anyhow::ensure!(secs > 0, "--usage-half-life must be above 0");
            anyhow::ensure!(
                cfg.policy == PolicyKind::Drf,
                "--usage-half-life applies to --policy drf only"
            );
            cfg.usage_half_life = Some(std::time::Duration::from_secs(secs));
        }
        Ok(cfg)
    }
}

pub async fn run(args: ServerArgs) -> anyhow::Result<()> {
    let cfg = args.config()?;
    let mut bound = gpusched_server::bind(cfg.clone()).await?;
    let role = match bound.leadership().role() {
        gpusched_server::leader::Role::Leader { epoch } => format!("leading, epoch {epoch}"),
        gpusched_server::leader::Role::Follower { leader: Some(k) } => {
            format!("following {} (epoch {})", k.url, k.epoch)
        }
        gpusched_server::leader::Role::Follower { leader: None } => "following".to_string(),
    };
    eprintln!(
        "gpusched server listening on {} (data in {}, policy {}; {role})",
        bound.url(),
        cfg.data_dir.display(),
        cfg.policy.name()
    );
    let resign = bound.take_resign();
    let r = tokio::select! {
        r = bound.serve(std::future::pending()) => r,
        _ = super::shutdown_signal() => Ok(()),
    };
    // A clean stop hands the lease over at once instead of after it runs out.
    if let Some(resign) = resign {
        resign.resign().await;
    }
    r
}

/// `--unhealthy-jobs`: what happens to the jobs on a GPU found unhealthy.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum UnhealthyJobs {
    /// They run on until they end.
    Finish,
    /// They are preempted (checkpoint signal, grace) and requeued without using a retry.
    Requeue,
}

impl ServerArgs {
    /// The power flags (docs/power.md), each checked with what to write instead.
    fn power_config(&self) -> anyhow::Result<gpusched_server::power::PowerConfig> {
        for (flag, v) in [
            ("--power-budget", self.power_budget),
            ("--node-power-budget", self.node_power_budget),
            ("--gpu-power-cap", self.gpu_power_cap.map(u64::from)),
        ] {
            anyhow::ensure!(
                v != Some(0),
                "{flag} 0 would start nothing: give watts above 0, or leave the flag out"
            );
        }
        let consolidate_after = match &self.consolidate_after {
            None => None,
            Some(d) => {
                let secs =
                    parse_duration(d).map_err(|e| anyhow::anyhow!("--consolidate-after: {e}"))?;
                anyhow::ensure!(secs > 0, "--consolidate-after must be above 0 (e.g. 10m)");
                Some(std::time::Duration::from_secs(secs))
            }
        };
        let timeout = parse_duration(&self.power_hook_timeout)
            .map_err(|e| anyhow::anyhow!("--power-hook-timeout: {e}"))?;
        anyhow::ensure!(
            timeout > 0,
            "--power-hook-timeout must be above 0 (e.g. 2m)"
        );
        let hook = match &self.power_hook {
            Some(cmd) if cmd.trim().is_empty() => {
                anyhow::bail!("--power-hook is empty: give the command to run as CMD down|up NODE")
            }
            Some(cmd) => Some(gpusched_server::power::PowerHook::new(
                cmd.clone(),
                std::time::Duration::from_secs(timeout),
            )),
            None => None,
        };
        Ok(gpusched_server::power::PowerConfig {
            budget_w: self.power_budget,
            node_budget_w: self.node_power_budget,
            gpu_cap_w: self.gpu_power_cap,
            consolidate_after,
            hook,
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::ServerArgs;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        server: ServerArgs,
    }

    fn config(args: &[&str]) -> anyhow::Result<gpusched_server::ServerConfig> {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().to_str().unwrap().to_owned();
        let mut argv = vec!["server", "--data-dir", &data];
        argv.extend_from_slice(args);
        Cmd::try_parse_from(argv).unwrap().server.config()
    }

    #[test]
    fn followers_are_on_by_default_and_off_with_zero() {
        let f = config(&[]).unwrap().follow.expect("on by default");
        assert_eq!((f.under, f.depth), (1.0, 4));
        let f = config(&["--follow-under", "30s", "--follow-depth", "4"])
            .unwrap()
            .follow
            .unwrap();
        assert_eq!((f.under, f.depth), (30.0, 4));
        assert!(config(&["--follow-under", "0s"]).unwrap().follow.is_none());
        let e = config(&["--follow-under", "soon"]).unwrap_err().to_string();
        assert!(e.contains("--follow-under"), "{e}");
    }

    #[test]
    fn threads_are_one_or_more() {
        let parse = |args: &[&str]| {
            let mut argv = vec!["server"];
            argv.extend_from_slice(args);
            Cmd::try_parse_from(argv).map(|c| c.server.threads)
        };
        assert_eq!(parse(&[]).unwrap(), None);
        assert_eq!(parse(&["--threads", "1"]).unwrap(), Some(1));
        let e = parse(&["--threads", "0"]).unwrap_err().to_string();
        assert!(e.contains("--threads") && e.contains("0"), "{e}");
        assert!(parse(&["--threads", "many"]).is_err());
    }

    #[test]
    fn max_wait_is_a_duration_of_a_second_or_more() {
        assert_eq!(config(&[]).unwrap().max_wait.as_secs(), 300);
        assert_eq!(
            config(&["--max-wait", "1m"]).unwrap().max_wait.as_secs(),
            60
        );
        let e = config(&["--max-wait", "0s"]).unwrap_err().to_string();
        assert!(e.contains("--max-wait \"0s\" is under a second"), "{e}");
        assert!(config(&["--max-wait", "soon"]).is_err());
    }
}
