//! Starting a job's process without copying the agent: `clone(CLONE_VM | CLONE_VFORK)`,
//! the way `posix_spawn` does it.
//!
//! `fork` from the agent copies its page tables and marks every page copy-on-write, then
//! undoes it when the child execs: with a multi-threaded tokio runtime that was about
//! half of the agent's CPU per trivial job, growing with the agent's size. A child that
//! shares the agent's memory and runs only until `execve` costs the same whatever the
//! agent's size. `posix_spawn` itself cannot be used: it has no identity switch and no
//! parent-death signal, and std's `Command` falls back to `fork` for either.
//!
//! The price is discipline in the child ([`child_main`]): it runs on its own small stack
//! in the agent's memory while the calling thread is suspended, so it must not allocate,
//! take a lock, or call a libc wrapper that acts on the agent's other threads (glibc's
//! `setuid`, `setgid` and `setgroups` signal every thread of a multi-threaded process to
//! change its credentials too, which here would be the agent's threads: those three are
//! made as raw system calls). Everything it needs is prepared before the clone.

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::atomic::{AtomicI32, Ordering};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sched::CloneFlags;
use nix::sys::wait::waitpid;
use nix::unistd::Pid;

use super::identity::RunAs;

/// The child's stack: what it runs is a few plain calls deep (the environment and
/// arguments are prepared before, not on it).
const CHILD_STACK: usize = 64 * 1024;

/// What runs a program the kernel cannot execute itself, as execvp does.
const SH: &std::ffi::CStr = c"/bin/sh";

/// The `PATH` searched when the job's environment has none (glibc's default).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// One process to start: like `std::process::Command`, with the job-specific parts (the
/// identity switch, the parent-death signal) built in instead of `pre_exec` closures.
pub struct JobCommand {
    program: OsString,
    args: Vec<OsString>,
    cwd: OsString,
    env: BTreeMap<OsString, OsString>,
    /// `Some(0)`: lead a new group; `Some(g)`: join group `g`.
    pgid: Option<i32>,
    run_as: Option<RunAs>,
    /// SIGKILL when the thread that started it ends; the process that must still be
    /// the parent when this is set, else the start is refused (`ESRCH`).
    die_with: Option<Pid>,
    /// `cgroup.procs` files the child writes `0` to before anything else: it joins its
    /// part's cgroup before it can fork (see `crate::cgroup`).
    cgroup_procs: Vec<std::sync::Arc<OwnedFd>>,
}

impl JobCommand {
    /// `program` with the agent's environment.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        JobCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            cwd: OsString::from("."),
            env: std::env::vars_os().collect(),
            pgid: None,
            run_as: None,
            die_with: None,
            cgroup_procs: Vec::new(),
        }
    }

    /// Joins the cgroup whose `cgroup.procs` files (one per hierarchy) are `files`
    /// before exec.
    pub fn join_cgroup(&mut self, files: &[std::sync::Arc<OwnedFd>]) -> &mut Self {
        self.cgroup_procs = files.to_vec();
        self
    }

    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn current_dir(&mut self, dir: impl AsRef<OsStr>) -> &mut Self {
        self.cwd = dir.as_ref().to_owned();
        self
    }

    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.env
            .insert(key.as_ref().to_owned(), value.as_ref().to_owned());
        self
    }

    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (k, v) in vars {
            self.env(k, v);
        }
        self
    }

    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Self {
        self.env.remove(key.as_ref());
        self
    }

    /// `0`: lead a new process group; otherwise join group `pgid`.
    pub fn process_group(&mut self, pgid: i32) -> &mut Self {
        self.pgid = Some(pgid);
        self
    }

    /// Drop root for `who` (groups, then gid, then uid) before exec.
    pub fn run_as(&mut self, who: &RunAs) -> &mut Self {
        self.run_as = Some(who.clone());
        self
    }

    /// SIGKILL the process when the thread that starts it ends, provided `parent` is
    /// still its parent once that is set up (else the start fails with `ESRCH`).
    pub fn die_with_parent(&mut self, parent: Pid) -> &mut Self {
        self.die_with = Some(parent);
        self
    }
}

