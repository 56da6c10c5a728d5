//! `gpusched audit`: the admin actions the server recorded (tokens, drains and resumes,
//! queue reloads, cancels of other users' jobs), newest first (admins).

use clap::Args as ClapArgs;
use gpusched_wire::history::AuditQuery;

use super::fmt::{now_ms, table, time};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// From when: a date (2026-11-01) or an age (1d, 12h). Default: all time.
    #[arg(long)]
    pub since: Option<String>,
    /// At most this many entries, newest first (1..=10000).
    #[arg(long, default_value_t = 100)]
    pub limit: usize,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let since = args
        .since
        .as_deref()
        .map(|s| super::usage::since_ms(s, now_ms()))
        .transpose()?;
    let q = AuditQuery {
        before: None,
        since_ms: since,
        limit: Some(args.limit),
    };
    let page = args.conn.client()?.audit(&q).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&page)?);
        return Ok(());
    }
    if page.entries.is_empty() {
        println!(
            "no admin action recorded{}",
            if since.is_some() { " since then" } else { "" }
        );
        return Ok(());
    }
    let rows: Vec<Vec<String>> = page
        .entries
        .iter()
        .map(|e| {
            vec![
                e.id.to_string(),
                time(e.at_ms),
                e.actor.clone(),
                e.action.name().to_string(),
                e.target.clone(),
                e.detail.clone(),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &["ID", "TIME", "ACTOR", "ACTION", "TARGET", "DETAIL"],
            &rows
        )
    );
    if page.next_before.is_some() {
        println!("(older entries exist: raise --limit or narrow --since)");
    }
    Ok(())
}
