//! The bridge from the server's jobs and nodes to the shared scheduling core: the same
//! `SchedJob::account(now)` + `Scheduler::pass(jobs, now)` the simulator drives, with
//! `now` read from the wall clock by the caller.
//!
//! Each online node is its own "switch" in the core's cluster model: live jobs run on
//! one node, and nodes may differ in GPU count and model.
//!
//! Jobs on part of a GPU (shares, MIG instances) are kept apart, in `live_slices`: they
//! are placed first in each pass, and the GPUs they hold are kept from the whole-GPU
//! scheduler (MIG GPUs are never in its cluster; shared GPUs are occupied in it).

use std::collections::{BTreeMap, BTreeSet};

use gpusched_core::schedule::PreemptMode;
use gpusched_core::sharing::{SharePod, ShareStrategy};
use gpusched_wire::{GpuInfo, SliceAt};

use crate::live_slices::{self, Book, NodeSlices, SliceJob};
use gpusched_core::{
    Cluster, Decision, Gpu, GpuIndex, JobId, JobSpec, Node, NodeId, Placement, PlacementStrategy,
    PolicyConfig, QueueId, SchedJob, Scheduler, Seconds, SwitchId, UserId,
};

/// One online node as the core should see it.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveNode {
    pub name: String,
    pub model: String,
    pub cpus: u32,
    pub mem_mib: u64,
    /// It runs MPS.
    pub mps: bool,
    /// Its GPUs as registered, with their MIG layouts.
    pub gpus: Vec<GpuInfo>,
    /// Generic counted resources its agent declared (`--resource fpga=2`).
    pub resources: BTreeMap<String, u64>,
}

impl LiveNode {
    /// GPUs the whole-GPU scheduler may use: those not in MIG mode.
    fn whole_gpus(&self) -> u32 {
        self.gpus.iter().filter(|g| g.mig.is_none()).count() as u32
    }
}

/// A start decided by a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Start {
    pub job: u64,
    pub node: String,
    /// For a job on part of a GPU: its share or MIG instance.
    pub slice: Option<SliceAt>,
}

/// The jobs that can still run (pending, starting or running), in admission order, and
/// the core scheduler over the online nodes.
pub struct LiveQueue {
    scheduler: Scheduler,
    jobs: Vec<SchedJob>,
    nodes: Vec<LiveNode>,
    users: BTreeMap<String, UserId>,
    /// Jobs on part of a GPU, by id, and each online node's slices.
    slice_jobs: Vec<SliceJob>,
    book: Book,
    share_strategy: ShareStrategy,
    /// Each capped queue's cap, before its slices are taken off it for a pass.
    queue_caps: BTreeMap<QueueId, u32>,
    /// GPUs one user's jobs may hold in a queue (`max_gpus_per_user`).
    user_caps: BTreeMap<QueueId, u32>,
}

impl LiveQueue {
    pub fn new(policy: PolicyConfig, share_strategy: ShareStrategy) -> Self {
        let empty = Cluster {
            nodes: Vec::new(),
            switches: 0,
        };
        let mut scheduler = Scheduler::new(
            &empty,
            policy,
            PlacementStrategy::BestFit,
            PreemptMode::InPlace,
        );
        // Running jobs hold the CPUs, memory and generic resources they ask for on their
        // node (the simulator leaves this off). Live policies are non-preemptive.
        scheduler.reserve_node_resources();
        LiveQueue {
            scheduler,
            jobs: Vec::new(),
            nodes: Vec::new(),
            users: BTreeMap::new(),
            slice_jobs: Vec::new(),
            book: Book::new(),
            share_strategy,
            queue_caps: BTreeMap::new(),
            user_caps: BTreeMap::new(),
        }
    }

    /// A node's GPUs as slices see them (MIG layouts, shares and who holds them).
    pub fn slices(&self, node: &str) -> Option<&NodeSlices> {
        self.book.get(node)
    }

    /// Records the UUID an agent reported for a job's MIG instance.
    pub fn set_mig_uuid(&mut self, node: &str, job: u64, uuid: &str) {
        if let Some(n) = self.book.get_mut(node) {
            n.set_mig_uuid(job, uuid);
        }
    }

    fn find_slice(&self, id: u64) -> Option<usize> {
        self.slice_jobs.binary_search_by_key(&id, |j| j.id).ok()
    }

