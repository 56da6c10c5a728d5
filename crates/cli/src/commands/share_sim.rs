//! `gpusched simulate-sharing`: the FGD paper's GPU-sharing experiment on the Alibaba
//! v2023 trace, one row per strategy (mean over seeds), plus JSON and an SVG plot.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use gpusched_core::sharing::ShareStrategy;
use gpusched_sim::sharing::plot::unallocated_vs_arrived;
use gpusched_sim::sharing::{bin_by_arrived, mean_bins, run_with, Bins, RunOptions, ShareWorkload};
use gpusched_sim::trace::openb;

#[derive(clap::Args)]
pub struct Args {
    /// Node list CSV (sn,cpu_milli,memory_mib,gpu,model).
    #[arg(long)]
    nodes: PathBuf,
    /// Pod list CSV (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec]).
    #[arg(long)]
    pods: PathBuf,
    /// Strategies, comma-separated: best-fit, worst-fit, fgd, fgd-pack,
    /// fgd-coarse, fgd-fit, or `all`.
    #[arg(long, default_value = "best-fit,fgd,fgd-fit")]
    strategy: String,
    /// Seeds, `42..51` (inclusive) or comma-separated; each draws the pod order exactly
    /// as the FGD authors' simulator does with Go's math/rand.
    #[arg(long, default_value = "42..51")]
    seeds: String,
    /// FGD's target workload from the last N arrivals (the pods of that window, one
    /// whole GPU added if none of them asks for whole GPUs; rebuilt every 128 arrivals)
    /// instead of the typical pods of the whole list: the live server's demand rule,
    /// with arrivals for time. Off by default (the peer's procedure).
    #[arg(long, value_name = "N")]
    demand_window: Option<usize>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
    /// Write sharing.json and unallocated.svg here.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn parse_seeds(s: &str) -> Result<Vec<i64>> {
    let s = s.trim();
    if let Some((a, b)) = s.split_once("..") {
        let a: i64 = a
            .trim()
            .parse()
            .with_context(|| format!("bad seed range `{s}`"))?;
        let b: i64 = b
            .trim()
            .parse()
            .with_context(|| format!("bad seed range `{s}`"))?;
        if b < a {
            bail!("seed range `{s}` is empty; write FIRST..LAST with FIRST <= LAST");
        }
        return Ok((a..=b).collect());
    }
    s.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .with_context(|| format!("`{x}` is not a seed; use e.g. 42..51 or 42,43"))
        })
        .collect()
}

fn parse_strategies(s: &str) -> Result<Vec<ShareStrategy>> {
    if s.trim() == "all" {
        return Ok(ShareStrategy::ALL.to_vec());
    }
    s.split(',')
        .map(|x| ShareStrategy::parse(x).map_err(anyhow::Error::from))
        .collect()
}

fn fmt_pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

pub fn run(args: Args) -> Result<()> {
    let strategies = parse_strategies(&args.strategy)?;
    let seeds = parse_seeds(&args.seeds)?;
    if args.demand_window == Some(0) {
        bail!(
            "--demand-window 0 would leave no arrivals in the window; give at least 1 (e.g. 1000)"
        );
    }
    let opts = RunOptions {
        demand_window: args.demand_window,
    };
    let w = ShareWorkload {
        nodes: openb::read_nodes(&args.nodes)?,
        pods: openb::read_pods(&args.pods)?,
        source: args.pods.display().to_string(),
    };
    let mut rows = Vec::new();
    for &s in &strategies {
        let started = Instant::now();
        let mut per_seed = Vec::new();
        let mut failed = 0;
        let mut pods = 0;
        for &seed in &seeds {
            let r = run_with(&w, s, seed, opts)?;
            failed += r.failed;
            pods += r.pods;
            per_seed.push(bin_by_arrived(&r));
        }
        let secs = started.elapsed().as_secs_f64() / seeds.len().max(1) as f64;
        rows.push((s, mean_bins(&per_seed), per_seed, failed, pods, secs));
    }
    let mut doc = serde_json::json!({
        "nodes": args.nodes.display().to_string(),
        "pods": w.source,
        "seeds": seeds,
        "strategies": rows.iter().map(|(s, mean, per_seed, failed, pods, secs)| serde_json::json!({
            "strategy": s.name(),
            "unallocated_pct_at_100": mean.unallocated_at(100),
            "unallocated_pct_at_130": mean.unallocated_at(130),
            "per_seed_unallocated_pct_at_100": per_seed.iter().map(|b| b.unallocated_at(100)).collect::<Vec<_>>(),
            "failed_pods": failed,
            "arrived_pods": pods,
            "seconds_per_run": secs,
            "allocated_pct_by_arrived": mean.allocated_pct,
            "frag_pct_by_arrived": mean.frag_pct,
        })).collect::<Vec<_>>(),
    });
    // Only with the option, so the default document stays as it was.
    if let Some(n) = args.demand_window {
        doc["demand_window_arrivals"] = n.into();
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "{:<10} {:>14} {:>14} {:>12} {:>10}",
            "strategy", "unalloc@100%", "unalloc@130%", "failed/run", "s/run"
        );
        for (s, mean, _, failed, _, secs) in &rows {
            println!(
                "{:<10} {:>14} {:>14} {:>12.1} {:>10.3}",
                s.name(),
                fmt_pct(mean.unallocated_at(100)),
                fmt_pct(mean.unallocated_at(130)),
                *failed as f64 / seeds.len().max(1) as f64,
                secs
            );
        }
        println!("(unallocated GPU %, mean over {} seed(s))", seeds.len());
        if let Some(n) = args.demand_window {
            println!("(FGD's target: the last {n} arrivals, not the whole list)");
        }
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(
            dir.join("sharing.json"),
            serde_json::to_string_pretty(&doc)?,
        )?;
        let series: Vec<(String, &Bins)> = rows
            .iter()
            .map(|r| (r.0.name().to_string(), &r.1))
            .collect();
        unallocated_vs_arrived(&dir.join("unallocated.svg"), &series)?;
    }
    Ok(())
}
