//! Why a waiting job waits, decided here and only worded by the server
//! (`server/src/state/reasons.rs`). Checks run in the order a user can act on them:
//! a hold, dependencies, a follow, a claim, the queue's caps, whether any online node
//! could ever hold the job, free GPUs, then the policy's order. Holds and how
//! dependencies ended are the server's facts (its rows); it hands them in as
//! [`Blocked`].

use std::collections::BTreeMap;

use super::caps;
use super::cluster::{LiveCluster, LiveJob};
use super::node::LiveNode;
use super::place::ask_milli;
use super::slice::SliceAsk;
use crate::gang::Gang;
use crate::room::{Amount, RoomWait};
use crate::QueueId;

/// How a job runs after another (Slurm's `afterok`, `afterany`, `afternotok`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum After {
    /// `after`: the other must succeed.
    Ok,
    /// `after_any`: the other must end, however it ends.
    Any,
    /// `after_notok`: the other must end without succeeding.
    NotOk,
}

/// What keeps a pending job out of the core's queue, as the server's rows say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Blocked {
    /// A person held it.
    pub held: bool,
    /// The jobs it runs after that have not ended yet, each with how it waits for it.
    pub unmet: Vec<(After, u64)>,
}

/// Why one pending job is not running.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitReason {
    /// A person held it; once released it still waits for `unmet`, if any.
    Held { unmet: Vec<(After, u64)> },
    /// Jobs it runs after have not ended as it needs yet.
    Dependency { unmet: Vec<(After, u64)> },
    /// It is queued on `node` behind job `after`, to start on its GPUs when that ends.
    Following { after: u64, node: String },
    /// It reclaimed its queue's quota on `node` and starts there first once the
    /// preempted jobs have left.
    Reclaimed { node: String },
    /// A slice job whose queue's GPUs (slices by fraction, rounded up) would pass its
    /// `max` with it.
    SliceQueueAtCap { held_milli: u64, max: u32 },
    /// A slice job no online node has room for now.
    NoSliceRoom { mig: bool },
    /// It asks for more than its queue may ever hold (a reload lowered `max`).
    LargerThanQueue { max: u32, gpus: u32 },
    /// Its queue's jobs hold `held` of its `max` GPUs.
    QueueAtCap { held: u32, max: u32 },
    /// Its user's jobs in its queue hold `held` of `max_gpus_per_user`.
    UserAtCap { held: u64, cap: u32 },
    /// Starting it would take what the nodes draw at their caps to `would_w`, over the
    /// cluster's power budget of `budget_w` (`crate::power`).
    PowerBudget { budget_w: u64, would_w: u64 },
    /// Some node has `gpus` GPUs free, but on none of them does the per-node power
    /// budget of `node_w` let that many more start.
    NodePowerBudget { node_w: u64, gpus: u32 },
    /// It runs in a container image and no node's agent runs images.
    NoImageRuntime,
    /// No online node is one its node rules (partitions, constraint, node lists) admit:
    /// each node's first refusal, in node order (at most 8, and how many more).
    NoEligibleNode {
        refusals: Vec<(String, crate::eligible::Refusal)>,
        more: usize,
    },
    /// Nodes its rules admit exist (`eligible` of them, of its model and large enough),
    /// but none has `gpus` GPUs free now: `free_max` is the most free on one.
    EligibleBusy {
        eligible: u32,
        gpus: u32,
        free_max: u32,
    },
    /// It runs in reservation `name`, which no longer exists.
    ReservationGone { name: String },
    /// It runs in reservation `name`, whose window (seconds) is not open now.
    ReservationClosed { name: String, start: f64, end: f64 },
    /// Reservation `name` (its window opens at `start`, or is `open`) keeps it off the
    /// only nodes that could hold it now: its walltime (or, without `walltime`, no
    /// walltime) would run into the window.
    KeptOutByReservation {
        name: String,
        start: f64,
        open: bool,
        walltime: bool,
    },
    /// No online node has enough GPUs (of its model) at all.
    NoNodeCanHold { gpus: u32, model: Option<String> },
    /// Nodes that could hold it exist, but every one is out of service now: drained,
    /// or with too many unhealthy GPUs. Each such node with why, in name order.
    OutOfService { nodes: Vec<(String, String)> },
    /// Nodes with its GPUs exist, but none has the CPUs, memory or generic resources it
    /// asks for together with them.
    NoNodeHasRoom,
    /// GPUs are free, but `node` (the one that lacks least) lacks CPUs, memory or
    /// generic resources that running jobs hold.
    WaitingForRoom { node: String, wait: RoomWait },
    /// Nodes that could hold it exist but none has enough free GPUs now.
    WaitingForGpus {
        gpus: u32,
        model: Option<String>,
        free_max: u32,
        waiting: usize,
    },
    /// `backfill` on nodes: GPUs are free, but the blocked `head` job reserved them on
    /// `node` (a gang's nodes, comma-separated; expected free at `shadow`, seconds;
    /// `None` when no walltime says): only a job whose walltime ends by then, or one
    /// that leaves those GPUs alone, starts first.
    Reserved {
        head: u64,
        node: String,
        shadow: Option<f64>,
    },
    /// A gang no set of online nodes could ever hold: it needs `nodes` nodes with
    /// `per_node` GPUs (of its model prefix, one model unless `mixed`; with its CPUs,
    /// memory and generic resources each when `room`) and `have` such nodes are online.
    GangNeverFits {
        nodes: u32,
        per_node: u32,
        model: Option<String>,
        mixed: bool,
        room: bool,
        have: u32,
    },
    /// A gang waiting for `nodes` nodes with `per_node` free GPUs (and room) each:
    /// `free_nodes` have them now.
    WaitingForNodes {
        nodes: u32,
        per_node: u32,
        model: Option<String>,
        free_nodes: u32,
        waiting: usize,
    },
    /// GPUs are free but jobs ahead of it in the policy's order start first.
    Behind { ahead: usize },
    /// Nothing holds it: it starts in the next pass.
    Next,
}