    /// Puts a slice job on its node's slices; opening a GPU for shares takes it from
    /// the whole-GPU scheduler. False, and nothing changes, if it does not fit.
    fn occupy_slice(&mut self, node: &str, i: usize, at: &SliceAt) -> bool {
        let (id, user) = (self.slice_jobs[i].id, self.slice_jobs[i].user.clone());
        let Some(n) = self.node_index(node) else {
            return false;
        };
        let Some(book) = self.book.get_mut(node) else {
            return false;
        };
        let mut trial = book.clone();
        match trial.apply(id, &user, at) {
            Some(true) => {
                let p = Placement {
                    parts: vec![(NodeId(n as u32), 1)],
                };
                if !self.scheduler.occupy(&p) {
                    return false;
                }
            }
            Some(false) => {}
            None => return false,
        }
        *book = trial;
        true
    }

    /// Takes a slice job off its node; a GPU that lost its last share goes back to the
    /// whole-GPU scheduler.
    fn release_slice(&mut self, i: usize) {
        let Some((node, _)) = self.slice_jobs[i].at.take() else {
            return;
        };
        let id = self.slice_jobs[i].id;
        let closed = self.book.get_mut(&node).is_some_and(|b| b.release(id));
        if let (true, Some(n)) = (closed, self.node_index(&node)) {
            self.scheduler.release(&Placement {
                parts: vec![(NodeId(n as u32), 1)],
            });
        }
    }

    /// Adds a job at the back of the queue (the core's order); the list stays sorted by
    /// id, which keeps lookups a binary search.
    pub fn add(&mut self, v: &gpusched_wire::JobView, queue: QueueId) {
        if let Some(ask) = &v.slice {
            let job = SliceJob {
                id: v.id,
                user: v.user.clone(),
                queue,
                priority: v.priority,
                model: v.gpu_model.clone(),
                ask: ask.clone(),
                at: None,
            };
            let at = self.slice_jobs.partition_point(|j| j.id < v.id);
            self.slice_jobs.insert(at, job);
            return;
        }
        let (id, submit) = (v.id, v.submit_ms as f64 / 1000.0);
        let estimate = v.walltime_s.map(|w| w as f64);
        let next = self.users.len() as u32;
        let user = *self.users.entry(v.user.clone()).or_insert(UserId(next));
        let mut job = SchedJob::new(JobSpec {
            id: JobId(id),
            gpus: v.gpus,
            gpu_model: v.gpu_model.clone(),
            user,
            queue,
            priority: v.priority,
            submit,
            estimate,
            cpu_milli: v.cpu_milli,
            mem_mib: v.mem_mib,
            generic: v.resources.clone(),
        });
        self.scheduler.enqueue(&mut job);
        // Usually the newest id; a job released from a dependency is older.
        let at = self.jobs.partition_point(|j| j.spec.id.0 < id);
        self.jobs.insert(at, job);
    }

    fn find(&self, id: u64) -> Option<usize> {
        self.jobs.binary_search_by_key(&id, |j| j.spec.id.0).ok()
    }

    /// Marks a job that was recovered from the store as already running on `node`.
    /// Returns false when the node is not online or lacks the GPUs.
    pub fn mark_running(
        &mut self,
        id: u64,
        node: &str,
        slice: Option<&SliceAt>,
        now: Seconds,
    ) -> bool {
        if let Some(at) = slice {
            let Some(i) = self.find_slice(id) else {
                return false;
            };
            if self.slice_jobs[i].at.is_some() || !self.occupy_slice(node, i, at) {
                return false;
            }
            self.slice_jobs[i].at = Some((node.to_string(), at.clone()));
            return true;
        }
        let (Some(i), Some(n)) = (self.find(id), self.node_index(node)) else {
            return false;
        };
        let placement = Placement {
            parts: vec![(NodeId(n as u32), self.jobs[i].spec.gpus)],
        };
        self.scheduler.start_at(&mut self.jobs[i], placement, now)
    }

    /// Keeps `k` free GPUs of `node` out of the next pass (for a job that reclaimed
    /// them); returns the hold to lift with [`LiveQueue::unhold`].
    pub fn hold(&mut self, node: &str, k: u32) -> Option<Placement> {
        let n = self.node_index(node)?;
        let p = Placement {
            parts: vec![(NodeId(n as u32), k)],
        };
        self.scheduler.occupy(&p).then_some(p)
    }

