//! One long-lived thread that forks every job.
//!
//! The parent-death signal fires when the *thread* that forked the job exits, not the
//! process. Forking from whatever thread calls `start` would tie a job's life to that
//! thread: a spawn_blocking thread retires after 10 idle seconds, and a tokio worker
//! that enters `block_in_place` can be retired too, either of which would SIGKILL
//! healthy jobs. This thread lives exactly as long as the [`Forker`] (the launcher),
//! so jobs die with the agent and with nothing else.

use std::io;
use std::sync::mpsc;
use std::thread;

use tokio::process::{Child, Command};
use tokio::runtime::Handle;

struct Request {
    command: Command,
    /// The runtime whose reaper will watch the child.
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
                // Ends when the Forker is dropped, taking the jobs' leaders with it.
                for mut request in incoming {
                    let child = {
                        let _in_runtime = request.runtime.enter();
                        request.command.spawn()
                    };
                    // The requester waits for the reply; if it has gone, the child is
                    // dropped here and reaped by tokio in the background.
                    let _ = request.reply.send(child);
                }
            })?;
        Ok(Forker { requests })
    }

    /// Spawns `command` on the forker thread; blocks the caller for the fork and exec.
    pub fn spawn(&self, command: Command, runtime: Handle) -> io::Result<Child> {
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
