//! The agent protocol: registration (with reconciliation), polls for the desired state,
//! and reports of what happened on the node.

use std::collections::BTreeSet;

use gpusched_store::NodeRecord;
use gpusched_wire::{
    AttemptRef, Desired, JobState, Launch, Outcome, PollQuery, PreemptOrder, Register, Registered,
    RunEvent, RunEventKind,
};
use tokio::sync::watch;

use gpusched_wire::history::JobEventKind;
use gpusched_wire::PartState;

use super::{gang, Fail, NodeEntry, State};

/// A poll is answered now, or must wait for the node's generation to move.
pub enum PollResult {
    Ready(Box<Desired>),
    Wait(watch::Receiver<u64>),
}

impl State {
    /// [`State::register_as`] for an agent of this build's protocol.
    #[cfg(test)]
    pub fn register(&mut self, reg: Register) -> Result<Registered, Fail> {
        self.register_as(reg, gpusched_wire::agent::AGENT_PROTOCOL)
    }

    /// An agent (of agent protocol `protocol`) joins or re-joins, and what it runs is
    /// reconciled with what the server believes.
    pub fn register_as(&mut self, reg: Register, protocol: u32) -> Result<Registered, Fail> {
        let name = reg.node.clone();
        super::validate::check_node_name(&name).map_err(Fail::BadRequest)?;
        let mut seen = BTreeSet::new();
        if let Some(g) = reg.gpus.iter().find(|g| !seen.insert(g.index)) {
            return Err(Fail::BadRequest(format!(
                "GPU index {} is listed twice",
                g.index
            )));
        }
        let models: BTreeSet<&str> = reg.gpus.iter().map(|g| g.model.as_str()).collect();
        if models.len() > 1 {
            return Err(Fail::BadRequest(format!(
                "node {name} has GPUs of several models ({}); the scheduler places jobs on \
                 one model per node: run one agent per model, each with its GPUs (--gpus and \
                 CUDA_VISIBLE_DEVICES on the agent) and its own --name",
                models.into_iter().collect::<Vec<_>>().join(", ")
            )));
        }
        gpusched_wire::resource::check_map(&reg.resources).map_err(|e| {
            Fail::BadRequest(format!("node {name}'s `resources` (--resource): {e}"))
        })?;
        let running: BTreeSet<AttemptRef> = reg.running.iter().copied().collect();
        let events = reg.events.clone();
        // What the server decided about the node (drain, health) outlives its agent.
        let mut record = NodeRecord::new(reg);
        if let Some(old) = self.nodes.get(&name) {
            record.drain = old.record.drain.clone();
            record.gpu_health = old.record.gpu_health.clone();
        }
        let now = self.now.instant;
        // The stored row changes (and is written) only if the registration says news.
        let gpus_changed = match self.nodes.get(&name) {
            None => {
                let mut entry = NodeEntry::new(record, now);
                // A node first seen: any uncorrectable ECC error is news.
                entry.ecc_base = Some(Default::default());
                self.nodes.insert(name.clone(), entry);
                true
            }
            Some(n) if n.record != record => {
                let n = self.nodes.get_mut(&name).expect("looked up above");
                let changed = n.record.register.gpus != record.register.gpus;
                n.record = record;
                changed
            }
            Some(_) => false,
        };
        let entry = self
            .nodes
            .get_mut_unstored(&name)
            .expect("registered above");
        entry.liveness = super::Liveness::Online;
        entry.last_seen = now;
        // Protocol 3 starts queued attempts itself (`follow.rs`); an older agent would
        // leave them waiting.
        entry.follows = protocol >= 3;
        // Protocol 4 takes a launch's limits and image (`launch`); an older agent
        // enforces nothing and would refuse the fields.
        entry.limits = protocol >= 4;
        // Protocol 5 gives replicas a port and probes them; an older agent would refuse
        // the launch's `serve`.
        entry.serves = protocol >= 5;
        // An agent that holds interactive allocations; an older one would refuse the
        // launch's `hold` (or run its label).
        entry.holds = protocol >= gpusched_wire::agent::HOLD_PROTOCOL;
        // Protocol 6 runs job steps; an older agent would not know of them.
        entry.steps = protocol >= 6;
        // A registering agent holds no launch of ours (`gpusched_wire::compact`).
        entry.offers.clear();
        if gpus_changed {
            tracing::info!(node = %name, "node joined or its GPUs changed");
        }
        self.refresh_nodes();
        self.apply_events(&name, &events);
        // Attempts the server believes run here but the agent neither runs nor reported
        // ending were lost with an earlier agent life (for a gang: this node's part).
        let here = self.jobs_on(&name);
        for id in here {
            let v = &self.jobs[&id].view;
            let a = AttemptRef {
                job: id,
                attempt: v.attempt,
            };
            // Started here by the agent's own report (a gang may still be starting on
            // its other nodes).
            let started = match self.part_on(id, &name) {
                Some(p) => p.state == PartState::Running,
                None => v.state == JobState::Running,
            };
            if started && !running.contains(&a) {
                let lost = Outcome::Lost {
                    message: format!("the agent on {name} restarted without it"),
                };
                let at = self.now.ms;
                self.part_ended(id, &name, &lost, at);
            }
        }
        self.bump(&name);
        Ok(Registered {
            instance: self.instance.clone(),
            poll_wait_ms: self.cfg.poll_wait().as_millis() as u64,
            heartbeat_timeout_ms: self.cfg.heartbeat_timeout.as_millis() as u64,
            lease_ms: Some(self.cfg.lease().as_millis() as u64),
            protocol: gpusched_wire::agent::AGENT_PROTOCOL,
            compact: true,
        })
    }

