//! What an agent can enforce on its jobs (cgroups, devices, images) and what a job
//! used, as measured by its cgroup (issue 32).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Which cgroup hierarchy an agent contains its jobs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CgroupMode {
    /// The unified hierarchy (cgroup v2), the default of current distributions.
    V2,
    /// Per-controller hierarchies (cgroup v1, or hybrid hosts).
    V1,
    /// No cgroup the agent may use: limits are accounting only.
    None,
}

impl CgroupMode {
    pub fn as_str(self) -> &'static str {
        match self {
            CgroupMode::V2 => "v2",
            CgroupMode::V1 => "v1",
            CgroupMode::None => "none",
        }
    }
}

/// What the agent of a node enforces, sent at registration and shown by `nodes`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Containment {
    pub cgroup: CgroupMode,
    /// What is enforced, from `memory`, `cpu` (a CPU quota), `cpuset` (pinned cores),
    /// `pids`, `devices` (a job opens only its own GPUs) and `kill` (nothing a job
    /// started outlives it).
    #[serde(default)]
    pub enforced: Vec<String>,
    /// Why each thing not enforced is not ("devices: ..."), for the operator.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The container runtime that runs `--image` jobs here (`podman 4.3.1`); `None`:
    /// this node runs no image jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_runtime: Option<String>,
}

impl Containment {
    /// What an agent without cgroups offers (and what an agent of an older protocol is
    /// taken to offer).
    pub fn accounting_only(why: impl Into<String>) -> Self {
        Containment {
            cgroup: CgroupMode::None,
            enforced: Vec::new(),
            notes: vec![why.into()],
            image_runtime: None,
        }
    }

    pub fn enforces(&self, what: &str) -> bool {
        self.enforced.iter().any(|e| e == what)
    }
}

/// What an attempt's processes used on one node, read from its cgroup when it ended.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Usage {
    /// CPU time (user + system) of every process of the part, milliseconds.
    pub cpu_ms: u64,
    /// The most memory the part's processes held at once, bytes (`None` where the kernel
    /// keeps no peak: cgroup v2 before Linux 5.19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_peak_bytes: Option<u64>,
    /// Time some of its processes stalled waiting for a CPU / for memory (cgroup v2
    /// pressure stall information), milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_pressure_ms: Option<u64>,
}

/// A size in bytes as people read it: `512 MiB`, `4.0 GiB`.
pub fn bytes_text(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let mib = bytes as f64 / MIB;
    if mib < 1024.0 {
        format!("{} MiB", mib.round() as u64)
    } else {
        format!("{:.1} GiB", mib / 1024.0)
    }
}

/// What an out-of-memory end says: `out of memory: peak 4.0 GiB of its 4.0 GiB limit`.
pub fn out_of_memory_text(peak_bytes: u64, limit_bytes: u64) -> String {
    format!(
        "out of memory: peak {} of its {} limit (--mem; the kernel killed it)",
        bytes_text(peak_bytes),
        bytes_text(limit_bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(bytes_text(512 * 1024 * 1024), "512 MiB");
        assert_eq!(bytes_text(4 * 1024 * 1024 * 1024), "4.0 GiB");
        assert_eq!(bytes_text(0), "0 MiB");
        assert_eq!(
            out_of_memory_text(64 << 20, 64 << 20),
            "out of memory: peak 64 MiB of its 64 MiB limit (--mem; the kernel killed it)"
        );
    }
}
