//! The live cluster: online nodes, the jobs that can still run, who holds which GPU, and
//! the pass that decides starts (the same `Scheduler::pass` the simulator drives, with
//! `now` handed in by the server).
//!
//! Each online node is its own "switch" in the whole-GPU scheduler's model: live jobs
//! run on one node, and nodes may differ in GPU count and model. The scheduler counts
//! free GPUs per node; the [`Book`] says which: every start picks its GPU indices here,
//! from the book, in the same step that the scheduler's count moves, so the two cannot
//! disagree and the server keeps no record of its own.
//!
//! Waiting replicas of inference services go first in each pass (slices, then whole
//! GPUs: `serving.rs`). Then jobs on part of a GPU (shares, MIG instances) are placed,
//! in the policy's order, before whole GPUs; a GPU in MIG mode is never in the
//! whole-GPU scheduler's cluster, and a GPU holding shares is occupied there while it
//! does.

use std::collections::{BTreeMap, BTreeSet};

use super::book::{Book, NodeSlices};
use super::caps;
use super::job_list::JobList;
use super::node::LiveNode;
use super::place::{self, SliceJob};
use super::slice::{SliceAsk, SliceAt};
use crate::freemap::Location;
use crate::gang::Gang;
use crate::policy::order;
use crate::room::{NodeRoom, RoomWait};
use crate::schedule::PreemptMode;
use crate::sharing::SharePod;
use crate::sharing::ShareStrategy;
use crate::{
    Cluster, Decision, Gpu, GpuIndex, JobId, JobSpec, Node, NodeId, Placement, PlacementStrategy,
    PolicyConfig, QueueId, SchedJob, Scheduler, Seconds, SwitchId, UserId,
};

/// A job as the live cluster needs to know it.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveJob {
    pub id: u64,
    pub user: String,
    pub queue: QueueId,
    pub priority: i32,
    /// Submission time, seconds.
    pub submit: Seconds,
    /// The user's walltime, seconds (the estimate backfill and plans use).
    pub walltime: Option<Seconds>,
    /// Whole GPUs (ignored for a slice job).
    pub gpus: u32,
    /// A model prefix, or any.
    pub model: Option<String>,
    pub cpu_milli: u64,
    pub mem_mib: u64,
    /// Generic counted resources it holds on its node while it runs (`fpga` -> 1).
    pub resources: BTreeMap<String, u64>,
    /// `Some` for a job on part of a GPU.
    pub slice: Option<SliceAsk>,
    /// `Some` for a job of several nodes (`gpus` is then its total); `None` for a job
    /// on one node.
    pub gang: Option<Gang>,
    /// `Some` for a job of a group (a task of an array with a `%K` limit): at most so
    /// many of the group hold GPUs at once, and it follows only jobs of its group (see
    /// `group.rs`).
    pub group: Option<super::group::JobGroup>,
    /// A replica of an inference service: in the serving tier, above all training. It
    /// is never a victim of any preemption, and a waiting one may take a node from
    /// running training jobs (`serving.rs`).
    pub serving: bool,
    /// Where it may run (partitions, constraint, node lists: `crate::eligible`); `None`:
    /// any node.
    pub rules: Option<std::sync::Arc<crate::eligible::NodeRules>>,
    /// GPU models it runs fastest on, fastest first ([`JobSpec::prefer`]).
    pub prefer: Vec<String>,
    /// When it must be finished, seconds on the core's clock ([`JobSpec::deadline`]).
    pub deadline: Option<Seconds>,
    /// `Some` for an elastic job (`--gpus MIN-MAX`, `elastic.rs`): `gpus` is then its
    /// minimum, and it runs on one node.
    pub elastic: Option<crate::elastic::Elastic>,
}

impl LiveJob {
    /// Marks the job as one that runs in a container image (`submit --image`): it goes
    /// only to nodes whose agent runs images ([`super::node::IMAGE_RUNTIME`]).
    pub fn set_in_image(&mut self, yes: bool) {
        if yes {
            self.resources
                .insert(super::node::IMAGE_RUNTIME.to_string(), 1);
        } else {
            self.resources.remove(super::node::IMAGE_RUNTIME);
        }
    }

    /// Whether it runs in a container image.
    pub fn in_image(&self) -> bool {
        self.resources.contains_key(super::node::IMAGE_RUNTIME)
    }
}

/// Where a job starts: every node it uses, with the GPU indices (or the slice) there.
/// A gang's parts are in rank order (part 0 is the master); other jobs have one part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LivePlacement {
    pub job: u64,
    pub parts: Vec<NodePart>,
}

/// One node of a placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePart {
    pub node: String,
    /// The whole GPUs (by index) it holds there; for a slice job, the slice's GPU.
    pub gpus: Vec<u32>,
    pub slice: Option<SliceAt>,
}

impl LivePlacement {
    fn one(job: u64, node: &str, gpus: Vec<u32>, slice: Option<SliceAt>) -> Self {
        LivePlacement {
            job,
            parts: vec![NodePart {
                node: node.to_string(),
                gpus,
                slice,
            }],
        }
    }
}

