//! `gpusched logs ID [-f]`: a job's stdout (or stderr), fetched through the server from
//! the agent of the node it ran on.

use std::io::Write;
use std::time::Duration;

use clap::Args as ClapArgs;

#[derive(ClapArgs, Debug)]
pub struct Args {
    pub id: u64,
    /// Keep printing new output until the job ends.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Show stderr instead of stdout.
    #[arg(long)]
    pub stderr: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    let stream = if args.stderr { "stderr" } else { "stdout" };
    let mut offset = 0u64;
    let mut out = std::io::stdout();
    loop {
        let (chunk, state) = client.logs(args.id, stream, offset).await?;
        offset += chunk.len() as u64;
        out.write_all(&chunk)?;
        out.flush()?;
        if !chunk.is_empty() {
            continue; // more may be waiting beyond this chunk
        }
        let ended = !matches!(state.as_str(), "pending" | "starting" | "running");
        if !args.follow || ended {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
