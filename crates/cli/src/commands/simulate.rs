//! `gpusched simulate`: a trace in, a report per policy out.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use gpusched_core::placement::PlacementStrategy;
use gpusched_core::policy::{PolicyConfig, PolicyKind, Tenant};
use gpusched_core::reclaim::QuotaQueue;
use gpusched_core::schedule::PreemptMode;
use gpusched_core::Cluster;
use gpusched_sim::overhead::PassOverhead;
use gpusched_sim::power::{self, PowerSpec};
use gpusched_sim::reclaim::ReclaimOptions;
use gpusched_sim::tenants::{self, TenantReport};
use gpusched_sim::trace::synthetic::{self, SyntheticSpec};
use gpusched_sim::trace::{self, Format, Workload};
use gpusched_sim::{plot, report, simulate, Estimates, SimOptions, SimRun, Summary};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(clap::Args)]
pub struct Args {
    /// Trace file: Muri/Tiresias CSV, the Philly job table, or gpusched CSV/JSONL
    /// (detected from the header). Without it, a seeded synthetic workload is generated.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Force the trace format: muri, philly, gpusched (CSV) or jsonl.
    #[arg(long)]
    format: Option<String>,
    /// Cluster shape: NODESxGPUS (one switch) or SWITCHESxNODESxGPUS; or GPU types,
    /// MODEL:NODESxGPUS,... (e.g. v100:36x1,p100:36x1,k80:36x1), which runs the
    /// heterogeneous simulator (rounds, policies fifo, fifo-aware, las, las-aware,
    /// max-min, max-min-aware, gavel-fifo, gavel-fifo-aware; docs/heterogeneous.md).
    #[arg(long, default_value = "8x8", conflicts_with = "cluster_spec")]
    cluster: String,
    /// With a typed --cluster: how fast each job type runs on each GPU type (a JSON
    /// table keyed by the trace's `name`; docs/heterogeneous.md). Without it every job
    /// takes the default speed of each type.
    #[arg(long, value_name = "FILE")]
    throughputs: Option<PathBuf>,
    /// With a typed --cluster: seconds per scheduling round (Gavel's default, 360).
    #[arg(long, default_value_t = 360.0, value_name = "SECONDS")]
    round: f64,
    /// Cluster spec file (Muri format: num_switch,num_node_p_switch,num_gpu_p_node,...).
    #[arg(long)]
    cluster_spec: Option<PathBuf>,
    /// GPU model of every GPU of the simulated cluster (default: the one model the
    /// trace's `gpu_model` column names, else V100).
    #[arg(long)]
    gpu_model: Option<String>,
    /// Policies to compare, comma-separated: fifo, priority, sjf, srtf, srsf, tiresias,
    /// drf, backfill, blend, fairtree, edf, edf-backfill, rr, or `all`.
    #[arg(long, default_value = "fifo,srtf,tiresias")]
    policy: String,
    /// Placement: consolidated, best-fit, spread, pool or topology (a job larger than a
    /// node in equal parts under the fewest switches, the live cluster's gang rule).
    #[arg(long, default_value = "consolidated")]
    placement: String,
    /// Preemption: `repack` (jobs may move at every pass, as the Tiresias/Muri
    /// simulators assume) or `in-place` (running jobs never move, as on a live cluster).
    #[arg(long, default_value = "repack")]
    preempt: String,
    /// Per-event pause charged to running jobs: `none`, or `muri` (the Muri simulator's
    /// profiled restart overheads).
    #[arg(long, default_value = "none")]
    overhead: String,
    /// A job spread over more nodes than it needs runs this many times slower (1 = off).
    #[arg(long, default_value_t = 1.0)]
    locality_penalty: f64,
    /// `backfill`: reserve the blocked head job's GPUs on the node where it fits
    /// earliest, and let no job without an estimate past the reservation (as the live
    /// server does); off: one cluster-wide reservation.
    #[arg(long)]
    backfill_nodes: bool,
    /// `priority`: priority points gained per hour waited.
    #[arg(long, default_value_t = 1.0)]
    aging_per_hour: f64,
    /// `tiresias`: queue limits in GPU-seconds, comma-separated.
    #[arg(long, default_value = "3250,7200")]
    tiresias_limits: String,
    /// `tiresias`: promote a job that waited this many times its service (0 = off).
    #[arg(long, default_value_t = 0.0)]
    tiresias_starvation: f64,
    /// With --policy srtf, srsf or blend: the starvation guard: a job that has run
    /// and then waited K times the service it attained since its last promotion is
    /// promoted (it ranks by its service since then, least attained service restarted);
    /// 0 turns it off. Default 0 (off) for every policy.
    #[arg(long, value_name = "K")]
    promote_after: Option<f64>,
    /// With --policy srtf, srsf or blend: the long-job class: a job that has attained
    /// this much GPU-service goes behind every job that has not, and the jobs past it
    /// run first come, first served (Tiresias' last queue). A duration in GPU-time
    /// (`7200`, `2h`); 0 turns it off.
    #[arg(long, value_name = "GPU-SECONDS")]
    fifo_after: Option<String>,
    /// `fairtree`: decayed usage halves this often (Slurm's PriorityDecayHalfLife);
    /// each tenant is an account under the root (docs/accounts.md).
    #[arg(long, default_value = "7d", value_name = "DURATION")]
    fair_half_life: String,
    /// Tenants for `drf`, `fairtree` and the fairness index: user or queue.
    #[arg(long, default_value = "user")]
    fair_by: String,
    /// Also report every tenant (user, or queue with `--fair-by queue`): JCT, wait and
    /// GPU share per policy side by side, and each tenant's share of the busy GPUs hour
    /// by hour (`tenants` in the JSON; CSVs and a plot per policy with `--out`).
    #[arg(long)]
    per_tenant: bool,
    /// `--per-tenant`: width in seconds of the time bins in which shares and fair
    /// entitlements are measured. An hour suits Philly's months; fairness inside a bin
    /// is not seen.
    #[arg(long, default_value_t = 3600.0)]
    share_bin: f64,
    /// A live-cluster queue file: each queue's `max` caps its GPUs, its `weight` weighs
    /// it under drf (tenants become queues), and a queue below its `quota` reclaims GPUs
    /// by preempting borrowers, as on the server.
    #[arg(long, value_name = "FILE")]
    queues: Option<std::path::PathBuf>,
    /// With --queues: a job that (re)started less than this many seconds ago is not
    /// preempted by a reclaim (the server's --min-runtime).
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS")]
    min_runtime: f64,
    /// Add energy to the report: busy GPU-seconds x the GPU model's busy watts plus idle
    /// GPU-seconds x its idle watts over the makespan, in kWh per policy (an `energy`
    /// object in the JSON, an energy_kwh column in the per-job CSVs). The figures per
    /// model and their sources are in docs/energy.md.
    #[arg(long)]
    power_model: bool,
    /// With --power-model: a node running no job draws nothing (it could be powered
    /// down), so placement that packs jobs onto few nodes saves energy.
    #[arg(long, requires = "power_model")]
    power_down_idle: bool,
    /// Advance reservations beside the trace (a TOML file of `[[reservation]]` tables:
    /// name, start in the trace's seconds, duration, node indices; docs/reservations.md):
    /// no job runs on their nodes in their windows, none starts there before one unless
    /// its estimate ends by then. Each policy also runs without them, and the report says
    /// what they cost (utilisation, mean JCT).
    #[arg(long, value_name = "FILE")]
    reservations: Option<PathBuf>,
    /// What sjf, srtf, srsf and backfill are told of run times: `trace` (the trace's
    /// estimate column, else the true run time: what every reproduction uses), `oracle`
    /// (the true run time), `none`, `walltime` (the trace's walltime column),
    /// `noisy:SIGMA[:SEED]` (the truth times a log-normal error exp(N(0, SIGMA))), or
    /// `predicted` (the run-time predictor, learning from jobs as they end, and blend its
    /// beliefs; see docs/prediction.md). The report names what was used.
    #[arg(long, default_value = "trace", value_name = "MODE")]
    estimates: String,
    /// Give jobs deadlines as ElasticFlow's evaluation does: submit + a factor drawn
    /// uniformly from LO-HI times the job's run time (docs/deadlines.md). The report
    /// then says, per policy, the share of deadlines met and the best-effort jobs' JCT.
    #[arg(long, value_name = "LO-HI")]
    deadlines: Option<String>,
    /// With --deadlines: the share of jobs that get one (the rest are best-effort).
    #[arg(long, default_value_t = 1.0, requires = "deadlines")]
    deadline_share: f64,
    /// With --deadlines: the seed of the draws (per job id: the same for every policy).
    #[arg(long, default_value_t = 1, requires = "deadlines")]
    deadline_seed: u64,
    /// `edf`, `edf-backfill`: keep a job that can no longer make its deadline in
    /// deadline order (textbook EDF, the baseline) instead of moving it behind those
    /// that can.
    #[arg(long)]
    edf_plain: bool,
    /// `rr`: seconds a job runs before it makes way for one that waits (its turn).
    #[arg(long, default_value = "1h", value_name = "DURATION")]
    quantum: String,
    /// Take turns of --quantum under fifo, priority, sjf, srtf, srsf or blend: while
    /// jobs wait, a job that has run its turn makes way, and the waiting jobs take the
    /// GPUs in the policy's order (docs/preemption.md). Other policies refuse it.
    #[arg(long)]
    time_slice: bool,
    /// `rr`: refuse a quantum shorter than this many times the switching cost (the
    /// largest pause `--overhead` charges a job at a restart), so slicing never spends
    /// most of a GPU's time saving and restoring.
    #[arg(long, default_value_t = 10.0, value_name = "K")]
    quantum_floor: f64,
    /// Make this share of the single-node jobs elastic (docs/elastic.md): each may run
    /// on --elastic-min to --elastic-max times its trace size, grows into idle GPUs and
    /// shrinks for waiting jobs, a resize costing --resize-cost of progress.
    #[arg(long, value_name = "SHARE")]
    elastic: Option<f64>,
    /// With --elastic: the smallest size, as a factor of the trace's (at least 1 GPU).
    #[arg(
        long,
        default_value_t = 0.5,
        requires = "elastic",
        value_name = "FACTOR"
    )]
    elastic_min: f64,
    /// With --elastic: the largest size, as a factor of the trace's (at most a node).
    #[arg(
        long,
        default_value_t = 2.0,
        requires = "elastic",
        value_name = "FACTOR"
    )]
    elastic_max: f64,
    /// With --elastic: Amdahl's serial fraction of the elastic jobs (how badly they scale).
    #[arg(long, default_value_t = gpusched_core::elastic::DEFAULT_SERIAL, requires = "elastic")]
    elastic_serial: f64,
    /// With --elastic: the seed of the draw of which jobs are elastic (per job id).
    #[arg(long, default_value_t = 1, requires = "elastic")]
    elastic_seed: u64,
    /// With --elastic: the progress a resize costs (a checkpoint and a restart).
    #[arg(
        long,
        default_value = "60s",
        requires = "elastic",
        value_name = "DURATION"
    )]
    resize_cost: String,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
    /// Write report.json, one jobs-POLICY.csv per policy and SVG plots here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Synthetic workload: number of jobs.
    #[arg(long, default_value_t = 2000)]
    jobs: usize,
    /// Synthetic workload: random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Synthetic workload: offered load as a fraction of the cluster's GPUs.
    #[arg(long, default_value_t = 0.9)]
    load: f64,
    /// Synthetic workload: number of users.
    #[arg(long, default_value_t = 4)]
    tenants: u32,
}

