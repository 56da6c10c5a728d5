//! Power: the cluster's and each node's power budget, and consolidation's idle nodes
//! (docs/power.md). Pure rules the live server and the simulator both call.
//!
//! The budget is counted *at the nodes' caps*, not from measured draw: a GPU a job holds
//! counts its power limit (the cap the server sends its agent, which the agent applies
//! through NVML, so the GPU cannot draw more), a GPU nobody holds counts its idle draw.
//! Measured draw lags a start by seconds and moves with the job's phase; the caps are
//! known before a start, so "never over the budget" can be a rule rather than a hope.
//! CPUs, memory, fans and the network are not counted (operators leave that headroom
//! out of the budget they give).

use std::collections::BTreeMap;

use crate::Seconds;

/// What one GPU of a node counts, watts: `cap_w` while a job holds it, `idle_w` while
/// nobody does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuWatts {
    pub cap_w: u32,
    pub idle_w: u32,
}

impl GpuWatts {
    /// What starting a job on one idle GPU adds.
    pub fn start_w(self) -> u64 {
        u64::from(self.cap_w.saturating_sub(self.idle_w))
    }

    /// The figures for a GPU `model` capped at `cap_w` (none: its board power), from
    /// [`board_w`] and [`idle_w`]; a cap above the board power is the board power.
    pub fn of(model: &str, cap_w: Option<u32>) -> Self {
        let board = board_w(model);
        GpuWatts {
            cap_w: cap_w.map_or(board, |c| c.min(board)),
            idle_w: idle_w(model),
        }
    }
}

/// The budgets (watts); `None`: no budget of that kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// Over every online node.
    pub cluster_w: Option<u64>,
    /// Over each node on its own.
    pub node_w: Option<u64>,
}

impl Budget {
    pub fn is_none(&self) -> bool {
        self.cluster_w.is_none() && self.node_w.is_none()
    }
}

/// One node as the rule reads it: its GPUs, how many are held, and what each counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeDraw {
    pub gpus: u32,
    pub busy: u32,
    pub watts: GpuWatts,
}

impl NodeDraw {
    /// Busy GPUs at their cap plus idle GPUs at their idle draw.
    pub fn drawn_w(&self) -> u64 {
        let idle = self.gpus.saturating_sub(self.busy);
        u64::from(self.busy) * u64::from(self.watts.cap_w)
            + u64::from(idle) * u64::from(self.watts.idle_w)
    }
}

/// What a start would have made of a budget: the job waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverBudget {
    pub budget_w: u64,
    /// What the nodes would draw at their caps with the start.
    pub would_w: u64,
}

/// The one rule: a start that adds `add_w` to what is drawn at the caps (`drawn_w`) is
/// admitted only if the total stays within `budget_w`.
pub fn admit(budget_w: u64, drawn_w: u64, add_w: u64) -> Result<(), OverBudget> {
    let would_w = drawn_w + add_w;
    if would_w <= budget_w {
        Ok(())
    } else {
        Err(OverBudget { budget_w, would_w })
    }
}

/// What every node draws at its caps.
pub fn drawn_w(nodes: &[NodeDraw]) -> u64 {
    nodes.iter().map(NodeDraw::drawn_w).sum()
}

/// The cluster budget over waiting whole-GPU jobs `(id, gpus)` in the pass's order: each
/// is let in while what it would add keeps the total within `budget_w`, and the others
/// are held back with the figures of their refusal. Where the job lands is the pass's
/// choice, so a job is charged at the dearest GPU of the cluster (`gpus` x the largest
/// [`GpuWatts::start_w`]): on one GPU model this is exact, on a mixed cluster it keeps
/// the rule true whichever node the job gets. Conservative as the queue caps are: a
/// let-in job that then does not fit keeps a later one out until the next pass.
pub fn hold_back(
    budget_w: u64,
    nodes: &[NodeDraw],
    waiting: &[(u64, u32)],
) -> BTreeMap<u64, OverBudget> {
    let mut drawn = drawn_w(nodes);
    let dearest = nodes
        .iter()
        .filter(|n| n.busy < n.gpus)
        .map(|n| n.watts.start_w())
        .max()
        .unwrap_or(0);
    let mut held = BTreeMap::new();
    for &(id, gpus) in waiting {
        let add = u64::from(gpus) * dearest;
        match admit(budget_w, drawn, add) {
            Ok(()) => drawn += add,
            Err(over) => {
                held.insert(id, over);
            }
        }
    }
    held
}

/// How many more of `node`'s idle GPUs may start under a per-node budget of `node_w`.
pub fn node_room(node_w: u64, node: &NodeDraw) -> u32 {
    let free = node.gpus.saturating_sub(node.busy);
    let drawn = node.drawn_w();
    (0..=free)
        .rev()
        .find(|&k| admit(node_w, drawn, u64::from(k) * node.watts.start_w()).is_ok())
        .unwrap_or(0)
}

