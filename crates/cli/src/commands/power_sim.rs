//! `gpusched simulate-power`: a trace through one policy under each power setting
//! (budget x GPU cap x consolidation), its energy and JCT beside the JCT-only run
//! (`gpusched_sim::power_sweep`, docs/power.md).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use gpusched_core::policy::{PolicyConfig, PolicyKind};
use gpusched_core::Cluster;
use gpusched_sim::power_sweep::{self, Setting};
use gpusched_sim::{power, trace, SimOptions};

#[derive(clap::Args)]
pub struct Args {
    /// Trace file (as `simulate --trace`).
    #[arg(long)]
    trace: PathBuf,
    /// Cluster shape NODESxGPUS.
    #[arg(long, default_value = "64x8")]
    cluster: String,
    /// The GPU model: its idle and busy watts come from the power table (docs/energy.md).
    #[arg(long, default_value = "V100")]
    gpu_model: String,
    /// The one policy every setting runs.
    #[arg(long, default_value = "fifo")]
    policy: String,
    /// Budgets, as fractions of the cluster's uncapped peak (every GPU busy at its table
    /// watts); `none` is no budget.
    #[arg(long, default_value = "none,0.8,0.6,0.5")]
    budgets: String,
    /// GPU power caps, as fractions of the table's busy watts (1 = uncapped).
    #[arg(long, default_value = "1,0.85,0.7")]
    caps: String,
    /// Consolidation settings to run: `off`, `on` or `both`.
    #[arg(long, default_value = "both")]
    consolidate: String,
    /// Write tradeoff.json, tradeoff.csv and tradeoff.svg here.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn fractions(flag: &str, text: &str, none_ok: bool) -> Result<Vec<Option<f64>>> {
    text.split(',')
        .map(str::trim)
        .map(|t| {
            if none_ok && t == "none" {
                return Ok(None);
            }
            match t.parse::<f64>() {
                Ok(f) if f > 0.0 && f <= 1.0 => Ok(Some(f)),
                _ => bail!(
                    "{flag}: `{t}` is not a fraction in (0, 1]{}; write e.g. {}",
                    if none_ok { " or none" } else { "" },
                    if none_ok {
                        "none,0.8,0.6"
                    } else {
                        "1,0.85,0.7"
                    }
                ),
            }
        })
        .collect()
}

pub fn run(args: Args) -> Result<()> {
    let kind = PolicyKind::parse(&args.policy).with_context(|| {
        format!(
            "unknown --policy `{}`; use one policy of simulate's list (e.g. fifo)",
            args.policy
        )
    })?;
    let budgets = fractions("--budgets", &args.budgets, true)?;
    let caps: Vec<f64> = fractions("--caps", &args.caps, false)?
        .into_iter()
        .flatten()
        .collect();
    let consolidate: Vec<bool> = match args.consolidate.as_str() {
        "off" => vec![false],
        "on" => vec![true],
        "both" => vec![false, true],
        other => bail!("--consolidate `{other}`: write off, on or both"),
    };
    let spec = power::lookup(&args.gpu_model).with_context(|| {
        format!(
            "no power figures for GPU model `{}`; the table knows {}",
            args.gpu_model,
            power::known_models()
        )
    })?;
    let workload = trace::read(&args.trace, None)?;
    let cluster = Cluster::parse_shape(&args.cluster, &args.gpu_model)?;
    let base = SimOptions::new(PolicyConfig::new(kind));
    // The JCT-only run first: no budget, no cap, idle nodes left on.
    let mut settings = vec![Setting {
        budget: None,
        cap: 1.0,
        consolidate: false,
    }];
    for &c in &consolidate {
        for &cap in &caps {
            for &b in &budgets {
                let s = Setting {
                    budget: b,
                    cap,
                    consolidate: c,
                };
                if !settings.contains(&s) {
                    settings.push(s);
                }
            }
        }
    }
    let mut points = Vec::new();
    for s in settings {
        let (p, _) = power_sweep::run_point(&workload, &cluster, &base, spec, &args.gpu_model, s)
            .with_context(|| format!("simulating {s:?}"))?;
        eprintln!("{}: done", p.label());
        points.push(p);
    }
    println!(
        "{} jobs from {} on {} GPUs ({}, {}: {} W busy, {} W idle), policy {}",
        workload.jobs.len(),
        workload.source,
        cluster.total_gpus(),
        args.cluster,
        args.gpu_model,
        spec.busy_w,
        spec.idle_w,
        kind.name()
    );
    print!("{}", power_sweep::table(&points));
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create --out {}", dir.display()))?;
        let json = serde_json::to_string_pretty(&points)?;
        std::fs::write(dir.join("tradeoff.json"), json + "\n")?;
        let mut csv = String::from(
            "budget_fraction,cap_fraction,speed,consolidate,avg_jct_h,p99_jct_h,makespan_h,energy_mwh,idle_node_hours\n",
        );
        for p in &points {
            csv.push_str(&format!(
                "{},{},{},{},{},{},{},{},{}\n",
                p.budget_fraction.map_or("none".into(), |b| b.to_string()),
                p.cap_fraction,
                p.speed,
                p.consolidate,
                p.avg_jct_h,
                p.p99_jct_h,
                p.makespan_h,
                p.energy.total_kwh / 1000.0,
                p.idle_node_hours
            ));
        }
        std::fs::write(dir.join("tradeoff.csv"), csv)?;
        power_sweep::svg(&dir.join("tradeoff.svg"), &points)?;
        println!(
            "wrote tradeoff.json, tradeoff.csv and tradeoff.svg to {}",
            dir.display()
        );
    }
    Ok(())
}
