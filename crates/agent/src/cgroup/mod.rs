//! A cgroup per job part: the kernel enforces the part's memory, CPUs, cores, process
//! count and GPU devices, ends every process it started (however it daemonised), and
//! measures what it used.
//!
//! The agent detects at start what the host offers ([`Cgroups::detect`]): the unified
//! hierarchy (cgroup v2) when `/sys/fs/cgroup` is one, else the v1 controllers it needs
//! (hybrid hosts mount both; their v2 side has no controllers). Its jobs live under a
//! directory of its own, named after the node and its state directory, inside the
//! cgroup the agent was started in, so two agents on one host (tests, `up`) never
//! touch each other's jobs. Where nothing can be used, limits stay accounting only and
//! [`Cgroups::containment`] says why; `nodes` shows it.
//!
//! A job's process enters its cgroup itself, between clone and exec (`spawn.rs`
//! writes `0` to each `cgroup.procs` it is handed), so nothing it runs is ever outside.
//!
//! Why not the cgroups-rs crate: its releases from 0.4 on link a D-Bus stack (zbus)
//! whatever features are chosen; 0.3 finds hierarchies only from the calling process's
//! own mountinfo (so a v2 layout cannot be tested on a v1 host), has no v1 kill (it
//! offers `cgroup.kill` on v2 only), and creates a job's directory in every mounted
//! hierarchy. The files used here are few and documented (the kernel's
//! cgroup-v1/*.rst and cgroup-v2.rst); `limits.rs` decides what to write, purely.

pub mod cores;
pub mod devices;
mod job;
pub mod limits;
pub mod mounts;
mod setup;
pub mod usage;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gpusched_wire::contain::{CgroupMode, Containment};

pub use job::JobCgroup;
pub use limits::PartLimits;

/// Which hierarchy the agent is told to use (`agent --cgroup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgroupChoice {
    /// v2 where `/sys/fs/cgroup` is the unified hierarchy, else v1 where its
    /// controllers are mounted, else none.
    Auto,
    V1,
    V2,
    /// Accounting only, as before cgroups (say why in the log and `nodes`).
    None,
}

impl std::str::FromStr for CgroupChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(CgroupChoice::Auto),
            "v1" => Ok(CgroupChoice::V1),
            "v2" => Ok(CgroupChoice::V2),
            "none" => Ok(CgroupChoice::None),
            _ => Err(format!("--cgroup takes auto, v1, v2 or none, not {s:?}")),
        }
    }
}

/// Where the agent's job cgroups are, per kind of hierarchy.
#[derive(Clone, Debug)]
pub(crate) enum Layout {
    /// One directory per controller, each holding the agent's jobs (`memsw`: the
    /// kernel accounts swap, so a memory limit can forbid swapping beyond it).
    V1 {
        /// (controller, the agent's directory in its hierarchy); co-mounted
        /// controllers share a directory, listed once each.
        dirs: Vec<(&'static str, PathBuf)>,
        memsw: bool,
    },
    /// The agent's directory in the unified hierarchy, the controllers enabled for its
    /// children, and whether the kernel has `cgroup.kill` (5.14).
    V2 {
        dir: PathBuf,
        controllers: BTreeSet<String>,
        kill_file: bool,
    },
}

/// What the host offers the agent's jobs, set up once at agent start.
#[derive(Debug)]
pub struct Cgroups {
    layout: Option<Layout>,
    containment: Containment,
}

impl Cgroups {
    /// No cgroups: limits are accounting only, for `why`.
    pub fn none(why: &str) -> Cgroups {
        Cgroups {
            layout: None,
            containment: Containment::accounting_only(why.to_string()),
        }
    }

    /// Finds the hierarchies and makes the agent's directory there. `key` names it
    /// (see [`agent_key`]). Never fails: what cannot be used is said in the
    /// containment's notes.
    pub fn detect(choice: CgroupChoice, key: &str) -> Cgroups {
        if choice == CgroupChoice::None {
            return Cgroups::none("the agent was started with --cgroup none");
        }
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let mounts = mounts::parse_mountinfo(&read("/proc/self/mountinfo"));
        let member = mounts::parse_proc_cgroup(&read("/proc/self/cgroup"));
        setup::set_up(choice, &mounts, &member, key)
    }

    pub fn containment(&self) -> &Containment {
        &self.containment
    }

    pub fn mode(&self) -> CgroupMode {
        self.containment.cgroup
    }

    /// Whether jobs get cgroups at all.
    pub fn active(&self) -> bool {
        self.layout.is_some()
    }

    /// Whether `what` (`memory`, `cpu`, `cpuset`, `pids`, `devices`) is enforced.
    pub fn enforces(&self, what: &str) -> bool {
        self.containment.enforces(what)
    }

    /// Makes the cgroup `name` for a part with `limits`. `Ok(None)` without cgroups.
    pub fn create(&self, name: &str, limits: &PartLimits) -> std::io::Result<Option<JobCgroup>> {
        match &self.layout {
            None => Ok(None),
            Some(layout) => JobCgroup::create(layout, name, limits).map(Some),
        }
    }

