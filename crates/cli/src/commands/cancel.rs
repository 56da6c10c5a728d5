//! `gpusched cancel ID...` (`scancel`).

use clap::Args as ClapArgs;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Job ids; an array's id cancels all of it, ID.N one task of it.
    #[arg(required = true, value_name = "ID", value_parser = crate::client::job_ref)]
    pub ids: Vec<gpusched_wire::JobRef>,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    // One request for all ids: cancelled one by one, the GPUs freed by the first would
    // start a pending job of the same list before its own cancel arrived.
    let whole: Vec<u64> = args
        .ids
        .iter()
        .filter(|r| r.task.is_none())
        .map(|r| r.id)
        .collect();
    let mut failed = 0;
    for r in args.ids.iter().filter(|r| r.task.is_some()) {
        let index = r.task.unwrap_or(0);
        match client.cancel_task(r.id, index).await {
            Ok(c) if c.result == "already_ended" => println!("task {r}: already ended"),
            Ok(c) if c.result == "cancelling" => {
                println!(
                    "task {r}: cancelling (job {}; its node is stopping it)",
                    c.id
                )
            }
            Ok(_) => println!("task {r}: cancelled"),
            Err(e) => {
                eprintln!("task {r}: {e:#}");
                failed += 1;
            }
        }
    }
    if whole.is_empty() {
        if failed > 0 {
            anyhow::bail!("{failed} of {} not cancelled", args.ids.len());
        }
        return Ok(());
    }
    let answer = client.cancel_many(&whole).await?;
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
