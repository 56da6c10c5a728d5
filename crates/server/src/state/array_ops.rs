//! What users do to arrays through the API: submit checks, cancelling the whole array
//! or one task, and reading one task or the list of its tasks (`array.rs` keeps them
//! running).

use crate::record::JobRecord;
use gpusched_wire::history::JobEventKind;
use gpusched_wire::{
    ArrayError, CancelResult, JobList, JobListQuery, JobState, JobSubmit, JobView,
};

use super::array::{self, unmaterialised};
use super::{privacy, Fail, State, Who};

/// The checks an array submission passes beyond those of every job (`at` places a
/// message in its batch). A zero step or limit breaks the schema's minimum (400); what
/// the schema cannot state (first above last, too many tasks, the task variables in
/// `env`) is a 409, as the contract has it for other such refusals.
pub(super) fn check_submit(j: &JobSubmit, at: &dyn Fn(String) -> String) -> Result<(), Fail> {
    let Some(spec) = &j.array else {
        return Ok(());
    };
    if let Err(e) = spec.check(&spec.text()) {
        let msg = at(format!("`array`: {e}"));
        return Err(match e {
            ArrayError::ZeroStep(_) | ArrayError::ZeroLimit(_) => Fail::BadRequest(msg),
            _ => Fail::Conflict(msg),
        });
    }
    for var in [array::INDEX_VAR, array::ID_VAR] {
        if j.env.contains_key(var) {
            return Err(Fail::Conflict(at(format!(
                "`env` sets {var}, which the server sets in each task of an array; \
                 leave it out"
            ))));
        }
    }
    Ok(())
}

impl State {
    /// Cancels a whole array: its unstarted indices never start, its pending tasks end
    /// cancelled and its running ones are stopped; the array ends cancelled when the
    /// last has.
    pub(super) fn cancel_array(&mut self, id: u64, who: &Who) -> Result<CancelResult, Fail> {
        let job = self.owned_job(id, who, "cancel it")?;
        let state = job.view.state;
        if state.is_terminal() {
            return Ok(CancelResult {
                id,
                result: "already_ended".into(),
                state,
            });
        }
        let owner = job.view.user.clone();
        if !job.view.cancel_requested {
            self.record_cancel_request(id, &owner, who, format!("an array, {}", state.name()));
        }
        if let Some(a) = self.jobs.get_mut(&id) {
            a.view.cancel_requested = true;
            if let Some(spec) = a.view.array {
                let p = a.array_progress.get_or_insert_with(Default::default);
                p.cancelled += unmaterialised(&spec, p);
                p.next = spec.len();
            }
        }
        let live: Vec<u64> = self
            .arrays
            .get(&id)
            .map(|r| r.live.values().copied().collect())
            .unwrap_or_default();
        for task in live {
            // Its owner's (or an admin's) own tasks: refusals cannot happen.
            let _ = self.cancel(task, who);
        }
        self.array_settle(id, self.now.ms);
        let state = self.jobs[&id].view.state;
        let result = if state.is_terminal() {
            "cancelled"
        } else {
            let stopping = self.arrays.get(&id).map_or(0, |r| r.live.len());
            if let Some(a) = self.jobs.get_mut(&id) {
                a.view.reason =
                    format!("cancel requested; waiting for {stopping} started task(s) to stop");
            }
            "cancelling"
        };
        Ok(CancelResult {
            id,
            result: result.into(),
            state,
        })
    }

    /// Cancels one task of an array (`cancel 12.7`): a started one like any job, an
    /// unstarted one by never starting it. The unstarted one is still made a job of its
    /// own, cancelled at once, so it has an id, a row and a timeline: `queue --all
    /// --tasks` lists it and `show 12.7` finds it like any task that ended.
    pub fn cancel_task(&mut self, id: u64, index: u32, who: &Who) -> Result<CancelResult, Fail> {
        let job = self.owned_job(id, who, "cancel its tasks")?;
        let spec = array_spec(job, index)?;
        if let Some(task) = self.task_id(id, index) {
            return self.cancel(task, who);
        }
        let state = job.view.state;
        let p = job.array_progress.clone().unwrap_or_default();
        let ordinal = u64::from(index - spec.first) / u64::from(spec.step.max(1));
        if state.is_terminal() || ordinal < p.next || p.skipped.binary_search(&index).is_ok() {
            // Ended before (its record may have left the server's memory).
            return Ok(CancelResult {
                id,
                result: "already_ended".into(),
                state: JobState::Cancelled,
            });
        }
        if let Some(a) = self.jobs.get_mut(&id) {
            let p = a.array_progress.get_or_insert_with(Default::default);
            if let Err(at) = p.skipped.binary_search(&index) {
                p.skipped.insert(at, index);
            }
        }
        self.note(
            id,
            JobEventKind::CancelRequested,
            format!("task {index}, before it started, by {}", who.user),
        );
        // Skipped (above) first: the array never makes this index again, and counts it
        // cancelled once, through `skipped`, also once the task's record leaves memory.
        match self.make_task(id, index) {
            Some(task) => self.cancel(task, who),
            None => Err(super::privacy::no_such_job(id)),
        }
    }

