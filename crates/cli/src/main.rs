//! `gpusched`: one binary for the whole scheduler. Each subcommand lives in its own file
//! under `commands/`.

mod commands;

use clap::{Parser, Subcommand};

/// gpusched — a GPU cluster scheduler.
#[derive(Parser)]
#[command(name = "gpusched", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay a trace (or a synthetic workload) through the scheduling core and report
    /// JCT, waiting, makespan, utilisation and fairness per policy.
    Simulate(commands::simulate::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Simulate(args) => commands::simulate::run(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
}
