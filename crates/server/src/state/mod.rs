//! The server's working state, owned by one task (see `actor.rs`): jobs, nodes and the
//! core's queue. Every method here changes memory only, at the time the actor gave the
//! round (`begin_round`); the tracked maps mark the rows it changed, and the actor writes
//! them in one transaction and only then answers anyone.

pub(crate) mod accounts;
mod agents;
mod array;
mod array_ops;
mod cancel;
mod checkpoint;
mod checkpoint_cost;
pub(crate) mod compact;
pub(crate) mod deadline;
mod demand;
mod deps;
pub(crate) mod elastic;
mod ended;
mod energy;
mod follow;
mod gang;
mod health;
pub(crate) mod history;
mod hold;
mod idle;
mod interactive;
pub(crate) mod learn;
mod limits;
mod list;
mod liveness;
mod log_target;
mod metrics;
mod node_list;
mod power;
mod preempt;
mod privacy;
mod queue_fit;
mod queue_list;
mod reasons;
mod recent;
mod reclaim;
mod reservations;
mod rules;
mod runs;
pub(crate) mod services;
pub(crate) mod shape;
mod speed;
pub(crate) mod steps;
mod submit;
mod tiers;
mod tokens;
mod tracked;
mod transition;
pub(super) mod unwritten;
pub(crate) mod usage;
pub(crate) mod validate;
mod view;
mod wait;
mod workflow;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use crate::record::JobRecord;
use gpusched_core::{JobState as CoreState, PolicyConfig, QueueId};
use gpusched_store::{NodeRecord, TokenRecord};
use gpusched_wire::history::JobEventKind;
use gpusched_wire::JobState;
use tokio::sync::{oneshot, watch};

use crate::clock::Now;
use crate::config::ServerConfig;
use crate::live_map;
use crate::queues::Queues;
use gpusched_core::live::{LiveCluster, LivePlacement};
pub use liveness::Liveness;

pub use agents::PollResult;
pub use log_target::{LogAsk, LogTarget};
pub use privacy::redact;
pub use tracked::Tracked;
pub use wait::WaitResult;

/// A refusal, with the HTTP status it maps to and a message that says what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fail {
    BadRequest(String),
    NotFound(String),
    /// The agent must register again (the server restarted or lost it).
    Conflict(String),
    /// The request was fine but cannot be served now (a node is offline).
    Unavailable(String),
    /// The caller may not do this (someone else's job, an admin-only call).
    Forbidden(String),
}

impl Fail {
    /// What was wrong and what to do, whatever the status.
    pub fn message(&self) -> &str {
        match self {
            Fail::BadRequest(m)
            | Fail::NotFound(m)
            | Fail::Conflict(m)
            | Fail::Unavailable(m)
            | Fail::Forbidden(m) => m,
        }
    }
}

/// The person behind a request, as the state needs to know them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Who {
    pub user: String,
    pub admin: bool,
}

/// A node as the server tracks it.
pub struct NodeEntry {
    pub record: NodeRecord,
    /// Whether its agent is heard from (`liveness.rs`).
    pub liveness: Liveness,
    /// The last request of its agent this server received, or the server's start: the
    /// heartbeat timeout and the node lease count from it.
    pub last_seen: Instant,
    /// Generation of the node's desired state; bumped on every change.
    pub gen: u64,
    pub watch: watch::Sender<u64>,
    /// The latest GPU samples its agent reported (not stored: the next report brings
    /// fresh ones).
    pub telemetry: Option<gpusched_wire::NodeTelemetry>,
    /// Each GPU's uncorrectable ECC count its health is judged against (see
    /// `health.rs`); `None` until the first sample after a server start sets it.
    pub ecc_base: Option<BTreeMap<u32, u64>>,
    /// Its agent starts queued attempts itself (protocol 3, `follow.rs`); known from its
    /// registration in this server's life.
    pub follows: bool,
    /// Its agent takes a launch's limits and image (protocol 4, `agents.rs` `launch`);
    /// known from its registration in this server's life. What it enforces with them is
    /// its registration's `containment`, kept in the node's row.
    pub limits: bool,
    /// Its agent gives service replicas a port and probes them (protocol 5), as its
    /// registration in this server's life said. Replicas are placed only on such nodes
    /// (`live_map::SERVES`). A node known only from the store counts as one until its
    /// agent registers: nothing new goes to it before, and the replicas it ran are
    /// restored on it.
    pub serves: bool,
    /// Its agent holds interactive allocations (`Launch::hold`, protocol
    /// `HOLD_PROTOCOL`), as for `serves`: they are placed only on such nodes
    /// (`live_map::HOLDS`).
    pub holds: bool,
    /// Its agent runs job steps (protocol 6, `steps.rs`), as its registration in this
    /// server's life said.
    pub steps: bool,
    /// The launches its agent was sent in this registration, for answers naming those it
    /// holds (`gpusched_wire::compact`); emptied when it registers.
    pub offers: gpusched_wire::compact::Offers,
}

