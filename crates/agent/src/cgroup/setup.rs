//! Making the agent's directory in the hierarchies the host offers, and saying what
//! that lets it enforce.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gpusched_wire::contain::{CgroupMode, Containment};

use super::mounts::{join, Membership, Mounts, V1_CONTROLLERS};
use super::{CgroupChoice, Cgroups, Layout};

/// The v2 controllers a job's limits use.
const V2_CONTROLLERS: &[&str] = &["memory", "cpu", "cpuset", "pids"];

/// What the v2 side says of devices: a device cgroup on v2 is a BPF program.
pub const V2_DEVICES_NOTE: &str = "devices: not enforced on cgroup v2 (the kernel takes a BPF \
     device program there, which this agent does not load yet); a job sees other GPUs' \
     device files but is given only its own in CUDA_VISIBLE_DEVICES";

pub fn set_up(choice: CgroupChoice, mounts: &Mounts, member: &Membership, key: &str) -> Cgroups {
    let pick = match choice {
        CgroupChoice::Auto if mounts.unified.is_some() && mounts.v1.is_empty() => CgroupMode::V2,
        CgroupChoice::Auto if !mounts.v1.is_empty() => CgroupMode::V1,
        CgroupChoice::Auto if mounts.unified.is_some() => CgroupMode::V2,
        CgroupChoice::Auto => {
            return Cgroups::none("no cgroup file system is mounted (/proc/self/mountinfo)")
        }
        CgroupChoice::V1 => CgroupMode::V1,
        CgroupChoice::V2 => CgroupMode::V2,
        CgroupChoice::None => return Cgroups::none("the agent was started with --cgroup none"),
    };
    match pick {
        CgroupMode::V1 => set_up_v1(mounts, member, key),
        _ => set_up_v2(mounts, member, key),
    }
}

