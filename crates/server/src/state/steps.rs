//! Job steps (`gpusched run`): a command run inside a running job on its nodes. The
//! state records each step (`steps`, a tracked map keyed by (job, step), written as
//! rows of the `steps` table), lists the running ones in their nodes' desired state
//! (agent protocol 6), and ends them: by the stream's end (`end_step`), when their job
//! leaves its GPUs (`end_orphan_steps`, every round), or at a restart (a stream cannot
//! survive one: `fail_restored_steps`). The stream itself is the HTTP layer's
//! (`http/steps/`); the state only says who may open it.

use gpusched_wire::step::{StepLaunch, StepRequest, StepState, StepView};
use gpusched_wire::JobState;

use gpusched_wire::history::JobEventKind;

use super::{Fail, State, Who};

/// What the HTTP layer needs to splice a step it was allowed to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepStarted {
    pub step: u32,
    pub nodes: Vec<String>,
    /// Tasks over every node.
    pub ntasks: u32,
}

/// A step's end as the stream saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepEnd {
    pub state: StepState,
    pub exit_code: Option<i32>,
    pub reason: Option<String>,
}

impl State {
    /// `who` starts a step in job `id` (its owner or an admin; the job running, its
    /// nodes' agents of protocol 6).
    pub fn start_step(
        &mut self,
        id: u64,
        req: &StepRequest,
        who: &Who,
    ) -> Result<StepStarted, Fail> {
        if let Some(p) = req.problem() {
            return Err(Fail::BadRequest(p));
        }
        let job = self.owned_job(id, who, "run steps in it")?;
        let v = &job.view;
        if v.state != JobState::Running {
            return Err(Fail::Conflict(format!(
                "job {id} is {}, not running: steps run only inside a running job (wait for \
                 it to start: gpusched wait {id} --until running, or `gpusched run` without \
                 --jobid makes a job of its own)",
                v.state.name()
            )));
        }
        if v.image.is_some() {
            return Err(Fail::Conflict(format!(
                "job {id} runs in a container image; steps run on the host and are not \
                 supported in image jobs yet"
            )));
        }
        let all: Vec<String> = if v.parts.is_empty() {
            v.node.iter().cloned().collect()
        } else {
            v.parts.iter().map(|p| p.node.clone()).collect()
        };
        if all.is_empty() {
            return Err(Fail::Conflict(format!("job {id} has no node yet")));
        }
        // A terminal is one task: on the job's first node unless told otherwise.
        let n = req
            .nodes
            .map_or(if req.pty { 1 } else { all.len() }, |n| n as usize);
        if n > all.len() {
            return Err(Fail::Conflict(format!(
                "-N {n} asks for more nodes than job {id} holds ({}: {})",
                all.len(),
                all.join(", ")
            )));
        }
        let nodes: Vec<String> = all[..n].to_vec();
        for node in &nodes {
            let capable = self.nodes.get(node).is_some_and(|e| e.steps);
            if !capable {
                return Err(Fail::Conflict(format!(
                    "the agent on node {node} is too old to run steps (it speaks agent \
                     protocol 5 or did not register with this server yet; steps need \
                     protocol 6): upgrade the agent on {node} to this server's release"
                )));
            }
            let online = self.nodes.get(node).is_some_and(|e| e.online());
            if !online {
                return Err(Fail::Unavailable(format!(
                    "node {node} of job {id} is not reachable now: its agent must be heard \
                     from before a step can start there"
                )));
            }
        }
        let step = self
            .steps
            .range((id, 0)..=(id, u32::MAX))
            .next_back()
            .map_or(0, |((_, s), _)| s + 1);
        let view = StepView {
            step,
            command: req.command.clone(),
            nodes: nodes.clone(),
            tasks_per_node: req.tasks_per_node,
            pty: req.pty,
            state: StepState::Running,
            exit_code: None,
            reason: None,
            started_ms: self.now.ms,
            ended_ms: None,
        };
        self.steps.insert((id, step), view);
        self.note_step(
            id,
            step,
            JobEventKind::StepStarted,
            &nodes,
            format!(
                "step {id}.{step}: {}{}",
                gpusched_wire::command_line(&req.command),
                if req.pty { " (pty)" } else { "" }
            ),
        );
        self.step_requests
            .insert((id, step), (req.cols, req.rows, req.term.clone()));
        for node in &nodes {
            self.bump(node);
        }
        Ok(StepStarted {
            step,
            ntasks: nodes.len() as u32 * req.tasks_per_node,
            nodes,
        })
    }

