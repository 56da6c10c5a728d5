//! `gpusched usage`: GPU-hours, GPU-hours interactive allocations held idle, CPU-hours,
//! memory GiB-hours and energy (kWh) per user or queue (Slurm's `sreport`).

use clap::Args as ClapArgs;
use gpusched_wire::UsageQuery;

use super::fmt::{date_ms, now_ms, parse_duration, table, time};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Group by user (default), queue or account (docs/accounts.md).
    #[arg(long, default_value = "user", value_parser = ["user", "queue", "account"])]
    pub by: String,
    /// Only this user.
    #[arg(long, short = 'u')]
    pub user: Option<String>,
    /// From when: a date (2026-11-01) or an age (7d, 12h). Default: all time.
    #[arg(long)]
    pub since: Option<String>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

/// `2026-11-01` (UTC midnight; a date before 1970 is 1970) or a duration back from now; a
/// date that does not exist (2026-02-31) is refused, and so is one after `now`, since the
/// report would cover an inverted range.
pub(super) fn since_ms(s: &str, now: u64) -> anyhow::Result<u64> {
    if let Some(ms) = date_ms("--since", s) {
        let ms = u64::try_from(ms.map_err(|e| anyhow::anyhow!("{e}, or an age such as 7d"))?)
            .unwrap_or(0);
        if ms > now {
            anyhow::bail!(
                "--since {s} is in the future (now is {}); give a past date or an age \
                 such as 7d",
                time(now)
            );
        }
        return Ok(ms);
    }
    let secs = parse_duration(s).map_err(|e| {
        anyhow::anyhow!("--since {s:?}: give a date (2026-11-01) or an age (7d, 12h); {e}")
    })?;
    Ok(now.saturating_sub(secs.saturating_mul(1000)))
}

