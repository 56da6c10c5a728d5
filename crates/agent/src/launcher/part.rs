//! Starting the processes of one part: the first leads a new process group and the
//! others join it, so one signal reaches the whole part and recovery after a crash
//! finds every process through the one recorded group.

use gpusched_wire::{Launch, Outcome};
use nix::sys::signal::Signal;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use super::child::Child;
use super::forker::Forker;
use super::spawn::JobCommand;
use super::{capture, explain_spawn_error, group, record_pid};
use crate::jobdir::{JobDir, Stream};

/// The part's running processes.
pub struct Spawned {
    /// In local rank order; the first leads the group.
    pub children: Vec<Child>,
    /// The group id: the first process's pid.
    pub pgid: u32,
    /// The tasks copying each process's output to its logs.
    pub copiers: Vec<JoinHandle<()>>,
}

/// Spawns `cmds` (each with its global rank, `None` for an attempt's only process).
/// If one cannot start, those started already are killed and the outcome says which
/// failed and why.
pub fn spawn(
    forker: &Forker,
    dir: &JobDir,
    runtime: &Handle,
    launch: &Launch,
    cmds: Vec<(Option<u32>, JobCommand)>,
) -> Result<Spawned, Outcome> {
    let a = launch.attempt_ref();
    let mut children = Vec::with_capacity(cmds.len());
    let mut copiers = Vec::new();
    let mut pgid = 0u32;
    for (i, (rank, mut cmd)) in cmds.into_iter().enumerate() {
        if i > 0 {
            // The first process's group is still there even if it has exited: it is
            // not reaped before its supervisor starts.
            cmd.process_group(i32::try_from(pgid).unwrap_or(0));
        }
        let started = forker.spawn(cmd, runtime.clone());
        let mut child = match started {
            Ok(child) => child,
            Err(e) => {
                let why = explain_spawn_error(launch, &e);
                if i == 0 {
                    return Err(Outcome::SpawnFailed { message: why });
                }
                // Those started go; tokio reaps them once their handles are dropped.
                group::signal_group_logged(pgid, Signal::SIGKILL);
                return Err(Outcome::SpawnFailed {
                    message: format!("process {i} of the part could not start: {why}"),
                });
            }
        };
        let pid = child.id();
        if i == 0 {
            pgid = pid;
            // Before the others start: recovery after a crash finds the group.
            record_pid(dir, a, pid);
        }
        if let Some(p) = child.stdout.take() {
            copiers.push(runtime.spawn(capture::copy(p, dir.clone(), a, rank, Stream::Stdout)));
        }
        if let Some(p) = child.stderr.take() {
            copiers.push(runtime.spawn(capture::copy(p, dir.clone(), a, rank, Stream::Stderr)));
        }
        children.push(child);
    }
    Ok(Spawned {
        children,
        pgid,
        copiers,
    })
}
