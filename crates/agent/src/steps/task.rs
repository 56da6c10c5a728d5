//! One task of a step: its process, as the job's user, in the job's cgroup, in a
//! session of its own (so a signal reaches everything it started), dying with the
//! agent; on pipes, or on a pseudo-terminal it controls (`--pty`). Its output comes
//! back as events on a channel, its end last, after all its output.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Stdio;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use gpusched_wire::step::TaskEnd;

use crate::launcher::identity::RunAs;
use crate::launcher::StepCgroup;

/// What a task sends back.
pub enum Out {
    Stdout(u32, Vec<u8>),
    Stderr(u32, Vec<u8>),
    Ended(u32, TaskEnd),
}

/// What the step sends a task.
pub enum In {
    Stdin(Vec<u8>),
    StdinEof,
    Resize(u16, u16),
}

/// How to start a task.
pub struct TaskSpec {
    pub rank: u32,
    pub command: Vec<String>,
    pub cwd: String,
    pub env: Vec<(String, String)>,
    pub run_as: Option<RunAs>,
    pub cgroup: Option<StepCgroup>,
    /// A pseudo-terminal of this size (cols, rows), or pipes.
    pub pty: Option<(u16, u16)>,
}

/// A started task: its process group, and where its input goes.
pub struct Task {
    pub pgid: Pid,
    pub input: mpsc::UnboundedSender<In>,
}

impl Task {
    pub fn signal(&self, sig: Signal) {
        let _ = killpg(self.pgid, sig);
    }
}

