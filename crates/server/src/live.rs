//! The bridge from the server's jobs and nodes to the shared scheduling core: the same
//! `SchedJob::account(now)` + `Scheduler::pass(jobs, now)` the simulator drives, with
//! `now` read from the wall clock by the caller.
//!
//! Each online node is its own "switch" in the core's cluster model: live jobs run on
//! one node, and nodes may differ in GPU count and model.

use std::collections::BTreeMap;

use gpusched_core::schedule::PreemptMode;
use gpusched_core::{
    Cluster, Decision, Gpu, GpuIndex, JobId, JobSpec, Node, NodeId, Placement, PlacementStrategy,
    PolicyConfig, QueueId, SchedJob, Scheduler, Seconds, SwitchId, UserId,
};

/// One online node as the core should see it.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveNode {
    pub name: String,
    pub gpus: u32,
    pub model: String,
    pub cpus: u32,
    pub mem_mib: u64,
}

/// A start decided by a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Start {
    pub job: u64,
    pub node: String,
}

/// The jobs that can still run (pending, starting or running), in admission order, and
/// the core scheduler over the online nodes.
pub struct LiveQueue {
    scheduler: Scheduler,
    jobs: Vec<SchedJob>,
    nodes: Vec<LiveNode>,
    users: BTreeMap<String, UserId>,
}

impl LiveQueue {
    pub fn new(policy: PolicyConfig) -> Self {
        let empty = Cluster {
            nodes: Vec::new(),
            switches: 0,
        };
        LiveQueue {
            scheduler: Scheduler::new(
                &empty,
                policy,
                PlacementStrategy::BestFit,
                PreemptMode::InPlace,
            ),
            jobs: Vec::new(),
            nodes: Vec::new(),
            users: BTreeMap::new(),
        }
    }

    /// Adds a job at the back of the queue (the core's order); the list stays sorted by
    /// id, which keeps lookups a binary search.
    pub fn add(&mut self, v: &gpusched_wire::JobView, queue: QueueId) {
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
    pub fn mark_running(&mut self, id: u64, node: &str, now: Seconds) -> bool {
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
        if let Some(i) = self.find(id) {
            let mut job = self.jobs.remove(i);
            self.scheduler.finish(&mut job);
        }
    }

    /// Puts a job whose run was lost back in the queue, its GPUs freed.
    pub fn requeue(&mut self, id: u64, now: Seconds) {
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
                    gpus: (0..n.gpus)
                        .map(|g| Gpu {
                            index: GpuIndex(g),
                            model: n.model.clone(),
                            mem_mib: 0,
                            mig_enabled: false,
                        })
                        .collect(),
                    cpu_milli: u64::from(n.cpus) * 1000,
                    mem_mib: n.mem_mib,
                    generic: BTreeMap::new(),
                })
                .collect(),
        };
        let old = std::mem::replace(&mut self.nodes, nodes);
        self.scheduler.set_cluster(&cluster);
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
                Some(p) if self.scheduler.occupy(&p) => job.placement = Some(p),
                _ => {
                    job.running = false;
                    orphans.push(job.spec.id.0);
                }
            }
        }
        orphans
    }

    /// One pass of the core at `now`: the jobs it starts, each with its node.
    pub fn pass(&mut self, now: Seconds) -> Vec<Start> {
        if self.nodes.is_empty() {
            return Vec::new();
        }
        // Only running jobs change while time passes; waiting ones are accounted by the
        // core when they start (the same rule the simulator follows).
        for job in self.jobs.iter_mut().filter(|j| j.running) {
            job.account(now);
        }
        let out = self.scheduler.pass(&mut self.jobs, now);
        out.decisions
            .into_iter()
            .filter_map(|d| match d {
                Decision::Start { job, placement, .. } => Some(Start {
                    job: job.0,
                    node: self.nodes[placement.parts[0].0.index()].name.clone(),
                }),
                // Only non-preemptive policies run live for now (checked at start-up).
                Decision::Preempt { .. } => None,
            })
            .collect()
    }

    /// Queue caps and fair-share weights (by queue) from the queue file.
    pub fn set_queues(&mut self, limits: BTreeMap<QueueId, u32>, weights: BTreeMap<u32, f64>) {
        self.scheduler.set_queue_limits(limits);
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

    /// Waiting jobs in the order of the last pass (the policy's order).
    pub fn waiting_order(&self) -> Vec<u64> {
        let mut w: Vec<&SchedJob> = self.jobs.iter().filter(|j| !j.running).collect();
        w.sort_by_key(|j| (j.rank, j.spec.id));
        w.into_iter().map(|j| j.spec.id.0).collect()
    }

    pub fn waiting(&self) -> usize {
        self.jobs.iter().filter(|j| !j.running).count()
    }
}
