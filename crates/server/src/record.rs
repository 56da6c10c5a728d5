//! The server's job in memory: what the API shows ([`JobView`]) plus what only the
//! server and the agent need. The store keeps it as a [`gpusched_store::StoredJob`], one
//! column per fact; the mapping between the two is `record/row.rs`, applied once per row
//! written or loaded.

pub(crate) mod row;

use std::collections::BTreeMap;

use gpusched_store::ArrayProgress;
use gpusched_wire::{JobView, Outcome};
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

/// How one part of a gang ended, when it was the first to fail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartFailure {
    /// Its `NODE_RANK`.
    pub rank: u32,
    pub outcome: Outcome,
    pub at_ms: u64,
}

#[cfg(test)]
mod size {
    /// The server keeps one record per live job (10,000 pending is the budget of
    /// docs/benchmarks-log.md (q)), so what is rare stays boxed: a slice, its placement, an
    /// array's counts and progress, a gang's first failure, what an attempt used. A
    /// job's image and process cap (40 bytes, schema 11) are inline: every launch reads
    /// them. A replica's service is boxed (8 bytes, schema 12), as are a job's node
    /// rules (8 bytes, schema 13) and the view's steps (8 bytes, schema 14; `show`'s
    /// only); whether it is interactive is a flag and its idle GPU time whole seconds (8
    /// bytes together); what its steps used is boxed (8 bytes, schema 15), as is its
    /// speed on GPU models (8 bytes, issue 36). A job's account (24 bytes, schema 16) is
    /// inline: where accounts are configured every job has one, and every enqueue reads
    /// it. A deadline is boxed (8 bytes, issue 37): most jobs have none; so is an
    /// elastic job's range (8 bytes, issue 37).
    #[test]
    fn a_record_stays_small() {
        let record = std::mem::size_of::<super::JobRecord>();
        assert!(
            record <= 872,
            "JobRecord grew to {record} bytes; box what is rare"
        );
    }
}