    /// The cgroup `name` if it exists (a part of an earlier life, for recovery).
    pub fn existing(&self, name: &str) -> Option<JobCgroup> {
        JobCgroup::existing(self.layout.as_ref()?, name)
    }

    /// The names of the job cgroups in the agent's directories now (on v1 a part has
    /// directories only in the hierarchies it needed, so every one is looked in).
    pub fn job_names(&self) -> Vec<String> {
        let dirs: Vec<PathBuf> = match &self.layout {
            None => return Vec::new(),
            Some(Layout::V1 { dirs, .. }) => dirs.iter().map(|(_, d)| d.clone()).collect(),
            Some(Layout::V2 { dir, .. }) => vec![dir.clone()],
        };
        let mut names: BTreeSet<String> = BTreeSet::new();
        for dir in dirs {
            names.extend(
                std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|n| job::is_job_name(n)),
            );
        }
        names.into_iter().collect()
    }

    /// The cores of the agent's cpuset (all the node's CPUs it may give jobs), where
    /// cores are pinned.
    pub fn cores(&self) -> Option<Vec<u32>> {
        if !self.enforces("cpuset") {
            return None;
        }
        let file = match self.layout.as_ref()? {
            Layout::V1 { dirs, .. } => dirs
                .iter()
                .find(|(c, _)| *c == "cpuset")?
                .1
                .join("cpuset.effective_cpus"),
            Layout::V2 { dir, .. } => dir.join("cpuset.cpus.effective"),
        };
        let text = std::fs::read_to_string(&file).ok()?;
        limits::parse_core_list(&text).filter(|c| !c.is_empty())
    }
}

impl Drop for Cgroups {
    /// The agent's own directories go when it stops with no job left in them (an
    /// `rmdir` of a cgroup with children fails, which is what keeps a running job's).
    fn drop(&mut self) {
        match &self.layout {
            Some(Layout::V1 { dirs, .. }) => {
                for (_, d) in dirs {
                    let _ = std::fs::remove_dir(d);
                }
            }
            Some(Layout::V2 { dir, .. }) => {
                let _ = std::fs::remove_dir(dir);
            }
            None => {}
        }
    }
}

/// Ends every process in the cgroups of the agent whose directory is `key` (see
/// [`agent_key`]) and removes them, in every hierarchy this process sits in: for a
/// harness that SIGKILLs agents it started (the tests), which leaves their directories
/// behind since no next life comes to sweep them.
pub fn remove_agent_tree(key: &str) {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let m = mounts::parse_mountinfo(&read("/proc/self/mountinfo"));
    let member = mounts::parse_proc_cgroup(&read("/proc/self/cgroup"));
    let mut roots: Vec<PathBuf> =
        m.v1.iter()
            .map(|(c, mount)| {
                mounts::join(mount, member.v1.get(c).map(String::as_str).unwrap_or("/")).join(key)
            })
            .collect();
    if let Some(u) = &m.unified {
        let own = mounts::join(u, member.unified.as_deref().unwrap_or("/"));
        roots.push(own.join(key));
    }
    roots.sort();
    roots.dedup();
    for root in roots.iter().filter(|r| r.is_dir()) {
        for dir in job::tree(root) {
            for pid in std::fs::read_to_string(dir.join("cgroup.procs"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse::<i32>().ok())
                .filter(|&p| p > 1)
            {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            // A process frozen by an agent killed in the middle of a kill dies only
            // once thawed.
            let _ = std::fs::write(dir.join("freezer.state"), "THAWED");
            let _ = std::fs::write(dir.join("cgroup.freeze"), "0");
        }
    }
    for root in roots.iter().filter(|r| r.is_dir()) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        for dir in job::tree(root) {
            while std::fs::remove_dir(&dir).is_err_and(|e| e.raw_os_error() == Some(libc::EBUSY))
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// The name of an agent's directory: its node and a digest of its state directory, so
/// every agent's jobs (several agents share a host in tests and with `up`) stay apart,
/// and the same agent finds its jobs again after a restart.
pub fn agent_key(node: &str, state_dir: &Path) -> String {
    let canonical = state_dir
        .canonicalize()
        .unwrap_or_else(|_| state_dir.to_path_buf());
    // FNV-1a: stable across releases and platforms (std's hasher is not).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in canonical.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let safe: String = node
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("gpusched-{safe}-{:08x}", h as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_directory_is_its_node_and_state_dir() {
        let a = agent_key("n1", Path::new("/var/lib/gpusched-agent"));
        assert!(a.starts_with("gpusched-n1-"), "{a}");
        assert_eq!(a, agent_key("n1", Path::new("/var/lib/gpusched-agent")));
        assert_ne!(a, agent_key("n1", Path::new("/var/lib/other")));
        assert!(agent_key("a/b c", Path::new("/x")).starts_with("gpusched-a_b_c-"));
    }
}
