//! `gpusched submit`: the `sbatch` / `hq submit` of gpusched.
//!
//! `gpusched submit [flags] -- PROGRAM ARGS...` or `gpusched submit --file job.toml`
//! (flags override the file). The command runs directly, without a shell; use
//! `-- sh -c '...'` for a shell line.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use gpusched_wire::{JobFile, JobSubmit};

use super::fmt::parse_duration;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// A TOML job file (fields: name, command, gpus, gpu_share, gpu_mem, mig, gpu_model,
    /// cpus, mem, resources, cwd, env, walltime, priority, max_retries, array, nodes,
    /// gpus_per_node, split, tasks_per_node, mixed_models, image, pids).
    #[arg(long, short = 'f', value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Job name (default: the program's file name).
    #[arg(long, short = 'J')]
    pub name: Option<String>,
    /// Whole GPUs on one node (default 1); 0 for a CPU-only job, which sees no GPU
    /// (CUDA_VISIBLE_DEVICES is empty) and runs on any node with room. With --split,
    /// the total over several nodes. MIN-MAX (e.g. 2-8) makes it elastic: it runs on
    /// as many as its node has idle in that range and is resized through the checkpoint
    /// contract (docs/elastic.md).
    #[arg(long, short = 'G', value_name = "N|MIN-MAX")]
    pub gpus: Option<GpuCount>,
    /// An elastic job's scaling: the share of a step that does not speed up with more
    /// GPUs (Amdahl's serial fraction, default 0.05).
    #[arg(long, value_name = "FRACTION")]
    pub scaling_serial: Option<f64>,
    /// Run on N nodes at once (a gang, e.g. for torchrun or Horovod): every part starts
    /// together or none does, with MASTER_ADDR, MASTER_PORT, NNODES, NODE_RANK and
    /// WORLD_SIZE set (docs/distributed.md). Give the GPUs of each with --gpus-per-node.
    #[arg(long, short = 'N', value_name = "N")]
    pub nodes: Option<u32>,
    /// Whole GPUs on each node of a gang (with --nodes); --gpus is then their product.
    #[arg(long, value_name = "G")]
    pub gpus_per_node: Option<u32>,
    /// Let the scheduler split --gpus into equal parts on as few nodes as it can (16 may
    /// run as 2 x 8 or 4 x 4); without it, --gpus must fit on one node.
    #[arg(long)]
    pub split: bool,
    /// Start K processes on each node, each with RANK, LOCAL_RANK, LOCAL_WORLD_SIZE and
    /// its own GPUs (K must divide the GPUs per node), as `srun` does for env:// DDP.
    /// Default: one process per node (a launcher such as torchrun starts the ranks).
    #[arg(long, value_name = "K")]
    pub tasks_per_node: Option<u32>,
    /// A gang's nodes may have different GPU models (default: all the same model).
    #[arg(long)]
    pub mixed_models: bool,
    /// A share of one GPU's compute instead of whole GPUs, e.g. 0.25.
    // `-0.5` and `-inf` reach the range check, which says what is allowed.
    #[arg(long, value_name = "FRACTION", allow_hyphen_values = true)]
    pub gpu_share: Option<f64>,
    /// A share of one GPU by memory instead of whole GPUs, e.g. 20GiB.
    #[arg(long, value_name = "SIZE")]
    pub gpu_mem: Option<String>,
    /// One MIG instance of this profile instead of whole GPUs, e.g. 1g.10gb or 3g.40gb.
    #[arg(long, value_name = "PROFILE")]
    pub mig: Option<String>,
    /// Accepted GPU model prefix, e.g. A100 or H100-80GB.
    #[arg(long)]
    pub gpu_model: Option<String>,
    /// CPUs the job needs (Slurm's -c): held on its node while it runs, so jobs that
    /// need more than a node has left wait; its CPU quota (and cores near its GPUs)
    /// where its node has cgroups (`gpusched nodes` says). Also weighed by fair share.
    #[arg(long, short = 'c', allow_hyphen_values = true)]
    pub cpus: Option<f64>,
    /// Memory the job needs: 512M, 16G, 1T (plain numbers are MiB); held on its node
    /// while it runs, like --cpus, and its memory limit where its node has cgroups:
    /// over it, the kernel kills the job and it fails "out of memory" with its peak.
    #[arg(long)]
    pub mem: Option<String>,
    /// A generic resource the job needs on its node, NAME=COUNT (repeatable), e.g.
    /// fpga=1: it waits for a node whose agent declared it (`agent --resource`) to have
    /// it free, and gets GPUSCHED_RESOURCE_FPGA=1 in its environment.
    #[arg(long, value_name = "NAME=COUNT")]
    pub resource: Vec<String>,
    /// Run the command in this container image, e.g. docker.io/library/python:3.12 (a
    /// SIF file on apptainer nodes): as you, with the working directory, checkpoint
    /// directory and GPUs of a host job, on nodes whose agent runs images
    /// (docs/containers.md).
    #[arg(long, value_name = "REF")]
    pub image: Option<String>,
    /// At most N processes and threads at once on each node (cgroup pids.max;
    /// default: the node's).
    #[arg(long, value_name = "N")]
    pub pids: Option<u64>,
    /// Run-time limit: 90 (seconds), 15m, 2h30m, 1d or HH:MM:SS.
    // Hyphen values reach the duration parser, so `-t -5m` is told what a duration is
    // rather than clap's "unexpected argument '-5'".
    #[arg(long, short = 't', value_name = "DURATION", allow_hyphen_values = true)]
    pub walltime: Option<String>,
    /// Working directory on the node (default: the current directory).
    #[arg(long, short = 'D', visible_alias = "chdir")]
    pub cwd: Option<String>,
    /// Environment variable for the job, KEY=VALUE (repeatable).
    #[arg(long, short = 'e', value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Larger runs earlier under the `priority` policy (default: the queue's).
    #[arg(long, allow_hyphen_values = true)]
    pub priority: Option<i32>,
    /// The queue (`gpusched queues` lists them; default: `default` or your first).
    #[arg(long, short = 'q')]
    pub queue: Option<String>,
    /// Partitions the job may run in, comma-separated, in order of preference: it runs
    /// on the nodes of the first that can hold it, never elsewhere (`gpusched nodes`
    /// shows each node's; default: the cluster's default partition, if any).
    #[arg(long, short = 'p', value_name = "NAME[,NAME...]")]
    pub partition: Option<String>,
    /// Node features the job's nodes must have: `a100&nvlink`, `h100|a100`, `!slow`,
    /// parentheses (Slurm's --constraint; `gpusched nodes` shows features).
    #[arg(long, short = 'C', value_name = "EXPR")]
    pub constraint: Option<String>,
    /// Run only on these nodes, comma-separated, with Slurm's ranges: gpu[01-04],login1
    /// (Slurm's --nodelist).
    #[arg(long, short = 'w', value_name = "NODE[,NODE...]")]
    pub nodelist: Option<String>,
    /// Never run on these nodes, as --nodelist (Slurm's --exclude).
    #[arg(long, short = 'x', value_name = "NODE[,NODE...]")]
    pub exclude: Option<String>,
    /// Run inside this advance reservation, in its window (`gpusched reservation ls`).
    #[arg(long, value_name = "NAME")]
    pub reservation: Option<String>,
    /// How many times faster than a V100 it runs on GPU models: H100=2.8,A100=1.6.
    /// Where several models are free it goes to the one where it gains most; without
    /// it, what jobs of the same user and name taught, else a default per model
    /// (docs/heterogeneous.md).
    #[arg(long, value_name = "MODEL=FACTOR,...")]
    pub speedup: Option<String>,
    /// Charge this account (docs/accounts.md; `gpusched accounts` lists them); default:
    /// your default account.
    #[arg(long, short = 'A')]
    pub account: Option<String>,
    /// When it must be finished: +6h (from now), 2026-12-08T06:00 (local time) or RFC
    /// 3339. The answer says whether its estimate (walltime, else the predictor's) meets
    /// it; the edf policies run it before jobs due later (docs/deadlines.md).
    #[arg(long, value_name = "TIME")]
    pub deadline: Option<String>,
    /// Requeues if the job's node is lost (default: the server's, 3).
    #[arg(long)]
    pub max_retries: Option<u32>,
    /// Start only after job ID succeeded (repeatable; Slurm's --dependency=afterok:ID).
    /// `any:ID`: after it ended however (afterany); `notok:ID`: only if it ended without
    /// succeeding (afternotok; if it succeeds this job is cancelled); `ok:ID` = `ID`.
    #[arg(long, value_name = "[KIND:]ID")]
    pub after: Vec<String>,
    /// Submit held: the job waits until `gpusched release ID` (Slurm's --hold).
    #[arg(long)]
    pub hold: bool,
    /// An array of tasks in one submission: N (tasks 0..N-1), A-B, or A-B:STEP, each
    /// optionally with %K (at most K running at once), e.g. 0-9999%8. Each task gets
    /// GPUSCHED_ARRAY_INDEX and GPUSCHED_ARRAY_ID; `queue` shows the array as one line,
    /// `show ID.7`, `logs ID.7` and `cancel ID.7` reach one task (docs/arrays.md).
    #[arg(long, value_name = "SPEC")]
    pub array: Option<String>,
    /// Print the ids as JSON.
    #[arg(long)]
    pub json: bool,
    /// Wait for the job(s) to end; exit 0 only if all succeeded.
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The jobs these arguments describe (one: an array is one submission).
pub fn build(args: &Args) -> anyhow::Result<Vec<JobSubmit>> {
    let file = match &args.file {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read the job file {}", p.display()))?;
            JobFile::parse(&text).map_err(|e| anyhow::anyhow!("job file {}: {e}", p.display()))?
        }
        None => JobFile::default(),
    };
    build_with(args, file)
}