/// The standard streams of the started process: stdin is always /dev/null.
pub struct Stdio {
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// What the child reads, all prepared in the parent: C strings and their pointer arrays.
struct Prepared {
    /// Paths to try in order: the program itself if it has a `/`, else one per `PATH`
    /// entry.
    candidates: Vec<CString>,
    _argv: Vec<CString>,
    /// `/bin/sh`, a placeholder for the script's path, then the arguments: a program
    /// the kernel cannot execute (no `#!`) is run by the shell, as execvp does.
    sh_argv_ptrs: Vec<*const libc::c_char>,
    argv_ptrs: Vec<*const libc::c_char>,
    _envp: Vec<CString>,
    envp_ptrs: Vec<*const libc::c_char>,
    cwd: CString,
    pgid: Option<i32>,
    ids: Option<(libc::uid_t, libc::gid_t, Vec<libc::gid_t>)>,
    die_with: Option<libc::pid_t>,
    /// Written `0` to join the part's cgroup.
    cgroup_procs: Vec<libc::c_int>,
    stdio: [libc::c_int; 3],
    /// One past the highest descriptor the child may hold (the soft `RLIMIT_NOFILE`),
    /// for closing them one by one on kernels without `close_range` (before 5.9).
    fd_limit: libc::c_int,
}

fn cstring(s: &OsStr, what: &str) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the job's {what} contains a NUL byte"),
        )
    })
}

fn prepare(cmd: &JobCommand, stdio: &Stdio) -> io::Result<Prepared> {
    let program = cmd.program.as_bytes();
    let candidates = if program.contains(&b'/') {
        vec![cstring(&cmd.program, "program")?]
    } else {
        // Searched in the job's own PATH, as execvp would after the environment change.
        let path = cmd
            .env
            .get(OsStr::new("PATH"))
            .map(|p| p.as_bytes().to_vec())
            .unwrap_or_else(|| DEFAULT_PATH.as_bytes().to_vec());
        path.split(|&b| b == b':')
            .map(|dir| {
                // An empty entry is the working directory.
                let mut full = dir.to_vec();
                if !full.is_empty() {
                    full.push(b'/');
                }
                full.extend_from_slice(program);
                cstring(OsStr::from_bytes(&full), "program")
            })
            .collect::<io::Result<Vec<_>>>()?
    };
    let argv: Vec<CString> = std::iter::once(&cmd.program)
        .chain(&cmd.args)
        .map(|a| cstring(a, "arguments"))
        .collect::<io::Result<_>>()?;
    let envp: Vec<CString> = cmd
        .env
        .iter()
        .map(|(k, v)| {
            let mut kv = k.clone().into_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            CString::new(kv).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the job's environment contains a NUL byte",
                )
            })
        })
        .collect::<io::Result<_>>()?;
    let ptrs = |v: &[CString]| {
        v.iter()
            .map(|c| c.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect::<Vec<_>>()
    };
    Ok(Prepared {
        candidates,
        argv_ptrs: ptrs(&argv),
        sh_argv_ptrs: [SH.as_ptr(), std::ptr::null()]
            .into_iter()
            .chain(ptrs(&argv).into_iter().skip(1))
            .collect(),
        envp_ptrs: ptrs(&envp),
        _argv: argv,
        _envp: envp,
        cwd: cstring(&cmd.cwd, "working directory")?,
        pgid: cmd.pgid,
        ids: cmd.run_as.as_ref().map(|w| {
            (
                w.uid.as_raw(),
                w.gid.as_raw(),
                w.groups.iter().map(|g| g.as_raw()).collect(),
            )
        }),
        die_with: cmd.die_with.map(Pid::as_raw),
        cgroup_procs: cmd.cgroup_procs.iter().map(|f| f.as_raw_fd()).collect(),
        fd_limit: fd_limit(),
        stdio: [
            stdio.stdin.as_raw_fd(),
            stdio.stdout.as_raw_fd(),
            stdio.stderr.as_raw_fd(),
        ],
    })
}

/// Starts `cmd` with `stdio` and returns its pid. Blocks the calling thread until the
/// child has exec'd or failed; a failure (no such program, a missing directory, a
/// refused identity switch) is returned as the child's `errno`, and that child is
/// reaped here. The parent-death signal follows the *calling thread*.
///
/// The calling thread should block every signal (the forker does): a handler of the
/// agent's must never run in the child, which shares the agent's memory.
pub fn spawn(cmd: &JobCommand, stdio: &Stdio) -> io::Result<Pid> {
    let mut prepared = prepare(cmd, stdio)?;
    let failure = AtomicI32::new(0);
    let mut stack = vec![0u8; CHILD_STACK];
    let child = Box::new(|| child_main(&mut prepared, &failure));
    // SAFETY: CLONE_VM | CLONE_VFORK suspends this thread until the child has exec'd or
    // exited, so everything the child borrows (`prepared`, `failure`, `stack`) outlives
    // its use. The child only makes async-signal-safe system calls (see `child_main`),
    // does not allocate, and stays well within its 64 KiB stack; besides `failure` it
    // writes only one slot of `prepared.sh_argv_ptrs`, which the parent reads no more.
    let pid = unsafe {
        nix::sched::clone(
            child,
            &mut stack,
            CloneFlags::CLONE_VM | CloneFlags::CLONE_VFORK,
            Some(libc::SIGCHLD),
        )
    }
    .map_err(io::Error::from)?;
    let errno = failure.load(Ordering::Acquire);
    if errno != 0 {
        // It has exited (or is about to); it is ours to reap.
        let _ = waitpid(pid, None);
        return Err(io::Error::from_raw_os_error(errno));
    }
    Ok(pid)
}

