//! The job as the store keeps it: the facts of the server's job model, one field per fact,
//! owned by this crate. The API type (`wire::JobView`) is never stored: the mapping
//! between the server's [`JobRecord`] and a [`StoredJob`] is written out once, below, field
//! by field, so a change to the API is a change to this mapping, not to the schema.
//!
//! Not stored, because the server works them out: the reason a pending job waits and its
//! estimated start (computed for each view), and the names of its environment variables
//! (the keys of `env`).

use std::collections::BTreeMap;

use gpusched_wire::contain::Usage;
use gpusched_wire::slice::{MigAt, SliceAsk, SliceAt};
use gpusched_wire::{JobPart, JobState, JobView, Outcome, PartState};
use serde::{Deserialize, Serialize};

use crate::{JobRecord, PartFailure};

/// One job row. Lists and maps go to JSON columns; everything else is a column.
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
    pub slice_at: Option<StoredSliceAt>,
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
    pub first_failure: Option<StoredFailure>,
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
    pub array_progress: Option<crate::ArrayProgress>,
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
}

/// What an attempt used (the store's own copy of `wire::contain::Usage`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoredUsage {
    pub cpu_ms: u64,
    pub mem_peak_bytes: Option<u64>,
    pub cpu_pressure_ms: Option<u64>,
    pub mem_pressure_ms: Option<u64>,
}

impl StoredUsage {
    fn from_wire(u: &Usage) -> Self {
        let Usage {
            cpu_ms,
            mem_peak_bytes,
            cpu_pressure_ms,
            mem_pressure_ms,
        } = *u;
        StoredUsage {
            cpu_ms,
            mem_peak_bytes,
            cpu_pressure_ms,
            mem_pressure_ms,
        }
    }

    fn into_wire(self) -> Usage {
        Usage {
            cpu_ms: self.cpu_ms,
            mem_peak_bytes: self.mem_peak_bytes,
            cpu_pressure_ms: self.cpu_pressure_ms,
            mem_pressure_ms: self.mem_pressure_ms,
        }
    }
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

impl StoredArray {
    fn from_wire(a: &gpusched_wire::ArraySpec) -> Self {
        StoredArray {
            first: a.first,
            last: a.last,
            step: a.step,
            max_running: a.max_running,
        }
    }