    fn known_node(&mut self, node: &str, instance: &str) -> Result<&mut NodeEntry, Fail> {
        let me = self.instance.clone();
        let now = self.now.instant;
        // A poll changes nothing stored, so it writes nothing (a full disk does not make
        // agents fence their jobs).
        match self.nodes.get_mut_unstored(node) {
            Some(n) if instance == me && n.online() => {
                n.last_seen = now;
                Ok(n)
            }
            _ => Err(Fail::Conflict(format!(
                "node {node} must register (again) with this server before polling or reporting"
            ))),
        }
    }

    /// A poll: the desired state if it moved past the agent's generation (or `force`),
    /// else a receiver to wait on.
    pub fn poll(&mut self, q: &PollQuery, force: bool) -> Result<PollResult, Fail> {
        let n = self.known_node(&q.node, &q.instance)?;
        if n.gen == q.gen && !force {
            return Ok(PollResult::Wait(n.watch.subscribe()));
        }
        let gen = n.gen;
        // Out of the node while the answer is made (`launch` reads the state).
        let mut offers = std::mem::take(&mut n.offers);
        let mut answer = offers.answer(gen, q.have);
        let ids = self.jobs_on(&q.node);
        let mut desired = Desired {
            gen,
            run: Vec::new(),
            cancel: Vec::new(),
            preempt: Vec::new(),
            reserve_ports: Vec::new(),
            // The state task stamps its term's epoch.
            epoch: 0,
            queued: Vec::new(),
            steps: Vec::new(),
            power_caps: self.power_caps_of(&q.node),
            run_known: Vec::new(),
            queued_known: Vec::new(),
        };
        let steps = self.nodes.get(&q.node).is_some_and(|n| n.steps);
        for id in ids {
            let job = &self.jobs[&id];
            let v = &job.view;
            let a = AttemptRef {
                job: id,
                attempt: v.attempt,
            };
            let part = v.parts.iter().find(|p| p.node == q.node);
            // A part that ended waits for the others; its agent has nothing left to do.
            if part.is_some_and(gang::ended) {
                continue;
            }
            if v.cancel_requested {
                desired.cancel.push(a);
            } else if v.preempt_requested {
                // Before a failed part's cancel: the others keep their checkpoint grace.
                desired.preempt.push(PreemptOrder {
                    job: id,
                    attempt: v.attempt,
                    signal: self.cfg.preempt_signal,
                    grace_s: self.cfg.preempt_grace.as_secs(),
                });
            } else if job.first_failure.is_some() {
                // Another part of the gang failed: stop this one.
                desired.cancel.push(a);
            } else if v.parts.len() > 1 && v.master_port.is_none() {
                // A gang starts once its first node holds a port for MASTER_PORT.
                if part.is_some_and(|p| p.rank == 0) {
                    desired.reserve_ports.push(a);
                }
            } else {
                let rank = part.map_or(0, |p| p.rank);
                let gpus = part.map_or(&v.gpu_indices, |p| &p.gpu_indices);
                if answer.holds(a, gpus, rank) {
                    desired.run_known.push(a);
                } else {
                    desired
                        .run
                        .push(self.launch(job, gpus.clone(), rank, &q.node));
                }
                if steps {
                    desired.steps.extend(self.step_launches(id, &q.node));
                }
            }
            // Whatever becomes of it, the jobs queued behind it are wanted here too (the
            // agent starts them only if it ends by itself or is cancelled).
            self.queued_behind(id, &v.gpu_indices, &q.node, &mut answer, &mut desired);
        }
        answer.done();
        if let Some(n) = self.nodes.get_mut_unstored(&q.node) {
            n.offers = offers;
        }
        Ok(PollResult::Ready(Box::new(desired)))
    }

