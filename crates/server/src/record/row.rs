//! The mapping between the server's [`JobRecord`] and the store's row, [`StoredJob`],
//! written out once, field by field, so a change to the API is a change to this mapping,
//! not to the schema. Applied once per row: when a round's rows are written
//! (`JobRecord::to_row`) and when rows are loaded (`JobRecord::from_row`).
//!
//! Not stored, because the server works them out: the reason a pending job waits and its
//! estimated start (computed for each view), the names of its environment variables (the
//! keys of `env`) and an array's counts (counted from its tasks).

use gpusched_store::{
    StoredArray, StoredArrayTask, StoredFailure, StoredJob, StoredMig, StoredOutcome, StoredPart,
    StoredPartState, StoredSlice, StoredSliceAt, StoredUsage,
};
use gpusched_wire::contain::Usage;
use gpusched_wire::slice::{MigAt, SliceAsk, SliceAt};
use gpusched_wire::{JobPart, JobView, Outcome, PartState};

use super::{JobRecord, PartFailure};

impl JobRecord {
    /// The store's row for a job of the server. Both structs are taken apart field by field (no
    /// `..`), so a field added to either is a compile error here until it is stored or
    /// said to be derived.
    pub fn to_row(&self) -> StoredJob {
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
        } = self;
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
            account,
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
            // Steps are rows of their own (`steps`), never the job's.
            steps: _,
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
            service,
            rules,
            interactive,
            idle_gpu_s,
            step_use,
            speed,
            deadline,
            elastic,
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
            account: account.clone(),
            command: command.clone(),
            cwd: cwd.clone(),
            gpus: *gpus,
            gpu_model: gpu_model.clone(),
            slice: slice.as_deref().map(slice_row),
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
            slice_at: slice_at.as_deref().map(|s| Box::new(slice_at_row(s))),
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
            parts: parts.iter().map(part_row).collect(),
            master_port: *master_port,
            first_failure: first_failure.as_deref().map(|f| Box::new(failure_row(f))),
            energy_j: *energy_j,
            after_any: after_any.clone(),
            after_notok: after_notok.clone(),
            held: *held,
            array: array.as_ref().map(array_row),
            array_task: array_task.map(|t| StoredArrayTask {
                array_id: t.array_id,
                index: t.index,
            }),
            array_progress: array_progress.clone(),
            behind: behind.map(std::num::NonZeroU64::get),
            recalls: *recalls,
            image: image.clone(),
            pids_max: *pids_max,
            usage: usage.as_deref().map(usage_row),
            service: service.as_ref().map(|s| {
                Box::new(gpusched_store::StoredReplica {
                    service: s.service.clone(),
                    version: s.version,
                    port: s.port,
                    ready: s.ready,
                    draining_since_ms: s.draining_since_ms,
                })
            }),
            // Boxed only when it says something: most jobs have no rules.
            placement: Some(gpusched_store::StoredPlacement {
                speedup: speed.as_ref().and_then(|s| s.declared.clone()),
                deadline_ms: deadline.as_ref().map(|d| d.at_ms),
                gpus_max: elastic.as_ref().map(|e| e.gpus_max),
                scaling_serial_milli: elastic.as_deref().map(crate::state::elastic::serial_milli),
                ..rules
                    .as_ref()
                    .map(|r| gpusched_store::StoredPlacement {
                        partitions: r.partitions.clone(),
                        constraint: r.constraint.clone(),
                        nodelist: r.nodelist.clone(),
                        exclude: r.exclude.clone(),
                        reservation: r.reservation.clone(),
                        speedup: None,
                        deadline_ms: None,
                        gpus_max: None,
                        scaling_serial_milli: None,
                    })
                    .unwrap_or_default()
            })
            .filter(|p| !p.is_empty())
            .map(Box::new),
            interactive: *interactive,
            idle_gpu_s: idle_gpu_s.map(u64::from),
            steps_run: step_use.as_ref().map_or(0, |u| u64::from(u.steps)),
            step_gpu_s: step_use.as_ref().map_or(0, |u| u.gpu_s),
        }
    }

    /// The server's job from its row; what the server works out is left for it to fill
    /// (no estimated start; a pending job's reason holds only its note).
    pub fn from_row(row: StoredJob) -> JobRecord {
        let reason = match row.state.is_terminal() {
            true => row.end_reason.unwrap_or_default(),
            false => row.note.unwrap_or_default(),
        };
        let deadline = row.placement.as_ref().and_then(|p| p.deadline_ms);
        let elastic = row
            .placement
            .as_ref()
            .and_then(|p| crate::state::elastic::from_stored(p.gpus_max, p.scaling_serial_milli));
        JobRecord {
            view: JobView {
                id: row.id,
                name: row.name,
                user: row.user,
                state: row.state,
                reason,
                command: row.command,
                cwd: row.cwd,
                gpus: row.gpus,
                gpu_model: row.gpu_model,
                slice: row.slice.map(|s| Box::new(slice_of(s))),
                slice_at: row.slice_at.map(|s| Box::new(slice_at_of(*s))),
                queue: row.queue,
                account: row.account,
                cpu_milli: row.cpu_milli,
                mem_mib: row.mem_mib,
                resources: row.resources,
                priority: row.priority,
                walltime_s: row.walltime_s,
                node: row.node,
                gpu_indices: row.gpu_indices,
                attempt: row.attempt,
                max_retries: row.max_retries,
                exit_code: row.exit_code,
                signal: row.signal,
                submit_ms: row.submit_ms,
                start_ms: row.start_ms,
                end_ms: row.end_ms,
                cancel_requested: row.cancel_requested,
                after: row.after,
                est_start_ms: None,
                preemptions: row.preemptions,
                preempt_requested: row.preempt_requested,
                last_checkpoint_ms: row.last_checkpoint_ms,
                env_keys: row.env.keys().cloned().collect(),
                nodes: row.nodes,
                gpus_per_node: row.gpus_per_node,
                split: row.split,
                tasks_per_node: row.tasks_per_node,
                mixed_models: row.mixed_models,
                parts: row.parts.into_iter().map(part_of).collect(),
                master_port: row.master_port,
                steps: None,
                energy_j: row.energy_j,
                after_any: row.after_any,
                after_notok: row.after_notok,
                held: row.held,
                array: row.array.map(array_of),
                array_counts: None,
                array_task: row.array_task.map(|t| gpusched_wire::ArrayTask {
                    array_id: t.array_id,
                    index: t.index,
                }),
                image: row.image,
                pids_max: row.pids_max,
                speed: row
                    .placement
                    .as_ref()
                    .and_then(|p| p.speedup.clone())
                    .map(|d| {
                        Box::new(gpusched_wire::JobSpeed {
                            declared: Some(d),
                            on: Vec::new(),
                        })
                    }),
                rules: row
                    .placement
                    .map(|p| {
                        Box::new(gpusched_wire::JobRules {
                            partitions: p.partitions,
                            constraint: p.constraint,
                            nodelist: p.nodelist,
                            exclude: p.exclude,
                            reservation: p.reservation,
                        })
                    })
                    .filter(|r| !r.is_empty()),
                interactive: row.interactive,
                usage: row.usage.map(|u| Box::new(usage_of(u))),
                service: row.service.as_ref().map(|s| {
                    Box::new(gpusched_wire::ReplicaOf {
                        service: s.service.clone(),
                        version: s.version,
                        port: s.port,
                        ready: s.ready,
                        draining_since_ms: s.draining_since_ms,
                    })
                }),
                idle_gpu_s: row.idle_gpu_s.map(|s| u32::try_from(s).unwrap_or(u32::MAX)),
                step_use: (row.steps_run > 0).then(|| {
                    Box::new(gpusched_wire::step::StepUse {
                        steps: u32::try_from(row.steps_run).unwrap_or(u32::MAX),
                        gpu_s: row.step_gpu_s,
                    })
                }),
                deadline: deadline.map(crate::state::deadline::stored),
                elastic,
            },
            env: row.env,
            client_token: row.client_token,
            grace_s: row.grace_s,
            attempt_nodes: row.attempt_nodes,
            agent_stops: row.agent_stops,
            first_failure: row.first_failure.map(|f| Box::new(failure_of(*f))),
            array_progress: row.array_progress,
            behind: row.behind.and_then(std::num::NonZeroU64::new),
            recalls: row.recalls,
        }
    }
}

