//! The power budget and consolidation on the live cluster (docs/power.md): the rules of
//! [`crate::power`] applied to the book. Each pass, waiting whole-GPU jobs that would take
//! the cluster over its budget at the nodes' caps sit the pass out (their wait reason
//! says so), a node under a per-node budget has its GPUs beyond that budget held out of
//! placement, and so has every GPU of a node the power hook took down.

use std::collections::{BTreeMap, BTreeSet};

use super::cluster::LiveCluster;
use crate::power::{Budget, GpuWatts, IdleNode, NodeDraw, OverBudget};
use crate::{Placement, SchedJob, Seconds};

/// What the server tells the core of power: the budgets and each node's GPU figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PowerSetup {
    pub budget: Budget,
    /// Each node's per-GPU cap and idle draw; a node not listed counts its model's
    /// board power and idle draw ([`GpuWatts::of`]).
    pub watts: BTreeMap<String, GpuWatts>,
    /// Nodes the power hook took down: nothing is placed there until they come up.
    pub down: BTreeSet<String>,
}

/// The budget as the metrics show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PowerView {
    pub budget_w: Option<u64>,
    pub node_budget_w: Option<u64>,
    /// What the online nodes draw at their caps now.
    pub drawn_w: u64,
    /// Waiting jobs the last pass held back for the cluster budget.
    pub held_jobs: u64,
}

impl LiveCluster {
    /// Sets the budgets, each node's figures and the nodes that are down; takes effect
    /// at the next pass.
    pub fn set_power(&mut self, setup: PowerSetup) {
        self.power = setup;
    }

    /// Whether any power rule is on (without one the pass is exactly as before).
    pub(super) fn power_on(&self) -> bool {
        !self.power.budget.is_none() || !self.power.down.is_empty()
    }

    /// Each online node's draw as the rule reads it, by name.
    pub fn power_draws(&self) -> Vec<(String, NodeDraw)> {
        self.nodes
            .iter()
            .map(|n| {
                let watts = self
                    .power
                    .watts
                    .get(&n.name)
                    .copied()
                    .unwrap_or_else(|| GpuWatts::of(&n.model, None));
                let busy = self.book.get(&n.name).map_or(0, |b| b.busy_gpus());
                let draw = NodeDraw {
                    gpus: n.gpus.len() as u32,
                    busy,
                    watts,
                };
                (n.name.clone(), draw)
            })
            .collect()
    }

    /// The budget, what is drawn at the caps now, and the jobs held back.
    pub fn power_view(&self) -> PowerView {
        let draws: Vec<NodeDraw> = self.power_draws().into_iter().map(|(_, d)| d).collect();
        PowerView {
            budget_w: self.power.budget.cluster_w,
            node_budget_w: self.power.budget.node_w,
            drawn_w: crate::power::drawn_w(&draws),
            held_jobs: self.power_held.len() as u64,
        }
    }

    /// Why the last pass held `job` back for the cluster budget, if it did.
    pub fn power_held(&self, job: u64) -> Option<OverBudget> {
        self.power_held.get(&job).copied()
    }

    /// Waiting whole-GPU jobs `among` admits that the cluster budget holds back now, in
    /// the order of the last pass (`crate::power::hold_back`), recorded for their wait
    /// reasons.
    pub(super) fn over_power_among(&mut self, among: impl Fn(&SchedJob) -> bool) -> BTreeSet<u64> {
        let Some(budget) = self.power.budget.cluster_w else {
            self.power_held.clear();
            return BTreeSet::new();
        };
        let mut waiting: Vec<&SchedJob> = self
            .jobs
            .iter()
            .filter(|j| !j.running && j.spec.gpus > 0 && among(j))
            .collect();
        waiting.sort_by_key(|j| (j.rank, j.spec.id));
        let asks: Vec<(u64, u32)> = waiting.iter().map(|j| (j.spec.id.0, j.spec.gpus)).collect();
        let draws: Vec<NodeDraw> = self.power_draws().into_iter().map(|(_, d)| d).collect();
        let held = crate::power::hold_back(budget, &draws, &asks);
        let ids = held.keys().copied().collect();
        self.power_held = held;
        ids
    }

