//! One round of the live scheduler, decided here whole, in this order:
//!
//! 1. young runs are protected from the policy's preemption (`runs.rs`);
//! 2. the pass: claims first, then serving jobs (slices, whole GPUs), then slices, then
//!    whole GPUs ([`LiveCluster::pass`]);
//! 3. follows: short jobs queued behind running ones of their kind (`follow.rs`);
//! 4. the victims the pass's preemptive policy chose, each once;
//! 5. the serving tier: a waiting replica of an inference service takes one node from
//!    running training jobs of any queue, at most one per round, none while a
//!    preemption is under way (`serving.rs`);
//! 6. quota reclaim: at most one per round, none while a preemption is under way
//!    ([`crate::reclaim::one_per_round`], the rule the simulator uses too);
//! 7. priority tiers: at most one claim per round, none while a preemption is under
//!    way ([`crate::tiers::plan`]);
//! 8. elastic jobs: loans taken back for the first waiting job, else one grow, none
//!    while a preemption is under way (`elastic.rs`).
//!
//! Steps 5 to 8 each mark their victims as stopping, so at most one of them preempts
//! in a round, the serving tier first. Serving jobs are protected: never victims of
//! steps 4 to 8.
//!
//! The caller applies the [`Round`] it returns: it moves the started jobs to
//! `starting`, writes the follows, asks the victims to stop and words the reasons. The
//! core has already updated its own book (GPUs held, claims made, victims marked as
//! stopping), so the next round sees the decisions even before they are applied.

use std::collections::BTreeMap;

use super::follow::Follow;
use super::serving::ServingPreemption;
use super::{LiveCluster, LivePlacement};
use crate::reclaim::{self, Claim, NodeRoom, QuotaQueue, RunningJob};
use crate::sharing::SharePod;
use crate::{tiers, JobId, QueueId, Seconds};

/// What a queue's definition says about taking GPUs back, in the order the round tries
/// the queues (the server's: by name).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueRules {
    pub queue: QueueId,
    /// GPUs it is guaranteed: its first waiting job may reclaim borrowed ones.
    pub quota: u32,
    /// Its jobs may be preempted to give other queues their quota back.
    pub preemptible: bool,
    /// A waiting job of a higher priority tier may preempt its running jobs of lower
    /// tiers.
    pub preempt_lower_priority: bool,
    /// Ascending priority bounds of its tiers ([`tiers::tier`]).
    pub priority_tiers: Vec<i32>,
}

/// What the round needs that the core does not keep.
pub struct RoundInput<'a> {
    /// The round's time, the server's milliseconds.
    pub now_ms: u64,
    /// FGD's target workload for the shares that wait (unused when none waits).
    pub share_target: &'a [SharePod],
    /// What the predictor believes of a job the cluster has no estimate for: such a job
    /// may follow on it (see [`LiveCluster::follow_pass`]).
    pub guess: &'a dyn Fn(u64) -> Option<Seconds>,
}

/// Everything one round decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Round {
    /// Jobs that start, with their nodes and GPUs.
    pub starts: Vec<LivePlacement>,
    /// Jobs queued behind running ones.
    pub follows: Vec<Follow>,
    /// Running jobs the preemptive policy's order asks to stop.
    pub policy_victims: Vec<u64>,
    /// A serving job's preemption, applied as a tier preemption is.
    pub serving: Option<ServingPreemption>,
    pub reclaim: Option<QuotaReclaim>,
    pub tier: Option<TierPreemption>,
    /// An elastic job's resize: loans taken back for the first waiting job, or a grow
    /// (`elastic.rs`).
    pub elastic: Option<super::ElasticResize>,
}

/// A queue takes GPUs back: its job `job` goes first on `nodes` (one per part) once the
/// victims, jobs of queues over their quota, have stopped. No victims: the nodes have
/// room already and the policy's order held the job back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuotaReclaim {
    pub job: u64,
    pub nodes: Vec<String>,
    pub victims: Vec<u64>,
}

/// A job of a higher priority tier takes `node` from running jobs of lower tiers of
/// its queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TierPreemption {
    pub job: u64,
    pub node: String,
    /// The claimant's tier.
    pub tier: usize,
    pub victims: Vec<u64>,
}

/// The online nodes (by index), the whole-GPU jobs holding GPUs on them with the work
/// each would lose, each node's room, and the waiting jobs in the policy's order.
pub(super) struct Field {
    pub(super) online: Vec<String>,
    pub(super) running: Vec<RunningJob>,
    pub(super) rooms: Vec<NodeRoom>,
    pub(super) order: Vec<u64>,
}

impl LiveCluster {
    /// The queues' reclaim and tier rules, in the order the round tries them; replaces
    /// the previous ones.
    pub fn set_queue_rules(&mut self, rules: Vec<QueueRules>) {
        self.queue_rules = rules;
    }

    /// How long a run is protected from preemption after it starts (`--min-runtime`).
    pub fn set_min_runtime_ms(&mut self, ms: u64) {
        self.min_runtime_ms = ms;
    }

    /// Decides one round (see the module's doc).
    pub fn round(&mut self, input: RoundInput<'_>) -> Round {
        let now_ms = input.now_ms;
        let now = now_ms as f64 / 1000.0;
        if self.scheduler.policy().preemptive() {
            self.protect_young(now_ms);
        }
        self.apply_windows(now);
        let mut round = Round {
            starts: self.pass(now, input.share_target),
            ..Round::default()
        };
        round.follows = self.follow_pass(input.guess);
        round.policy_victims = self.policy_victims();
        // The serving tier, reclaim and tiers choose from one view: none's claim or
        // victims change what it holds (GPUs held, work at stake, the waiting order).
        let mut field = None;
        round.serving = self.serving_step(now_ms, &mut field);
        round.reclaim = self.reclaim_step(now_ms, &mut field);
        round.tier = self.tier_step(now_ms, &mut field);
        round.elastic = self.elastic_step(now_ms, &mut field);
        round
    }