/// The jobs that can still run (pending, starting or running), in admission order, the
/// online nodes, who holds what on them, and the core scheduler over them.
pub struct LiveCluster {
    pub(super) scheduler: Scheduler,
    pub(super) jobs: JobList,
    pub(super) nodes: Vec<LiveNode>,
    pub(super) users: BTreeMap<String, UserId>,
    /// Jobs on part of a GPU, by id.
    pub(super) slice_jobs: Vec<SliceJob>,
    /// Each online node's GPUs and who holds them.
    pub(super) book: Book,
    share_strategy: ShareStrategy,
    /// Each capped queue's cap, before its slices are taken off it for a pass.
    pub(super) queue_caps: BTreeMap<QueueId, u32>,
    /// GPUs one user's jobs may hold in a queue (`max_gpus_per_user`).
    pub(super) user_caps: BTreeMap<QueueId, u32>,
    /// Jobs that reclaimed quota → the nodes where they go first, one per part (see
    /// `claims.rs`).
    pub(super) claims: BTreeMap<u64, Vec<String>>,
    /// Parts of gangs whose node left while other parts stayed (job, node), since the
    /// last [`LiveCluster::take_lost_parts`]: the gang keeps the GPUs of the parts that
    /// stayed until they have stopped, so nothing else starts on GPUs whose process may
    /// still be in its grace.
    lost_parts: Vec<(u64, String)>,
    /// Each node's GPUs' latest load (utilisation, temperature), the tie-break of
    /// [`super::gpus::pick`]; kept apart from the nodes so a sample never rebuilds them.
    loads: BTreeMap<String, super::gpus::Loads>,
    /// Victims of the passes since [`LiveCluster::take_preemptions`] (`preempt.rs`).
    pub(super) preempts: Vec<u64>,
    /// Jobs whose estimate is a prediction, not a walltime (`preempt.rs`).
    pub(super) predicted: BTreeSet<u64>,
    /// Whole-GPU jobs with node rules → the rules, read again against the nodes each
    /// time they change (`JobSpec::nodes`).
    pub(super) rules: BTreeMap<u64, std::sync::Arc<crate::eligible::NodeRules>>,
    /// Whole-GPU jobs' walltimes (a limit, unlike an estimate): what reservations'
    /// windows read (`windows.rs`).
    pub(super) walltimes: BTreeMap<u64, Seconds>,
    /// Advance reservations' windows, the `now` they were last applied at, and whether
    /// they changed since.
    pub(super) windows: Vec<super::windows::Window>,
    pub(super) windows_now: Seconds,
    pub(super) windows_dirty: bool,
    /// Jobs of reservations whose windows are open (they go first, `goes_first`).
    pub(super) members_open: BTreeSet<u64>,
    /// Short jobs queued behind running ones (`follow.rs`).
    pub(super) followers: super::follow::Followers,
    /// The group of each job in one (`group.rs`).
    pub(super) groups: BTreeMap<u64, super::group::JobGroup>,
    /// What the server told of each placed job's run (`runs.rs`).
    pub(super) runs: BTreeMap<u64, super::runs::RunFacts>,
    /// The queues' reclaim and tier rules, in the order a round tries them (`round.rs`).
    pub(super) queue_rules: Vec<super::round::QueueRules>,
    /// How long a run is protected from preemption after it starts.
    pub(super) min_runtime_ms: u64,
    /// Replicas of inference services, whole or slices (`serving.rs`).
    pub(super) serving: BTreeSet<u64>,
    /// The power budgets, each node's GPU figures, the nodes down (`power.rs`).
    pub(super) power: super::power::PowerSetup,
    /// Jobs the last pass held back for the cluster power budget, with its figures.
    pub(super) power_held: BTreeMap<u64, crate::power::OverBudget>,
    /// What an elastic job's resize costs, seconds (`--resize-cost`; `elastic.rs`).
    pub(super) resize_cost: Seconds,
}

/// What leaving the cluster did to the jobs queued behind the job that left.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Left {
    /// Its first follower, which took its GPUs (the caller starts it there).
    pub next: Option<LivePlacement>,
    /// Followers sent back to the waiting queue, in their order.
    pub back: Vec<u64>,
}

impl LiveCluster {
    pub fn new(policy: PolicyConfig, share_strategy: ShareStrategy) -> Self {
        let empty = Cluster {
            nodes: Vec::new(),
            switches: 0,
        };
        let mut scheduler = Scheduler::new(
            &empty,
            policy,
            PlacementStrategy::BestFit,
            PreemptMode::Deferred,
        );
        // Running jobs hold the CPUs, memory and generic resources they ask for on their
        // node (the simulator leaves this off). Preemptive policies ask their victims
        // to stop and keep them placed until they have (`schedule/deferred.rs`).
        scheduler.reserve_node_resources();
        LiveCluster {
            scheduler,
            jobs: JobList::new(),
            nodes: Vec::new(),
            users: BTreeMap::new(),
            slice_jobs: Vec::new(),
            book: Book::new(),
            share_strategy,
            queue_caps: BTreeMap::new(),
            user_caps: BTreeMap::new(),
            claims: BTreeMap::new(),
            lost_parts: Vec::new(),
            loads: BTreeMap::new(),
            preempts: Vec::new(),
            predicted: BTreeSet::new(),
            rules: BTreeMap::new(),
            walltimes: BTreeMap::new(),
            windows: Vec::new(),
            windows_now: 0.0,
            windows_dirty: false,
            members_open: BTreeSet::new(),
            followers: Default::default(),
            groups: BTreeMap::new(),
            runs: Default::default(),
            queue_rules: Vec::new(),
            min_runtime_ms: 0,
            resize_cost: 60.0,
            serving: BTreeSet::new(),
            power: Default::default(),
            power_held: BTreeMap::new(),
        }
    }

    /// The parts of running gangs that [`LiveCluster::set_nodes`] dropped because their
    /// node left (job, node name) while the gang's other parts kept their GPUs; the list
    /// clears. The caller ends those parts as lost and stops the rest; the job's GPUs are
    /// freed when it ends or is requeued.
    pub fn take_lost_parts(&mut self) -> Vec<(u64, String)> {
        std::mem::take(&mut self.lost_parts)
    }

    pub fn policy(&self) -> &PolicyConfig {
        self.scheduler.policy()
    }

    /// `rr`'s turn from the next pass on (the server raises it above what the
    /// checkpoints it measured cost).
    pub fn set_rr_quantum(&mut self, quantum: crate::Seconds) {
        self.scheduler.policy_mut().rr_quantum = quantum;
    }

    /// A node's GPUs and who holds them (whole, shares, MIG instances), for the core's
    /// tests: other crates ask `occupancy.rs` and read none of the book's fields.
    #[cfg(test)]
    pub(crate) fn slices(&self, node: &str) -> Option<&NodeSlices> {
        self.book.get(node)
    }

