//! Accounting: GPU time, CPU time, memory and energy per user or queue (the `sreport`
//! habit).

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, IntoParams, ToSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UsageQuery {
    /// `user` (default), `queue` or `account` (docs/accounts.md).
    #[serde(default)]
    #[param(pattern = "^(user|queue|account)$")]
    pub by: Option<String>,
    /// Only this user's jobs.
    #[serde(default)]
    pub user: Option<String>,
    /// Count GPU time from this Unix time (ms) on; default: all time.
    #[serde(default)]
    pub since_ms: Option<u64>,
}

/// One user's (or queue's) use of the cluster in the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UsageRow {
    pub key: String,
    /// Jobs that ran (or ended) in the window.
    pub jobs: u64,
    /// GPUs x hours run in the window, running jobs counted up to now.
    pub gpu_hours: f64,
    pub succeeded: u64,
    pub failed: u64,
    pub cancelled: u64,
    pub timed_out: u64,
    /// Mean time from submission to start, over the jobs that started.
    pub mean_wait_s: f64,
    /// Energy of those jobs, kWh: each job's whole measured energy (see
    /// docs/energy.md), not only the window's part.
    #[serde(default)]
    pub energy_kwh: f64,
    /// CPU time its jobs' processes used, hours, as their nodes' cgroups measured it when
    /// each attempt ended: each job's whole last attempt, as energy (running jobs and
    /// jobs on nodes that measure nothing add nothing).
    #[serde(default)]
    pub cpu_hours: f64,
    /// Memory GiB-hours: each job's peak memory x its nodes x its run time in the window
    /// (the peak is its largest part's; memory held below the peak counts as the peak,
    /// so this is what the jobs kept from others, not an average). Measured as
    /// `cpu_hours`.
    #[serde(default)]
    pub mem_gib_hours: f64,
    /// GPU-hours interactive allocations held idle (below their queue's idle
    /// threshold): those still running, and those that ended since the server started
    /// (kept in its memory; docs/interactive-alloc.md), each whole when it is in the
    /// window.
    #[serde(default)]
    pub idle_gpu_hours: f64,
    /// Steps (`gpusched run`) that ended in the jobs, and their GPU-hours (each step's
    /// GPUs x its run time), each job's whole when it is in the window: how much of what
    /// allocations held their steps used.
    #[serde(default)]
    pub steps: u64,
    #[serde(default)]
    pub step_gpu_hours: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UsageReport {
    pub by: String,
    pub since_ms: Option<u64>,
    pub until_ms: u64,
    pub rows: Vec<UsageRow>,
}