fn parse_policies(list: &str) -> Result<Vec<PolicyKind>> {
    if list.trim() == "all" {
        return Ok(PolicyKind::ALL.to_vec());
    }
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|name| {
            PolicyKind::parse(name).with_context(|| {
                let known: Vec<&str> = PolicyKind::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "unknown policy `{name}`; use one of: {}, or all",
                    known.join(", ")
                )
            })
        })
        .collect::<Result<Vec<_>>>()
        .and_then(|v| {
            if v.is_empty() {
                bail!("--policy is empty; name at least one policy, e.g. --policy fifo");
            }
            Ok(v)
        })
}

/// `--quantum`, checked against `--quantum-floor` times the switching cost of the
/// trace's jobs under `--overhead` (only when `rr` runs).
fn rr_quantum(
    args: &Args,
    workload: &Workload,
    overhead: PassOverhead,
    kinds: &[PolicyKind],
) -> Result<f64> {
    let quantum = gpusched_wire::parse_duration(&args.quantum)
        .map_err(|e| anyhow::anyhow!("--quantum {:?}: {e}", args.quantum))?
        as f64;
    if args.time_slice {
        if let Some(why) = kinds.iter().find_map(|k| k.slice_refusal()) {
            bail!(why);
        }
    }
    if !kinds.contains(&PolicyKind::Rr) && !args.time_slice {
        return Ok(quantum);
    }
    if quantum <= 0.0 {
        bail!("--quantum must be above 0, e.g. 1h");
    }
    if !(args.quantum_floor.is_finite() && args.quantum_floor >= 0.0) {
        bail!(
            "--quantum-floor must be 0 or more (times the switching cost); got {}",
            args.quantum_floor
        );
    }
    let cost = workload
        .jobs
        .iter()
        .map(|j| overhead.seconds(j.model.as_deref(), j.spec.gpus))
        .fold(0.0, f64::max);
    if quantum < args.quantum_floor * cost {
        bail!(
            "--quantum {} is shorter than --quantum-floor {} x the switching cost {cost:.0} s \
             (--overhead {}): slicing would spend most of the GPUs' time saving and restoring; \
             give a quantum of at least {:.0} s or lower --quantum-floor",
            args.quantum,
            args.quantum_floor,
            args.overhead,
            args.quantum_floor * cost
        );
    }
    Ok(quantum)
}

