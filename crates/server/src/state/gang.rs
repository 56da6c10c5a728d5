//! The parts of a job's attempt (issue 12): where each runs, the port its first node
//! reserves for `MASTER_PORT`, the launch environment each part's agent gets, and how a
//! gang ends as one.
//!
//! Every placed job has parts, one per node in rank order (a job on one node has one, so
//! `show` is uniform); `JobView.node` and `gpu_indices` stay part 0's. A gang (two parts
//! or more) starts in two steps: part 0's agent is asked to reserve a port
//! (`Desired.reserve_ports`) and only once it reports it (`PortReserved`) does every
//! part get its `Launch`. A part that exits 0 waits for the others; the first part to end
//! otherwise makes every other live part's agent cancel it. The GPUs of every part stay
//! held in the core until every part has ended; then the job ends once with the first
//! failure's outcome (or requeues as one, with one retry), exactly as a job of one node
//! would have ended with that outcome.

use crate::record::PartFailure;
use gpusched_wire::{DistHost, DistLaunch, JobPart, JobState, JobView, Outcome, PartState};

use super::State;

/// Whether a part has ended (it waits for the others, it failed, or it was stopped).
pub(super) fn ended(p: &JobPart) -> bool {
    matches!(
        p.state,
        PartState::Done | PartState::Failed | PartState::Stopped
    )
}

/// The signal an agent stops a part with when gpusched asks it to (a cancel, a drain,
/// the rest of a gang after one part failed): SIGTERM, then SIGKILL after the grace.
const STOP_SIGNAL: i32 = 15;

/// How a part that ended with `outcome` shows: its state, exit code and signal. A part
/// gpusched itself stopped is `Stopped` with the signal it was stopped with, so a gang
/// cancelled, or stopped because another part failed, shows which rank failed and which
/// were only stopped. `preempt_signal` is the checkpoint signal a preemption sends.
pub(super) fn part_end(
    outcome: &Outcome,
    preempt_signal: i32,
) -> (PartState, Option<i32>, Option<i32>) {
    match outcome {
        Outcome::Exited { code: 0 } => (PartState::Done, Some(0), None),
        Outcome::Exited { code } => (PartState::Failed, Some(*code), None),
        Outcome::Signaled { signal } => (PartState::Failed, None, Some(*signal)),
        Outcome::OutOfMemory { .. } => (PartState::Failed, None, Some(9)),
        Outcome::Cancelled | Outcome::Stopped { .. } => {
            (PartState::Stopped, None, Some(STOP_SIGNAL))
        }
        Outcome::Preempted => (PartState::Stopped, None, Some(preempt_signal)),
        // The walltime decides how the job ends, and a lost or unstartable part was not
        // stopped by anyone: these failed.
        Outcome::TimedOut { .. }
        | Outcome::SpawnFailed { .. }
        | Outcome::Lost { .. }
        | Outcome::Unhealthy { .. } => (PartState::Failed, None, None),
    }
}

