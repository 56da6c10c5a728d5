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
    let mut failed = 0;
    for id in &args.ids {
        match client.cancel(*id).await {
            Ok(r) => match r.result.as_str() {
                "cancelling" => println!("job {id}: cancelling (its node is stopping it)"),
                "already_ended" => println!("job {id}: already ended ({})", r.state.name()),
                _ => println!("job {id}: cancelled"),
            },
            Err(e) => {
                eprintln!("job {id}: {e:#}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} cancels failed", args.ids.len());
    }
    Ok(())
}