fn parse_limits(list: &str) -> Result<Vec<f64>> {
    let limits: Vec<f64> = list
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .with_context(|| {
                    format!("--tiresias-limits: `{s}` is not a positive number of GPU-seconds")
                })
        })
        .collect::<Result<_>>()?;
    if limits.windows(2).any(|w| w[0] >= w[1]) {
        bail!("--tiresias-limits must increase, e.g. 3250,7200; got {list}");
    }
    Ok(limits)
}

/// A Muri cluster spec file (see [`gpusched_sim::trace::muri::parse_cluster_spec`]).
fn read_cluster_spec(path: &Path, model: &str) -> Result<Cluster> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{file}: cannot read the cluster spec"))?;
    Ok(gpusched_sim::trace::muri::parse_cluster_spec(
        &file, &text, model,
    )?)
}

pub fn run(args: Args) -> Result<()> {
    if let Some(a) = args.promote_after {
        anyhow::ensure!(
            a.is_finite() && a >= 0.0,
            "--promote-after must be a number of at least 0"
        );
    }
    if gpusched_sim::hetero::HeteroCluster::is_typed(&args.cluster) {
        return super::simulate_hetero::run(super::simulate_hetero::HeteroArgs {
            cluster: &args.cluster,
            trace: args.trace.as_deref(),
            format: args.format.as_deref(),
            policy: &args.policy,
            policy_is_default: args.policy == "fifo,srtf,tiresias",
            throughputs: args.throughputs.as_deref(),
            round: args.round,
            json: args.json,
            out: args.out.as_ref(),
        });
    }
    if args.throughputs.is_some() {
        bail!(
            "--throughputs needs a --cluster of GPU types, MODEL:NODESxGPUS,... (e.g. \
             v100:36x1,k80:36x1); `{}` has one type",
            args.cluster
        );
    }
    let kinds = parse_policies(&args.policy)?;
    let placement = PlacementStrategy::parse(&args.placement).with_context(|| {
        format!(
            "unknown placement `{}`; use one of: consolidated, best-fit, spread, pool, topology",
            args.placement
        )
    })?;
    let mode = match args.preempt.as_str() {
        "repack" => PreemptMode::Repack,
        "in-place" => PreemptMode::InPlace,
        other => bail!("unknown --preempt `{other}`; use repack or in-place"),
    };
    let overhead = PassOverhead::parse(&args.overhead)
        .with_context(|| format!("unknown --overhead `{}`; use none or muri", args.overhead))?;
    if !(args.locality_penalty.is_finite() && args.locality_penalty >= 1.0) {
        bail!(
            "--locality-penalty must be at least 1 (1 = off); got {}",
            args.locality_penalty
        );
    }
    let tenant = match args.fair_by.as_str() {
        "user" => Tenant::User,
        "queue" => Tenant::Queue,
        other => bail!("unknown --fair-by `{other}`; use user or queue"),
    };
    let limits = parse_limits(&args.tiresias_limits)?;
    if !(args.share_bin.is_finite() && args.share_bin > 0.0) {
        bail!(
            "--share-bin must be a positive number of seconds (3600 = hourly); got {}",
            args.share_bin
        );
    }
    let estimates = Estimates::parse(&args.estimates).map_err(anyhow::Error::msg)?;
    let format = args.format.as_deref().map(Format::parse).transpose()?;
    let traced = match &args.trace {
        Some(path) => Some(trace::read(path, format)?),
        None => None,
    };
    let model = cluster_model(args.gpu_model.as_deref(), traced.as_ref())?;
    let cluster = match &args.cluster_spec {
        Some(p) => read_cluster_spec(p, &model)?,
        None => Cluster::parse_shape(&args.cluster, &model)?,
    };
    let mut workload = match traced {
        Some(w) => w,
        None => synthetic_workload(&args, &cluster)?,
    };
    if let Some(range) = &args.deadlines {
        let spec = gpusched_sim::deadlines::DeadlineSpec::parse(
            range,
            args.deadline_share,
            args.deadline_seed,
        )
        .map_err(anyhow::Error::msg)?;
        gpusched_sim::deadlines::assign(&mut workload, &spec);
    }
    let queues = match &args.queues {
        Some(path) => Some(queue_file(path, &workload)?),
        None => None,
    };
    let quantum = rr_quantum(&args, &workload, overhead, &kinds)?;
    let fifo_after = match &args.fifo_after {
        Some(f) => Some(gpusched_wire::parse_duration(f).map_err(|e| {
            anyhow::anyhow!("--fifo-after {f:?}: {e} (GPU-seconds, e.g. 7200 or 2h)")
        })? as f64),
        None => None,
    };
    let fair_half_life = gpusched_wire::parse_duration(&args.fair_half_life)
        .map_err(|e| anyhow::anyhow!("--fair-half-life {:?}: {e}", args.fair_half_life))?;
    if fair_half_life == 0 {
        bail!("--fair-half-life must be above 0, e.g. 7d");
    }
    // Only `fairtree` reads a job's account; charging them changes no other policy.
    let fair_tree = kinds.contains(&PolicyKind::FairTree).then(|| {
        let (t, w) = match &queues {
            Some(q) => (Tenant::Queue, q.weights.clone()),
            None => (tenant, Default::default()),
        };
        gpusched_core::policy::fairtree::FairTreeConfig {
            tree: gpusched_sim::accounts::charge_tenants(&mut workload, t, &w),
            half_life: fair_half_life as f64,
        }
    });
    let windows = match &args.reservations {
        Some(path) => super::simulate_reservations::read(path, &cluster)?,
        None => Vec::new(),
    };
    let power = match args.power_model {
        true => Some(power::lookup(&model).with_context(|| {
            format!(
                "--power-model has no power figures for GPU model `{model}`; it knows {}: \
                 simulate with --gpu-model set to one of them, or without --power-model",
                power::known_models()
            )
        })?),
        false => None,
    };

    let elastic = match args.elastic {
        Some(share) => Some(
            gpusched_sim::elastic::SimElastic {
                share,
                seed: args.elastic_seed,
                min_factor: args.elastic_min,
                max_factor: args.elastic_max,
                serial: args.elastic_serial,
                resize_cost: gpusched_wire::parse_duration(&args.resize_cost)
                    .map_err(|e| anyhow::anyhow!("--resize-cost {:?}: {e}", args.resize_cost))?
                    as f64,
            }
            .checked()
            .map_err(anyhow::Error::msg)?,
        ),
        None => None,
    };
    let opts: Vec<SimOptions> = kinds
        .iter()
        .map(|&kind| {
            let mut policy = PolicyConfig::new(kind);
            policy.aging_per_hour = args.aging_per_hour;
            policy.backfill_nodes = args.backfill_nodes;
            policy.las_limits = limits.clone();
            policy.starvation = args.tiresias_starvation;
            policy.deadline_demote = !args.edf_plain;
            policy.rr_quantum = quantum;
            policy.time_slice = args.time_slice;
            if let Some(a) = args.promote_after {
                policy.promote_after = a;
            }
            if let Some(f) = fifo_after {
                policy.fifo_after = f;
            }
            policy.tenant = tenant;
            if let Some(q) = &queues {
                // The queue file's weights make drf balance queues, as the server does.
                policy.tenant = Tenant::Queue;
                policy.weights = q.weights.clone();
            }
            if let Some(ft) = &fair_tree {
                policy.fair_tree = ft.clone();
            }
            SimOptions {
                policy,
                placement,
                mode,
                overhead,
                locality_penalty: args.locality_penalty,
                tenant_bins: args.per_tenant.then_some(args.share_bin),
                queue_limits: queues
                    .as_ref()
                    .map(|q| q.limits.clone())
                    .unwrap_or_default(),
                reclaim: queues.as_ref().and_then(|q| {
                    q.quotas
                        .values()
                        .any(|d| d.quota > 0)
                        .then(|| ReclaimOptions {
                            queues: q.quotas.clone(),
                            min_runtime: args.min_runtime,
                        })
                }),
                powered_idle: args.power_down_idle,
                estimates: estimates.clone(),
                windows: windows.clone(),
                power_budget: None,
                elastic: elastic.clone(),
            }
        })
        .collect();

    let runs = run_all(&workload, &cluster, &opts)?;
    let by_queue = tenant == Tenant::Queue;
    let summaries: Vec<Summary> = runs
        .iter()
        .zip(&opts)
        .map(|(r, o)| {
            let mut s = Summary::of(r, o.policy.kind.name(), placement.name(), by_queue);
            s.energy =
                power.map(|p| power::Energy::of(r, s.makespan, p, &model, args.power_down_idle));
            s.deadlines = gpusched_sim::deadlines::DeadlineSummary::of(r, &workload);
            s
        })
        .collect();
    let tenant_reports: Option<Vec<TenantReport>> = args.per_tenant.then(|| {
        runs.iter()
            .zip(&opts)
            .map(|(r, o)| TenantReport::of(r, &workload, o.policy.kind.name(), by_queue))
            .collect()
    });
    let cluster_name = match &args.cluster_spec {
        Some(p) => p.display().to_string(),
        None => args.cluster.clone(),
    };
    let doc = report::Report {
        trace: &workload.source,
        cluster: cluster_name,
        total_gpus: cluster.total_gpus(),
        policies: &summaries,
        tenants: tenant_reports.as_deref(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "{} from {} on {} ({})",
            gpusched_wire::count(workload.jobs.len() as u64, "job"),
            workload.source,
            gpusched_wire::count(cluster.total_gpus(), "GPU"),
            doc.cluster
        );
        print!("{}", report::table(&summaries));
        print!("{}", report::estimates(&summaries));
        for s in &summaries {
            if let Some(d) = &s.deadlines {
                print!("{}", d.line(&s.policy));
            }
            if let Some(e) = &s.elastic {
                println!(
                    "elastic ({}): {} jobs elastic, {} resizes",
                    s.policy, e.jobs, e.resizes
                );
            }
        }
        if !windows.is_empty() {
            // The same runs without the windows: what they cost.
            let bare: Vec<SimOptions> = opts
                .iter()
                .map(|o| SimOptions {
                    windows: Vec::new(),
                    ..o.clone()
                })
                .collect();
            let without = run_all(&workload, &cluster, &bare)?;
            let held = super::simulate_reservations::held_gpu_seconds(&windows, &cluster);
            println!(
                "reservations: {} holding {:.1} GPU-hours (used by no trace job)",
                gpusched_wire::count(windows.len() as u64, "window"),
                held / 3600.0
            );
            for (s, r) in summaries.iter().zip(&without) {
                let w = Summary::of(r, &s.policy, placement.name(), by_queue);
                println!(
                    "  {}: utilisation {:.1}% (without them {:.1}%), mean JCT {:.0} s \
                     (without them {:.0} s), makespan {:.0} s ({:.0} s)",
                    s.policy,
                    s.utilization * 100.0,
                    w.utilization * 100.0,
                    s.avg_jct,
                    w.avg_jct,
                    s.makespan,
                    w.makespan
                );
            }
        }
        if let Some(t) = &tenant_reports {
            println!();
            print!("{}", tenants::table::table(t));
        }
    }
    if let Some(dir) = &args.out {
        write_out(dir, &doc, &runs, &opts, &workload, by_queue, power)?;
        if !args.json {
            println!(
                "wrote report.json, per-job CSVs and plots to {}",
                dir.display()
            );
        }
    }
    Ok(())
}