/// What a round announces after its commit: events, not rows (the rows to write are
/// marked by the tracked maps themselves, see `take_touched`).
#[derive(Default)]
pub struct Touched {
    /// Nodes whose desired state changed (wake their polls after the commit).
    pub bumped: BTreeSet<String>,
    /// Jobs that reached a terminal state (wake their waiters after the commit).
    pub ended: BTreeSet<u64>,
}

/// The rows a round changed, for the actor to write in its one transaction.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rows {
    pub jobs: BTreeSet<u64>,
    pub nodes: BTreeSet<String>,
    pub tokens: BTreeSet<u64>,
    /// Services changed (absent from the state now: deleted).
    pub services: BTreeSet<String>,
    /// Steps changed, by (job, step).
    pub steps: BTreeSet<(u64, u32)>,
    /// Reservations changed (absent now: deleted).
    pub reservations: BTreeSet<String>,
}

impl Rows {
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
            && self.nodes.is_empty()
            && self.tokens.is_empty()
            && self.services.is_empty()
            && self.steps.is_empty()
            && self.reservations.is_empty()
    }
}

pub struct State {
    pub cfg: Arc<ServerConfig>,
    /// Changes at every start, so agents notice a restarted server.
    pub instance: String,
    /// Every change through these three maps is written at the end of the round, and
    /// nothing else is (see `tracked.rs`).
    pub jobs: Tracked<u64, Box<JobRecord>>,
    next_id: u64,
    /// Client retry keys (`user/token`) of accepted jobs.
    retry_keys: HashMap<String, u64>,
    pub nodes: Tracked<String, NodeEntry>,
    /// The GPU models of `nodes`, each once, in order: derived by `refresh_nodes`, which
    /// every change of the nodes calls, since the speed rules read them for every job
    /// that enters the queue (`speed.rs`) and a walk of every node per job was a tenth
    /// of the server's work per array task with 16 nodes.
    gpu_models: Vec<String>,
    /// The core's live cluster: nodes, who holds which GPU, the queue and the pass.
    cluster: LiveCluster,
    /// A pass is due (a job arrived or GPUs were freed or nodes changed).
    sched_due: bool,
    waiters: BTreeMap<u64, Vec<oneshot::Sender<gpusched_wire::JobView>>>,
    pub tokens: Tracked<u64, TokenRecord>,
    pub queues: Queues,
    /// Queue name → the core's id; grows, never reuses (ids of removed queues stay).
    queue_ids: BTreeMap<String, QueueId>,
    /// The pending jobs waiting for each job to end (`deps.rs`).
    dependents: deps::Dependents,
    pub touched: Touched,
    /// The time of this round (`begin_round`); the state never reads a clock.
    now: Now,
    /// Pending jobs per user, counted once per round when a submission needs them (see
    /// `limits.rs`); dropped at the end of every round.
    pending_count: Option<HashMap<String, usize>>,
    /// Each GPU's last energy reading and the jobs' sub-Joule remainders (`energy.rs`).
    energy: energy::Meter,
    /// The job events and audit entries of this round, written with its rows
    /// (`history.rs`).
    journal: history::Journal,
    /// What is kept of ended jobs, which live in the store (`ended.rs`).
    ended: ended::Ended,
    /// The arrays that have not ended: which may materialise tasks, and their live tasks
    /// (`array.rs`).
    arrays: BTreeMap<u64, array::ArrayRun>,
    /// Array tasks listed in their array's row (`unwritten.rs`).
    listed: unwritten::Listed,
    /// Which live array tasks the store holds as compact records, which as job rows.
    task_rows: compact::TaskRows,
    /// The run-time predictor and attained service, kept in `meta` (`learn.rs`).
    learnt: learn::Learnt,
    /// Jobs a preemptive policy asked to stop, and why (`preempt.rs`).
    policy_preempted: BTreeMap<u64, String>,
    /// What checkpoints cost here, measured from preemptions (`checkpoint_cost.rs`).
    checkpoint_cost: checkpoint_cost::CheckpointCost,
    /// Inference services and what gateways last said (`services/`).
    pub services: services::Services,
    /// Job steps of live jobs (and of jobs that ended this round), by (job, step)
    /// (`steps.rs`).
    pub steps: Tracked<(u64, u32), gpusched_wire::step::StepView>,
    /// A running step's first terminal size and `TERM` (not stored: a restart ends it).
    step_requests: BTreeMap<(u64, u32), (u16, u16, Option<String>)>,
    /// Steps of ended jobs the actor read from the store for this round's commands.
    recalled_steps: BTreeMap<u64, Vec<gpusched_wire::step::StepView>>,
    /// Advance reservations by name (`reservations.rs`); every change is written at the
    /// end of its round.
    pub reservations: Tracked<String, gpusched_store::ReservationRecord>,
    /// Interactive allocations' idle GPUs: the watches, the time held idle (`idle.rs`).
    idle: idle::Idle,
    /// Consolidation's idle times, the nodes down, the idle node-hours (`power.rs`).
    power: power::PowerTrack,
    /// When the fair-share usage was last written (`accounts.rs`).
    fair_writes: accounts::FairWrites,
}