/// Starts the task; its output and end go to `out`.
pub fn start(spec: TaskSpec, out: mpsc::UnboundedSender<Out>) -> Result<Task, String> {
    let program = spec
        .command
        .first()
        .ok_or("the step has no command")?
        .clone();
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(&spec.command[1..])
        .current_dir(&spec.cwd)
        .env_remove("GPUSCHED_JOIN_TOKEN")
        .env_remove("GPUSCHED_TOKEN")
        .envs(spec.env.iter().cloned())
        .kill_on_drop(false);
    // A pty: the child's three streams are its slave side, the agent keeps the master.
    let mut master: Option<OwnedFd> = None;
    if let Some((cols, rows)) = spec.pty {
        let ws = nix::pty::Winsize {
            ws_row: if rows == 0 { 24 } else { rows },
            ws_col: if cols == 0 { 80 } else { cols },
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = nix::pty::openpty(Some(&ws), None).map_err(|e| format!("openpty: {e}"))?;
        let slave = std::fs::File::from(pty.slave);
        cmd.stdin(slave.try_clone().map_err(|e| e.to_string())?)
            .stdout(slave.try_clone().map_err(|e| e.to_string())?)
            .stderr(slave);
        master = Some(pty.master);
    } else {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    }
    let ids = spec.run_as.as_ref().map(|r| {
        (
            r.groups.iter().map(|g| g.as_raw()).collect::<Vec<_>>(),
            r.gid.as_raw(),
            r.uid.as_raw(),
        )
    });
    let cgroup: Vec<i32> = spec
        .cgroup
        .as_ref()
        .map(|files| files.iter().map(|f| f.as_raw_fd()).collect())
        .unwrap_or_default();
    let pty = spec.pty.is_some();
    let parent = nix::unistd::getpid().as_raw();
    // SAFETY: only async-signal-safe system calls between fork and exec, on data
    // prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            // Into the job's cgroup first, while still able to (the fds were opened by
            // the agent).
            for fd in &cgroup {
                if libc::write(*fd, b"0".as_ptr().cast(), 1) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if pty && libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some((groups, gid, uid)) = &ids {
                if libc::setgroups(groups.len() as _, groups.as_ptr()) < 0
                    || libc::setgid(*gid) < 0
                    || libc::setuid(*uid) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // Dies with the agent, as its job does; the agent may be gone already.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "cannot start {program:?}: {e}{}",
            if e.kind() == std::io::ErrorKind::NotFound {
                " (not found in the job's PATH or directory)"
            } else {
                ""
            }
        )
    })?;
    // The parent's copies of the slave go, so the master reads EOF once the task's
    // processes close it.
    drop(cmd);
    let pid = child
        .id()
        .ok_or("the task exited before it could be watched")? as i32;
    let pgid = Pid::from_raw(pid);
    let rank = spec.rank;
    let (input, mut input_rx) = mpsc::unbounded_channel::<In>();
    match master {
        Some(master) => {
            // A pty master is read and written on threads of its own: blocking reads
            // end with EIO once every process of the task closed its terminal.
            let mut reader = std::fs::File::from(master);
            let mut writer = reader.try_clone().map_err(|e| e.to_string())?;
            let fd = writer.as_raw_fd();
            let (read_done_tx, read_done_rx) = tokio::sync::oneshot::channel::<()>();
            let out2 = out.clone();
            std::thread::Builder::new()
                .name(format!("step-pty-{rank}"))
                .spawn(move || {
                    let mut buf = vec![0u8; 16 * 1024];
                    loop {
                        match reader.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                let _ = out2.send(Out::Stdout(rank, buf[..n].to_vec()));
                            }
                        }
                    }
                    let _ = read_done_tx.send(());
                })
                .map_err(|e| e.to_string())?;
            std::thread::Builder::new()
                .name(format!("step-pty-in-{rank}"))
                .spawn(move || {
                    while let Some(i) = input_rx.blocking_recv() {
                        match i {
                            In::Stdin(d) => {
                                if writer.write_all(&d).is_err() {
                                    break;
                                }
                            }
                            // A terminal's end of input is the user's Ctrl-D, a byte.
                            In::StdinEof => {}
                            In::Resize(cols, rows) => {
                                let ws = libc::winsize {
                                    ws_row: rows,
                                    ws_col: cols,
                                    ws_xpixel: 0,
                                    ws_ypixel: 0,
                                };
                                // SAFETY: TIOCSWINSZ reads one winsize from the pointer,
                                // on a descriptor this thread's `writer` keeps open.
                                unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, &ws) };
                            }
                        }
                    }
                })
                .map_err(|e| e.to_string())?;
            tokio::spawn(async move {
                let status = child.wait().await;
                // Output the task wrote before it ended comes first.
                let _ = tokio::time::timeout(std::time::Duration::from_secs(5), read_done_rx).await;
                let _ = out.send(Out::Ended(rank, end_of(status)));
            });
        }
        None => {
            let mut stdin = child.stdin.take();
            let stdout = child.stdout.take();
            let stderr = child.stderr.take();
            let o1 = copy(stdout, out.clone(), rank, false);
            let o2 = copy(stderr, out.clone(), rank, true);
            tokio::spawn(async move {
                while let Some(i) = input_rx.recv().await {
                    match i {
                        In::Stdin(d) => {
                            if let Some(s) = stdin.as_mut() {
                                if s.write_all(&d).await.is_err() {
                                    stdin = None;
                                }
                            }
                        }
                        In::StdinEof => stdin = None,
                        In::Resize(..) => {}
                    }
                }
            });
            tokio::spawn(async move {
                let status = child.wait().await;
                let _ = o1.await;
                let _ = o2.await;
                let _ = out.send(Out::Ended(rank, end_of(status)));
            });
        }
    }
    Ok(Task { pgid, input })
}

/// Copies one output pipe to `out` until it closes.
fn copy<R: tokio::io::AsyncRead + Unpin + Send + 'static>(
    pipe: Option<R>,
    out: mpsc::UnboundedSender<Out>,
    rank: u32,
    err: bool,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let Some(mut pipe) = pipe else { return };
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let d = buf[..n].to_vec();
                    let _ = out.send(if err {
                        Out::Stderr(rank, d)
                    } else {
                        Out::Stdout(rank, d)
                    });
                }
            }
        }
    })
}

fn end_of(status: std::io::Result<std::process::ExitStatus>) -> TaskEnd {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(s) => TaskEnd {
            code: s.code(),
            signal: s.signal(),
        },
        Err(_) => TaskEnd {
            code: None,
            signal: None,
        },
    }
}