    /// What reclaim and tiers choose from, worked out once a round, when one needs it.
    pub(super) fn field(&self, now_ms: u64) -> Field {
        let (online, running, rooms) = self.running_view(now_ms);
        Field {
            online,
            running,
            rooms,
            order: self.waiting_order(),
        }
    }

    /// The victims of the passes since the last round that are still running and not
    /// already leaving, each marked as stopping.
    fn policy_victims(&mut self) -> Vec<u64> {
        let mut victims = Vec::new();
        for id in self.take_preemptions() {
            let Some(run) = self.runs.get_mut(&id) else {
                continue;
            };
            if !run.running || run.stopping || run.cancelling {
                continue;
            }
            run.stopping = true;
            victims.push(id);
        }
        victims
    }

    /// Marks the victims of a reclaim or tier preemption as stopping.
    pub(super) fn stopping(&mut self, victims: &[u64]) {
        for id in victims {
            if let Some(run) = self.runs.get_mut(id) {
                run.stopping = true;
            }
        }
    }

    /// Whether `queue` has a claim open already (one per queue at a time).
    fn queue_claims(&self, queue: QueueId) -> bool {
        self.claims.keys().any(|&id| {
            self.find(id)
                .is_some_and(|i| self.jobs[i].spec.queue == queue)
        })
    }

    /// The first waiting job of `queue` in the policy's order.
    fn first_waiting(&self, order: &[u64], queue: QueueId) -> Option<usize> {
        order
            .iter()
            .filter_map(|&id| self.find(id))
            .find(|&i| self.jobs[i].spec.queue == queue)
    }

    fn reclaim_step(&mut self, now_ms: u64, field: &mut Option<Field>) -> Option<QuotaReclaim> {
        let quotas: BTreeMap<QueueId, QuotaQueue> = self
            .queue_rules
            .iter()
            .map(|r| {
                let q = QuotaQueue {
                    quota: r.quota,
                    preemptible: r.preemptible,
                };
                (r.queue, q)
            })
            .collect();
        let preempting = self.preempting();
        if !reclaim::round_due(&quotas, preempting) {
            return None;
        }
        let Field {
            online,
            running,
            rooms,
            order,
        } = field.get_or_insert_with(|| self.field(now_ms));
        let most = rooms.iter().map(|r| r.capacity).max().unwrap_or(0);
        let claims = self.queue_rules.iter().filter_map(|r| {
            if self.queue_claims(r.queue) {
                return None;
            }
            let spec = &self.jobs[self.first_waiting(order, r.queue)?].spec;
            // A gang needs a node per part: a split one, as many as its fewest-node
            // shape that some online node's part could hold.
            let nodes = spec.gang.as_ref().map_or(1, |g| {
                g.shapes(spec.gpus)
                    .into_iter()
                    .find(|&(_, per_node)| per_node <= most)
                    .map_or(1, |(n, _)| n)
            });
            let claim = Claim {
                job: spec.id,
                queue: r.queue,
                gpus: spec.gpus,
                nodes,
                model: spec.gpu_model.clone(),
                priority: spec.priority,
                node_sets: spec.nodes.clone(),
            };
            Some(((), claim))
        });
        let ((), claim, plan) =
            reclaim::one_per_round(&quotas, running, rooms, preempting, claims)?;
        let nodes: Vec<String> = plan
            .nodes
            .iter()
            .map(|n| online[n.index()].clone())
            .collect();
        let victims: Vec<u64> = plan.victims.iter().map(|v| v.0).collect();
        self.stopping(&victims);
        self.claim_nodes(claim.job.0, &nodes);
        Some(QuotaReclaim {
            job: claim.job.0,
            nodes,
            victims,
        })
    }

    fn tier_step(&mut self, now_ms: u64, field: &mut Option<Field>) -> Option<TierPreemption> {
        if self.queue_rules.iter().all(|r| !r.preempt_lower_priority) || self.preempting() {
            return None;
        }
        let Field {
            online,
            running,
            rooms,
            order,
        } = field.get_or_insert_with(|| self.field(now_ms));
        let mut found = None;
        for r in self.queue_rules.iter().filter(|r| r.preempt_lower_priority) {
            if self.queue_claims(r.queue) {
                continue;
            }
            let Some(i) = self.first_waiting(order, r.queue) else {
                continue;
            };
            let spec = &self.jobs[i].spec;
            let claim = Claim {
                job: JobId(spec.id.0),
                queue: r.queue,
                gpus: spec.gpus,
                nodes: if spec.gang.is_some() { 2 } else { 1 },
                model: spec.gpu_model.clone(),
                priority: spec.priority,
                node_sets: spec.nodes.clone(),
            };
            if let Some(plan) = tiers::plan(&r.priority_tiers, running, rooms, &claim) {
                found = Some(TierPreemption {
                    job: claim.job.0,
                    node: online[plan.node.index()].clone(),
                    tier: tiers::tier(&r.priority_tiers, claim.priority),
                    victims: plan.victims.iter().map(|v| v.0).collect(),
                });
                break;
            }
        }
        let t = found?;
        self.stopping(&t.victims);
        self.claim_nodes(t.job, std::slice::from_ref(&t.node));
        Some(t)
    }
}
