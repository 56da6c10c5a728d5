//! The job as the store keeps it: the facts of the server's job model, one field per fact,
//! owned by this crate. The API type (`wire::JobView`) is never stored, nor the server's
//! job in memory: the server maps its `JobRecord` to a [`StoredJob`] and back, field by
//! field (`server/src/record/row.rs`), so a change to the API is a change to that mapping,
//! not to the schema.

use std::collections::BTreeMap;

use gpusched_wire::JobState;
use serde::{Deserialize, Serialize};

/// One job row. Lists and maps go to JSON columns; everything else is a column.
/// Rare parts (a slice's place, a gang's failure, an array's progress, a replica, node
/// rules) are boxed: rows of plain jobs should not carry their room (a round of a
/// 10,000-job batch holds up to [`crate::JOB_ROWS_AT_ONCE`] of them at once).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredJob {
    // What was submitted.
    pub id: u64,
    pub name: String,
    pub user: String,
    pub queue: String,
    pub command: Vec<String>,
    pub cwd: String,
    pub gpus: u32,
    pub gpu_model: Option<String>,
    pub slice: Option<StoredSlice>,
    pub cpu_milli: u64,
    pub mem_mib: u64,
    /// Generic counted resources (`fpga` -> 1) the job holds on its node.
    pub resources: BTreeMap<String, u64>,
    pub priority: i32,
    pub walltime_s: Option<u64>,
    pub max_retries: u32,
    pub after: Vec<u64>,
    pub env: BTreeMap<String, String>,
    pub client_token: Option<String>,
    pub grace_s: u64,
    pub submit_ms: u64,
    // Where it is in its life.
    pub state: JobState,
    pub attempt: u32,
    pub node: Option<String>,
    pub gpu_indices: Vec<u32>,
    pub slice_at: Option<Box<StoredSliceAt>>,
    pub start_ms: Option<u64>,
    pub end_ms: Option<u64>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// How a terminal job ended ("exit code 1", "cancelled by alice"); none while it lives.
    pub end_reason: Option<String>,
    /// What last happened to a live job that its state does not say (why it was requeued,
    /// who is stopping it); the server shows it beside the reason it works out. None
    /// when empty or once the job ended.
    pub note: Option<String>,
    pub cancel_requested: bool,
    pub preempt_requested: bool,
    pub preemptions: u32,
    pub agent_stops: u32,
    pub attempt_nodes: BTreeMap<u32, String>,
    pub last_checkpoint_ms: Option<u64>,
    // A gang (schema 3): its shape, and where the parts of its current (or last) attempt
    // are.
    pub nodes: u32,
    pub gpus_per_node: u32,
    pub split: bool,
    pub tasks_per_node: Option<u32>,
    pub mixed_models: bool,
    pub parts: Vec<StoredPart>,
    pub master_port: Option<u16>,
    pub first_failure: Option<Box<StoredFailure>>,
    /// Schema 4: Joules measured so far, as of the row's last write (the server keeps
    /// the running total in memory and writes it with the row's other changes).
    pub energy_j: Option<u64>,
    // Schema 6: dependency kinds, holds, arrays.
    pub after_any: Vec<u64>,
    pub after_notok: Vec<u64>,
    pub held: bool,
    /// This job is an array of tasks with these indices.
    pub array: Option<StoredArray>,
    /// This job is a task of an array.
    pub array_task: Option<StoredArrayTask>,
    /// An array's progress (JSON in `array_progress`).
    pub array_progress: Option<Box<crate::ArrayProgress>>,
    // Schema 9: followers.
    /// The job this pending one is queued behind.
    pub behind: Option<u64>,
    pub recalls: u32,
    // Schema 11: containment.
    /// The container image its parts run in.
    pub image: Option<String>,
    pub pids_max: Option<u64>,
    /// What the current (or last) attempt used (`used_*` columns).
    pub usage: Option<StoredUsage>,
    // Schema 12: services.
    /// The service this job is a replica of (JSON in `service`).
    pub service: Option<Box<crate::StoredReplica>>,
    // Schema 13: partitions, reservations, interactive allocations.
    /// Where it may run: partitions, constraint, node list, exclusions, reservation
    /// (JSON in `placement`); None for a job with no rule.
    pub placement: Option<Box<crate::StoredPlacement>>,
    /// An interactive allocation (`gpusched alloc`): steps run in it.
    pub interactive: bool,
    // Schema 15: what an allocation's GPUs did.
    /// GPU-seconds an interactive allocation held below its idle threshold (None: not
    /// counted, as for every job that is not an allocation).
    pub idle_gpu_s: Option<u64>,
    /// Steps (`gpusched run`) that ran in it, and their GPU-seconds: each ended step's
    /// GPUs on its nodes x its run time.
    pub steps_run: u64,
    pub step_gpu_s: u64,
    // Schema 16: accounts.
    /// The account it is charged to (docs/accounts.md); None: the root.
    pub account: Option<String>,
}