/// The model of the simulated cluster's GPUs: `--gpu-model`, else the one model the
/// trace asks for (so a trace written for A100s runs as written), else V100. A trace
/// asking for several models needs a choice: the simulated cluster has one model.
fn cluster_model(flag: Option<&str>, trace: Option<&Workload>) -> Result<String> {
    if let Some(m) = flag {
        return Ok(m.to_string());
    }
    let asked: std::collections::BTreeSet<&str> = trace
        .iter()
        .flat_map(|w| &w.jobs)
        .filter_map(|j| j.spec.gpu_model.as_deref())
        .collect();
    let asked: Vec<&str> = asked.into_iter().collect();
    match asked[..] {
        [] => Ok("V100".to_string()),
        [one] => Ok(one.to_string()),
        _ => bail!(
            "the trace asks for GPU models {}, but a simulated cluster has one model; pass \
             --gpu-model MODEL (jobs asking for another model then cannot run) or drop the \
             gpu_model column",
            asked.join(", ")
        ),
    }
}

fn synthetic_workload(args: &Args, cluster: &Cluster) -> Result<Workload> {
    if args.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    if !(args.load.is_finite() && args.load > 0.0) {
        bail!(
            "--load must be above 0 (0.9 = the cluster 90% asked for); got {}",
            args.load
        );
    }
    Ok(synthetic::generate(&SyntheticSpec {
        jobs: args.jobs,
        seed: args.seed,
        load: args.load,
        cluster_gpus: cluster.total_gpus(),
        max_job_gpus: cluster.max_gpus_per_switch(),
        tenants: args.tenants,
    }))
}

