//! `gpusched`: one binary for the whole scheduler. Each subcommand lives in its own file
//! under `commands/`.

mod client;
mod commands;
mod malloc;

use clap::{Parser, Subcommand};

/// Rust's inclusive ranges in a message (`is not in 1..=65535`) as people write them
/// (`is not between 1 and 65535`); the rest of the text unchanged.
fn human_ranges(msg: &str) -> String {
    let range = |w: &str| -> Option<String> {
        let trimmed = w.trim_end_matches(|c: char| !c.is_ascii_digit());
        let (lo, hi) = trimmed.split_once("..=")?;
        let number = |n: &str| {
            !n.is_empty()
                && n.trim_start_matches('-')
                    .bytes()
                    .all(|b| b.is_ascii_digit())
        };
        (number(lo) && number(hi)).then(|| format!("between {lo} and {hi}{}", &w[trimmed.len()..]))
    };
    msg.split_inclusive(' ')
        .map(|w| {
            let (word, space) = w.strip_suffix(' ').map_or((w, ""), |x| (x, " "));
            range(word).map_or_else(|| w.to_string(), |r| r + space)
        })
        .collect::<String>()
        .replace(" is not in between ", " is not between ")
}

/// gpusched — a GPU cluster scheduler.
#[derive(Parser)]
#[command(name = "gpusched", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Server + local agent + embedded store in one process: a scheduler on this box.
    Up(Box<commands::up::Args>),
    /// Submit a job (`sbatch`): gpusched submit --gpus 1 -- python train.py
    Submit(commands::submit::Args),
    /// Hold GPUs and run a shell with them (`salloc`): gpusched alloc --gpus 2
    Alloc(Box<commands::alloc::Args>),
    /// Run a command as a step of a job, its output live, its input forwarded, its exit
    /// code yours (`srun`): gpusched run --jobid ID [--pty] -- CMD, or with submit's
    /// options for a job of its own.
    Run(commands::run::RunArgs),
    /// List queued and running jobs (`squeue`).
    Queue(commands::queue::Args),
    /// Queues: limits, weights, who may use them, what they hold.
    Queues(commands::queues::Args),
    /// Accounts: the fair tree's shares, decayed usage and fair-share factors.
    Accounts(commands::accounts::Args),
    /// Everything about one job (`scontrol show job`).
    Show(commands::show::Args),
    /// Cancel jobs (`scancel`).
    Cancel(commands::cancel::Args),
    /// Report that a running job saved a checkpoint now.
    Checkpoint(commands::checkpoint::Args),
    /// Keep a pending job from starting until released (`scontrol hold`).
    Hold(commands::hold::HoldArgs),
    /// Let a held job wait for its turn again (`scontrol release`).
    Release(commands::hold::HoldArgs),
    /// Change a pending job's priority, walltime or queue (`scontrol update`).
    Update(commands::hold::UpdateArgs),
    /// Submit a workflow: a TOML file of steps and the steps each waits for.
    Workflow(commands::workflow::Args),
    /// Inference services: replicas of a model server kept running, rolled out and
    /// scaled (`service create FILE`, `ls`, `show`, `scale`, `logs`, `delete`).
    Service(commands::service::Args),
    /// Advance reservations: nodes held for a window of time, for some users or queues
    /// or for maintenance (`scontrol create reservation`; `create`, `ls`, `show`,
    /// `update`, `delete`).
    #[command(visible_alias = "resv")]
    Reservation(commands::reservation::Args),
    /// Print a job's output; -f follows it.
    Logs(commands::logs::Args),
    /// Nodes and their GPUs (`sinfo`).
    Nodes(commands::nodes::Args),
    /// Take a node out of placement for maintenance (admins; `scontrol update
    /// state=drain`).
    Drain(commands::drain::DrainArgs),
    /// Put a drained node, or one with unhealthy GPUs, back in placement (admins).
    Resume(commands::drain::ResumeArgs),
    /// A live terminal view of nodes, GPUs and jobs (`top`); --once prints one frame.
    Top(commands::top::Args),
    /// Wait for jobs to end; exit 0 only if all succeeded.
    Wait(commands::wait::Args),
    /// GPU-hours per user or queue (`sreport`).
    Usage(commands::usage::Args),
    /// Issue, list and revoke API tokens (admins).
    Token(commands::token::Args),
    /// The admin actions the server recorded, newest first (admins).
    Audit(commands::audit::Args),
    /// The cluster's ended jobs as a trace for `simulate` (`--format gpusched`): admins
    /// export everyone's, users their own.
    History(commands::history::Args),
    /// Administration: `admin purge --before DATE` (admins, through the server); `admin
    /// migrate-store` and `admin backup` (whole-store copies, straight to the store).
    Admin(commands::admin::Args),
    /// How the server sees you.
    Whoami(commands::token::WhoamiArgs),
    /// The control-plane server alone.
    Server(commands::server::ServerArgs),
    /// The node agent of one GPU host.
    Agent(commands::agent::Args),
    /// The inference gateway in front of the services' replicas (Open Inference
    /// Protocol, OpenAI API): routing, batching, holding while a service scales up.
    Gateway(commands::gateway::Args),
    /// Replay a trace (or a synthetic workload) through the scheduling core and report
    /// JCT, waiting, makespan, utilisation and fairness per policy.
    Simulate(commands::simulate::Args),
    /// The FGD paper's GPU-sharing experiment (Alibaba v2023): unallocated GPU by strategy.
    SimulateSharing(commands::share_sim::Args),
    /// Energy against JCT for power budgets, GPU power caps and consolidation on a trace,
    /// beside the JCT-only run: a table, and with --out JSON, CSV and an SVG curve.
    SimulatePower(commands::power_sim::Args),
}