/// The nodes of a job's parts, `n1, n2`; its node for a job placed before parts existed.
pub(super) fn nodes_of(v: &JobView) -> String {
    if v.parts.is_empty() {
        return v.node.clone().unwrap_or_default();
    }
    v.parts
        .iter()
        .map(|p| p.node.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The address other nodes reach a part's node at: the one its agent advertised, else
/// its name (which resolves on most clusters).
fn addr_of(p: &JobPart) -> String {
    p.addr.clone().unwrap_or_else(|| p.node.clone())
}

/// The launch environment of the part with `rank`.
pub(super) fn dist(v: &JobView, rank: u32) -> DistLaunch {
    let part = v.parts.iter().find(|p| p.rank == rank);
    let gpus_per_node = part.map_or(v.gpu_indices.len(), |p| p.gpu_indices.len()) as u32;
    if v.parts.len() < 2 {
        return one_node_dist(v, gpus_per_node);
    }
    DistLaunch {
        nnodes: v.parts.len() as u32,
        node_rank: rank,
        gpus_per_node,
        tasks_per_node: v.tasks_per_node,
        master_addr: v.parts.first().map(addr_of),
        master_port: v.master_port,
        hosts: v
            .parts
            .iter()
            .map(|p| DistHost {
                addr: addr_of(p),
                slots: v
                    .tasks_per_node
                    .unwrap_or(p.gpu_indices.len() as u32)
                    .max(1),
            })
            .collect(),
    }
}

/// The launch environment of a job of one node with `gpus_per_node` GPUs: its agent
/// picks the port and uses its own address.
pub(super) fn one_node_dist(v: &JobView, gpus_per_node: u32) -> DistLaunch {
    DistLaunch {
        nnodes: 1,
        node_rank: 0,
        gpus_per_node,
        tasks_per_node: v.tasks_per_node,
        master_addr: None,
        master_port: None,
        hosts: Vec::new(),
    }
}

/// "the other part", "the other 3 parts".
fn others(n: usize) -> String {
    match n {
        1 => "the other part".into(),
        n => format!("the other {n} parts"),
    }
}

/// What an outcome says, for a part's line in the job's reason.
fn says(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Exited { code } => format!("exited with code {code}"),
        Outcome::Signaled { signal } => format!("was killed by signal {signal}"),
        Outcome::TimedOut { walltime_s } => format!("passed the walltime of {walltime_s} s"),
        Outcome::Cancelled => "was cancelled".into(),
        Outcome::SpawnFailed { message } => format!("could not start: {message}"),
        Outcome::Lost { message } => format!("was lost: {message}"),
        Outcome::Preempted => "was preempted".into(),
        Outcome::Stopped { message } => format!("was stopped: {message}"),
        Outcome::Unhealthy { message } => format!("was stopped by its agent: {message}"),
        Outcome::OutOfMemory {
            peak_bytes,
            limit_bytes,
        } => format!(
            "ran {}",
            gpusched_wire::contain::out_of_memory_text(*peak_bytes, *limit_bytes)
        ),
    }
}

impl State {
    /// The part of job `id`'s current attempt on `node`, if it has one.
    pub(super) fn part_on(&self, id: u64, node: &str) -> Option<&JobPart> {
        self.jobs
            .get(&id)?
            .view
            .parts
            .iter()
            .find(|p| p.node == node)
    }

    /// Wakes the agent of every node a job has a part on (its desired state changed).
    pub(super) fn bump_job(&mut self, id: u64) {
        let Some(v) = self.jobs.get(&id).map(|j| &j.view) else {
            return;
        };
        // The names are borrowed from the job while the nodes change (this runs at
        // every placement and end).
        let (nodes, touched) = (&mut self.nodes, &mut self.touched);
        for n in v
            .parts
            .iter()
            .map(|p| p.node.as_str())
            .chain(v.node.as_deref())
        {
            super::bump_node(nodes, touched, n);
        }
    }

    /// Part 0's agent reserved `port` for `MASTER_PORT`: every part may now start.
    pub(super) fn port_reserved(&mut self, id: u64, node: &str, port: u16) {
        let Some(v) = self.jobs.get(&id).map(|j| &j.view) else {
            return;
        };
        let first = v.parts.first().is_some_and(|p| p.node == node);
        // Known already (a report sent twice), or not the first node's to say.
        if !first || v.parts.len() < 2 || v.master_port.is_some() || port == 0 {
            return;
        }
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let v = &mut job.view;
        v.master_port = Some(port);
        if !v.cancel_requested && job.first_failure.is_none() {
            v.reason = format!("starting on {} (MASTER_PORT {port} on {node})", nodes_of(v));
        }
        self.bump_job(id);
    }

    /// A part started; the job runs once every part has (a part that already ended 0
    /// counts as started).
    pub(super) fn part_started(&mut self, id: u64, node: &str, at_ms: u64) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let Some(i) = job.view.parts.iter().position(|p| p.node == node) else {
            return;
        };
        if job.view.parts[i].state == PartState::Starting {
            let job = self.jobs.get_mut(&id).expect("looked up above");
            job.view.parts[i].state = PartState::Running;
        }
        let v = &self.jobs[&id].view;
        let all = v.parts.iter().all(|p| p.state != PartState::Starting);
        if !all || v.state != JobState::Starting {
            return;
        }
        if self.set_state(id, &[gpusched_core::JobState::Running]) {
            // The node's clock of the last part to start: when the gang as a whole ran.
            self.note_at(
                id,
                gpusched_wire::history::JobEventKind::Started,
                at_ms,
                "every part started".into(),
            );
            let job = self.jobs.get_mut(&id).expect("looked up above");
            let failed = job.first_failure.is_some();
            let v = &mut job.view;
            v.start_ms = Some(at_ms);
            let on = nodes_of(v);
            v.reason = if v.cancel_requested {
                format!("cancel requested; stopping it on {on}")
            } else if failed {
                format!("a part failed; stopping the others on {on}")
            } else {
                format!("running on {on}")
            };
        }
    }

    /// A part of a gang ended with `outcome`. The first that did not exit 0 decides how
    /// the job ends, and the others are cancelled; the job ends once all have.
    pub(super) fn gang_part_ended(&mut self, id: u64, node: &str, outcome: &Outcome, at_ms: u64) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let Some(i) = job.view.parts.iter().position(|p| p.node == node) else {
            return;
        };
        if ended(&job.view.parts[i]) {
            return; // said before
        }
        let ok = matches!(outcome, Outcome::Exited { code: 0 });
        let first = !ok && job.first_failure.is_none();
        let (state, exit_code, signal) = part_end(outcome, self.cfg.preempt_signal);
        let job = self.jobs.get_mut(&id).expect("looked up above");
        let part = &mut job.view.parts[i];
        part.state = state;
        part.exit_code = exit_code;
        part.signal = signal;
        let rank = part.rank;
        let left = job.view.parts.iter().filter(|p| !ended(p)).count();
        if first {
            job.first_failure = Some(Box::new(PartFailure {
                rank,
                outcome: outcome.clone(),
                at_ms,
            }));
            if !job.view.cancel_requested && !job.view.preempt_requested {
                job.view.reason = format!(
                    "part {rank} on {node} {}; stopping {}",
                    says(outcome),
                    others(left)
                );
            }
            // Every other live part's agent is told to cancel it.
            self.bump_job(id);
        } else if ok && job.first_failure.is_none() && !job.view.cancel_requested && left > 0 {
            job.view.reason = format!(
                "part {rank} on {node} exited with code 0; waiting for {}",
                others(left)
            );
        }
        if left == 0 {
            self.gang_over(id, at_ms);
        }
    }

    /// Every part of a gang has ended: the job ends once, as one node with the first
    /// failure's outcome would have (or succeeds if every part exited 0).
    fn gang_over(&mut self, id: u64, at_ms: u64) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let n = job.view.parts.len() as u32;
        let Some(f) = job.first_failure.clone() else {
            if let Some(job) = self.jobs.get_mut(&id) {
                job.view.exit_code = Some(0);
            }
            let why = format!("every part ({n}) exited with code 0");
            self.end(id, JobState::Succeeded, why, at_ms);
            return;
        };
        let node = job
            .view
            .parts
            .iter()
            .find(|p| p.rank == f.rank)
            .map(|p| p.node.clone())
            .unwrap_or_default();
        let attempt = job.view.attempt;
        self.ended(id, &f.outcome, at_ms, Some(&node));
        // An end says which part decided; a requeue's reason already says why.
        if let Some(job) = self.jobs.get_mut(&id) {
            if job.view.attempt != attempt {
                return;
            }
            job.view.reason = if job.view.cancel_requested && job.view.state == JobState::Cancelled
            {
                // The user's cancel decided, not a part.
                format!("cancelled; all {n} parts stopped")
            } else {
                format!(
                    "part {} on {node}: {}; every other part was stopped",
                    f.rank, job.view.reason
                )
            };
            let (state, reason) = (job.view.state, job.view.reason.clone());
            self.reword_end(id, format!("{}: {reason}", state.name()));
        }
    }

    /// The parts of a placement, in rank order, with their nodes' addresses.
    pub(super) fn parts_of(&self, p: &gpusched_core::live::LivePlacement) -> Vec<JobPart> {
        p.parts
            .iter()
            .enumerate()
            .map(|(rank, part)| JobPart {
                rank: rank as u32,
                node: part.node.clone(),
                gpu_indices: part.gpus.clone(),
                addr: self
                    .nodes
                    .get(&part.node)
                    .and_then(|n| n.record.register.advertise_addr.clone()),
                state: PartState::Starting,
                exit_code: None,
                signal: None,
            })
            .collect()
    }
}