    /// What the agent of `node` needs to start `job`'s part of `rank` on `gpus` (a
    /// follower: on the GPUs of the job it follows, as a job of one node). Limits and an
    /// image go only to agents of protocol 4: an older agent enforced nothing (its
    /// `--cpus` and `--mem` were accounting only) and refuses fields it does not know;
    /// placement never sends an image job to a node without an image runtime.
    pub(super) fn launch(
        &self,
        job: &crate::record::JobRecord,
        gpus: Vec<u32>,
        rank: u32,
        node: &str,
    ) -> Launch {
        let v = &job.view;
        let limits = self.nodes.get(node).is_some_and(|n| n.limits);
        let serves = self.nodes.get(node).is_some_and(|n| n.serves);
        let dist = if v.parts.is_empty() {
            gang::one_node_dist(v, gpus.len() as u32)
        } else {
            gang::dist(v, rank)
        };
        Launch {
            job: v.id,
            attempt: v.attempt,
            name: v.name.clone(),
            user: v.user.clone(),
            command: v.command.clone(),
            cwd: v.cwd.clone(),
            env: job.env.clone(),
            gpus,
            walltime_s: v.walltime_s,
            grace_s: job.grace_s,
            slice: v.slice_at.as_deref().cloned(),
            resources: v.resources.clone(),
            dist: Some(dist),
            cpu_milli: if limits { v.cpu_milli } else { 0 },
            mem_mib: if limits { v.mem_mib } else { 0 },
            pids_max: v.pids_max.filter(|_| limits),
            image: v.image.clone().filter(|_| limits),
            serve: self.serve_launch(job).filter(|_| serves),
            // Placement sends an interactive allocation only to agents that hold
            // (`live_map::HOLDS`).
            hold: v.interactive,
        }
    }

    pub fn report(&mut self, node: &str, instance: &str, events: &[RunEvent]) -> Result<(), Fail> {
        self.known_node(node, instance)?;
        self.apply_events(node, events);
        Ok(())
    }

    /// Keeps a node's latest GPU samples (shown in `nodes`, exported as metrics),
    /// charges their energy to the jobs holding the GPUs (`energy.rs`) and judges the
    /// GPUs' health from them (`health.rs`).
    pub fn telemetry(&mut self, node: &str, t: &gpusched_wire::NodeTelemetry) {
        if let Some(n) = self.nodes.get_mut_unstored(node) {
            n.telemetry = Some(t.clone());
        }
        // The core's tie-break between GPUs linked alike: the coolest, least loaded.
        let loads = t
            .gpus
            .iter()
            .filter(|s| !s.lost)
            .map(|s| {
                let load = gpusched_core::live::GpuLoad {
                    util_pct: s.util_pct.unwrap_or(0),
                    temp_c: s.temp_c.unwrap_or(0),
                };
                (s.index, load)
            })
            .collect();
        self.cluster.set_gpu_loads(node, loads);
        self.meter_energy(node, t);
        self.watch_idle(node, t);
        self.judge_samples(node, t);
    }

