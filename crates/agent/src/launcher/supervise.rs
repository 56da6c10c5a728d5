//! Watching one running attempt until it ends: by itself, by walltime, or by cancel;
//! then clearing its process group and reporting the outcome.
//!
//! A part started with `tasks_per_node` K has K processes in one process group. It has
//! ended when all K have; the first that fails (non-zero exit, a signal) stops the
//! others (SIGTERM to the group, the grace, SIGKILL) and its status is the part's
//! outcome; all K exiting 0 is `Exited { code: 0 }`.

use std::future::pending;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use gpusched_wire::{AttemptRef, Outcome, RunEventKind};
use nix::sys::signal::Signal;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{sleep, timeout};

use super::child::Child;
use super::event;
use super::group::signal_group_logged;
use super::running::{Running, Stop};
use crate::jobdir::JobDir;

/// The most a fenced job gets between SIGTERM and SIGKILL: the server requeues it soon.
pub(crate) const FENCE_GRACE: Duration = Duration::from_secs(3);

/// How long the end of a job waits for its output pipes to drain.
const COPY_DRAIN: Duration = Duration::from_secs(2);

pub struct Supervised {
    pub attempt: AttemptRef,
    /// The part's processes, the group leader first.
    pub children: Vec<Child>,
    pub pgid: u32,
    /// The tasks copying the job's stdout and stderr to its logs.
    pub copiers: Vec<tokio::task::JoinHandle<()>>,
    pub walltime_s: Option<u64>,
    pub grace: Duration,
    pub cancel: oneshot::Receiver<super::running::Stop>,
    /// Rung when the agent fences while this attempt is already stopping.
    pub hurry: std::sync::Arc<tokio::sync::Notify>,
    pub dir: JobDir,
    pub running: Running,
    pub events: super::EventSink,
    /// The part's cgroup: killed whole at the end, and read for what it used.
    pub cgroup: Option<super::contain::PartCgroup>,
    /// A service replica's probes, stopped once its processes have ended.
    pub probes: Option<super::serve::Watching>,
    /// Run at the end before the cgroup is killed (an image part's containers removed
    /// through their runtime).
    pub before_kill: Option<Box<dyn FnOnce() + Send>>,
}

/// The part's processes as they end, in the order they end.
struct Procs {
    ends: mpsc::UnboundedReceiver<io::Result<ExitStatus>>,
    left: usize,
    first_failure: Option<Outcome>,
}

impl Procs {
    /// Waits on each child in its own task (each `wait` reaps its own pid only).
    fn watch(children: Vec<Child>) -> Procs {
        let (tx, ends) = mpsc::unbounded_channel();
        let left = children.len();
        for mut child in children {
            let tx = tx.clone();
            tokio::spawn(async move {
                let _ = tx.send(child.wait().await);
            });
        }
        Procs {
            ends,
            left,
            first_failure: None,
        }
    }

    fn note(&mut self, status: io::Result<ExitStatus>) {
        self.left = self.left.saturating_sub(1);
        let outcome = natural_end(status);
        if outcome != (Outcome::Exited { code: 0 }) && self.first_failure.is_none() {
            self.first_failure = Some(outcome);
        }
    }

    /// Waits for the next process to end; false once none is left.
    async fn next(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        match self.ends.recv().await {
            Some(status) => {
                self.note(status);
                true
            }
            None => {
                self.left = 0;
                false
            }
        }
    }

    async fn wait_all(&mut self) {
        while self.next().await {}
    }

    /// Takes note of the ends already there.
    fn drain_ready(&mut self) {
        while self.left > 0 {
            match self.ends.try_recv() {
                Ok(status) => self.note(status),
                Err(_) => break,
            }
        }
    }

    fn all_ended(&self) -> bool {
        self.left == 0
    }

    /// The outcome of the part as it ended by itself: the first failure, else exit 0.
    fn result(&self) -> Outcome {
        self.first_failure
            .clone()
            .unwrap_or(Outcome::Exited { code: 0 })
    }
}

