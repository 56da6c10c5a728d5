//! The compact record of an array task (schema 17): what one task's life changed, kept in
//! a narrow row of `array_tasks` beside its array's row instead of a job row of its own
//! and a row per event in `job_events` (see `sql/array_tasks.rs` for the table).
//!
//! A task is what its array makes of it (`task_template`: the array's submission, its
//! own id, index, name and index variables) plus what happened to it since ([`TaskLife`],
//! and the few columns the reads filter and sum on). [`rebuild`] puts the two together;
//! every reader of jobs returns the rebuilt task, so a compact task reads exactly as a
//! job row would. The server writes a task compactly only when [`rebuild`] of what it
//! would write gives back the very row it holds (`compact_of` then `rebuild`, compared):
//! whatever this record does not carry (a slice's place, a gang's failure...) makes the
//! task a job row of its own instead, from then on.
//!
//! Nothing the array can still change reaches a task through the template: a pending
//! array's `update` (priority, walltime, queue) is carried in the task's own record, and
//! everything else of an array's submission is fixed.

use std::collections::BTreeMap;

use gpusched_wire::history::JobEvent;
use gpusched_wire::JobState;
use serde::{Deserialize, Serialize};

use crate::stored_job::{StoredArrayTask, StoredJob, StoredPart, StoredUsage};

/// The environment variable every task of an array gets: its index.
pub const ARRAY_INDEX_VAR: &str = "GPUSCHED_ARRAY_INDEX";
/// The environment variable every task of an array gets: the array's id.
pub const ARRAY_ID_VAR: &str = "GPUSCHED_ARRAY_ID";

/// One task's compact record: the columns of `array_tasks` (the reads filter and sum on
/// them) and the rest of its life as JSON ([`TaskLife`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactTask {
    pub id: u64,
    pub array_id: u64,
    pub index: u32,
    /// Its own queue: a pending array moved to another queue keeps its made tasks where
    /// they were.
    pub queue: String,
    pub state: JobState,
    pub node: Option<String>,
    pub start_ms: Option<u64>,
    pub end_ms: Option<u64>,
    pub energy_j: Option<u64>,
    pub usage: Option<StoredUsage>,
    pub life: TaskLife,
    /// Events to append to its timeline (a write carries the new ones only; the row keeps
    /// them all, after the events of `job_events` the task had before it was compact).
    pub events: Vec<JobEvent>,
}

/// What a task's life changed besides [`CompactTask`]'s columns (JSON in `life`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskLife {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempt: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_indices: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub cancel_requested: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub preempt_requested: bool,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preemptions: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub agent_stops: u32,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attempt_nodes: BTreeMap<u32, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_checkpoint_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<StoredPart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_port: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<u64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recalls: u32,
    pub priority: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walltime_s: Option<u64>,
    /// The pressure figures of `usage` (its CPU time and peak memory are columns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_pressure_ms: Option<u64>,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// Task `index` (job `id`) of `array` as the array makes it, before anything happened to
/// it: the array's submission under the task's own id, name and index variables, with
/// none of the array's own progress. The server's `task_record` makes the same in its
/// own model (a test holds the two together).
pub fn task_template(array: &StoredJob, id: u64, index: u32) -> StoredJob {
    let mut t = array.clone();
    t.id = id;
    t.name = format!("{}[{index}]", array.name);
    t.env.insert(ARRAY_INDEX_VAR.into(), index.to_string());
    t.env.insert(ARRAY_ID_VAR.into(), array.id.to_string());
    t.client_token = None;
    t.after = Vec::new();
    t.after_any = Vec::new();
    t.after_notok = Vec::new();
    t.held = false;
    t.array = None;
    t.array_progress = None;
    t.array_task = Some(StoredArrayTask {
        array_id: array.id,
        index,
    });
    t.first_failure = None;
    t
}

