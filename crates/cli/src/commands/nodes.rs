//! `gpusched nodes` (`sinfo` / `hq worker list`): nodes, their GPUs and who holds them.

use clap::Args as ClapArgs;
use gpusched_wire::NodeState;

use super::fmt::table;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// One line per GPU instead of per node.
    #[arg(long)]
    pub gpus: bool,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    let list = client.nodes().await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if list.nodes.is_empty() {
        println!("no nodes yet: start `gpusched agent --server URL` on a GPU host (or use `gpusched up`)");
        return Ok(());
    }
    let state = |s: NodeState| match s {
        NodeState::Online => "online",
        NodeState::Offline => "offline",
    };
    if args.gpus {
        let mut rows = Vec::new();
        for n in &list.nodes {
            for g in &n.gpus {
                rows.push(vec![
                    n.name.clone(),
                    g.info.index.to_string(),
                    g.info.model.clone(),
                    format!("{} MiB", g.info.mem_mib),
                    g.info.source.name().to_string(),
                    g.info.uuid.clone().unwrap_or_else(|| "-".into()),
                    g.job
                        .map(|j| format!("job {j}"))
                        .unwrap_or_else(|| "free".into()),
                ]);
            }
        }
        print!(
            "{}",
            table(
                &["NODE", "GPU", "MODEL", "MEMORY", "SOURCE", "UUID", "HELD BY"],
                &rows
            )
        );
        return Ok(());
    }
    let rows: Vec<Vec<String>> = list
        .nodes
        .iter()
        .map(|n| {
            let used = n.gpus.iter().filter(|g| g.job.is_some()).count();
            let mut models: Vec<&str> = n.gpus.iter().map(|g| g.info.model.as_str()).collect();
            models.dedup();
            let mut sources: Vec<&str> = n.gpus.iter().map(|g| g.info.source.name()).collect();
            sources.dedup();
            vec![
                n.name.clone(),
                state(n.state).to_string(),
                format!("{used}/{}", n.gpus.len()),
                if models.is_empty() {
                    "-".into()
                } else {
                    models.join(",")
                },
                if sources.is_empty() {
                    "-".into()
                } else {
                    sources.join(",")
                },
                format!("{:.1}s ago", n.last_seen_ms_ago as f64 / 1000.0),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &["NODE", "STATE", "GPUS USED", "MODEL", "SOURCE", "LAST SEEN"],
            &rows
        )
    );
    Ok(())
}