/// The child between clone and exec. Returns only on failure (its exit status, 127),
/// with `failure` set to the errno; the parent reads it once it resumes.
fn child_main(p: &mut Prepared, failure: &AtomicI32) -> isize {
    let fail = |errno: i32| -> isize {
        failure.store(errno.max(1), Ordering::Release);
        127
    };
    let errno = || Errno::last_raw();
    // SAFETY (for the whole body): every call is a plain system call on memory prepared
    // by the parent, which stays valid while the parent is suspended (CLONE_VFORK).
    unsafe {
        // The handlers are the agent's (in shared memory): back to the defaults before
        // any signal is let through. What the agent ignores stays ignored, except
        // SIGPIPE, which Rust ignores for itself (as std's Command does). One call per
        // signal sets the default and reads what was there; only an ignored one takes a
        // second call to be ignored again (this loop runs while the agent's thread is
        // suspended, for every job).
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        for sig in 1..=libc::SIGRTMAX() {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, &dfl, &mut old) != 0 {
                continue; // signals reserved by libc
            }
            if old.sa_sigaction == libc::SIG_IGN && sig != libc::SIGPIPE {
                libc::sigaction(sig, &old, std::ptr::null_mut());
            }
        }
        // Into the part's cgroup first, as root (the files are root's), before it runs
        // anything of the job's: whatever it forks later is born inside.
        for &fd in &p.cgroup_procs {
            if libc::write(fd, c"0".as_ptr().cast(), 1) != 1 {
                return fail(errno());
            }
        }
        if let Some(pgid) = p.pgid {
            if libc::setpgid(0, pgid) != 0 {
                return fail(errno());
            }
        }
        for (target, &fd) in p.stdio.iter().enumerate() {
            let target = target as libc::c_int;
            if fd == target {
                // dup2 onto itself would keep close-on-exec set.
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return fail(errno());
                }
            } else if libc::dup2(fd, target) < 0 {
                return fail(errno());
            }
        }
        // Nothing of the agent's reaches the job but these three: a descriptor it
        // inherited without close-on-exec (a pipe of the shell that started it), or one
        // another thread opened without it, would otherwise pass to every job, which
        // runs as another user. The descriptor table is the child's own (no
        // CLONE_FILES), so this closes nothing of the agent's.
        if libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            0,
        ) != 0
        {
            for fd in 3..p.fd_limit {
                libc::close(fd);
            }
        }
        if libc::chdir(p.cwd.as_ptr()) != 0 {
            return fail(errno());
        }
        if let Some((uid, gid, groups)) = &p.ids {
            // Raw calls: glibc's wrappers would change the agent's threads too.
            if libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) != 0
                || libc::syscall(libc::SYS_setgid, *gid) != 0
                || libc::syscall(libc::SYS_setuid, *uid) != 0
            {
                return fail(errno());
            }
        }
        // After the identity switch, which clears the parent-death signal.
        if let Some(parent) = p.die_with {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return fail(errno());
            }
            // The parent may have died before the line above took effect; the signal
            // would then never come, so give up now instead.
            if libc::getppid() != parent {
                return fail(libc::ESRCH);
            }
        }
        let none: libc::sigset_t = {
            let mut s = std::mem::zeroed();
            libc::sigemptyset(&mut s);
            s
        };
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        // execvp's search: go on past entries that do not have it, remember a
        // permission problem, stop at any other error.
        let mut last = libc::ENOENT;
        let mut denied = false;
        for path in &p.candidates {
            libc::execve(path.as_ptr(), p.argv_ptrs.as_ptr(), p.envp_ptrs.as_ptr());
            last = errno();
            if last == libc::ENOEXEC {
                p.sh_argv_ptrs[1] = path.as_ptr();
                libc::execve(SH.as_ptr(), p.sh_argv_ptrs.as_ptr(), p.envp_ptrs.as_ptr());
                last = errno();
            }
            match last {
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
                _ => return fail(last),
            }
        }
        fail(if denied { libc::EACCES } else { last })
    }
}

