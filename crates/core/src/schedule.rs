//! One scheduling pass: policy order plus placement, turned into decisions.
//!
//! The caller (the simulator's event loop, or the server's scheduler loop) owns the jobs
//! that can still run, calls [`SchedJob::account`] on each with the current time, then
//! [`Scheduler::pass`]. The pass updates each job's scheduling view (running or not,
//! placement, counters) and returns the [`Decision`]s the caller must carry out. When a
//! job ends, the caller calls [`Scheduler::finish`] to give its GPUs back.
//!
//! Preemptive policies decide from an idle cluster which jobs should run, in policy
//! order. With [`PreemptMode::Repack`] a job that still fits keeps running wherever the
//! greedy packing puts it (a free migration, as the Tiresias and Muri simulators
//! assume); with [`PreemptMode::InPlace`] running jobs never move: those left out are
//! preempted and new ones go where the GPUs actually are free.
//!
//! One shortcut keeps uncontended passes cheap: when every waiting job fits the GPUs that
//! are free right now, a preemptive pass starts them there and moves nobody, instead of
//! re-packing the cluster (everyone runs either way). Only a first-fit packing anomaly
//! could make a full re-pack decide differently; the Muri figures are reproduced exactly
//! with the shortcut on. Non-preemptive passes are skipped outright when no GPU is free.

use std::collections::BTreeMap;

use crate::cluster::Cluster;
use crate::freemap::FreeMap;
use crate::ids::{JobId, NodeId, QueueId};
use crate::job::JobSpec;
use crate::placement::{place_job, Placement, PlacementStrategy};
use crate::policy::backfill::total_order_key;
use crate::policy::queue::{OrderedQueue, QueueSlot, Queued};
use crate::policy::ranked::{key_bits, RankedQueue};
use crate::policy::tiresias::{self, LasState};
use crate::policy::{backfill, backfill_nodes, drf, guard, order, PolicyConfig, PolicyKind};
use crate::room::{self, Room, RoomWait};
use crate::Seconds;

/// A job that can still run, as the scheduler sees it.
#[derive(Clone, Debug)]
pub struct SchedJob {
    pub spec: JobSpec,
    pub running: bool,
    pub placement: Option<Placement>,
    /// Seconds run in total, over all its runs.
    pub attained: Seconds,
    /// Remaining run time, where the caller knows it better than `estimate - attained`
    /// (a trace simulator knows the truth).
    pub remaining: Option<Seconds>,
    /// Seconds spent waiting, over all waits.
    pub waited: Seconds,
    pub last_update: Seconds,
    pub first_start: Option<Seconds>,
    /// Tie-breaker from the previous pass: keeps equal keys in their earlier order. Not
    /// renumbered by passes when the scheduler keeps an ordered queue
    /// ([`Scheduler::keep_ordered_queue`]).
    pub rank: u64,
    /// The job's place in the scheduler's ordered queue (set by the scheduler).
    pub slot: QueueSlot,
    pub las: LasState,
    pub starts: u32,
    pub preemptions: u32,
    /// What the predictor believed of the run time at admission, for `blend`
    /// ([`crate::predict::Belief`]); `None` without a predictor or for other policies.
    pub belief: Option<std::sync::Arc<crate::predict::Belief>>,
    /// `edf`, `edf-backfill`: this pass moved it behind the jobs that can still make
    /// their deadlines ([`crate::deadline::mark_demoted`]).
    pub demoted: bool,
    /// When its current run began, or (waiting) when it last stopped running or was
    /// submitted: `rr` takes turns by it ([`crate::policy::rr`]).
    pub turn: Seconds,
    /// `Some` for an elastic job ([`crate::elastic`]): `spec.gpus` is then its minimum
    /// while it waits. While it runs the live cluster sets it to what the job holds; the
    /// simulator keeps the minimum there and the loan in `placement` only, so the pass
    /// and the policies' keys see the job as the pass placed it.
    pub elastic: Option<crate::elastic::Elastic>,
}

impl SchedJob {
    pub fn new(spec: JobSpec) -> Self {
        let spec_submit = spec.submit;
        SchedJob {
            last_update: spec.submit,
            spec,
            running: false,
            placement: None,
            attained: 0.0,
            remaining: None,
            waited: 0.0,
            first_start: None,
            rank: 0,
            slot: QueueSlot::default(),
            las: LasState::default(),
            starts: 0,
            preemptions: 0,
            belief: None,
            demoted: false,
            turn: spec_submit,
            elastic: None,
        }
    }

    /// Brings the job's counters up to `now`.
    pub fn account(&mut self, now: Seconds) {
        let dt = now - self.last_update;
        if self.running {
            // `(a + now) - last`, not `a + (now - last)`: the same float rounding as the
            // peer simulators, so results match them bit for bit.
            self.attained = self.attained + now - self.last_update;
            self.las.service = self.las.service + now - self.last_update;
        } else {
            self.waited += dt;
            if self.las.service > 0.0 {
                self.las.starved += dt;
            }
        }
        self.last_update = now;
    }

    /// Remaining time per the estimate (infinite without one).
    pub fn estimated_remaining(&self) -> Seconds {
        self.spec
            .estimate
            .map_or(f64::INFINITY, |e| (e - self.attained).max(0.0))
    }

    /// Where a running job has outlived its estimate (a prediction, or a user's guess
    /// that is not its walltime), the estimate doubles what it has run so far: it is
    /// never stopped for being wrong, and sjf, srtf and backfill then see it as having as
    /// long again to go (the doubling rule of Tiresias' and Lucid's evaluations). True if
    /// it grew.
    pub fn grow_estimate(&mut self) -> bool {
        match self.spec.estimate {
            Some(e) if self.attained >= e => {
                self.spec.estimate = Some(2.0 * self.attained.max(1.0));
                true
            }
            _ => false,
        }
    }

    /// The best knowledge of the remaining time.
    pub fn remaining_or_estimate(&self) -> Seconds {
        self.remaining.unwrap_or_else(|| self.estimated_remaining())
    }
}

/// What the caller must do after a pass.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Start (or resume) the job at `index` of the pass's job slice.
    Start {
        index: usize,
        job: JobId,
        placement: Placement,
    },
    /// Stop the job at `index` and put it back in the queue, attained service kept.
    Preempt { index: usize, job: JobId },
}

