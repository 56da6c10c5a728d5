//! Job arrays: one submission, one record, one id (see ARCHITECTURE.md, "Arrays").
//!
//! An array is stored as ONE job whose `view.array` holds its index range and whose
//! `array_progress` says how far it got. It never enters the core's queue itself. Its
//! tasks become jobs of their own only when they could start (HyperQueue's trick): before
//! each pass, every array that may run offers the core at most as many materialised
//! pending tasks as its task shape could start on the free GPUs now (at least one,
//! bounded by the `%K` headroom), in index order. They join the queue at the array's
//! submit time and priority, so the policy sees them in the array's place; those the pass
//! did not start stay pending and count against the next offer. So the tasks that exist
//! but have not started are bounded by the cluster's size, never by the array's length.
//!
//! The array's own state is derived from its tasks and moves through `set_state` /
//! `end` like any job's, so `after`, `wait`, metrics and job events need nothing else:
//! pending until a task is placed; running while any task is starting or running or
//! some are left; at the end succeeded if every task succeeded, cancelled if the array
//! was cancelled as a whole (or every task was cancelled), else failed.

use std::collections::BTreeMap;

use crate::record::JobRecord;
use gpusched_core::live::TaskShape;
use gpusched_core::JobState as CoreState;
use gpusched_store::ArrayProgress;
use gpusched_wire::history::JobEventKind;
use gpusched_wire::{ArrayCounts, ArraySpec, ArrayTask, JobState};

use super::State;

/// The environment variables the server sets in every task (named by the store, whose
/// compact task records rebuild them).
pub const INDEX_VAR: &str = gpusched_store::ARRAY_INDEX_VAR;
pub const ID_VAR: &str = gpusched_store::ARRAY_ID_VAR;

/// What the server keeps in memory for an array that has not ended (rebuilt at start
/// from the array's row and its live tasks' rows).
#[derive(Debug, Default)]
pub(super) struct ArrayRun {
    /// Its dependencies are met (it went through `enqueue`): tasks may be materialised.
    pub ready: bool,
    /// Materialised tasks that have not ended, by index → job id.
    pub live: BTreeMap<u32, u64>,
    /// What its tasks were made from when last checked (`task_record` of id 0, index 0):
    /// a change of it means its listed tasks are checked again.
    pub template: Option<Box<JobRecord>>,
}

/// The ordinal (position in the range) of an index of `spec`.
fn ordinal(spec: &ArraySpec, index: u32) -> u64 {
    u64::from(index - spec.first) / u64::from(spec.step.max(1))
}

/// How many indices are neither materialised nor skipped yet.
pub(super) fn unmaterialised(spec: &ArraySpec, p: &ArrayProgress) -> u64 {
    let left = spec.len().saturating_sub(p.next);
    let skipped_ahead = p
        .skipped
        .iter()
        .filter(|&&i| ordinal(spec, i) >= p.next)
        .count() as u64;
    left.saturating_sub(skipped_ahead)
}

impl State {
    /// An array's record is ready to run (its dependencies are met): called from
    /// `enqueue` instead of adding it to the core's queue.
    pub(super) fn array_ready(&mut self, id: u64) {
        self.arrays.entry(id).or_default().ready = true;
        self.sched_due = true;
    }

    /// A job loaded from the store: a live task joins its array's in-memory run.
    pub(super) fn array_loaded(&mut self, job: &JobRecord) {
        if job.view.state.is_terminal() {
            return;
        }
        if let Some(t) = job.view.array_task {
            self.arrays
                .entry(t.array_id)
                .or_default()
                .live
                .insert(t.index, job.view.id);
        }
    }