    /// Free whole GPUs per node as the scheduler counts them (nodes in the order last
    /// set), with where each sits: what gang placement reads.
    pub fn free_map(&self) -> &crate::freemap::FreeMap {
        self.scheduler.free_map()
    }

    /// The online nodes, as last set.
    pub fn nodes(&self) -> &[LiveNode] {
        &self.nodes
    }

    /// A node's GPUs' latest load, from its agent's samples: among GPU sets that are
    /// linked alike, starts prefer the coolest, least loaded ones ([`super::gpus`]).
    pub fn set_gpu_loads(&mut self, node: &str, loads: super::gpus::Loads) {
        if loads.is_empty() {
            self.loads.remove(node);
        } else {
            self.loads.insert(node.to_string(), loads);
        }
    }

    /// Records the UUID an agent reported for a job's MIG instance.
    pub fn set_mig_uuid(&mut self, node: &str, job: u64, uuid: &str) {
        if let Some(n) = self.book.get_mut(node) {
            n.set_mig_uuid(job, uuid);
        }
    }

    pub(super) fn find_slice(&self, id: u64) -> Option<usize> {
        self.slice_jobs.binary_search_by_key(&id, |j| j.id).ok()
    }

    pub(super) fn find(&self, id: u64) -> Option<usize> {
        self.jobs.binary_search_by_key(&id, |j| j.spec.id.0).ok()
    }

    pub(super) fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    fn one_node(&self, node: &str, k: u32) -> Option<Placement> {
        let n = self.node_index(node)?;
        Some(Placement {
            parts: vec![(NodeId(n as u32), k)],
        })
    }