/// Thousandths of a GPU a job holds (or held): its whole GPUs plus its slice's fraction.
pub(super) fn held_milli(v: &gpusched_wire::JobView) -> u64 {
    u64::from(v.gpus) * 1000 + v.slice_at.as_ref().map_or(0, |a| u64::from(a.milli))
}

impl State {
    /// Rebuilds the state from the store at `now`. Nodes of the last life are
    /// unreachable until their agents register again: nothing new is placed on them, and
    /// their jobs are kept for one node lease from now (`liveness.rs`).
    pub fn load(
        cfg: Arc<ServerConfig>,
        mut jobs: Vec<JobRecord>,
        nodes: Vec<NodeRecord>,
        tokens: Vec<TokenRecord>,
        queues: Queues,
        now: Now,
    ) -> Self {
        let mut policy = PolicyConfig::new(cfg.policy);
        policy.las_limits = cfg.las_limits.clone();
        if let Some(a) = cfg.promote_after {
            policy.promote_after = a;
        }
        policy.rr_quantum = cfg.rr_quantum;
        policy.time_slice = cfg.time_slice;
        policy.usage_half_life = cfg.usage_half_life.map(|d| d.as_secs_f64());
        // Live backfill reserves on a real node, and a job without a walltime never
        // passes the reservation (see `gpusched_core::policy::backfill_nodes`).
        policy.backfill_nodes = true;
        let share_placement = cfg.share_placement;
        let mut st = State {
            instance: format!("{:x}-{:x}", now.ms, std::process::id()),
            now,
            cfg,
            jobs: Tracked::new(),
            next_id: 1,
            retry_keys: HashMap::new(),
            nodes: Tracked::new(),
            gpu_models: Vec::new(),
            cluster: LiveCluster::new(policy, share_placement),
            sched_due: true,
            waiters: BTreeMap::new(),
            tokens: Tracked::stored(tokens.into_iter().map(|t| (t.id, t))),
            queues: Queues::default(),
            queue_ids: BTreeMap::new(),
            dependents: Default::default(),
            touched: Touched::default(),
            pending_count: None,
            energy: energy::Meter::default(),
            journal: history::Journal::default(),
            ended: ended::Ended::default(),
            arrays: BTreeMap::new(),
            listed: Default::default(),
            task_rows: Default::default(),
            learnt: Default::default(),
            policy_preempted: BTreeMap::new(),
            checkpoint_cost: Default::default(),
            services: Default::default(),
            steps: Tracked::new(),
            step_requests: BTreeMap::new(),
            recalled_steps: BTreeMap::new(),
            reservations: Tracked::new(),
            idle: Default::default(),
            power: Default::default(),
            fair_writes: Default::default(),
        };
        st.apply_queues(queues);
        st.cluster.set_follow(st.cfg.follow);
        st.cluster
            .set_min_runtime_ms(st.cfg.min_runtime.as_millis() as u64);
        st.cluster.set_resize_cost(st.cfg.resize_cost.as_secs_f64());
        for record in nodes {
            let name = record.register.node.clone();
            st.nodes
                .insert_stored(name, NodeEntry::new(record, now.instant));
        }
        st.refresh_nodes();
        let now = now.secs();
        // The tasks arrays list without rows of their own, rebuilt, in id order with the
        // rest (as the store loads them).
        let rebuilt = unwritten::rebuild_listed(&jobs);
        let listed: BTreeSet<u64> = rebuilt.iter().map(|t| t.view.id).collect();
        let mut trimmed = BTreeSet::new();
        if !rebuilt.is_empty() {
            jobs.extend(rebuilt);
            jobs.sort_by_key(|j| j.view.id);
        }
        for job in jobs {
            let v = &job.view;
            st.next_id = st.next_id.max(v.id + 1);
            if v.state.is_terminal() {
                // Ended jobs stay in the store (the server loads only live ones; one
                // given here is only counted).
                *st.ended
                    .counts
                    .entry((v.queue.clone(), v.state))
                    .or_default() += 1;
                continue;
            }
            if let Some(t) = &job.client_token {
                st.retry_keys.insert(t.clone(), v.id);
            }
            let (id, state) = (v.id, v.state);
            // In the map first: restoring may have to mark the run lost (a change, so
            // written; the row as loaded is not).
            st.jobs.insert_stored(id, Box::new(job.clone()));
            st.array_loaded(&job);
            if let Some(t) = job.view.array_task.filter(|_| listed.contains(&id)) {
                // A list longer than this binary keeps: the rest get their rows, and
                // the array's row lists what is kept, in the first round.
                if !st.list_unwritten(t.array_id, id) {
                    st.jobs.store_itself(&id);
                    trimmed.insert(t.array_id);
                }
            }
            // An array holds no GPUs itself: its running tasks are restored as jobs.
            if !state.is_terminal()
                && st.queue_if_ready(&job)
                && job.view.array.is_none()
                && matches!(state, JobState::Starting | JobState::Running)
            {
                st.restore_running(&job, now);
            }
        }
        for array_id in trimmed {
            st.relist(array_id);
        }
        st.restore_follows();
        st.tell_runs_all();
        st
    }