    /// Applies what a node says happened. Events about an attempt that is not the job's
    /// current one on this node are stale (a retried report, a requeued job) and ignored.
    fn apply_events(&mut self, node: &str, events: &[RunEvent]) {
        for e in events {
            // Looked at first, changed (and so written) only where the event says news.
            let Some(job) = self.jobs.get(&e.job) else {
                continue;
            };
            let v = &job.view;
            if v.attempt == e.attempt && self.cluster.following(e.job).is_some() {
                self.follower_started_early(e.job);
                continue;
            }
            // The job's current attempt, with a part on this node that has not ended
            // (a job placed before parts existed has its one node).
            let on_node = match v.parts.iter().find(|p| p.node == node) {
                Some(p) => !gang::ended(p),
                None => v.parts.is_empty() && v.node.as_deref() == Some(node),
            };
            let current = v.attempt == e.attempt
                && on_node
                && matches!(v.state, JobState::Starting | JobState::Running);
            if !current {
                continue;
            }
            match &e.event {
                RunEventKind::PortReserved { port } => self.port_reserved(e.job, node, *port),
                RunEventKind::Listening { port } => self.replica_listening(e.job, *port),
                RunEventKind::Ready { ready, message } => {
                    self.replica_ready(e.job, *ready, message.as_deref())
                }
                RunEventKind::Started { mig_uuid, .. } => {
                    let new_uuid = mig_uuid.as_ref().filter(|uuid| {
                        v.slice_at
                            .as_ref()
                            .and_then(|at| at.mig.as_ref())
                            .is_some_and(|m| m.uuid.as_deref() != Some(uuid.as_str()))
                    });
                    if let Some(uuid) = new_uuid {
                        let v = &mut self.jobs.get_mut(&e.job).expect("looked up above").view;
                        if let Some(m) = v.slice_at.as_mut().and_then(|at| at.mig.as_mut()) {
                            m.uuid = Some(uuid.clone());
                        }
                        self.cluster.set_mig_uuid(node, e.job, uuid);
                    }
                    if self.jobs[&e.job].view.parts.len() > 1 {
                        self.part_started(e.job, node, e.at_ms);
                        continue;
                    }
                    self.mark_part(e.job, node, PartState::Running, None);
                    let starting = self.jobs[&e.job].view.state == JobState::Starting;
                    if starting && self.set_state(e.job, &[gpusched_core::JobState::Running]) {
                        self.note_at(e.job, JobEventKind::Started, e.at_ms, String::new());
                        let v = &mut self.jobs.get_mut(&e.job).expect("looked up above").view;
                        v.start_ms = Some(e.at_ms);
                        v.reason = if v.cancel_requested {
                            format!("cancel requested; {node} is stopping it")
                        } else {
                            format!("running on {node}")
                        };
                        self.estimate_on_start(e.job);
                    }
                }
                RunEventKind::Checkpoint => {
                    // A mark older than this attempt's start belongs to an earlier one.
                    let newer = v.last_checkpoint_ms.is_none_or(|t| e.at_ms > t);
                    if newer && v.start_ms.is_some_and(|s| e.at_ms >= s) {
                        let v = &mut self.jobs.get_mut(&e.job).expect("looked up above").view;
                        v.last_checkpoint_ms = Some(e.at_ms);
                        self.note_at(
                            e.job,
                            JobEventKind::Checkpoint,
                            e.at_ms,
                            format!("saved on {node}"),
                        );
                    }
                }
                RunEventKind::Ended { outcome, usage } => {
                    if let Some(u) = usage {
                        self.add_usage(e.job, u);
                    }
                    self.part_ended(e.job, node, outcome, e.at_ms)
                }
            }
        }
    }

    /// What one part of job `id`'s current attempt used, added to the attempt's (before
    /// the part's end is applied, so the end's event can say it).
    fn add_usage(&mut self, id: u64, part: &gpusched_wire::contain::Usage) {
        let v = &mut self.jobs.get_mut(&id).expect("caller checked").view;
        match v.usage.as_deref_mut() {
            Some(sum) => sum.add_part(part),
            None => v.usage = Some(Box::new(part.clone())),
        }
    }