    /// Puts a slice job on its node's book; opening a GPU for shares takes it from the
    /// whole-GPU scheduler. False, and nothing changes, if it does not fit.
    fn occupy_slice(&mut self, node: &str, i: usize, at: &SliceAt) -> bool {
        let (id, user) = (self.slice_jobs[i].id, self.slice_jobs[i].user.clone());
        let Some(p) = self.one_node(node, 1) else {
            return false;
        };
        let Some(book) = self.book.get_mut(node) else {
            return false;
        };
        let mut trial = book.clone();
        match trial.apply(id, &user, at) {
            Some(true) => {
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
        if let (true, Some(p)) = (closed, self.one_node(&node, 1)) {
            self.scheduler.release(&p);
        }
    }

    /// Takes a whole-GPU job's indices off its node's book.
    fn release_whole(&mut self, i: usize) {
        let id = self.jobs[i].spec.id.0;
        if let Some(p) = &self.jobs[i].placement {
            for &(n, _) in &p.parts {
                if let Some(b) = self
                    .nodes
                    .get(n.index())
                    .and_then(|x| self.book.get_mut(&x.name))
                {
                    b.release(id);
                }
            }
        }
    }

    /// Reads every job's node rules (and the reservations' windows) again against the
    /// nodes (they changed).
    fn refresh_masks(&mut self) {
        if self.rules.is_empty() && self.windows.is_empty() {
            return;
        }
        self.recompute_masks();
    }

    /// Adds a job at the back of the queue (the core's order); the lists stay sorted by
    /// id, which keeps lookups a binary search.
    pub fn add(&mut self, v: &LiveJob) {
        if v.serving {
            self.serving.insert(v.id);
        }
        if let Some(ask) = &v.slice {
            let job = SliceJob {
                id: v.id,
                user: v.user.clone(),
                queue: v.queue,
                priority: v.priority,
                submit: v.submit,
                estimate: v.walltime,
                model: v.model.clone(),
                ask: ask.clone(),
                image: v.in_image(),
                at: None,
                rules: v.rules.clone().filter(|r| !r.is_empty()),
            };
            let at = self.slice_jobs.partition_point(|j| j.id < v.id);
            self.slice_jobs.insert(at, job);
            return;
        }
        let next = self.users.len() as u32;
        let user = *self.users.entry(v.user.clone()).or_insert(UserId(next));
        let mut job = SchedJob::new(JobSpec {
            id: JobId(v.id),
            gpus: v.gpus,
            gpu_model: v.model.clone(),
            user,
            queue: v.queue,
            account: Default::default(),
            priority: v.priority,
            submit: v.submit,
            estimate: v.walltime,
            cpu_milli: v.cpu_milli,
            mem_mib: v.mem_mib,
            generic: v.resources.clone(),
            gang: v.gang.clone(),
            nodes: Vec::new(),
            prefer: v.prefer.clone(),
            deadline: v.deadline,
        });
        job.elastic = v.elastic.filter(|_| v.gang.is_none());
        if let Some(w) = v.walltime {
            self.walltimes.insert(v.id, w);
        }
        if let Some(rules) = v.rules.clone().filter(|r| !r.is_empty()) {
            self.rules.insert(v.id, rules);
            job.spec.nodes = self.job_nodes(v.id, &mut Default::default());
        } else if !self.windows.is_empty() {
            job.spec.nodes = self.job_nodes(v.id, &mut Default::default());
        }
        self.scheduler.enqueue(&mut job);
        // Usually the newest id; a job released from a dependency is older.
        self.jobs.insert(job);
        if let Some(group) = v.group {
            self.groups.insert(v.id, group);
        }
    }

    /// Marks a job recovered from the store as already running on `node`, on the GPU
    /// indices (or slice) it was given. False, and nothing changes, when the node is not
    /// online or those GPUs are not free.
    pub fn restore(
        &mut self,
        id: u64,
        node: &str,
        gpus: &[u32],
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
        let part = NodePart {
            node: node.to_string(),
            gpus: gpus.to_vec(),
            slice: None,
        };
        self.restore_parts(id, std::slice::from_ref(&part), now)
    }

    /// Marks a whole-GPU job (a gang: every part, in rank order) recovered from the store
    /// as running on the nodes and GPU indices of `parts`. All or nothing: false, and
    /// nothing changes, when a node is not online, named twice, or its GPUs are not
    /// free, or the parts do not add up to the job's GPUs.
    pub fn restore_parts(&mut self, id: u64, parts: &[NodePart], now: Seconds) -> bool {
        let Some(i) = self.find(id) else {
            return false;
        };
        let total: usize = parts.iter().map(|p| p.gpus.len()).sum();
        let distinct: BTreeSet<&str> = parts.iter().map(|p| p.node.as_str()).collect();
        // An elastic job may hold any size of its range (it grew at its start).
        let want = match self.jobs[i].elastic {
            Some(e) if (e.min as usize..=e.max as usize).contains(&total) => total,
            _ => self.jobs[i].spec.gpus as usize,
        };
        if parts.is_empty()
            || total != want
            || distinct.len() != parts.len()
            || (self.jobs[i].spec.gang.is_none() && parts.len() != 1)
        {
            return false;
        }
        let mut trials = Vec::with_capacity(parts.len());
        let mut placement = Placement::default();
        for p in parts {
            let (Some(n), Some(book)) = (self.node_index(&p.node), self.book.get(&p.node)) else {
                return false;
            };
            let mut trial = book.clone();
            if !trial.take_whole(id, &p.gpus) {
                return false;
            }
            trials.push((p.node.clone(), trial));
            placement
                .parts
                .push((NodeId(n as u32), p.gpus.len() as u32));
        }
        let min = self.jobs[i].spec.gpus;
        self.jobs[i].spec.gpus = want as u32;
        if !self.scheduler.start_at(&mut self.jobs[i], placement, now) {
            self.jobs[i].spec.gpus = min;
            return false;
        }
        for (node, trial) in trials {
            self.book.insert(node, trial);
        }
        true
    }

    /// Starts a waiting whole-GPU job on `node` outside a pass (a job that reclaimed its
    /// queue's quota goes first there): its GPU indices, or `None` when the node lacks
    /// the free GPUs.
    pub fn start_on(&mut self, id: u64, node: &str, now: Seconds) -> Option<LivePlacement> {
        self.start_on_nodes(id, &[node.to_string()], now)
    }

    /// `k` free whole GPUs of `node` for a start, or `None` when it lacks them.
    /// The best-linked ones ([`super::gpus::pick`]).
    pub(super) fn pick_free(&self, node: &str, k: u32) -> Option<Vec<u32>> {
        let free: Vec<u32> = self.book.get(node)?.whole_free().collect();
        let topo = &self.nodes.iter().find(|n| n.name == node)?.topology;
        let none = super::gpus::Loads::new();
        let loads = self.loads.get(node).unwrap_or(&none);
        super::gpus::pick(&free, k as usize, topo, loads)
    }

    /// Keeps `k` free GPUs of `node` out of the next pass (for a job that reclaimed
    /// them); returns the hold to lift with [`LiveCluster::unhold`].
    pub fn hold(&mut self, node: &str, k: u32) -> Option<Placement> {
        let p = self.one_node(node, k)?;
        self.scheduler.occupy(&p).then_some(p)
    }

    pub fn unhold(&mut self, hold: &Placement) {
        self.scheduler.release(hold);
    }

    /// Takes a job out for good (it ended or was cancelled), freeing its GPUs or handing
    /// them to the first job queued behind it (`follow.rs`), which the caller then starts
    /// there. A follower that leaves is unlinked: the one behind it moves up.
    pub fn remove(&mut self, id: u64, now: Seconds) -> Left {
        let mut left = Left::default();
        self.forget_run(id);
        self.serving.remove(&id);
        if let Some(i) = self.find_slice(id) {
            self.release_slice(i);
            self.slice_jobs.remove(i);
            return left;
        }
        if let Some(i) = self.find(id) {
            // A running job of one node may hand its GPUs over.
            let held = self.jobs[i]
                .placement
                .clone()
                .filter(|p| self.jobs[i].running && p.parts.len() == 1)
                .and_then(|p| {
                    let name = self.nodes.get(p.parts[0].0.index())?.name.clone();
                    let gpus = self.book.get(&name)?.whole_of(id);
                    Some((p, name, gpus))
                });
            self.release_whole(i);
            let mut job = self.jobs.remove(i);
            // Charged up to now under `fairtree` (nothing else reads it: the job is gone).
            job.account(now);
            self.scheduler.finish(&mut job);
            self.predicted.remove(&id);
            self.groups.remove(&id);
            self.rules.remove(&id);
            self.walltimes.remove(&id);
            let handed = held.and_then(|(p, name, gpus)| self.hand_over(id, &name, &gpus, p, now));
            match handed {
                Some(Ok(next)) => left.next = Some(next),
                Some(Err(back)) => left.back = back,
                None => left.back = self.drop_follows(id, now),
            }
        } else if self.is_follower(id) {
            self.drop_follows(id, now);
            self.predicted.remove(&id);
            self.groups.remove(&id);
            self.rules.remove(&id);
            self.walltimes.remove(&id);
        }
        left
    }

    /// Puts a job whose run was lost (or preempted, or stopped) back in the queue, its
    /// GPUs freed; the jobs queued behind it go back too, in their order, and are
    /// returned.
    pub fn requeue(&mut self, id: u64, now: Seconds) -> Vec<u64> {
        self.forget_run(id);
        if let Some(i) = self.find_slice(id) {
            self.release_slice(i);
            return Vec::new();
        }
        if let Some(i) = self.find(id) {
            self.release_whole(i);
            let job = &mut self.jobs[i];
            job.account(now);
            self.scheduler.finish(job);
            // An elastic job waits for its minimum again (`elastic.rs`).
            if let Some(e) = job.elastic {
                job.spec.gpus = e.min;
            }
            return self.drop_follows(id, now);
        }
        Vec::new()
    }

    /// Replaces the set of online nodes. Running jobs keep their GPUs (the same
    /// indices); a running job whose node is gone (or lost one of its GPUs) is returned
    /// so the caller can mark it lost. A gang that loses some of its nodes is not: it
    /// keeps the GPUs of its other parts, and the parts it lost are listed by
    /// [`LiveCluster::take_lost_parts`]; one that loses every node is returned.
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
        let locations = locations(&nodes);
        let old = std::mem::replace(&mut self.nodes, nodes);
        self.scheduler.set_cluster(&cluster);
        self.scheduler.set_locations(locations);
        let drained: Vec<NodeId> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].closed())
            .map(|i| NodeId(i as u32))
            .collect();
        self.scheduler.close_nodes(&drained);
        self.refresh_masks();
        let old_book = std::mem::replace(
            &mut self.book,
            self.nodes
                .iter()
                .map(|n| (n.name.clone(), NodeSlices::from_node(n)))
                .collect(),
        );
        let mut orphans = Vec::new();
        for i in 0..self.jobs.len() {
            let Some(p) = self.jobs[i].placement.take() else {
                continue;
            };
            let id = self.jobs[i].spec.id.0;
            // Every part keeps its node and the indices it held there, or the job is
            // orphaned; a gang with some parts left keeps those (see `lost_parts`).
            let kept = self.keep_parts(id, i, &p, &old, &old_book);
            match kept {
                Some(p) => self.jobs[i].placement = Some(p),
                None => {
                    self.jobs[i].running = false;
                    orphans.push(id);
                }
            }
        }
        // Slice jobs go back on the rebuilt book (their node's layout as registered).
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