    fn into_wire(self) -> gpusched_wire::ArraySpec {
        gpusched_wire::ArraySpec {
            first: self.first,
            last: self.last,
            step: self.step,
            max_running: self.max_running,
        }
    }
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

/// The first failing part of a gang's attempt (the store's copy of `PartFailure`).
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

impl StoredJob {
    /// The row for a job of the server. Both structs are taken apart field by field (no
    /// `..`), so a field added to either is a compile error here until it is stored or
    /// said to be derived.
    pub fn from_record(r: &JobRecord) -> StoredJob {
        let JobRecord {
            view,
            env,
            client_token,
            grace_s,
            attempt_nodes,
            agent_stops,
            first_failure,
            array_progress,
            behind,
            recalls,
        } = r;
        let JobView {
            id,
            name,
            user,
            state,
            reason,
            command,
            cwd,
            gpus,
            gpu_model,
            slice,
            slice_at,
            queue,
            cpu_milli,
            mem_mib,
            resources,
            priority,
            walltime_s,
            node,
            gpu_indices,
            attempt,
            max_retries,
            exit_code,
            signal,
            submit_ms,
            start_ms,
            end_ms,
            cancel_requested,
            after,
            // Derived: worked out for each view by the server.
            est_start_ms: _,
            preemptions,
            preempt_requested,
            last_checkpoint_ms,
            // Derived: the keys of `env`.
            env_keys: _,
            nodes,
            gpus_per_node,
            split,
            tasks_per_node,
            mixed_models,
            parts,
            master_port,
            energy_j,
            after_any,
            after_notok,
            held,
            array,
            // Derived: counted by the server from its tasks.
            array_counts: _,
            array_task,
            image,
            pids_max,
            usage,
        } = view;
        let (end_reason, note) = if state.is_terminal() {
            (Some(reason.clone()), None)
        } else {
            (None, Some(reason.clone()).filter(|s| !s.is_empty()))
        };
        StoredJob {
            id: *id,
            name: name.clone(),
            user: user.clone(),
            queue: queue.clone(),
            command: command.clone(),
            cwd: cwd.clone(),
            gpus: *gpus,
            gpu_model: gpu_model.clone(),
            slice: slice.as_deref().map(StoredSlice::from_wire),
            cpu_milli: *cpu_milli,
            mem_mib: *mem_mib,
            resources: resources.clone(),
            priority: *priority,
            walltime_s: *walltime_s,
            max_retries: *max_retries,
            after: after.clone(),
            env: env.clone(),
            client_token: client_token.clone(),
            grace_s: *grace_s,
            submit_ms: *submit_ms,
            state: *state,
            attempt: *attempt,
            node: node.clone(),
            gpu_indices: gpu_indices.clone(),
            slice_at: slice_at.as_deref().map(StoredSliceAt::from_wire),
            start_ms: *start_ms,
            end_ms: *end_ms,
            exit_code: *exit_code,
            signal: *signal,
            end_reason,
            note,
            cancel_requested: *cancel_requested,
            preempt_requested: *preempt_requested,
            preemptions: *preemptions,
            agent_stops: *agent_stops,
            attempt_nodes: attempt_nodes.clone(),
            last_checkpoint_ms: *last_checkpoint_ms,
            nodes: *nodes,
            gpus_per_node: *gpus_per_node,
            split: *split,
            tasks_per_node: *tasks_per_node,
            mixed_models: *mixed_models,
            parts: parts.iter().map(StoredPart::from_wire).collect(),
            master_port: *master_port,
            first_failure: first_failure.as_deref().map(StoredFailure::from_record),
            energy_j: *energy_j,
            after_any: after_any.clone(),
            after_notok: after_notok.clone(),
            held: *held,
            array: array.as_ref().map(StoredArray::from_wire),
            array_task: array_task.map(|t| StoredArrayTask {
                array_id: t.array_id,
                index: t.index,
            }),
            array_progress: array_progress.as_deref().cloned(),
            behind: behind.map(std::num::NonZeroU64::get),
            recalls: *recalls,
            image: image.clone(),
            pids_max: *pids_max,
            usage: usage.as_deref().map(StoredUsage::from_wire),
        }
    }