/// What an attempt used (the store's own copy of `wire::contain::Usage`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoredUsage {
    pub cpu_ms: u64,
    pub mem_peak_bytes: Option<u64>,
    pub cpu_pressure_ms: Option<u64>,
    pub mem_pressure_ms: Option<u64>,
}

/// An array's indices (the store's own copy of `wire::ArraySpec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredArray {
    pub first: u32,
    pub last: u32,
    pub step: u32,
    #[serde(default)]
    pub max_running: Option<u32>,
}

/// Which task of which array a job is (the store's copy of `wire::ArrayTask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredArrayTask {
    pub array_id: u64,
    pub index: u32,
}

/// One part of a job's attempt (the store's own copy of `wire::JobPart`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredPart {
    pub rank: u32,
    pub node: String,
    pub gpu_indices: Vec<u32>,
    #[serde(default)]
    pub addr: Option<String>,
    pub state: StoredPartState,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub signal: Option<i32>,
}

/// The store's own copy of `wire::PartState`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoredPartState {
    Starting,
    Running,
    Done,
    Failed,
    Stopped,
}

/// The first failing part of a gang's attempt (the store's copy of the server's
/// `PartFailure`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredFailure {
    pub rank: u32,
    pub outcome: StoredOutcome,
    pub at_ms: u64,
}

/// The store's own copy of `wire::Outcome`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StoredOutcome {
    Exited { code: i32 },
    Signaled { signal: i32 },
    TimedOut { walltime_s: u64 },
    Cancelled,
    SpawnFailed { message: String },
    Lost { message: String },
    Preempted,
    Stopped { message: String },
    OutOfMemory { peak_bytes: u64, limit_bytes: u64 },
    Unhealthy { message: String },
}

/// What part of one GPU a job asked for (the store's own copy of `wire::SliceAsk`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StoredSlice {
    Share { milli: u32 },
    Memory { mib: u64 },
    Mig { profile: String },
}

/// Where a job's slice is (the store's own copy of `wire::SliceAt`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredSliceAt {
    pub gpu: u32,
    pub milli: u32,
    pub mem_mib: u64,
    #[serde(default)]
    pub mig: Option<StoredMig>,
}

