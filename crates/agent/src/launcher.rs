//! Runs job attempts as real processes and reports what happens to them.
//!
//! Each attempt runs directly (no shell) in its own process group, with stdin from
//! /dev/null and its output appended to its records (see [`crate::jobdir`]). Stopping an
//! attempt (cancel, walltime) sends SIGTERM to the whole group, waits the launch's grace
//! period for the leader, then SIGKILLs the group; after the leader ends for any reason
//! the group is SIGKILLed so no stragglers keep GPUs busy.
//!
//! Jobs die with the agent: each leader carries a parent-death SIGKILL tied to the
//! thread that started it, the process's main thread or the launcher's forker thread
//! (see `forker`), so killing the agent kills the leaders (and dropping the
//! [`Launcher`] kills those its forker started), and [`Launcher::recover`] in the next
//! life kills what they left and reports the attempt as lost.

mod capture;
mod child;
pub(crate) mod command;
mod contain;
pub mod dist;
mod forker;
mod group;
mod hold;
pub(crate) mod identity;
mod part;
mod running;
mod serve;
mod spawn;
mod spawn_error;
mod supervise;
pub use contain::{Contain, ContainConfig};
pub(crate) use supervise::FENCE_GRACE;

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gpusched_wire::{AttemptRef, GpuInfo, Launch, Outcome, RunEvent, RunEventKind};
use nix::sys::signal::Signal;
use thiserror::Error;
use tokio::runtime::Handle;
use tokio::sync::mpsc::UnboundedSender;

/// Where the launcher reports starts and ends. Called synchronously, so an attempt's
/// `Ended` is delivered before it leaves [`Launcher::running`]: a caller that reads
/// `running()` and then what it was delivered never misses an end.
pub type EventSink = std::sync::Arc<dyn Fn(RunEvent) + Send + Sync>;

/// Written into the checkpoint directory when the job is preempted: the Unix time by
/// which it must have saved and exited.
pub const DEADLINE_FILE: &str = ".preempt_deadline";

/// The file a job touches after saving a checkpoint; its time is reported to the server
/// (least work lost decides who is preempted).
pub const CHECKPOINT_MARK: &str = "checkpoint";

/// Creates the checkpoint directory (kept across attempts) and gives it to the job's
/// user; a stale deadline from an earlier preemption is removed. A new one is an empty
/// directory an earlier job left, when one fits (`spare_dirs.rs`), else made.
fn prepare_checkpoint_dir(
    dir: &Path,
    run_as: Option<&identity::RunAs>,
    spares: &crate::spare_dirs::SpareDirs,
) -> std::io::Result<()> {
    let owner = run_as.map(|who| (who.uid.as_raw(), who.gid.as_raw()));
    if spares.reuse(dir, owner)? {
        // Bare, and already the user's, as a new one would be.
        return Ok(());
    }
    // A new directory is empty; only one kept from an earlier attempt may hold a deadline.
    // Only its owner's (and root's): another user's job has no business in it.
    let made = match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::DirBuilder::new().mode(0o700).create(dir)?;
            true
        }
        Err(e) => return Err(e),
    };
    if made {
        spares.learn(dir);
    } else {
        match std::fs::remove_file(dir.join(DEADLINE_FILE)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    if let Some(who) = run_as {
        nix::unistd::chown(dir, Some(who.uid), Some(who.gid)).map_err(std::io::Error::from)?;
    }
    Ok(())
}

/// An [`EventSink`] that forwards to a channel.
pub fn channel_sink(tx: UnboundedSender<RunEvent>) -> EventSink {
    std::sync::Arc::new(move |e| {
        // The receiver is gone only while the agent shuts down; recovery re-reports ends.
        let _ = tx.send(e);
    })
}

use crate::clock::now_ms;
use crate::jobdir::{JobDir, JobDirError, PidRecord, Stream};
use crate::ports::PortBook;
use forker::Forker;
use group::GroupVerdict;
use running::Running;
use supervise::{supervise, Supervised};

/// The outcome recovery gives an attempt that was running when the agent died.
pub const LOST_ON_RESTART: &str = "the agent restarted while this attempt ran; it was stopped";

#[derive(Debug, Error)]
pub enum LaunchError {
    #[error(transparent)]
    Records(#[from] JobDirError),
    #[error("cannot start the launcher's forker thread: {0}")]
    Thread(std::io::Error),
    #[error("Launcher::start must be called from within a tokio runtime")]
    NoRuntime,
    #[error(
        "attempt {}.{} was received before; an attempt is never started twice",
        .0.job,
        .0.attempt
    )]
    AlreadySeen(AttemptRef),
}