fn part_row(p: &JobPart) -> StoredPart {
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

fn part_of(p: StoredPart) -> JobPart {
    JobPart {
        rank: p.rank,
        node: p.node,
        gpu_indices: p.gpu_indices,
        addr: p.addr,
        state: match p.state {
            StoredPartState::Starting => PartState::Starting,
            StoredPartState::Running => PartState::Running,
            StoredPartState::Done => PartState::Done,
            StoredPartState::Failed => PartState::Failed,
            StoredPartState::Stopped => PartState::Stopped,
        },
        exit_code: p.exit_code,
        signal: p.signal,
    }
}

fn failure_row(f: &PartFailure) -> StoredFailure {
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
        Outcome::Unhealthy { message } => StoredOutcome::Unhealthy {
            message: message.clone(),
        },
    };
    StoredFailure {
        rank: f.rank,
        outcome,
        at_ms: f.at_ms,
    }
}

fn failure_of(f: StoredFailure) -> PartFailure {
    let outcome = match f.outcome {
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
        StoredOutcome::Unhealthy { message } => Outcome::Unhealthy { message },
    };
    PartFailure {
        rank: f.rank,
        outcome,
        at_ms: f.at_ms,
    }
}

fn slice_row(s: &SliceAsk) -> StoredSlice {
    match s {
        SliceAsk::Share { milli } => StoredSlice::Share { milli: *milli },
        SliceAsk::Memory { mib } => StoredSlice::Memory { mib: *mib },
        SliceAsk::Mig { profile } => StoredSlice::Mig {
            profile: profile.clone(),
        },
    }
}