    /// A running job's placement on the rebuilt cluster: every part on the same node (by
    /// name) with the same indices, taken on the book and the scheduler together; `None`,
    /// and nothing taken, when any part cannot be.
    fn keep_parts(
        &mut self,
        id: u64,
        i: usize,
        p: &Placement,
        old: &[LiveNode],
        old_book: &Book,
    ) -> Option<Placement> {
        let mut trials = Vec::with_capacity(p.parts.len());
        let mut placement = Placement::default();
        let mut dropped = Vec::new();
        let gang = p.parts.len() > 1;
        for &(n, k) in &p.parts {
            let name = &old.get(n.index())?.name;
            let kept = (|| {
                let gpus = old_book.get(name)?.whole_of(id);
                let at = self.node_index(name)?;
                let mut trial = self.book.get(name)?.clone();
                if gpus.len() != k as usize || !trial.take_whole(id, &gpus) {
                    return None;
                }
                Some((at, trial))
            })();
            match kept {
                Some((at, trial)) => {
                    trials.push((name.clone(), trial));
                    placement.parts.push((NodeId(at as u32), k));
                }
                // A gang's part whose node left: the others keep their GPUs until they
                // have stopped (see `lost_parts`).
                None if gang => dropped.push(name.clone()),
                None => return None,
            }
        }
        if placement.parts.is_empty() || !self.scheduler.occupy_job(&self.jobs[i].spec, &placement)
        {
            return None;
        }
        for (name, trial) in trials {
            self.book.insert(name, trial);
        }
        self.lost_parts
            .extend(dropped.into_iter().map(|node| (id, node)));
        Some(placement)
    }

    /// One pass of the core at `now`: the jobs it starts, each with its node and GPU
    /// indices (or slice). Jobs that reclaimed quota go first on their node, then the
    /// waiting serving jobs (slices, then whole GPUs, each in the policy's order), then
    /// everything else in the policy's order (slices, then whole GPUs).
    /// `share_target` is FGD's target workload for the shares that wait (the core's
    /// `sharing::demand` of the recent jobs); unused when none waits.
    pub fn pass(&mut self, now: Seconds, share_target: &[SharePod]) -> Vec<LivePlacement> {
        if self.nodes.is_empty() {
            return Vec::new();
        }
        // GPUs out of placement (unhealthy, or on a drained node) are held in the
        // whole-GPU scheduler for the pass, so its free counts are the book's.
        let mut out = self.hold_out_of_service();
        if self.power_on() {
            out.extend(self.hold_for_power());
        }
        let (mut starts, holds) = self.serve_claims(now);
        // The serving tier first (`serving.rs`); none waiting, the pass is as it was.
        let (slices_first, whole_first) = self.serving_waits();
        if slices_first {
            starts.extend(self.slice_pass(now, share_target, true));
        }
        if whole_first {
            self.account_whole(now);
            starts.extend(self.serving_whole_pass(now));
        }
        starts.extend(self.slice_pass(now, share_target, false));
        if !whole_first {
            self.account_whole(now);
        }
        starts.extend(self.whole_pass(now));
        self.enlarge_elastic_starts(&mut starts);
        for hold in holds.iter().chain(&out) {
            self.unhold(hold);
        }
        starts
    }

    /// Holds every free GPU that is out of placement (see [`NodeSlices::out_free`]) in
    /// the whole-GPU scheduler; lift the holds after the pass. They are few, and they
    /// change only when a node's health or drain does, so holding them per pass costs a
    /// walk of the nodes with anything out.
    fn hold_out_of_service(&mut self) -> Vec<Placement> {
        let out: Vec<(String, u32)> = self
            .book
            .iter()
            .filter(|(_, b)| !b.out.is_empty())
            .map(|(name, b)| (name.clone(), b.out_free()))
            .filter(|&(_, k)| k > 0)
            .collect();
        out.into_iter()
            .filter_map(|(name, k)| self.hold(&name, k))
            .collect()
    }

    /// Whether serving jobs wait: (on part of a GPU, on whole GPUs).
    /// Waiting whole-GPU jobs whose every node set is empty now (`windows.rs`,
    /// `crate::eligible`). Only jobs with rules or under windows can be such.
    fn nowhere(&self) -> BTreeSet<u64> {
        if self.rules.is_empty() && self.windows.is_empty() {
            return BTreeSet::new();
        }
        self.jobs
            .iter()
            .filter(|j| !j.running && !j.spec.nodes.is_empty())
            .filter(|j| j.spec.nodes.iter().all(crate::eligible::NodeMask::is_empty))
            .map(|j| j.spec.id.0)
            .collect()
    }