/// What every waiting job's reason needs, worked out once (a list of 100k pending jobs
/// must stay linear).
#[derive(Clone, Debug, Default)]
pub struct WaitContext {
    /// Thousandths of a GPU each queue's placed jobs hold.
    queue_milli: BTreeMap<QueueId, u64>,
    /// Thousandths each user's placed jobs hold per queue.
    user_milli: BTreeMap<(QueueId, String), u64>,
    waiting: usize,
    /// A waiting whole-GPU job → how many come before it in the pass (serving jobs
    /// first, each part in the policy's order).
    pub(super) ahead: BTreeMap<u64, usize>,
    /// The online nodes by (GPU model, whole-GPU capacity), with the most whole GPUs
    /// free on one of them: a job's reason looks at these few kinds, not at every node.
    kinds: BTreeMap<(String, u32), u32>,
    /// GPU model → the most GPUs new whole-GPU jobs may use on one node that is not
    /// drained (healthy, not in MIG mode).
    usable: BTreeMap<String, u32>,
}

impl LiveCluster {
    pub fn wait_context(&self) -> WaitContext {
        let names: BTreeMap<_, _> = self.users.iter().map(|(n, &u)| (u, n.clone())).collect();
        let mut user_milli: BTreeMap<(QueueId, String), u64> = BTreeMap::new();
        for ((q, u), m) in self.held_by_user() {
            if let Some(n) = names.get(&u) {
                *user_milli.entry((q, n.clone())).or_default() += m;
            }
        }
        let mut kinds: BTreeMap<(String, u32), u32> = BTreeMap::new();
        let mut usable: BTreeMap<String, u32> = BTreeMap::new();
        for n in &self.nodes {
            if !n.closed() {
                let most = usable.entry(n.model.clone()).or_default();
                *most = (*most).max(n.usable_whole_gpus());
            }
            let free = self.whole_free(&n.name);
            let most = kinds.entry((n.model.clone(), n.whole_gpus())).or_default();
            *most = (*most).max(free);
        }
        WaitContext {
            kinds,
            usable,
            queue_milli: self.queue_milli(),
            user_milli,
            waiting: self.waiting(),
            ahead: self.ahead(),
        }
    }