/// Runs every policy, in parallel when there are cores for it, with a progress bar if the
/// whole takes more than a second.
fn run_all(workload: &Workload, cluster: &Cluster, opts: &[SimOptions]) -> Result<Vec<SimRun>> {
    let started = Instant::now();
    let total = (workload.jobs.len() * opts.len()) as u64;
    let bar = std::sync::Mutex::new(None::<ProgressBar>);
    let done: Vec<std::sync::atomic::AtomicU64> = opts.iter().map(|_| Default::default()).collect();
    let report = |i: usize, n: usize| {
        done[i].store(n as u64, std::sync::atomic::Ordering::Relaxed);
        if started.elapsed() < Duration::from_secs(1) {
            return;
        }
        let sum: u64 = done
            .iter()
            .map(|d| d.load(std::sync::atomic::Ordering::Relaxed))
            .sum();
        let mut bar = bar.lock().expect("progress lock");
        let b = bar.get_or_insert_with(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} simulating [{bar:40}] {pos}/{len} jobs ({eta} left)",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            b
        });
        b.set_position(sum);
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut results: Vec<Option<Result<SimRun>>> = opts.iter().map(|_| None).collect();
    for chunk in (0..opts.len()).collect::<Vec<_>>().chunks(threads) {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|&i| {
                    let report = &report;
                    let o = &opts[i];
                    (
                        i,
                        s.spawn(move || {
                            simulate(workload, cluster, o, &mut |d, _| report(i, d))
                                .with_context(|| format!("policy {}", o.policy.kind.name()))
                        }),
                    )
                })
                .collect();
            for (i, h) in handles {
                results[i] =
                    Some(h.join().unwrap_or_else(|_| {
                        Err(anyhow::anyhow!("the simulation thread panicked"))
                    }));
            }
        });
    }
    if let Some(b) = bar.lock().expect("progress lock").take() {
        b.finish_and_clear();
    }
    results
        .into_iter()
        .map(|r| r.expect("every policy ran"))
        .collect()
}