    /// The server's job from its row; what the server works out is left for it to fill
    /// (no estimated start; a pending job's reason holds only its note).
    pub fn into_record(self) -> JobRecord {
        let reason = match self.state.is_terminal() {
            true => self.end_reason.unwrap_or_default(),
            false => self.note.unwrap_or_default(),
        };
        JobRecord {
            view: JobView {
                id: self.id,
                name: self.name,
                user: self.user,
                state: self.state,
                reason,
                command: self.command,
                cwd: self.cwd,
                gpus: self.gpus,
                gpu_model: self.gpu_model,
                slice: self.slice.map(|s| Box::new(s.into_wire())),
                slice_at: self.slice_at.map(|s| Box::new(s.into_wire())),
                queue: self.queue,
                cpu_milli: self.cpu_milli,
                mem_mib: self.mem_mib,
                resources: self.resources,
                priority: self.priority,
                walltime_s: self.walltime_s,
                node: self.node,
                gpu_indices: self.gpu_indices,
                attempt: self.attempt,
                max_retries: self.max_retries,
                exit_code: self.exit_code,
                signal: self.signal,
                submit_ms: self.submit_ms,
                start_ms: self.start_ms,
                end_ms: self.end_ms,
                cancel_requested: self.cancel_requested,
                after: self.after,
                est_start_ms: None,
                preemptions: self.preemptions,
                preempt_requested: self.preempt_requested,
                last_checkpoint_ms: self.last_checkpoint_ms,
                env_keys: self.env.keys().cloned().collect(),
                nodes: self.nodes,
                gpus_per_node: self.gpus_per_node,
                split: self.split,
                tasks_per_node: self.tasks_per_node,
                mixed_models: self.mixed_models,
                parts: self.parts.into_iter().map(StoredPart::into_wire).collect(),
                master_port: self.master_port,
                energy_j: self.energy_j,
                after_any: self.after_any,
                after_notok: self.after_notok,
                held: self.held,
                array: self.array.map(StoredArray::into_wire),
                array_counts: None,
                array_task: self.array_task.map(|t| gpusched_wire::ArrayTask {
                    array_id: t.array_id,
                    index: t.index,
                }),
                image: self.image,
                pids_max: self.pids_max,
                usage: self.usage.map(|u| Box::new(u.into_wire())),
            },
            env: self.env,
            client_token: self.client_token,
            grace_s: self.grace_s,
            attempt_nodes: self.attempt_nodes,
            agent_stops: self.agent_stops,
            first_failure: self.first_failure.map(|f| Box::new(f.into_record())),
            array_progress: self.array_progress.map(Box::new),
            behind: self.behind.and_then(std::num::NonZeroU64::new),
            recalls: self.recalls,
        }
    }
}

impl StoredPart {
    fn from_wire(p: &JobPart) -> StoredPart {
        StoredPart {
            rank: p.rank,
            node: p.node.clone(),
            gpu_indices: p.gpu_indices.clone(),
            addr: p.addr.clone(),
            state: match p.state {
                PartState::Starting => StoredPartState::Starting,
                PartState::Running => StoredPartState::Running,
                PartState::Done => StoredPartState::Done,
                PartState::Failed => StoredPartState::Failed,
                PartState::Stopped => StoredPartState::Stopped,
            },
            exit_code: p.exit_code,
            signal: p.signal,
        }
    }

    fn into_wire(self) -> JobPart {
        JobPart {
            rank: self.rank,
            node: self.node,
            gpu_indices: self.gpu_indices,
            addr: self.addr,
            state: match self.state {
                StoredPartState::Starting => PartState::Starting,
                StoredPartState::Running => PartState::Running,
                StoredPartState::Done => PartState::Done,
                StoredPartState::Failed => PartState::Failed,
                StoredPartState::Stopped => PartState::Stopped,
            },
            exit_code: self.exit_code,
            signal: self.signal,
        }
    }
}

impl StoredFailure {
    fn from_record(f: &PartFailure) -> StoredFailure {
        let outcome = match &f.outcome {
            Outcome::Exited { code } => StoredOutcome::Exited { code: *code },
            Outcome::Signaled { signal } => StoredOutcome::Signaled { signal: *signal },
            Outcome::TimedOut { walltime_s } => StoredOutcome::TimedOut {
                walltime_s: *walltime_s,
            },
            Outcome::Cancelled => StoredOutcome::Cancelled,
            Outcome::SpawnFailed { message } => StoredOutcome::SpawnFailed {
                message: message.clone(),
            },
            Outcome::Lost { message } => StoredOutcome::Lost {
                message: message.clone(),
            },
            Outcome::Preempted => StoredOutcome::Preempted,
            Outcome::Stopped { message } => StoredOutcome::Stopped {
                message: message.clone(),
            },
            Outcome::OutOfMemory {
                peak_bytes,
                limit_bytes,
            } => StoredOutcome::OutOfMemory {
                peak_bytes: *peak_bytes,
                limit_bytes: *limit_bytes,
            },
        };
        StoredFailure {
            rank: f.rank,
            outcome,
            at_ms: f.at_ms,
        }
    }

