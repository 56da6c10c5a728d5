//! Where the kernel's cgroup hierarchies are and where this process sits in them, read
//! from `/proc/self/mountinfo` and `/proc/self/cgroup`. Pure parsing: tests feed it
//! the text of hosts they are not on (a pure v2 host, a hybrid one, a v1 one).

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The controllers the agent uses on a v1 (or hybrid) host, in the order it creates a
/// job's directories. `cpuacct` measures CPU time; `freezer` stops a whole cgroup so
/// nothing forks while it is killed.
pub const V1_CONTROLLERS: &[&str] = &[
    "memory", "cpu", "cpuacct", "cpuset", "pids", "devices", "freezer",
];

/// The cgroup file systems mounted, as this process sees them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mounts {
    /// The cgroup2 mount (the unified hierarchy), if any.
    pub unified: Option<PathBuf>,
    /// v1 hierarchies by controller name (`cpu` and `cpuacct` may share one mount).
    pub v1: BTreeMap<String, PathBuf>,
}

/// Reads the cgroup mounts from mountinfo text. A mount whose root is not `/` (a bind
/// of a sub-tree, as in some containers) is kept with its root folded in by
/// [`Membership::dir_of`]'s caller: here only mounts of the hierarchy's root are used.
pub fn parse_mountinfo(text: &str) -> Mounts {
    let mut m = Mounts::default();
    for line in text.lines() {
        // `id parent major:minor root mount-point options [optional...] - fstype source super-options`
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let left: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        if left.len() < 5 || right.len() < 3 {
            continue;
        }
        let (root, point) = (left[3], unescape(left[4]));
        match right[0] {
            "cgroup2" if root == "/" => {
                m.unified.get_or_insert(PathBuf::from(point));
            }
            "cgroup" if root == "/" => {
                for opt in right[2].split(',') {
                    if V1_CONTROLLERS.contains(&opt) {
                        m.v1.entry(opt.to_string())
                            .or_insert_with(|| PathBuf::from(&point));
                    }
                }
            }
            _ => {}
        }
    }
    m
}

/// mountinfo escapes space, tab, newline and backslash as octal (`\040`).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(u8::is_ascii_digit) {
            let n = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(n);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Which cgroup this process is in, per hierarchy (`/proc/self/cgroup`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Membership {
    /// The path in the unified hierarchy (the `0::` line).
    pub unified: Option<String>,
    /// The path in each v1 hierarchy, by controller.
    pub v1: BTreeMap<String, String>,
}

pub fn parse_proc_cgroup(text: &str) -> Membership {
    let mut m = Membership::default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            m.unified = Some(path.to_string());
            continue;
        }
        for c in controllers.split(',') {
            if V1_CONTROLLERS.contains(&c) {
                m.v1.insert(c.to_string(), path.to_string());
            }
        }
    }
    m
}

/// `mount` joined with a cgroup path from `/proc/self/cgroup` (which starts with `/`).
pub fn join(mount: &std::path::Path, cgroup_path: &str) -> PathBuf {
    mount.join(cgroup_path.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine's kind of host: v1 controllers, an empty unified mount beside them.
    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    /// A current distribution: one cgroup2 mount.
    const PURE_V2: &str = "\
25 30 0:23 / /sys rw,nosuid - sysfs sysfs rw
26 25 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";

    /// An older host that mounts cpu and cpuacct together, and a path with a space.
    const CO_MOUNTED: &str = "\
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
33 31 0:30 / /mnt/my\\040cgroups/pids rw - cgroup cgroup rw,pids
34 31 0:31 /sub /elsewhere/memory rw - cgroup cgroup rw,memory
";

    #[test]
    fn finds_each_hosts_hierarchies() {
        let m = parse_mountinfo(HYBRID);
        assert_eq!(m.unified, Some(PathBuf::from("/sys/fs/cgroup/unified")));
        assert_eq!(m.v1["memory"], PathBuf::from("/sys/fs/cgroup/memory"));
        assert_eq!(m.v1["freezer"], PathBuf::from("/sys/fs/cgroup/freezer"));
        assert!(!m.v1.contains_key("systemd"));
        let m = parse_mountinfo(PURE_V2);
        assert_eq!(m.unified, Some(PathBuf::from("/sys/fs/cgroup")));
        assert!(m.v1.is_empty());
        let m = parse_mountinfo(CO_MOUNTED);
        assert_eq!(m.v1["cpu"], m.v1["cpuacct"]);
        assert_eq!(m.v1["pids"], PathBuf::from("/mnt/my cgroups/pids"));
        // A bind of a sub-tree is not the hierarchy's root: not used.
        assert!(!m.v1.contains_key("memory"));
    }

    #[test]
    fn reads_where_the_process_sits() {
        let m = parse_proc_cgroup(
            "9:name=systemd:/\n4:memory:/process_api/e9b9\n2:cpu,cpuacct:/a\n0::/\n",
        );
        assert_eq!(m.unified.as_deref(), Some("/"));
        assert_eq!(m.v1["memory"], "/process_api/e9b9");
        assert_eq!(m.v1["cpuacct"], "/a");
        assert!(!m.v1.contains_key("name=systemd"));
        let m = parse_proc_cgroup("0::/system.slice/gpusched-agent.service\n");
        assert_eq!(
            m.unified.as_deref(),
            Some("/system.slice/gpusched-agent.service")
        );
        assert_eq!(
            join(std::path::Path::new("/sys/fs/cgroup"), "/system.slice/x"),
            PathBuf::from("/sys/fs/cgroup/system.slice/x")
        );
    }
}
