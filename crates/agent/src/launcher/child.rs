//! A started job process, waited for through a pidfd: the kernel makes the descriptor
//! readable when the process exits, so each wait is one epoll registration and one
//! `waitpid` of that pid, never a scan of every child on each SIGCHLD.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use nix::errno::Errno;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::net::unix::pipe;
use tokio::runtime::Handle;

pub struct Child {
    pid: Pid,
    /// `None` once reaped.
    pidfd: Option<AsyncFd<OwnedFd>>,
    runtime: Handle,
    pub stdout: Option<pipe::Receiver>,
    pub stderr: Option<pipe::Receiver>,
}

impl Child {
    /// Takes charge of `pid`, a child of this process not yet reaped; `stdout` and
    /// `stderr` are the read ends of its output pipes.
    pub fn new(pid: Pid, stdout: OwnedFd, stderr: OwnedFd, runtime: &Handle) -> io::Result<Child> {
        let _in_runtime = runtime.enter();
        // SAFETY: an OwnedFd stays open and names the same descriptor until it is
        // dropped with the AsyncFd, and nothing here swaps it.
        let pidfd =
            unsafe { AsyncFd::register_with_interest(pidfd_open(pid)?, Interest::READABLE) }?;
        Ok(Child {
            pid,
            pidfd: Some(pidfd),
            runtime: runtime.clone(),
            stdout: Some(pipe::Receiver::from_owned_fd(stdout)?),
            stderr: Some(pipe::Receiver::from_owned_fd(stderr)?),
        })
    }

    /// Its pid (the same after it ended: it is not reused before it is reaped).
    pub fn id(&self) -> u32 {
        self.pid.as_raw() as u32
    }

    /// Waits for it to end and reaps it. Not to be called again after it returned `Ok`.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let Some(fd) = &self.pidfd else {
            return Err(io::Error::other("the process was already reaped"));
        };
        loop {
            if let Some(status) = try_reap(self.pid)? {
                self.pidfd = None;
                return Ok(status);
            }
            fd.readable().await?.clear_ready();
        }
    }
}

impl Drop for Child {
    /// Reaps it in the background if nobody waited, so no zombie is left behind.
    fn drop(&mut self) {
        let Some(fd) = self.pidfd.take() else { return };
        let pid = self.pid;
        let runtime = self.runtime.clone();
        // Already ended: reap now, no task needed.
        if matches!(try_reap(pid), Ok(Some(_)) | Err(_)) {
            return;
        }
        runtime.spawn(async move {
            let mut child = Child {
                pid,
                pidfd: Some(fd),
                runtime: Handle::current(),
                stdout: None,
                stderr: None,
            };
            if let Err(e) = child.wait().await {
                tracing::warn!("could not reap process {pid}: {e}");
            }
        });
    }
}

/// Its status if it has ended (and is now reaped), `None` while it runs.
fn try_reap(pid: Pid) -> io::Result<Option<ExitStatus>> {
    loop {
        return match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => Ok(Some(ExitStatus::from_raw((code & 0xff) << 8))),
            Ok(WaitStatus::Signaled(_, signal, core)) => Ok(Some(ExitStatus::from_raw(
                signal as i32 | if core { 0x80 } else { 0 },
            ))),
            Ok(_) => Ok(None),
            Err(Errno::EINTR) => continue,
            Err(e) => Err(io::Error::from(e)),
        };
    }
}

fn pidfd_open(pid: Pid) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1; nix
    // has no wrapper for it.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor, owned by nobody else; pidfds
    // are close-on-exec by default.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