/// The result of one pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassOutcome {
    pub decisions: Vec<Decision>,
}

/// How preemptive policies treat running jobs; see the module documentation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PreemptMode {
    Repack,
    InPlace,
    /// The live cluster's: victims are asked to stop and keep their GPUs until the
    /// caller requeues them (`schedule/deferred.rs`).
    Deferred,
}

mod deferred;
mod fairtree;
mod ranked;
pub use deferred::restore_service;

/// " of model M" for a job that asks for a model, else nothing (for [`NeverFits`]).
fn model_words(spec: &JobSpec) -> String {
    spec.gpu_model
        .as_deref()
        .map(|m| format!(" of model {m}"))
        .unwrap_or_default()
}

/// A job that no node set of this cluster could ever hold.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{}", self.describe())]
pub struct NeverFits {
    pub job: JobId,
    pub gpus: u32,
    pub model: String,
    pub max: u32,
    pub placement: &'static str,
    /// With node resources reserved: the job's GPUs fit, but no node has its CPUs,
    /// memory or generic resources together with them.
    pub room: bool,
}

impl NeverFits {
    fn describe(&self) -> String {
        let (job, gpus, model, max, placement) =
            (self.job, self.gpus, &self.model, self.max, self.placement);
        if self.room {
            return format!(
                "job {job} asks for {gpus} GPUs{model} with CPUs, memory or generic resources \
                 that no node of this cluster has together; ask for less or add such a node"
            );
        }
        format!("job {job} asks for {gpus} GPUs{model} but the most this cluster can give one job under `{placement}` placement is {max}; ask for at most {max} GPUs or use a larger cluster")
    }
}

/// The scheduling core's state between passes: the policy, the placement strategy and
/// the index of free GPUs.
pub struct Scheduler {
    policy: PolicyConfig,
    placement: PlacementStrategy,
    mode: PreemptMode,
    cluster: Cluster,
    idle: FreeMap,
    work: FreeMap,
    actual: FreeMap,
    next_rank: u64,
    next_seq: u64,
    order: Vec<usize>,
    keyed: Vec<((f64, f64), u64, usize)>,
    fit_cache: BTreeMap<(u32, Option<String>), bool>,
    /// The most GPUs each limited queue may hold at once (a queue's quota plus what it
    /// may borrow). Queues without an entry are unlimited.
    queue_limits: BTreeMap<QueueId, u32>,
    /// `drf` with a usage half-life: what each tenant used before.
    history: drf::History,
    /// `fairtree`: each association's decayed usage (`schedule/fairtree.rs`).
    fair_usage: crate::policy::fairtree::usage::Usage,
    /// The waiting jobs in policy order, when the caller asked for it.
    queue: Option<OrderedQueue>,
    /// The same for `srtf`, `srsf` and `blend` (`policy/ranked.rs`).
    ranked: Option<RankedQueue>,
    next_admitted: u64,
    /// CPUs, memory and generic resources free per node, when running jobs hold them
    /// ([`Scheduler::reserve_node_resources`]; the live server turns it on).
    room: Option<Room>,
    /// `backfill` with `backfill_nodes`: the head job's reservation in this pass.
    node_reservation: Option<backfill_nodes::NodeReservation>,
    /// Running jobs a deferred pass must not preempt (`deferred.rs`).
    protected: std::collections::BTreeSet<JobId>,
}

impl Scheduler {
    pub fn new(
        cluster: &Cluster,
        policy: PolicyConfig,
        placement: PlacementStrategy,
        mode: PreemptMode,
    ) -> Self {
        let idle = FreeMap::new(cluster);
        Scheduler {
            policy,
            placement,
            mode,
            cluster: cluster.clone(),
            work: idle.clone(),
            actual: idle.clone(),
            idle,
            next_rank: 0,
            next_seq: 0,
            order: Vec::new(),
            keyed: Vec::new(),
            fit_cache: BTreeMap::new(),
            queue_limits: BTreeMap::new(),
            history: drf::History::default(),
            fair_usage: Default::default(),
            queue: None,
            ranked: None,
            next_admitted: 0,
            room: None,
            node_reservation: None,
            protected: Default::default(),
        }
    }

    /// Makes running jobs hold the CPUs, memory and generic resources they ask for on
    /// their node, so a node whose room is taken starts no job that needs it, and lets
    /// jobs ask for 0 GPUs (placed on any node with room). Jobs that ask for none of it
    /// are placed exactly as without reservation. Off by default: the simulator's
    /// traces carry CPUs for `drf`'s dominant share only, and its results must not move.
    /// Only the non-preemptive passes and the deferred (live) preemptive one reserve;
    /// returns false (and changes nothing) for another preemptive policy. Call before
    /// the first job starts.
    pub fn reserve_node_resources(&mut self) -> bool {
        if self.policy.preemptive() && self.mode != PreemptMode::Deferred {
            return false;
        }
        self.room = Some(Room::new(&self.cluster));
        true
    }

    /// Free CPUs, memory and generic resources per node, when they are reserved.
    pub fn room(&self) -> Option<&Room> {
        self.room.as_ref()
    }

    /// Why a waiting job that asks for room does not start although a node has its GPUs
    /// free: the node that lacks least, and what it lacks. `None` when room is not
    /// reserved, the job asks for none, or no node has its GPUs free (it waits on GPUs).
    pub fn room_wait(&self, spec: &JobSpec) -> Option<RoomWait> {
        let room = self.room.as_ref()?;
        if !room::asks(spec) {
            return None;
        }
        let model = spec.gpu_model.as_deref();
        let map = &self.actual;
        let mut best: Option<(usize, NodeId, Vec<room::Lack>)> = None;
        let mut nodes = 0;
        for n in (0..map.nodes()).map(|i| NodeId(i as u32)) {
            let gpus_ok = map.free(n) >= spec.gpus
                && spec.may_use(n.index())
                && (spec.gpus == 0 || map.model_matches(n.index(), model));
            // A drained node is not a node it waits for.
            if !gpus_ok || !room.open(n) {
                continue;
            }
            let lacks = room.lacks(n, spec);
            if lacks.is_empty() {
                return None; // it fits now: it waits on the policy's order
            }
            nodes += 1;
            if best.as_ref().is_none_or(|b| lacks.len() < b.0) {
                best = Some((lacks.len(), n, lacks));
            }
        }
        best.map(|(_, node, lacks)| RoomWait { node, lacks, nodes })
    }

