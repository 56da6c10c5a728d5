//! `gpusched admin purge --before DATE` (admins): deletes the jobs that ended before a
//! time from the server's history, with their timelines (live jobs never). The purge is
//! recorded in the audit log. `admin migrate-store` and `admin backup` copy a whole store
//! (`store_admin.rs`).

use clap::{Args as ClapArgs, Subcommand};
use gpusched_wire::duration::parse_duration;

use super::fmt::{date_ms, now_ms, time};

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(Subcommand, Debug)]
pub enum What {
    /// Delete the jobs that ended before a time from the history.
    Purge(PurgeArgs),
    /// Copy a cluster's whole state from one store into another, empty one (SQLite to
    /// PostgreSQL or back). Talks to the stores directly, not through the server.
    MigrateStore(super::store_admin::MigrateArgs),
    /// Write a consistent snapshot of a store, live or not, to a new SQLite file. Talks
    /// to the store directly, not through the server.
    Backup(super::store_admin::BackupArgs),
}

#[derive(ClapArgs, Debug)]
pub struct PurgeArgs {
    /// Jobs that ended before this are deleted: an RFC 3339 time
    /// (2026-11-01T12:00:00Z), a date (2026-11-01, UTC midnight) or an age (30d, 12h).
    #[arg(long, value_name = "DATE")]
    pub before: String,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    match args.what {
        What::Purge(a) => purge(a).await,
        What::MigrateStore(a) => super::store_admin::migrate(a).await,
        What::Backup(a) => super::store_admin::backup(a).await,
    }
}

async fn purge(args: PurgeArgs) -> anyhow::Result<()> {
    let now = now_ms();
    let before = before_ms(&args.before, now)?;
    let r = args.conn.client()?.purge(before).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    println!(
        "purged {} that ended before {}",
        gpusched_wire::count(u32::try_from(r.deleted).unwrap_or(u32::MAX), "job"),
        time(r.before_ms)
    );
    Ok(())
}

/// `--before`: RFC 3339, `YYYY-MM-DD` (UTC midnight) or an age back from `now`; a time
/// after `now` is refused (it would delete every ended job by mistake).
pub fn before_ms(s: &str, now: u64) -> anyhow::Result<u64> {
    let ms = if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        u64::try_from(t.timestamp_millis()).map_err(|_| {
            anyhow::anyhow!("--before {s}: a time before 1970 has no ended job to purge")
        })?
    } else if let Some(ms) = date_ms("--before", s) {
        u64::try_from(ms?).map_err(|_| {
            anyhow::anyhow!("--before {s}: a date before 1970 has no ended job to purge")
        })?
    } else {
        let secs = parse_duration(s).map_err(|e| {
            anyhow::anyhow!(
                "--before {s:?}: give an RFC 3339 time (2026-11-01T12:00:00Z), a date \
                 (2026-11-01) or an age (30d, 12h); {e}"
            )
        })?;
        now.saturating_sub(secs.saturating_mul(1000))
    };
    if ms > now {
        anyhow::bail!(
            "--before {s} is in the future (now is {}); give a past time: jobs that ended \
             before it are deleted",
            time(now)
        );
    }
    Ok(ms)
}

#[cfg(test)]
mod tests {
    use super::before_ms;

    const NOW: u64 = 1_764_547_200_000; // 2025-12-01T00:00:00Z

    #[test]
    fn before_takes_rfc3339_dates_and_ages() {
        assert_eq!(
            before_ms("2025-11-30T12:00:00Z", NOW).unwrap(),
            NOW - 12 * 3_600_000
        );
        assert_eq!(
            before_ms("2025-11-30T13:00:00+01:00", NOW).unwrap(),
            NOW - 12 * 3_600_000
        );
        assert_eq!(before_ms("2025-11-01", NOW).unwrap(), NOW - 30 * 86_400_000);
        assert_eq!(before_ms("30d", NOW).unwrap(), NOW - 30 * 86_400_000);
    }

    #[test]
    fn before_refuses_the_future_and_nonsense_with_advice() {
        let e = before_ms("2026-01-01", NOW).unwrap_err().to_string();
        assert!(e.contains("in the future"), "{e}");
        let e = before_ms("2025-13-01", NOW).unwrap_err().to_string();
        assert!(e.contains("not a date (there is no month 13)"), "{e}");
        let e = before_ms("2025-02-29", NOW).unwrap_err().to_string();
        assert!(e.contains("not a date (February 2025 has 28 days)"), "{e}");
        assert_eq!(before_ms("2024-02-29", NOW).unwrap(), 1_709_164_800_000);
        let e = before_ms("yesterday", NOW).unwrap_err().to_string();
        assert!(e.contains("RFC 3339"), "{e}");
    }
}
