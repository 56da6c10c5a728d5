//! The simulator's power model: what one GPU draws idle and busy, per GPU model, and the
//! energy of a run from it (`simulate --power-model`, docs/energy.md).
//!
//! Busy watts are the board power limit (TDP) from NVIDIA's datasheet for the form factor
//! named in [`TABLE`]: an upper bound, since few jobs hold a GPU at its limit. Idle watts
//! are estimates, not measurements: the order of magnitude `nvidia-smi` reports for an
//! idle GPU with a loaded driver (persistence mode on), rounded; a real cluster's figures
//! should replace them when known. A GPU is busy when a job holds it; GPU memory, CPUs,
//! fans and network are not counted.

use serde::Serialize;

use crate::engine::SimRun;

/// One GPU model's draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PowerSpec {
    /// The model name a cluster's GPU model starts with (`V100` matches `V100M32`).
    pub model: &'static str,
    pub idle_w: f64,
    pub busy_w: f64,
    /// Where the busy figure comes from.
    pub source: &'static str,
}

/// Per GPU (a K80 board holds two GPUs, so half the board's 300 W each).
pub const TABLE: &[PowerSpec] = &[
    PowerSpec {
        model: "K80",
        idle_w: 25.0,
        busy_w: 150.0,
        source: "Tesla K80 datasheet: 300 W per board of two GPUs",
    },
    PowerSpec {
        model: "P100",
        idle_w: 30.0,
        busy_w: 250.0,
        source: "Tesla P100 PCIe datasheet: 250 W (SXM2: 300 W)",
    },
    PowerSpec {
        model: "V100",
        idle_w: 40.0,
        busy_w: 300.0,
        source: "Tesla V100 SXM2 datasheet: 300 W",
    },
    PowerSpec {
        model: "T4",
        idle_w: 10.0,
        busy_w: 70.0,
        source: "Tesla T4 datasheet: 70 W",
    },
    PowerSpec {
        model: "A10",
        idle_w: 20.0,
        busy_w: 150.0,
        source: "A10 datasheet: 150 W",
    },
    PowerSpec {
        model: "A100",
        idle_w: 50.0,
        busy_w: 400.0,
        source: "A100 SXM4 datasheet: 400 W",
    },
    PowerSpec {
        model: "H100",
        idle_w: 70.0,
        busy_w: 700.0,
        source: "H100 SXM5 datasheet: up to 700 W",
    },
];

/// The figures for `model`: the longest [`TABLE`] name it starts with, ignoring case (so
/// `A100-80GB` is an A100, not an A10).
pub fn lookup(model: &str) -> Option<&'static PowerSpec> {
    let model = model.to_ascii_uppercase();
    TABLE
        .iter()
        .filter(|p| model.starts_with(p.model))
        .max_by_key(|p| p.model.len())
}

/// The models [`TABLE`] knows, for error messages.
pub fn known_models() -> String {
    TABLE.iter().map(|p| p.model).collect::<Vec<_>>().join(", ")
}

/// A cluster power budget in the simulator (`simulate-power`, docs/power.md): the
/// core's rule on a cluster of one GPU model, every GPU counting `watts`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimBudget {
    pub budget_w: u64,
    pub watts: gpusched_core::power::GpuWatts,
}

impl SimBudget {
    /// The core's figures for a table entry capped at `cap_w` (none: its busy watts).
    pub fn watts(spec: &PowerSpec, cap_w: Option<f64>) -> gpusched_core::power::GpuWatts {
        let busy = cap_w.map_or(spec.busy_w, |c| c.min(spec.busy_w));
        gpusched_core::power::GpuWatts {
            cap_w: busy.round() as u32,
            idle_w: spec.idle_w.round() as u32,
        }
    }
}

/// Holds, in `sched`'s free map, the free GPUs beyond what `budget` lets be busy
/// (`gpusched_core::power::busy_allowance`), whole nodes from the highest index down,
/// so the pass packs work onto the low nodes and whole high ones stay idle. The caller
/// releases the holds after the pass.
pub fn hold_for_budget(
    sched: &mut gpusched_core::schedule::Scheduler,
    budget: &SimBudget,
    total_gpus: u32,
) -> Vec<gpusched_core::Placement> {
    let allowed = u64::from(gpusched_core::power::busy_allowance(
        budget.budget_w,
        total_gpus,
        budget.watts,
    ));
    let free = sched.free_gpus();
    let busy = u64::from(total_gpus) - free;
    let mut excess = free.saturating_sub(allowed.saturating_sub(busy));
    let mut holds = Vec::new();
    let map = sched.free_map();
    let nodes: Vec<(gpusched_core::NodeId, u32)> = (0..map.nodes())
        .rev()
        .map(|i| gpusched_core::NodeId(i as u32))
        .map(|n| (n, map.free(n)))
        .filter(|&(_, f)| f > 0)
        .collect();
    for (node, f) in nodes {
        if excess == 0 {
            break;
        }
        let take = (f as u64).min(excess) as u32;
        let p = gpusched_core::Placement {
            parts: vec![(node, take)],
        };
        if sched.occupy(&p) {
            excess -= u64::from(take);
            holds.push(p);
        }
    }
    holds
}