    /// Keeps the waiting queue in policy order between passes instead of sorting it at
    /// every pass, for the non-preemptive policies whose order does not move while jobs
    /// wait (`fifo`, `priority`, `sjf`, `backfill`, `drf`; see [`crate::policy::queue`]),
    /// and for `srtf`, `srsf` and `blend` under [`PreemptMode::Repack`], whose waiting
    /// jobs' keys do not move while they wait ([`crate::policy::ranked`]). A contended
    /// pass then costs the jobs it considers (and, preemptive, the running ones), not a
    /// sort of the whole queue, and decides exactly as the sort would.
    ///
    /// The caller promises to pass the jobs in the order it enqueued them (removing some
    /// is fine), not to read `rank` (passes no longer renumber it), and to leave a waiting
    /// job's spec, attained service and remaining time as they were when it was enqueued
    /// or last stopped (the queue keeps its key, GPUs and estimated remaining time; a
    /// debug build checks them where it reads them); the job's `slot` finds it. Call
    /// before enqueuing any job. Returns whether the queue is kept.
    pub fn keep_ordered_queue(&mut self) -> bool {
        if self.next_admitted == 0 {
            self.queue = OrderedQueue::new(&self.policy);
            self.ranked = RankedQueue::new(&self.policy, self.mode);
        }
        self.queue.is_some() || self.ranked.is_some()
    }

    /// Caps the GPUs each queue may hold. Non-preemptive passes skip a waiting job whose
    /// queue is at its cap (it does not block the jobs behind it, as a Slurm job held by
    /// a QOS limit does not); preemptive passes do not apply caps yet.
    pub fn set_queue_limits(&mut self, limits: BTreeMap<QueueId, u32>) {
        self.queue_limits = limits;
    }

    /// GPUs held by the running jobs of each limited queue.
    fn queue_usage(&self, jobs: &[SchedJob]) -> BTreeMap<QueueId, u32> {
        let mut used = BTreeMap::new();
        if self.queue_limits.is_empty() {
            return used;
        }
        for j in jobs.iter().filter(|j| j.running) {
            if self.queue_limits.contains_key(&j.spec.queue) {
                *used.entry(j.spec.queue).or_insert(0) += j.spec.gpus;
            }
        }
        used
    }

    /// Whether starting `spec` keeps its queue within its cap.
    fn within_limit(&self, used: &BTreeMap<QueueId, u32>, spec: &JobSpec) -> bool {
        match self.queue_limits.get(&spec.queue) {
            Some(&cap) => used.get(&spec.queue).copied().unwrap_or(0) + spec.gpus <= cap,
            None => true,
        }
    }

    pub fn policy(&self) -> &PolicyConfig {
        &self.policy
    }

    /// Changes the policy's knobs (weights, tenants) between passes, e.g. after the live
    /// server reloads its queue file. The policy kind should stay the same.
    /// `backfill` with `backfill_nodes`: the head job's reservation in the last pass.
    pub fn node_reservation(&self) -> Option<&backfill_nodes::NodeReservation> {
        self.node_reservation.as_ref()
    }

    pub fn policy_mut(&mut self) -> &mut PolicyConfig {
        &mut self.policy
    }

    /// The free GPUs right now, node by node.
    pub fn free_map(&self) -> &FreeMap {
        &self.actual
    }

    /// The placement strategy.
    pub fn strategy(&self) -> PlacementStrategy {
        self.placement
    }

    /// Free GPUs right now.
    pub fn free_gpus(&self) -> u64 {
        self.actual.total_free()
    }

    /// Checks that `spec` fits an idle cluster, i.e. could ever run.
    pub fn check_fits(&mut self, spec: &JobSpec) -> Result<(), NeverFits> {
        if spec.gang.is_some() {
            let mut probe = self.idle.clone();
            let mut room = self.room.as_ref().map(|_| Room::new(&self.cluster));
            if place_job(self.placement, &mut probe, room.as_mut(), spec).is_some() {
                return Ok(());
            }
            // No set of nodes holds its shape (the wording of a waiting gang's reason
            // in `live::reason` says more).
            return Err(NeverFits {
                job: spec.id,
                gpus: spec.gpus,
                model: model_words(spec),
                max: self.cluster.max_gpus_per_node(),
                placement: "gang",
                room: false,
            });
        }
        let mut room_fails = false;
        if let (Some(_), true) = (&self.room, spec.gpus == 0 || room::asks(spec)) {
            let mut probe = self.idle.clone();
            let mut room = Room::new(&self.cluster);
            if place_job(self.placement, &mut probe, Some(&mut room), spec).is_some() {
                return Ok(());
            }
            room_fails = true;
        }
        let key = (spec.gpus, spec.gpu_model.clone());
        let cached = if spec.nodes.is_empty() {
            self.fit_cache.get(&key).copied()
        } else {
            None
        };
        let fits = match cached {
            Some(f) => f,
            None => {
                let mut probe = self.idle.clone();
                let f = self.placement.place_spec(&mut probe, spec).is_some();
                // Node sets change with the nodes: only jobs without one are cached.
                if spec.nodes.is_empty() {
                    self.fit_cache.insert(key, f);
                }
                f
            }
        };
        if fits && !room_fails {
            return Ok(());
        }
        let max = match self.placement {
            PlacementStrategy::Pool | PlacementStrategy::Spread | PlacementStrategy::Topology => {
                self.cluster.total_gpus()
            }
            _ => self.cluster.max_gpus_per_switch(),
        };
        Err(NeverFits {
            job: spec.id,
            gpus: spec.gpus,
            model: model_words(spec),
            max,
            placement: self.placement.name(),
            room: fits || spec.gpus == 0,
        })
    }

    /// Accepts a new job: checks it could ever run and puts it at the back of the queue.
    pub fn admit(&mut self, job: &mut SchedJob) -> Result<(), NeverFits> {
        self.check_fits(&job.spec)?;
        self.enqueue(job);
        Ok(())
    }