    pub fn unhold(&mut self, hold: &Placement) {
        self.scheduler.release(hold);
    }

    /// Takes a job out for good (it ended or was cancelled), freeing its GPUs.
    pub fn remove(&mut self, id: u64) {
        if let Some(i) = self.find_slice(id) {
            self.release_slice(i);
            self.slice_jobs.remove(i);
            return;
        }
        if let Some(i) = self.find(id) {
            let mut job = self.jobs.remove(i);
            self.scheduler.finish(&mut job);
        }
    }

    /// Puts a job whose run was lost back in the queue, its GPUs freed.
    pub fn requeue(&mut self, id: u64, now: Seconds) {
        if let Some(i) = self.find_slice(id) {
            self.release_slice(i);
            return;
        }
        if let Some(i) = self.find(id) {
            let job = &mut self.jobs[i];
            job.account(now);
            self.scheduler.finish(job);
        }
    }

    fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Replaces the set of online nodes. Running jobs keep their GPUs; a running job
    /// whose node is gone (or shrank below it) is returned so the caller can mark it
    /// lost.
    pub fn set_nodes(&mut self, nodes: Vec<LiveNode>) -> Vec<u64> {
        if nodes == self.nodes {
            return Vec::new();
        }
        let cluster = Cluster {
            switches: nodes.len() as u32,
            nodes: nodes
                .iter()
                .enumerate()
                .map(|(i, n)| Node {
                    id: NodeId(i as u32),
                    switch: SwitchId(i as u32),
                    gpus: (0..n.whole_gpus())
                        .map(|g| Gpu {
                            index: GpuIndex(g),
                            model: n.model.clone(),
                            mem_mib: 0,
                            mig_enabled: false,
                        })
                        .collect(),
                    cpu_milli: u64::from(n.cpus) * 1000,
                    mem_mib: n.mem_mib,
                    generic: n.resources.clone(),
                })
                .collect(),
        };
        let old = std::mem::replace(&mut self.nodes, nodes);
        self.scheduler.set_cluster(&cluster);
        self.book = self
            .nodes
            .iter()
            .map(|n| {
                let slices = NodeSlices::from_gpus(&n.gpus, n.cpus, n.mem_mib, n.mps);
                (n.name.clone(), slices)
            })
            .collect();
        let mut orphans = Vec::new();
        for job in &mut self.jobs {
            let Some(p) = job.placement.take() else {
                continue;
            };
            let moved = p.parts.iter().map(|&(n, k)| {
                let name = &old[n.index()].name;
                self.nodes
                    .iter()
                    .position(|x| &x.name == name)
                    .map(|i| (NodeId(i as u32), k))
            });
            let parts: Option<Vec<_>> = moved.collect();
            match parts.map(|parts| Placement { parts }) {
                Some(p) if self.scheduler.occupy_job(&job.spec, &p) => job.placement = Some(p),
                _ => {
                    job.running = false;
                    orphans.push(job.spec.id.0);
                }
            }
        }
        // Slice jobs go back on the rebuilt slices (their node's layout as registered).
        for i in 0..self.slice_jobs.len() {
            let Some((node, at)) = self.slice_jobs[i].at.take() else {
                continue;
            };
            let id = self.slice_jobs[i].id;
            if self.occupy_slice(&node, i, &at) {
                self.slice_jobs[i].at = Some((node, at));
            } else {
                orphans.push(id);
            }
        }
        orphans
    }

