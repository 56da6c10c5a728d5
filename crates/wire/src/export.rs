//! The cluster's ended jobs as a trace (`gpusched history --format gpusched`,
//! `GET /api/history/jobs`): what the simulator needs to replay them (submit, start and
//! end times, GPUs) and what the run-time predictor learns from (user, queue, name,
//! command, walltime, GPU model). Whose jobs a caller reads is the job list's rule: other
//! users' without their commands (a command line may hold secrets).

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `GET /api/history/jobs` filters: newest first, a page at a time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, IntoParams, ToSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// Only jobs with an id below this: the previous page's `next_before`.
    #[serde(default)]
    pub before: Option<u64>,
    /// Only jobs submitted at or after this Unix time (ms).
    #[serde(default)]
    pub since_ms: Option<u64>,
    /// Only this user's jobs (default: the caller's own; an admin's, everyone's).
    /// Another user's come without their commands, as the job list shows them.
    #[serde(default)]
    pub user: Option<String>,
    /// At most this many jobs (default 1000, at most 10000).
    #[serde(default)]
    #[param(minimum = 1, maximum = 10000)]
    pub limit: Option<usize>,
}

/// One ended job that ran, as a trace row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct HistoryJob {
    pub id: u64,
    pub user: String,
    pub queue: String,
    pub name: String,
    /// The command line, as submitted; empty in another user's job (a command line may
    /// hold secrets: only its owner and admins see it).
    pub command: Vec<String>,
    /// Whole GPUs (0 for a job on part of one GPU or on CPUs only).
    pub gpus: u32,
    pub gpu_model: Option<String>,
    pub priority: i32,
    /// The walltime the user asked for, seconds.
    pub walltime_s: Option<u64>,
    /// How it ended: `succeeded`, `failed`, `cancelled` or `timed_out`.
    pub state: String,
    /// Unix times in milliseconds; `start_ms` of its last run.
    pub submit_ms: u64,
    pub start_ms: u64,
    pub end_ms: u64,
    /// Times it was preempted before its last run.
    pub preemptions: u32,
    /// What its last run used, as its nodes' cgroups measured it (see `JobView::usage`);
    /// absent where nothing was measured. In `--format jsonl` only: the CSV trace is the
    /// simulator's format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::contain::Usage>,
}

/// One page of ended jobs, newest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct HistoryPage {
    pub jobs: Vec<HistoryJob>,
    /// More (older) jobs may match: ask again with `before` set to this.
    #[serde(default)]
    pub next_before: Option<u64>,
}