    /// How many waiting whole-GPU jobs each has ahead of it in the pass: the serving
    /// ones go first, in the policy's order among themselves, then the rest in it.
    fn ahead(&self) -> BTreeMap<u64, usize> {
        let order = self.waiting_order();
        let is_serving = |id: &u64| self.serving.contains(id);
        let mut serving = 0;
        let mut training = order.iter().filter(|id| is_serving(id)).count();
        let mut ahead = BTreeMap::new();
        for id in order {
            let n = if is_serving(&id) {
                &mut serving
            } else {
                &mut training
            };
            ahead.insert(id, *n);
            *n += 1;
        }
        ahead
    }

    /// Why `job` (pending; `blocked`: what the server's rows keep it out of the queue
    /// for) waits.
    pub fn wait_reason(&self, job: &LiveJob, blocked: &Blocked, ctx: &WaitContext) -> WaitReason {
        if blocked.held {
            return WaitReason::Held {
                unmet: blocked.unmet.clone(),
            };
        }
        if !blocked.unmet.is_empty() {
            return WaitReason::Dependency {
                unmet: blocked.unmet.clone(),
            };
        }
        if let Some(after) = self.following(job.id) {
            return WaitReason::Following {
                after,
                node: self.follow_node(job.id).unwrap_or_default(),
            };
        }
        if let Some(node) = self.claim_of(job.id) {
            return WaitReason::Reclaimed {
                node: node.to_string(),
            };
        }
        // Rare (image jobs only), so every node is looked at.
        if job.in_image() && !self.nodes.iter().any(LiveNode::runs_images) {
            return WaitReason::NoImageRuntime;
        }
        if let Some(why) = self.rules_wait(job) {
            return why;
        }
        if let Some(why) = self.window_wait(job) {
            return why;
        }
        let queue = job.queue;
        let held_milli = ctx.queue_milli.get(&queue).copied().unwrap_or(0);
        if let Some(ask) = &job.slice {
            if let Some(&max) = self.queue_caps.get(&queue) {
                if !caps::slice_fits(0, held_milli, ask_milli(ask), max) {
                    return WaitReason::SliceQueueAtCap { held_milli, max };
                }
            }
            return WaitReason::NoSliceRoom {
                mig: matches!(ask, SliceAsk::Mig { .. }),
            };
        }
        if let Some(&max) = self.queue_caps.get(&queue) {
            if job.gpus > max {
                return WaitReason::LargerThanQueue {
                    max,
                    gpus: job.gpus,
                };
            }
            let held = held_milli.div_ceil(1000) as u32;
            if held + job.gpus > max {
                return WaitReason::QueueAtCap { held, max };
            }
        }
        if let Some(&cap) = self.user_caps.get(&queue) {
            let key = (queue, job.user.clone());
            let held = ctx
                .user_milli
                .get(&key)
                .copied()
                .unwrap_or(0)
                .div_ceil(1000);
            if held + u64::from(job.gpus) > u64::from(cap) {
                return WaitReason::UserAtCap { held, cap };
            }
        }
        if let Some(over) = self.power_held(job.id) {
            return WaitReason::PowerBudget {
                budget_w: over.budget_w,
                would_w: over.would_w,
            };
        }
        if let Some(node_w) = self.power.budget.node_w {
            if job.slice.is_none() && job.gang.is_none() && self.node_budget_keeps_out(job.gpus) {
                return WaitReason::NodePowerBudget {
                    node_w,
                    gpus: job.gpus,
                };
            }
        }
        if let Some(gang) = &job.gang {
            if let Some(why) = self.gang_wait(job, gang, ctx) {
                return why;
            }
            return self.order_wait(job, ctx);
        }
        let model = job.model.as_deref();
        // The kinds of node (model, capacity) that could ever hold it.
        let fitting: Vec<u32> = ctx
            .kinds
            .iter()
            .filter(|((m, cap), _)| crate::resources::model_matches(m, model) && *cap >= job.gpus)
            .map(|(_, &free)| free)
            .collect();
        if fitting.is_empty() {
            return WaitReason::NoNodeCanHold {
                gpus: job.gpus,
                model: job.model.clone(),
            };
        }
        let in_service = ctx
            .usable
            .iter()
            .any(|(m, &u)| crate::resources::model_matches(m, model) && u >= job.gpus);
        if !in_service {
            // Rare (nodes out of service), so every node is looked at.
            let nodes = self
                .nodes
                .iter()
                .filter(|n| n.has_model(model) && n.whole_gpus() >= job.gpus)
                .filter_map(|n| Some((n.name.clone(), n.out_of_service()?)))
                .collect();
            return WaitReason::OutOfService { nodes };
        }
        let ask = Amount {
            cpu_milli: job.cpu_milli,
            mem_mib: job.mem_mib,
            generic: &job.resources,
        };
        let has_room = |n: &LiveNode| n.total_room().holds(ask);
        // Only a job that asks for CPUs, memory or generic resources can lack them (and
        // only then is every node looked at).
        if job.cpu_milli > 0 || job.mem_mib > 0 || !job.resources.is_empty() {
            let roomy = self
                .nodes
                .iter()
                .any(|n| n.has_model(model) && n.whole_gpus() >= job.gpus && has_room(n));
            if !roomy {
                return WaitReason::NoNodeHasRoom;
            }
            if let Some((node, wait)) = self.room_wait(job.id) {
                return WaitReason::WaitingForRoom { node, wait };
            }
        }
        let free_max = fitting.into_iter().max().unwrap_or(0);
        if free_max < job.gpus {
            return WaitReason::WaitingForGpus {
                gpus: job.gpus,
                model: job.model.clone(),
                free_max,
                waiting: ctx.waiting,
            };
        }
        self.order_wait(job, ctx)
    }