fn set_up_v1(mounts: &Mounts, member: &Membership, key: &str) -> Cgroups {
    let mut notes = Vec::new();
    let mut dirs: Vec<(&'static str, PathBuf)> = Vec::new();
    for &c in V1_CONTROLLERS {
        let Some(mount) = mounts.v1.get(c) else {
            notes.push(format!("{c}: the {c} controller is not mounted"));
            continue;
        };
        let own = member.v1.get(c).map(String::as_str).unwrap_or("/");
        let dir = join(mount, own).join(key);
        match make_v1_dir(c, &dir).and_then(|()| probe(&dir)) {
            Ok(()) => dirs.push((c, dir)),
            Err(e) => notes.push(format!("{c}: cannot make {}: {e}", dir.display())),
        }
    }
    if dirs.is_empty() {
        let mut c = Cgroups::none("no cgroup v1 controller could be used");
        c.containment.notes.extend(notes);
        return c;
    }
    let has = |c: &str| dirs.iter().any(|(d, _)| *d == c);
    let memsw = dirs
        .iter()
        .find(|(c, _)| *c == "memory")
        .is_some_and(|(_, d)| d.join("memory.memsw.limit_in_bytes").exists());
    if has("memory") && !memsw {
        notes.push(
            "memory: swap is not accounted (boot with swapaccount=1): a job may swap beyond \
             its limit"
                .to_string(),
        );
    }
    let mut enforced: Vec<String> = ["memory", "cpu", "cpuset", "pids", "devices"]
        .into_iter()
        .filter(|c| has(c))
        .map(String::from)
        .collect();
    // Killing needs only a process list; the freezer makes it race-free.
    enforced.push("kill".into());
    if !has("freezer") {
        notes.push(
            "kill: no freezer controller: a job forking while it is killed is killed in \
             rounds"
                .into(),
        );
    }
    Cgroups {
        layout: Some(Layout::V1 { dirs, memsw }),
        containment: Containment {
            cgroup: CgroupMode::V1,
            enforced,
            notes,
            image_runtime: None,
        },
    }
}

/// The agent's directory in one v1 hierarchy. cpuset's must be given its parent's
/// cores and memory nodes (a new cpuset has none, and no process may join it), and
/// hands them to each job's directory made in it.
fn make_v1_dir(controller: &str, dir: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    if controller == "cpuset" {
        let parent = dir.parent().unwrap_or(dir);
        for file in ["cpuset.cpus", "cpuset.mems"] {
            let value = std::fs::read_to_string(parent.join(file))?;
            std::fs::write(dir.join(file), value.trim())?;
        }
        std::fs::write(dir.join("cgroup.clone_children"), "1")?;
    }
    Ok(())
}

/// Makes and removes a cgroup in `dir`, as every job will: an agent that could make its
/// own directory but not its jobs' (a read-only or foreign parent) finds out at start,
/// not by losing every job it is given.
fn probe(dir: &Path) -> std::io::Result<()> {
    let p = dir.join(format!("probe-{}", std::process::id()));
    std::fs::create_dir(&p)?;
    std::fs::remove_dir(&p)
}

fn set_up_v2(mounts: &Mounts, member: &Membership, key: &str) -> Cgroups {
    let Some(mount) = &mounts.unified else {
        return Cgroups::none("--cgroup v2: no cgroup2 file system is mounted");
    };
    let own = member.unified.as_deref().unwrap_or("/");
    let base = join(mount, own);
    let mut notes = Vec::new();
    let available: BTreeSet<String> = std::fs::read_to_string(base.join("cgroup.controllers"))
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    let wanted: Vec<&str> = V2_CONTROLLERS
        .iter()
        .copied()
        .filter(|c| available.contains(*c))
        .collect();
    let enabled = enable_in_own(&base, own == "/", &wanted, &mut notes);
    let dir = base.join(key);
    if let Err(e) = std::fs::create_dir(&dir) {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            let mut c = Cgroups::none(&format!(
                "cannot make the agent's cgroup {}: {e}",
                dir.display()
            ));
            c.containment.notes.extend(notes);
            return c;
        }
    }
    if let Err(e) = probe(&dir) {
        let mut c = Cgroups::none(&format!(
            "cannot make a job's cgroup in {}: {e}",
            dir.display()
        ));
        c.containment.notes.extend(notes);
        return c;
    }
    // The agent's directory holds no process, so its children may have controllers.
    let mut controllers = BTreeSet::new();
    for c in &enabled {
        match std::fs::write(dir.join("cgroup.subtree_control"), format!("+{c}")) {
            Ok(()) => {
                controllers.insert(c.to_string());
            }
            Err(e) => notes.push(format!("{c}: cannot enable it for the jobs: {e}")),
        }
    }
    for c in V2_CONTROLLERS {
        if !controllers.contains(*c) && !notes.iter().any(|n| n.starts_with(c)) {
            notes.push(if available.contains(*c) {
                format!("{c}: not enforced: the controller could not be enabled here")
            } else {
                format!(
                    "{c}: not enforced: the {c} controller is not available in {} \
                     (cgroup.controllers)",
                    base.display()
                )
            });
        }
    }
    notes.push(V2_DEVICES_NOTE.to_string());
    // Every non-root cgroup has it from Linux 5.14; before, a frozen cgroup is killed.
    let kill_file = dir.join("cgroup.kill").exists();
    let mut enforced: Vec<String> = V2_CONTROLLERS
        .iter()
        .filter(|c| controllers.contains(**c))
        .map(|c| c.to_string())
        .collect();
    enforced.push("kill".into());
    Cgroups {
        layout: Some(Layout::V2 {
            dir,
            controllers,
            kill_file,
        }),
        containment: Containment {
            cgroup: CgroupMode::V2,
            enforced,
            notes,
            image_runtime: None,
        },
    }
}

