//! `gpusched simulate --cluster v100:36x1,k80:36x1 --throughputs FILE`: the
//! heterogeneous simulator (rounds, the core's heterogeneity-aware policies), with the
//! same report as the homogeneous one. docs/heterogeneous.md.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use gpusched_sim::hetero::{
    simulate_hetero, HeteroCluster, HeteroOptions, HeteroPolicy, Throughputs,
};
use gpusched_sim::trace::{self, Format};
use gpusched_sim::{plot, report, SimRun, Summary};

/// The heterogeneous policies run when `--policy` is left at its default.
const DEFAULT: &str = "fifo,fifo-aware,las,las-aware,max-min,max-min-aware";

/// What the heterogeneous run takes from `simulate`'s flags.
pub struct HeteroArgs<'a> {
    pub cluster: &'a str,
    pub trace: Option<&'a Path>,
    pub format: Option<&'a str>,
    pub policy: &'a str,
    pub policy_is_default: bool,
    pub throughputs: Option<&'a Path>,
    pub round: f64,
    pub json: bool,
    pub out: Option<&'a PathBuf>,
}

fn parse_policies(list: &str) -> Result<Vec<HeteroPolicy>> {
    if list.trim() == "all" {
        return Ok(HeteroPolicy::ALL.to_vec());
    }
    let known = || {
        HeteroPolicy::ALL
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let v: Vec<HeteroPolicy> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|n| {
            HeteroPolicy::parse(n).with_context(|| {
                format!(
                    "`{n}` is not a policy of the heterogeneous simulator (a --cluster with \
                     GPU types); use one of: {}, or all",
                    known()
                )
            })
        })
        .collect::<Result<_>>()?;
    if v.is_empty() {
        bail!("--policy is empty; name at least one, e.g. --policy las-aware");
    }
    Ok(v)
}

pub fn run(a: HeteroArgs) -> Result<()> {
    let cluster = HeteroCluster::parse(a.cluster)?;
    let policies = parse_policies(if a.policy_is_default {
        DEFAULT
    } else {
        a.policy
    })?;
    if !(a.round.is_finite() && a.round > 0.0) {
        bail!(
            "--round must be a positive number of seconds (Gavel's is 360); got {}",
            a.round
        );
    }
    let Some(path) = a.trace else {
        bail!(
            "the heterogeneous simulator needs --trace: a gpusched CSV whose `name` column \
             names each job's row in --throughputs, and whose `duration` is its run time on \
             the reference GPU type"
        );
    };
    let format = a.format.map(Format::parse).transpose()?;
    let workload = trace::read(path, format)?;
    let table = match a.throughputs {
        Some(p) => {
            let file = p.display().to_string();
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("{file}: cannot read the throughput table"))?;
            Throughputs::parse(&file, &text)?
        }
        // Without a table every job takes the default speed of each type.
        None => Throughputs::default(),
    };
    let runs: Vec<SimRun> = std::thread::scope(|s| {
        let handles: Vec<_> = policies
            .iter()
            .map(|&p| {
                let (w, c, t) = (&workload, &cluster, &table);
                let opts = HeteroOptions {
                    round: a.round,
                    ..HeteroOptions::new(p)
                };
                s.spawn(move || {
                    simulate_hetero(w, c, t, &opts).with_context(|| format!("policy {}", p.name()))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("the simulation thread panicked")))
            })
            .collect::<Result<Vec<_>>>()
    })?;
    let summaries: Vec<Summary> = runs
        .iter()
        .zip(&policies)
        .map(|(r, p)| Summary::of(r, p.name(), "rounds", false))
        .collect();
    let doc = report::Report {
        trace: &workload.source,
        cluster: a.cluster.to_string(),
        total_gpus: cluster.total_gpus(),
        policies: &summaries,
        tenants: None,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "{} from {} on {} ({}), rounds of {} s",
            gpusched_wire::count(workload.jobs.len() as u64, "job"),
            workload.source,
            gpusched_wire::count(cluster.total_gpus() as u64, "GPU"),
            a.cluster,
            a.round
        );
        print!("{}", report::table(&summaries));
    }
    if let Some(dir) = a.out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the output folder {}", dir.display()))?;
        let json = dir.join("report.json");
        std::fs::write(&json, serde_json::to_string_pretty(&doc)? + "\n")
            .with_context(|| format!("cannot write {}", json.display()))?;
        for (r, p) in runs.iter().zip(&policies) {
            let path = dir.join(format!("jobs-{}.csv", p.name()));
            let mut f = std::io::BufWriter::new(
                std::fs::File::create(&path)
                    .with_context(|| format!("cannot write {}", path.display()))?,
            );
            report::write_jobs_csv_with(&mut f, r, &workload, None)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        let named: Vec<(String, &SimRun)> = runs
            .iter()
            .zip(&policies)
            .map(|(r, p)| (p.name().to_string(), r))
            .collect();
        plot::jct_cdf(&dir.join("jct_cdf.svg"), &named)?;
        plot::queue_length(&dir.join("queue_length.svg"), &named)?;
        plot::utilization(&dir.join("utilization.svg"), &named)?;
        if !a.json {
            println!(
                "wrote report.json, per-job CSVs and plots to {}",
                dir.display()
            );
        }
    }
    Ok(())
}
