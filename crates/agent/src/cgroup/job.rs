//! One part's cgroup: made with its limits before the part starts, joined by each of
//! its processes before they exec, killed whole when the part ends, read for what it
//! used, then removed.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpusched_wire::contain::Usage;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::limits::{v1_writes, v2_writes, PartLimits};
use super::usage::{keyed, number, pressure_total_us};
use super::Layout;

/// Job cgroups are named `job-<job>.<attempt>`; nothing else in the agent's directory
/// is touched.
pub fn is_job_name(name: &str) -> bool {
    name.strip_prefix("job-").is_some_and(|rest| {
        let mut it = rest.splitn(2, '.');
        matches!((it.next(), it.next()), (Some(j), Some(a))
            if !j.is_empty() && !a.is_empty()
                && j.bytes().all(|b| b.is_ascii_digit())
                && a.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// How long a kill waits for the cgroup to empty before saying so (a process in
/// uninterruptible sleep, on a hung file system, leaves only when the kernel lets it).
const EMPTY_WAIT: Duration = Duration::from_secs(10);

/// How long a freeze may take before the kill goes on without it.
const FREEZE_WAIT: Duration = Duration::from_secs(2);

#[derive(Clone, Debug)]
enum Kind {
    V1 {
        /// One per hierarchy (co-mounted controllers share one), with the controllers
        /// it serves.
        dirs: Vec<(Vec<&'static str>, PathBuf)>,
    },
    V2 {
        dir: PathBuf,
        kill_file: bool,
    },
}

#[derive(Clone, Debug)]
pub struct JobCgroup {
    kind: Kind,
    /// The memory limit, to say what an out-of-memory part passed.
    mem_limit: Option<u64>,
}

impl JobCgroup {
    pub(super) fn create(
        layout: &Layout,
        name: &str,
        limits: &PartLimits,
    ) -> std::io::Result<JobCgroup> {
        let cg = Self::at(layout, name, |c| v1_needed(c, limits));
        let dirs = cg.dirs();
        for d in &dirs {
            match std::fs::create_dir(d) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    cg.remove();
                    return Err(with_path(e, "cannot make", d));
                }
            }
        }
        let writes = match layout {
            Layout::V1 { memsw, .. } => v1_writes(limits, *memsw),
            Layout::V2 { controllers, .. } => v2_writes(limits, controllers),
        };
        for w in writes {
            let Some(dir) = cg.dir_of(w.controller) else {
                continue;
            };
            let file = dir.join(w.file);
            if let Err(e) = std::fs::write(&file, &w.value) {
                cg.remove();
                return Err(with_path(
                    e,
                    &format!("cannot write {:?} to", w.value),
                    &file,
                ));
            }
        }
        Ok(JobCgroup {
            mem_limit: limits.mem_bytes,
            ..cg
        })
    }

    /// The part's cgroup of an earlier life, in whichever hierarchies it was made.
    pub(super) fn existing(layout: &Layout, name: &str) -> Option<JobCgroup> {
        let all = Self::at(layout, name, |_| true);
        let kind = match all.kind {
            Kind::V1 { dirs } => Kind::V1 {
                dirs: dirs.into_iter().filter(|(_, d)| d.is_dir()).collect(),
            },
            v2 => v2,
        };
        let cg = JobCgroup { kind, ..all };
        cg.procs_dir().is_dir().then_some(cg)
    }

    /// The part's directories, in the v1 hierarchies `wanted` (v2 has one).
    fn at(layout: &Layout, name: &str, wanted: impl Fn(&str) -> bool) -> JobCgroup {
        let kind = match layout {
            Layout::V1 { dirs, .. } => {
                let mut out: Vec<(Vec<&'static str>, PathBuf)> = Vec::new();
                for (c, parent) in dirs.iter().filter(|(c, _)| wanted(c)) {
                    let d = parent.join(name);
                    match out.iter_mut().find(|(_, p)| *p == d) {
                        Some((cs, _)) => cs.push(c),
                        None => out.push((vec![c], d)),
                    }
                }
                Kind::V1 { dirs: out }
            }
            Layout::V2 { dir, kill_file, .. } => Kind::V2 {
                dir: dir.join(name),
                kill_file: *kill_file,
            },
        };
        JobCgroup {
            kind,
            mem_limit: None,
        }
    }

    fn dirs(&self) -> Vec<PathBuf> {
        match &self.kind {
            Kind::V1 { dirs } => dirs.iter().map(|(_, d)| d.clone()).collect(),
            Kind::V2 { dir, .. } => vec![dir.clone()],
        }
    }

    /// The directory of `controller` (`""`: v2's one directory).
    fn dir_of(&self, controller: &str) -> Option<&Path> {
        match &self.kind {
            Kind::V1 { dirs } => dirs
                .iter()
                .find(|(cs, _)| cs.contains(&controller))
                .map(|(_, d)| d.as_path()),
            Kind::V2 { dir, .. } => Some(dir),
        }
    }

    /// Where the part's process list is read: the freezer's directory on v1 (the
    /// hierarchy that stops it), else the first.
    fn procs_dir(&self) -> PathBuf {
        match &self.kind {
            Kind::V1 { dirs } => self
                .dir_of("freezer")
                .map(Path::to_path_buf)
                .or_else(|| dirs.first().map(|(_, d)| d.clone()))
                .unwrap_or_default(),
            Kind::V2 { dir, .. } => dir.clone(),
        }
    }

    /// `cgroup.procs` of each of its directories, open for writing (close-on-exec): a
    /// process that writes `0` to each joins the cgroup (see `spawn.rs`).
    pub fn procs_files(&self) -> std::io::Result<Vec<OwnedFd>> {
        self.dirs()
            .iter()
            .map(|d| {
                let file = d.join("cgroup.procs");
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&file)
                    .map(OwnedFd::from)
                    .map_err(|e| with_path(e, "cannot open", &file))
            })
            .collect()
    }

    /// The processes in it now.
    ///
    /// Its child cgroups' too: a container runtime makes one for its container inside
    /// the part's (`libpod-<id>`), and each cgroup lists only its own processes.
    pub fn pids(&self) -> Vec<i32> {
        tree(&self.procs_dir())
            .iter()
            .flat_map(|d| {
                std::fs::read_to_string(d.join("cgroup.procs"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .filter(|&p: &i32| p > 1)
                    .collect::<Vec<i32>>()
            })
            .collect()
    }

    /// Whether its own directory lists no process (its child cgroups are not looked
    /// at: listing a cgroup's directory walks all its control files). A part without a
    /// container runtime has no child cgroups, so this is its end's cheap look; a
    /// removal that finds children anyway goes through the full kill.
    pub fn own_procs_empty(&self) -> bool {
        read(&self.procs_dir().join("cgroup.procs"))
            .trim()
            .is_empty()
    }

    /// Sends `signal` to every process in it (SIGTERM to a daemon that left the job's
    /// process group, so it may clean up before the kill).
    pub fn signal_all(&self, signal: Signal) {
        for pid in self.pids() {
            let _ = kill(Pid::from_raw(pid), signal);
        }
    }

    /// Ends every process in it, however it daemonised, and waits (bounded) until it
    /// is empty. On v2 with `cgroup.kill` the kernel does it in one write; otherwise the
    /// cgroup is frozen first so nothing forks between reading the list and killing.
    /// Blocks (sleeps between looks): the supervisor calls it on a blocking thread.
    pub fn kill_all_blocking(&self) -> std::io::Result<()> {
        // The usual end: the part's processes ended with it (its group was killed), so
        // nothing is left to freeze.
        if self.pids().is_empty() {
            return Ok(());
        }
        match &self.kind {
            Kind::V2 {
                dir,
                kill_file: true,
            } => std::fs::write(dir.join("cgroup.kill"), "1")?,
            Kind::V2 { dir, .. } => {
                let frozen = std::fs::write(dir.join("cgroup.freeze"), "1").is_ok()
                    && wait_for(FREEZE_WAIT, || {
                        keyed(&read(&dir.join("cgroup.events")), "frozen") == Some(1)
                    });
                self.signal_all(Signal::SIGKILL);
                if frozen {
                    let _ = std::fs::write(dir.join("cgroup.freeze"), "0");
                }
            }
            Kind::V1 { .. } => {
                if let Some(f) = self.dir_of("freezer").map(Path::to_path_buf) {
                    let state = f.join("freezer.state");
                    let frozen = std::fs::write(&state, "FROZEN").is_ok()
                        && wait_for(FREEZE_WAIT, || read(&state).trim() == "FROZEN");
                    self.signal_all(Signal::SIGKILL);
                    // A frozen process dies only once thawed.
                    let _ = std::fs::write(&state, "THAWED");
                    if !frozen {
                        tracing::warn!("could not freeze {} before killing it", f.display());
                    }
                }
            }
        }
        // Without a freezer (or if one round raced a fork), rounds until it is empty.
        let emptied = wait_for(EMPTY_WAIT, || {
            let left = self.pids();
            for &pid in &left {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            left.is_empty()
        });
        if emptied {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "processes {:?} are still in {} {} s after SIGKILL",
                self.pids(),
                self.procs_dir().display(),
                EMPTY_WAIT.as_secs()
            )))
        }
    }

    /// What the part used; and how many of its processes the kernel killed for memory.
    pub fn usage(&self) -> (Usage, u64) {
        match &self.kind {
            Kind::V1 { .. } => {
                let file =
                    |c: &str, f: &str| self.dir_of(c).map(|d| read(&d.join(f))).unwrap_or_default();
                let cpu_ns = number(&file("cpuacct", "cpuacct.usage")).unwrap_or(0);
                let usage = Usage {
                    cpu_ms: cpu_ns / 1_000_000,
                    mem_peak_bytes: number(&file("memory", "memory.max_usage_in_bytes")),
                    cpu_pressure_ms: None,
                    mem_pressure_ms: None,
                };
                let oom = keyed(&file("memory", "memory.oom_control"), "oom_kill").unwrap_or(0);
                (usage, oom)
            }
            Kind::V2 { dir, .. } => {
                let f = |name: &str| read(&dir.join(name));
                let usage = Usage {
                    cpu_ms: keyed(&f("cpu.stat"), "usage_usec").unwrap_or(0) / 1000,
                    mem_peak_bytes: number(&f("memory.peak")),
                    cpu_pressure_ms: pressure_total_us(&f("cpu.pressure")).map(|us| us / 1000),
                    mem_pressure_ms: pressure_total_us(&f("memory.pressure")).map(|us| us / 1000),
                };
                let oom = keyed(&f("memory.events"), "oom_kill").unwrap_or(0);
                (usage, oom)
            }
        }
    }

    /// The memory its processes hold now (for the metrics).
    pub fn memory_now(&self) -> Option<u64> {
        match &self.kind {
            Kind::V1 { .. } => number(&read(&self.dir_of("memory")?.join("memory.usage_in_bytes"))),
            Kind::V2 { dir, .. } => number(&read(&dir.join("memory.current"))),
        }
    }

    pub fn mem_limit(&self) -> Option<u64> {
        self.mem_limit
    }

    /// Removes its directories if the kernel lets go of them at once; false if one is
    /// still busy (then [`JobCgroup::remove`] retries).
    pub fn try_remove_now(&self) -> bool {
        let mut done = true;
        for top in self.dirs() {
            // Most parts have no child cgroups (a container runtime's are the usual
            // ones): the directory goes at once, without listing its control files.
            if remove_one(&top).is_some_and(|gone| gone) {
                continue;
            }
            for d in tree(&top) {
                match remove_one(&d) {
                    Some(true) => {}
                    Some(false) => done = false,
                    None => {}
                }
            }
        }
        done
    }

    /// Removes its directories (empty once its processes are gone; the kernel may take
    /// a moment after the last exit, so a busy one is tried again).
    pub fn remove(&self) {
        for top in self.dirs() {
            if remove_one(&top).is_some_and(|gone| gone) {
                continue;
            }
            remove_tree(&top);
        }
    }
}

/// Removes `top` and the cgroups under it, deepest first, a busy one tried again for a
/// moment.
fn remove_tree(top: &Path) {
    for d in tree(top) {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            match std::fs::remove_dir(&d) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) if Instant::now() < deadline && e.raw_os_error() == Some(libc::EBUSY) => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => {
                    tracing::warn!("cannot remove the job cgroup {}: {e}", d.display());
                    break;
                }
            }
        }
    }
}