    fn into_record(self) -> PartFailure {
        let outcome = match self.outcome {
            StoredOutcome::Exited { code } => Outcome::Exited { code },
            StoredOutcome::Signaled { signal } => Outcome::Signaled { signal },
            StoredOutcome::TimedOut { walltime_s } => Outcome::TimedOut { walltime_s },
            StoredOutcome::Cancelled => Outcome::Cancelled,
            StoredOutcome::SpawnFailed { message } => Outcome::SpawnFailed { message },
            StoredOutcome::Lost { message } => Outcome::Lost { message },
            StoredOutcome::Preempted => Outcome::Preempted,
            StoredOutcome::Stopped { message } => Outcome::Stopped { message },
            StoredOutcome::OutOfMemory {
                peak_bytes,
                limit_bytes,
            } => Outcome::OutOfMemory {
                peak_bytes,
                limit_bytes,
            },
        };
        PartFailure {
            rank: self.rank,
            outcome,
            at_ms: self.at_ms,
        }
    }
}

impl StoredSlice {
    fn from_wire(s: &SliceAsk) -> StoredSlice {
        match s {
            SliceAsk::Share { milli } => StoredSlice::Share { milli: *milli },
            SliceAsk::Memory { mib } => StoredSlice::Memory { mib: *mib },
            SliceAsk::Mig { profile } => StoredSlice::Mig {
                profile: profile.clone(),
            },
        }
    }

    fn into_wire(self) -> SliceAsk {
        match self {
            StoredSlice::Share { milli } => SliceAsk::Share { milli },
            StoredSlice::Memory { mib } => SliceAsk::Memory { mib },
            StoredSlice::Mig { profile } => SliceAsk::Mig { profile },
        }
    }
}

impl StoredSliceAt {
    fn from_wire(s: &SliceAt) -> StoredSliceAt {
        StoredSliceAt {
            gpu: s.gpu,
            milli: s.milli,
            mem_mib: s.mem_mib,
            mig: s.mig.as_ref().map(|m| StoredMig {
                profile: m.profile.clone(),
                start: m.start,
                size: m.size,
                create: m.create,
                destroy: m.destroy.clone(),
                uuid: m.uuid.clone(),
            }),
        }
    }