/// The report as a table: GPU-hours, those of them held idle by interactive
/// allocations (`-`: none), the steps that ran in the jobs and their GPU-hours, then
/// CPU-hours and memory GiB-hours (measured by
/// the nodes' cgroups; `-` where nothing was measured), energy, jobs by outcome, wait.
fn render(report: &gpusched_wire::UsageReport) -> String {
    let mut out = format!(
        "Usage by {} from {} to {}\n",
        report.by,
        report
            .since_ms
            .map(time)
            .unwrap_or_else(|| "the start".into()),
        time(report.until_ms)
    );
    // Nothing measured reads `-`, not 0: the jobs ran where no cgroup counted.
    let measured = |v: f64, digits: usize| match v {
        0.0 => "-".to_string(),
        v => format!("{v:.digits$}"),
    };
    let rows: Vec<Vec<String>> = report
        .rows
        .iter()
        .map(|r| {
            vec![
                r.key.clone(),
                format!("{:.2}", r.gpu_hours),
                measured(r.idle_gpu_hours, 2),
                r.steps.to_string(),
                measured(r.step_gpu_hours, 2),
                measured(r.cpu_hours, 2),
                measured(r.mem_gib_hours, 2),
                format!("{:.3}", r.energy_kwh),
                r.jobs.to_string(),
                r.succeeded.to_string(),
                r.failed.to_string(),
                r.cancelled.to_string(),
                r.timed_out.to_string(),
                format!("{:.1}", r.mean_wait_s),
            ]
        })
        .collect();
    let key = match report.by.as_str() {
        "queue" => "QUEUE",
        "account" => "ACCOUNT",
        _ => "USER",
    };
    out.push_str(&table(
        &[
            key,
            "GPU-HOURS",
            "IDLE GPU-H",
            "STEPS",
            "STEP GPU-H",
            "CPU-HOURS",
            "MEM GIB-H",
            "KWH",
            "JOBS",
            "OK",
            "FAILED",
            "CANCELLED",
            "TIMED OUT",
            "MEAN WAIT (s)",
        ],
        &rows,
    ));
    out
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let now = now_ms();
    let since = args
        .since
        .as_deref()
        .map(|s| since_ms(s, now))
        .transpose()?;
    let q = UsageQuery {
        by: Some(args.by.clone()),
        user: args.user.clone(),
        since_ms: since,
    };
    let report = args.conn.client()?.usage(&q).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    print!("{}", render(&report));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPU-hours and memory GiB-hours sit beside GPU-hours; a user whose jobs ran where
    /// nothing was measured reads `-`, not 0.
    #[test]
    fn the_table_shows_cpu_and_memory_beside_gpu_hours() {
        let row = |key: &str, cpu_hours: f64, mem_gib_hours: f64| gpusched_wire::UsageRow {
            key: key.into(),
            jobs: 2,
            gpu_hours: 1.5,
            succeeded: 2,
            failed: 0,
            cancelled: 0,
            timed_out: 0,
            mean_wait_s: 3.0,
            energy_kwh: 0.25,
            cpu_hours,
            mem_gib_hours,
            idle_gpu_hours: cpu_hours / 2.0,
            steps: 3,
            step_gpu_hours: cpu_hours / 4.0,
        };
        let report = gpusched_wire::UsageReport {
            by: "user".into(),
            since_ms: None,
            until_ms: 86_400_000,
            rows: vec![row("alice", 1.034, 6.2), row("bob", 0.0, 0.0)],
        };
        let text = render(&report);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "Usage by user from the start to 1970-01-02 00:00:00 UTC"
        );
        let words = |i: usize| lines[i].split_whitespace().collect::<Vec<_>>();
        assert_eq!(
            words(1)[..11],
            [
                "USER",
                "GPU-HOURS",
                "IDLE",
                "GPU-H",
                "STEPS",
                "STEP",
                "GPU-H",
                "CPU-HOURS",
                "MEM",
                "GIB-H",
                "KWH"
            ]
        );
        assert_eq!(
            words(2)[..8],
            ["alice", "1.50", "0.52", "3", "0.26", "1.03", "6.20", "0.250"]
        );
        assert_eq!(
            words(3)[..8],
            ["bob", "1.50", "-", "3", "-", "-", "-", "0.250"]
        );
    }

    #[test]
    fn since_takes_dates_and_ages() {
        let now = 1_800_000_000_000;
        assert_eq!(since_ms("1970-01-02", now).unwrap(), 86_400_000);
        assert_eq!(
            since_ms("2026-11-30", now).unwrap(),
            1_796_000_000_000 - 3_200_000
        );
        assert_eq!(since_ms("1h", 7_200_000).unwrap(), 3_600_000);
        let e = since_ms("2026-13-01", now).unwrap_err().to_string();
        assert!(e.contains("there is no month 13"), "{e}");
        assert!(since_ms("1960-05-01", now).unwrap() == 0);
        let e = since_ms("2026-12-01", 1_796_000_000_000)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--since 2026-12-01 is in the future") && e.contains("7d"),
            "{e}"
        );
        // Today's midnight is not in the future.
        assert!(since_ms("2026-11-30", 1_796_000_000_000).is_ok());
        assert!(since_ms("lately", 0)
            .unwrap_err()
            .to_string()
            .contains("7d"));
    }

    /// A date that does not exist is refused, naming the value and what to give instead,
    /// not rolled over into the next month (2026-02-31 was read as 2026-03-03).
    #[test]
    fn since_refuses_dates_that_do_not_exist() {
        let now = 1_800_000_000_000;
        assert_eq!(
            since_ms("2026-02-31", now).unwrap_err().to_string(),
            "--since \"2026-02-31\" is not a date (February 2026 has 28 days); give a real \
             date as YYYY-MM-DD (2026-11-01), or an age such as 7d"
        );
        let e = since_ms("2025-02-29", now).unwrap_err().to_string();
        assert!(e.contains("February 2025 has 28 days"), "{e}");
        // A leap day is a date.
        assert_eq!(since_ms("2024-02-29", now).unwrap(), 1_709_164_800_000);
        assert_eq!(since_ms("2026-03-03", now).unwrap(), 1_772_496_000_000);
    }
}
