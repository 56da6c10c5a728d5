//! `gpusched cancel ID...` (`scancel`).

use clap::Args as ClapArgs;

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<u64>,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    // One request for all ids: cancelled one by one, the GPUs freed by the first would
    // start a pending job of the same list before its own cancel arrived.
    let answer = client.cancel_many(&args.ids).await?;
    let mut failed = 0;
    for r in &answer.results {
        let id = r.id;
        match (r.result.as_str(), r.state) {
            ("cancelling", _) => println!("job {id}: cancelling (its node is stopping it)"),
            ("already_ended", Some(st)) => println!("job {id}: already ended ({})", st.name()),
            ("cancelled", _) => println!("job {id}: cancelled"),
            _ => {
                eprintln!(
                    "job {id}: {}",
                    r.error.as_deref().unwrap_or("not cancelled")
                );
                failed += 1;
            }
        }
    }
    if failed > 0 {
        anyhow::bail!(
            "{} not cancelled (of {})",
            gpusched_wire::count_as(failed as u64, "job was", "jobs were"),
            args.ids.len()
        );
    }
    Ok(())
}
