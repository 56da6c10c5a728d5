//! Shared formatting for the cluster commands: durations, ages, aligned tables.

use std::time::{SystemTime, UNIX_EPOCH};

use unicode_width::UnicodeWidthStr;

/// What a terminal may print of users' and agents' text, and a command as one line
/// (one quoting for `show`, `history` and the dashboard).
pub use gpusched_wire::{command_line, terminal_safe};

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// `1:02:03`, `2-03:04:05` (Slurm's elapsed-time style), `0:05` for short ones.
pub fn elapsed(ms: u64) -> String {
    let s = ms / 1000;
    let (d, h, m, s) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (d, h) {
        (0, 0) => format!("{m}:{s:02}"),
        (0, h) => format!("{h}:{m:02}:{s:02}"),
        (d, h) => format!("{d}-{h:02}:{m:02}:{s:02}"),
    }
}

/// A Unix-ms time as local-agnostic UTC `YYYY-MM-DD HH:MM:SS`; a time past chrono's
/// range (year 262143) reads as its milliseconds.
pub fn time(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| format!("{ms} ms after 1970"))
}

/// A `YYYY-MM-DD` date given to `flag`, as Unix ms at its UTC midnight (negative before
/// 1970). `None` when `s` is not shaped like a date (three runs of digits joined by `-`),
/// so the caller may read it as something else (an age); an error naming the value and
/// what to give instead when it is shaped like one but is no date (2026-02-31, 2026-13-01).
pub fn date_ms(flag: &str, s: &str) -> Option<anyhow::Result<i64>> {
    let parts: Vec<&str> = s.split('-').collect();
    let digits = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if parts.len() != 3 || !parts.iter().all(digits) {
        return None;
    }
    Some(match chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        Ok(d) => Ok(d
            .and_time(chrono::NaiveTime::MIN)
            .and_utc()
            .timestamp_millis()),
        Err(_) => Err(anyhow::anyhow!(
            "{flag} {s:?} is not a date{}; give a real date as YYYY-MM-DD (2026-11-01)",
            why_no_date(&parts)
        )),
    })
}

/// Why three runs of digits are no date: ` (there is no month 13)`,
/// ` (February 2026 has 28 days)`, or nothing when it cannot tell.
fn why_no_date(parts: &[&str]) -> String {
    let (Ok(y), Ok(m)) = (parts[0].parse::<i32>(), parts[1].parse::<u32>()) else {
        return String::new();
    };
    if !(1..=12).contains(&m) {
        return format!(" (there is no month {m})");
    }
    let Some(first) = chrono::NaiveDate::from_ymd_opt(y, m, 1) else {
        return String::new();
    };
    let days = (28..=31)
        .rev()
        .find(|d| chrono::NaiveDate::from_ymd_opt(y, m, *d).is_some())
        .unwrap_or(28);
    format!(" ({} has {days} days)", first.format("%B %Y"))
}