fn write_out(
    dir: &Path,
    doc: &report::Report,
    runs: &[SimRun],
    opts: &[SimOptions],
    w: &Workload,
    by_queue: bool,
    power: Option<&PowerSpec>,
) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output folder {}", dir.display()))?;
    let json = dir.join("report.json");
    std::fs::write(&json, serde_json::to_string_pretty(doc)? + "\n")
        .with_context(|| format!("cannot write {}", json.display()))?;
    for (run, o) in runs.iter().zip(opts) {
        let path = dir.join(format!("jobs-{}.csv", o.policy.kind.name()));
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(&path)
                .with_context(|| format!("cannot write {}", path.display()))?,
        );
        report::write_jobs_csv_with(&mut f, run, w, power)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let named: Vec<(String, &SimRun)> = runs
        .iter()
        .zip(opts)
        .map(|(r, o)| (o.policy.kind.name().to_string(), r))
        .collect();
    plot::jct_cdf(&dir.join("jct_cdf.svg"), &named)?;
    plot::queue_length(&dir.join("queue_length.svg"), &named)?;
    plot::utilization(&dir.join("utilization.svg"), &named)?;
    if let Some(reports) = doc.tenants {
        write_tenants(dir, reports, runs, opts, w, by_queue)?;
    }
    Ok(())
}

