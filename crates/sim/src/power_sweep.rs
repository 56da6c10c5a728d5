//! The energy / JCT trade-off of a power budget, GPU power caps and consolidation
//! (`gpusched simulate-power`, docs/power.md): one run per setting, each with its energy
//! from the power table, against the JCT-only run (no budget, no cap, idle nodes left on).
//!
//! A cap slows every job by the core's model (`gpusched_core::power::capped_speed`): the
//! workload's run times are divided by the speed before the run, and a busy GPU counts
//! the cap's watts. Budgets are fractions of the cluster's uncapped peak (every GPU busy
//! at its table watts), counted as the live server counts them: busy GPUs at the cap,
//! every other GPU at its idle watts (powered down or not: the budget does not bet on
//! consolidation). Consolidation packs jobs (`consolidated` placement, and a budget's
//! held GPUs are taken from the highest nodes) and counts a node running nothing as
//! powered down.

use serde::Serialize;

use crate::engine::{SimError, SimOptions, SimRun};
use crate::power::{Energy, PowerSpec, SimBudget};
use crate::trace::Workload;

/// One setting of the sweep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setting {
    /// The budget as a fraction of the uncapped peak; None: no budget.
    pub budget: Option<f64>,
    /// Each GPU's cap as a fraction of its table busy watts (1: uncapped).
    pub cap: f64,
    pub consolidate: bool,
}

/// One setting's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    pub budget_fraction: Option<f64>,
    pub budget_kw: Option<f64>,
    pub cap_fraction: f64,
    pub cap_w: f64,
    /// The model's job speed at the cap (1: uncapped).
    pub speed: f64,
    pub consolidate: bool,
    pub avg_jct_h: f64,
    pub p99_jct_h: f64,
    pub makespan_h: f64,
    pub utilization: f64,
    /// Node-hours whole nodes ran nothing.
    pub idle_node_hours: f64,
    pub energy: Energy,
}

impl Point {
    /// The label of its setting in tables and plots.
    pub fn label(&self) -> String {
        let budget = self
            .budget_fraction
            .map_or("none".to_string(), |b| format!("{:.0}%", b * 100.0));
        format!(
            "budget {budget}, cap {:.0}%, consolidation {}",
            self.cap_fraction * 100.0,
            if self.consolidate { "on" } else { "off" }
        )
    }
}

/// `w` with every job `speed` times as fast (slower below 1): its run time and its
/// estimate divided by the speed.
pub fn at_speed(w: &Workload, speed: f64) -> Workload {
    let mut out = w.clone();
    if speed == 1.0 {
        return out;
    }
    for j in &mut out.jobs {
        j.work.unit_time /= speed;
        j.spec.estimate = j.spec.estimate.map(|e| e / speed);
    }
    out
}

/// Runs one setting: `base` is the policy's options without power (its placement is
/// replaced by `consolidated` when the setting consolidates).
pub fn run_point(
    w: &Workload,
    cluster: &gpusched_core::Cluster,
    base: &SimOptions,
    spec: &PowerSpec,
    model: &str,
    s: Setting,
) -> Result<(Point, SimRun), SimError> {
    let cap_w = spec.busy_w * s.cap;
    let speed =
        gpusched_core::power::capped_speed(cap_w.round() as u32, spec.busy_w.round() as u32);
    let capped = at_speed(w, speed);
    let total = cluster.total_gpus();
    let peak = f64::from(total) * spec.busy_w;
    let mut opts = base.clone();
    opts.powered_idle = true;
    if s.consolidate {
        opts.placement = gpusched_core::PlacementStrategy::Consolidated;
    }
    opts.power_budget = s.budget.map(|b| SimBudget {
        budget_w: (peak * b).round() as u64,
        watts: SimBudget::watts(spec, Some(cap_w)),
    });
    let run = crate::simulate(&capped, cluster, &opts, &mut |_, _| {})?;
    let summary = crate::Summary::of(&run, opts.policy.kind.name(), opts.placement.name(), false);
    let capped_spec = PowerSpec {
        busy_w: cap_w,
        ..*spec
    };
    let energy = Energy::of(&run, summary.makespan, &capped_spec, model, s.consolidate);
    let point = Point {
        budget_fraction: s.budget,
        budget_kw: s.budget.map(|b| peak * b / 1000.0),
        cap_fraction: s.cap,
        cap_w,
        speed,
        consolidate: s.consolidate,
        avg_jct_h: summary.avg_jct / 3600.0,
        p99_jct_h: summary.p99_jct / 3600.0,
        makespan_h: summary.makespan / 3600.0,
        utilization: summary.utilization,
        idle_node_hours: run.idle_node_seconds / 3600.0,
        energy,
    };
    Ok((point, run))
}