/// A job's MIG instance (the store's own copy of `wire::MigAt`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredMig {
    pub profile: String,
    pub start: u8,
    pub size: u8,
    pub create: bool,
    #[serde(default)]
    pub destroy: Vec<u8>,
    #[serde(default)]
    pub uuid: Option<String>,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{ArrayProgress, UnwrittenTask};

    /// A running job's row with every field set to something other than its default
    /// (the server's `record/row.rs` tests the mapping of each field to and from it).
    pub(crate) fn full_stored() -> StoredJob {
        StoredJob {
            id: 42,
            name: "train".into(),
            user: "alice".into(),
            queue: "research".into(),
            command: vec!["python".into(), "train.py".into()],
            cwd: "/home/alice".into(),
            gpus: 0,
            gpu_model: Some("A100".into()),
            slice: Some(StoredSlice::Mig {
                profile: "3g.40gb".into(),
            }),
            cpu_milli: 2500,
            mem_mib: 16384,
            resources: [("fpga".to_string(), 2)].into(),
            priority: -3,
            walltime_s: Some(7200),
            max_retries: 5,
            after: vec![3, 4],
            env: [("A".into(), "1".into()), ("B".into(), "x=y".into())].into(),
            client_token: Some("tok-1".into()),
            grace_s: 30,
            submit_ms: 1_000,
            state: JobState::Running,
            attempt: 3,
            node: Some("n1".into()),
            gpu_indices: vec![1],
            slice_at: Some(Box::new(StoredSliceAt {
                gpu: 1,
                milli: 428,
                mem_mib: 40960,
                mig: Some(StoredMig {
                    profile: "3g.40gb".into(),
                    start: 4,
                    size: 4,
                    create: true,
                    destroy: vec![0, 2],
                    uuid: Some("MIG-abc".into()),
                }),
            })),
            start_ms: Some(2_000),
            end_ms: Some(3_000),
            exit_code: Some(137),
            signal: Some(9),
            end_reason: None,
            note: Some("being preempted on n1 to return GPUs to queue `q` (job 7)".into()),
            cancel_requested: true,
            preempt_requested: true,
            preemptions: 1,
            agent_stops: 1,
            attempt_nodes: [(1, "n0".into()), (2, "n2".into()), (3, "n1".into())].into(),
            last_checkpoint_ms: Some(2_500),
            nodes: 2,
            gpus_per_node: 4,
            split: true,
            tasks_per_node: Some(2),
            mixed_models: true,
            parts: vec![
                StoredPart {
                    rank: 0,
                    node: "n1".into(),
                    gpu_indices: vec![1],
                    addr: Some("10.0.0.1".into()),
                    state: StoredPartState::Running,
                    exit_code: None,
                    signal: None,
                },
                StoredPart {
                    rank: 1,
                    node: "n2".into(),
                    gpu_indices: vec![0, 3],
                    addr: None,
                    state: StoredPartState::Failed,
                    exit_code: Some(3),
                    signal: Some(15),
                },
                StoredPart {
                    rank: 2,
                    node: "n3".into(),
                    gpu_indices: vec![2],
                    addr: None,
                    state: StoredPartState::Stopped,
                    exit_code: None,
                    signal: Some(15),
                },
            ],
            master_port: Some(29500),
            first_failure: Some(Box::new(StoredFailure {
                rank: 1,
                outcome: StoredOutcome::SpawnFailed {
                    message: "no such file".into(),
                },
                at_ms: 2_700,
            })),
            energy_j: Some(123_456),
            after_any: vec![5],
            after_notok: vec![6, 7],
            held: true,
            array: Some(StoredArray {
                first: 0,
                last: 98,
                step: 2,
                max_running: Some(4),
            }),
            array_task: Some(StoredArrayTask {
                array_id: 2,
                index: 9,
            }),
            array_progress: Some(Box::new(ArrayProgress {
                next: 12,
                succeeded: 7,
                failed: 2,
                cancelled: 1,
                timed_out: 1,
                skipped: vec![30, 44],
                unwritten: vec![
                    UnwrittenTask {
                        id: 60,
                        index: 12,
                        behind: None,
                    },
                    UnwrittenTask {
                        id: 61,
                        index: 13,
                        behind: std::num::NonZeroU64::new(60),
                    },
                ],
            })),
            behind: Some(41),
            recalls: 2,
            image: Some("localhost/pytorch:24.01".into()),
            pids_max: Some(512),
            usage: Some(StoredUsage {
                cpu_ms: 3_723_000,
                mem_peak_bytes: Some(3 << 30),
                cpu_pressure_ms: Some(1_200),
                mem_pressure_ms: Some(40),
            }),
            service: Some(Box::new(crate::StoredReplica {
                service: "resnet".into(),
                version: 3,
                port: Some(41234),
                ready: true,
                draining_since_ms: Some(1_700_000_000_000),
            })),
            placement: Some(Box::new(crate::record::tests::placement())),
            interactive: true,
            idle_gpu_s: Some(1_800),
            steps_run: 3,
            step_gpu_s: 5_400,
            account: Some("physics".into()),
        }
    }
}