/// Left-aligned columns separated by two spaces; the last column is not padded. Every
/// cell goes through [`terminal_safe`] (names and commands are users' and agents' text),
/// and columns are as wide as the terminal draws them (a CJK character or an emoji takes
/// two columns), so each line stays one line and the columns stay aligned.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let n = header.len();
    let rows: Vec<Vec<std::borrow::Cow<'_, str>>> = rows
        .iter()
        .map(|r| r.iter().map(|c| terminal_safe(c)).collect())
        .collect();
    let mut width: Vec<usize> = header.iter().map(|h| h.width()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate().take(n) {
            width[i] = width[i].max(c.width());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            l.push_str(c);
            if i + 1 < cells.len() {
                l.push_str(&" ".repeat(width[i] - c.width() + 2));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for r in &rows {
        line(r.iter().map(|c| c.as_ref()).collect());
    }
    out
}

/// One duration parser for every flag and the job file (see gpusched_wire::duration).
pub use gpusched_wire::parse_duration;

/// What a job asks of GPUs, for tables: `2`, `0.25`, `20480MiB`, `mig 1g.10gb`, a gang
/// as `2x4` (nodes x GPUs each), a split not yet placed as `16/split`, an elastic job as
/// its range (`1-4`), with what it holds while placed (`4 of 1-4`).
pub fn gpus_asked(j: &gpusched_wire::JobView) -> String {
    if let Some(e) = j.elastic.as_deref() {
        let range = format!("{}-{}", j.gpus, e.gpus_max);
        let placed = matches!(
            j.state,
            gpusched_wire::JobState::Starting | gpusched_wire::JobState::Running
        );
        return match placed && !j.gpu_indices.is_empty() {
            true => format!("{} of {range}", j.gpu_indices.len()),
            false => range,
        };
    }
    match j.slice.as_deref() {
        Some(gpusched_wire::SliceAsk::Share { milli }) => gpusched_wire::milli_text(*milli),
        Some(gpusched_wire::SliceAsk::Memory { mib }) => format!("{mib}MiB"),
        Some(gpusched_wire::SliceAsk::Mig { profile }) => format!("mig {profile}"),
        None if j.nodes > 1 && j.gpus_per_node > 0 => {
            format!("{}x{}", j.nodes, j.gpus_per_node)
        }
        None if j.split && j.gpus_per_node == 0 => format!("{}/split", j.gpus),
        None => j.gpus.to_string(),
    }
}

/// Where a job runs, for tables: its node, or a gang's nodes in rank order (`n1,n2`;
/// past three, the first two and how many more: `n1,n2 +6`).
pub fn nodes_of(j: &gpusched_wire::JobView) -> String {
    if j.parts.len() < 2 {
        return j.node.clone().unwrap_or_else(|| "-".into());
    }
    let names: Vec<&str> = j.parts.iter().map(|p| p.node.as_str()).collect();
    if names.len() <= 3 {
        names.join(",")
    } else {
        format!("{} +{}", names[..2].join(","), names.len() - 2)
    }
}

/// A job's deadline as `submit` and `show` print it: `deadline 2026-12-08 06:00 (in 5h):
/// on track, expected to finish 2026-12-08 01:10, 4h 50m to spare`, in local time.
pub fn deadline_line(d: &gpusched_wire::JobDeadline, now_ms: u64) -> String {
    use super::reservation_time::{approx, local_time, relative, Local};
    use gpusched_wire::DeadlineStatus;
    let at = format!(
        "deadline {} ({})",
        local_time(d.at_ms, &Local),
        relative(d.at_ms, now_ms)
    );
    let spare = |s: i64| {
        let span = approx(s.unsigned_abs() * 1000);
        if s >= 0 {
            format!("{span} to spare")
        } else {
            format!("{span} late")
        }
    };
    let detail = match (d.status, d.finish_ms, d.slack_s) {
        (DeadlineStatus::Met | DeadlineStatus::Missed, Some(f), Some(s)) => {
            format!("ended {}, {}", local_time(f, &Local), spare(s))
        }
        (_, Some(f), Some(s)) => {
            format!("expected to finish {}, {}", local_time(f, &Local), spare(s))
        }
        (DeadlineStatus::Missed, _, _) => "not finished by it".to_string(),
        _ => "no estimate of its run time says when it finishes (give --walltime)".to_string(),
    };
    format!("{at}: {}, {detail}", d.status.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gangs_nodes_are_listed_in_rank_order_and_cut_past_three() {
        let view = |parts: &[&str]| -> gpusched_wire::JobView {
            let parts: Vec<serde_json::Value> = parts
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    serde_json::json!({"rank": i, "node": n, "gpu_indices": [0],
                                       "state": "running"})
                })
                .collect();
            serde_json::from_value(serde_json::json!({
                "id": 1, "name": "x", "user": "u", "state": "running", "reason": "",
                "command": ["true"], "cwd": "/", "gpus": 1, "priority": 0,
                "gpu_indices": [0], "attempt": 1, "max_retries": 3, "submit_ms": 0,
                "cancel_requested": false, "node": parts.first().map(|p| p["node"].clone()),
                "parts": parts
            }))
            .unwrap()
        };
        assert_eq!(nodes_of(&view(&["a"])), "a");
        assert_eq!(nodes_of(&view(&["b", "a"])), "b,a");
        assert_eq!(nodes_of(&view(&["a", "b", "c"])), "a,b,c");
        assert_eq!(nodes_of(&view(&["a", "b", "c", "d", "e"])), "a,b +3");
        let mut pending = view(&[]);
        pending.node = None;
        assert_eq!(nodes_of(&pending), "-");
    }

    #[test]
    fn elapsed_and_time_formats() {
        assert_eq!(elapsed(65_000), "1:05");
        assert_eq!(elapsed(3_725_000), "1:02:05");
        assert_eq!(elapsed(90_061_000), "1-01:01:01");
        assert_eq!(time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(time(1_796_000_000_000), "2026-11-30 00:53:20 UTC");
        assert_eq!(time(1_709_164_800_000), "2024-02-29 00:00:00 UTC");
        assert_eq!(time(u64::MAX), "18446744073709551615 ms after 1970");
    }

    #[test]
    fn dates_are_read_strictly() {
        let ms = |s: &str| date_ms("--since", s).unwrap().unwrap();
        assert_eq!(ms("1970-01-02"), 86_400_000);
        assert_eq!(ms("1969-12-31"), -86_400_000);
        assert_eq!(ms("2024-02-29"), 1_709_164_800_000);
        assert_eq!(ms("2026-03-03"), 1_772_496_000_000);
        let refused = |s: &str| date_ms("--since", s).unwrap().unwrap_err().to_string();
        assert_eq!(
            refused("2026-02-31"),
            "--since \"2026-02-31\" is not a date (February 2026 has 28 days); give a real \
             date as YYYY-MM-DD (2026-11-01)"
        );
        assert_eq!(
            refused("2025-02-29"),
            "--since \"2025-02-29\" is not a date (February 2025 has 28 days); give a real \
             date as YYYY-MM-DD (2026-11-01)"
        );
        assert!(refused("2026-13-01").contains("(there is no month 13)"));
        assert!(refused("2026-00-10").contains("(there is no month 0)"));
        assert!(refused("2026-04-31").contains("(April 2026 has 30 days)"));
        assert!(refused("2026-01-00").contains("is not a date"));
        // Not shaped like a date: left for the caller to read as an age or refuse.
        for s in [
            "7d",
            "1-02:03:04",
            "2026-11",
            "2026-11-01T00:00:00Z",
            "-1-01-01",
            "a-b-c",
        ] {
            assert!(date_ms("--since", s).is_none(), "{s}");
        }
    }

    #[test]
    fn tables_align() {
        let t = table(
            &["ID", "NAME"],
            &[
                vec!["1".into(), "a".into()],
                vec!["100".into(), "bb".into()],
            ],
        );
        assert_eq!(t, "ID   NAME\n1    a\n100  bb\n");
    }

    #[test]
    fn wide_characters_take_two_columns_and_controls_never_reach_the_terminal() {
        let t = table(
            &["NAME", "USER"],
            &[
                vec!["训练".into(), "a".into()],
                vec!["🚀x".into(), "b".into()],
                vec!["plain".into(), "c".into()],
                vec!["evil\x1b]0;pwned\x07".into(), "d".into()],
                vec!["two\nlines".into(), "e".into()],
            ],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 6, "one line per row: {t:?}");
        assert!(!t.contains('\x1b') && !t.contains('\x07'), "{t:?}");
        // The USER column starts at the same terminal column on every line.
        let user_col: Vec<usize> = lines
            .iter()
            .map(|l| {
                let (before, _) = l.rsplit_once("  ").unwrap();
                before.width() + 2
            })
            .collect();
        assert!(user_col.iter().all(|&c| c == user_col[0]), "{t}");
        assert_eq!(lines[1], "训练                  a");
        assert_eq!(lines[4], "evil\\x1b]0;pwned\\x07  d");
    }
}