pub struct Launcher {
    /// Whether a root agent may run jobs submitted by root.
    allow_root: bool,
    dir: JobDir,
    events: EventSink,
    running: Running,
    forker: Forker,
    /// Ports held for `MASTER_PORT` until the attempt's processes start.
    ports: PortBook,
    /// Ports held for service replicas' `$PORT` until their processes start: a book of
    /// their own, as a replica with GPUs also gets a `MASTER_PORT` (another number).
    serve_ports: PortBook,
    /// Failed replica probes, for the metrics.
    probe_failures: crate::probe::Failures,
    /// The node's advertised address: `MASTER_ADDR` of its jobs of one node, where
    /// their ports are bound, and their hostfile's line.
    advertise_addr: std::sync::Mutex<String>,
    /// The container runtime of `--image` jobs (`None`: this node runs none).
    images: Option<std::sync::Arc<crate::image::Runtime>>,
    /// Each part's cgroup, limits and cores (none without cgroups).
    contain: std::sync::Arc<Contain>,
    /// The `cgroup.procs` files of each running attempt's cgroup, which its job steps'
    /// processes join too (`crate::steps`); pruned of ended attempts as others start.
    step_cgroups: std::sync::Mutex<std::collections::BTreeMap<AttemptRef, StepCgroup>>,
    /// Benchmarks of the server only: no process is started (`set_instant_jobs`).
    instant: bool,
}

/// The `cgroup.procs` files a job step's process writes itself into.
pub type StepCgroup = Vec<std::sync::Arc<std::os::fd::OwnedFd>>;

impl Launcher {
    /// What this launcher enforces on its jobs, for the server and `nodes`.
    pub fn containment(&self) -> gpusched_wire::contain::Containment {
        gpusched_wire::contain::Containment {
            image_runtime: self.images.as_ref().map(|rt| rt.describe()),
            ..self.contain.containment()
        }
    }

    /// Contains every part it starts from now on in a cgroup of `contain`'s (a new
    /// launcher contains nothing: limits are accounting only).
    pub fn with_contain(mut self, contain: Contain) -> Self {
        self.contain = std::sync::Arc::new(contain);
        self
    }

    /// The node's containment (for the metrics).
    pub fn contain(&self) -> &std::sync::Arc<Contain> {
        &self.contain
    }

    /// A launcher keeping its attempt records under `jobs_root` (the agent uses
    /// `<state dir>/jobs`, created if missing) and sending every attempt's `Started` and
    /// `Ended` on `events`. Dropping it kills the leaders of its running jobs.
    pub fn new(jobs_root: &Path, events: EventSink) -> Result<Self, LaunchError> {
        Ok(Launcher {
            allow_root: false,
            dir: JobDir::open(jobs_root)?,
            events,
            running: Running::default(),
            forker: Forker::start().map_err(LaunchError::Thread)?,
            ports: PortBook::default(),
            serve_ports: PortBook::default(),
            probe_failures: Default::default(),
            advertise_addr: std::sync::Mutex::new("127.0.0.1".to_string()),
            images: None,
            contain: std::sync::Arc::new(Contain::none()),
            step_cgroups: Default::default(),
            instant: false,
        })
    }

    /// Runs `--image` jobs with `runtime`; the containers an attempt leaves (a job
    /// killed after its grace kills the runtime's client, not its container) are
    /// removed when it ends, before its end is reported.
    pub fn set_image_runtime(&mut self, runtime: Option<std::sync::Arc<crate::image::Runtime>>) {
        if let Some(rt) = &runtime {
            let (rt, inner) = (rt.clone(), self.events.clone());
            self.events = std::sync::Arc::new(move |ev: RunEvent| {
                if let RunEventKind::Ended { .. } = ev.event {
                    rt.attempt_ended(AttemptRef {
                        job: ev.job,
                        attempt: ev.attempt,
                    });
                }
                inner(ev)
            });
        }
        self.images = runtime;
    }

