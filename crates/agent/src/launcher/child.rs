//! A started job process, waited for through a pidfd: the kernel makes the descriptor
//! readable when the process exits, so each wait is one epoll registration and one
//! `waitpid` of that pid, never a scan of every child on each SIGCHLD. Kernels before
//! 5.3 have no pidfds; there every waiter looks again at each SIGCHLD (what tokio's own
//! `Child` does there too).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::net::unix::pipe;
use tokio::runtime::Handle;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// What tells a waiter that the process may have ended.
enum Watch {
    Pidfd(AsyncFd<OwnedFd>),
    Sigchld(Signal),
}

impl Watch {
    fn new(pid: Pid) -> io::Result<Watch> {
        match pidfd_open(pid) {
            // SAFETY: an OwnedFd stays open and names the same descriptor until it is
            // dropped with the AsyncFd, and nothing here swaps it.
            Ok(fd) => Ok(Watch::Pidfd(unsafe {
                AsyncFd::register_with_interest(fd, Interest::READABLE)
            }?)),
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => Watch::sigchld(),
            Err(e) => Err(e),
        }
    }

    fn sigchld() -> io::Result<Watch> {
        Ok(Watch::Sigchld(signal(SignalKind::child())?))
    }

    async fn changed(&mut self) -> io::Result<()> {
        match self {
            Watch::Pidfd(fd) => fd.readable().await.map(|mut ready| ready.clear_ready()),
            Watch::Sigchld(sigchld) => {
                // A SIGCHLD can be merged with another or missed while registering;
                // looking again now and then bounds the wait in any case.
                let _ = tokio::time::timeout(Duration::from_secs(1), sigchld.recv()).await;
                Ok(())
            }
        }
    }
}

pub struct Child {
    pid: Pid,
    /// `None` once reaped.
    watch: Option<Watch>,
    runtime: Handle,
    pub stdout: Option<pipe::Receiver>,
    pub stderr: Option<pipe::Receiver>,
}

impl Child {
    /// Takes charge of `pid`, a child of this process not yet reaped; `stdout` and
    /// `stderr` are the read ends of its output pipes.
    pub fn new(pid: Pid, stdout: OwnedFd, stderr: OwnedFd, runtime: &Handle) -> io::Result<Child> {
        let _in_runtime = runtime.enter();
        Ok(Child {
            pid,
            watch: Some(Watch::new(pid)?),
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
        loop {
            let Some(watch) = &mut self.watch else {
                return Err(io::Error::other("the process was already reaped"));
            };
            if let Some(status) = try_reap(self.pid)? {
                self.watch = None;
                return Ok(status);
            }
            watch.changed().await?;
        }
    }
}

impl Drop for Child {
    /// Reaps it in the background if nobody waited, so no zombie is left behind.
    fn drop(&mut self) {
        let Some(watch) = self.watch.take() else {
            return;
        };
        let pid = self.pid;
        let runtime = self.runtime.clone();
        // Already ended: reap now, no task needed.
        if matches!(try_reap(pid), Ok(Some(_)) | Err(_)) {
            return;
        }
        runtime.spawn(async move {
            let mut child = Child {
                pid,
                watch: Some(watch),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launcher::spawn::{dev_null, pipe, spawn, JobCommand, Stdio};

    fn start(script: &str) -> (Pid, OwnedFd, OwnedFd) {
        let (out_r, out_w) = pipe().unwrap();
        let (err_r, err_w) = pipe().unwrap();
        let mut cmd = JobCommand::new("sh");
        cmd.args(["-c", script]);
        let stdio = Stdio {
            stdin: dev_null().unwrap(),
            stdout: out_w,
            stderr: err_w,
        };
        (spawn(&cmd, &stdio).unwrap(), out_r, err_r)
    }

    #[tokio::test]
    async fn waits_through_a_pidfd_or_sigchld() {
        let (pid, out, err) = start("sleep 0.2; exit 3");
        let mut child = Child::new(pid, out, err, &Handle::current()).unwrap();
        assert!(
            matches!(child.watch, Some(Watch::Pidfd(_))),
            "this kernel has pidfds"
        );
        assert_eq!(child.wait().await.unwrap().code(), Some(3));
        assert!(child.wait().await.is_err(), "reaped once");
        // The fallback of kernels before 5.3.
        let (pid, out, err) = start("sleep 0.2; kill -TERM $$");
        let mut child = Child::new(pid, out, err, &Handle::current()).unwrap();
        child.watch = Some(Watch::sigchld().unwrap());
        let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    }

    #[tokio::test]
    async fn a_child_dropped_unwaited_is_reaped() {
        let (pid, out, err) = start("exec sleep 0.2");
        drop(Child::new(pid, out, err, &Handle::current()).unwrap());
        let t0 = std::time::Instant::now();
        // Reaped by the background task: even its zombie is gone.
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            assert!(t0.elapsed() < Duration::from_secs(30), "{pid} never reaped");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