/// The soft descriptor limit, the bound of the child's close loop where `close_range`
/// is missing; 65,536 where it cannot be read or is unlimited.
fn fd_limit() -> libc::c_int {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct it is given.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    match limit.rlim_cur {
        soft if read && soft < libc::c_int::MAX as libc::rlim_t => soft as libc::c_int,
        _ => 65_536,
    }
}

/// A pipe whose read end the agent keeps (close-on-exec) and whose write end the child
/// gets as a standard stream.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(io::Error::from)
}

/// /dev/null for reading, close-on-exec.
pub fn dev_null() -> io::Result<OwnedFd> {
    Ok(std::fs::File::open("/dev/null")?.into())
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;

    use nix::sys::signal::Signal;
    use nix::sys::wait::WaitStatus;

    use super::*;

    /// Runs `cmd` to its end: its exit status and its stdout.
    fn run(cmd: &JobCommand) -> io::Result<(WaitStatus, String)> {
        let (out_r, out_w) = pipe()?;
        let (_err_r, err_w) = pipe()?;
        let stdio = Stdio {
            stdin: dev_null()?,
            stdout: out_w,
            stderr: err_w,
        };
        let pid = spawn(cmd, &stdio)?;
        drop(stdio);
        let mut out = String::new();
        std::fs::File::from(out_r).read_to_string(&mut out)?;
        Ok((waitpid(pid, None)?, out))
    }

    fn sh(script: &str) -> JobCommand {
        let mut cmd = JobCommand::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    #[test]
    fn runs_the_program_found_in_the_jobs_path_with_its_env_and_dir() {
        let mut cmd = sh("echo \"$GREETING $(pwd)\"; exit 7");
        cmd.env("GREETING", "hello").current_dir("/tmp");
        let (status, out) = run(&cmd).unwrap();
        assert!(matches!(status, WaitStatus::Exited(_, 7)), "{status:?}");
        assert_eq!(out, "hello /tmp\n");
        // The search uses the job's PATH, not the agent's.
        let mut cmd = sh("true");
        cmd.env("PATH", "/nonexistent");
        let err = run(&cmd).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT), "{err}");
        cmd.env_remove("GREETING")
            .env("PATH", "/nonexistent:/usr/bin:/bin");
        assert!(matches!(run(&cmd).unwrap().0, WaitStatus::Exited(_, 0)));
    }

    #[test]
    fn failures_before_exec_are_the_childs_errno() {
        let missing = run(&JobCommand::new("/no/such/program")).unwrap_err();
        assert_eq!(missing.raw_os_error(), Some(libc::ENOENT), "{missing}");
        let mut cmd = JobCommand::new("/bin/true");
        cmd.current_dir("/no/such/dir");
        let no_dir = run(&cmd).unwrap_err();
        assert_eq!(no_dir.raw_os_error(), Some(libc::ENOENT), "{no_dir}");
        // Not executable: permission denied, also when found through PATH.
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("job.sh");
        std::fs::write(&script, "#!/bin/sh\ntrue\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
        // (Even root needs an execute bit to exec.)
        let denied = run(&JobCommand::new(&script)).unwrap_err();
        assert_eq!(denied.raw_os_error(), Some(libc::EACCES), "{denied}");
        let mut cmd = JobCommand::new("job.sh");
        cmd.env("PATH", format!("/nonexistent:{}", dir.path().display()));
        let denied = run(&cmd).unwrap_err();
        assert_eq!(denied.raw_os_error(), Some(libc::EACCES), "{denied}");
    }

    #[test]
    fn the_job_inherits_only_its_three_standard_descriptors() {
        // A descriptor of the agent's without close-on-exec, as one inherited from the
        // shell that started it (dup does not set the flag), high like that one was.
        let file = std::fs::File::open("/dev/null").unwrap();
        let stray = nix::unistd::dup(file.as_raw_fd()).unwrap();
        let high = nix::fcntl::fcntl(stray, nix::fcntl::FcntlArg::F_DUPFD(251)).unwrap();
        // The shell's own descriptors are what it lists ($$: not ls's directory).
        let (status, out) = run(&sh("ls /proc/$$/fd")).unwrap();
        nix::unistd::close(stray).unwrap();
        nix::unistd::close(high).unwrap();
        assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
        let fds: Vec<&str> = out.split_whitespace().collect();
        assert_eq!(fds, ["0", "1", "2"], "the job's descriptors: {out}");
    }

    #[test]
    fn a_script_without_a_shebang_runs_in_sh() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("plain");
        std::fs::write(&script, "echo \"via sh: $1\"\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut cmd = JobCommand::new(&script);
        cmd.args(["one"]);
        let (status, out) = run(&cmd).unwrap();
        assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
        assert_eq!(out, "via sh: one\n");
        // Through PATH too.
        let mut cmd = JobCommand::new("plain");
        cmd.args(["two"]).env("PATH", dir.path());
        assert_eq!(run(&cmd).unwrap().1, "via sh: two\n");
    }

    #[test]
    fn leads_or_joins_a_process_group() {
        let (out_r, out_w) = pipe().unwrap();
        let (_e, err_w) = pipe().unwrap();
        let stdio = Stdio {
            stdin: dev_null().unwrap(),
            stdout: out_w,
            stderr: err_w,
        };
        let quiet = Stdio {
            stdin: dev_null().unwrap(),
            stdout: dev_null().unwrap(),
            stderr: dev_null().unwrap(),
        };
        let mut sleeper = JobCommand::new("sleep");
        sleeper.args(["30"]).process_group(0);
        let lead = spawn(&sleeper, &quiet).unwrap();
        let mut member = sh("cat /proc/self/stat");
        member.process_group(lead.as_raw());
        let pid = spawn(&member, &stdio).unwrap();
        drop(stdio);
        let mut out = String::new();
        std::fs::File::from(out_r).read_to_string(&mut out).unwrap();
        let _ = waitpid(pid, None);
        nix::sys::signal::kill(lead, Signal::SIGKILL).unwrap();
        let _ = waitpid(lead, None);
        // Field 5 of /proc/PID/stat (after the name in parentheses) is the group.
        let pgrp: i32 = out[out.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .nth(2)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(pgrp, lead.as_raw(), "{out}");
    }

    #[test]
    fn dies_with_the_thread_that_started_it() {
        let started = std::thread::spawn(|| {
            let stdio = Stdio {
                stdin: dev_null().unwrap(),
                stdout: dev_null().unwrap(),
                stderr: dev_null().unwrap(),
            };
            let mut cmd = JobCommand::new("sleep");
            cmd.args(["60"]).die_with_parent(nix::unistd::getpid());
            spawn(&cmd, &stdio).unwrap()
        })
        .join()
        .unwrap();
        // The thread has ended: the kernel kills the child, long before its 60 s.
        let t0 = std::time::Instant::now();
        let status = waitpid(started, None).unwrap();
        assert_eq!(
            status,
            WaitStatus::Signaled(started, Signal::SIGKILL, false)
        );
        assert!(t0.elapsed() < std::time::Duration::from_secs(30));
        // A parent that is not ours: refused before exec.
        let mut cmd = JobCommand::new("/bin/true");
        cmd.die_with_parent(Pid::from_raw(1));
        let err = run(&cmd).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ESRCH), "{err}");
    }

    #[test]
    fn takes_the_jobs_identity_and_leaves_the_agents_threads_alone() {
        if !nix::unistd::geteuid().is_root() {
            return; // only root can switch; the non-root agent never does
        }
        let Some(who) = super::super::identity::resolve("nobody", false).unwrap() else {
            return;
        };
        let groups_before = nix::unistd::getgroups().unwrap();
        // A second thread, to see that only the child changed credentials (glibc's
        // setuid would have changed every thread of the process sharing its memory).
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            let _ = rx.recv();
            nix::unistd::geteuid()
        });
        let mut cmd = sh("echo $(id -u) $(id -g) $(id -G)");
        cmd.run_as(&who);
        let (status, out) = run(&cmd).unwrap();
        assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
        let ids: Vec<u32> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
        assert_eq!(ids[0], who.uid.as_raw(), "{out}");
        assert_eq!(ids[1], who.gid.as_raw(), "{out}");
        let mut want: Vec<u32> = who.groups.iter().map(|g| g.as_raw()).collect();
        want.push(who.gid.as_raw());
        want.sort_unstable();
        want.dedup();
        let mut got = ids[2..].to_vec();
        got.sort_unstable();
        got.dedup();
        assert_eq!(got, want, "{out}");
        tx.send(()).unwrap();
        assert!(other.join().unwrap().is_root(), "another thread lost root");
        assert!(nix::unistd::geteuid().is_root() && nix::unistd::getegid().as_raw() == 0);
        assert_eq!(nix::unistd::getgroups().unwrap(), groups_before);
    }
}