pub async fn supervise(mut s: Supervised) {
    let outcome = run_to_end(&mut s).await;
    // Nothing is left to probe, and nothing a probe says may follow the end.
    if let Some(probes) = s.probes.take() {
        probes.stop();
    }
    // Whatever ended the leader, nothing the job started may outlive it: its group
    // now, and with a cgroup, every process in it however it daemonised.
    signal_group_logged(s.pgid, Signal::SIGKILL);
    let before_kill = s.before_kill.take();
    let (outcome, usage) = match s.cgroup.take() {
        Some(cg) => cg.finish(outcome, before_kill).await,
        None => {
            if let Some(f) = before_kill {
                let _ = tokio::task::spawn_blocking(f).await;
            }
            (outcome, None)
        }
    };
    // The logs are complete once every writer is gone; a process that left the group
    // (setsid) could hold a pipe forever, so wait a bounded time.
    for c in s.copiers.drain(..) {
        if timeout(COPY_DRAIN, c).await.is_err() {
            tracing::warn!(
                job = s.attempt.job,
                "output still open after the job ended; logs may be incomplete"
            );
        }
    }
    let a = s.attempt;
    // Journalled here, made durable before the server is told (the reporter syncs the
    // journal once for all the ends of a report): no hand-off to a blocking thread and
    // no fsync per job.
    if let Err(e) = s.dir.append_end(a, &outcome, usage.as_ref()) {
        tracing::error!(
            "recording the outcome of {}.{} failed: {e}",
            a.job,
            a.attempt
        );
    }
    // The end is delivered before the attempt leaves `running`: whoever reads `running`
    // and then the delivered events sees it in one or the other.
    (s.events)(event(a, RunEventKind::Ended { outcome, usage }));
    s.running.remove(a);
}

async fn run_to_end(s: &mut Supervised) -> Outcome {
    let mut procs = Procs::watch(std::mem::take(&mut s.children));
    let walltime = s.walltime_s;
    let walltime_passed = async {
        match walltime {
            Some(secs) => sleep(Duration::from_secs(secs)).await,
            None => pending().await,
        }
    };
    let cancel = &mut s.cancel;
    let stopped = async {
        // A dropped sender means the launcher is gone, not that anyone asked to stop.
        match cancel.await {
            Ok(why) => why,
            Err(_) => pending().await,
        }
    };
    tokio::pin!(walltime_passed, stopped);
    let (reason, grace) = loop {
        tokio::select! {
            // An exit that is already there wins over a stop that arrives with it.
            biased;
            more = procs.next() => {
                if !more {
                    return procs.result();
                }
                if let Some(failure) = procs.first_failure.clone() {
                    // One process failed: the part has failed; stop its siblings.
                    if !procs.all_ended() {
                        stop_siblings(&mut procs, s.pgid, s.grace, &mut stopped, s.cgroup.as_ref()).await;
                    }
                    return failure;
                }
            }
            () = &mut walltime_passed => break (Outcome::TimedOut { walltime_s: walltime.unwrap_or(0) }, s.grace),
            why = &mut stopped => match why {
                Stop::Cancel => break (Outcome::Cancelled, s.grace),
                Stop::Fence(message) => break (Outcome::Lost { message }, s.grace.min(FENCE_GRACE)),
                Stop::Drain(message) => break (Outcome::Stopped { message }, s.grace),
                Stop::Unhealthy(message) => break (Outcome::Unhealthy { message }, s.grace),
                Stop::Preempt { signal, grace, deadline_file } => {
                    procs.drain_ready();
                    if procs.all_ended() {
                        return procs.result(); // it finished first
                    }
                    ask_to_checkpoint(s.pgid, signal, grace, &deadline_file);
                    // Whether it saves and exits in time or not, it was preempted; a
                    // fence cuts the grace short.
                    let exited = tokio::select! {
                        r = timeout(grace, procs.wait_all()) => r.is_ok(),
                        () = s.hurry.notified() => false,
                    };
                    if !exited {
                        stop(&mut procs, s.pgid, FENCE_GRACE, s.cgroup.as_ref()).await;
                    }
                    return Outcome::Preempted;
                }
            },
        }
    };
    // If it ended by itself meanwhile, that is the truth to report.
    procs.drain_ready();
    if procs.all_ended() {
        return procs.result();
    }
    // A fence during the grace cuts it short.
    let hurry = s.hurry.clone();
    tokio::select! {
        () = stop(&mut procs, s.pgid, grace, s.cgroup.as_ref()) => {}
        () = hurry.notified() => stop(&mut procs, s.pgid, Duration::ZERO, s.cgroup.as_ref()).await,
    }
    reason
}