    /// Materialises the tasks each ready array offers this pass (see the module's doc):
    /// before the pass, those that could start or follow; after it (`to_follow`), those
    /// that could follow the tasks it started. Whether any was.
    pub(super) fn materialise_arrays(&mut self, to_follow: bool) -> bool {
        let mut any = false;
        if self.arrays.is_empty() || (to_follow && self.cfg.follow.is_none()) {
            return any;
        }
        let ids: Vec<u64> = self
            .arrays
            .iter()
            .filter(|(_, r)| r.ready)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let Some(job) = self.jobs.get(&id) else {
                continue;
            };
            let v = &job.view;
            let (Some(spec), Some(progress)) = (v.array, job.array_progress.as_ref()) else {
                continue;
            };
            if v.state.is_terminal() || v.held || v.cancel_requested {
                continue;
            }
            let left = unmaterialised(&spec, progress);
            if left == 0 {
                continue;
            }
            let (mut waiting, mut holding) = (0u64, 0u64);
            for task in self.arrays[&id].live.values() {
                match self.jobs.get(task).map(|j| j.view.state) {
                    // A follower fills a place to follow, which `follow_slots` no
                    // longer counts.
                    Some(JobState::Pending) if self.cluster.following(*task).is_some() => {}
                    Some(JobState::Pending) => waiting += 1,
                    Some(_) => holding += 1,
                    None => {}
                }
            }
            let mut offer = if to_follow {
                0
            } else {
                let free = self.free_slots(v).max(1);
                match spec.max_running {
                    Some(k) => free.min(u64::from(k).saturating_sub(holding)),
                    None => free,
                }
            };
            // And as many as could wait behind its running tasks (and other jobs of
            // their kind) to start the moment those end (`follow.rs`).
            offer += self.follow_slots(v);
            let add = offer.saturating_sub(waiting).min(left);
            for _ in 0..add {
                if !self.materialise_one(id) {
                    break;
                }
                any = true;
            }
        }
        any
    }

    /// How many tasks of array `v` could follow running jobs now (see the core's
    /// `live/follow.rs`).
    fn follow_slots(&self, v: &gpusched_wire::JobView) -> u64 {
        let Some(cfg) = self.cfg.follow else {
            return 0;
        };
        // Only tasks short enough to follow are offered for it.
        let short = self.estimate_for(v).is_some_and(|e| e <= cfg.under);
        let Some(&q) = self.queue_ids.get(&v.queue).filter(|_| short) else {
            return 0;
        };
        let mut task = self.live_job(v, q);
        task.group = self.job_group(v);
        self.cluster.open_follow_slots(&task)
    }

    /// How many tasks of `v`'s shape the online nodes could start now (the core's
    /// `LiveCluster::start_slots`).
    fn free_slots(&self, v: &gpusched_wire::JobView) -> u64 {
        let shape = if v.slice.is_some() || v.gpus == 0 {
            TaskShape::NoWholeGpu
        } else {
            TaskShape::Whole {
                // A split gang's layout is chosen at placement: one node's worth.
                per_node: if v.split || v.gpus_per_node == 0 {
                    v.gpus
                } else {
                    v.gpus_per_node
                },
                nodes: v.nodes,
            }
        };
        self.cluster.start_slots(shape)
    }

    /// Makes the array's next unstarted index a pending job of its own, in the core's
    /// queue. False when there is none left.
    fn materialise_one(&mut self, array_id: u64) -> bool {
        let Some(array) = self.jobs.get(&array_id) else {
            return false;
        };
        let Some(spec) = array.view.array else {
            return false;
        };
        let mut progress = array.array_progress.clone().unwrap_or_default();
        let index = loop {
            let Some(index) = spec.index(progress.next) else {
                return false;
            };
            progress.next += 1;
            if progress.skipped.binary_search(&index).is_err() {
                break index;
            }
        };
        if let Some(a) = self.jobs.get_mut(&array_id) {
            a.array_progress = Some(progress);
        }
        let Some(id) = self.make_task(array_id, index) else {
            return false;
        };
        // Past the list's room the task's row is written (it is marked already).
        self.list_unwritten(array_id, id);
        true
    }

    /// Makes index `index` of array `array_id` a pending job of its own, in the core's
    /// queue, with the next id; its id (None if there is no such array). The caller
    /// keeps the array's progress.
    pub(super) fn make_task(&mut self, array_id: u64, index: u32) -> Option<u64> {
        let array = self.jobs.get(&array_id)?;
        let id = self.next_id;
        self.next_id += 1;
        let task = task_record(array, id, index);
        self.arrays
            .entry(array_id)
            .or_default()
            .live
            .insert(index, id);
        self.enqueue(&task);
        self.jobs.insert(id, Box::new(task));
        self.note(
            id,
            JobEventKind::Submitted,
            format!("task {index} of array {array_id}"),
        );
        Some(id)
    }

    /// A task was placed: its array is running from now on.
    pub(super) fn array_task_placed(&mut self, id: u64) {
        let Some(t) = self.jobs.get(&id).and_then(|j| j.view.array_task) else {
            return;
        };
        let pending = self
            .jobs
            .get(&t.array_id)
            .is_some_and(|a| a.view.state == JobState::Pending);
        if pending && self.set_state(t.array_id, &[CoreState::Starting, CoreState::Running]) {
            let now = self.now.ms;
            if let Some(a) = self.jobs.get_mut(&t.array_id) {
                a.view.start_ms = Some(now);
                a.view.reason = "its tasks are running".into();
            }
        }
    }

    /// Job `id` ended as `state`: if it is a task, its array counts it (and may end); if
    /// it is an array (a dependency failed, or it was cancelled), its unstarted indices
    /// will never start.
    pub(super) fn array_member_ended(&mut self, id: u64, state: JobState, at_ms: u64) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        if job.view.array.is_some() {
            self.arrays.remove(&id);
            if let Some(a) = self.jobs.get_mut(&id) {
                let spec = a.view.array.unwrap_or(ArraySpec {
                    first: 0,
                    last: 0,
                    step: 1,
                    max_running: None,
                });
                let p = a.array_progress.get_or_insert_with(Default::default);
                p.cancelled += unmaterialised(&spec, p);
                p.next = spec.len();
            }
            return;
        }
        let Some(t) = job.view.array_task else {
            return;
        };
        if let Some(run) = self.arrays.get_mut(&t.array_id) {
            run.live.remove(&t.index);
        }
        let Some(a) = self.jobs.get_mut(&t.array_id) else {
            return;
        };
        let p = a.array_progress.get_or_insert_with(Default::default);
        // A task cancelled before it started is counted through `skipped`.
        let skipped = p.skipped.binary_search(&t.index).is_ok();
        match state {
            JobState::Succeeded => p.succeeded += 1,
            JobState::Failed => p.failed += 1,
            JobState::Cancelled if skipped => {}
            JobState::Cancelled => p.cancelled += 1,
            JobState::TimedOut => p.timed_out += 1,
            _ => {}
        }
        self.array_settle(t.array_id, at_ms);
    }

    /// Ends an array whose every task has ended (and none is left to start).
    pub(super) fn array_settle(&mut self, id: u64, at_ms: u64) {
        let Some(a) = self.jobs.get(&id) else {
            return;
        };
        let (Some(spec), Some(p)) = (a.view.array, a.array_progress.as_ref()) else {
            return;
        };
        if a.view.state.is_terminal()
            || unmaterialised(&spec, p) > 0
            || self.arrays.get(&id).is_some_and(|r| !r.live.is_empty())
        {
            return;
        }
        let c = self.array_counts(a);
        let total = spec.len();
        let (state, reason) = if a.view.cancel_requested {
            (
                JobState::Cancelled,
                format!(
                    "cancelled: {} of {total} tasks succeeded before",
                    c.succeeded
                ),
            )
        } else if c.succeeded == total {
            (JobState::Succeeded, format!("all {total} tasks succeeded"))
        } else if c.cancelled == total || a.view.state == JobState::Pending {
            (
                JobState::Cancelled,
                format!("every one of its {total} tasks was cancelled"),
            )
        } else {
            (
                JobState::Failed,
                format!(
                    "{} of {total} tasks did not succeed ({} failed, {} timed out, {} \
                     cancelled); `gpusched queue --all --tasks {id}` lists them",
                    total - c.succeeded,
                    c.failed,
                    c.timed_out,
                    c.cancelled
                ),
            )
        };
        self.end(id, state, reason, at_ms);
    }

    /// How many of an array's tasks are in each state: the ended ones from its
    /// progress, the live ones from their records, the rest pending.
    pub(super) fn array_counts(&self, array: &JobRecord) -> ArrayCounts {
        let (Some(spec), Some(p)) = (array.view.array, array.array_progress.as_ref()) else {
            return ArrayCounts::default();
        };
        let mut c = ArrayCounts {
            pending: unmaterialised(&spec, p),
            succeeded: p.succeeded,
            failed: p.failed,
            cancelled: p.cancelled + p.skipped.len() as u64,
            timed_out: p.timed_out,
            ..Default::default()
        };
        if let Some(run) = self.arrays.get(&array.view.id) {
            for task in run.live.values() {
                match self.jobs.get(task).map(|j| j.view.state) {
                    Some(JobState::Pending) => c.pending += 1,
                    Some(JobState::Starting) => c.starting += 1,
                    Some(JobState::Running) => c.running += 1,
                    _ => {}
                }
            }
        }
        c
    }

    /// The job id of a materialised task of an array, if it has one in memory.
    pub fn task_id(&self, array_id: u64, index: u32) -> Option<u64> {
        if let Some(&id) = self.arrays.get(&array_id).and_then(|r| r.live.get(&index)) {
            return Some(id);
        }
        // Ended tasks: their ids are above the array's (taken later from the counter);
        // one that left memory was read back from the store for this round, if asked.
        let is = |j: &JobRecord| j.view.array_task == Some(ArrayTask { array_id, index });
        self.jobs
            .range(array_id.saturating_add(1)..)
            .find(|(_, j)| is(j))
            .map(|(id, _)| *id)
            .or_else(|| self.recalled_where(&is))
    }
}