/// The jobs of a parsed job file with these arguments over it (a workflow step is a job
/// file without flags): the flags are laid over the file's fields, and the file becomes
/// a submission by the one conversion the service file uses too
/// ([`JobFile::to_submit`]), its messages naming the flag or the field.
pub fn build_with(args: &Args, mut file: JobFile) -> anyhow::Result<Vec<JobSubmit>> {
    if !args.command.is_empty() {
        file.command = Some(args.command.clone());
    }
    if file.command.as_ref().is_none_or(Vec::is_empty) {
        bail!("no command given: put it after `--` (gpusched submit --gpus 1 -- python train.py) or set `command` in the job file");
    }
    if let Some(w) = &args.walltime {
        file.walltime = Some(parse_duration(w).map_err(|e| anyhow::anyhow!("--walltime: {e}"))?);
    }
    overlay(args, &mut file)?;
    let deps = super::after::parse_after(&args.after)?;
    if !args.after.is_empty() {
        file.after = deps.after;
    }
    if let Some(share) = file.gpu_share {
        check_share(&named(args, "gpu_share"), share)?;
    }
    let mut job = file
        .to_submit(&|field| named(args, field))
        .map_err(anyhow::Error::msg)?;
    if job.cwd.is_none() {
        job.cwd = Some(current_dir()?);
    }
    job.after_any = deps.after_any;
    job.after_notok = deps.after_notok;
    job.hold = args.hold;
    job.client_token = Some(client_token());
    if let Some(d) = &file.deadline {
        let flag = if args.deadline.is_some() {
            "--deadline"
        } else {
            "deadline"
        };
        job.deadline_ms = Some(super::reservation_time::parse_deadline(
            flag,
            d,
            super::fmt::now_ms(),
            &super::reservation_time::Local,
        )?);
    }
    Ok(vec![job])
}

