//! `submit`: a batch of jobs checked together, then accepted in order (or none of them).

use crate::record::JobRecord;
use gpusched_wire::history::JobEventKind;
use gpusched_wire::{JobState, JobSubmit, JobView, Submitted};

use super::validate::{self, KnownNode};
use super::{Fail, State, Who};
use crate::groups::UserGroups;

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
            if let Some(e) = super::interactive::conflict(j) {
                return Err(Fail::Conflict(at(i, e)));
            }
            super::elastic::check(j).map_err(|e| Fail::Conflict(at(i, e)))?;
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
            j.priority = Some(priority);
            j.queue = Some(queue.clone());
            self.settle_account(j, &user, who.admin)
                .map_err(|f| match f {
                    Fail::Conflict(e) => at(e),
                    other => other,
                })?;
            self.check_job_reservation(j, &user, who.admin)
                .map_err(|f| match f {
                    Fail::Conflict(e) => at(e),
                    other => other,
                })?;
            self.settle_rules(j, &user, groups, &known)
                .map_err(|f| match f {
                    Fail::Conflict(e) => at(e),
                    other => other,
                })?;
            super::speed::settle_speedup(j).map_err(|f| match f {
                Fail::Conflict(e) => at(e),
                other => other,
            })?;
            super::deadline::check(j, self.now.ms).map_err(|f| match f {
                Fail::Conflict(e) => at(e),
                other => other,
            })?;
            // A partition's priority is added to the queue's.
            let priority = j.priority.unwrap_or(priority);
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
        // A queue that refuses late deadlines: each job judged as if it entered the queue
        // now (one waiting for others or held is not judged: its start is not the queue's).
        for (i, j) in jobs.iter().enumerate() {
            let retry = j.client_token.as_ref().and_then(|t| self.retry_of(t));
            let waits = !j.after.is_empty() || !j.after_any.is_empty() || !j.after_notok.is_empty();
            if j.deadline_ms.is_some() && retry.is_none() && !waits && !j.hold {
                self.refuse_if_late(j, self.next_id + i as u64)
                    .map_err(|f| match f {
                        Fail::Conflict(e) if many_jobs => {
                            Fail::Conflict(format!("job #{i} of the batch: {e}"))
                        }
                        other => other,
                    })?;
            }
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
        // Taken from the end of the list reversed, which gives back its room a thousand
        // at a time: a 10,000-job batch's submissions (about 0.8 KB each) leave as their
        // records come, instead of all of both being held at the end (each record takes
        // what its submission held besides).
        let mut jobs = jobs;
        jobs.reverse();
        while let Some(j) = jobs.pop() {
            if jobs.len().is_multiple_of(1024) {
                jobs.shrink_to_fit();
            }
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
        // How the first job with a deadline stands, the queue replayed with it in.
        let deadline = ids.iter().find_map(|&id| self.deadline_answer(id));
        Submitted { ids, deadline }
    }

    pub(super) fn record_of(&self, id: u64, j: JobSubmit, now: u64) -> JobRecord {
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
        let rules = Some(super::rules::rules_of(&j))
            .filter(|r| !r.is_empty())
            .map(Box::new);
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
                account: j.account,
                cpu_milli: j.cpus.map_or(0, |c| (c * 1000.0).round() as u64),
                mem_mib: j.mem_mib.unwrap_or(0),
                resources: j.resources,
                priority: j.priority.unwrap_or(0),
                walltime_s: j.walltime_s,
                node: None,
                gpu_indices: Vec::new(),
                attempt: 1,
                // An allocation is never requeued (`interactive::conflict`).
                max_retries: match j.interactive {
                    true => 0,
                    false => j.max_retries.unwrap_or(self.cfg.default_max_retries),
                },
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
                steps: None,
                energy_j: None,
                after_any: exact(j.after_any),
                after_notok: exact(j.after_notok),
                held: j.hold,
                array: j.array,
                array_counts: None,
                array_task: None,
                rules,
                interactive: j.interactive,
                speed: j.speedup.clone().map(|d| {
                    Box::new(gpusched_wire::JobSpeed {
                        declared: Some(d),
                        on: Vec::new(),
                    })
                }),
                image: j.image,
                pids_max: j.pids_max,
                usage: None,
                service: None,
                idle_gpu_s: None,
                step_use: None,
                deadline: j.deadline_ms.map(super::deadline::stored),
                elastic: super::elastic::view(j.gpus_max, j.scaling_serial),
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
