//! The user-facing operations on jobs.

use std::collections::BTreeMap;

use gpusched_store::JobRecord;
use gpusched_wire::history::{AuditAction, JobEventKind};
use gpusched_wire::{
    CancelResult, GpuView, JobList, JobListQuery, JobState, JobSubmit, JobView, NodeList,
    NodeState, NodeView, SliceView, Submitted,
};
use tokio::sync::oneshot;

use gpusched_core::resources::mig_compute_milli;

use super::privacy;
use super::reasons;
use super::validate::{self, KnownNode};
use super::{Fail, State, Who};
use crate::groups::UserGroups;
use gpusched_core::live::WaitContext;
use gpusched_core::QueueId;

/// `wait`: the job is over, or a receiver that fires when it is.
pub enum WaitResult {
    Done(Box<JobView>),
    Pending(oneshot::Receiver<JobView>),
}

/// Shared inputs of the pending reasons of one request.
struct ReasonContext {
    plan: BTreeMap<u64, u64>,
    /// What the core's wait reasons need (usage per queue and user, queue order).
    wait: WaitContext,
}

/// A list's query, checked (`State::list_ask`).
struct ListAsk {
    states: Option<Vec<JobState>>,
    limit: usize,
    range: Option<(u64, u64)>,
}

/// Where to fetch a job's logs from.
pub struct LogTarget {
    pub url: String,
    /// The agent's log secret (from its registration).
    pub token: Option<String>,
    pub job: u64,
    pub attempt: u32,
    /// The process (global `RANK`) of a job with `tasks_per_node`, for the agent.
    pub rank: Option<u32>,
}

/// Which output of a job `logs` asks for: an attempt (default the current one), and a
/// part by node name and/or a process by global rank (default part 0's first process).
#[derive(Clone, Debug, Default)]
pub struct LogAsk {
    pub attempt: Option<u32>,
    pub node: Option<String>,
    pub rank: Option<u32>,
}

impl State {
    /// Accepts a batch of jobs together, or none of them. `groups` holds the Unix groups
    /// of the users the jobs are for, looked up before the command reached the state.
    pub fn submit(
        &mut self,
        jobs: Vec<JobSubmit>,
        who: &Who,
        groups: &UserGroups,
    ) -> Result<Submitted, Fail> {
        let jobs = self.check_batch(jobs, who, groups)?;
        Ok(self.accept(jobs, who))
    }

