//! A part's limits, and the cgroup files that set them on each kind of hierarchy.
//! Pure: what to write is decided here and tested against both layouts; writing it is
//! [`super::JobCgroup`]'s.

use std::collections::BTreeSet;

/// The scheduler's CFS period: quotas are fractions of 100 ms, as the kernel's default.
pub const CFS_PERIOD_US: u64 = 100_000;

/// The kernel refuses a CFS quota under 1 ms.
const MIN_QUOTA_US: u64 = 1_000;

/// What one part of an attempt may use on this node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartLimits {
    /// Memory, bytes, with no swap beyond it.
    pub mem_bytes: Option<u64>,
    /// CPU time per wall time, in thousandths of a CPU.
    pub cpu_milli: Option<u64>,
    /// The cores it is pinned to.
    pub cores: Option<Vec<u32>>,
    /// The most processes and threads at once.
    pub pids_max: Option<u64>,
    /// Character devices (major, minor) it may not open: the node's GPUs it was not
    /// given.
    pub deny_devices: Vec<(u32, u32)>,
}

/// One write: `value` into `file` of the part's directory in `controller`'s hierarchy
/// (`""` on cgroup v2, which has one directory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write {
    pub controller: &'static str,
    pub file: &'static str,
    pub value: String,
}

fn w(controller: &'static str, file: &'static str, value: impl Into<String>) -> Write {
    Write {
        controller,
        file,
        value: value.into(),
    }
}

fn quota_us(cpu_milli: u64) -> u64 {
    (cpu_milli.saturating_mul(CFS_PERIOD_US) / 1000).max(MIN_QUOTA_US)
}

/// `0-3,6`: cores as cpuset files list them.
pub fn core_list(cores: &[u32]) -> String {
    let mut sorted = cores.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// Reads a cpuset list (`0-3,6`); `None` if it is not one.
pub fn parse_core_list(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for item in text.trim().split(',').filter(|s| !s.is_empty()) {
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if b < a {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(item.parse().ok()?),
        }
    }
    Some(out)
}

/// The writes on a v1 host. `memsw`: the kernel accounts swap (`memory.memsw.*`
/// exists), so "no swap beyond the limit" can be said; the memory limit goes first
/// (memsw may never be below it).
pub fn v1_writes(l: &PartLimits, memsw: bool) -> Vec<Write> {
    let mut out = Vec::new();
    if let Some(bytes) = l.mem_bytes {
        out.push(w("memory", "memory.limit_in_bytes", bytes.to_string()));
        if memsw {
            out.push(w(
                "memory",
                "memory.memsw.limit_in_bytes",
                bytes.to_string(),
            ));
        }
    }
    if let Some(milli) = l.cpu_milli {
        out.push(w("cpu", "cpu.cfs_period_us", CFS_PERIOD_US.to_string()));
        out.push(w("cpu", "cpu.cfs_quota_us", quota_us(milli).to_string()));
    }
    if let Some(cores) = &l.cores {
        out.push(w("cpuset", "cpuset.cpus", core_list(cores)));
    }
    if let Some(n) = l.pids_max {
        out.push(w("pids", "pids.max", n.to_string()));
    }
    // Read and write are refused, not mknod: a container runtime making the cgroup of
    // an image job inside this one starts it with `c *:* m`, which the kernel refuses
    // under an exception that includes `m` (docs/containers.md). A node made for
    // another GPU still cannot be opened.
    for (major, minor) in &l.deny_devices {
        out.push(w(
            "devices",
            "devices.deny",
            format!("c {major}:{minor} rw"),
        ));
    }
    out
}

/// The writes on a v2 host, for the controllers enabled for the agent's jobs
/// (`controllers`). Devices are not a file on v2 (a BPF program would be): the caller
/// says so instead.
pub fn v2_writes(l: &PartLimits, controllers: &BTreeSet<String>) -> Vec<Write> {
    let has = |c: &str| controllers.contains(c);
    let mut out = Vec::new();
    if let (Some(bytes), true) = (l.mem_bytes, has("memory")) {
        out.push(w("", "memory.max", bytes.to_string()));
        out.push(w("", "memory.swap.max", "0"));
    }
    if let (Some(milli), true) = (l.cpu_milli, has("cpu")) {
        out.push(w(
            "",
            "cpu.max",
            format!("{} {CFS_PERIOD_US}", quota_us(milli)),
        ));
    }
    if let (Some(cores), true) = (&l.cores, has("cpuset")) {
        out.push(w("", "cpuset.cpus", core_list(cores)));
    }
    if let (Some(n), true) = (l.pids_max, has("pids")) {
        out.push(w("", "pids.max", n.to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> PartLimits {
        PartLimits {
            mem_bytes: Some(4 << 30),
            cpu_milli: Some(1500),
            cores: Some(vec![3, 0, 1, 6]),
            pids_max: Some(512),
            deny_devices: vec![(195, 1), (195, 3)],
        }
    }

    #[test]
    fn v1_sets_each_controllers_file_memory_before_swap() {
        let ws = v1_writes(&limits(), true);
        let got: Vec<String> = ws
            .iter()
            .map(|w| format!("{}/{}={}", w.controller, w.file, w.value))
            .collect();
        assert_eq!(
            got,
            [
                "memory/memory.limit_in_bytes=4294967296",
                "memory/memory.memsw.limit_in_bytes=4294967296",
                "cpu/cpu.cfs_period_us=100000",
                "cpu/cpu.cfs_quota_us=150000",
                "cpuset/cpuset.cpus=0-1,3,6",
                "pids/pids.max=512",
                "devices/devices.deny=c 195:1 rw",
                "devices/devices.deny=c 195:3 rw",
            ]
        );
        // Without swap accounting there is no memsw file to write.
        assert!(v1_writes(&limits(), false)
            .iter()
            .all(|w| w.file != "memory.memsw.limit_in_bytes"));
        assert!(v1_writes(&PartLimits::default(), true).is_empty());
    }

    #[test]
    fn v2_writes_only_for_enabled_controllers_and_no_swap() {
        let all: BTreeSet<String> = ["memory", "cpu", "cpuset", "pids"]
            .into_iter()
            .map(String::from)
            .collect();
        let got: Vec<String> = v2_writes(&limits(), &all)
            .iter()
            .map(|w| format!("{}={}", w.file, w.value))
            .collect();
        assert_eq!(
            got,
            [
                "memory.max=4294967296",
                "memory.swap.max=0",
                "cpu.max=150000 100000",
                "cpuset.cpus=0-1,3,6",
                "pids.max=512",
            ]
        );
        let only_pids: BTreeSet<String> = ["pids".to_string()].into();
        assert_eq!(v2_writes(&limits(), &only_pids).len(), 1);
    }

    #[test]
    fn tiny_quotas_are_the_kernels_minimum_and_core_lists_round_trip() {
        assert_eq!(quota_us(1), 1_000);
        assert_eq!(quota_us(1000), 100_000);
        assert_eq!(core_list(&[5, 4, 3, 9, 0]), "0,3-5,9");
        assert_eq!(parse_core_list("0,3-5,9\n"), Some(vec![0, 3, 4, 5, 9]));
        assert_eq!(parse_core_list(""), Some(vec![]));
        assert_eq!(parse_core_list("3-1"), None);
        assert_eq!(parse_core_list("x"), None);
    }
}