    /// Why a job with node rules waits, when the rules are why: no node admitted, or
    /// none of those admitted with its GPUs free. Rare (jobs with rules only), so every
    /// node is looked at.
    fn rules_wait(&self, job: &LiveJob) -> Option<WaitReason> {
        let rules = job.rules.as_ref().filter(|r| !r.any_node())?;
        let mut refusals = Vec::new();
        let mut admitted = Vec::new();
        for n in &self.nodes {
            match rules.refuses(n.facts()) {
                Some(r) => refusals.push((n.name.clone(), r)),
                None => admitted.push(n),
            }
        }
        if admitted.is_empty() {
            let more = refusals.len().saturating_sub(8);
            refusals.truncate(8);
            return Some(WaitReason::NoEligibleNode { refusals, more });
        }
        if job.slice.is_some() {
            return None;
        }
        // GPUs one node must hold: the job's, or a gang part's smallest shape.
        let need = match &job.gang {
            Some(g) => g
                .shapes(job.gpus)
                .iter()
                .map(|s| s.1)
                .min()
                .unwrap_or(job.gpus),
            None => job.gpus,
        };
        let model = job.model.as_deref();
        let fitting: Vec<&&LiveNode> = admitted
            .iter()
            .filter(|n| n.has_model(model) && n.whole_gpus() >= need)
            .collect();
        if fitting.is_empty() {
            // The usual reasons say what no node has (GPUs of its model).
            return None;
        }
        let free_max = fitting
            .iter()
            .filter(|n| !n.closed())
            .map(|n| self.whole_free(&n.name))
            .max()
            .unwrap_or(0);
        (free_max < need).then_some(WaitReason::EligibleBusy {
            eligible: fitting.len() as u32,
            gpus: need,
            free_max,
        })
    }

