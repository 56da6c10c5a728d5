//! `gpusched cancel ID...` (`scancel`).

use clap::Args as ClapArgs;

use crate::client::Client;

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<u64>,
    #[arg(long, env = "GPUSCHED_SERVER", hide_env_values = true)]
    pub server: Option<String>,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = Client::new(args.server.clone())?;
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