    /// One pass of the core at `now`: the jobs it starts, each with its node.
    /// `whole_used` holds, per node, the GPU indices whole-GPU jobs hold.
    /// `share_target` is FGD's target workload for the shares that wait (the core's
    /// `sharing::demand::target_pods` of the recent jobs); unused when none waits.
    pub fn pass(
        &mut self,
        now: Seconds,
        whole_used: &BTreeMap<String, BTreeSet<u32>>,
        share_target: &[SharePod],
    ) -> Vec<Start> {
        if self.nodes.is_empty() {
            return Vec::new();
        }
        let mut starts = self.slice_pass(whole_used, share_target);
        // The whole-GPU pass sees each capped queue's cap less the GPUs its slices hold.
        if !self.queue_caps.is_empty() {
            let slices = self.slice_milli_by_queue();
            let caps = self
                .queue_caps
                .iter()
                .map(|(q, &cap)| {
                    let held = slices.get(q).map_or(0, |m| m.div_ceil(1000) as u32);
                    (*q, cap.saturating_sub(held))
                })
                .collect();
            self.scheduler.set_queue_limits(caps);
        }
        // Only running jobs change while time passes; waiting ones are accounted by the
        // core when they start (the same rule the simulator follows).
        for job in self.jobs.iter_mut().filter(|j| j.running) {
            job.account(now);
        }
        // Jobs of users at their per-queue cap sit this pass out (see `over_user_caps`).
        let out = if self.user_caps.is_empty() {
            self.scheduler.pass(&mut self.jobs, now)
        } else {
            let out_ids = self.over_user_caps();
            let (mut kept, held): (Vec<SchedJob>, Vec<SchedJob>) = std::mem::take(&mut self.jobs)
                .into_iter()
                .partition(|j| !out_ids.contains(&j.spec.id.0));
            let out = self.scheduler.pass(&mut kept, now);
            kept.extend(held);
            kept.sort_by_key(|j| j.spec.id.0);
            self.jobs = kept;
            out
        };
        starts.extend(out.decisions.into_iter().filter_map(|d| match d {
            Decision::Start { job, placement, .. } => Some(Start {
                job: job.0,
                node: self.nodes[placement.parts[0].0.index()].name.clone(),
                slice: None,
            }),
            // Only non-preemptive policies run live for now (checked at start-up).
            Decision::Preempt { .. } => None,
        }));
        starts
    }

    /// Places waiting slice jobs, highest priority first, then oldest.
    /// Thousandths of a GPU the placed slice jobs of each queue hold.
    fn slice_milli_by_queue(&self) -> BTreeMap<QueueId, u64> {
        let mut m = BTreeMap::new();
        for j in &self.slice_jobs {
            if let Some((_, at)) = &j.at {
                *m.entry(j.queue).or_insert(0) += u64::from(at.milli);
            }
        }
        m
    }

    /// Whole GPUs the running whole-GPU jobs of each queue hold.
    fn whole_by_queue(&self) -> BTreeMap<QueueId, u64> {
        let mut m = BTreeMap::new();
        for j in self.jobs.iter().filter(|j| j.running) {
            *m.entry(j.spec.queue).or_insert(0) += u64::from(j.spec.gpus);
        }
        m
    }

    /// Whether a job on part of a GPU waits (the slice pass has work).
    pub fn slices_waiting(&self) -> bool {
        self.slice_jobs.iter().any(|j| j.at.is_none())
    }

    fn slice_pass(
        &mut self,
        whole_used: &BTreeMap<String, BTreeSet<u32>>,
        share_target: &[SharePod],
    ) -> Vec<Start> {
        let mut waiting: Vec<usize> = (0..self.slice_jobs.len())
            .filter(|&i| self.slice_jobs[i].at.is_none())
            .collect();
        if waiting.is_empty() {
            return Vec::new();
        }
        waiting.sort_by_key(|&i| {
            (
                -i64::from(self.slice_jobs[i].priority),
                self.slice_jobs[i].id,
            )
        });
        let empty = BTreeSet::new();
        let mut starts = Vec::new();
        let whole_held = self.whole_by_queue();
        let mut slice_held = self.slice_milli_by_queue();
        // One snapshot per pass; a node is refreshed only when a job lands on it.
        let mut nodes: Vec<(String, NodeSlices, BTreeSet<u32>)> = self
            .nodes
            .iter()
            .filter_map(|n| {
                let b = self.book.get(&n.name)?.clone();
                let w = whole_used.get(&n.name).unwrap_or(&empty).clone();
                Some((n.name.clone(), b, w))
            })
            .collect();
        for i in waiting {
            let job = &self.slice_jobs[i];
            let Some((k, at)) = live_slices::place(job, &nodes, share_target, self.share_strategy)
            else {
                continue;
            };
            let (id, node, queue) = (job.id, nodes[k].0.clone(), job.queue);
            // A capped queue takes the slice only if its GPUs, slices rounded up, fit.
            if let Some(&cap) = self.queue_caps.get(&queue) {
                let whole = whole_held.get(&queue).copied().unwrap_or(0) * 1000;
                let slices = slice_held.get(&queue).copied().unwrap_or(0) + u64::from(at.milli);
                if (whole + slices).div_ceil(1000) > u64::from(cap) {
                    continue;
                }
            }
            if self.occupy_slice(&node, i, &at) {
                *slice_held.entry(queue).or_insert(0) += u64::from(at.milli);
                if let Some(b) = self.book.get(&node) {
                    nodes[k].1 = b.clone();
                }
                self.slice_jobs[i].at = Some((node.clone(), at.clone()));
                starts.push(Start {
                    job: id,
                    node,
                    slice: Some(at),
                });
            }
        }
        starts
    }