    /// One task of an array: a started task's own view, or, for an index not started
    /// yet, a view of what it will be (id 0: it has none yet).
    pub fn task_view(&self, id: u64, index: u32, who: &Who) -> Result<JobView, Fail> {
        let job = self.job_for(id, who)?;
        let spec = array_spec(job, index)?;
        if let Some(task) = self.task_id(id, index) {
            return self.get(task, who);
        }
        let p = job.array_progress.clone().unwrap_or_default();
        let ordinal = u64::from(index - spec.first) / u64::from(spec.step.max(1));
        let mut v = array::task_record(job, 0, index).view;
        let skipped = p.skipped.binary_search(&index).is_ok();
        if skipped || job.view.state.is_terminal() || job.view.cancel_requested {
            v.state = JobState::Cancelled;
            v.reason = "cancelled before it started".into();
        } else if ordinal < p.next {
            // Started and ended, and its record is no longer in memory: its state is not
            // known here (the array's counts keep it), so say so rather than guess.
            return Err(Fail::NotFound(format!(
                "task {index} of array {id} ended and its record is no longer in the \
                 server's memory; `gpusched show {id}` counts the ended tasks by outcome"
            )));
        } else {
            let before = ordinal
                - p.next
                - p.skipped
                    .iter()
                    .filter(|&&i| {
                        let o = u64::from(i - spec.first) / u64::from(spec.step.max(1));
                        o >= p.next && o < ordinal
                    })
                    .count() as u64;
            v.reason = if job.view.held {
                format!("not started yet: array {id} is held")
            } else if !self.deps_ready(&job.view) {
                format!("not started yet: array {id} waits for its dependencies")
            } else {
                format!(
                    "not started yet: array {id} starts its tasks in index order as GPUs \
                     free up, and {before} unstarted before this one"
                )
            };
        }
        privacy::redact(&mut v, who);
        Ok(v)
    }

    /// A task list's query: tasks have ids above their array's.
    fn task_list_query(id: u64, q: &JobListQuery) -> JobListQuery {
        JobListQuery {
            after: Some(q.after.unwrap_or(id).max(id)),
            ..q.clone()
        }
    }

    /// The page of array `id`'s ended tasks the store must give for `q` (None: none can
    /// be on it), as [`Self::ended_query`] for a list of jobs.
    pub fn task_query(
        &self,
        id: u64,
        q: &JobListQuery,
        who: &Who,
    ) -> Result<Option<gpusched_store::EndedQuery>, Fail> {
        let q = Self::task_list_query(id, q);
        Ok(self
            .ended_query(&q, who)?
            .map(|eq| gpusched_store::EndedQuery {
                tasks: gpusched_store::TaskRows::Of(id),
                ..eq
            }))
    }

    /// The started tasks of an array, newest first, paged and filtered like `list`
    /// (`stored`: the store's page of its ended tasks, [`Self::task_query`]).
    /// Unstarted indices are not listed: the array's `array_counts.pending` counts them.
    pub fn list_tasks(
        &self,
        id: u64,
        q: &JobListQuery,
        who: &Who,
        stored: Vec<JobRecord>,
    ) -> Result<JobList, Fail> {
        let job = self.job_for(id, who)?;
        if job.view.array.is_none() {
            return Err(not_an_array(id));
        }
        let q = Self::task_list_query(id, q);
        self.list_where(&q, who, stored, &|j: &JobRecord| {
            j.view.array_task.is_some_and(|t| t.array_id == id)
        })
    }
}

/// The spec of an array job, checked to hold `index`.
fn array_spec(job: &JobRecord, index: u32) -> Result<gpusched_wire::ArraySpec, Fail> {
    let id = job.view.id;
    let spec = job.view.array.ok_or_else(|| not_an_array(id))?;
    if !spec.contains(index) {
        return Err(Fail::NotFound(format!(
            "array {id} has no task {index}; its indices are {} ({} tasks)",
            spec.text(),
            spec.len()
        )));
    }
    Ok(spec)
}

fn not_an_array(id: u64) -> Fail {
    Fail::NotFound(format!(
        "job {id} is not an array, so it has no tasks; `gpusched show {id}` shows it"
    ))
}