    /// The step's stream ended: how it ended is recorded, and its nodes are told (their
    /// agents kill whatever of it still runs).
    pub fn end_step(&mut self, id: u64, step: u32, end: StepEnd) -> Result<StepView, Fail> {
        let now = self.now.ms;
        let s = self
            .steps
            .get(&(id, step))
            .ok_or_else(|| no_such_step(id, step))?;
        if s.state != StepState::Running {
            return Ok(s.clone());
        }
        let nodes = s.nodes.clone();
        let s = self.steps.get_mut(&(id, step)).expect("found above");
        s.state = end.state;
        s.exit_code = end.exit_code;
        s.reason = end.reason;
        s.ended_ms = Some(now);
        let done = s.clone();
        self.step_requests.remove(&(id, step));
        let took = now.saturating_sub(done.started_ms);
        // Accounted with its job (stored with the job's row; `usage` sums it).
        let milli = self
            .jobs
            .get(&id)
            .map_or(0, |j| gpu_milli_on(&j.view, &nodes));
        if let Some(job) = self.jobs.get_mut(&id) {
            let used = job.view.step_use.get_or_insert_with(Default::default);
            used.steps += 1;
            used.gpu_s += (milli * took + 500_000) / 1_000_000;
        }
        self.note_step(
            id,
            step,
            JobEventKind::StepEnded,
            &nodes,
            format!(
                "step {id}.{step} {}{} after {}.{:03} s{}",
                done.state.as_str(),
                done.exit_code
                    .map_or(String::new(), |c| format!(", exit code {c}")),
                took / 1000,
                took % 1000,
                done.reason
                    .as_ref()
                    .map_or(String::new(), |r| format!(": {r}"))
            ),
        );
        for node in &nodes {
            self.bump(node);
        }
        Ok(done)
    }

    /// Whether the agent of `node` may open the stream of step `step` of job `id`: the
    /// step runs and `node` is one of its nodes.
    pub fn step_attach(&self, id: u64, step: u32, node: &str) -> Result<(), Fail> {
        match self.steps.get(&(id, step)) {
            Some(s) if s.state == StepState::Running && s.nodes.iter().any(|n| n == node) => Ok(()),
            Some(s) if s.state != StepState::Running => Err(Fail::Conflict(format!(
                "step {id}.{step} already ended ({})",
                s.state.as_str()
            ))),
            _ => Err(no_such_step(id, step)),
        }
    }

    /// The steps of job `id` that `node` runs now, for its desired state.
    pub(super) fn step_launches(&self, id: u64, node: &str) -> Vec<StepLaunch> {
        let Some(job) = self.jobs.get(&id) else {
            return Vec::new();
        };
        let v = &job.view;
        let mut out = Vec::new();
        for (&(_, step), s) in self.steps.range((id, 0)..=(id, u32::MAX)) {
            if s.state != StepState::Running {
                continue;
            }
            let Some(at) = s.nodes.iter().position(|n| n == node) else {
                continue;
            };
            let part = v.parts.iter().find(|p| p.node == node);
            let rank = part.map_or(0, |p| p.rank);
            let gpus = part.map_or_else(|| v.gpu_indices.clone(), |p| p.gpu_indices.clone());
            let (cols, rows, term) = self
                .step_requests
                .get(&(id, step))
                .cloned()
                .unwrap_or_default();
            out.push(StepLaunch {
                step,
                launch: self.launch(job, gpus, rank, node),
                command: s.command.clone(),
                pty: s.pty,
                tasks: s.tasks_per_node,
                first_rank: at as u32 * s.tasks_per_node,
                ntasks: s.nodes.len() as u32 * s.tasks_per_node,
                cols,
                rows,
                term,
            });
        }
        out
    }

    /// Every round: a running step whose job no longer runs ends with it (its agents
    /// kill its tasks as they drop it from their desired state).
    pub(super) fn end_orphan_steps(&mut self) {
        let orphans: Vec<(u64, u32, JobState)> = self
            .steps
            .iter()
            .filter(|(_, s)| s.state == StepState::Running)
            .filter_map(|(&(id, step), _)| {
                let state = self
                    .jobs
                    .get(&id)
                    .map_or(JobState::Cancelled, |j| j.view.state);
                (state != JobState::Running).then_some((id, step, state))
            })
            .collect();
        for (id, step, state) in orphans {
            let end = StepEnd {
                state: StepState::Cancelled,
                exit_code: None,
                reason: Some(format!("its job left the running state ({})", state.name())),
            };
            let _ = self.end_step(id, step, end);
        }
    }