/// `--gpus`: a count, or an elastic range `MIN-MAX`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GpuCount {
    pub min: u32,
    /// `Some` for a range: the job is elastic.
    pub max: Option<u32>,
}

impl std::str::FromStr for GpuCount {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let num = |t: &str| t.trim().parse::<u32>().ok();
        let bad = || {
            format!(
                "{s:?} is not a GPU count: give a whole number (e.g. 2) or an elastic range \
                 MIN-MAX (e.g. 2-8)"
            )
        };
        match s.split_once('-') {
            None => num(s)
                .map(|min| GpuCount { min, max: None })
                .ok_or_else(bad),
            Some((a, b)) => {
                let (min, max) = (num(a).ok_or_else(bad)?, num(b).ok_or_else(bad)?);
                if min == 0 || min > max {
                    return Err(format!(
                        "{s:?}: an elastic range needs 1 <= MIN <= MAX (e.g. 2-8)"
                    ));
                }
                Ok(GpuCount {
                    min,
                    max: Some(max),
                })
            }
        }
    }
}

/// The flags given, over the file's fields (`command`, `walltime` and `after` are the
/// caller's: they are parsed or checked first).
fn overlay(args: &Args, file: &mut JobFile) -> anyhow::Result<()> {
    fn over<T: Clone>(field: &mut Option<T>, flag: &Option<T>) {
        if flag.is_some() {
            field.clone_from(flag);
        }
    }
    over(&mut file.name, &args.name);
    if let Some(g) = args.gpus {
        file.gpus = Some(g.min);
        file.gpus_max = g.max;
    }
    over(&mut file.scaling_serial, &args.scaling_serial);
    over(&mut file.gpu_share, &args.gpu_share);
    over(&mut file.gpu_mem, &args.gpu_mem);
    over(&mut file.mig, &args.mig);
    over(&mut file.gpu_model, &args.gpu_model);
    over(&mut file.cpus, &args.cpus);
    over(&mut file.mem, &args.mem);
    over(&mut file.cwd, &args.cwd);
    over(&mut file.priority, &args.priority);
    over(&mut file.queue, &args.queue);
    over(&mut file.max_retries, &args.max_retries);
    over(&mut file.nodes, &args.nodes);
    over(&mut file.gpus_per_node, &args.gpus_per_node);
    over(&mut file.tasks_per_node, &args.tasks_per_node);
    over(&mut file.image, &args.image);
    over(&mut file.pids, &args.pids);
    over(&mut file.partition, &args.partition);
    over(&mut file.constraint, &args.constraint);
    over(&mut file.nodelist, &args.nodelist);
    over(&mut file.exclude, &args.exclude);
    over(&mut file.reservation, &args.reservation);
    over(&mut file.speedup, &args.speedup);
    over(&mut file.account, &args.account);
    over(&mut file.deadline, &args.deadline);
    file.split |= args.split;
    file.mixed_models |= args.mixed_models;
    for kv in &args.env {
        let (k, v) = kv
            .split_once('=')
            .with_context(|| format!("--env {kv:?} must be KEY=VALUE"))?;
        file.env.insert(k.to_string(), v.to_string());
    }
    if !args.resource.is_empty() {
        file.resources = gpusched_wire::resource::parse_all(&args.resource)
            .map_err(|e| anyhow::anyhow!("--resource {e}"))?;
    }
    if let Some(a) = &args.array {
        file.array =
            Some(gpusched_wire::ArraySpec::parse(a).map_err(|e| anyhow::anyhow!("--array: {e}"))?);
    }
    Ok(())
}