/// On a cluster of `gpus` GPUs that all count `watts` (the simulator's: one model), how
/// many may be busy at once under `budget_w`: the most for which [`admit`] holds.
pub fn busy_allowance(budget_w: u64, gpus: u32, watts: GpuWatts) -> u32 {
    let idle = u64::from(gpus) * u64::from(watts.idle_w);
    let per = watts.start_w();
    if per == 0 {
        return gpus;
    }
    // The largest b with idle + b * per <= budget, by the rule itself at the edge.
    let guess = budget_w.saturating_sub(idle) / per;
    let b = guess.min(u64::from(gpus)) as u32;
    debug_assert!(admit(budget_w, idle, u64::from(b) * per).is_ok() || b == 0);
    b
}

/// Board power of a GPU model, watts (NVIDIA's datasheets; SXM parts at their maximum
/// TDP): the cap of a GPU the server caps at nothing lower. More specific names first
/// (`A100-PCIE` before `A100`, `A100` before `A10`); unknown models count 300 W.
pub fn board_w(model: &str) -> u32 {
    const TABLE: [(&str, u32); 19] = [
        ("B200", 1000),
        ("H200", 700),
        ("H100 PCIe", 350),
        ("H100 NVL", 400),
        ("H100", 700),
        ("A100-PCIE-40GB", 250),
        ("A100-PCIE", 300),
        ("A100", 400),
        ("A30", 165),
        ("A40", 300),
        ("A10", 150),
        ("L40S", 350),
        ("L40", 300),
        ("L4", 72),
        ("V100-PCIE", 250),
        ("V100", 300),
        ("P100", 250),
        ("T4", 70),
        ("RTX", 300),
    ];
    TABLE
        .iter()
        .find(|(pattern, _)| model.contains(pattern))
        .map_or(300, |(_, w)| *w)
}

/// Idle draw of a GPU model, watts: about 60 W for a data-centre board of 240 W or
/// more, a quarter of the board power below (an estimate of what `nvidia-smi` shows for
/// an idle GPU in persistence mode; the fake GPUs draw the same).
pub fn idle_w(model: &str) -> u32 {
    let board = board_w(model);
    if board >= 240 {
        60
    } else {
        board / 4
    }
}

/// The speed of a job on a GPU capped at `cap_w` of its board's `board_w`, relative to
/// uncapped: `(cap / board) ^ 0.3`, at most 1. A *model*, not a measurement: power caps
/// cost throughput sub-linearly (a GPU at 70 % of its TDP is commonly reported to keep
/// 85-95 % of its training throughput, since clocks fall less than power and memory-bound
/// phases barely notice), and the exponent 0.3 puts 70 % at 90 % and 50 % at 81 %.
/// The fake GPUs and the simulator use it; real GPUs run as fast as they run.
pub fn capped_speed(cap_w: u32, board_w: u32) -> f64 {
    if board_w == 0 || cap_w >= board_w {
        return 1.0;
    }
    (f64::from(cap_w) / f64::from(board_w)).powf(0.3)
}

/// A node as consolidation's power-down rule reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct IdleNode {
    pub name: String,
    /// Since when no job has held anything on it (`None`: something runs there).
    pub idle_since: Option<Seconds>,
    /// The power hook took it down and has not brought it up.
    pub down: bool,
}

/// The nodes to take down now: idle for at least `after` seconds and not down already,
/// in name order.
pub fn to_power_down(nodes: &[IdleNode], now: Seconds, after: Seconds) -> Vec<String> {
    let mut out: Vec<String> = nodes
        .iter()
        .filter(|n| !n.down)
        .filter(|n| n.idle_since.is_some_and(|t| now - t >= after))
        .map(|n| n.name.clone())
        .collect();
    out.sort();
    out
}

/// The node to bring up for waiting work: when some waiting whole-GPU job (its GPUs in
/// `waiting`) cannot start on the nodes that are up (`up_free_max`, the most free GPUs on
/// one of them), the first node that is down (by name) with at least that many GPUs;
/// one node per round, so a burst of work wakes nodes one by one as it needs them.
pub fn to_power_up(down: &[(String, u32)], waiting: &[u32], up_free_max: u32) -> Option<String> {
    let need = waiting.iter().copied().filter(|&g| g > up_free_max).min()?;
    let mut fits: Vec<&(String, u32)> = down.iter().filter(|(_, gpus)| *gpus >= need).collect();
    fits.sort();
    fits.first().map(|(name, _)| name.clone())
}

#[cfg(test)]
#[path = "power_tests.rs"]
mod tests;