    /// Puts a job at the back of the queue without checking that it fits. The live
    /// server uses this: its cluster changes as nodes come and go, so a job that fits
    /// no node online right now may fit one that returns.
    pub fn enqueue(&mut self, job: &mut SchedJob) {
        self.next_rank += 1;
        job.rank = self.next_rank;
        self.next_seq += 1;
        job.las = LasState {
            seq: self.next_seq,
            ..LasState::default()
        };
        self.next_admitted += 1;
        job.slot = QueueSlot {
            admitted: self.next_admitted,
            tie: self.next_admitted as i64,
            started_at: 0,
        };
        if let Some(q) = &mut self.queue {
            q.insert(job);
        }
        if let Some(r) = &mut self.ranked {
            r.admit(job);
        }
    }

    /// Swaps in a new cluster (nodes joined or left) with every GPU free, keeping the
    /// queue's ranks and sequence numbers. The caller then [`Scheduler::occupy`]s the
    /// placements of the jobs still running.
    pub fn set_cluster(&mut self, cluster: &Cluster) {
        let idle = FreeMap::new(cluster);
        self.cluster = cluster.clone();
        self.work = idle.clone();
        self.actual = idle.clone();
        self.idle = idle;
        self.fit_cache.clear();
        if self.room.is_some() {
            self.room = Some(Room::new(cluster));
        }
    }

    /// Closes nodes to new placements that hold no GPU (see [`Room::set_closed`]);
    /// GPU placements are kept off by holding the GPUs. Call after
    /// [`Scheduler::set_cluster`]; a no-op unless room is reserved.
    pub fn close_nodes(&mut self, nodes: &[NodeId]) {
        if let Some(room) = &mut self.room {
            for &n in nodes {
                room.set_closed(n, true);
            }
        }
    }

    /// Where each node sits (one per node, in node order), for gang placement; by
    /// default a node's switch in the cluster. Call after [`Scheduler::set_cluster`].
    pub fn set_locations(&mut self, locations: std::sync::Arc<[crate::freemap::Location]>) {
        for map in [&mut self.idle, &mut self.work, &mut self.actual] {
            map.set_locations(locations.clone());
        }
    }

    /// Starts `job` at `placement` outside a pass (a job that reclaimed its queue's
    /// quota goes first on the node it reclaimed). False, and nothing changes, if the
    /// GPUs are not free.
    pub fn start_at(&mut self, job: &mut SchedJob, placement: Placement, now: Seconds) -> bool {
        if job.running || !self.occupy_job(&job.spec, &placement) {
            return false;
        }
        if let Some(r) = &mut self.ranked {
            r.started(job, key_bits(order::key(&self.policy, job, now)));
        }
        job.account(now);
        job.running = true;
        job.las.due = None;
        job.placement = Some(placement);
        job.first_start.get_or_insert(now);
        job.starts += 1;
        job.turn = now;
        if let Some(q) = &mut self.queue {
            q.remove(job);
            job.slot.started_at = q.passes;
        }
        true
    }

    /// Stops a running job outside a pass (a reclaim preempts it): its GPUs come back and
    /// it waits again, its attained service kept.
    pub fn preempt_now(&mut self, job: &mut SchedJob, now: Seconds) {
        if !job.running {
            return;
        }
        job.account(now);
        self.finish(job);
        job.preemptions += 1;
        job.turn = now;
        if let Some(q) = &mut self.queue {
            q.put_back(job);
        }
        if let Some(r) = &mut self.ranked {
            r.put_back(job);
        }
        if guard::applies(&self.policy) {
            self.set_due(job);
        }
    }

    /// Replaces what the predictor believes of `job`'s run time (`blend`'s order), for a
    /// job that may be waiting: the predictor learnt more while it waited (issue 37: in a
    /// batch admitted before any job ended, no job would otherwise ever have a belief).
    /// A waiting job's key moves with it, so the ordered queue takes it out of its place
    /// and orders it again at the next pass, as a job put back.
    pub fn set_belief(
        &mut self,
        job: &mut SchedJob,
        belief: Option<std::sync::Arc<crate::predict::Belief>>,
        now: Seconds,
    ) {
        if !job.running {
            if let Some(r) = &mut self.ranked {
                let key = key_bits(order::key(&self.policy, job, now));
                if r.waiting.remove(&(key, job.slot.tie)).is_some() {
                    r.pending.insert(job.slot.admitted);
                }
            }
        }
        job.belief = belief;
    }

    /// Gives back GPUs taken with [`Scheduler::occupy`] (a hold the caller lifts).
    pub fn release(&mut self, placement: &Placement) {
        for &(node, k) in &placement.parts {
            if node.index() < self.cluster.nodes.len() {
                self.actual.give(node, k);
            }
        }
    }

    /// Marks a running job's GPUs as used. Returns false, and takes nothing, when the
    /// placement names a node that does not exist or lacks the free GPUs.
    pub fn occupy(&mut self, placement: &Placement) -> bool {
        let n = self.cluster.nodes.len();
        let mut need = BTreeMap::new();
        for &(node, k) in &placement.parts {
            *need.entry(node).or_insert(0u32) += k;
        }
        let fits = need
            .iter()
            .all(|(&node, &k)| node.index() < n && self.actual.free(node) >= k);
        if fits {
            for (node, k) in need {
                self.actual.take(node, k);
            }
        }
        fits
    }

    /// Marks a running job's GPUs, and the room it asks for on its node when room is
    /// reserved, as used. Returns false, and takes nothing, when either is not free.
    pub fn occupy_job(&mut self, spec: &JobSpec, placement: &Placement) -> bool {
        let nodes = room_nodes(spec, placement);
        if let Some(room) = &self.room {
            if room::asks(spec) && !nodes.iter().all(|&n| room.fits(n, spec)) {
                return false;
            }
        }
        if !self.occupy(placement) {
            return false;
        }
        if let Some(room) = &mut self.room {
            if room::asks(spec) {
                for &n in &nodes {
                    room.take(n, spec);
                }
            }
        }
        true
    }