    /// Whether a whole-GPU job goes in the first pass: a replica, or a job of a
    /// reservation whose window is open (its nodes are its reservation's alone, so
    /// nothing ahead of it in the queue's order may block it there).
    fn goes_first(&self, id: u64) -> bool {
        self.serving.contains(&id) || self.members_open.contains(&id)
    }

    fn serving_waits(&self) -> (bool, bool) {
        let (mut slices, mut whole) = (false, false);
        for &id in self.serving.iter().chain(&self.members_open) {
            if let Some(i) = self.find(id) {
                whole |= !self.jobs[i].running;
            } else if let Some(i) = self.find_slice(id) {
                slices |= self.slice_jobs[i].at.is_none();
            }
        }
        (slices, whole)
    }

    /// Brings the running whole-GPU jobs to `now`, once a pass, before its first
    /// whole-GPU part. Only running jobs change while time passes; waiting ones are
    /// accounted by the core when they start (the same rule the simulator follows).
    fn account_whole(&mut self, now: Seconds) {
        for job in self.jobs.iter_mut().filter(|j| j.running) {
            job.account(now);
        }
        self.grow_predictions();
    }

    /// The whole-GPU pass sees each capped queue's cap less the GPUs its slices hold.
    fn set_whole_caps(&mut self) {
        if !self.queue_caps.is_empty() {
            let caps = caps::whole_caps(&self.queue_caps, &self.slice_milli_by_queue());
            self.scheduler.set_queue_limits(caps);
        }
    }

    /// The serving tier's whole-GPU part of a pass, before the normal one: the
    /// scheduler's pass at the same `now` over the running jobs and the waiting serving
    /// jobs only (in the policy's order among themselves, within their queue's and
    /// user's caps), the waiting training jobs set aside. It leaves no trace but its
    /// starts: the ranks (the sort's tie rule) and LAS state (`tiresias`' queues) of the
    /// jobs it saw are put back, so the normal pass orders everyone as it would have.
    /// Under a preemptive policy every running job is protected here, so it asks nobody
    /// to stop: a serving job takes GPUs from training jobs only through the round's
    /// serving step (`serving.rs`), and the policy's victims are the normal pass's.
    fn serving_whole_pass(&mut self, now: Seconds) -> Vec<LivePlacement> {
        self.set_whole_caps();
        let serving = |j: &SchedJob| self.goes_first(j.spec.id.0);
        let mut out_ids = if self.user_caps.is_empty() {
            BTreeSet::new()
        } else {
            self.over_user_caps_among(serving)
        };
        out_ids.extend(self.over_group_caps_among(serving));
        if self.power.budget.cluster_w.is_some() {
            let goes_first = |j: &SchedJob| self.goes_first(j.spec.id.0);
            let first: BTreeSet<u64> = self
                .jobs
                .iter()
                .filter(|j| goes_first(j))
                .map(|j| j.spec.id.0)
                .collect();
            out_ids.extend(self.over_power_among(|j| first.contains(&j.spec.id.0)));
        }
        let (mut kept, held): (Vec<SchedJob>, Vec<SchedJob>) =
            self.jobs.take_all().into_iter().partition(|j| {
                j.running || (self.goes_first(j.spec.id.0) && !out_ids.contains(&j.spec.id.0))
            });
        let saved: Vec<(u64, crate::policy::tiresias::LasState)> =
            kept.iter().map(|j| (j.rank, j.las.clone())).collect();
        let protected = self.scheduler.policy().preemptive().then(|| {
            let before = self.scheduler.protected().clone();
            let running = kept.iter().filter(|j| j.running).map(|j| j.spec.id);
            self.scheduler
                .set_protected(before.iter().copied().chain(running).collect());
            before
        });
        let out = self.scheduler.pass(&mut kept, now);
        if let Some(before) = protected {
            self.scheduler.set_protected(before);
        }
        for (j, (rank, las)) in kept.iter_mut().zip(saved) {
            j.rank = rank;
            j.las = las;
        }
        kept.extend(held);
        kept.sort_by_key(|j| j.spec.id.0);
        self.jobs.set_all(kept);
        self.apply_decisions(out)
    }

    /// The whole-GPU part of a pass: the scheduler's starts, with their GPU indices.
    fn whole_pass(&mut self, now: Seconds) -> Vec<LivePlacement> {
        self.set_whole_caps();
        // Jobs of users at their per-queue cap, and of groups at theirs, sit this pass
        // out (see `caps`, `group.rs`), as do jobs no node may hold now (their
        // reservation's window is closed, their partition's nodes are all gone): under
        // a strict order they would block every job behind them.
        let nowhere = self.nowhere();
        // Jobs the cluster power budget holds back sit it out too (`power.rs`).
        let over_power = self.over_power_among(|_| true);
        let out = if self.user_caps.is_empty()
            && self.groups.is_empty()
            && nowhere.is_empty()
            && over_power.is_empty()
        {
            self.scheduler.pass(&mut self.jobs, now)
        } else {
            let mut out_ids = self.over_user_caps();
            out_ids.extend(self.over_group_caps());
            out_ids.extend(nowhere);
            out_ids.extend(over_power);
            let (mut kept, held): (Vec<SchedJob>, Vec<SchedJob>) = self
                .jobs
                .take_all()
                .into_iter()
                .partition(|j| !out_ids.contains(&j.spec.id.0));
            let out = self.scheduler.pass(&mut kept, now);
            kept.extend(held);
            kept.sort_by_key(|j| j.spec.id.0);
            self.jobs.set_all(kept);
            out
        };
        self.apply_decisions(out)
    }