/// The task `t` records, made from its array's row.
pub fn rebuild(array: &StoredJob, t: &CompactTask) -> StoredJob {
    let mut j = task_template(array, t.id, t.index);
    let life = &t.life;
    j.queue = t.queue.clone();
    j.state = t.state;
    j.node = t.node.clone();
    j.start_ms = t.start_ms;
    j.end_ms = t.end_ms;
    j.energy_j = t.energy_j;
    j.usage = t.usage.as_ref().map(|u| StoredUsage {
        cpu_ms: u.cpu_ms,
        mem_peak_bytes: u.mem_peak_bytes,
        cpu_pressure_ms: life.cpu_pressure_ms,
        mem_pressure_ms: life.mem_pressure_ms,
    });
    j.attempt = life.attempt;
    j.gpu_indices = life.gpu_indices.clone();
    j.exit_code = life.exit_code;
    j.signal = life.signal;
    j.end_reason = life.end_reason.clone();
    j.note = life.note.clone();
    j.cancel_requested = life.cancel_requested;
    j.preempt_requested = life.preempt_requested;
    j.preemptions = life.preemptions;
    j.agent_stops = life.agent_stops;
    j.attempt_nodes = life.attempt_nodes.clone();
    j.last_checkpoint_ms = life.last_checkpoint_ms;
    j.parts = life.parts.clone();
    j.master_port = life.master_port;
    j.behind = life.behind;
    j.recalls = life.recalls;
    j.priority = life.priority;
    j.walltime_s = life.walltime_s;
    j
}

/// The compact record of array task `row` (None for a job that is no array task). It
/// stands for `row` only where [`rebuild`] of it, from the array's row, equals `row`.
/// Takes the row, whose values move into the record (this runs for every task write).
pub fn compact_of(row: StoredJob) -> Option<CompactTask> {
    let at = row.array_task?;
    let (cpu_pressure_ms, mem_pressure_ms) = row
        .usage
        .as_ref()
        .map_or((None, None), |u| (u.cpu_pressure_ms, u.mem_pressure_ms));
    Some(CompactTask {
        id: row.id,
        array_id: at.array_id,
        index: at.index,
        queue: row.queue,
        state: row.state,
        node: row.node,
        start_ms: row.start_ms,
        end_ms: row.end_ms,
        energy_j: row.energy_j,
        usage: row.usage.map(|u| StoredUsage {
            cpu_ms: u.cpu_ms,
            mem_peak_bytes: u.mem_peak_bytes,
            cpu_pressure_ms: None,
            mem_pressure_ms: None,
        }),
        life: TaskLife {
            attempt: row.attempt,
            gpu_indices: row.gpu_indices,
            exit_code: row.exit_code,
            signal: row.signal,
            end_reason: row.end_reason,
            note: row.note,
            cancel_requested: row.cancel_requested,
            preempt_requested: row.preempt_requested,
            preemptions: row.preemptions,
            agent_stops: row.agent_stops,
            attempt_nodes: row.attempt_nodes,
            last_checkpoint_ms: row.last_checkpoint_ms,
            parts: row.parts,
            master_port: row.master_port,
            behind: row.behind,
            recalls: row.recalls,
            priority: row.priority,
            walltime_s: row.walltime_s,
            cpu_pressure_ms,
            mem_pressure_ms,
        },
        events: Vec::new(),
    })
}

/// The compact record of task `row` if it stands for the row exactly (rebuilt from
/// `array`, its array's row, it gives `row` back); None when the task needs a job row.
pub fn compact_if_exact(array: &StoredJob, row: StoredJob) -> Option<CompactTask> {
    // A gang's parts span nodes that the record's one `node` would not find in a list.
    if row.parts.len() > 1 || !made_by(array, &row) {
        return None;
    }
    compact_of(row)
}