    /// Gives the GPUs of a job that ended (or was cancelled or lost) back.
    pub fn finish(&mut self, job: &mut SchedJob) {
        self.charge_leaving(job);
        if let (false, Some(q)) = (job.running, &mut self.queue) {
            // A waiting job leaves the queue.
            q.remove(job);
        }
        if let Some(r) = &mut self.ranked {
            // The keys of these policies do not read the time.
            r.remove(
                job,
                key_bits(order::key(&self.policy, job, job.last_update)),
            );
        }
        if let Some(p) = job.placement.take() {
            if job.running {
                for &(node, k) in &p.parts {
                    self.actual.give(node, k);
                }
                if let Some(room) = &mut self.room {
                    if room::asks(&job.spec) {
                        for n in room_nodes(&job.spec, &p) {
                            room.give(n, &job.spec);
                        }
                    }
                }
            }
        }
        job.running = false;
    }

    /// When the policy wants a pass even if no job arrives or ends.
    pub fn next_wakeup(&self, jobs: &[SchedJob], now: Seconds) -> Option<Seconds> {
        let own = match self.policy.kind {
            PolicyKind::Tiresias => tiresias::next_change(&self.policy, jobs, now),
            PolicyKind::Rr => crate::policy::rr::next_turn(&self.policy, jobs, now),
            _ => None,
        };
        if !self.policy.sliced() {
            return own;
        }
        let turn = crate::policy::rr::next_turn(&self.policy, jobs, now);
        match (own, turn) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The starvation guard's promotions due at `now`, before the pass orders the jobs.
    fn promote_due(&mut self, jobs: &mut [SchedJob], now: Seconds) {
        let Some(r) = &mut self.ranked else {
            for job in jobs.iter_mut() {
                if guard::is_due(job, now) {
                    guard::promote(job);
                }
            }
            return;
        };
        while let Some(&(d, admitted)) = r.due.first() {
            if d > total_order_key(now) {
                break;
            }
            r.due.pop_first();
            let Some(i) = find_admitted(jobs, admitted) else {
                continue;
            };
            let job = &mut jobs[i];
            if !guard::is_due(job, now) || job.las.due.map(total_order_key) != Some(d) {
                continue;
            }
            // Its key moves: out of its place, ordered again by this pass.
            let key = key_bits(order::key(&self.policy, job, now));
            if r.waiting.remove(&(key, job.slot.tie)).is_some() {
                r.pending.insert(job.slot.admitted);
            }
            guard::promote(job);
        }
    }

    /// A job stopped at `now`: when the starvation guard promotes it, if ever.
    fn set_due(&mut self, job: &mut SchedJob) {
        job.las.due = guard::due(&self.policy, job);
        if let (Some(d), Some(r)) = (job.las.due, &mut self.ranked) {
            r.due.insert((total_order_key(d), job.slot.admitted));
        }
    }

    /// One pass at `now` over every job that can still run. Jobs must have been
    /// [`SchedJob::account`]ed to `now`, waiting jobs at least to when they stopped.
    pub fn pass(&mut self, jobs: &mut [SchedJob], now: Seconds) -> PassOutcome {
        let guarded = guard::applies(&self.policy);
        if guarded {
            self.promote_due(jobs, now);
        }
        let out = self.pass_inner(jobs, now);
        if guarded {
            for d in &out.decisions {
                if let Decision::Preempt { index, .. } = *d {
                    self.set_due(&mut jobs[index]);
                }
            }
        }
        out
    }

    fn pass_inner(&mut self, jobs: &mut [SchedJob], now: Seconds) -> PassOutcome {
        let kind = self.policy.kind;
        let preemptive = self.policy.preemptive();
        if kind == PolicyKind::Drf {
            // Before any early return: every pass is a point in the usage history.
            self.history.advance(&self.policy, jobs, now);
        }
        if kind == PolicyKind::FairTree {
            self.advance_fair_usage(jobs, now);
        }
        if kind == PolicyKind::Tiresias {
            tiresias::update_queues(&self.policy, jobs, &mut self.next_seq);
        }
        if kind.deadlines() && self.policy.deadline_demote {
            crate::deadline::mark_demoted(jobs, now, self.cluster.total_gpus() as f64);
        }
        let mut out = PassOutcome::default();
        if let Some(mut r) = self.ranked.take() {
            self.ranked_pass(&mut r, jobs, now, &mut out);
            self.ranked = Some(r);
            return out;
        }
        if preemptive
            && self.mode != PreemptMode::Deferred
            && self.start_all_waiting(jobs, now, &mut out)
        {
            return out;
        }
        if !preemptive && self.actual.total_free() == 0 && !self.zero_gpu_waiting(jobs) {
            // Nothing can start and nothing is preempted: skip the sort of a long queue.
            return out;
        }
        if let Some(mut q) = self.queue.take() {
            self.ordered_pass(&mut q, jobs, now, &mut out);
            self.queue = Some(q);
            return out;
        }
        self.sort(jobs, now, preemptive);
        let mut order = std::mem::take(&mut self.order);
        if self.policy.sliced() {
            crate::policy::rr::slice(&self.policy, jobs, &mut order, now);
        }
        match kind {
            _ if preemptive => match self.mode {
                PreemptMode::Repack => self.repack(jobs, &order, now, &mut out),
                PreemptMode::InPlace => self.in_place(jobs, &order, now, &mut out),
                PreemptMode::Deferred => self.deferred(jobs, &order, now, &mut out),
            },
            _ if kind.backfills() => self.backfill(jobs, &order, now, &mut out),
            PolicyKind::Drf => self.drf(jobs, &order, now, &mut out),
            PolicyKind::FairTree => self.fair_tree(jobs, &order, now, &mut out),
            _ => self.strict(jobs, &order, now, &mut out),
        }
        if kind == PolicyKind::Tiresias {
            tiresias::requeue_after_pass(jobs, &order, &mut self.next_seq);
        }
        self.order = order;
        out
    }

    /// Whether a job that needs no GPU waits (only with room reserved: it may start
    /// when every GPU is taken).
    fn zero_gpu_waiting(&self, jobs: &[SchedJob]) -> bool {
        self.room.is_some() && jobs.iter().any(|j| !j.running && j.spec.gpus == 0)
    }

    /// The uncontended case of a preemptive pass: when every waiting job fits the GPUs
    /// that are free right now, everyone runs and nobody need be preempted, so the pass
    /// starts them (in policy order) without re-packing the whole cluster. This keeps the
    /// work of a pass proportional to the waiting jobs on a cluster that is not full.
    /// (A full re-pack could in principle fail a job here through a first-fit packing
    /// anomaly; the Muri figures are reproduced exactly either way.)
    fn start_all_waiting(
        &mut self,
        jobs: &mut [SchedJob],
        now: Seconds,
        out: &mut PassOutcome,
    ) -> bool {
        let waiting: Vec<usize> = (0..jobs.len()).filter(|&i| !jobs[i].running).collect();
        let gpus: u64 = waiting.iter().map(|&i| jobs[i].spec.gpus as u64).sum();
        if gpus > self.actual.total_free() {
            return false;
        }
        let mut keyed: Vec<((f64, f64), u64, usize)> = waiting
            .iter()
            .map(|&i| (order::key(&self.policy, &jobs[i], now), jobs[i].rank, i))
            .collect();
        keyed.sort_unstable_by(by_key_then_rank);
        self.work.clone_from(&self.actual);
        let mut placed = Vec::with_capacity(keyed.len());
        for &(_, _, i) in &keyed {
            let spec = &jobs[i].spec;
            match self.placement.place_spec(&mut self.work, spec) {
                Some(p) => placed.push((i, p)),
                None => return false,
            }
        }
        std::mem::swap(&mut self.actual, &mut self.work);
        for (i, p) in placed {
            Self::start(&mut jobs[i], i, p, now, out);
        }
        true
    }

    /// Fills `self.order` with the jobs to consider (all, or only waiting ones), best
    /// first, and renumbers their ranks so the next sort is stable.
    fn sort(&mut self, jobs: &mut [SchedJob], now: Seconds, all: bool) {
        self.keyed.clear();
        for (i, j) in jobs.iter().enumerate() {
            if all || !j.running {
                self.keyed
                    .push((order::key(&self.policy, j, now), j.rank, i));
            }
        }
        self.keyed.sort_unstable_by(by_key_then_rank);
        self.order.clear();
        let base = self.next_rank;
        for (pos, &(_, _, i)) in self.keyed.iter().enumerate() {
            jobs[i].rank = base + pos as u64;
            self.order.push(i);
        }
        self.next_rank = base + self.keyed.len() as u64;
    }

    fn start(
        job: &mut SchedJob,
        index: usize,
        placement: Placement,
        now: Seconds,
        out: &mut PassOutcome,
    ) {
        // Callers may leave waiting jobs un-accounted (nothing of theirs changes while
        // they wait); close the wait before the run starts counting.
        job.account(now);
        job.running = true;
        job.las.due = None;
        job.placement = Some(placement.clone());
        job.first_start.get_or_insert(now);
        job.starts += 1;
        job.turn = now;
        out.decisions.push(Decision::Start {
            index,
            job: job.spec.id,
            placement,
        });
    }

    fn preempt(job: &mut SchedJob, index: usize, now: Seconds, out: &mut PassOutcome) {
        job.running = false;
        job.turn = now;
        job.placement = None;
        job.preemptions += 1;
        out.decisions.push(Decision::Preempt {
            index,
            job: job.spec.id,
        });
    }

    /// Greedy fit from an idle cluster in `order`. `fits[i]` gets each job's placement.
    /// A job no smaller than one that already failed cannot fit either (the fit test of
    /// every strategy but `topology` is monotone in the GPU count), which keeps long
    /// queues cheap.
    fn pack_from_idle(
        &mut self,
        jobs: &[SchedJob],
        order: &[usize],
        mut each: impl FnMut(usize, Option<Placement>),
    ) {
        self.work.reset_from(&self.idle);
        let mut smallest_failure = u32::MAX;
        for &i in order {
            let placed = self.place_from_idle(&jobs[i].spec, &mut smallest_failure);
            each(i, placed);
        }
    }

    /// One job of [`Self::pack_from_idle`] on `self.work`: `smallest_failure` is the
    /// fewest GPUs a job without a model failed to get so far.
    fn place_from_idle(&mut self, spec: &JobSpec, smallest_failure: &mut u32) -> Option<Placement> {
        let any = spec.any_node();
        // `topology` splits into equal parts, whose fit is not monotone (5 GPUs may
        // fail where 6 fit as 2 x 3): no shortcut there.
        let monotone = self.placement != PlacementStrategy::Topology;
        let placed = if monotone && any && spec.gpus >= *smallest_failure {
            None
        } else {
            self.placement.place_spec(&mut self.work, spec)
        };
        if placed.is_none() && any {
            *smallest_failure = (*smallest_failure).min(spec.gpus);
        }
        placed
    }

    fn repack(
        &mut self,
        jobs: &mut [SchedJob],
        order: &[usize],
        now: Seconds,
        out: &mut PassOutcome,
    ) {
        let mut fits: Vec<(usize, Option<Placement>)> = Vec::with_capacity(order.len());
        self.pack_from_idle(jobs, order, |i, p| fits.push((i, p)));
        for (i, placed) in fits {
            let job = &mut jobs[i];
            match (placed, job.running) {
                (Some(p), true) => job.placement = Some(p),
                (Some(p), false) => Self::start(job, i, p, now, out),
                (None, true) => Self::preempt(job, i, now, out),
                (None, false) => {}
            }
        }
        std::mem::swap(&mut self.actual, &mut self.work);
    }

    fn in_place(
        &mut self,
        jobs: &mut [SchedJob],
        order: &[usize],
        now: Seconds,
        out: &mut PassOutcome,
    ) {
        let mut wanted = vec![false; jobs.len()];
        self.pack_from_idle(jobs, order, |i, p| wanted[i] = p.is_some());
        for &i in order {
            if jobs[i].running && !wanted[i] {
                if let Some(p) = &jobs[i].placement {
                    for &(node, k) in &p.parts {
                        self.actual.give(node, k);
                    }
                }
                Self::preempt(&mut jobs[i], i, now, out);
            }
        }
        for &i in order {
            if !jobs[i].running && wanted[i] {
                let spec = &jobs[i].spec;
                if let Some(p) = self.placement.place_spec(&mut self.actual, spec) {
                    Self::start(&mut jobs[i], i, p, now, out);
                }
            }
        }
    }

    /// Non-preemptive, strict order: the first job that does not fit blocks the rest.
    fn strict(
        &mut self,
        jobs: &mut [SchedJob],
        order: &[usize],
        now: Seconds,
        out: &mut PassOutcome,
    ) {
        let mut used = self.queue_usage(jobs);
        for &i in order {
            if !self.strict_step(jobs, i, &mut used, now, out) {
                break;
            }
        }
    }

    /// Tries the job at `i`; false when the pass stops there.
    fn strict_step(
        &mut self,
        jobs: &mut [SchedJob],
        i: usize,
        used: &mut BTreeMap<QueueId, u32>,
        now: Seconds,
        out: &mut PassOutcome,
    ) -> bool {
        let spec = &jobs[i].spec;
        if !self.within_limit(used, spec) {
            return true;
        }
        match place_job(self.placement, &mut self.actual, self.room.as_mut(), spec) {
            Some(p) => {
                *used.entry(spec.queue).or_insert(0) += spec.gpus;
                Self::start(&mut jobs[i], i, p, now, out);
                true
            }
            None => false,
        }
    }

    fn backfill(
        &mut self,
        jobs: &mut [SchedJob],
        order: &[usize],
        now: Seconds,
        out: &mut PassOutcome,
    ) {
        let mut state = (None, self.queue_usage(jobs));
        self.node_reservation = None;
        for &i in order {
            if !self.backfill_step(jobs, i, &mut state, now, out) {
                break;
            }
        }
    }

    /// Tries the job at `i` under the reservation so far (and the queues' use); false
    /// when the pass stops there.
    fn backfill_step(
        &mut self,
        jobs: &mut [SchedJob],
        i: usize,
        (reservation, used): &mut (Option<backfill::Reservation>, BTreeMap<QueueId, u32>),
        now: Seconds,
        out: &mut PassOutcome,
    ) -> bool {
        if self.actual.total_free() == 0 && self.room.is_none() {
            return false;
        }
        if !self.within_limit(used, &jobs[i].spec) {
            return true;
        }
        if self.policy.backfill_nodes {
            return self.backfill_nodes_step(jobs, i, used, now, out);
        }
        if reservation
            .as_ref()
            .is_some_and(|r| !r.allows(&jobs[i], now))
        {
            return true;
        }
        let spec = &jobs[i].spec;
        match place_job(self.placement, &mut self.actual, self.room.as_mut(), spec) {
            Some(p) => {
                if let Some(res) = reservation {
                    res.admit(&jobs[i], now);
                }
                *used.entry(spec.queue).or_insert(0) += spec.gpus;
                Self::start(&mut jobs[i], i, p, now, out);
            }
            None if reservation.is_none() => {
                *reservation = Some(backfill::reserve(
                    jobs,
                    spec.gpus,
                    self.actual.total_free(),
                    now,
                ));
            }
            None => {}
        }
        true
    }

    /// What [`Self::backfill_step`] would return for a waiting job the reservation
    /// refuses, decided from what the queue keeps of it without reading the job: `None`
    /// when the step must see the job (no reservation yet, or one it allows). The step
    /// stops the pass when no GPU is free, else passes over the job; the queue caps and
    /// `backfill_nodes` come after neither.
    fn refuse_queued(
        &self,
        reservation: &Option<backfill::Reservation>,
        w: Queued,
        now: Seconds,
    ) -> Option<bool> {
        if self.actual.total_free() == 0 && self.room.is_none() {
            return Some(false);
        }
        let r = reservation.as_ref()?;
        let refused = !self.policy.backfill_nodes && !r.allows_queued(w.gpus, w.remaining, now);
        refused.then_some(true)
    }

    /// [`Self::backfill_step`] with the reservation on a node
    /// ([`crate::policy::backfill_nodes`]).
    fn backfill_nodes_step(
        &mut self,
        jobs: &mut [SchedJob],
        i: usize,
        used: &mut BTreeMap<QueueId, u32>,
        now: Seconds,
        out: &mut PassOutcome,
    ) -> bool {
        let placed = match &mut self.node_reservation {
            Some(r) => r.place(
                &jobs[i],
                self.placement,
                &mut self.actual,
                self.room.as_mut(),
                now,
            ),
            None => {
                let spec = &jobs[i].spec;
                let p = place_job(self.placement, &mut self.actual, self.room.as_mut(), spec);
                if p.is_none() {
                    self.node_reservation =
                        backfill_nodes::reserve(jobs, &jobs[i].spec, &self.actual, now);
                }
                p
            }
        };
        if let Some(p) = placed {
            *used.entry(jobs[i].spec.queue).or_insert(0) += jobs[i].spec.gpus;
            Self::start(&mut jobs[i], i, p, now, out);
        }
        true
    }

    /// A non-preemptive pass over the ordered queue: the same steps as over a sorted
    /// one, visiting only the jobs the pass considers.
    fn ordered_pass(
        &mut self,
        q: &mut OrderedQueue,
        jobs: &mut [SchedJob],
        now: Seconds,
        out: &mut PassOutcome,
    ) {
        // Every ordering pass counts, as every sort renumbered the queue.
        q.passes += 1;
        for (admitted, tie) in q.take_returned() {
            if let Some(i) = find_admitted(jobs, admitted) {
                jobs[i].slot.tie = tie;
                q.insert(&jobs[i]);
            }
        }
        // Entries whose job is not in the slice, or runs: the caller dropped or started
        // it without telling; they leave the queue.
        let mut stale: Vec<u64> = Vec::new();
        // The queue's order is mostly admission order (submit times): try the slot after
        // the last job found before searching.
        let mut next = 0;
        let mut resolve = |jobs: &[SchedJob], admitted: u64| {
            let found = find_admitted_after(jobs, next, admitted);
            match found {
                Some(i) if !jobs[i].running => {
                    next = i + 1;
                    Some(i)
                }
                _ => {
                    stale.push(admitted);
                    None
                }
            }
        };
        match self.policy.kind {
            PolicyKind::Drf | PolicyKind::FairTree => {
                // DRF offers by tenant from the whole queue, fairtree by association;
                // the order comes without a sort.
                let mut order = std::mem::take(&mut self.order);
                order.clear();
                q.walk(now, |w| {
                    if let Some(i) = resolve(jobs, w.admitted) {
                        order.push(i);
                    }
                    true
                });
                if self.policy.kind == PolicyKind::Drf {
                    self.drf(jobs, &order, now, out);
                } else {
                    self.fair_tree(jobs, &order, now, out);
                }
                self.order = order;
            }
            kind if kind.backfills() => {
                let mut state = (None, self.queue_usage(jobs));
                self.node_reservation = None;
                // Counted before the walk (the queue changes after it): with no queued job
                // that has an estimate or fits the extra GPUs, a refusal ends the walk
                // (every later job would be refused too: `--estimates none`).
                let none_pass = |extra: u64| q.none_can_pass(extra);
                q.walk(now, |w| {
                    if let Some(go_on) = self.refuse_queued(&state.0, w, now) {
                        debug_assert!(queued_as_now(jobs, w));
                        let r: &Option<backfill::Reservation> = &state.0;
                        if go_on && r.as_ref().is_some_and(|r| none_pass(r.extra)) {
                            return false;
                        }
                        return go_on;
                    }
                    match resolve(jobs, w.admitted) {
                        Some(i) => self.backfill_step(jobs, i, &mut state, now, out),
                        None => true,
                    }
                });
            }
            _ => {
                let mut used = self.queue_usage(jobs);
                q.walk(now, |w| match resolve(jobs, w.admitted) {
                    Some(i) => self.strict_step(jobs, i, &mut used, now, out),
                    None => true,
                });
            }
        }
        for d in &out.decisions {
            if let Decision::Start { index, .. } = *d {
                let job = &mut jobs[index];
                q.remove(job);
                job.slot.started_at = q.passes;
            }
        }
        for admitted in stale {
            q.remove_admitted(admitted);
        }
    }

    fn drf(&mut self, jobs: &mut [SchedJob], order: &[usize], now: Seconds, out: &mut PassOutcome) {
        let used = drf::usage(&self.policy, jobs);
        let waiting: Vec<drf::Waiting> = order
            .iter()
            .map(|&i| drf::Waiting {
                index: i,
                tenant: drf::tenant_of(&self.policy, &jobs[i]),
                user: jobs[i].spec.user.get(),
                demand: drf::Demand::of(&jobs[i]),
            })
            .collect();
        let total = drf::Demand {
            gpus: self.cluster.total_gpus() as u64,
            cpu_milli: self.cluster.nodes.iter().map(|n| n.cpu_milli).sum(),
            mem_mib: self.cluster.nodes.iter().map(|n| n.mem_mib).sum(),
        };
        let mut queue_used = self.queue_usage(jobs);
        let limits = &self.queue_limits;
        let (placement, actual) = (self.placement, &mut self.actual);
        let mut room = self.room.as_mut();
        let past = self.history.gpus(&self.policy);
        let by_user = drf::user_usage(&self.policy, jobs);
        drf::offer(&self.policy, used, by_user, &past, &waiting, total, |i| {
            let spec = &jobs[i].spec;
            // A tenant whose next job is over its queue's cap waits, like one that
            // does not fit.
            if let Some(&cap) = limits.get(&spec.queue) {
                if queue_used.get(&spec.queue).copied().unwrap_or(0) + spec.gpus > cap {
                    return false;
                }
            }
            match place_job(placement, actual, room.as_deref_mut(), spec) {
                Some(p) => {
                    *queue_used.entry(spec.queue).or_insert(0) += spec.gpus;
                    Self::start(&mut jobs[i], i, p, now, out);
                    true
                }
                None => false,
            }
        });
    }
}

/// Whether what the ordered queue keeps of a waiting job is still the job's own (the
/// caller's promise; checked in debug builds). A job no longer in the slice passes.
fn queued_as_now(jobs: &[SchedJob], w: Queued) -> bool {
    find_admitted(jobs, w.admitted).is_none_or(|i| {
        let j = &jobs[i];
        j.running
            || (j.spec.gpus == w.gpus && j.estimated_remaining().to_bits() == w.remaining.to_bits())
    })
}

/// [`find_admitted`] searching first from `from` onwards, where the job usually is (a
/// galloping search: a job `d` places on costs about `2 log d` looks). Admission numbers
/// are unique, so whichever search finds the job finds the same index.
fn find_admitted_after(jobs: &[SchedJob], from: usize, admitted: u64) -> Option<usize> {
    let at = |i: usize| jobs[i].slot.admitted;
    if from >= jobs.len() || at(from) > admitted {
        return find_admitted(jobs, admitted);
    }
    let (mut lo, mut step) = (from, 1);
    while lo + step < jobs.len() && at(lo + step) <= admitted {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(jobs.len());
    match jobs[lo..hi].binary_search_by_key(&admitted, |j| j.slot.admitted) {
        Ok(k) => Some(lo + k),
        Err(_) => find_admitted(jobs, admitted),
    }
}

/// The job admitted as `admitted`: a binary search, as callers keep admission order; a
/// scan if one did not.
fn find_admitted(jobs: &[SchedJob], admitted: u64) -> Option<usize> {
    jobs.binary_search_by_key(&admitted, |j| j.slot.admitted)
        .ok()
        .or_else(|| jobs.iter().position(|j| j.slot.admitted == admitted))
}

/// The nodes where a placed job holds its CPUs, memory and generic resources: every part
/// of a gang (the ask holds per node), the one node of any other job.
pub(crate) fn room_nodes(spec: &JobSpec, placement: &Placement) -> Vec<NodeId> {
    let parts = placement.parts.iter().map(|p| p.0);
    if spec.gang.is_some() {
        parts.collect()
    } else {
        parts.take(1).collect()
    }
}

/// Policy key first (smaller first), then the previous pass's rank.
fn by_key_then_rank(
    a: &((f64, f64), u64, usize),
    b: &((f64, f64), u64, usize),
) -> std::cmp::Ordering {
    a.0 .0
        .total_cmp(&b.0 .0)
        .then(a.0 .1.total_cmp(&b.0 .1))
        .then(a.1.cmp(&b.1))
}