/// The current directory, a job's default working directory.
pub fn current_dir() -> anyhow::Result<String> {
    Ok(std::env::current_dir()
        .context("cannot read the current directory; pass --cwd")?
        .display()
        .to_string())
}

/// A token unique to this invocation: a retried call is then safe (the server
/// deduplicates by it).
fn client_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{nanos:x}-{:x}", std::process::id())
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let jobs = build(&args)?;
    let jobs_array = jobs.first().and_then(|j| j.array);
    let client = args.conn.client()?;
    let submitted = client.submit(jobs).await?;
    let ids = &submitted.ids;
    if args.json {
        println!("{}", serde_json::to_string(&submitted)?);
    } else if let (Some(a), [id]) = (&jobs_array, ids.as_slice()) {
        println!(
            "Submitted array {id}: {} ({}); `gpusched show {id}` counts them",
            gpusched_wire::count(a.len(), "task"),
            a.text()
        );
    } else if ids.len() == 1 {
        println!("Submitted job {}", ids[0]);
    } else {
        println!(
            "Submitted {} jobs, {}-{}",
            ids.len(),
            ids.first().copied().unwrap_or(0),
            ids.last().copied().unwrap_or(0)
        );
    }
    if let (Some(d), false) = (&submitted.deadline, args.json) {
        println!("{}", super::fmt::deadline_line(d, super::fmt::now_ms()));
    }
    if args.wait {
        let ok = super::wait::wait_all(&client, ids, None, args.json).await?;
        if !ok {
            std::process::exit(1);
        }
    }
    Ok(())
}