    /// Per-user GPU caps by queue, from the queue file.
    pub fn set_user_caps(&mut self, caps: BTreeMap<QueueId, u32>) {
        self.user_caps = caps;
    }

    /// Waiting whole-GPU jobs that must not start in this pass: in the order of the last
    /// pass, a user's jobs in a capped queue are let in while what they would hold
    /// together with what the user's running jobs (and placed slices, rounded up) hold
    /// stays within the cap. Conservative: a let-in job that does not fit keeps a later
    /// smaller one of the same user out until the next pass.
    fn over_user_caps(&self) -> BTreeSet<u64> {
        let mut held: BTreeMap<(QueueId, UserId), u64> = BTreeMap::new();
        for j in self.jobs.iter().filter(|j| j.running) {
            *held.entry((j.spec.queue, j.spec.user)).or_default() += u64::from(j.spec.gpus) * 1000;
        }
        for j in &self.slice_jobs {
            if let (Some((_, at)), Some(&user)) = (&j.at, self.users.get(&j.user)) {
                *held.entry((j.queue, user)).or_default() += u64::from(at.milli);
            }
        }
        let mut waiting: Vec<&SchedJob> = self.jobs.iter().filter(|j| !j.running).collect();
        waiting.sort_by_key(|j| (j.rank, j.spec.id));
        let mut out = BTreeSet::new();
        for j in waiting {
            let Some(&cap) = self.user_caps.get(&j.spec.queue) else {
                continue;
            };
            let h = held.entry((j.spec.queue, j.spec.user)).or_default();
            let after = h.div_ceil(1000) + u64::from(j.spec.gpus);
            if after > u64::from(cap) {
                out.insert(j.spec.id.0);
            } else {
                *h += u64::from(j.spec.gpus) * 1000;
            }
        }
        out
    }

    /// Queue caps and fair-share weights (by queue) from the queue file.
    pub fn set_queues(&mut self, limits: BTreeMap<QueueId, u32>, weights: BTreeMap<u32, f64>) {
        self.scheduler.set_queue_limits(limits.clone());
        self.queue_caps = limits;
        let policy = self.scheduler.policy_mut();
        policy.tenant = gpusched_core::policy::Tenant::Queue;
        policy.weights = weights;
    }

    /// Estimated starts (Unix ms) of waiting jobs; see `gpusched_core::plan`.
    pub fn estimate_starts(&self, now: f64) -> BTreeMap<u64, u64> {
        self.scheduler
            .estimate_starts(&self.jobs, now)
            .into_iter()
            .map(|(id, t)| (id.0, (t * 1000.0).round() as u64))
            .collect()
    }

    /// Why a waiting whole-GPU (or GPU-less) job waits on a node's CPUs, memory or
    /// generic resources rather than on GPUs, with the node's name; see
    /// [`Scheduler::room_wait`].
    pub fn room_wait(&self, id: u64) -> Option<(String, gpusched_core::room::RoomWait)> {
        let job = &self.jobs[self.find(id)?];
        let wait = self.scheduler.room_wait(&job.spec)?;
        let name = self.nodes.get(wait.node.index())?.name.clone();
        Some((name, wait))
    }

    /// What an online node has free of CPUs, memory and generic resources.
    pub fn room(&self, node: &str) -> Option<&gpusched_core::room::NodeRoom> {
        let n = self.node_index(node)?;
        self.scheduler.room()?.free(NodeId(n as u32))
    }

    /// Waiting jobs in the order of the last pass (the policy's order).
    pub fn waiting_order(&self) -> Vec<u64> {
        let mut w: Vec<&SchedJob> = self.jobs.iter().filter(|j| !j.running).collect();
        w.sort_by_key(|j| (j.rank, j.spec.id));
        w.into_iter().map(|j| j.spec.id.0).collect()
    }

    pub fn waiting(&self) -> usize {
        self.jobs.iter().filter(|j| !j.running).count()
            + self.slice_jobs.iter().filter(|j| j.at.is_none()).count()
    }
}