    /// Why a job that could start now on the GPUs free waits: a reservation, or jobs
    /// ahead of it.
    fn order_wait(&self, job: &LiveJob, ctx: &WaitContext) -> WaitReason {
        let ahead = ctx.ahead.get(&job.id).copied().unwrap_or(0);
        if let Some(r) = self.scheduler.node_reservation() {
            // A gang head reserves several nodes: all of them, named.
            let names: Vec<&str> = r
                .nodes
                .iter()
                .filter_map(|(n, _)| self.nodes.get(n.index()))
                .map(|n| n.name.as_str())
                .collect();
            if r.head.0 != job.id && ahead > 0 && !names.is_empty() {
                return WaitReason::Reserved {
                    head: r.head.0,
                    node: names.join(", "),
                    shadow: r.shadow.is_finite().then_some(r.shadow),
                };
            }
        }
        match ahead {
            0 => WaitReason::Next,
            ahead => WaitReason::Behind { ahead },
        }
    }

    /// A gang's reason when no set of nodes could ever hold it, or none holds it now;
    /// `None` when enough nodes have its GPUs (and room) free now. Looks at every node:
    /// gangs are few.
    fn gang_wait(&self, job: &LiveJob, gang: &Gang, ctx: &WaitContext) -> Option<WaitReason> {
        let model = job.model.as_deref();
        let ask = Amount {
            cpu_milli: job.cpu_milli,
            mem_mib: job.mem_mib,
            generic: &job.resources,
        };
        let asks = job.cpu_milli > 0 || job.mem_mib > 0 || !job.resources.is_empty();
        let shapes = gang.shapes(job.gpus);
        let mut never: Option<(u32, u32, u32)> = None;
        // A shape that enough nodes could hold, were none out of service.
        let mut out_of_service: Option<u32> = None;
        for &(n, g) in &shapes {
            // Per GPU model (one group when models may mix): nodes that could ever hold
            // a part, and those that could now.
            let mut ever: BTreeMap<&str, u32> = BTreeMap::new();
            let mut usable: BTreeMap<&str, u32> = BTreeMap::new();
            let mut now: BTreeMap<&str, u32> = BTreeMap::new();
            for node in &self.nodes {
                if !node.has_model(model)
                    || node.whole_gpus() < g
                    || (asks && !node.total_room().holds(ask))
                {
                    continue;
                }
                let key = if gang.mixed_models { "" } else { &node.model };
                *ever.entry(key).or_default() += 1;
                if !node.closed() && node.usable_whole_gpus() >= g {
                    *usable.entry(key).or_default() += 1;
                }
                let room_now =
                    !asks || self.room(&node.name).is_some_and(|r| r.amount().holds(ask));
                if self.whole_free(&node.name) >= g && room_now {
                    *now.entry(key).or_default() += 1;
                }
            }
            let have = ever.values().copied().max().unwrap_or(0);
            let in_service = usable.values().copied().max().unwrap_or(0);
            if have >= n && in_service < n {
                out_of_service.get_or_insert(g);
                continue;
            }
            if have >= n {
                let free_nodes = now.values().copied().max().unwrap_or(0);
                if free_nodes >= n {
                    return None;
                }
                return Some(WaitReason::WaitingForNodes {
                    nodes: n,
                    per_node: g,
                    model: job.model.clone(),
                    free_nodes,
                    waiting: ctx.waiting,
                });
            }
            // The shape to name when none fits: the first whose parts a node holds.
            if never.is_none_or(|(_, _, h)| h == 0 && have > 0) {
                never = Some((n, g, have));
            }
        }
        if let Some(g) = out_of_service {
            let nodes = self
                .nodes
                .iter()
                .filter(|x| x.has_model(model) && x.whole_gpus() >= g)
                .filter_map(|x| Some((x.name.clone(), x.out_of_service()?)))
                .collect();
            return Some(WaitReason::OutOfService { nodes });
        }
        let (nodes, per_node, have) = never.unwrap_or((0, 0, 0));
        Some(WaitReason::GangNeverFits {
            nodes,
            per_node,
            model: job.model.clone(),
            mixed: gang.mixed_models,
            room: asks,
            have,
        })
    }
}