/// Whether everything of `row` that its compact record does not carry is what `array`
/// makes of it (`task_template`): [`rebuild`]` == row`, compared field by field without
/// building the template (this runs for every task write). Every field is named, so a
/// new one must be sorted into the record or the template here (the compiler asks); a
/// test holds this and `rebuild` together.
fn made_by(array: &StoredJob, row: &StoredJob) -> bool {
    let Some(at) = row.array_task else {
        return false;
    };
    if at.array_id != array.id {
        return false;
    }
    let StoredJob {
        // The task's own, set by the template.
        id: _,
        name,
        env,
        client_token,
        after,
        after_any,
        after_notok,
        held,
        array: own_array,
        array_task: _,
        array_progress,
        first_failure,
        // Its record's (`compact_of`).
        queue: _,
        state: _,
        node: _,
        start_ms: _,
        end_ms: _,
        energy_j: _,
        usage: _,
        attempt: _,
        gpu_indices: _,
        exit_code: _,
        signal: _,
        end_reason: _,
        note: _,
        cancel_requested: _,
        preempt_requested: _,
        preemptions: _,
        agent_stops: _,
        attempt_nodes: _,
        last_checkpoint_ms: _,
        parts: _,
        master_port: _,
        behind: _,
        recalls: _,
        priority: _,
        walltime_s: _,
        // The array's, as it was submitted.
        user,
        command,
        cwd,
        gpus,
        gpu_model,
        slice,
        cpu_milli,
        mem_mib,
        resources,
        max_retries,
        grace_s,
        submit_ms,
        slice_at,
        nodes,
        gpus_per_node,
        split,
        tasks_per_node,
        mixed_models,
        image,
        pids_max,
        service,
        placement,
        interactive,
        idle_gpu_s,
        steps_run,
        step_gpu_s,
        account,
    } = row;
    let a = array;
    let index = at.index.to_string();
    // The name is the array's with `[index]`, without building it.
    let named = name.len() > a.name.len()
        && name.starts_with(a.name.as_str())
        && name[a.name.len()..]
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            == Some(index.as_str());
    // The environment is the array's and the two index variables.
    let array_id = a.id.to_string();
    let env_fits = env.get(ARRAY_INDEX_VAR) == Some(&index)
        && env.get(ARRAY_ID_VAR) == Some(&array_id)
        && env.len()
            == a.env.len()
                + usize::from(!a.env.contains_key(ARRAY_INDEX_VAR))
                + usize::from(!a.env.contains_key(ARRAY_ID_VAR))
        && a.env
            .iter()
            .filter(|(k, _)| *k != ARRAY_INDEX_VAR && *k != ARRAY_ID_VAR)
            .all(|(k, v)| env.get(k) == Some(v));
    named
        && env_fits
        && client_token.is_none()
        && after.is_empty()
        && after_any.is_empty()
        && after_notok.is_empty()
        && !held
        && own_array.is_none()
        && array_progress.is_none()
        && first_failure.is_none()
        && *user == a.user
        && *command == a.command
        && *cwd == a.cwd
        && *gpus == a.gpus
        && *gpu_model == a.gpu_model
        && *slice == a.slice
        && *cpu_milli == a.cpu_milli
        && *mem_mib == a.mem_mib
        && *resources == a.resources
        && *max_retries == a.max_retries
        && *grace_s == a.grace_s
        && *submit_ms == a.submit_ms
        && *slice_at == a.slice_at
        && *nodes == a.nodes
        && *gpus_per_node == a.gpus_per_node
        && *split == a.split
        && *tasks_per_node == a.tasks_per_node
        && *mixed_models == a.mixed_models
        && *image == a.image
        && *pids_max == a.pids_max
        && *service == a.service
        && *placement == a.placement
        && *interactive == a.interactive
        && *idle_gpu_s == a.idle_gpu_s
        && *steps_run == a.steps_run
        && *step_gpu_s == a.step_gpu_s
        && *account == a.account
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stored_job::tests::full_stored;

    fn array() -> StoredJob {
        let mut a = full_stored();
        a.id = 40;
        a.array = Some(crate::StoredArray {
            first: 0,
            last: 9,
            step: 1,
            max_running: None,
        });
        a.array_task = None;
        a.client_token = Some("alice/t".into());
        a.state = JobState::Running;
        a.nodes = 1;
        a.parts.clear();
        a.slice = None;
        a.slice_at = None;
        a.gpus = 1;
        a
    }

    /// Array `id` of `user` (tasks of one GPU on one node), as the server stores it.
    pub(crate) fn array_row(id: u64, user: &str) -> StoredJob {
        let mut a = array();
        a.id = id;
        a.user = user.into();
        a.client_token = Some(format!("{user}/t{id}"));
        a.start_ms = None;
        a.queue = "research".into();
        a.first_failure = None;
        a
    }

    /// Task `index` (job `id`) of `array`, ended `state` on `node` after running from
    /// `run.0` to `run.1`.
    pub(crate) fn ended_task(
        array: &StoredJob,
        id: u64,
        index: u32,
        state: JobState,
        node: &str,
        run: (u64, u64),
    ) -> StoredJob {
        let mut t = task_template(array, id, index);
        t.state = state;
        t.attempt = 1;
        t.node = Some(node.into());
        t.gpu_indices = vec![index % 8];
        t.start_ms = Some(run.0);
        t.end_ms = Some(run.1);
        t.exit_code = Some(i32::from(state != JobState::Succeeded));
        t.end_reason = Some(format!("exited with code {}", t.exit_code.unwrap()));
        t.note = None;
        t.cancel_requested = false;
        t.preempt_requested = false;
        t.preemptions = 0;
        t.agent_stops = 0;
        t.attempt_nodes = [(1, node.to_string())].into();
        t.last_checkpoint_ms = None;
        t.energy_j = Some(100);
        t.usage = Some(StoredUsage {
            cpu_ms: 40,
            mem_peak_bytes: Some(1 << 30),
            cpu_pressure_ms: None,
            mem_pressure_ms: None,
        });
        t
    }

    #[test]
    fn a_task_that_ran_is_rebuilt_exactly_from_its_array_and_its_record() {
        let a = array();
        let mut t = task_template(&a, 47, 7);
        t.state = JobState::Succeeded;
        t.attempt = 1;
        t.node = Some("n1".into());
        t.gpu_indices = vec![3];
        t.start_ms = Some(1_000);
        t.end_ms = Some(2_000);
        t.exit_code = Some(0);
        t.end_reason = Some("exited with code 0".into());
        t.attempt_nodes = [(1, "n1".to_string())].into();
        t.usage = Some(StoredUsage {
            cpu_ms: 5,
            mem_peak_bytes: Some(1 << 20),
            cpu_pressure_ms: Some(2),
            mem_pressure_ms: None,
        });
        t.energy_j = Some(12);
        t.priority = a.priority + 3;
        let c = compact_if_exact(&a, t.clone()).expect("a plain task's life fits its record");
        assert_eq!(c.index, 7);
        assert_eq!(rebuild(&a, &c), t);
        assert_eq!(t.env[ARRAY_INDEX_VAR], "7");
        assert_eq!(t.env[ARRAY_ID_VAR], "40");
        assert_eq!(t.name, format!("{}[7]", a.name));
        // The record's JSON reads back as it was written.
        let life: TaskLife =
            serde_json::from_str(&serde_json::to_string(&c.life).unwrap()).expect("its own JSON");
        assert_eq!(life, c.life);
    }

    /// `compact_if_exact` (field by field) and `rebuild` agree: a change of any one
    /// field of a task is kept by its record exactly when the record rebuilds it.
    #[test]
    fn the_field_by_field_check_agrees_with_the_rebuild() {
        let a = array();
        let base = ended_task(&a, 47, 7, JobState::Succeeded, "n1", (1_000, 2_000));
        type Change = Box<dyn Fn(&mut StoredJob)>;
        let changes: Vec<(&str, Change)> = vec![
            ("nothing", Box::new(|_| {})),
            ("name", Box::new(|t| t.name.push('x'))),
            (
                "name of another index",
                Box::new(|t| t.name = t.name.replace("[7]", "[8]")),
            ),
            (
                "env added",
                Box::new(|t| drop(t.env.insert("X".into(), "1".into()))),
            ),
            (
                "env changed",
                Box::new(|t| drop(t.env.insert("A".into(), "2".into()))),
            ),
            ("env lost", Box::new(|t| drop(t.env.remove("A")))),
            (
                "index var",
                Box::new(|t| drop(t.env.insert(ARRAY_INDEX_VAR.into(), "8".into()))),
            ),
            ("user", Box::new(|t| t.user.push('x'))),
            ("command", Box::new(|t| t.command.push("x".into()))),
            ("gpus", Box::new(|t| t.gpus += 1)),
            (
                "slice_at",
                Box::new(|t| t.slice_at = full_stored().slice_at),
            ),
            (
                "first_failure",
                Box::new(|t| {
                    t.first_failure = Some(Box::new(crate::StoredFailure {
                        rank: 0,
                        outcome: crate::StoredOutcome::Cancelled,
                        at_ms: 1,
                    }))
                }),
            ),
            (
                "client_token",
                Box::new(|t| t.client_token = Some("x".into())),
            ),
            ("held", Box::new(|t| t.held = true)),
            ("after", Box::new(|t| t.after.push(1))),
            ("account", Box::new(|t| t.account = Some("x".into()))),
            (
                "placement",
                Box::new(|t| t.placement = full_stored().placement),
            ),
            ("image", Box::new(|t| t.image = Some("x".into()))),
            ("queue (its own)", Box::new(|t| t.queue.push('x'))),
            ("priority (its own)", Box::new(|t| t.priority += 1)),
            ("walltime (its own)", Box::new(|t| t.walltime_s = Some(9))),
            ("state (its own)", Box::new(|t| t.state = JobState::Failed)),
            ("attempt (its own)", Box::new(|t| t.attempt = 4)),
            ("note (its own)", Box::new(|t| t.note = Some("x".into()))),
            ("behind (its own)", Box::new(|t| t.behind = Some(3))),
            (
                "pressure (its own)",
                Box::new(|t| {
                    if let Some(u) = &mut t.usage {
                        u.cpu_pressure_ms = Some(5);
                    }
                }),
            ),
        ];
        for (what, change) in changes {
            let mut t = base.clone();
            change(&mut t);
            let rebuilt = compact_of(t.clone()).map(|c| rebuild(&a, &c));
            assert_eq!(
                compact_if_exact(&a, t.clone()).is_some(),
                rebuilt.as_ref() == Some(&t),
                "{what}"
            );
        }
    }

    #[test]
    fn what_the_record_does_not_carry_makes_the_task_a_row_of_its_own() {
        let a = array();
        let mut t = task_template(&a, 47, 7);
        assert!(compact_if_exact(&a, t.clone()).is_some());
        t.first_failure = Some(Box::new(crate::StoredFailure {
            rank: 0,
            outcome: crate::StoredOutcome::Exited { code: 1 },
            at_ms: 1_500,
        }));
        assert!(compact_if_exact(&a, t.clone()).is_none());
        let mut t = task_template(&a, 47, 7);
        t.env.insert("EXTRA".into(), "1".into());
        assert!(compact_if_exact(&a, t.clone()).is_none());
        // Another array's row, or no task at all.
        let mut other = a.clone();
        other.id = 41;
        assert!(compact_if_exact(&other, task_template(&a, 47, 7)).is_none());
        assert!(compact_if_exact(&a, a.clone()).is_none());
    }
}