/// Turns `wanted` on in the agent's own cgroup's `cgroup.subtree_control`. A cgroup
/// other than the root may not hold processes and give its children controllers, so
/// an agent alone in its cgroup (a systemd unit with `Delegate=yes`) first moves
/// itself into a leaf, `agent`; one sharing its cgroup with other processes cannot,
/// and says so. Returns the controllers enabled.
fn enable_in_own<'a>(
    base: &Path,
    is_root: bool,
    wanted: &[&'a str],
    notes: &mut Vec<String>,
) -> Vec<&'a str> {
    if wanted.is_empty() {
        return Vec::new();
    }
    let already: BTreeSet<String> = std::fs::read_to_string(base.join("cgroup.subtree_control"))
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    if !is_root && wanted.iter().any(|c| !already.contains(*c)) {
        let procs = std::fs::read_to_string(base.join("cgroup.procs")).unwrap_or_default();
        let me = std::process::id().to_string();
        let others = procs
            .lines()
            .any(|p| p.trim() != me && !p.trim().is_empty());
        if others {
            notes.push(format!(
                "the agent shares its cgroup {} with other processes, so it cannot give its \
                 jobs controllers there: run it in a cgroup of its own (the systemd unit \
                 in deploy/ has Delegate=yes)",
                base.display()
            ));
            return wanted
                .iter()
                .copied()
                .filter(|c| already.contains(*c))
                .collect();
        }
        let leaf = base.join("agent");
        let moved = std::fs::create_dir(&leaf)
            .or_else(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Ok(())
                } else {
                    Err(e)
                }
            })
            .and_then(|()| std::fs::write(leaf.join("cgroup.procs"), "0"));
        if let Err(e) = moved {
            notes.push(format!(
                "cannot move the agent into {}: {e}; its jobs get no controllers",
                leaf.display()
            ));
            return Vec::new();
        }
    }
    let mut on = Vec::new();
    for c in wanted {
        if already.contains(*c) {
            on.push(*c);
            continue;
        }
        match std::fs::write(base.join("cgroup.subtree_control"), format!("+{c}")) {
            Ok(()) => on.push(*c),
            Err(e) => notes.push(format!(
                "{c}: cannot enable it in {}: {e}",
                base.join("cgroup.subtree_control").display()
            )),
        }
    }
    on
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A v2 layout in a temporary directory: the files the kernel would show, as plain
    /// files (writes land in them; nothing enforces).
    fn fake_v2(root: &Path, controllers: &str) {
        std::fs::write(root.join("cgroup.controllers"), controllers).unwrap();
        std::fs::write(root.join("cgroup.subtree_control"), "").unwrap();
        std::fs::write(root.join("cgroup.procs"), "").unwrap();
    }

    #[test]
    fn a_v2_root_enables_the_controllers_it_has_and_says_devices_are_not_enforced() {
        let tmp = tempfile::tempdir().unwrap();
        fake_v2(tmp.path(), "cpuset cpu io memory pids");
        let mounts = Mounts {
            unified: Some(tmp.path().to_path_buf()),
            v1: BTreeMap::new(),
        };
        let member = Membership {
            unified: Some("/".into()),
            v1: BTreeMap::new(),
        };
        let c = set_up(CgroupChoice::Auto, &mounts, &member, "gpusched-n1-0");
        let got = c.containment();
        assert_eq!(got.cgroup, CgroupMode::V2);
        assert_eq!(got.enforced, ["memory", "cpu", "cpuset", "pids", "kill"]);
        assert!(got
            .notes
            .iter()
            .any(|n| n.starts_with("devices: not enforced")));
        let agent = tmp.path().join("gpusched-n1-0");
        assert!(agent.is_dir());
        // The last write of each file is what a plain file keeps.
        assert_eq!(
            std::fs::read_to_string(agent.join("cgroup.subtree_control")).unwrap(),
            "+pids"
        );
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("cgroup.subtree_control")).unwrap(),
            "+pids"
        );
    }

    #[test]
    fn a_v2_agent_sharing_its_cgroup_says_so_and_keeps_only_kill() {
        let tmp = tempfile::tempdir().unwrap();
        let own = tmp.path().join("system.slice/shell.service");
        std::fs::create_dir_all(&own).unwrap();
        fake_v2(&own, "memory pids");
        std::fs::write(
            own.join("cgroup.procs"),
            format!("1\n{}\n", std::process::id()),
        )
        .unwrap();
        let mounts = Mounts {
            unified: Some(tmp.path().to_path_buf()),
            v1: BTreeMap::new(),
        };
        let member = Membership {
            unified: Some("/system.slice/shell.service".into()),
            v1: BTreeMap::new(),
        };
        let c = set_up(CgroupChoice::V2, &mounts, &member, "k");
        let got = c.containment();
        assert_eq!(got.enforced, ["kill"]);
        assert!(
            got.notes.iter().any(|n| n.contains("Delegate=yes")),
            "{:?}",
            got.notes
        );
        // Alone in its cgroup, it moves into a leaf and enables them.
        std::fs::write(
            own.join("cgroup.procs"),
            format!("{}\n", std::process::id()),
        )
        .unwrap();
        let c = set_up(CgroupChoice::V2, &mounts, &member, "k2");
        assert_eq!(c.containment().enforced, ["memory", "pids", "kill"]);
        assert_eq!(
            std::fs::read_to_string(own.join("agent/cgroup.procs")).unwrap(),
            "0"
        );
    }

    #[test]
    fn nothing_mounted_is_accounting_only_with_the_reason() {
        let c = set_up(
            CgroupChoice::Auto,
            &Mounts::default(),
            &Membership::default(),
            "k",
        );
        assert_eq!(c.containment().cgroup, CgroupMode::None);
        assert!(c.containment().notes[0].contains("no cgroup file system"));
        assert!(!c.active());
    }
}