/// Joules in a kilowatt-hour.
const J_PER_KWH: f64 = 3.6e6;

/// A run's energy, as reported per policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Energy {
    pub gpu_model: String,
    pub idle_w: f64,
    pub busy_w: f64,
    /// Whether a node running no job drew nothing (`--power-down-idle`).
    pub power_down_idle: bool,
    /// Busy GPU-seconds x busy W.
    pub busy_kwh: f64,
    /// Idle GPU-seconds that drew power x idle W.
    pub idle_kwh: f64,
    pub total_kwh: f64,
}

impl Energy {
    /// The energy of `run` over `makespan` seconds (the span its busy GPU-seconds were
    /// counted over). Without `power_down_idle` every idle GPU draws its idle watts;
    /// with it only the idle GPUs of nodes running a job do, which the run counted only
    /// if it was simulated with [`crate::SimOptions::powered_idle`] on.
    pub fn of(
        run: &SimRun,
        makespan: f64,
        spec: &PowerSpec,
        model: &str,
        power_down_idle: bool,
    ) -> Self {
        let idle_gpu_seconds = if power_down_idle {
            run.powered_idle_gpu_seconds
        } else {
            (run.total_gpus as f64 * makespan - run.busy_gpu_seconds).max(0.0)
        };
        let busy_kwh = run.busy_gpu_seconds * spec.busy_w / J_PER_KWH;
        let idle_kwh = idle_gpu_seconds * spec.idle_w / J_PER_KWH;
        Energy {
            gpu_model: model.to_string(),
            idle_w: spec.idle_w,
            busy_w: spec.busy_w,
            power_down_idle,
            busy_kwh,
            idle_kwh,
            total_kwh: busy_kwh + idle_kwh,
        }
    }
}

/// The energy one job's GPUs drew while it held them, in kWh (the per-job CSV column).
pub fn job_kwh(gpus: u32, held_seconds: f64, spec: &PowerSpec) -> f64 {
    gpus as f64 * held_seconds * spec.busy_w / J_PER_KWH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_takes_the_longest_matching_name() {
        assert_eq!(lookup("A100-80GB").unwrap().model, "A100");
        assert_eq!(lookup("A10").unwrap().model, "A10");
        assert_eq!(lookup("V100M32").unwrap().model, "V100");
        assert_eq!(lookup("v100").unwrap().model, "V100");
        assert!(lookup("G2").is_none());
    }

    /// Two jobs on two 4-GPU V100 nodes: 2 GPUs for an hour and 1 GPU for two hours,
    /// both at t=0. Worked by hand in docs/energy.md.
    fn tiny(placement: gpusched_core::PlacementStrategy) -> SimRun {
        use gpusched_core::{Cluster, PolicyConfig, PolicyKind};
        let w = crate::trace::parse(
            "tiny.csv",
            "submit,gpus,duration\n0,2,3600\n0,1,7200\n",
            None,
        )
        .unwrap();
        let cluster = Cluster::parse_shape("2x4", "V100").unwrap();
        let mut opts = crate::SimOptions::new(PolicyConfig::new(PolicyKind::Fifo));
        opts.placement = placement;
        opts.powered_idle = true;
        crate::simulate(&w, &cluster, &opts, &mut |_, _| {}).unwrap()
    }

    #[test]
    fn a_tiny_run_has_its_hand_computed_energy() {
        use gpusched_core::PlacementStrategy;
        let v100 = lookup("V100").unwrap();
        let run = tiny(PlacementStrategy::Consolidated);
        assert_eq!(run.busy_gpu_seconds, 2.0 * 3600.0 + 7200.0);
        // Node 0 holds both jobs: 1 idle GPU for the first hour, 3 for the second.
        assert_eq!(run.powered_idle_gpu_seconds, 3600.0 + 3.0 * 3600.0);
        let all = Energy::of(&run, 7200.0, v100, "V100", false);
        // 14,400 busy GPU-s x 300 W + (8 x 7,200 - 14,400) idle GPU-s x 40 W.
        assert!((all.busy_kwh - 1.2).abs() < 1e-12, "{all:?}");
        assert!((all.idle_kwh - 0.48).abs() < 1e-12, "{all:?}");
        assert!((all.total_kwh - 1.68).abs() < 1e-12, "{all:?}");
        let down = Energy::of(&run, 7200.0, v100, "V100", true);
        assert!((down.idle_kwh - 0.16).abs() < 1e-12, "{down:?}");
        assert!((down.total_kwh - 1.36).abs() < 1e-12, "{down:?}");

        // Spread puts the jobs on both nodes, so neither can be powered down.
        let spread = tiny(PlacementStrategy::Spread);
        assert_eq!(spread.busy_gpu_seconds, run.busy_gpu_seconds);
        let down = Energy::of(&spread, 7200.0, v100, "V100", true);
        assert!(down.idle_kwh > 0.16, "{down:?}");
    }

    #[test]
    fn job_energy_is_its_gpus_at_busy_watts() {
        let v100 = lookup("V100").unwrap();
        assert!((job_kwh(2, 3600.0, v100) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn every_busy_figure_is_above_its_idle_figure() {
        for p in TABLE {
            assert!(p.busy_w > p.idle_w && p.idle_w > 0.0, "{p:?}");
        }
    }
}