/// The points as a table, each against the first (the JCT-only run).
pub fn table(points: &[Point]) -> String {
    let mut out = String::from(
        "budget  cap   speed  consol  avg JCT (h)  p99 JCT (h)  makespan (h)  energy (MWh)  idle node-h  vs JCT-only: JCT  energy\n",
    );
    let base = points.first();
    for p in points {
        let (dj, de) = base.map_or((0.0, 0.0), |b| {
            (
                100.0 * (p.avg_jct_h / b.avg_jct_h - 1.0),
                100.0 * (p.energy.total_kwh / b.energy.total_kwh - 1.0),
            )
        });
        out.push_str(&format!(
            "{:<6}  {:>3.0}%  {:.3}  {:<6}  {:>11.1}  {:>11.1}  {:>12.1}  {:>12.2}  {:>11.0}  {:>+15.1}%  {:>+6.1}%\n",
            p.budget_fraction
                .map_or("none".to_string(), |b| format!("{:.0}%", b * 100.0)),
            p.cap_fraction * 100.0,
            p.speed,
            if p.consolidate { "on" } else { "off" },
            p.avg_jct_h,
            p.p99_jct_h,
            p.makespan_h,
            p.energy.total_kwh / 1000.0,
            p.idle_node_hours,
            dj,
            de,
        ));
    }
    out
}

/// The trade-off curve: energy (MWh) on x, mean JCT (hours) on y, one line per (cap,
/// consolidation) through its budgets, the JCT-only run a line of its own.
pub fn svg(path: &std::path::Path, points: &[Point]) -> Result<(), crate::plot::PlotError> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for p in points {
        let name = format!(
            "cap {:.0}%, consolidation {}",
            p.cap_fraction * 100.0,
            if p.consolidate { "on" } else { "off" }
        );
        let xy = (p.energy.total_kwh / 1000.0, p.avg_jct_h);
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push(xy),
            None => series.push((name, vec![xy])),
        }
    }
    if let Some(b) = points.first() {
        series.push((
            "JCT-only".into(),
            vec![(b.energy.total_kwh / 1000.0, b.avg_jct_h); 2],
        ));
    }
    for (_, pts) in &mut series {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    crate::plot::line_chart(
        path,
        "Energy vs mean JCT (each line: its budgets)",
        "energy (MWh)",
        "mean JCT (h)",
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpusched_core::{Cluster, PolicyConfig, PolicyKind};

    fn tiny() -> Workload {
        crate::trace::parse(
            "tiny.csv",
            "submit,gpus,duration\n0,4,3600\n0,4,3600\n0,2,7200\n",
            None,
        )
        .unwrap()
    }

    fn point(s: Setting) -> Point {
        let cluster = Cluster::parse_shape("2x4", "V100").unwrap();
        let opts = SimOptions::new(PolicyConfig::new(PolicyKind::Fifo));
        let v100 = crate::power::lookup("V100").unwrap();
        run_point(&tiny(), &cluster, &opts, v100, "V100", s)
            .unwrap()
            .0
    }

    /// Two 4-GPU V100 nodes; 300 W busy, 40 W idle: the uncapped peak is 2,400 W.
    #[test]
    fn a_budget_trades_time_for_power_and_a_cap_for_both() {
        let free = point(Setting {
            budget: None,
            cap: 1.0,
            consolidate: false,
        });
        // Both 4-GPU jobs run at once; the 2-GPU job after: 3 h.
        assert_eq!(free.makespan_h, 3.0);
        // 70 %: 1,680 W. Idle 8 x 40 = 320 W; each busy GPU adds 260 W: 5 busy at most,
        // so the 4-GPU jobs run one after the other (the 2-GPU job waits behind in FIFO).
        let held = point(Setting {
            budget: Some(0.7),
            cap: 1.0,
            consolidate: false,
        });
        assert_eq!(held.makespan_h, 4.0, "{held:?}");
        assert!(held.avg_jct_h > free.avg_jct_h);
        // Capped at 70 % (210 W): 7 busy GPUs fit 1,680 W, but each job is slower.
        let capped = point(Setting {
            budget: Some(0.7),
            cap: 0.7,
            consolidate: false,
        });
        assert!((capped.speed - 0.8985).abs() < 1e-3);
        assert!(capped.energy.busy_kwh < held.energy.busy_kwh);
        // Consolidation counts the idle node as off.
        let packed = point(Setting {
            budget: Some(0.7),
            cap: 1.0,
            consolidate: true,
        });
        assert!(packed.idle_node_hours > 0.0);
        assert!(packed.energy.total_kwh < held.energy.total_kwh);
        assert_eq!(packed.avg_jct_h, held.avg_jct_h);
        let t = table(&[free, held, capped, packed]);
        assert_eq!(t.lines().count(), 5, "{t}");
    }
}