    /// The part of job `id` on `node` ended: a gang waits for all its parts
    /// (`gang.rs`); a job of one node ends now.
    fn part_ended(&mut self, id: u64, node: &str, outcome: &Outcome, at_ms: u64) {
        if self.jobs.get(&id).is_some_and(|j| j.view.parts.len() > 1) {
            self.gang_part_ended(id, node, outcome, at_ms);
            return;
        }
        let (state, code, signal) = gang::part_end(outcome, self.cfg.preempt_signal);
        self.mark_part(id, node, state, Some((code, signal)));
        self.ended(id, outcome, at_ms, Some(node));
    }

    /// Sets the state (and how it ended) of a one-node job's part, where it changes.
    fn mark_part(
        &mut self,
        id: u64,
        node: &str,
        state: PartState,
        end: Option<(Option<i32>, Option<i32>)>,
    ) {
        let Some(i) = self
            .jobs
            .get(&id)
            .and_then(|j| j.view.parts.iter().position(|p| p.node == node))
        else {
            return;
        };
        if self.jobs[&id].view.parts[i].state == state && end.is_none() {
            return;
        }
        let p = &mut self.jobs.get_mut(&id).expect("looked up above").view.parts[i];
        p.state = state;
        if let Some((code, signal)) = end {
            p.exit_code = code;
            p.signal = signal;
        }
    }

    /// How a run ended decides the job: it ends, or goes back in the queue. `node` is
    /// where the deciding part ran (the stopping agent for `Stopped`).
    pub(super) fn ended(&mut self, id: u64, outcome: &Outcome, at_ms: u64, node: Option<&str>) {
        // Asked to stop by the idle policy (`idle.rs`): its end says so.
        let idle_end = self.idle.take_ending(id);
        let job = self.jobs.get_mut(&id).expect("caller checked");
        let v = &mut job.view;
        if v.start_ms.is_none() {
            v.start_ms = Some(at_ms);
        }
        let cancelled = v.cancel_requested;
        let (state, reason) = match outcome {
            Outcome::Lost { message } => {
                let message = message.clone();
                self.lose(id, &message);
                return;
            }
            Outcome::Preempted if !cancelled => {
                self.checkpoint_saved(id);
                self.requeue_preempted(id);
                return;
            }
            Outcome::Stopped { message } if !cancelled => {
                let message = message.clone();
                self.requeue_stopped(id, &message, node);
                return;
            }
            Outcome::Stopped { .. } => (
                JobState::Cancelled,
                "cancelled; its agent was stopping it anyway".to_string(),
            ),
            Outcome::Preempted => (
                JobState::Cancelled,
                "cancelled while being preempted".to_string(),
            ),
            // An agent too old to know preemption stops a victim as "no longer wanted".
            Outcome::Cancelled if v.preempt_requested && !cancelled => {
                self.requeue_preempted(id);
                return;
            }
            Outcome::Cancelled => (
                JobState::Cancelled,
                idle_end.unwrap_or_else(|| "cancelled while running".to_string()),
            ),
            _ if cancelled => (
                JobState::Cancelled,
                "cancelled; it ended during the grace period".into(),
            ),
            Outcome::Exited { code: 0 } => {
                v.exit_code = Some(0);
                (JobState::Succeeded, "exited with code 0".into())
            }
            Outcome::Exited { code } => {
                v.exit_code = Some(*code);
                (JobState::Failed, format!("exited with code {code}"))
            }
            Outcome::Signaled { signal } => {
                v.signal = Some(*signal);
                (
                    JobState::Failed,
                    format!("killed by signal {signal} ({})", signal_name(*signal)),
                )
            }
            Outcome::TimedOut { walltime_s } => (
                JobState::TimedOut,
                format!("stopped after passing its walltime of {walltime_s} s"),
            ),
            Outcome::SpawnFailed { message } => {
                (JobState::Failed, format!("could not start: {message}"))
            }
            Outcome::OutOfMemory {
                peak_bytes,
                limit_bytes,
            } => {
                v.signal = Some(9);
                (
                    JobState::Failed,
                    gpusched_wire::contain::out_of_memory_text(*peak_bytes, *limit_bytes),
                )
            }
            Outcome::Unhealthy { message } => {
                (JobState::Failed, format!("stopped by its agent: {message}"))
            }
        };
        self.end(id, state, reason, at_ms);
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => "unnamed signal",
    }
}
