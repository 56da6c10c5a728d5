//! What is stored per job and per node.

use std::collections::BTreeMap;

use gpusched_wire::{JobView, Outcome, Register, Role};
use serde::{Deserialize, Serialize};

/// A job as the server keeps it: what the API shows, plus what only the agent needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub view: JobView,
    pub env: BTreeMap<String, String>,
    pub client_token: Option<String>,
    /// Seconds between SIGTERM and SIGKILL when the job is stopped.
    pub grace_s: u64,
    /// The node each attempt was sent to (by attempt number), so the output of earlier
    /// attempts stays reachable after a requeue. Rows from before this field have none.
    #[serde(default)]
    pub attempt_nodes: BTreeMap<u32, String>,
    /// Attempts that ended because their agent was stopped (not the job's fault): like
    /// preemptions, they take attempt numbers but not retries.
    #[serde(default)]
    pub agent_stops: u32,
    /// The first part of a gang's current attempt that ended other than with exit code
    /// 0: the job ends (or is requeued) with this outcome once every part has ended.
    #[serde(default)]
    pub first_failure: Option<Box<PartFailure>>,
    /// An array's progress (schema 6): what a restart needs to go on materialising its
    /// tasks without reading their rows. `None` for every job that is not an array.
    #[serde(default)]
    pub array_progress: Option<Box<ArrayProgress>>,
    /// The job this pending one is queued behind (running, or queued itself) on its node,
    /// to start on its GPUs as soon as that one ends (schema 9; the core's
    /// `live/follow.rs`): the node's agent was told, so a restart must not forget it.
    /// Job ids start at 1; non-zero keeps the record 8 bytes smaller.
    #[serde(default)]
    pub behind: Option<std::num::NonZeroU64>,
    /// Attempts taken back before they could run: a follow the server undid after its
    /// launch went out (the agent may have started it, so that attempt number is used
    /// up). Like preemptions, they take attempt numbers but not retries (schema 9).
    #[serde(default)]
    pub recalls: u32,
}

/// How far an array got: the ordinal (0-based position in its index range) of the next
/// task to materialise, the tasks that ended by outcome, and the indices cancelled before
/// they ever started. Small and of fixed size but for `skipped` (one entry per index a
/// person cancelled one by one), whatever the array's length.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayProgress {
    /// Ordinals below this have been materialised (or skipped).
    pub next: u64,
    pub succeeded: u64,
    pub failed: u64,
    /// Tasks that ended cancelled, plus the unstarted remainder of an array cancelled
    /// (or failed by a dependency) as a whole.
    pub cancelled: u64,
    pub timed_out: u64,
    /// Indices cancelled one by one before they were materialised (never started).
    #[serde(default)]
    pub skipped: Vec<u32>,
    /// Materialised tasks that have no row of their own (schema 10): each is exactly the
    /// task its array makes for that id and index, pending, queued behind `behind` if
    /// set, so the array's row is enough to rebuild it after a restart. A task gets its
    /// row, and leaves this list in the same transaction, at its first other change (it
    /// is placed, started, cancelled...). Bounded by the server (at most
    /// `UNWRITTEN_PER_ARRAY` entries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unwritten: Vec<UnwrittenTask>,
}

/// A materialised array task kept in its array's row rather than in a row of its own
/// (see [`ArrayProgress::unwritten`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnwrittenTask {
    pub id: u64,
    pub index: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<std::num::NonZeroU64>,
}

/// How one part of a gang ended, when it was the first to fail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartFailure {
    /// Its `NODE_RANK`.
    pub rank: u32,
    pub outcome: Outcome,
    pub at_ms: u64,
}

/// A node as last registered, with what an operator and the server's health checks
/// decided about it (both outlive a restart of the server or of its agent). The fields
/// after `register` are absent in rows written before they existed (no migration: a
/// node row is JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeRecord {
    pub register: Register,
    /// An operator's drain: nothing new starts on the node until `resume`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain: Option<gpusched_wire::Drain>,
    /// GPUs found unhealthy (by NVML index), out of placement until `resume`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub gpu_health: std::collections::BTreeMap<u32, gpusched_wire::GpuHealth>,
}

impl NodeRecord {
    /// A node just registered: not drained, every GPU healthy.
    pub fn new(register: Register) -> Self {
        NodeRecord {
            register,
            drain: None,
            gpu_health: Default::default(),
        }
    }
}

/// An API token: only its SHA-256 is kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRecord {
    pub id: u64,
    pub user: String,
    pub role: Role,
    /// Lower-case hex SHA-256 of the secret.
    pub hash: String,
    pub created_ms: u64,
    pub revoked: bool,
}

#[cfg(test)]
mod size {
    /// The server keeps one record per live job (10,000 pending is the budget of
    /// docs/benchmarks-log.md (q)), so what is rare stays boxed: a slice, its placement, an
    /// array's counts and progress, a gang's first failure, what an attempt used. A
    /// job's image and process cap (40 bytes, schema 11) are inline: every launch reads
    /// them.
    #[test]
    fn a_record_stays_small() {
        let record = std::mem::size_of::<super::JobRecord>();
        assert!(
            record <= 784,
            "JobRecord grew to {record} bytes; box what is rare"
        );
    }
}