    /// The state rebuilt from the store after a failed commit: what was acknowledged,
    /// and nothing of the round that failed. The queue configuration, the clients
    /// waiting for jobs to end and the instance carry over, so agents keep polling (a
    /// poll writes nothing, so a full disk does not make them fence their jobs); each
    /// node's generation moves past the old one, so every agent is answered with the
    /// reloaded desired state, and events refused with the round are sent again by
    /// their agents until acknowledged.
    pub fn reloaded(
        self,
        jobs: Vec<JobRecord>,
        nodes: Vec<NodeRecord>,
        tokens: Vec<TokenRecord>,
    ) -> State {
        let mut st = State::load(
            self.cfg.clone(),
            jobs,
            nodes,
            tokens,
            self.queues.clone(),
            self.now,
        );
        st.instance = self.instance;
        for (name, n) in st.nodes.iter_mut_unstored() {
            if let Some(old) = self.nodes.get(name) {
                n.gen = old.gen + 1;
                n.watch.send_replace(n.gen);
            }
        }
        st.waiters = self.waiters;
        st
    }

    /// Starts a round at `now`: every change and answer of the round is made at this
    /// time (the actor reads the clock once per round; tests choose it).
    pub fn begin_round(&mut self, now: Now) {
        self.now = now;
        self.clear_recalled();
    }

    /// Ids start after `max_id`, the highest the store ever held (ended jobs are not
    /// loaded, so the loaded ones do not say).
    pub fn ids_after(&mut self, max_id: u64) {
        self.next_id = self.next_id.max(max_id.saturating_add(1));
    }

    fn enqueue(&mut self, job: &JobRecord) {
        if job.view.array.is_some() {
            // An array never enters the core's queue: its tasks do (`array.rs`).
            self.array_ready(job.view.id);
            return;
        }
        let q = self.queue_id(&job.view.queue);
        let mut live = self.live_job(&job.view, q);
        live.group = self.job_group(&job.view);
        // Made once, as the job enters the core's queue: wait reasons and follow slots
        // build their own `LiveJob` per view and need no preference (it narrows no node).
        live.prefer = self.prefer_of(&job.view);
        let account = self.account_id(job.view.account.as_deref());
        self.cluster.add_charged(&live, account);
        self.predict_estimate(&job.view);
    }

    /// The tasks of an array with a `%K` limit are a group in the core: at most K of
    /// them hold GPUs at once, and they follow only each other.
    fn job_group(&self, v: &gpusched_wire::JobView) -> Option<gpusched_core::live::JobGroup> {
        let array = v.array_task.map(|t| t.array_id).or(v.array.map(|_| v.id))?;
        let spec = self.jobs.get(&array)?.view.array?;
        spec.max_running.map(|k| gpusched_core::live::JobGroup {
            id: array,
            max_running: k,
        })
    }

    fn queue_id(&mut self, name: &str) -> QueueId {
        let next = QueueId(self.queue_ids.len() as u32);
        *self.queue_ids.entry(name.to_string()).or_insert(next)
    }

    /// Installs a queue configuration: caps and weights go to the core.
    fn apply_queues(&mut self, queues: Queues) {
        let mut limits = BTreeMap::new();
        let mut weights = BTreeMap::new();
        let mut per_user = BTreeMap::new();
        for (name, def) in &queues.defs {
            let id = self.queue_id(name);
            if let Some(max) = def.max {
                limits.insert(id, max);
            }
            if let Some(max) = def.max_gpus_per_user {
                per_user.insert(id, max);
            }
            weights.insert(id.0, def.weight);
        }
        self.cluster.set_queues(limits, weights);
        self.cluster.set_user_caps(per_user);
        // Quota reclaim and priority tiers try the queues by name.
        let rules = queues
            .defs
            .iter()
            .map(|(name, def)| gpusched_core::live::QueueRules {
                queue: self.queue_id(name),
                quota: def.quota,
                preemptible: def.preemptible,
                preempt_lower_priority: def.preempt_lower_priority,
                priority_tiers: def.priority_tiers.clone(),
            })
            .collect();
        self.cluster.set_queue_rules(rules);
        let old = std::mem::take(&mut self.queues.accounts);
        self.apply_accounts(&old, &queues.accounts);
        self.queues = queues;
        self.sched_due = true;
    }

