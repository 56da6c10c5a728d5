//! Where jobs are started: the process's main thread when the launcher is called there,
//! else one long-lived thread of the launcher's own.
//!
//! The parent-death signal fires when the *thread* that started the job exits, not the
//! process. Starting from whatever thread calls `start` would tie a job's life to that
//! thread: a spawn_blocking thread retires after 10 idle seconds, and a tokio worker
//! that enters `block_in_place` can be retired too, either of which would SIGKILL
//! healthy jobs. Two threads are safe:
//! - the process's **main thread** (`gettid() == getpid()`), which lives as long as the
//!   process: `gpusched agent` runs its session there, on a current-thread runtime, so
//!   its jobs die with the agent and with nothing else. Starting there saves the
//!   hand-off to another thread and back (futex wakes and two context switches a job:
//!   a tenth to a fifth of the agent's CPU per job on a VM, docs/benchmarks-log.md (y));
//! - the **forker thread**, which lives exactly as long as the [`Forker`] (the
//!   launcher): everywhere else (`gpusched up`'s multi-threaded runtime, tests). Its
//!   jobs also die when the launcher is dropped.
//!
//! Every signal is blocked while a job starts (the forker blocks them for its whole
//! life, the main thread for the call): the child shares the agent's memory until it
//! execs (see [`super::spawn`]) and must never run one of the agent's signal handlers;
//! process-directed signals go to the agent's other threads meanwhile, or wait.

use std::io;
use std::sync::mpsc;
use std::thread;

use nix::sys::signal::{SigSet, SigmaskHow};
use tokio::runtime::Handle;

use super::child::Child;
use super::spawn::{self, JobCommand, Stdio};

struct Request {
    command: JobCommand,
    /// The runtime whose reactor will watch the child.
    runtime: Handle,
    reply: mpsc::SyncSender<io::Result<Child>>,
}

pub struct Forker {
    requests: mpsc::Sender<Request>,
}

impl Forker {
    pub fn start() -> io::Result<Forker> {
        let (requests, incoming) = mpsc::channel::<Request>();
        thread::Builder::new()
            .name("gpusched-forker".into())
            .spawn(move || {
                if let Err(e) = nix::sys::signal::pthread_sigmask(
                    SigmaskHow::SIG_BLOCK,
                    Some(&SigSet::all()),
                    None,
                ) {
                    tracing::error!("the forker thread cannot block signals: {e}");
                }
                // Ends when the Forker is dropped, taking the jobs' leaders with it.
                for request in incoming {
                    let child = start(&request.command, &request.runtime);
                    // The requester waits for the reply; if it has gone, the child is
                    // dropped here and reaped in the background.
                    let _ = request.reply.send(child);
                }
            })?;
        Ok(Forker { requests })
    }

    /// Starts `command` on this thread if it is the process's main thread, else on the
    /// forker thread (see the module notes); blocks the caller until it has exec'd.
    pub fn spawn(&self, command: JobCommand, runtime: Handle) -> io::Result<Child> {
        if on_main_thread() {
            let _blocked = AllSignalsBlocked::new()?;
            return start(&command, &runtime);
        }
        let (reply, response) = mpsc::sync_channel(1);
        let gone = || io::Error::other("the launcher's forker thread has stopped");
        self.requests
            .send(Request {
                command,
                runtime,
                reply,
            })
            .map_err(|_| gone())?;
        response.recv().map_err(|_| gone())?
    }
}

/// Whether the calling thread is the process's main thread (asked once per thread).
fn on_main_thread() -> bool {
    thread_local! {
        static MAIN: bool = nix::unistd::gettid() == nix::unistd::getpid();
    }
    MAIN.with(|m| *m)
}

/// Every signal blocked on this thread until dropped, when the mask before is restored.
struct AllSignalsBlocked(SigSet);

impl AllSignalsBlocked {
    fn new() -> io::Result<Self> {
        let mut before = SigSet::empty();
        nix::sys::signal::pthread_sigmask(
            SigmaskHow::SIG_SETMASK,
            Some(&SigSet::all()),
            Some(&mut before),
        )
        .map_err(io::Error::from)?;
        Ok(AllSignalsBlocked(before))
    }
}

impl Drop for AllSignalsBlocked {
    fn drop(&mut self) {
        if let Err(e) =
            nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&self.0), None)
        {
            tracing::error!("cannot restore the signal mask after starting a job: {e}");
        }
    }
}

/// stdin from /dev/null, stdout and stderr into pipes the agent reads.
fn start(command: &JobCommand, runtime: &Handle) -> io::Result<Child> {
    let (out_r, out_w) = spawn::pipe()?;
    let (err_r, err_w) = spawn::pipe()?;
    let stdio = Stdio {
        stdin: spawn::dev_null()?,
        stdout: out_w,
        stderr: err_w,
    };
    let pid = spawn::spawn(command, &stdio)?;
    // The child has its own copies of the write ends now; the agent's go, so the
    // readers see end-of-file once the job's processes are gone.
    drop(stdio);
    Child::new(pid, out_r, err_r, runtime).inspect_err(|_| {
        // Cannot be watched: it must not run unwatched.
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = nix::sys::wait::waitpid(pid, None);
    })
}