    /// Every check of a submission, changing nothing but the jobs themselves (their
    /// user, queue and priority filled in, retry keys made per user): what
    /// [`State::accept`] then takes as it is. Errors name the job's place in a batch.
    pub(super) fn check_batch(
        &mut self,
        mut jobs: Vec<JobSubmit>,
        who: &Who,
        groups: &UserGroups,
    ) -> Result<Vec<JobSubmit>, Fail> {
        if jobs.is_empty() {
            return Err(Fail::BadRequest(
                "`jobs` is empty: submit at least one job".into(),
            ));
        }
        self.check_limits(&jobs, who)?;
        let known: Vec<KnownNode> = self
            .nodes
            .values()
            .map(|n| KnownNode {
                name: &n.record.register.node,
                gpus: &n.record.register.gpus,
                cpus: n.record.register.cpus,
                mem_mib: n.record.register.mem_mib,
                resources: &n.record.register.resources,
            })
            .collect();
        let many = jobs.len() > 1;
        let at = |i: usize, e: String| {
            if many {
                format!("job #{i} of the batch: {e}")
            } else {
                e
            }
        };
        for (i, j) in jobs.iter().enumerate() {
            validate::check_submit(j).map_err(|e| Fail::BadRequest(at(i, e)))?;
            super::array_ops::check_submit(j, &|e| at(i, e))?;
        }
        // Well-formed, but no node as the cluster is now could hold it: a conflict with
        // the cluster's state, not a malformed request.
        for (i, j) in jobs.iter().enumerate() {
            validate::check_fits(j, &known).map_err(|e| Fail::Conflict(at(i, e)))?;
        }
        let many_jobs = jobs.len() > 1;
        for (i, j) in jobs.iter_mut().enumerate() {
            match &j.user {
                Some(u) if u != &who.user && !who.admin => {
                    return Err(Fail::Forbidden(format!(
                        "you are {}; only an admin may submit jobs as another user ({u})",
                        who.user
                    )))
                }
                Some(_) => {}
                None => j.user = Some(who.user.clone()),
            }
            let user = j.user.clone().unwrap_or_default();
            let groups = groups.of(&user);
            // The queues and their limits are the cluster's state, not the request's form.
            let at = |e: String| {
                Fail::Conflict(if many_jobs {
                    format!("job #{i} of the batch: {e}")
                } else {
                    e
                })
            };
            let queue = match &j.queue {
                Some(q) if !self.queues.defs.contains_key(q) => {
                    return Err(at(format!(
                        "no queue named `{q}`; the queues are: {}",
                        self.queues.names()
                    )))
                }
                Some(q) if !self.queues.allows(q, &user, groups) => {
                    return Err(Fail::Forbidden(format!(
                        "{user} may not submit to queue `{q}`; ask an admin to add you to its users or groups"
                    )))
                }
                Some(q) => q.clone(),
                None => match self.queues.pick_for(&user, groups) {
                    Some(q) => q.to_string(),
                    None => {
                        return Err(Fail::Forbidden(format!(
                            "{user} may use none of the queues ({})",
                            self.queues.names()
                        )))
                    }
                },
            };
            let def = &self.queues.defs[&queue];
            let priority = j.priority.unwrap_or(def.default_priority);
            // A slice counts as one GPU (its fraction, rounded up).
            let slice = validate::slice_of(j).ok().flatten();
            let need = validate::whole_gpus(j, slice.as_ref());
            let want = slice.as_ref().map_or(need, |_| 1);
            self.queue_fit(&queue, Some(priority), need.max(1), want)
                .map_err(at)?;
            j.priority = Some(priority);
            j.queue = Some(queue);
            // Retry keys are per user, so one user's key never finds another's job.
            if let (Some(t), Some(u)) = (&j.client_token, &j.user) {
                j.client_token = Some(format!("{u}/{t}"));
            }
        }
        for (i, j) in jobs.iter().enumerate() {
            self.check_deps(j, who).map_err(|e| {
                Fail::Conflict(if many_jobs {
                    format!("job #{i} of the batch: {e}")
                } else {
                    e
                })
            })?;
        }
        let mut seen = std::collections::HashSet::new();
        for j in &jobs {
            if let Some(t) = &j.client_token {
                // 409, not 400: each job is well-formed (the schema cannot say "unique
                // across the batch"); the batch as a whole conflicts with itself.
                if !seen.insert(t.as_str()) {
                    return Err(Fail::Conflict(format!(
                        "`client_token` {t:?} appears twice in one batch; each job needs its own"
                    )));
                }
            }
        }
        Ok(jobs)
    }

    /// Takes checked jobs in (see [`State::check_batch`]), in order: each gets the next
    /// id (or, for a retry of an accepted submission, its job's id).
    pub(super) fn accept(&mut self, jobs: Vec<JobSubmit>, who: &Who) -> Submitted {
        let now = self.now.ms;
        let mut ids = Vec::with_capacity(jobs.len());
        for j in jobs {
            if let Some(id) = j.client_token.as_ref().and_then(|t| self.retry_of(t)) {
                ids.push(id); // a retry of an accepted submission
                continue;
            }
            let id = self.next_id;
            self.next_id += 1;
            let mut record = self.record_of(id, j, now);
            if record.view.held {
                record.view.reason = super::hold::held_by(&who.user);
            }
            if let Some(t) = &record.client_token {
                self.retry_keys.insert(t.clone(), id);
            }
            self.queue_if_ready(&record);
            self.count_pending(&record.view.user);
            let detail = submitted_detail(&record.view, who);
            self.jobs.insert(id, Box::new(record));
            self.note(id, JobEventKind::Submitted, detail);
            if self.jobs[&id].view.held {
                self.note(id, JobEventKind::Held, format!("by {} at submit", who.user));
            }
            self.cfg.metrics.submitted();
            ids.push(id);
        }
        self.sched_due = true;
        Submitted { ids }
    }

