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

impl Usage {
    /// Adds what another part of the same attempt used: CPU and stall times add up, the
    /// peak is the larger (each part has memory of its own). A peak or a pressure one
    /// side did not measure stays what the other measured.
    pub fn add_part(&mut self, part: &Usage) {
        fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a.saturating_add(b)),
                (a, b) => a.or(b),
            }
        }
        self.cpu_ms = self.cpu_ms.saturating_add(part.cpu_ms);
        self.mem_peak_bytes = self.mem_peak_bytes.max(part.mem_peak_bytes);
        self.cpu_pressure_ms = add(self.cpu_pressure_ms, part.cpu_pressure_ms);
        self.mem_pressure_ms = add(self.mem_pressure_ms, part.mem_pressure_ms);
    }
}

/// A span of CPU (or stall) time as people read it: `350 ms`, `12.5 s`, `4m05s`,
/// `1h02m`, `30h00m` (hours are not folded into days: CPU time is not a date).
pub fn cpu_time_text(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0 => format!("{ms} ms"),
        1..=59 => format!("{:.1} s", ms as f64 / 1000.0),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
    }
}

/// What an attempt used, in one line (`show`, the end of its timeline, the dashboard):
/// `CPU 1h02m (0.9 cores avg), peak memory 3.1 GiB of 4.0 GiB asked`, then what its
/// processes stalled for where the kernel said (`; stalled on CPU 12.5 s, on memory
/// 350 ms`). `ran_ms`: how long the attempt ran (no average without it); `mem_asked_mib`:
/// its `--mem` per node (0: none asked); `parts`: its nodes (a gang's peak is its
/// largest part's).
pub fn usage_text(u: &Usage, ran_ms: Option<u64>, mem_asked_mib: u64, parts: u32) -> String {
    let mut out = format!("CPU {}", cpu_time_text(u.cpu_ms));
    if let Some(ran) = ran_ms.filter(|&r| r > 0) {
        out.push_str(&format!(" ({:.1} cores avg)", u.cpu_ms as f64 / ran as f64));
    }
    if let Some(peak) = u.mem_peak_bytes {
        out.push_str(&format!(", peak memory {}", bytes_text(peak)));
        if parts > 1 {
            out.push_str(" (largest part)");
        }
        if mem_asked_mib > 0 {
            out.push_str(&format!(" of {} asked", bytes_text(mem_asked_mib << 20)));
        }
    }
    let stalls: Vec<String> = [("CPU", u.cpu_pressure_ms), ("memory", u.mem_pressure_ms)]
        .into_iter()
        .filter_map(|(what, ms)| ms.map(|ms| format!("on {what} {}", cpu_time_text(ms))))
        .collect();
    if !stalls.is_empty() {
        out.push_str(&format!("; stalled {}", stalls.join(", ")));
    }
    out
}

/// A size in bytes as people read it: `512 MiB`, `4.0 GiB`.
pub fn bytes_text(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let mib = bytes as f64 / MIB;
    if bytes > 0 && bytes < 1 << 20 {
        // A shell's peak is a few hundred KiB: not "0 MiB".
        format!("{} KiB", (bytes as f64 / 1024.0).round().max(1.0) as u64)
    } else if mib < 1024.0 {
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
        assert_eq!(bytes_text(700 * 1024), "700 KiB");
        assert_eq!(bytes_text(10), "1 KiB");
        assert_eq!(
            out_of_memory_text(64 << 20, 64 << 20),
            "out of memory: peak 64 MiB of its 64 MiB limit (--mem; the kernel killed it)"
        );
    }

    #[test]
    fn cpu_times_read_in_the_unit_that_fits() {
        assert_eq!(cpu_time_text(350), "350 ms");
        assert_eq!(cpu_time_text(12_500), "12.5 s");
        assert_eq!(cpu_time_text(245_000), "4m05s");
        assert_eq!(cpu_time_text(3_723_000), "1h02m");
        assert_eq!(cpu_time_text(108_000_000), "30h00m");
    }

    /// Two parts of a gang: CPU and stalls add up, the peak is the larger part's, and
    /// what one part did not measure is what the other did.
    #[test]
    fn the_parts_of_an_attempt_add_up_to_its_usage() {
        let mut u = Usage {
            cpu_ms: 1_000,
            mem_peak_bytes: Some(3 << 30),
            cpu_pressure_ms: Some(10),
            mem_pressure_ms: None,
        };
        u.add_part(&Usage {
            cpu_ms: 2_500,
            mem_peak_bytes: Some(1 << 30),
            cpu_pressure_ms: Some(5),
            mem_pressure_ms: Some(7),
        });
        assert_eq!(
            u,
            Usage {
                cpu_ms: 3_500,
                mem_peak_bytes: Some(3 << 30),
                cpu_pressure_ms: Some(15),
                mem_pressure_ms: Some(7),
            }
        );
        u.add_part(&Usage::default());
        assert_eq!((u.cpu_ms, u.mem_peak_bytes), (3_500, Some(3 << 30)));
    }

    #[test]
    fn usage_reads_as_one_line() {
        let u = Usage {
            cpu_ms: 3_723_000,
            mem_peak_bytes: Some(3_328_599_654),
            cpu_pressure_ms: None,
            mem_pressure_ms: None,
        };
        assert_eq!(
            usage_text(&u, Some(4_136_666), 4096, 1),
            "CPU 1h02m (0.9 cores avg), peak memory 3.1 GiB of 4.0 GiB asked"
        );
        // A gang's peak is its largest part's; no --mem, no run time: nothing to compare.
        assert_eq!(
            usage_text(&u, None, 0, 2),
            "CPU 1h02m, peak memory 3.1 GiB (largest part)"
        );
        // cgroup v1: no pressure; v2: the stalls follow.
        let u = Usage {
            cpu_ms: 800,
            mem_peak_bytes: None,
            cpu_pressure_ms: Some(12_500),
            mem_pressure_ms: Some(350),
        };
        assert_eq!(
            usage_text(&u, Some(1_000), 64, 1),
            "CPU 800 ms (0.8 cores avg); stalled on CPU 12.5 s, on memory 350 ms"
        );
    }
}
