//! `gpusched queues`: limits, weights, access and load of every queue (`sinfo -s` /
//! `sacctmgr show qos` in spirit).

use clap::Args as ClapArgs;

use super::fmt::table;

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let list = args.conn.client()?.queues().await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = list
        .queues
        .iter()
        .map(|q| {
            let who: Vec<String> = q
                .users
                .iter()
                .cloned()
                .chain(q.groups.iter().map(|g| format!("@{g}")))
                .collect();
            vec![
                q.name.clone(),
                q.quota.to_string(),
                q.max.map(|m| m.to_string()).unwrap_or_else(|| "-".into()),
                format!("{}", q.weight),
                q.used_gpus.to_string(),
                q.running.to_string(),
                q.pending.to_string(),
                if who.is_empty() {
                    "everyone".into()
                } else {
                    who.join(",")
                },
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "QUEUE",
                "QUOTA",
                "MAX",
                "WEIGHT",
                "GPUS USED",
                "RUNNING",
                "PENDING",
                "WHO"
            ],
            &rows
        )
    );
    Ok(())
}