    fn record_of(&self, id: u64, j: JobSubmit, now: u64) -> JobRecord {
        // Checked by `check_submit` before; a failure here cannot happen.
        let slice = validate::slice_of(&j).ok().flatten();
        let shape = super::shape::shape(&j, slice.is_some()).unwrap_or(super::shape::Shape {
            nodes: 1,
            gpus_per_node: 0,
            gpus: 0,
            split: false,
        });
        let gpus = shape.gpus;
        let name = j.name.clone().unwrap_or_else(|| {
            let prog = &j.command[0];
            prog.rsplit('/').next().unwrap_or(prog).to_string()
        });
        let array_progress = j.array.map(|_| Default::default());
        JobRecord {
            view: JobView {
                id,
                name,
                user: j.user.unwrap_or_else(|| "anonymous".into()),
                state: JobState::Pending,
                reason: String::new(),
                command: exact(j.command),
                cwd: j.cwd.unwrap_or_else(|| "/".into()),
                gpus,
                gpu_model: j.gpu_model,
                slice: slice.map(Box::new),
                slice_at: None,
                queue: j
                    .queue
                    .unwrap_or_else(|| crate::queues::DEFAULT_QUEUE.to_string()),
                cpu_milli: j.cpus.map_or(0, |c| (c * 1000.0).round() as u64),
                mem_mib: j.mem_mib.unwrap_or(0),
                resources: j.resources,
                priority: j.priority.unwrap_or(0),
                walltime_s: j.walltime_s,
                node: None,
                gpu_indices: Vec::new(),
                attempt: 1,
                max_retries: j.max_retries.unwrap_or(self.cfg.default_max_retries),
                exit_code: None,
                signal: None,
                submit_ms: now,
                start_ms: None,
                end_ms: None,
                cancel_requested: false,
                after: exact(j.after),
                est_start_ms: None,
                preemptions: 0,
                preempt_requested: false,
                last_checkpoint_ms: None,
                env_keys: j.env.keys().cloned().collect(),
                nodes: shape.nodes,
                gpus_per_node: shape.gpus_per_node,
                split: shape.split,
                tasks_per_node: j.tasks_per_node,
                mixed_models: j.mixed_models,
                parts: Vec::new(),
                master_port: None,
                energy_j: None,
                after_any: exact(j.after_any),
                after_notok: exact(j.after_notok),
                held: j.hold,
                array: j.array,
                array_counts: None,
                array_task: None,
                image: j.image,
                pids_max: j.pids_max,
                usage: None,
            },
            env: j.env,
            client_token: j.client_token,
            grace_s: self.cfg.grace_s,
            attempt_nodes: Default::default(),
            agent_stops: 0,
            first_failure: None,
            array_progress,
            behind: None,
            recalls: 0,
        }
    }

    /// Estimated starts of the pending jobs, from the core's replay of the queue.
    pub fn plan(&self) -> BTreeMap<u64, u64> {
        self.queue
            .estimate_starts(self.now.secs())
            .into_iter()
            .map(|(id, t)| (id, (t * 1000.0).round() as u64))
            .collect()
    }

    /// What every pending job's reason needs, worked out once per request (not once per
    /// job: a list of 100k pending jobs must stay linear).
    fn reason_context(&self) -> ReasonContext {
        ReasonContext {
            plan: self.plan(),
            wait: self.queue.wait_context(),
        }
    }

    /// A job as the API shows it; a pending job's reason is worked out now.
    pub fn view(&self, job: &JobRecord) -> JobView {
        match job.view.state {
            JobState::Pending => self.view_with(job, Some(&self.reason_context())),
            _ => self.view_with(job, None),
        }
    }

    fn view_with(&self, job: &JobRecord, ctx: Option<&ReasonContext>) -> JobView {
        let mut v = job.view.clone();
        if v.array.is_some() {
            v.array_counts = Some(Box::new(self.array_counts(job)));
            if v.state == JobState::Pending && self.deps_ready(&v) {
                // Not in the core's queue itself: its tasks are (or will be).
                v.reason = if v.held {
                    "held".into()
                } else {
                    "its first tasks wait in the queue; `gpusched queue --tasks ID` shows why"
                        .replace("ID", &v.id.to_string())
                };
                return v;
            }
        }
        if let (JobState::Pending, Some(ctx)) = (v.state, ctx) {
            v.est_start_ms = ctx.plan.get(&v.id).copied();
            let why = self.pending_reason(&v, ctx);
            // A held job's stored note is who held it, already in `why`.
            v.reason = if v.reason.is_empty() || v.held {
                why
            } else {
                format!("{why} ({})", v.reason)
            };
        }
        // Where the estimate sjf/srtf and the start estimates use came from, when it is
        // a prediction (a walltime shows as such; no estimate, nothing).
        if matches!(
            v.state,
            JobState::Pending | JobState::Starting | JobState::Running
        ) {
            if let Some(estimate) = self.estimate_words(v.id) {
                v.reason = format!("{}; {estimate}", v.reason);
            }
        }
        v
    }

