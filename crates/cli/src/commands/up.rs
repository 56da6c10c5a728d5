//! `gpusched up`: server, a local agent and the embedded store in one foreground
//! process — the quickest way to a working scheduler on one GPU box.

use clap::Args as ClapArgs;
use tokio::sync::watch;

use super::agent::{host_name, GpuArgs, NodeArgs, RetentionArgs, TelemetryArgs};
use super::server::ServerArgs;
use gpusched_agent::session::AgentConfig;

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub gpu: GpuArgs,
    #[command(flatten)]
    pub node: NodeArgs,
    #[command(flatten)]
    pub telemetry: TelemetryArgs,
    #[command(flatten)]
    pub retention: RetentionArgs,
    /// Node name of the local agent (default: the host name).
    #[arg(long)]
    pub name: Option<String>,
    /// When running as root, also run jobs submitted by root (as root). Off by default:
    /// jobs run as their submitting Unix user.
    #[arg(long)]
    pub allow_root_jobs: bool,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let cfg = args.server.config()?;
    let agent_dir = cfg.data_dir.join("agent");
    let name = args.name.clone().unwrap_or_else(host_name);
    let found = args.gpu.discover(&agent_dir, &name)?;
    let gpus = found.gpus.clone();
    let bound = gpusched_server::bind(cfg.clone()).await?;
    // As an agent's own (`agent.rs`): jobs pass through it, nobody lists it; after the
    // server made the data directory above it.
    gpusched_server::unlistable_dir(
        &agent_dir,
        "the local agent's state directory",
        "--data-dir",
    )?;
    let server = bound.url();
    let (cpus, mem_mib, resources) = args.node.offer()?;
    let agent = AgentConfig {
        server: server.clone(),
        name: name.clone(),
        state_dir: agent_dir,
        gpus: gpus.clone(),
        control: found.control,
        mps: args.gpu.mps,
        cpus,
        mem_mib,
        resources,
        features: args.node.features()?,
        log_listen: "127.0.0.1:0".parse().expect("a valid address"),
        log_url: None,
        join_token: bound.join_token().to_string(),
        allow_root_jobs: args.allow_root_jobs,
        instant_jobs: false,
        // The local agent talks to its own listener: trust its certificate.
        ca_cert: cfg.tls.as_ref().map(|(cert, _)| cert.clone()),
        // One host: the route to its own server (loopback) is its address.
        advertise_addr: None,
        location: Default::default(),
        telemetry_interval: args.telemetry.telemetry_interval,
        metrics_listen: args.telemetry.metrics_listen,
        retention: args.retention.policy(),
        // Contained where the host allows, with no defaults: what a job asks is its
        // limit (`gpusched agent` has the flags to set more).
        contain: gpusched_agent::launcher::ContainConfig {
            cgroup: gpusched_agent::cgroup::CgroupChoice::Auto,
            ..Default::default()
        },
        // `up` runs host jobs only (`gpusched agent --image-runtime` runs images).
        image: None,
    };
    if nix::unistd::geteuid().is_root() && !args.allow_root_jobs {
        eprintln!(
            "note: running as root, so each job runs as the Unix user who submitted it and \
             jobs submitted by root are refused; pass --allow-root-jobs to run them as root"
        );
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let agent_task = tokio::spawn(gpusched_agent::session::run(agent, stop_rx));
    let source = gpus.first().map(|g| g.source.name()).unwrap_or("none");
    // The CLI finds the default data directory's socket by itself; elsewhere say where.
    let default_dir = super::server::default_data_dir().ok();
    let env_hint = if default_dir.as_deref() == Some(cfg.data_dir.as_path()) {
        String::new()
    } else {
        format!(
            "  export GPUSCHED_SERVER=unix:{}\n",
            bound.socket().display()
        )
    };
    let banner = format!(
        "gpusched is up: server {server}, data in {}, node {name} with {} ({source}), policy {}.\n\
         Local users reach it through {} (no token needed).\n\
         \n\
         In another terminal:\n\
         {env_hint}  gpusched submit --gpus 1 -- nvidia-smi      # sbatch\n\
         \x20 gpusched queue                                # squeue\n\
         \x20 gpusched logs -f ID                           # tail the job's stdout\n\
         \x20 gpusched cancel ID                            # scancel\n\
         \x20 gpusched nodes                                # sinfo\n\
         \n\
         Dashboard: {server}/ (sign in with a token: gpusched token create USER [--admin]).\n\
         \n\
         Ctrl-C (or SIGTERM) stops the running jobs (SIGTERM, their grace, then SIGKILL) and requeues\n\
         them without using a retry; they run at the next `up`. Ctrl-C twice quits at once.",
        cfg.data_dir.display(),
        gpusched_wire::count(gpus.len() as u64, "GPU"),
        cfg.policy.name(),
        bound.socket().display()
    );
    // Not println!: whoever reads this may stop reading (`up | head -1`), and a closed
    // stdout must not bring the server down.
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{banner}");
        let _ = out.flush();
    }
    // On Ctrl-C or SIGTERM the agent stops its jobs with their grace and reports them
    // (requeued, no retry used) while the server still serves; then both go. A second
    // signal quits at once: the jobs die with this process (parent-death signal) and
    // the next agent reports them lost.
    let mut serve = tokio::spawn(bound.serve(std::future::pending()));
    tokio::select! {
        r = &mut serve => return r.map_err(anyhow::Error::from).and_then(|r| r),
        _ = super::shutdown_signal() => {}
    }
    eprintln!("stopping: the running jobs get SIGTERM and their grace, then are requeued; Ctrl-C again to quit at once");
    let _ = stop_tx.send(true);
    tokio::select! {
        r = agent_task => match r {
            Ok(Ok(())) => eprintln!("stopped"),
            Ok(Err(e)) => eprintln!("warning: the agent stopped with an error: {e:#}"),
            Err(e) => eprintln!("warning: the agent task failed: {e}"),
        },
        _ = super::shutdown_signal() => eprintln!("quitting at once"),
    }
    serve.abort();
    Ok(())
}