    fn into_wire(self) -> SliceAt {
        SliceAt {
            gpu: self.gpu,
            milli: self.milli,
            mem_mib: self.mem_mib,
            mig: self.mig.map(|m| MigAt {
                profile: m.profile,
                start: m.start,
                size: m.size,
                create: m.create,
                destroy: m.destroy,
                uuid: m.uuid,
            }),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A record with every stored field set to something other than its default.
    pub(crate) fn full_record() -> JobRecord {
        JobRecord {
            view: JobView {
                id: 42,
                name: "train".into(),
                user: "alice".into(),
                state: JobState::Running,
                reason: "being preempted on n1 to return GPUs to queue `q` (job 7)".into(),
                command: vec!["python".into(), "train.py".into()],
                cwd: "/home/alice".into(),
                gpus: 0,
                gpu_model: Some("A100".into()),
                slice: Some(Box::new(SliceAsk::Mig {
                    profile: "3g.40gb".into(),
                })),
                slice_at: Some(Box::new(SliceAt {
                    gpu: 1,
                    milli: 428,
                    mem_mib: 40960,
                    mig: Some(MigAt {
                        profile: "3g.40gb".into(),
                        start: 4,
                        size: 4,
                        create: true,
                        destroy: vec![0, 2],
                        uuid: Some("MIG-abc".into()),
                    }),
                })),
                queue: "research".into(),
                cpu_milli: 2500,
                mem_mib: 16384,
                resources: [("fpga".to_string(), 2)].into(),
                priority: -3,
                walltime_s: Some(7200),
                node: Some("n1".into()),
                gpu_indices: vec![1],
                attempt: 3,
                max_retries: 5,
                exit_code: Some(137),
                signal: Some(9),
                submit_ms: 1_000,
                start_ms: Some(2_000),
                end_ms: Some(3_000),
                cancel_requested: true,
                after: vec![3, 4],
                est_start_ms: None,
                preemptions: 1,
                preempt_requested: true,
                last_checkpoint_ms: Some(2_500),
                env_keys: vec!["A".into(), "B".into()],
                nodes: 2,
                gpus_per_node: 4,
                split: true,
                tasks_per_node: Some(2),
                mixed_models: true,
                parts: vec![
                    JobPart {
                        rank: 0,
                        node: "n1".into(),
                        gpu_indices: vec![1],
                        addr: Some("10.0.0.1".into()),
                        state: PartState::Running,
                        exit_code: None,
                        signal: None,
                    },
                    JobPart {
                        rank: 1,
                        node: "n2".into(),
                        gpu_indices: vec![0, 3],
                        addr: None,
                        state: PartState::Failed,
                        exit_code: Some(3),
                        signal: Some(15),
                    },
                    JobPart {
                        rank: 2,
                        node: "n3".into(),
                        gpu_indices: vec![2],
                        addr: None,
                        state: PartState::Stopped,
                        exit_code: None,
                        signal: Some(15),
                    },
                ],
                master_port: Some(29500),
                energy_j: Some(123_456),
                after_any: vec![5],
                after_notok: vec![6, 7],
                held: true,
                array: Some(gpusched_wire::ArraySpec {
                    first: 0,
                    last: 98,
                    step: 2,
                    max_running: Some(4),
                }),
                array_counts: None,
                array_task: Some(gpusched_wire::ArrayTask {
                    array_id: 2,
                    index: 9,
                }),
                image: Some("localhost/pytorch:24.01".into()),
                pids_max: Some(512),
                usage: Some(Box::new(Usage {
                    cpu_ms: 3_723_000,
                    mem_peak_bytes: Some(3 << 30),
                    cpu_pressure_ms: Some(1_200),
                    mem_pressure_ms: Some(40),
                })),
            },
            env: [("A".into(), "1".into()), ("B".into(), "x=y".into())].into(),
            client_token: Some("tok-1".into()),
            grace_s: 30,
            attempt_nodes: [(1, "n0".into()), (2, "n2".into()), (3, "n1".into())].into(),
            agent_stops: 1,
            first_failure: Some(Box::new(PartFailure {
                rank: 1,
                outcome: Outcome::SpawnFailed {
                    message: "no such file".into(),
                },
                at_ms: 2_700,
            })),
            array_progress: Some(Box::new(crate::ArrayProgress {
                next: 12,
                succeeded: 7,
                failed: 2,
                cancelled: 1,
                timed_out: 1,
                skipped: vec![30, 44],
                unwritten: vec![
                    crate::UnwrittenTask {
                        id: 60,
                        index: 12,
                        behind: None,
                    },
                    crate::UnwrittenTask {
                        id: 61,
                        index: 13,
                        behind: std::num::NonZeroU64::new(60),
                    },
                ],
            })),
            behind: std::num::NonZeroU64::new(41),
            recalls: 2,
        }
    }

    #[test]
    fn a_record_survives_the_row_and_back_with_every_stored_field() {
        let r = full_record();
        assert_eq!(StoredJob::from_record(&r).into_record(), r);
        let mut ended = r.clone();
        ended.view.state = JobState::Failed;
        ended.view.reason = "exit code 137".into();
        let row = StoredJob::from_record(&ended);
        assert_eq!(row.end_reason.as_deref(), Some("exit code 137"));
        assert_eq!(row.note, None);
        assert_eq!(row.into_record(), ended);
    }

    #[test]
    fn what_the_server_works_out_is_not_kept() {
        let mut r = full_record();
        r.view.state = JobState::Pending;
        r.view.reason = String::new();
        r.view.est_start_ms = Some(9_000);
        let back = StoredJob::from_record(&r).into_record();
        assert_eq!(back.view.est_start_ms, None);
        assert_eq!(back.view.reason, "");
        // The names shown are the keys of the environment, whatever the view said.
        r.view.env_keys = vec!["stale".into()];
        let back = StoredJob::from_record(&r).into_record();
        assert_eq!(back.view.env_keys, ["A", "B"]);
    }
}