    fn pending_reason(&self, v: &JobView, ctx: &ReasonContext) -> String {
        // Queue ids only grow; a queue the core never saw has no caps.
        let queue = self
            .queue_ids
            .get(&v.queue)
            .copied()
            .unwrap_or(QueueId(u32::MAX));
        if let Some(why) = self.held_reason(v) {
            return why;
        }
        if let Some(why) = self.dependency_reason(v) {
            return why;
        }
        if let Some(why) = self.follow_reason(v.id) {
            return why;
        }
        let job = crate::live_map::job(v, queue);
        let why = self.queue.wait_reason(&job, &[], &ctx.wait);
        reasons::wait(&why, v, self.cfg.policy.name(), self.now.secs())
    }

    /// One job as `who` may see it (404 for a job hidden from them).
    pub fn get(&self, id: u64, who: &Who) -> Result<JobView, Fail> {
        let mut v = self.view(self.job_for(id, who)?);
        privacy::redact(&mut v, who);
        Ok(v)
    }

    /// What a list asks for, checked: the states (None: all), the page size, and the
    /// ids `[from, to)` (None: no id can match).
    fn list_ask(q: &JobListQuery) -> Result<ListAsk, Fail> {
        let states: Option<Vec<JobState>> = match q.state.as_deref() {
            None | Some("") | Some("all") => None,
            Some("active") => Some(vec![
                JobState::Pending,
                JobState::Starting,
                JobState::Running,
            ]),
            Some(list) => Some(
                list.split(',')
                    .map(|s| {
                        JobState::parse(s).ok_or_else(|| {
                            Fail::BadRequest(format!(
                                "unknown state `{s}` in `state`; use {}, `active` or `all`",
                                JobState::ALL.map(|s| s.name()).join(", ")
                            ))
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        let limit = q.limit.unwrap_or(1000);
        if limit == 0 || limit > 100_000 {
            return Err(Fail::BadRequest(
                "`limit` must be between 1 and 100000".into(),
            ));
        }
        // Newest first, ids in [after + 1, before).
        let from = q.after.map_or(Some(0), |a| a.checked_add(1));
        let to = q.before.unwrap_or(u64::MAX);
        let range = from.filter(|&f| f < to).map(|f| (f, to));
        Ok(ListAsk {
            states,
            limit,
            range,
        })
    }

    /// The page of ended jobs the store must give for list `q` by `who` (None: the list
    /// can hold no ended job). One more than the page, to know whether another follows.
    pub fn ended_query(
        &self,
        q: &JobListQuery,
        who: &Who,
    ) -> Result<Option<gpusched_store::EndedQuery>, Fail> {
        let ask = Self::list_ask(q)?;
        let Some((from, to)) = ask.range else {
            return Ok(None);
        };
        let states: Vec<JobState> = match &ask.states {
            None => Vec::new(),
            Some(s) => {
                let ended: Vec<JobState> = s.iter().copied().filter(|s| s.is_terminal()).collect();
                if ended.is_empty() {
                    return Ok(None);
                }
                ended
            }
        };
        // Under --private-jobs a user sees only their own jobs: the store filters them.
        let user = match (&q.user, self.cfg.private_jobs && !who.admin) {
            (Some(u), true) if u != &who.user => return Ok(None),
            (_, true) => Some(who.user.clone()),
            (u, false) => u.clone(),
        };
        Ok(Some(gpusched_store::EndedQuery {
            from,
            to,
            limit: ask.limit.saturating_add(1),
            states,
            user,
            node: q.node.clone(),
            tasks: if Self::lists_tasks(q) {
                gpusched_store::TaskRows::All
            } else {
                gpusched_store::TaskRows::None
            },
        }))
    }

    /// Whether a list shows arrays' tasks: an array is one item, its tasks only with
    /// `tasks=true`, or when asking by node, where tasks are what runs.
    fn lists_tasks(q: &JobListQuery) -> bool {
        q.tasks.unwrap_or(false) || q.node.is_some()
    }

    /// A page of jobs, newest first: the live ones (and those that ended this round)
    /// from memory, merged with `stored`, the store's page of ended jobs for the same
    /// query (`ended_query`).
    pub fn list(
        &self,
        q: &JobListQuery,
        who: &Who,
        stored: Vec<JobRecord>,
    ) -> Result<JobList, Fail> {
        let tasks = Self::lists_tasks(q);
        self.list_where(q, who, stored, &|j: &JobRecord| {
            tasks || j.view.array_task.is_none()
        })
    }

    /// [`Self::list`] of the jobs `keep` keeps (`stored` was read with the same rule).
    pub(super) fn list_where(
        &self,
        q: &JobListQuery,
        who: &Who,
        stored: Vec<JobRecord>,
        keep: &dyn Fn(&JobRecord) -> bool,
    ) -> Result<JobList, Fail> {
        let ask = Self::list_ask(q)?;
        let Some((from, to)) = ask.range else {
            return Ok(JobList {
                jobs: Vec::new(),
                next_before: None,
            });
        };
        let (states, limit) = (ask.states, ask.limit);
        let matches = |j: &&JobRecord| {
            keep(j)
                && states.as_ref().is_none_or(|s| s.contains(&j.view.state))
                && q.user.as_ref().is_none_or(|u| &j.view.user == u)
                && self.visible(&j.view, who)
                && q.node.as_ref().is_none_or(|n| {
                    j.view.node.as_ref() == Some(n) || j.view.parts.iter().any(|p| &p.node == n)
                })
        };
        let live: Vec<&JobRecord> = self
            .jobs
            .range(from..to)
            .rev()
            .map(|(_, j)| &**j)
            .filter(matches)
            .take(limit.saturating_add(1))
            .collect();
        // Both sides newest first: merge them (memory wins a tie; it cannot happen,
        // ended jobs leave memory before the next round reads the store).
        let stored: Vec<&JobRecord> = stored
            .iter()
            .filter(|j| j.view.id >= from && j.view.id < to)
            .filter(matches)
            .collect();
        let mut merged: Vec<&JobRecord> = Vec::with_capacity(limit.min(live.len() + stored.len()));
        let (mut a, mut b) = (live.into_iter().peekable(), stored.into_iter().peekable());
        while merged.len() <= limit {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.view.id == y.view.id => {
                    b.next();
                    a.next()
                }
                (Some(x), Some(y)) if x.view.id > y.view.id => a.next(),
                (Some(_), Some(_)) | (None, Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, None) => None,
            };
            match next {
                Some(j) => merged.push(j),
                None => break,
            }
        }
        // The cursor only when an older match really exists, so the last page says so.
        let next_before = if merged.len() > limit {
            merged.truncate(limit);
            merged.last().map(|j| j.view.id)
        } else {
            None
        };
        let ctx = merged
            .iter()
            .any(|j| j.view.state == JobState::Pending)
            .then(|| self.reason_context());
        let jobs = merged
            .into_iter()
            .map(|j| {
                let mut v = self.view_with(j, ctx.as_ref());
                privacy::redact(&mut v, who);
                v
            })
            .collect();
        Ok(JobList { jobs, next_before })
    }

    /// A cancel asked for job `id` of `owner` by `who`: an event in its timeline, and an
    /// audit entry when an admin cancels another user's job (only admins get that far:
    /// `owned_job`). `what` describes the job for the audit log.
    pub(super) fn record_cancel_request(&mut self, id: u64, owner: &str, who: &Who, what: String) {
        self.note(
            id,
            JobEventKind::CancelRequested,
            format!("by {}", who.user),
        );
        if owner != who.user {
            self.audit(
                &who.user,
                AuditAction::CancelOther,
                format!("job {id}"),
                format!("of {owner}, {what}"),
            );
        }
    }

    pub fn cancel(&mut self, id: u64, who: &Who) -> Result<CancelResult, Fail> {
        if self.jobs.get(&id).is_some_and(|j| j.view.array.is_some()) {
            return self.cancel_array(id, who);
        }
        let job = self.owned_job(id, who, "cancel it")?;
        let state = job.view.state;
        let owner = job.view.user.clone();
        let asked = job.view.cancel_requested;
        if !state.is_terminal() && !asked {
            self.record_cancel_request(id, &owner, who, state.name().to_string());
        }
        let result = match state {
            s if s.is_terminal() => "already_ended",
            JobState::Pending => {
                self.end(
                    id,
                    JobState::Cancelled,
                    "cancelled before it started".into(),
                    self.now.ms,
                );
                "cancelled"
            }
            _ => {
                // Asking again changes nothing (and so writes nothing).
                if !asked {
                    let job = self.jobs.get_mut(&id).ok_or_else(|| no_such_job(id))?;
                    job.view.cancel_requested = true;
                    let on = super::gang::nodes_of(&job.view);
                    job.view.reason = if job.view.parts.len() > 1 {
                        format!("cancel requested; {on} are stopping it")
                    } else {
                        format!("cancel requested; {on} is stopping it")
                    };
                    // Every part's node is told.
                    self.bump_job(id);
                }
                "cancelling"
            }
        };
        Ok(CancelResult {
            id,
            result: result.into(),
            // An ended job's row was read from the store: its state is the one above.
            state: self.jobs.get(&id).map_or(state, |j| j.view.state),
        })
    }

    /// Records that a running job saved a checkpoint now (its owner or an admin says so);
    /// preemption then picks jobs that lose the least work.
    pub fn checkpoint(&mut self, id: u64, who: &Who) -> Result<JobView, Fail> {
        let job = self.owned_job(id, who, "report its checkpoints")?;
        if job.view.state != JobState::Running {
            return Err(Fail::Conflict(format!(
                "job {id} is {}, not running: there is nothing to checkpoint",
                job.view.state.name()
            )));
        }
        let job = self.jobs.get_mut(&id).ok_or_else(|| no_such_job(id))?;
        job.view.last_checkpoint_ms = Some(self.now.ms);
        self.note(
            id,
            JobEventKind::Checkpoint,
            format!("reported by {} through the API", who.user),
        );
        self.get(id, who)
    }

    /// `wait`: the ended job, or a receiver for its end. The caller redacts what fires
    /// on the receiver (`privacy::redact`).
    pub fn wait(&mut self, id: u64, who: &Who) -> Result<WaitResult, Fail> {
        let job = self.job_for(id, who)?;
        if job.view.state.is_terminal() {
            let mut v = self.view(job);
            privacy::redact(&mut v, who);
            return Ok(WaitResult::Done(Box::new(v)));
        }
        let (tx, rx) = oneshot::channel();
        let ws = self.waiters.entry(id).or_default();
        ws.retain(|w| !w.is_closed());
        ws.push(tx);
        Ok(WaitResult::Pending(rx))
    }

    /// Where to read the output of one attempt of a job (the current one by default);
    /// only its owner and admins may.
    pub fn log_target(&self, id: u64, ask: &LogAsk, who: &Who) -> Result<LogTarget, Fail> {
        let job = self.owned_job(id, who, "read its output")?;
        let v = &job.view;
        let attempt = ask.attempt.unwrap_or(v.attempt);
        // 0 is malformed (the schema says so); a later attempt than the job has had is
        // one that does not exist (yet), like an unknown id.
        if attempt == 0 || attempt > v.attempt {
            let msg = format!(
                "job {id} has had {}; --attempt must be between 1 and {}",
                gpusched_wire::count(v.attempt, "attempt"),
                v.attempt
            );
            return Err(if attempt == 0 {
                Fail::BadRequest(msg)
            } else {
                Fail::NotFound(msg)
            });
        }
        let node_name = if attempt == v.attempt {
            v.node.as_ref()
        } else {
            job.attempt_nodes.get(&attempt)
        };
        let node_name = match (node_name, attempt == v.attempt) {
            (Some(first), true) => Some(part_for_logs(v, first, ask)?),
            (Some(first), false) if ask.node.as_ref().is_some_and(|n| n != first) => {
                return Err(Fail::NotFound(format!(
                    "this server keeps only the first node of earlier attempts: attempt                      {attempt} of job {id} ran there on {first}; read the other nodes'                      output on those hosts, or give --node {first}"
                )))
            }
            (first, _) => first,
        };
        let Some(node_name) = node_name else {
            return Err(Fail::NotFound(if attempt == v.attempt {
                format!(
                    "job {id} has not started yet (it is {}), so it has no logs; \
                     `gpusched logs -f {id}` waits for it to start",
                    v.state.name()
                )
            } else {
                format!(
                    "attempt {attempt} of job {id} never reached a node (or ran before this \
                     server recorded where attempts ran), so there are no logs to show"
                )
            }));
        };
        let node = self.nodes.get(node_name).ok_or_else(|| {
            Fail::Unavailable(format!(
                "job {id} ran on {node_name}, which this server no longer knows"
            ))
        })?;
        let url = node.record.register.log_url.clone().ok_or_else(|| {
            Fail::Unavailable(format!(
                "the agent on {node_name} serves no logs (it has no log URL)"
            ))
        })?;
        if !node.online() {
            return Err(Fail::Unavailable(format!(
                "{node_name} is offline; job {id}'s logs are on that host under the agent's \
                 state directory, jobs/{id}.{attempt}/"
            )));
        }
        Ok(LogTarget {
            url,
            token: node.record.register.log_token.clone(),
            job: id,
            attempt,
            // Only a job with `tasks_per_node` has several processes per node.
            rank: ask.rank.filter(|_| v.tasks_per_node.is_some()),
        })
    }

    /// The nodes; under `--private-jobs` GPUs held by jobs hidden from `who` show an
    /// anonymous holder instead of the job.
    pub fn node_list(&self, who: &Who) -> NodeList {
        let now = self.now.instant;
        let nodes = self
            .nodes
            .values()
            .map(|n| NodeView {
                name: n.record.register.node.clone(),
                state: match n.liveness {
                    super::Liveness::Online => NodeState::Online,
                    super::Liveness::Unreachable => NodeState::Unreachable,
                    super::Liveness::Offline => NodeState::Offline,
                },
                gpus: n
                    .record
                    .register
                    .gpus
                    .iter()
                    .map(|g| GpuView {
                        info: g.clone(),
                        job: self
                            .whole_holder(n, g.index)
                            .and_then(|j| self.holder_id(j, who)),
                        user: self
                            .whole_holder(n, g.index)
                            .and_then(|j| self.holder_name(j, who)),
                        slices: self.slice_views(&n.record.register.node, g.index, who),
                    })
                    .collect(),
                cpus: n.record.register.cpus,
                mem_mib: n.record.register.mem_mib,
                resources: n.record.register.resources.clone(),
                // Offline nodes hold nothing; online ones what the core has left.
                free_cpu_milli: self
                    .queue
                    .room(&n.record.register.node)
                    .map_or(0, |r| r.cpu_milli),
                free_mem_mib: self
                    .queue
                    .room(&n.record.register.node)
                    .map_or(0, |r| r.mem_mib),
                free_resources: self
                    .queue
                    .room(&n.record.register.node)
                    .map(|r| r.generic.clone())
                    .unwrap_or_default(),
                mps: n.record.register.mps,
                addr: n.record.register.advertise_addr.clone(),
                // The server's topology file over what the agent said, as placement sees it.
                location: self
                    .cfg
                    .topology
                    .get(&n.record.register.node)
                    .unwrap_or(&n.record.register.location)
                    .clone(),
                gpu_links: n.record.register.gpu_links.clone(),
                drain: n.record.drain.clone(),
                gpu_health: n.record.gpu_health.clone(),
                telemetry: n.telemetry.clone(),
                last_seen_ms_ago: now.duration_since(n.last_seen).as_millis() as u64,
                agent_version: n.record.register.agent_version.clone(),
                containment: Some(n.record.register.containment.clone().unwrap_or_else(|| {
                    gpusched_wire::contain::Containment::accounting_only(
                        "its agent is older than agent protocol 4 and enforces nothing; \
                         upgrade it to contain jobs",
                    )
                })),
            })
            .collect();
        NodeList { nodes }
    }

    /// The whole-GPU job holding GPU `index` of an online node, from the core's book.
    fn whole_holder(&self, n: &super::NodeEntry, index: u32) -> Option<u64> {
        if !n.present() {
            return None;
        }
        self.queue.slices(&n.record.register.node)?.holder(index)
    }

    /// The shares and MIG instances of one GPU, with who holds them.
    fn slice_views(&self, node: &str, gpu: u32, who: &Who) -> Vec<SliceView> {
        let Some(g) = self
            .queue
            .slices(node)
            .and_then(|s| s.gpus.iter().find(|g| g.index == gpu))
        else {
            return Vec::new();
        };
        let user = |job: Option<u64>| job.and_then(|j| self.holder_name(j, who));
        let id = |job: Option<u64>| job.and_then(|j| self.holder_id(j, who));
        let mut out: Vec<SliceView> = g
            .shares
            .iter()
            .map(|s| SliceView {
                kind: "share".into(),
                profile: None,
                start: None,
                uuid: None,
                milli: s.milli,
                mem_mib: s.mem_mib,
                job: id(Some(s.job)),
                user: user(Some(s.job))
                    .or_else(|| (!self.cfg.private_jobs).then(|| s.user.clone())),
            })
            .collect();
        if let Some(mig) = &g.mig {
            out.extend(mig.slots.iter().map(|s| SliceView {
                kind: "mig".into(),
                profile: Some(s.profile.clone()),
                start: Some(s.start),
                uuid: s.uuid.clone(),
                milli: mig_compute_milli(&s.profile),
                mem_mib: g.mem_mib * u64::from(s.size) / 8,
                job: id(s.holder),
                user: user(s.holder),
            }));
        }
        out
    }
}

/// The node of the part whose output `ask` names (by node and/or rank) in the job's
/// current attempt; `first` is part 0's. A node or rank the job does not have is 404,
/// with what it has.
fn part_for_logs<'a>(v: &'a JobView, first: &'a String, ask: &LogAsk) -> Result<&'a String, Fail> {
    let id = v.id;
    let nodes: Vec<&String> = if v.parts.is_empty() {
        vec![first]
    } else {
        v.parts.iter().map(|p| &p.node).collect()
    };
    let by_node = match &ask.node {
        None => None,
        Some(n) => Some(nodes.iter().copied().find(|x| *x == n).ok_or_else(|| {
            Fail::NotFound(format!(
                "job {id} has no part on {n}; its attempt {} runs on {}",
                v.attempt,
                nodes
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?),
    };
    let by_rank = match ask.rank {
        None => None,
        Some(r) => {
            // Rank R is process R % K of node rank R / K.
            let k = v.tasks_per_node.unwrap_or(1).max(1);
            let ranks = nodes.len() as u64 * u64::from(k);
            let node = nodes.get((r / k) as usize).copied().ok_or_else(|| {
                Fail::NotFound(format!(
                    "job {id} has no rank {r}; its ranks are 0 to {} ({} x {k} per node)",
                    ranks - 1,
                    gpusched_wire::count(nodes.len() as u32, "node"),
                ))
            })?;
            Some(node)
        }
    };
    match (by_node, by_rank) {
        (Some(n), Some(r)) if n != r => Err(Fail::NotFound(format!(
            "rank {} of job {id} runs on {r}, not on {n}; give one of --node and --rank, or \
             both naming the same node",
            ask.rank.unwrap_or(0)
        ))),
        (Some(n), _) | (None, Some(n)) => Ok(n),
        (None, None) => Ok(first),
    }
}

/// What a `submitted` event says: the queue, and who submitted it if not its owner.
/// `v` holding no more than its elements: a list parsed from JSON grows to a capacity of
/// four (a one-word command took 96 bytes for 24), and a job keeps it while it waits.
fn exact<T>(mut v: Vec<T>) -> Vec<T> {
    v.shrink_to_fit();
    v
}

fn submitted_detail(v: &JobView, who: &Who) -> String {
    if v.user == who.user {
        format!("queue {}", v.queue)
    } else {
        format!(
            "queue {}, submitted by {} for {}",
            v.queue, who.user, v.user
        )
    }
}

pub(super) fn no_such_job(id: u64) -> Fail {
    Fail::NotFound(format!(
        "no job with id {id}; `gpusched queue --all` lists the known jobs"
    ))
}

impl State {
    pub fn queue_list(&self) -> gpusched_wire::QueueList {
        let used = self.queue_usage();
        let mut counts: std::collections::BTreeMap<&str, (u32, u32)> = Default::default();
        for j in self.jobs.values() {
            let c = counts.entry(j.view.queue.as_str()).or_default();
            match j.view.state {
                JobState::Pending => c.1 += 1,
                JobState::Starting | JobState::Running => c.0 += 1,
                _ => {}
            }
        }
        let queues = self
            .queues
            .defs
            .iter()
            .map(|(name, d)| {
                let (running, pending) = counts.get(name.as_str()).copied().unwrap_or((0, 0));
                gpusched_wire::QueueView {
                    name: name.clone(),
                    quota: d.quota,
                    max: d.max,
                    weight: d.weight,
                    users: d.users.clone(),
                    groups: d.groups.clone(),
                    default_priority: d.default_priority,
                    max_priority: d.max_priority,
                    priority_tiers: d.priority_tiers.clone(),
                    preempt_lower_priority: d.preempt_lower_priority,
                    used_gpus: used.get(name.as_str()).copied().unwrap_or(0),
                    running,
                    pending,
                }
            })
            .collect();
        gpusched_wire::QueueList { queues }
    }
}