fn slice_of(s: StoredSlice) -> SliceAsk {
    match s {
        StoredSlice::Share { milli } => SliceAsk::Share { milli },
        StoredSlice::Memory { mib } => SliceAsk::Memory { mib },
        StoredSlice::Mig { profile } => SliceAsk::Mig { profile },
    }
}

fn slice_at_row(s: &SliceAt) -> StoredSliceAt {
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

fn slice_at_of(s: StoredSliceAt) -> SliceAt {
    SliceAt {
        gpu: s.gpu,
        milli: s.milli,
        mem_mib: s.mem_mib,
        mig: s.mig.map(|m| MigAt {
            profile: m.profile,
            start: m.start,
            size: m.size,
            create: m.create,
            destroy: m.destroy,
            uuid: m.uuid,
        }),
    }
}

fn usage_row(u: &Usage) -> StoredUsage {
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

fn usage_of(u: StoredUsage) -> Usage {
    Usage {
        cpu_ms: u.cpu_ms,
        mem_peak_bytes: u.mem_peak_bytes,
        cpu_pressure_ms: u.cpu_pressure_ms,
        mem_pressure_ms: u.mem_pressure_ms,
    }
}

fn array_row(a: &gpusched_wire::ArraySpec) -> StoredArray {
    StoredArray {
        first: a.first,
        last: a.last,
        step: a.step,
        max_running: a.max_running,
    }
}

fn array_of(a: StoredArray) -> gpusched_wire::ArraySpec {
    gpusched_wire::ArraySpec {
        first: a.first,
        last: a.last,
        step: a.step,
        max_running: a.max_running,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use gpusched_wire::JobState;

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
                account: Some("physics".into()),
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
                steps: None,
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
                rules: Some(Box::new(gpusched_wire::JobRules {
                    partitions: vec!["gpu".into(), "debug".into()],
                    constraint: Some("a100&(nvlink|ib)".into()),
                    nodelist: vec!["n1".into(), "n2".into()],
                    exclude: vec!["n3".into()],
                    reservation: Some("workshop".into()),
                })),
                interactive: true,
                usage: Some(Box::new(Usage {
                    cpu_ms: 3_723_000,
                    mem_peak_bytes: Some(3 << 30),
                    cpu_pressure_ms: Some(1_200),
                    mem_pressure_ms: Some(40),
                })),
                service: Some(Box::new(gpusched_wire::ReplicaOf {
                    service: "resnet".into(),
                    version: 3,
                    port: Some(41234),
                    ready: true,
                    draining_since_ms: Some(1_700_000_000_000),
                })),
                idle_gpu_s: Some(1_800),
                step_use: Some(Box::new(gpusched_wire::step::StepUse {
                    steps: 3,
                    gpu_s: 5_400,
                })),
                speed: Some(Box::new(gpusched_wire::JobSpeed {
                    declared: Some("A100=1.6,H100=2.8".into()),
                    on: Vec::new(),
                })),
                deadline: None,
                elastic: None,
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
            array_progress: Some(Box::new(gpusched_store::ArrayProgress {
                next: 12,
                succeeded: 7,
                failed: 2,
                cancelled: 1,
                timed_out: 1,
                skipped: vec![30, 44],
                unwritten: vec![
                    gpusched_store::UnwrittenTask {
                        id: 60,
                        index: 12,
                        behind: None,
                    },
                    gpusched_store::UnwrittenTask {
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
        assert_eq!(JobRecord::from_row(r.to_row()), r);
        let mut ended = r.clone();
        ended.view.state = JobState::Failed;
        ended.view.reason = "exit code 137".into();
        let row = ended.to_row();
        assert_eq!(row.end_reason.as_deref(), Some("exit code 137"));
        assert_eq!(row.note, None);
        assert_eq!(JobRecord::from_row(row), ended);
    }

    #[test]
    fn what_the_server_works_out_is_not_kept() {
        let mut r = full_record();
        r.view.state = JobState::Pending;
        r.view.reason = String::new();
        r.view.est_start_ms = Some(9_000);
        let back = JobRecord::from_row(r.to_row());
        assert_eq!(back.view.est_start_ms, None);
        assert_eq!(back.view.reason, "");
        // The names shown are the keys of the environment, whatever the view said.
        r.view.env_keys = vec!["stale".into()];
        let back = JobRecord::from_row(r.to_row());
        assert_eq!(back.view.env_keys, ["A", "B"]);
    }
}