/// The checkpoint contract: the deadline goes to a file the job was told about
/// (`GPUSCHED_PREEMPT_DEADLINE_FILE`), then `signal` to the whole group.
fn ask_to_checkpoint(pgid: u32, signal: i32, grace: Duration, deadline_file: &std::path::Path) {
    let deadline = std::time::SystemTime::now() + grace;
    let secs = deadline
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    if let Err(e) = write_beside(deadline_file, format!("{secs}\n").as_bytes()) {
        tracing::warn!(
            "cannot write the preemption deadline to {}: {e}",
            deadline_file.display()
        );
    }
    match Signal::try_from(signal) {
        Ok(sig) => signal_group_logged(pgid, sig),
        Err(_) => {
            tracing::warn!("preemption signal {signal} is not a signal; sending SIGUSR1");
            signal_group_logged(pgid, Signal::SIGUSR1);
        }
    }
}

/// Writes `path` inside a directory the job owns without following anything the job
/// put there: a new file (never an existing one, never through a symlink) renamed over
/// the name, so a link planted by the job cannot make the (root) agent write elsewhere.
fn write_beside(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp); // removes a link itself, not its target
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(&tmp)?;
    f.write_all(bytes)?;
    std::fs::rename(&tmp, path)
}

/// Stops the rest of a part after one of its processes failed, with the job's grace;
/// a fence that arrives meanwhile (the server is about to requeue the job) kills them
/// at once. Other stop requests change nothing: the part is already stopping.
async fn stop_siblings(
    procs: &mut Procs,
    pgid: u32,
    grace: Duration,
    stopped: &mut (impl std::future::Future<Output = Stop> + Unpin),
    cgroup: Option<&super::contain::PartCgroup>,
) {
    let stopping = stop(procs, pgid, grace, cgroup);
    tokio::pin!(stopping);
    let mut heard = false;
    loop {
        tokio::select! {
            () = &mut stopping => return,
            why = &mut *stopped, if !heard => {
                heard = true;
                if matches!(why, Stop::Fence(_)) {
                    signal_group_logged(pgid, Signal::SIGKILL);
                }
            }
        }
    }
}

/// SIGTERM to the group (and to anything else in the part's cgroup), up to `grace` for
/// every process to exit, then SIGKILL.
async fn stop(
    procs: &mut Procs,
    pgid: u32,
    grace: Duration,
    cgroup: Option<&super::contain::PartCgroup>,
) {
    signal_group_logged(pgid, Signal::SIGTERM);
    if let Some(cg) = cgroup {
        cg.terminate();
    }
    if timeout(grace, procs.wait_all()).await.is_err() {
        signal_group_logged(pgid, Signal::SIGKILL);
        procs.wait_all().await;
    }
}

fn natural_end(status: io::Result<ExitStatus>) -> Outcome {
    match status {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => Outcome::Exited { code },
            (None, Some(signal)) => Outcome::Signaled { signal },
            (None, None) => Outcome::Lost {
                message: format!("the process ended with an unrecognised status: {status}"),
            },
        },
        Err(e) => Outcome::Lost {
            message: format!("the agent could not wait for the process: {e}"),
        },
    }
}