    /// The starts of a scheduler's pass, with their GPU indices; its victims recorded.
    fn apply_decisions(&mut self, out: crate::PassOutcome) -> Vec<LivePlacement> {
        let mut starts = Vec::new();
        for d in out.decisions {
            match d {
                Decision::Start { job, placement, .. } => {
                    if let Some(p) = self.pick_indices(job.0, &placement) {
                        starts.push(p);
                    }
                }
                // Still placed: the caller asks it to stop and requeues it once it has.
                Decision::Preempt { job, .. } => {
                    if !self.preempts.contains(&job.0) {
                        self.preempts.push(job.0);
                    }
                }
            }
        }
        starts
    }

    /// The GPU indices of a start the scheduler decided, taken on the book. The book and
    /// the scheduler's free counts move together, so this always finds them; were they
    /// ever to disagree, the start is undone and the job keeps waiting (never half
    /// started).
    fn pick_indices(&mut self, id: u64, placement: &Placement) -> Option<LivePlacement> {
        let mut parts = Vec::new();
        let mut ok = true;
        for &(n, k) in &placement.parts {
            let name = self.nodes[n.index()].name.clone();
            let picked = self.pick_free(&name, k);
            let Some(book) = self.book.get_mut(&name) else {
                ok = false;
                break;
            };
            let Some(picked) = picked.filter(|p| book.take_whole(id, p)) else {
                ok = false;
                break;
            };
            parts.push(NodePart {
                node: name,
                gpus: picked,
                slice: None,
            });
        }
        if ok {
            return Some(LivePlacement { job: id, parts });
        }
        for part in &parts {
            if let Some(b) = self.book.get_mut(&part.node) {
                b.release(id);
            }
        }
        if let Some(i) = self.find(id) {
            self.scheduler.finish(&mut self.jobs[i]);
        }
        None
    }

    /// Thousandths of a GPU the placed slice jobs of each queue hold.
    pub(super) fn slice_milli_by_queue(&self) -> BTreeMap<QueueId, u64> {
        let mut m = BTreeMap::new();
        for j in &self.slice_jobs {
            if let Some((_, at)) = &j.at {
                *m.entry(j.queue).or_insert(0) += u64::from(at.milli);
            }
        }
        m
    }

