//! One long-lived thread that starts every job.
//!
//! The parent-death signal fires when the *thread* that started the job exits, not the
//! process. Starting from whatever thread calls `start` would tie a job's life to that
//! thread: a spawn_blocking thread retires after 10 idle seconds, and a tokio worker
//! that enters `block_in_place` can be retired too, either of which would SIGKILL
//! healthy jobs. This thread lives exactly as long as the [`Forker`] (the launcher),
//! so jobs die with the agent and with nothing else.
//!
//! It blocks every signal for its whole life: the children it starts share the agent's
//! memory until they exec (see [`super::spawn`]) and must never run one of the agent's
//! signal handlers; process-directed signals go to the agent's other threads.

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

    /// Starts `command` on the forker thread; blocks the caller until it has exec'd.
    pub fn spawn(&self, command: JobCommand, runtime: Handle) -> io::Result<Child> {
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