fn main() {
    let cli = Cli::try_parse().unwrap_or_else(|e| match e.kind() {
        // A number out of range: clap says it in Rust's syntax (`is not in
        // 0..=4294967295`); say it as people write it.
        clap::error::ErrorKind::ValueValidation => {
            eprint!("{}", human_ranges(&e.render().to_string()));
            std::process::exit(2);
        }
        _ => e.exit(),
    });
    let result = match cli.command {
        Command::Simulate(args) => commands::simulate::run(args),
        Command::SimulateSharing(args) => commands::share_sim::run(args),
        Command::SimulatePower(args) => commands::power_sim::run(args),
        live => run_live(live),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
}

/// The commands that talk to (or are) a live cluster run on a tokio runtime.
fn run_live(cmd: Command) -> anyhow::Result<()> {
    let daemon = matches!(
        cmd,
        Command::Up(_) | Command::Server(_) | Command::Agent(_) | Command::Gateway(_)
    );
    if !daemon {
        // A client piped into `head` should end quietly when the reader goes away, as
        // Unix tools do, instead of panicking on a failed print. (Daemons keep SIGPIPE
        // ignored: a client hanging up must never kill the server.)
        // SAFETY: called before any other thread exists; SIG_DFL is always valid.
        unsafe {
            let _ = nix::sys::signal::signal(
                nix::sys::signal::Signal::SIGPIPE,
                nix::sys::signal::SigHandler::SigDfl,
            );
        }
    }
    if daemon {
        // A server holds a descriptor per connection, an agent several per job: the soft
        // limit (1024 on many systems) is raised to the hard one.
        gpusched_server::raise_open_files_limit();
        let filter = tracing_subscriber::EnvFilter::try_from_env("GPUSCHED_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init();
        malloc::bound_retained_memory();
    }
    // A client command makes one or a few requests in turn: a current-thread runtime
    // does that without starting a worker thread per core, which is most of what the
    // runtime costs a short-lived process. The agent too runs on one thread: its tasks
    // (poll, report, supervise) hand work to each other for every job, and across
    // worker threads each hand-off was a futex wake and a context switch (16 a job; a
    // third of its CPU on a VM, docs/benchmarks-log.md (x)); its blocking work (fsync,
    // logs, NVML) is on blocking threads, and it starts processes on this thread (see
    // the agent's `launcher/forker.rs`).
    // The server serves many clients at once, and `up` is a server.
    let mut rt = if daemon && !matches!(cmd, Command::Agent(_)) {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    if let Command::Server(a) = &cmd {
        if let Some(n) = a.threads {
            rt.worker_threads(usize::from(n));
        }
    }
    let rt = rt.enable_all().build()?;
    rt.block_on(async move {
        match cmd {
            Command::Up(a) => commands::up::run(*a).await,
            Command::Submit(a) => commands::submit::run(a).await,
            Command::Alloc(a) => commands::alloc::run(*a).await,
            Command::Run(a) => commands::run::run(a).await,
            Command::Queue(a) => commands::queue::run(a).await,
            Command::Queues(a) => commands::queues::run(a).await,
            Command::Accounts(a) => commands::accounts::run(a).await,
            Command::Show(a) => commands::show::run(a).await,
            Command::Cancel(a) => commands::cancel::run(a).await,
            Command::Logs(a) => commands::logs::run(a).await,
            Command::Service(a) => commands::service::run(a).await,
            Command::Reservation(a) => commands::reservation::run(a).await,
            Command::Checkpoint(a) => commands::checkpoint::run(a).await,
            Command::Hold(a) => commands::hold::hold(a).await,
            Command::Release(a) => commands::hold::release(a).await,
            Command::Update(a) => commands::hold::update(a).await,
            Command::Workflow(a) => commands::workflow::run(a).await,
            Command::Nodes(a) => commands::nodes::run(a).await,
            Command::Drain(a) => commands::drain::drain(a).await,
            Command::Resume(a) => commands::drain::resume(a).await,
            Command::Top(a) => commands::top::run(a).await,
            Command::Wait(a) => commands::wait::run(a).await,
            Command::Usage(a) => commands::usage::run(a).await,
            Command::Token(a) => commands::token::run(a).await,
            Command::Audit(a) => commands::audit::run(a).await,
            Command::History(a) => commands::history::run(a).await,
            Command::Admin(a) => commands::admin::run(a).await,
            Command::Whoami(a) => commands::token::whoami(a).await,
            Command::Server(a) => commands::server::run(a).await,
            Command::Agent(a) => commands::agent::run(a).await,
            Command::Gateway(a) => commands::gateway::run(a).await,
            Command::Simulate(_) | Command::SimulateSharing(_) | Command::SimulatePower(_) => {
                unreachable!("handled above")
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[test]
    fn numbers_out_of_range_are_told_as_people_write_ranges() {
        let e = super::Cli::try_parse_from(["gpusched", "submit", "--max-retries", "4294967296"])
            .err()
            .expect("out of range");
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        let msg = super::human_ranges(&e.render().to_string());
        assert!(
            msg.contains("4294967296 is not between 0 and 4294967295"),
            "{msg}"
        );
        assert!(!msg.contains("..="), "{msg}");
        assert_eq!(
            super::human_ranges("0 is not in 1..=65535\n"),
            "0 is not between 1 and 65535\n"
        );
        assert_eq!(super::human_ranges("a 1..2 b"), "a 1..2 b");
    }
}