    /// Holds, for the pass, the free GPUs of nodes that are down and those of a node
    /// beyond what its per-node budget lets start; lift them after the pass.
    pub(super) fn hold_for_power(&mut self) -> Vec<Placement> {
        let node_w = self.power.budget.node_w;
        let mut want: Vec<(String, u32)> = Vec::new();
        for (name, draw) in self.power_draws() {
            let Some(book) = self.book.get(&name) else {
                continue;
            };
            let free = book.whole_free().count() as u32;
            let k = if self.power.down.contains(&name) {
                free
            } else if let Some(w) = node_w {
                free.saturating_sub(crate::power::node_room(w, &draw))
            } else {
                0
            };
            if k > 0 {
                want.push((name, k));
            }
        }
        want.into_iter()
            .filter_map(|(name, k)| self.hold(&name, k))
            .collect()
    }

    /// Whether the per-node budget alone keeps a job of `gpus` GPUs out: some node has
    /// that many free, and none of those may start that many under its budget.
    pub(super) fn node_budget_keeps_out(&self, gpus: u32) -> bool {
        let Some(node_w) = self.power.budget.node_w else {
            return false;
        };
        let mut free_enough = false;
        for (name, draw) in self.power_draws() {
            let Some(book) = self.book.get(&name) else {
                continue;
            };
            if self.power.down.contains(&name) || book.whole_free().count() < gpus as usize {
                continue;
            }
            free_enough = true;
            if crate::power::node_room(node_w, &draw) >= gpus {
                return false;
            }
        }
        free_enough
    }

    /// Each online node as consolidation's power-down rule reads it: since when nothing
    /// has run there is the caller's (it keeps the times); this says who runs nothing.
    pub fn idle_nodes(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| self.book.get(&n.name).is_none_or(|b| b.jobs().is_empty()))
            .map(|n| n.name.clone())
            .collect()
    }

    /// The node of `down` (nodes taken down, online or not, with their GPUs) to bring
    /// up for the waiting whole-GPU jobs, if one needs it (`crate::power::to_power_up`
    /// against the most GPUs free on one node that is up).
    pub fn node_to_power_up(&self, down: &[(String, u32)]) -> Option<String> {
        if down.is_empty() {
            return None;
        }
        let mut waiting: Vec<&SchedJob> = self
            .jobs
            .iter()
            .filter(|j| !j.running && j.spec.gpus > 0)
            .collect();
        waiting.sort_by_key(|j| (j.rank, j.spec.id));
        // A job the cluster budget would hold back now needs power, not a node: judged
        // afresh, since jobs submitted since the last pass are not in its record.
        let held = match self.power.budget.cluster_w {
            Some(budget) => {
                let asks: Vec<(u64, u32)> =
                    waiting.iter().map(|j| (j.spec.id.0, j.spec.gpus)).collect();
                let draws: Vec<NodeDraw> = self.power_draws().into_iter().map(|(_, d)| d).collect();
                crate::power::hold_back(budget, &draws, &asks)
            }
            None => BTreeMap::new(),
        };
        let waiting: Vec<u32> = waiting
            .iter()
            .filter(|j| !held.contains_key(&j.spec.id.0))
            .map(|j| j.spec.gpus)
            .collect();
        let up_free_max = self
            .nodes
            .iter()
            .filter(|n| !down.iter().any(|(d, _)| *d == n.name))
            .filter_map(|n| self.book.get(&n.name))
            .map(|b| b.whole_free().count() as u32)
            .max()
            .unwrap_or(0);
        crate::power::to_power_up(down, &waiting, up_free_max)
    }
}

/// Consolidation's power-down rule over `idle_since` (node → since when it ran nothing,
/// as the caller keeps it) and the nodes down: the nodes to take down at `now`.
pub fn nodes_to_power_down(
    idle_since: &BTreeMap<String, Seconds>,
    online: &[String],
    down: &BTreeSet<String>,
    now: Seconds,
    after: Seconds,
) -> Vec<String> {
    let nodes: Vec<IdleNode> = online
        .iter()
        .map(|name| IdleNode {
            name: name.clone(),
            idle_since: idle_since.get(name).copied(),
            down: down.contains(name),
        })
        .collect();
    crate::power::to_power_down(&nodes, now, after)
}
