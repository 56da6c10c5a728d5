//! `gpusched accounts`: the account tree with shares, decayed usage and each user's
//! fair-share factor (Slurm's `sshare -l`; docs/accounts.md).

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
    let list = args.conn.client()?.accounts().await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    print!("{}", render(&list));
    Ok(())
}

/// The tree as a table: an account's row, then its users' rows indented under it.
pub fn render(list: &gpusched_wire::AccountList) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let level = |v: Option<f64>| v.map_or_else(|| "inf".to_string(), |l| format!("{l:.3}"));
    for a in &list.accounts {
        let pad = "  ".repeat(a.depth as usize);
        rows.push(vec![
            format!("{pad}{}", a.name),
            String::new(),
            a.shares.to_string(),
            format!("{:.3}", a.norm_shares),
            format!("{:.2}", a.usage_gpu_hours),
            format!("{:.3}", a.norm_usage),
            level(a.level_fs),
            String::new(),
        ]);
        for u in &a.users {
            rows.push(vec![
                format!("{pad}  "),
                u.user.clone(),
                u.shares.to_string(),
                format!("{:.3}", u.norm_shares),
                format!("{:.2}", u.usage_gpu_hours),
                format!("{:.3}", u.norm_usage),
                level(u.level_fs),
                format!("{:.3}", u.fair_share),
            ]);
        }
    }
    let mut out = table(
        &[
            "ACCOUNT",
            "USER",
            "SHARES",
            "NORM SHARES",
            "USAGE GPU-H",
            "NORM USAGE",
            "LEVEL FS",
            "FAIRSHARE",
        ],
        &rows,
    );
    let days = list.half_life_s as f64 / 86_400.0;
    out.push_str(&format!(
        "usage decays with a half-life of {days} days; policy {}{}\n",
        list.policy,
        if list.policy == "fairtree" {
            ""
        } else {
            " (the factors order jobs only under --policy fairtree)"
        }
    ));
    out
}