    /// At load: no stream survives a restart of the server, so a step recorded as
    /// running ends as failed, saying why (its agents were told of it by the last
    /// life; this one never lists it, so they kill it).
    pub(super) fn fail_restored_steps(&mut self) {
        let running: Vec<(u64, u32)> = self
            .steps
            .iter()
            .filter(|(_, s)| s.state == StepState::Running)
            .map(|(&k, _)| k)
            .collect();
        for (id, step) in running {
            let end = StepEnd {
                state: StepState::Failed,
                exit_code: None,
                reason: Some(
                    "the server restarted while the step ran: its stream was cut, and its \
                     tasks were stopped"
                        .into(),
                ),
            };
            let _ = self.end_step(id, step, end);
        }
    }

    /// Job `id`'s steps in order (live jobs from memory; an ended job's as the actor
    /// read them from the store).
    pub(super) fn steps_of(&self, id: u64) -> Vec<StepView> {
        let live: Vec<StepView> = self
            .steps
            .range((id, 0)..=(id, u32::MAX))
            .map(|(_, s)| s.clone())
            .collect();
        if !live.is_empty() {
            return live;
        }
        self.recalled_steps.get(&id).cloned().unwrap_or_default()
    }

    /// The steps of jobs that left memory go with them (their rows are written).
    pub(super) fn forget_steps_of(&mut self, id: u64) {
        let keys: Vec<(u64, u32)> = self
            .steps
            .range((id, 0)..=(id, u32::MAX))
            .map(|(&k, _)| k)
            .collect();
        for k in keys {
            self.steps.remove_written(&k);
            self.step_requests.remove(&k);
        }
    }

    /// The steps of the live jobs as stored; `fail_running`: a new server life, whose
    /// streams the running ones lost (`fail_restored_steps`).
    pub fn restore_steps(&mut self, steps: Vec<gpusched_store::StoredStep>, fail_running: bool) {
        for s in steps {
            let (job, view) = from_stored(s);
            self.steps.insert_stored((job, view.step), view);
        }
        if fail_running {
            self.fail_restored_steps();
        }
    }

    /// Steps of an ended job read from the store for this round's commands.
    pub fn recall_steps(&mut self, id: u64, steps: Vec<StepView>) {
        self.recalled_steps.insert(id, steps);
    }
}

impl State {
    /// A step's event in its job's timeline (the job's attempt, the step's nodes); none
    /// for a job no longer in memory.
    fn note_step(
        &mut self,
        id: u64,
        _step: u32,
        kind: JobEventKind,
        nodes: &[String],
        detail: String,
    ) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let event = gpusched_wire::JobEvent {
            at_ms: self.now.ms,
            kind,
            attempt: job.view.attempt,
            nodes: nodes.to_vec(),
            detail,
        };
        self.journal.events.push((id, event));
    }
}

/// The GPUs (in thousandths) job `v` holds on `nodes`: a gang's parts there, a
/// single-node job's all (a share or MIG slice by its thousandths).
fn gpu_milli_on(v: &gpusched_wire::JobView, nodes: &[String]) -> u64 {
    if v.parts.is_empty() {
        return super::held_milli(v);
    }
    v.parts
        .iter()
        .filter(|p| nodes.contains(&p.node))
        .map(|p| p.gpu_indices.len() as u64 * 1000)
        .sum()
}

fn no_such_step(id: u64, step: u32) -> Fail {
    Fail::NotFound(format!(
        "job {id} has no running step {step}; `gpusched show {id}` lists its steps"
    ))
}

/// A step as the store keeps it (the API's type is never stored).
pub fn to_stored(job: u64, s: &StepView) -> gpusched_store::StoredStep {
    gpusched_store::StoredStep {
        job,
        step: s.step,
        command: s.command.clone(),
        nodes: s.nodes.clone(),
        tasks_per_node: s.tasks_per_node,
        pty: s.pty,
        state: s.state.as_str().to_string(),
        exit_code: s.exit_code,
        reason: s.reason.clone(),
        started_ms: s.started_ms,
        ended_ms: s.ended_ms,
    }
}

/// A stored step as the API shows it (an unknown state, from a newer release, reads as
/// failed).
pub fn from_stored(s: gpusched_store::StoredStep) -> (u64, StepView) {
    let state = match s.state.as_str() {
        "running" => StepState::Running,
        "completed" => StepState::Completed,
        "cancelled" => StepState::Cancelled,
        _ => StepState::Failed,
    };
    (
        s.job,
        StepView {
            step: s.step,
            command: s.command,
            nodes: s.nodes,
            tasks_per_node: s.tasks_per_node,
            pty: s.pty,
            state,
            exit_code: s.exit_code,
            reason: s.reason,
            started_ms: s.started_ms,
            ended_ms: s.ended_ms,
        },
    )
}