/// `tenants-POLICY.csv`, `shares-POLICY.csv` and `tenant_share-POLICY.svg` per policy.
fn write_tenants(
    dir: &Path,
    reports: &[TenantReport],
    runs: &[SimRun],
    opts: &[SimOptions],
    w: &Workload,
    by_queue: bool,
) -> Result<()> {
    let names = if by_queue { &w.queues } else { &w.users };
    let create = |name: String| -> Result<(PathBuf, std::io::BufWriter<std::fs::File>)> {
        let path = dir.join(name);
        let f = std::fs::File::create(&path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok((path, std::io::BufWriter::new(f)))
    };
    for ((report, run), o) in reports.iter().zip(runs).zip(opts) {
        let policy = o.policy.kind.name();
        let (path, mut f) = create(format!("tenants-{policy}.csv"))?;
        tenants::table::write_tenants_csv(&mut f, report)
            .and_then(|_| f.flush())
            .with_context(|| format!("cannot write {}", path.display()))?;
        let Some(usage) = &run.tenants else {
            continue;
        };
        let (path, mut f) = create(format!("shares-{policy}.csv"))?;
        tenants::table::write_shares_csv(&mut f, usage, names)
            .and_then(|_| f.flush())
            .with_context(|| format!("cannot write {}", path.display()))?;
        tenants::plot::tenant_shares(
            &dir.join(format!("tenant_share-{policy}.svg")),
            &format!("{policy}: each tenant's share of the busy GPUs"),
            usage,
            names,
        )?;
    }
    Ok(())
}

/// A queue file's caps and weights, keyed by the trace's queue numbers.
struct QueueFile {
    limits: std::collections::BTreeMap<gpusched_core::QueueId, u32>,
    weights: std::collections::BTreeMap<u32, f64>,
    quotas: std::collections::BTreeMap<gpusched_core::QueueId, QuotaQueue>,
}

/// Reads a live-cluster queue file (`[queues.NAME]` with `max`, `weight`, ...) for the
/// trace's queues (Philly: the VCs).
fn queue_file(path: &std::path::Path, workload: &Workload) -> Result<QueueFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the queue file {}", path.display()))?;
    let parsed = gpusched_server::queues::Queues::parse(&text, &path.display().to_string())
        .map_err(anyhow::Error::msg)?;
    let mut out = QueueFile {
        limits: Default::default(),
        weights: Default::default(),
        quotas: Default::default(),
    };
    for (i, name) in workload.queues.iter().enumerate() {
        if let Some(def) = parsed.defs.get(name) {
            let id = gpusched_core::QueueId(i as u32);
            if let Some(max) = def.max {
                out.limits.insert(id, max);
            }
            out.weights.insert(i as u32, def.weight);
            out.quotas.insert(
                id,
                QuotaQueue {
                    quota: def.quota,
                    preemptible: def.preemptible,
                },
            );
        }
    }
    let unknown: Vec<&String> = parsed
        .defs
        .keys()
        .filter(|n| !workload.queues.contains(n))
        .collect();
    if !unknown.is_empty() && out.weights.is_empty() {
        bail!(
            "none of the queues in {} ({}) appears in the trace, whose queues are: {}",
            path.display(),
            unknown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            workload.queues.join(", ")
        );
    }
    Ok(out)
}
