//! An interactive allocation's attempt (`Launch::hold`, `gpusched alloc`): the agent
//! holds the GPUs with no process of the job's own. The attempt is journalled and
//! running as any other (so registration, reports and the node lease treat it alike);
//! its cgroup is made as for a process, so steps started later can join it and end
//! with it. It ends the way a process would be ended: a cancel ends it `Cancelled`, its
//! walltime `TimedOut`, a fence `Lost`, the agent's stop `Stopped`, a preemption
//! `Preempted`; whatever joined its cgroup is killed first, and the end is journalled
//! before it is reported. It never ends by itself.
//!
//! `Started` carries pid 0: there is no process group to signal, and nothing here
//! signals one.

use std::future::pending;
use std::time::Duration;

use gpusched_wire::{AttemptRef, Launch, Outcome, RunEventKind};
use tokio::runtime::Handle;
use tokio::sync::oneshot;

use super::contain::PartCgroup;
use super::running::{Running, Stop};
use super::{event, EventSink, Launcher};
use crate::jobdir::JobDir;

/// What the task holding an attempt needs.
struct Held {
    attempt: AttemptRef,
    walltime_s: Option<u64>,
    stop: oneshot::Receiver<Stop>,
    cgroup: Option<PartCgroup>,
    dir: JobDir,
    running: Running,
    events: EventSink,
}

impl Launcher {
    /// Holds a journalled attempt's GPUs until it is stopped or passes its walltime.
    pub(super) fn hold(&self, launch: &Launch, runtime: &Handle) {
        let a = launch.attempt_ref();
        let cgroup = match self.contain.create(launch) {
            Ok(cgroup) => cgroup,
            Err(message) => {
                self.end_unstarted(a, Outcome::Lost { message });
                return;
            }
        };
        let listen = self.running.insert(a);
        // Steps (`gpusched run --jobid`) join the allocation's cgroup, as they join a
        // running job's.
        if let Some(cg) = &cgroup {
            if let Ok(files) = cg.cgroup.procs_files() {
                let files: Vec<_> = files.into_iter().map(std::sync::Arc::new).collect();
                let mut steps = self.step_cgroups.lock().unwrap_or_else(|p| p.into_inner());
                steps.retain(|a, _| self.running.contains(*a));
                steps.insert(a, files);
            }
        }
        let mig_uuid = launch
            .slice
            .as_ref()
            .and_then(|s| s.mig.as_ref())
            .and_then(|m| m.uuid.clone());
        self.send(event(a, RunEventKind::Started { pid: 0, mig_uuid }));
        runtime.spawn(held(Held {
            attempt: a,
            walltime_s: launch.walltime_s,
            stop: listen.stop,
            cgroup,
            dir: self.dir.clone(),
            running: self.running.clone(),
            events: self.events.clone(),
        }));
    }
}

/// The outcome of a held attempt stopped for `why`.
fn outcome_of(why: Stop) -> Outcome {
    match why {
        Stop::Cancel => Outcome::Cancelled,
        Stop::Fence(message) => Outcome::Lost { message },
        Stop::Drain(message) => Outcome::Stopped { message },
        Stop::Unhealthy(message) => Outcome::Unhealthy { message },
        Stop::Preempt { .. } => Outcome::Preempted,
    }
}

async fn held(mut h: Held) {
    let walltime = h.walltime_s;
    let passed = async {
        match walltime {
            Some(secs) => tokio::time::sleep(Duration::from_secs(secs)).await,
            None => pending().await,
        }
    };
    let stopped = async {
        // A dropped sender means the launcher is gone, not that anyone asked to stop.
        match (&mut h.stop).await {
            Ok(why) => why,
            Err(_) => pending().await,
        }
    };
    let outcome = tokio::select! {
        why = stopped => outcome_of(why),
        () = passed => Outcome::TimedOut { walltime_s: walltime.unwrap_or(0) },
    };
    // Steps that joined the allocation end with it.
    let (outcome, usage) = match h.cgroup.take() {
        Some(cg) => cg.finish(outcome, None).await,
        None => (outcome, None),
    };
    let a = h.attempt;
    if let Err(e) = h.dir.append_end(a, &outcome, usage.as_ref()) {
        tracing::error!(
            "recording the outcome of {}.{} failed: {e}",
            a.job,
            a.attempt
        );
    }
    // Delivered before it leaves `running`, as a process's end (`supervise.rs`).
    (h.events)(event(a, RunEventKind::Ended { outcome, usage }));
    h.running.remove(a);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_attempt_ends_as_a_process_stopped_for_the_same_reason_would() {
        assert_eq!(outcome_of(Stop::Cancel), Outcome::Cancelled);
        assert_eq!(
            outcome_of(Stop::Drain("agent stopping".into())),
            Outcome::Stopped {
                message: "agent stopping".into()
            }
        );
        assert!(matches!(
            outcome_of(Stop::Fence("lease".into())),
            Outcome::Lost { .. }
        ));
    }
}