/// A field as messages name it: the flag when one set it, else the job file's field.
fn named(args: &Args, field: &'static str) -> String {
    let (given, flag) = match field {
        "name" => (args.name.is_some(), "--name (-J)"),
        "walltime" => (args.walltime.is_some(), "--walltime (-t)"),
        "image" => (args.image.is_some(), "--image"),
        "pids" => (args.pids.is_some(), "--pids"),
        "gpu_share" => (args.gpu_share.is_some(), "--gpu-share"),
        "cpus" => (args.cpus.is_some(), "--cpus (-c)"),
        "mem" => (args.mem.is_some(), "--mem"),
        "gpus" => (args.gpus.is_some(), "--gpus"),
        "nodes" => (args.nodes.is_some(), "--nodes"),
        "gpus_per_node" => (args.gpus_per_node.is_some(), "--gpus-per-node"),
        _ => (false, ""),
    };
    if given {
        flag.to_string()
    } else {
        JobFile::in_job_file(field)
    }
}

/// A GPU share as the core reads it (its range is the core's one rule), `what` naming
/// where it was written; the replica of a service is checked with it too.
pub fn check_share(what: &str, share: f64) -> anyhow::Result<()> {
    gpusched_core::resources::gpu_request_from_fields(None, Some(share), None, None)
        .map_err(|e| anyhow::anyhow!("{what} {share}: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{build, Args};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn args(argv: &[&str]) -> Args {
        let argv = std::iter::once("submit").chain(argv.iter().copied());
        Cli::try_parse_from(argv).unwrap().args
    }

    #[test]
    fn gpus_take_a_count_or_an_elastic_range() {
        let j = &build(&args(&["--gpus", "2-8", "--cwd", "/", "--", "true"])).unwrap()[0];
        assert_eq!(
            (j.gpus, j.gpus_max, j.scaling_serial),
            (Some(2), Some(8), None)
        );
        let j = &build(&args(&["-G", "3", "--cwd", "/", "--", "true"])).unwrap()[0];
        assert_eq!((j.gpus, j.gpus_max), (Some(3), None));
        let argv = [
            "--gpus",
            "1-4",
            "--scaling-serial",
            "0.2",
            "--cwd",
            "/",
            "--",
            "true",
        ];
        let j = &build(&args(&argv)).unwrap()[0];
        assert_eq!((j.gpus_max, j.scaling_serial), (Some(4), Some(0.2)));
        for bad in ["8-2", "0-4", "two", "2-", "3-x"] {
            let argv = ["submit", "--gpus", bad, "--", "true"];
            let e = Cli::try_parse_from(argv).err().expect(bad).to_string();
            assert!(
                e.contains("MIN-MAX") || e.contains("MIN <= MAX"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn memory_errors_name_the_flag() {
        let j = &build(&args(&["--mem", "16G", "--cwd", "/", "--", "true"])).unwrap()[0];
        assert_eq!(j.mem_mib, Some(16384));
        let e = refused(&["--mem", "lots"]);
        assert!(e.starts_with("--mem") && e.contains("16G"), "{e}");
    }

    #[test]
    fn a_job_file_takes_bare_seconds_and_a_command_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("job.toml");
        std::fs::write(
            &path,
            "command = \"python train.py --tag 'a b'\"\nwalltime = 90\ncwd = \"/\"\n",
        )
        .unwrap();
        let file = path.to_str().unwrap();
        let jobs = build(&args(&["--file", file])).unwrap();
        assert_eq!(jobs[0].command, ["python", "train.py", "--tag", "a b"]);
        assert_eq!(jobs[0].walltime_s, Some(90));
        // The flag overrides the file, and means the same number the same way.
        let jobs = build(&args(&["--file", file, "-t", "2m"])).unwrap();
        assert_eq!(jobs[0].walltime_s, Some(120));
        let jobs = build(&args(&["--file", file, "-t", "90"])).unwrap();
        assert_eq!(jobs[0].walltime_s, Some(90));
    }

    #[test]
    fn gang_flags_reach_the_submission_and_the_file_fills_what_flags_leave() {
        let j = &build(&args(&[
            "--nodes",
            "2",
            "--gpus-per-node",
            "4",
            "--tasks-per-node",
            "2",
            "--mixed-models",
            "--cwd",
            "/",
            "--",
            "true",
        ]))
        .unwrap()[0];
        assert_eq!(
            (j.nodes, j.gpus_per_node, j.gpus, j.tasks_per_node),
            (Some(2), Some(4), None, Some(2))
        );
        assert!(j.mixed_models && !j.split);

        let j = &build(&args(&["-G", "16", "--split", "--cwd", "/", "--", "true"])).unwrap()[0];
        assert_eq!(
            (j.gpus, j.split, j.nodes, j.gpus_per_node),
            (Some(16), true, None, None)
        );

        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("job.toml");
        std::fs::write(
            &path,
            "command = \"true\"\ncwd = \"/\"\nnodes = 2\ngpus_per_node = 2\nsplit = false\n",
        )
        .unwrap();
        let file = path.to_str().unwrap();
        let j = &build(&args(&["-f", file])).unwrap()[0];
        assert_eq!((j.nodes, j.gpus_per_node, j.gpus), (Some(2), Some(2), None));
        // A flag overrides the file's field.
        let j = &build(&args(&["-f", file, "--nodes", "3"])).unwrap()[0];
        assert_eq!((j.nodes, j.gpus_per_node), (Some(3), Some(2)));
        // An array is one submission, of the gang's shape.
        let js = build(&args(&["-f", file, "--array", "0-9%2"])).unwrap();
        assert_eq!(js.len(), 1);
        let a = js[0].array.expect("an array");
        assert_eq!((a.len(), a.max_running), (10, Some(2)));
        assert_eq!((js[0].nodes, js[0].gpus_per_node), (Some(2), Some(2)));
        let e = build(&args(&["-f", file, "--array", "5-2"])).unwrap_err();
        assert!(e.to_string().contains("--array"), "{e}");
        std::fs::write(
            &path,
            "command = \"true\"\ncwd = \"/\"\narray = \"0-9999%8\"\n",
        )
        .unwrap();
        let a = build(&args(&["-f", file])).unwrap()[0].array.unwrap();
        assert_eq!((a.len(), a.max_running), (10_000, Some(8)));
        std::fs::write(&path, "command = \"true\"\ncwd = \"/\"\narray = 20\n").unwrap();
        let a = build(&args(&["-f", file])).unwrap()[0].array.unwrap();
        assert_eq!((a.first, a.last), (0, 19));
    }

    #[test]
    fn a_total_that_disagrees_with_the_gang_is_refused() {
        let e = build(&args(&[
            "-N",
            "2",
            "--gpus-per-node",
            "4",
            "-G",
            "6",
            "--cwd",
            "/",
            "--",
            "true",
        ]))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("--gpus 6 disagrees") && e.contains("--gpus 8"),
            "{e}"
        );
        // The same total is fine; without both halves of the gang the server decides.
        assert!(build(&args(&[
            "-N",
            "2",
            "--gpus-per-node",
            "4",
            "-G",
            "8",
            "--cwd",
            "/",
            "--",
            "true"
        ]))
        .is_ok());
        let j = &build(&args(&["-N", "2", "-G", "8", "--cwd", "/", "--", "true"])).unwrap()[0];
        assert_eq!((j.nodes, j.gpus_per_node, j.gpus), (Some(2), None, Some(8)));
    }

    fn refused(argv: &[&str]) -> String {
        let argv: Vec<&str> = argv
            .iter()
            .copied()
            .chain(["--cwd", "/", "--", "true"])
            .collect();
        build(&args(&argv)).unwrap_err().to_string()
    }

    #[test]
    fn a_share_or_cpus_that_is_not_a_number_in_range_is_refused() {
        for bad in ["nan", "NaN", "inf", "-inf", "0", "1.5", "-0.25"] {
            let e = refused(&["--gpu-share", bad]);
            assert!(
                e.starts_with("--gpu-share") && e.contains("above 0 and at most 1"),
                "{bad}: {e}"
            );
        }
        for bad in ["nan", "inf", "0"] {
            let e = refused(&["--cpus", bad]);
            assert!(e.starts_with("--cpus (-c)") && e.contains("above 0"), "{e}");
        }
        let ok = &build(&args(&["--gpu-share", "0.25", "--cwd", "/", "--", "true"])).unwrap()[0];
        assert_eq!(ok.gpu_share, Some(0.25));
        // TOML has nan and inf too.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("job.toml");
        std::fs::write(&path, "command = \"true\"\ncwd = \"/\"\ngpu_share = nan\n").unwrap();
        let e = build(&args(&["-f", path.to_str().unwrap()]))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("`gpu_share` in the job file NaN"), "{e}");
    }

    #[test]
    fn an_empty_or_control_character_name_is_refused_naming_the_flag() {
        let e = refused(&["-J", ""]);
        assert!(
            e.starts_with("--name (-J) is empty") && e.contains("leave it out"),
            "{e}"
        );
        for bad in ["evil\x1b]0;pwned\x07", "two\nlines", "a\u{202e}b"] {
            let e = refused(&["-J", bad]);
            assert!(e.contains("control characters"), "{e}");
        }
        let ok = &build(&args(&["-J", "训练 🚀", "--cwd", "/", "--", "true"])).unwrap()[0];
        assert_eq!(ok.name.as_deref(), Some("训练 🚀"));
    }

    #[test]
    fn an_image_and_a_process_cap_reach_the_submission_from_flags_or_the_file() {
        let j = &build(&args(&[
            "--image",
            "gpusched-test/busybox:1",
            "--pids",
            "64",
            "--cwd",
            "/",
            "--",
            "true",
        ]))
        .unwrap()[0];
        assert_eq!(j.image.as_deref(), Some("gpusched-test/busybox:1"));
        assert_eq!(j.pids_max, Some(64));
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("job.toml");
        std::fs::write(
            &path,
            "command = \"true\"\ncwd = \"/\"\nimage = \"a/b:1\"\npids = 8\n",
        )
        .unwrap();
        let j = &build(&args(&["-f", path.to_str().unwrap()])).unwrap()[0];
        assert_eq!((j.image.as_deref(), j.pids_max), (Some("a/b:1"), Some(8)));
        let e = refused(&["--image", "a b"]);
        assert!(
            e.starts_with("--image: ") && e.contains("whitespace"),
            "{e}"
        );
        let e = refused(&["--image", ""]);
        assert!(e.contains("empty"), "{e}");
        let e = refused(&["--pids", "0"]);
        assert!(e.starts_with("--pids is 0"), "{e}");
    }

    #[test]
    fn a_zero_or_negative_walltime_names_the_flag() {
        let e = refused(&["-t", "0"]);
        assert!(
            e.starts_with("--walltime (-t) is 0") && !e.contains("walltime_s"),
            "{e}"
        );
        let e = refused(&["-t", "-5m"]);
        assert!(e.starts_with("--walltime") && e.contains("\"-5m\""), "{e}");
    }

    #[test]
    fn a_repeated_duration_unit_is_refused() {
        let e = build(&args(&["-t", "1h1h", "--cwd", "/", "--", "true"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--walltime") && e.contains("`h` twice"), "{e}");
    }
}