    /// Whole GPUs the running whole-GPU jobs of each queue hold.
    pub(super) fn whole_by_queue(&self) -> BTreeMap<QueueId, u64> {
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

    /// The waiting slice jobs in the policy's order (the whole-GPU jobs' keys), then id.
    fn slice_order(&self, now: Seconds) -> Vec<usize> {
        let policy = self.scheduler.policy();
        let mut waiting: Vec<((f64, f64), u64, usize)> = (0..self.slice_jobs.len())
            .filter(|&i| self.slice_jobs[i].at.is_none())
            .map(|i| {
                let j = &self.slice_jobs[i];
                let key = order::key(policy, &SchedJob::new(slice_spec(j)), now);
                (key, j.id, i)
            })
            .collect();
        waiting.sort_by(|a, b| {
            a.0 .0
                .total_cmp(&b.0 .0)
                .then(a.0 .1.total_cmp(&b.0 .1))
                .then(a.1.cmp(&b.1))
        });
        waiting.into_iter().map(|(_, _, i)| i).collect()
    }

    /// The slice part of a pass: the waiting slice jobs in the policy's order (only the
    /// serving ones with `serving_only`), each placed where it fits, none blocking.
    fn slice_pass(
        &mut self,
        now: Seconds,
        target: &[SharePod],
        serving_only: bool,
    ) -> Vec<LivePlacement> {
        let mut waiting = self.slice_order(now);
        if serving_only {
            waiting.retain(|&i| self.serving.contains(&self.slice_jobs[i].id));
        }
        if waiting.is_empty() {
            return Vec::new();
        }
        let mut starts = Vec::new();
        let whole_held = self.whole_by_queue();
        let mut slice_held = self.slice_milli_by_queue();
        // One snapshot per pass; a node is refreshed only when a job lands on it.
        // Drained nodes and unhealthy GPUs are left out of the snapshot.
        let mut nodes: Vec<(String, NodeSlices)> = self
            .nodes
            .iter()
            .filter_map(|n| Some((n.name.clone(), self.book.get(&n.name)?.placeable()?)))
            .collect();
        for i in waiting {
            let job = &self.slice_jobs[i];
            // Reservations' windows: the nodes this job may use now, when they narrow it.
            let fenced: Option<Vec<(String, NodeSlices)>> = self.window_fence(job, now).map(|ok| {
                nodes
                    .iter()
                    .filter(|(n, _)| ok.contains(n.as_str()))
                    .cloned()
                    .collect()
            });
            let view = fenced.as_deref().unwrap_or(&nodes);
            let Some((k, at)) = place::place(job, view, target, self.share_strategy) else {
                continue;
            };
            let node = view[k].0.clone();
            let Some(k) = nodes.iter().position(|(n, _)| *n == node) else {
                continue;
            };
            let (id, queue) = (job.id, job.queue);
            // A capped queue takes the slice only if its GPUs, slices rounded up, fit.
            if let Some(&cap) = self.queue_caps.get(&queue) {
                let whole = whole_held.get(&queue).copied().unwrap_or(0);
                let slices = slice_held.get(&queue).copied().unwrap_or(0);
                if !caps::slice_fits(whole, slices, u64::from(at.milli), cap) {
                    continue;
                }
            }
            if self.occupy_slice(&node, i, &at) {
                *slice_held.entry(queue).or_insert(0) += u64::from(at.milli);
                if let Some(b) = self.book.get(&node).and_then(NodeSlices::placeable) {
                    nodes[k].1 = b;
                }
                self.slice_jobs[i].at = Some((node.clone(), at.clone()));
                starts.push(LivePlacement::one(id, &node, vec![at.gpu], Some(at)));
            }
        }
        starts
    }

    /// Why a waiting whole-GPU (or GPU-less) job waits on a node's CPUs, memory or
    /// generic resources rather than on GPUs, with the node's name; see
    /// [`Scheduler::room_wait`].
    pub fn room_wait(&self, id: u64) -> Option<(String, RoomWait)> {
        let job = &self.jobs[self.find(id)?];
        let wait = self.scheduler.room_wait(&job.spec)?;
        let name = self.nodes.get(wait.node.index())?.name.clone();
        Some((name, wait))
    }

    /// What an online node has free of CPUs, memory and generic resources.
    pub fn room(&self, node: &str) -> Option<&NodeRoom> {
        let n = self.nodes.iter().position(|x| x.name == node)?;
        self.scheduler.room()?.free(NodeId(n as u32))
    }

    /// Per-user GPU caps by queue, from the queue file.
    pub fn set_user_caps(&mut self, caps: BTreeMap<QueueId, u32>) {
        self.user_caps = caps;
    }

    /// Queue caps and fair-share weights (by queue) from the queue file.
    pub fn set_queues(&mut self, limits: BTreeMap<QueueId, u32>, weights: BTreeMap<u32, f64>) {
        self.scheduler.set_queue_limits(limits.clone());
        self.queue_caps = limits;
        let policy = self.scheduler.policy_mut();
        policy.tenant = crate::policy::Tenant::Queue;
        policy.weights = weights;
    }

    /// Estimated starts (seconds) of waiting jobs; see [`crate::plan`].
    pub fn estimate_starts(&self, now: Seconds) -> BTreeMap<u64, Seconds> {
        // GPUs out of placement never come free in the replay.
        let mut out = crate::plan::OutOfService::default();
        for (i, n) in self.nodes.iter().enumerate() {
            let Some(b) = self.book.get(&n.name).filter(|b| !b.out.is_empty()) else {
                continue;
            };
            let node = NodeId(i as u32);
            out.free.push((node, b.out_free()));
            for g in &b.out {
                if let Some(job) = b.holder(*g) {
                    *out.held.entry((JobId(job), node)).or_insert(0) += 1;
                }
            }
        }
        self.scheduler
            .estimate_starts_without(&self.jobs, now, &out)
            .into_iter()
            .map(|(id, t)| (id.0, t))
            .collect()
    }

    /// Waiting whole-GPU jobs in the order of the last pass (the policy's order).
    pub fn waiting_order(&self) -> Vec<u64> {
        let mut w: Vec<&SchedJob> = self.jobs.iter().filter(|j| !j.running).collect();
        w.sort_by_key(|j| (j.rank, j.spec.id));
        w.into_iter().map(|j| j.spec.id.0).collect()
    }

    /// How many jobs wait (whole and slices).
    pub fn waiting(&self) -> usize {
        self.jobs.iter().filter(|j| !j.running).count()
            + self.slice_jobs.iter().filter(|j| j.at.is_none()).count()
    }

    /// GPUs of a node free for whole-GPU jobs now.
    pub fn whole_free(&self, node: &str) -> u32 {
        self.book
            .get(node)
            .map_or(0, |b| b.whole_free().count() as u32)
    }

    /// GPUs of a node whole-GPU jobs can ever use (not in MIG mode).
    pub fn whole_capacity(&self, node: &str) -> u32 {
        self.book.get(node).map_or(0, NodeSlices::whole_capacity)
    }

    /// GPUs of a node new whole-GPU jobs may get once free: not in MIG mode, not out of
    /// placement (none on a drained node).
    pub fn whole_usable(&self, node: &str) -> u32 {
        self.book.get(node).map_or(0, |b| {
            if b.drained {
                return 0;
            }
            b.gpus
                .iter()
                .filter(|g| g.mig.is_none() && !b.out.contains(&g.index))
                .count() as u32
        })
    }

    /// The jobs holding anything on `node`.
    pub fn jobs_on(&self, node: &str) -> BTreeSet<u64> {
        self.book
            .get(node)
            .map(NodeSlices::jobs)
            .unwrap_or_default()
    }

    /// Every job holding GPUs (starting or running), by node name, then id; a gang
    /// once, at its first node.
    pub fn placed(&self) -> Vec<u64> {
        let mut seen = BTreeSet::new();
        self.book
            .values()
            .flat_map(NodeSlices::jobs)
            .filter(|&id| seen.insert(id))
            .collect()
    }
}

/// Where each node sits, as small ids for gang placement: nodes with one switch label
/// share an id, a node without one is a switch of its own; racks likewise (none: no
/// rack).
fn locations(nodes: &[LiveNode]) -> std::sync::Arc<[Location]> {
    let mut switches: BTreeMap<&str, u32> = BTreeMap::new();
    let mut racks: BTreeMap<&str, u32> = BTreeMap::new();
    let mut next = 0u32;
    nodes
        .iter()
        .map(|n| {
            let t = &n.topology;
            let switch = match t.switch.as_deref() {
                Some(s) => *switches.entry(s).or_insert_with(|| {
                    next += 1;
                    next - 1
                }),
                None => {
                    next += 1;
                    next - 1
                }
            };
            let fresh = racks.len() as u32;
            let rack = t.rack.as_deref().map(|r| *racks.entry(r).or_insert(fresh));
            Location { switch, rack }
        })
        .collect()
}

/// The order keys of a slice job: a whole-GPU job of one GPU with its priority, submit
/// time and estimate.
fn slice_spec(j: &SliceJob) -> JobSpec {
    JobSpec {
        id: JobId(j.id),
        gpus: 1,
        gpu_model: j.model.clone(),
        user: UserId(0),
        queue: j.queue,
        account: Default::default(),
        priority: j.priority,
        submit: j.submit,
        estimate: j.estimate,
        cpu_milli: 0,
        mem_mib: 0,
        generic: Default::default(),
        gang: None,
        nodes: Vec::new(),
        prefer: Vec::new(),
        deadline: None,
    }
}