/// Whether a part with `limits` needs a directory in v1 controller `c`'s hierarchy:
/// memory (its peak, and an out-of-memory kill seen), cpuacct (its CPU time) and
/// freezer (a kill nothing escapes) always; the others only for a limit of theirs. Each
/// hierarchy costs a job a `mkdir`, a join and an `rmdir` (a 10,000-task array ran at
/// half its rate with all seven).
fn v1_needed(c: &str, limits: &PartLimits) -> bool {
    match c {
        "memory" | "cpuacct" | "freezer" => true,
        "cpu" => limits.cpu_milli.is_some(),
        "cpuset" => limits.cores.is_some(),
        "pids" => limits.pids_max.is_some(),
        "devices" => !limits.deny_devices.is_empty(),
        _ => true,
    }
}

/// Removes one cgroup directory: `Some(true)` if it is gone (or was), `Some(false)` if
/// the kernel still holds it (`EBUSY`: processes leaving, or child cgroups), `None`
/// after another error (logged).
fn remove_one(d: &Path) -> Option<bool> {
    match std::fs::remove_dir(d) {
        Ok(()) => Some(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(true),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Some(false),
        Err(e) => {
            tracing::warn!("cannot remove the job cgroup {}: {e}", d.display());
            None
        }
    }
}

/// `dir` and the cgroups under it, deepest first (the order they can be removed in).
pub(super) fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(tree(&e.path()));
            }
        }
    }
    out.push(dir.to_path_buf());
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn with_path(e: std::io::Error, what: &str, path: &Path) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}