    /// Runs no job from now on: each attempt is recorded as usual, then reported started
    /// (pid 0, as an allocation with no process is) and exited 0 at once. For
    /// benchmarks that measure the server and the protocol without process starts.
    pub fn set_instant_jobs(&mut self) {
        self.instant = true;
    }

    /// Sets the address other nodes reach this one at (default `127.0.0.1`); the
    /// session sets it once it knows it.
    pub fn set_advertise_addr(&self, addr: &str) {
        *self
            .advertise_addr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = addr.to_string();
    }

    pub fn advertise_addr(&self) -> String {
        self.advertise_addr
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The ports held for `MASTER_PORT` (the session reserves them for the server's
    /// gangs; `start` releases each just before the attempt's processes start).
    pub fn ports(&self) -> &PortBook {
        &self.ports
    }

    /// Failed probes of service replicas by kind (`gpusched_agent_probe_failures_total`).
    pub fn probe_failures(&self) -> &crate::probe::Failures {
        &self.probe_failures
    }

    /// [`Launcher::new`], but a root agent also runs jobs submitted by root.
    pub fn with_root_jobs(jobs_root: &Path, events: EventSink) -> Result<Self, LaunchError> {
        let mut l = Self::new(jobs_root, events)?;
        l.allow_root = true;
        Ok(l)
    }

    /// The attempt records, for reading logs and outcomes.
    pub fn records(&self) -> &JobDir {
        &self.dir
    }

    /// Startup recovery: for every attempt of an earlier agent life whose end the server
    /// has not acknowledged, the `Ended` event to report. An attempt with a stored outcome
    /// reports it; one without was running when the agent died: what is left of its
    /// process group is killed and it is recorded and reported as lost. Problems with
    /// one attempt are logged and do not stop the others.
    pub fn recover(&self) -> Result<Vec<RunEvent>, LaunchError> {
        let mut events = Vec::new();
        for a in self.dir.list()? {
            if self.dir.is_acked(a) || self.running.contains(a) {
                continue;
            }
            match self.dir.read_outcome(a) {
                Ok(Some(stored)) => events.push(RunEvent {
                    job: a.job,
                    attempt: a.attempt,
                    at_ms: stored.at_ms,
                    event: RunEventKind::Ended {
                        outcome: stored.outcome,
                        usage: stored.usage,
                    },
                }),
                Ok(None) => events.push(self.lose(a, LOST_ON_RESTART.to_string())),
                Err(e) => {
                    tracing::warn!("{e}");
                    let message = format!(
                        "the agent restarted and could not read this attempt's outcome ({e}); \
                         it was stopped"
                    );
                    events.push(self.lose(a, message));
                }
            }
        }
        // What no attempt of this life owns: an earlier life's leftovers (a daemon that
        // left its job's process group survives the parent-death signal).
        self.contain.sweep(&self.running.list());
        Ok(events)
    }

    /// Kills what is left of an attempt from an earlier life and records it as lost.
    fn lose(&self, a: AttemptRef, message: String) -> RunEvent {
        kill_leftovers(&self.dir, a);
        self.contain.kill_leftover(a);
        let outcome = Outcome::Lost { message };
        record_outcome(&self.dir, a, &outcome);
        event(
            a,
            RunEventKind::Ended {
                outcome,
                usage: None,
            },
        )
    }

    /// Whether this attempt was ever received; a received attempt is never started again.
    pub fn seen(&self, a: AttemptRef) -> bool {
        self.dir.exists(a)
    }

    /// Attempts with a live process, in (job, attempt) order.
    pub fn running(&self) -> Vec<AttemptRef> {
        self.running.list()
    }

    /// Starts one attempt: records it, spawns it, sends `Started { pid }` and later
    /// `Ended { outcome }`. `gpus` are the node's GPUs (at least those the launch names).
    /// A service replica (`launch.serve`) is given a free port in `$PORT`, reported as
    /// `Listening` just before `Started`, and probed until it ends (`Ready` at each
    /// change of readiness; a liveness failure stops it, `Unhealthy`).
    ///
    /// Problems of the job itself (no such program, not executable, missing directory, a
    /// GPU the node lacks) are not errors here: the attempt ends `SpawnFailed` with a
    /// message saying what to fix. If the agent cannot write the attempt's records it
    /// ends `Lost`, so the server can run it elsewhere. Errors are only for misuse: no
    /// tokio runtime, or an attempt already seen.
    ///
    /// Blocks briefly: the records are fsync'd and the process is started (see `forker`).
    pub fn start(&self, launch: &Launch, gpus: &[GpuInfo]) -> Result<(), LaunchError> {
        let runtime = Handle::try_current().map_err(|_| LaunchError::NoRuntime)?;
        let a = launch.attempt_ref();
        match self.dir.create(launch) {
            Ok(()) => {}
            Err(JobDirError::AlreadyExists { .. }) => return Err(LaunchError::AlreadySeen(a)),
            Err(e) => {
                let message =
                    format!("the agent could not record the attempt, so did not start it: {e}");
                self.end_unstarted(a, Outcome::Lost { message });
                return Ok(());
            }
        }
        if self.instant {
            self.ports.release(a);
            self.send(event(
                a,
                RunEventKind::Started {
                    pid: 0,
                    mig_uuid: None,
                },
            ));
            self.end_unstarted(a, Outcome::Exited { code: 0 });
            return Ok(());
        }
        // Output goes through pipes that the agent copies to the log files, created on
        // the first byte: a job that prints nothing costs no files (creating two inodes
        // per job was most of the agent's cost per trivial job).
        let run_as = match identity::resolve_cached(&launch.user, self.allow_root) {
            Ok(r) => r,
            Err(message) => {
                self.end_unstarted(a, Outcome::SpawnFailed { message });
                return Ok(());
            }
        };
        // An interactive allocation (for a user the node knows): no process of its own
        // (`hold.rs`). A gang's MASTER_PORT, reserved before its launch, is let go.
        if launch.hold {
            self.ports.release(a);
            self.hold(launch, &runtime);
            return Ok(());
        }
        let ckpt = self.checkpoint_dir(launch.job);
        if let Err(e) = prepare_checkpoint_dir(&ckpt, run_as.as_ref(), self.dir.spares()) {
            let message = format!(
                "cannot prepare the checkpoint directory {}: {e}",
                ckpt.display()
            );
            self.end_unstarted(a, Outcome::Lost { message });
            return Ok(());
        }
        let plan = match self.plan(launch, run_as.as_ref()) {
            Ok(plan) => plan,
            Err(outcome) => {
                self.end_unstarted(a, outcome);
                return Ok(());
            }
        };
        // A service replica's port, held (on every address, where it will listen) until
        // its processes start; every process of the part is told it.
        let serve_port = match &launch.serve {
            Some(_) => match self.serve_ports.reserve(a, "0.0.0.0") {
                Ok(port) => Some(port),
                Err(e) => {
                    let message = format!("the agent could not reserve a free port for $PORT: {e}");
                    self.end_unstarted(a, Outcome::Lost { message });
                    return Ok(());
                }
            },
            None => None,
        };
        let serve_env = serve_port.map(gpusched_wire::service::replica_env);
        let mut cmds = Vec::with_capacity(plan.procs.len());
        for proc in &plan.procs {
            let mut env = plan.env.clone();
            env.extend(proc.env.iter().cloned());
            // After the job's own variables (as the GPUs), so the port is the agent's;
            // by name into a container, whose network is the host's.
            env.extend(
                serve_env
                    .iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
            let setup = command::ProcSetup {
                gpus: &proc.gpus,
                env,
            };
            let image = command::ImageSetup {
                runtime: self.images.as_deref(),
                checkpoint_dir: &ckpt,
                rank: proc.rank,
            };
            match command::build(launch, &setup, gpus, run_as.as_ref(), &image) {
                Ok(mut cmd) => {
                    cmd.env("GPUSCHED_CHECKPOINT_DIR", &ckpt)
                        .env(
                            "GPUSCHED_RESTART_COUNT",
                            launch.attempt.saturating_sub(1).to_string(),
                        )
                        .env("GPUSCHED_PREEMPT_DEADLINE_FILE", ckpt.join(DEADLINE_FILE));
                    cmds.push((proc.rank, cmd));
                }
                Err(message) => {
                    self.end_unstarted(a, Outcome::SpawnFailed { message });
                    return Ok(());
                }
            }
        }
        // Processes with ranks get their own log files from the start, so the log
        // endpoint knows every rank that ran here even if it printed nothing.
        if plan.procs.iter().any(|p| p.rank.is_some()) {
            for p in &plan.procs {
                if let Err(e) = self.dir.open_rank_log(a, p.rank, Stream::Stdout) {
                    tracing::warn!("{e}");
                }
            }
        }
        // Its cgroup, which each process joins before it execs.
        let cgroup = match self.contain.create(launch) {
            Ok(cgroup) => cgroup,
            Err(message) => {
                self.end_unstarted(a, Outcome::Lost { message });
                return Ok(());
            }
        };
        if let Some(cg) = &cgroup {
            match cg.cgroup.procs_files() {
                Ok(files) => {
                    let files: Vec<_> = files.into_iter().map(std::sync::Arc::new).collect();
                    for (_, cmd) in &mut cmds {
                        cmd.join_cgroup(&files);
                    }
                    let mut steps = self.step_cgroups.lock().unwrap_or_else(|p| p.into_inner());
                    steps.retain(|a, _| self.running.contains(*a));
                    steps.insert(a, files.clone());
                }
                Err(e) => {
                    if let Some(cg) = cgroup {
                        cg.abandon();
                    }
                    let message = format!("the agent could not open the job's cgroup: {e}");
                    self.end_unstarted(a, Outcome::Lost { message });
                    return Ok(());
                }
            }
        }
        // The job binds MASTER_PORT (and a replica $PORT) itself: let go of them just
        // before the processes start.
        self.ports.release(a);
        self.serve_ports.release(a);
        let part::Spawned {
            children,
            pgid,
            copiers,
        } = match part::spawn(&self.forker, &self.dir, &runtime, launch, cmds) {
            Ok(spawned) => spawned,
            Err(outcome) => {
                if let Some(cg) = cgroup {
                    cg.abandon();
                }
                self.end_unstarted(a, outcome);
                return Ok(());
            }
        };
        let listen = self.running.insert(a);
        // A replica's port goes out before its start, so the server never has a running
        // replica without knowing where it listens.
        if let Some(port) = serve_port {
            self.send(event(a, RunEventKind::Listening { port }));
        }
        let mig_uuid = launch
            .slice
            .as_ref()
            .and_then(|s| s.mig.as_ref())
            .and_then(|m| m.uuid.clone());
        self.send(event(
            a,
            RunEventKind::Started {
                pid: pgid,
                mig_uuid,
            },
        ));
        let probes = match (&launch.serve, serve_port) {
            (Some(serve), Some(port)) => Some(serve::Watching::start(
                &runtime,
                serve::Replica {
                    attempt: a,
                    port,
                    serve: serve.clone(),
                    events: self.events.clone(),
                    running: self.running.clone(),
                    failures: self.probe_failures.clone(),
                },
            )),
            _ => None,
        };
        runtime.spawn(supervise(Supervised {
            attempt: a,
            children,
            // process_group(0) makes the leader's pid the group id.
            pgid,
            copiers,
            walltime_s: launch.walltime_s,
            grace: Duration::from_secs(launch.grace_s),
            cancel: listen.stop,
            hurry: listen.hurry,
            dir: self.dir.clone(),
            running: self.running.clone(),
            events: self.events.clone(),
            cgroup,
            probes,
            // An image part's containers go through their runtime before the cgroup is
            // killed: killed from outside, the runtime's record of them stays behind.
            before_kill: match (&launch.image, &self.images) {
                (Some(_), Some(rt)) => {
                    let rt = rt.clone();
                    Some(Box::new(move || rt.attempt_ended(a)))
                }
                _ => None,
            },
        }));
        Ok(())
    }

    /// The part's processes and environment; the job's port is reserved here for a job
    /// of one node, and the hostfile written. `Err`: the outcome to end it with.
    fn plan(
        &self,
        launch: &Launch,
        run_as: Option<&identity::RunAs>,
    ) -> Result<dist::Plan, Outcome> {
        let a = launch.attempt_ref();
        let addr = self.advertise_addr();
        let needs_port =
            dist::wants_env(launch) && launch.dist.as_ref().and_then(|d| d.master_port).is_none();
        let own_port = if needs_port {
            match self.ports.reserve(a, &addr) {
                Ok(port) => Some(port),
                Err(e) => {
                    return Err(Outcome::Lost {
                        message: format!(
                            "the agent could not reserve a free port for MASTER_PORT on {addr}: {e}"
                        ),
                    })
                }
            }
        } else {
            None
        };
        // A job of one node shares the hostfile of every job of its size here: a new
        // file per job would cost an inode each (most of the agent's cost per trivial
        // job is creating files).
        let hostfile = match dist::hostfile_text(launch, &addr) {
            Some(text) if dist::is_one_node(launch) => self.dir.node_hostfile_path(&text),
            _ => self.dir.hostfile_path(a),
        };
        let plan = dist::plan(launch, &addr, own_port, &hostfile).map_err(|message| {
            self.ports.release(a);
            Outcome::SpawnFailed { message }
        })?;
        if let Some(text) = &plan.hostfile {
            let written = if dist::is_one_node(launch) {
                self.dir.write_shared_hostfile(&hostfile, text)
            } else {
                let owner = run_as.map(|w| (w.uid.as_raw(), w.gid.as_raw()));
                self.dir.write_job_hostfile(&hostfile, text, owner)
            };
            if let Err(e) = written {
                self.ports.release(a);
                return Err(Outcome::Lost {
                    message: format!(
                        "the agent could not write the hostfile {}: {e}",
                        hostfile.display()
                    ),
                });
            }
        }
        Ok(plan)
    }

    /// Stops an attempt: SIGTERM to its process group, the launch's grace period, then
    /// SIGKILL; it ends `Cancelled`. Does nothing if it is not running (or already
    /// stopping).
    pub fn cancel(&self, a: AttemptRef) {
        self.running.cancel(a);
    }

    /// Preempts an attempt: the checkpoint signal to its group, `grace` to save, then it
    /// is stopped and ends `Preempted`. No-op if it is not running.
    pub fn preempt(&self, a: AttemptRef, signal: i32, grace: Duration) {
        let deadline_file = self.checkpoint_dir(a.job).join(DEADLINE_FILE);
        self.running.stop(
            a,
            running::Stop::Preempt {
                signal,
                grace,
                deadline_file,
            },
        );
    }

    /// The job's checkpoint directory on this node, kept across its attempts here.
    /// Whether a root agent may run jobs (and so steps) submitted by root.
    pub fn allow_root(&self) -> bool {
        self.allow_root
    }

    /// The cgroup a step of running attempt `a` joins (none: the attempt has none, or
    /// does not run here).
    pub fn step_cgroup(&self, a: AttemptRef) -> Option<StepCgroup> {
        if !self.running.contains(a) {
            return None;
        }
        self.step_cgroups
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&a)
            .cloned()
    }

    pub fn checkpoint_dir(&self, job: u64) -> PathBuf {
        self.dir.checkpoint_dir(job)
    }

    /// Stops every running attempt quickly (a short grace, then SIGKILL), reporting each
    /// `Lost` with `why`: the agent lost contact with the server, which will requeue
    /// them, and they must not still run when it does.
    pub fn fence(&self, why: &str) {
        for a in self.running.list() {
            self.running.stop(a, running::Stop::Fence(why.to_string()));
        }
    }

    /// Stops every running attempt with its full grace because the agent is stopping;
    /// each ends `Stopped { why }`. An attempt already being stopped keeps that stop.
    pub fn stop_all(&self, why: &str) {
        for a in self.running.list() {
            self.running.stop(a, running::Stop::Drain(why.to_string()));
        }
    }

    /// Records that the server has the attempt's end, so recovery no longer reports it.
    pub fn mark_acked(&self, a: AttemptRef) -> Result<(), LaunchError> {
        self.dir.mark_acked(a)?;
        Ok(())
    }

    pub fn log_path(&self, a: AttemptRef, stream: Stream) -> PathBuf {
        self.dir.log_path(a, stream)
    }

    /// The log of the process with global `rank` of a part started with
    /// `tasks_per_node`.
    pub fn rank_log_path(&self, a: AttemptRef, rank: u32, stream: Stream) -> PathBuf {
        self.dir.rank_log_path(a, Some(rank), stream)
    }

    fn end_unstarted(&self, a: AttemptRef, outcome: Outcome) {
        self.ports.release(a);
        self.serve_ports.release(a);
        record_outcome(&self.dir, a, &outcome);
        self.send(event(
            a,
            RunEventKind::Ended {
                outcome,
                usage: None,
            },
        ));
    }

    fn send(&self, event: RunEvent) {
        (self.events)(event);
    }
}

fn explain_spawn_error(launch: &Launch, err: &std::io::Error) -> String {
    let program = launch.command.first().map(String::as_str).unwrap_or("");
    let path_var = match launch.env.get("PATH") {
        Some(p) => Some(std::ffi::OsString::from(p)),
        None => std::env::var_os("PATH"),
    };
    spawn_error::explain(err, program, &launch.cwd, path_var.as_deref())
}

/// Records who leads the attempt's process group, for recovery after a crash.
fn record_pid(dir: &JobDir, a: AttemptRef, pid: u32) {
    let record = PidRecord {
        pgid: pid,
        leader_start_ticks: group::start_ticks(pid),
        boot_id: group::boot_id(),
    };
    // The job runs on without it: only recovery after a crash needs it, and the
    // parent-death signal still stops the leader then.
    if let Err(e) = dir.write_pid(a, &record) {
        tracing::warn!("{e}");
    }
}

/// SIGKILLs an earlier life's process group for `a` if it can only hold the job's
/// processes.
fn kill_leftovers(dir: &JobDir, a: AttemptRef) {
    let record = match dir.read_pid(a) {
        Ok(Some(record)) => record,
        // Never started, so nothing to kill.
        Ok(None) => return,
        Err(e) => {
            tracing::warn!("{e}; cannot look for leftovers of {}.{}", a.job, a.attempt);
            return;
        }
    };
    let boot = group::boot_id();
    match group::verdict(&record, boot.as_deref(), group::start_ticks(record.pgid)) {
        GroupVerdict::Ours => group::signal_group_logged(record.pgid, Signal::SIGKILL),
        GroupVerdict::NotOurs(why) => tracing::info!(
            "not killing process group {} of {}.{}: {why}",
            record.pgid,
            a.job,
            a.attempt
        ),
    }
}

/// Writes the outcome, logging a failure: the event still goes out, and if the agent
/// dies before the server acknowledges it, recovery reports the attempt as lost.
fn record_outcome(dir: &JobDir, a: AttemptRef, outcome: &Outcome) {
    if let Err(e) = dir.write_outcome(a, outcome) {
        tracing::error!("{e}");
    }
}

fn event(a: AttemptRef, event: RunEventKind) -> RunEvent {
    RunEvent {
        job: a.job,
        attempt: a.attempt,
        at_ms: now_ms(),
        event,
    }
}

#[cfg(test)]
mod tests {
    use super::{prepare_checkpoint_dir, DEADLINE_FILE};

    #[test]
    fn a_checkpoint_directory_is_made_or_kept_without_a_stale_deadline() {
        let tmp = tempfile::tempdir().unwrap();
        let spares = crate::spare_dirs::SpareDirs::open(&tmp.path().join("checkpoints"));
        // New, parents included.
        let dir = tmp.path().join("checkpoints").join("7");
        prepare_checkpoint_dir(&dir, None, &spares).unwrap();
        assert!(dir.is_dir());
        // Its owner's alone: other users' jobs on the node cannot read what it saves.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // Kept from an earlier attempt: what the job saved stays, the deadline goes.
        std::fs::write(dir.join("model.pt"), "weights").unwrap();
        std::fs::write(dir.join(DEADLINE_FILE), "123").unwrap();
        prepare_checkpoint_dir(&dir, None, &spares).unwrap();
        assert!(dir.join("model.pt").exists());
        assert!(!dir.join(DEADLINE_FILE).exists());
        // ... also when an empty directory is kept for new ones (where new ones are bare:
        // not under a security label): it is not put there.
        if spares.keeping() {
            let ended = tmp.path().join("checkpoints").join("6");
            prepare_checkpoint_dir(&ended, None, &spares).unwrap();
            assert!(spares.offer(&ended));
            prepare_checkpoint_dir(&dir, None, &spares).unwrap();
            assert!(dir.join("model.pt").exists());
            assert_eq!(spares.len(), 1);
            // A new job's is that kept directory.
            let next = tmp.path().join("checkpoints").join("9");
            prepare_checkpoint_dir(&next, None, &spares).unwrap();
            assert!(next.is_dir() && spares.is_empty());
        }
        // A file where the directory should be is an error, not a directory.
        let file = tmp.path().join("checkpoints").join("8");
        std::fs::write(&file, "").unwrap();
        assert!(prepare_checkpoint_dir(&file, None, &spares).is_err());
    }
}