    /// A new queue file (reload). Refused, keeping the old one, if it drops a queue that
    /// still has live jobs: nothing is lost by a reload.
    pub fn reload_queues(&mut self, queues: Queues) -> Result<(), String> {
        let orphaned: BTreeSet<&str> = self
            .jobs
            .values()
            .filter(|j| !j.view.state.is_terminal() && !queues.defs.contains_key(&j.view.queue))
            .map(|j| j.view.queue.as_str())
            .collect();
        if !orphaned.is_empty() {
            return Err(format!(
                "the new queue file drops queue(s) {} that still have pending or running jobs; \
                 keep them until their jobs end (the old configuration stays in force)",
                orphaned.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        self.apply_queues(queues);
        // Only the server reloads (on SIGHUP): no person to name.
        let now = format!("queues now: {}", self.queues.names());
        self.audit(
            "server",
            gpusched_wire::history::AuditAction::QueueReload,
            "queues".into(),
            now,
        );
        Ok(())
    }

    /// GPUs held by each queue's starting and running jobs, from the core; slices count
    /// by their fraction of a GPU, rounded up over the queue.
    pub fn queue_usage(&self) -> BTreeMap<&str, u32> {
        let milli = self.cluster.queue_milli();
        self.queue_ids
            .iter()
            .filter_map(|(name, id)| Some((name.as_str(), milli.get(id)?.div_ceil(1000) as u32)))
            .collect()
    }

    /// The jobs starting or running on `node`.
    pub(super) fn jobs_on(&self, node: &str) -> Vec<u64> {
        self.cluster.jobs_on(node).into_iter().collect()
    }

    fn restore_running(&mut self, job: &JobRecord, now: f64) {
        let v = &job.view;
        if v.parts.len() > 1 {
            self.restore_gang(job, now);
            return;
        }
        if v.parts.is_empty() {
            // Placed before schema 3: its one part is its node.
            self.fill_part_zero(v.id);
        }
        let node = v.node.clone().unwrap_or_default();
        let slice = v.slice_at.as_deref().map(live_map::slice_to_core);
        if !self
            .cluster
            .restore(v.id, &node, &v.gpu_indices, slice.as_ref(), now)
        {
            // The stored state is inconsistent (two jobs on one GPU, an unknown node):
            // treat the run as lost rather than let the core start it a second time.
            tracing::warn!(
                job = v.id,
                node,
                "could not restore a running job's GPUs; requeued"
            );
            self.lose(
                v.id,
                "its GPUs could not be restored after a server restart",
            );
        }
    }

    /// A running job stored before parts existed (schema 2): its part 0 is its node, so
    /// polls and `show` treat it as every other job.
    fn fill_part_zero(&mut self, id: u64) {
        let Some(v) = self.jobs.get(&id).map(|j| &j.view) else {
            return;
        };
        let Some(node) = v.node.clone() else {
            return;
        };
        let part = gpusched_wire::JobPart {
            rank: 0,
            addr: self
                .nodes
                .get(&node)
                .and_then(|n| n.record.register.advertise_addr.clone()),
            node,
            gpu_indices: v.gpu_indices.clone(),
            state: if v.state == JobState::Running {
                gpusched_wire::PartState::Running
            } else {
                gpusched_wire::PartState::Starting
            },
            exit_code: None,
            signal: None,
        };
        if let Some(job) = self.jobs.get_mut(&id) {
            job.view.parts = vec![part];
        }
    }

    /// A gang that was starting or running when the server stopped: every part's GPUs
    /// are taken again at once, or none (then the run is lost, as for one node).
    fn restore_gang(&mut self, job: &JobRecord, now: f64) {
        let parts = live_map::parts(&job.view);
        if !self.cluster.restore_parts(job.view.id, &parts, now) {
            tracing::warn!(
                job = job.view.id,
                "could not restore a running gang's GPUs; requeued"
            );
            self.lose(
                job.view.id,
                "its GPUs could not be restored after a server restart",
            );
        }
    }

    /// Tells the core which nodes are online now; jobs stranded by the change are lost.
    fn refresh_nodes(&mut self) {
        self.gpu_models = speed::models_of(self.nodes.values());
        let live = self
            .nodes
            .values()
            .filter(|n| n.present())
            .map(|n| {
                let mut node = gpusched_core::live::LiveNode {
                    follows: n.follows,
                    unreachable: n.unreachable_reason(),
                    ..live_map::node(&n.record, &self.cfg.topology)
                };
                live_map::offer_serving(&mut node, n.serves);
                live_map::offer_holding(&mut node, n.holds);
                node
            })
            .collect();
        for id in self.cluster.set_nodes(live) {
            self.lose(id, "its node left the cluster");
        }
        // A gang that kept some of its nodes: the part on the node that left is lost, the
        // others are stopped, and the gang (holding their GPUs until they have) requeues
        // as one when the last has ended.
        let now = self.now.ms;
        for (id, node) in self.cluster.take_lost_parts() {
            let outcome = gpusched_wire::Outcome::Lost {
                message: format!("its node {node} left the cluster"),
            };
            self.gang_part_ended(id, &node, &outcome, now);
        }
        self.sched_due = true;
    }

    /// The rows changed since the last call, for the actor to write; the marks clear.
    pub fn take_touched(&mut self) -> Rows {
        self.end_orphan_steps();
        self.tell_runs_touched();
        self.keep_unwritten_in_arrays();
        Rows {
            jobs: self.jobs.take_touched(),
            nodes: self.nodes.take_touched(),
            tokens: self.tokens.take_touched(),
            services: self.services.records.take_touched(),
            steps: self.steps.take_touched(),
            reservations: self.reservations.take_touched(),
        }
    }

    fn bump(&mut self, node: &str) {
        bump_node(&mut self.nodes, &mut self.touched, node);
    }

    /// Runs the core's round if anything changed since the last one, and applies what
    /// it decided: starts, follows, the policy's victims, a quota reclaim, a priority
    /// tier preemption (`gpusched_core::live::round`).
    pub fn schedule(&mut self) {
        self.pending_count = None;
        // The runs of the rows changed since the last round, before anything is
        // decided on them.
        self.tell_runs_touched();
        // Services every round (time alone ends a backoff or a drain, and moves the
        // autoscaler's windows): the replicas they start are placed in this round.
        self.reconcile_services();
        self.tend_reservations();
        self.tend_power();
        if !self.sched_due {
            return;
        }
        self.sched_due = false;
        let now_ms = self.now.ms;
        // FGD's target workload for the shares that wait: the recent demand.
        let share_target = if self.cluster.slices_waiting() {
            self.share_target(now_ms as f64 / 1000.0)
        } else {
            Vec::new()
        };
        // Array tasks that could start or follow are jobs of their own before the round.
        self.materialise_arrays(false);
        let (jobs, learnt, policy) = (&self.jobs, &self.learnt, self.cfg.policy);
        let round = self.cluster.round(gpusched_core::live::RoundInput {
            now_ms,
            share_target: &share_target,
            guess: &|id| follow::guess(jobs, learnt, policy, id),
        });
        for start in round.starts {
            self.apply_placement(start);
        }
        self.apply_follows(round.follows);
        // The starts opened places to follow that arrays may fill with tasks now: the
        // core follows them on the same rule.
        if self.materialise_arrays(true) {
            let (jobs, learnt, policy) = (&self.jobs, &self.learnt, self.cfg.policy);
            let follows = self
                .cluster
                .follow_pass(|id| follow::guess(jobs, learnt, policy, id));
            self.apply_follows(follows);
        }
        self.preempt_for_policy(&round.policy_victims);
        if let Some(r) = round.reclaim {
            self.apply_reclaim(r);
        }
        if let Some(s) = round.serving {
            self.apply_serving(s);
        }
        if let Some(t) = round.tier {
            self.apply_tier(t);
        }
        if let Some(e) = round.elastic {
            self.apply_elastic(e);
        }
    }

    /// Moves a job the core placed to `starting` on its nodes, with the GPU indices (or
    /// slice) the core picked on each: one part per node, in rank order (see `gang.rs`).
    fn apply_placement(&mut self, p: LivePlacement) {
        let Some(first) = p.parts.first().cloned() else {
            return;
        };
        let id = p.job;
        if !self.set_state(id, &[CoreState::Starting]) {
            // Not a pending job (a bug, logged): the core gives its GPUs back.
            let back = self.cluster.requeue(id, self.now.secs());
            self.send_back(&back, id);
            return;
        }
        self.array_task_placed(id);
        self.replica_placed(id);
        let parts = self.parts_of(&p);
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        job.attempt_nodes
            .insert(job.view.attempt, first.node.to_string());
        job.first_failure = None;
        let v = &mut job.view;
        v.node = Some(first.node.clone());
        v.gpu_indices = first.gpus;
        v.slice_at = first.slice.map(|s| Box::new(live_map::slice_to_wire(s)));
        if v.split {
            // The scheduler chose the layout.
            v.nodes = parts.len() as u32;
            v.gpus_per_node = v.gpu_indices.len() as u32;
        }
        v.parts = parts;
        v.reason = if v.parts.len() > 1 {
            format!(
                "sent to {}; waiting for {} to reserve MASTER_PORT",
                gang::nodes_of(v),
                first.node
            )
        } else {
            format!("sent to {}", first.node)
        };
        v.master_port = None;
        v.start_ms = None;
        let at = history::placement(v);
        self.bump_job(id);
        self.note(id, JobEventKind::Placed, at);
    }

    /// A job leaves its node (it ended, was lost or cancelled): the node's desired state
    /// changes and a pass is due. Its GPUs are freed by the core (`remove`, `requeue`).
    fn release(&mut self, id: u64) {
        // Every part's node: an agent whose part is still running learns the attempt is
        // no longer wanted and stops it.
        self.bump_job(id);
        self.sched_due = true;
    }

    /// Ends a job for good.
    fn end(&mut self, id: u64, state: JobState, reason: String, at_ms: u64) {
        let Some(from) = self.jobs.get(&id).map(|j| j.view.state) else {
            return;
        };
        let to = transition::to_core(state);
        // A run that ends on its own from `starting` ran (its start event came late).
        let ran =
            from == JobState::Starting && matches!(state, JobState::Succeeded | JobState::TimedOut);
        let path: &[CoreState] = if ran {
            &[CoreState::Running, to]
        } else {
            &[to]
        };
        if !self.set_state(id, path) {
            return;
        }
        self.release(id);
        self.learn_from_end(id, state, at_ms);
        self.policy_preempted.remove(&id);
        let left = self.unqueue(id);
        let used = self.jobs.get(&id).map(|j| used_text(&j.view, at_ms));
        self.note_at(
            id,
            JobEventKind::Ended,
            at_ms,
            format!("{}: {reason}{}", state.name(), used.unwrap_or_default()),
        );
        if let Some(job) = self.jobs.get_mut(&id) {
            job.view.reason = reason;
            job.view.end_ms = Some(at_ms);
            job.view.preempt_requested = false;
            self.touched.ended.insert(id);
        }
        self.array_member_ended(id, state, at_ms);
        self.replica_ended(id);
        self.settle_dependents(id, at_ms);
        // Last: the job queued behind it starts on its GPUs (see `follow.rs`).
        self.after_leaving(left, id);
    }

    /// A run was lost (its node died or forgot it): requeue with the next attempt
    /// number while retries last, else fail. A job being cancelled just ends cancelled.
    fn lose(&mut self, id: u64, why: &str) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let v = &job.view;
        // Ended, or already requeued (a gang on two nodes that died together).
        if v.state.is_terminal() || v.state == JobState::Pending {
            return;
        }
        let node = gang::nodes_of(v);
        let now = self.now.ms;
        if v.cancel_requested {
            self.end(id, JobState::Cancelled, format!("cancelled ({why})"), now);
            return;
        }
        // Preemptions, stopped agents and followers sent back take attempt numbers too,
        // but do not use up retries.
        let free = v
            .preemptions
            .saturating_add(job.agent_stops)
            .saturating_add(job.recalls);
        let lost = v.attempt - free.min(v.attempt);
        if lost > v.max_retries {
            let reason = reasons::no_retries_left(lost, &node, why, v.max_retries);
            self.end(id, JobState::Failed, reason, now);
            return;
        }
        let reason = format!(
            "requeued after attempt {} on {node} was lost: {why}",
            v.attempt
        );
        self.requeue_run(id, now, CoreState::Lost, reason);
    }

    /// A run ended without an outcome of its own (lost, preempted, stopped): the job goes
    /// back in the queue with the next attempt number, no node and no GPUs; a preemption
    /// asked of that run is moot (the next run starts fresh). The caller counts why
    /// (retries, preemptions, agent stops) on the record this returns. `via` is the
    /// core's intermediate state of the path (`Lost` or `Preempting`).
    fn requeue_run(
        &mut self,
        id: u64,
        now: u64,
        via: CoreState,
        reason: String,
    ) -> Option<&mut JobRecord> {
        if !self.set_state(id, &[via, CoreState::Pending]) {
            return None;
        }
        // Before the run's nodes are forgotten: the event names them (and what the run
        // used, which the next attempt starts over from).
        let used = self
            .jobs
            .get(&id)
            .map(|j| used_text(&j.view, now))
            .unwrap_or_default();
        self.note(id, JobEventKind::Requeued, format!("{reason}{used}"));
        self.release(id);
        let back = self.cluster.requeue(id, now as f64 / 1000.0);
        self.send_back(&back, id);
        self.remember_attained(id);
        // A policy's reason for a preemption is moot once the run ended another way.
        self.policy_preempted.remove(&id);
        let job = self.jobs.get_mut(&id)?;
        let v = &mut job.view;
        v.reason = reason;
        v.attempt += 1;
        v.preempt_requested = false;
        v.node = None;
        v.gpu_indices.clear();
        v.slice_at = None;
        v.start_ms = None;
        v.usage = None;
        v.parts.clear();
        v.master_port = None;
        if v.split {
            // The next placement chooses again.
            v.nodes = 0;
            v.gpus_per_node = 0;
        }
        job.first_failure = None;
        Some(job)
    }

    /// A preempted run ended: back in the queue with the next attempt number, its
    /// attained service kept (the core's view of the job stays), retries untouched.
    fn requeue_preempted(&mut self, id: u64) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let by_policy = self.policy_preempted.remove(&id);
        let reason = match (self.preempt_cause(id), by_policy) {
            (Some(cause), _) | (None, Some(cause)) => {
                format!("requeued without using a retry: {cause}")
            }
            (None, None) => format!(
                "preempted on {} to return GPUs to another queue's quota; requeued",
                gang::nodes_of(&job.view)
            ),
        };
        if let Some(job) = self.requeue_run(id, self.now.ms, CoreState::Preempting, reason) {
            job.view.preemptions += 1;
            job.view.last_checkpoint_ms = None;
        }
    }

    /// A run stopped because its agent was told to stop: back in the queue with the next
    /// attempt number and no retry used. An agent stops all its jobs before it goes, so
    /// when the node holds none any more it leaves the cluster (offline until its agent
    /// registers again) instead of being given work nobody will start.
    /// `node` is the stopping agent's (for a gang, the part that reported it first).
    fn requeue_stopped(&mut self, id: u64, why: &str, node: Option<&str>) {
        let Some(node) = node
            .map(str::to_string)
            .or_else(|| self.jobs.get(&id).and_then(|j| j.view.node.clone()))
        else {
            return;
        };
        let attempt = self.jobs.get(&id).map_or(0, |j| j.view.attempt);
        let reason = format!(
            "requeued without using a retry: attempt {attempt} was stopped on {node} ({why})"
        );
        if let Some(job) = self.requeue_run(id, self.now.ms, CoreState::Lost, reason) {
            job.agent_stops += 1;
        }
        let empty = self.cluster.jobs_on(&node).is_empty();
        if empty {
            if let Some(n) = self.nodes.get_mut_unstored(&node) {
                tracing::info!(node = %node, "its agent stopped: node offline until it registers again");
                n.liveness = Liveness::Offline;
            }
            self.refresh_nodes();
        }
    }

    /// Hands out the waiters of jobs that ended this round (called after the commit).
    pub fn take_ended_waiters(
        &mut self,
    ) -> Vec<(
        oneshot::Sender<gpusched_wire::JobView>,
        gpusched_wire::JobView,
    )> {
        let ended = std::mem::take(&mut self.touched.ended);
        let mut out = Vec::new();
        for id in ended {
            if let (Some(ws), Some(job)) = (self.waiters.remove(&id), self.jobs.get(&id)) {
                // The view as `get` shows it (an array's counts included).
                let v = self.view(job);
                for w in ws {
                    out.push((w, v.clone()));
                }
            }
        }
        out
    }
}

/// A new generation of `node`'s desired state (its agent is told after the commit).
fn bump_node(nodes: &mut Tracked<String, NodeEntry>, touched: &mut Touched, node: &str) {
    if let Some(n) = nodes.get_mut_unstored(node) {
        n.gen += 1;
        if !touched.bumped.contains(node) {
            touched.bumped.insert(node.to_string());
        }
    }
}

/// What the attempt of `v` that ends at `end_ms` used, as its timeline says it after
/// how it ended (`; used CPU 1h02m (0.9 cores avg), peak memory ...`); empty where its
/// agents measured nothing.
fn used_text(v: &gpusched_wire::JobView, end_ms: u64) -> String {
    let Some(u) = v.usage.as_deref() else {
        return String::new();
    };
    let ran = v.start_ms.map(|s| end_ms.saturating_sub(s));
    format!(
        "; used {}",
        gpusched_wire::contain::usage_text(u, ran, v.mem_mib, v.parts.len().max(1) as u32)
    )
}

impl NodeEntry {
    fn new(record: NodeRecord, now: Instant) -> Self {
        NodeEntry {
            record,
            // Known from the store or just registering: `register_as` makes it online.
            liveness: Liveness::Unreachable,
            last_seen: now,
            gen: 0,
            watch: watch::channel(0).0,
            telemetry: None,
            ecc_base: None,
            follows: false,
            limits: false,
            serves: true,
            holds: true,
            steps: false,
            offers: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests;