/// Polls `done` until it holds or `bound` passes; whether it held.
fn wait_for(bound: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + bound;
    let mut pause = Duration::from_millis(1);
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A container runtime's cgroup inside the part's is listed before the part's own,
    /// so removing them in order works.
    #[test]
    fn child_cgroups_come_first() {
        let tmp = tempfile::tempdir().unwrap();
        let part = tmp.path().join("job-1.1");
        std::fs::create_dir_all(part.join("libpod-abc/inner")).unwrap();
        std::fs::write(part.join("cgroup.procs"), "").unwrap();
        assert_eq!(
            tree(&part),
            [
                part.join("libpod-abc/inner"),
                part.join("libpod-abc"),
                part.clone()
            ]
        );
    }

    #[test]
    fn only_job_directories_are_the_agents_to_touch() {
        assert!(is_job_name("job-12.3"));
        assert!(!is_job_name("job-12"));
        assert!(!is_job_name("job-.3"));
        assert!(!is_job_name("job-1.2x"));
        assert!(!is_job_name("agent"));
    }

    /// On a v2 layout the limits land in the part's one directory, and what it used is
    /// read from the kernel's files there.
    #[test]
    fn a_v2_part_gets_its_limits_and_reads_its_usage() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::V2 {
            dir: tmp.path().to_path_buf(),
            controllers: ["memory", "pids"].into_iter().map(String::from).collect(),
            kill_file: true,
        };
        let limits = PartLimits {
            mem_bytes: Some(1 << 30),
            cpu_milli: Some(500),
            pids_max: Some(64),
            ..PartLimits::default()
        };
        let cg = JobCgroup::create(&layout, "job-7.1", &limits).unwrap();
        let dir = tmp.path().join("job-7.1");
        assert_eq!(
            std::fs::read_to_string(dir.join("memory.max")).unwrap(),
            "1073741824"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("memory.swap.max")).unwrap(),
            "0"
        );
        assert_eq!(std::fs::read_to_string(dir.join("pids.max")).unwrap(), "64");
        // No cpu controller: no cpu.max written.
        assert!(!dir.join("cpu.max").exists());
        std::fs::write(dir.join("cpu.stat"), "usage_usec 1500000\nuser_usec 1\n").unwrap();
        std::fs::write(dir.join("memory.peak"), "268435456\n").unwrap();
        std::fs::write(dir.join("memory.events"), "oom 1\noom_kill 1\n").unwrap();
        std::fs::write(
            dir.join("cpu.pressure"),
            "some avg10=0 avg60=0 avg300=0 total=25000\nfull avg10=0 avg60=0 avg300=0 total=0\n",
        )
        .unwrap();
        let (usage, oom) = cg.usage();
        assert_eq!(
            usage,
            Usage {
                cpu_ms: 1500,
                mem_peak_bytes: Some(256 << 20),
                cpu_pressure_ms: Some(25),
                mem_pressure_ms: None,
            }
        );
        assert_eq!(oom, 1);
        assert_eq!(cg.mem_limit(), Some(1 << 30));
        std::fs::write(dir.join("cgroup.procs"), "").unwrap();
        assert_eq!(cg.procs_files().unwrap().len(), 1);
        assert!(JobCgroup::existing(&layout, "job-7.1").is_some());
        assert!(JobCgroup::existing(&layout, "job-8.1").is_none());
    }

    /// On v1 each controller's file goes to its own hierarchy; co-mounted controllers
    /// share one directory, made and joined once.
    #[test]
    fn a_v1_part_writes_each_controllers_file_in_its_hierarchy() {
        let tmp = tempfile::tempdir().unwrap();
        let at = |c: &str| {
            let d = tmp.path().join(c).join("agent");
            std::fs::create_dir_all(&d).unwrap();
            d
        };
        let cpu = at("cpu,cpuacct");
        let layout = Layout::V1 {
            dirs: vec![
                ("memory", at("memory")),
                ("cpu", cpu.clone()),
                ("cpuacct", cpu),
                ("devices", at("devices")),
            ],
            memsw: false,
        };
        let limits = PartLimits {
            mem_bytes: Some(1 << 20),
            cpu_milli: Some(2000),
            deny_devices: vec![(195, 1)],
            ..PartLimits::default()
        };
        let cg = JobCgroup::create(&layout, "job-1.1", &limits).unwrap();
        let read = |p: &str| std::fs::read_to_string(tmp.path().join(p)).unwrap();
        assert_eq!(
            read("memory/agent/job-1.1/memory.limit_in_bytes"),
            "1048576"
        );
        assert_eq!(read("cpu,cpuacct/agent/job-1.1/cpu.cfs_quota_us"), "200000");
        assert_eq!(read("devices/agent/job-1.1/devices.deny"), "c 195:1 rw");
        assert_eq!(
            cg.procs_files().unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
        assert_eq!(cg.dirs().len(), 3);
    }
}
