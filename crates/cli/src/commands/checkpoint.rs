//! `gpusched checkpoint ID`: a job (or its owner) reports that it saved a checkpoint
//! now, so a preemption picks jobs that lose less work. Inside a job:
//! `gpusched checkpoint $GPUSCHED_JOB_ID` (or touch `$GPUSCHED_CHECKPOINT_DIR/checkpoint`).

use clap::Args as ClapArgs;

use super::fmt::time;

#[derive(ClapArgs, Debug)]
pub struct Args {
    pub id: u64,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let v = args.conn.client()?.checkpoint(args.id).await?;
    let at = v.last_checkpoint_ms.map(time).unwrap_or_else(|| "-".into());
    println!("job {}: checkpoint recorded at {at}", v.id);
    Ok(())
}