/// A task of `array` as a job of its own: the array's shape, queue, priority,
/// walltime and environment, plus its index; it waits on nothing (the array started
/// materialising only once its dependencies were met).
pub(super) fn task_record(array: &JobRecord, id: u64, index: u32) -> JobRecord {
    let a = &array.view;
    let mut env = array.env.clone();
    env.insert(INDEX_VAR.into(), index.to_string());
    env.insert(ID_VAR.into(), a.id.to_string());
    let mut view = a.clone();
    view.id = id;
    view.name = format!("{}[{index}]", a.name);
    view.state = JobState::Pending;
    view.reason = String::new();
    view.start_ms = None;
    view.end_ms = None;
    view.cancel_requested = false;
    view.after = Vec::new();
    view.after_any = Vec::new();
    view.after_notok = Vec::new();
    view.held = false;
    view.array = None;
    view.array_counts = None;
    view.array_task = Some(ArrayTask {
        array_id: a.id,
        index,
    });
    view.env_keys = env.keys().cloned().collect();
    view.est_start_ms = None;
    view.energy_j = None;
    view.usage = None;
    JobRecord {
        view,
        env,
        client_token: None,
        grace_s: array.grace_s,
        attempt_nodes: Default::default(),
        agent_stops: 0,
        first_failure: None,
        array_progress: None,
        behind: None,
        recalls: 0,
    }
}
