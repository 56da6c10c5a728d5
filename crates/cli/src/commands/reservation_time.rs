//! The times of `gpusched reservation`: `--start` as people write it (a local wall-clock
//! time, RFC 3339, `now`, `+2h`) and a window shown back in local time with how far
//! away it is (`2026-12-11 09:00`, `in 2d 3h`, `30m ago`).
//!
//! The local time zone is the C library's (`TZ`, else `/etc/localtime`), reached through
//! [`Zone`] so that the parsing and the tables are tested in a fixed zone. The workspace's
//! chrono is built without its clock (and so without time zones); libc already gives
//! both directions (`localtime_r`, `mktime`).

use anyhow::bail;
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime};

/// A time zone: the offset at an instant, and the instant a wall-clock time names.
pub trait Zone {
    /// Seconds east of UTC at `utc_ms` (Unix milliseconds).
    fn offset_s(&self, utc_ms: i64) -> i64;
    /// The Unix milliseconds of wall-clock time `t` here; None when the clocks skip it
    /// (the hour lost when summer time begins).
    fn instant(&self, t: NaiveDateTime) -> Option<i64>;
}

/// The local zone of this process (the C library's, as `date` shows it).
pub struct Local;

impl Zone for Local {
    fn offset_s(&self, utc_ms: i64) -> i64 {
        let t = utc_ms.div_euclid(1000) as libc::time_t;
        // SAFETY: an all-zero `tm` is a valid value of a plain C struct; localtime_r
        // writes only into the `tm` it is given and reads the zone, which nothing in
        // the CLI changes (no setenv of TZ).
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        let done = unsafe { libc::localtime_r(&t, &mut tm) };
        if done.is_null() {
            0
        } else {
            tm.tm_gmtoff
        }
    }

    fn instant(&self, t: NaiveDateTime) -> Option<i64> {
        use chrono::{Datelike, Timelike};
        // SAFETY: as above; mktime reads and normalises only the `tm` it is given.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        tm.tm_year = t.year() - 1900;
        tm.tm_mon = t.month0() as i32;
        tm.tm_mday = t.day() as i32;
        tm.tm_hour = t.hour() as i32;
        tm.tm_min = t.minute() as i32;
        tm.tm_sec = t.second() as i32;
        tm.tm_isdst = -1;
        let secs = unsafe { libc::mktime(&mut tm) };
        // mktime moves a time the clocks skip to one that exists: not what was written.
        let same = tm.tm_hour == t.hour() as i32 && tm.tm_min == t.minute() as i32;
        (secs != -1 && same).then_some(secs * 1000)
    }
}

/// A fixed offset from UTC (tests, and what a reader of a table in UTC would see).
#[cfg(test)]
pub struct Fixed(pub i64);

#[cfg(test)]
impl Zone for Fixed {
    fn offset_s(&self, _: i64) -> i64 {
        self.0
    }
    fn instant(&self, t: NaiveDateTime) -> Option<i64> {
        Some(t.and_utc().timestamp_millis() - self.0 * 1000)
    }
}

/// What `--start` accepts, for messages and `--help`.
pub const START_FORMS: &str = "2026-12-11T09:00 (local time), 2026-12-11T09:00:00Z or \
                               2026-12-11T09:00+01:00 (RFC 3339), now, or +2h (from now)";

/// The Unix milliseconds of a `--start`: `now`, `+DURATION` from now (`+2h`, `+1d 12h`),
/// an RFC 3339 time with its offset, or a wall-clock time in `zone`
/// (`2026-12-11T09:00`, with seconds, with a space for the `T`, or a bare date for its
/// midnight). A start more than a minute before `now_ms` is refused: a window that has
/// already opened cannot be promised.
pub fn parse_start(flag: &str, s: &str, now_ms: u64, zone: &dyn Zone) -> anyhow::Result<u64> {
    let ms = parse_time(flag, s, now_ms, zone)?;
    if ms + 60_000 < now_ms {
        bail!(
            "{flag} {s:?} is {} ({} local time): a reservation cannot start in the past; \
             give `now`, `+2h` or a later time",
            relative(ms, now_ms),
            local_time(ms, zone)
        );
    }
    Ok(ms)
}

/// A `--deadline`: the forms of [`parse_start`] but `now`; one not ahead of `now_ms`
/// is refused (it could not be met).
pub fn parse_deadline(flag: &str, s: &str, now_ms: u64, zone: &dyn Zone) -> anyhow::Result<u64> {
    let ms = parse_time(flag, s, now_ms, zone)?;
    if ms <= now_ms {
        bail!(
            "{flag} {s:?} is {} ({} local time): a deadline must be ahead; give e.g. +6h or \
             a later time",
            relative(ms, now_ms),
            local_time(ms, zone)
        );
    }
    Ok(ms)
}

/// A time as `--start` and `--deadline` take it, in Unix milliseconds (not checked
/// against now).
fn parse_time(flag: &str, s: &str, now_ms: u64, zone: &dyn Zone) -> anyhow::Result<u64> {
    let t = s.trim();
    let ms = if t.eq_ignore_ascii_case("now") {
        now_ms as i64
    } else if let Some(d) = t.strip_prefix('+') {
        let secs = gpusched_wire::parse_duration(d).map_err(|e| {
            anyhow::anyhow!("{flag} {s:?}: {e}; after `+` give how long from now (+2h, +1d)")
        })?;
        now_ms as i64 + secs.min(i64::MAX as u64 / 2_000) as i64 * 1000
    } else if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        d.timestamp_millis()
    } else if let Some(d) = with_offset(t) {
        d
    } else if let Some(local) = wall_clock(t) {
        match zone.instant(local) {
            Some(ms) => ms,
            None => bail!(
                "{flag} {s:?} does not exist in local time (the clocks skip it when summer \
                 time begins); give a time an hour later, or one in UTC (2026-03-29T02:30:00Z)"
            ),
        }
    } else {
        bail!("{flag} {s:?} is not a time; write {START_FORMS}")
    };
    if ms < 0 {
        bail!("{flag} {s:?} is before 1970; write {START_FORMS}");
    }
    Ok(ms as u64)
}

/// RFC 3339 without seconds (`2026-12-11T09:00Z`, `2026-12-11T09:00+01:00`), as people
/// write it.
fn with_offset(t: &str) -> Option<i64> {
    let t = t.replacen(' ', "T", 1);
    let t = match t.strip_suffix(['Z', 'z']) {
        Some(rest) => format!("{rest}+00:00"),
        None => t,
    };
    DateTime::parse_from_str(&t, "%Y-%m-%dT%H:%M%:z")
        .ok()
        .map(|d| d.timestamp_millis())
}

/// A wall-clock time without an offset: `2026-12-11T09:00[:SS]`, the same with a space
/// (as the tables print it), or a date alone (its midnight).
fn wall_clock(t: &str) -> Option<NaiveDateTime> {
    let t = t.replacen(' ', "T", 1);
    ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(&t, f).ok())
        .or_else(|| {
            NaiveDate::parse_from_str(&t, "%Y-%m-%d")
                .ok()
                .map(|d| d.and_time(NaiveTime::MIN))
        })
}

/// `2026-12-11 09:00` in `zone`; a time past chrono's range reads as its milliseconds.
pub fn local_time(ms: u64, zone: &dyn Zone) -> String {
    let Ok(utc) = i64::try_from(ms) else {
        return format!("{ms} ms after 1970");
    };
    utc.checked_add(zone.offset_s(utc) * 1000)
        .and_then(DateTime::from_timestamp_millis)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| format!("{ms} ms after 1970"))
}

/// How far `at_ms` is from `now_ms`: `in 2h 30m`, `3d 4h ago`, `now` (under a minute).
pub fn relative(at_ms: u64, now_ms: u64) -> String {
    if at_ms.abs_diff(now_ms) < 60_000 {
        return "now".into();
    }
    let span = approx(at_ms.abs_diff(now_ms));
    if at_ms > now_ms {
        format!("in {span}")
    } else {
        format!("{span} ago")
    }
}

/// A span in its two largest units, rounded down: `3d 4h`, `2h`, `2h 5m`, `45m`.
pub fn approx(ms: u64) -> String {
    let m = ms / 60_000;
    let (d, h, m) = (m / 1440, m / 60 % 24, m % 60);
    match (d, h, m) {
        (0, 0, m) => format!("{m}m"),
        (0, h, 0) => format!("{h}h"),
        (0, h, m) => format!("{h}h {m}m"),
        (d, 0, _) => format!("{d}d"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-08 12:00:00 UTC.
    const NOW: u64 = 1_796_731_200_000;
    const H: u64 = 3_600_000;

    fn start(s: &str, zone: &dyn Zone) -> anyhow::Result<u64> {
        parse_start("--start", s, NOW, zone)
    }

    #[test]
    fn start_takes_now_relative_rfc3339_and_local_wall_clock() {
        let utc = Fixed(0);
        let paris = Fixed(3600);
        assert_eq!(start("now", &utc).unwrap(), NOW);
        assert_eq!(start("NOW", &utc).unwrap(), NOW);
        assert_eq!(start("+2h", &utc).unwrap(), NOW + 2 * H);
        assert_eq!(start("+1d 12h", &utc).unwrap(), NOW + 36 * H);
        assert_eq!(start("+90", &utc).unwrap(), NOW + 90_000);
        // Friday 2026-12-11 09:00 UTC is NOW + 3 days - 3 h.
        let friday_utc = NOW + 69 * H;
        assert_eq!(start("2026-12-11T09:00:00Z", &paris).unwrap(), friday_utc);
        assert_eq!(start("2026-12-11T09:00Z", &paris).unwrap(), friday_utc);
        assert_eq!(start("2026-12-11T10:00+01:00", &utc).unwrap(), friday_utc);
        assert_eq!(
            start("2026-12-11T10:00:00.000+01:00", &utc).unwrap(),
            friday_utc
        );
        // Without an offset: the local zone's wall clock.
        assert_eq!(start("2026-12-11T09:00", &utc).unwrap(), friday_utc);
        assert_eq!(start("2026-12-11T09:00", &paris).unwrap(), friday_utc - H);
        assert_eq!(start("2026-12-11 09:00", &paris).unwrap(), friday_utc - H);
        assert_eq!(
            start("2026-12-11T09:00:30", &utc).unwrap(),
            friday_utc + 30_000
        );
        assert_eq!(start(" 2026-12-11 ", &utc).unwrap(), friday_utc - 9 * H);
    }

    #[test]
    fn a_start_in_the_past_or_unreadable_is_refused_saying_what_to_write() {
        let utc = Fixed(0);
        // Up to a minute back is `now` typed slowly.
        assert_eq!(start("2026-12-08T11:59:30Z", &utc).unwrap(), NOW - 30_000);
        let e = start("2026-12-08T09:00", &utc).unwrap_err().to_string();
        assert_eq!(
            e,
            "--start \"2026-12-08T09:00\" is 3h ago (2026-12-08 09:00 local time): a \
             reservation cannot start in the past; give `now`, `+2h` or a later time"
        );
        let e = start("tomorrow", &utc).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("--start \"tomorrow\" is not a time; write {START_FORMS}")
        );
        let e = start("+2x", &utc).unwrap_err().to_string();
        assert!(
            e.starts_with("--start \"+2x\": ") && e.contains("(+2h, +1d)"),
            "{e}"
        );
        assert!(start("2026-02-30T09:00", &utc).is_err());
        assert!(start("1969-12-31T23:00Z", &utc)
            .unwrap_err()
            .to_string()
            .contains("1970"));
    }

    /// A zone whose clocks skip 02:00-03:00 on 2027-03-28 (as Europe's do).
    struct Skips;
    impl Zone for Skips {
        fn offset_s(&self, _: i64) -> i64 {
            3600
        }
        fn instant(&self, t: NaiveDateTime) -> Option<i64> {
            use chrono::Timelike;
            (t.date() != NaiveDate::from_ymd_opt(2027, 3, 28).unwrap() || t.hour() != 2)
                .then(|| Fixed(3600).instant(t).unwrap())
        }
    }

    #[test]
    fn a_wall_clock_time_the_clocks_skip_is_refused() {
        let e = start("2027-03-28T02:30", &Skips).unwrap_err().to_string();
        assert!(e.contains("does not exist in local time"), "{e}");
        assert!(start("2027-03-28T03:30", &Skips).is_ok());
    }

    #[test]
    fn the_local_zone_reads_back_what_it_prints() {
        // Mid-January and early July: no zone changes its clocks then.
        for ms in [
            1_800_000_000_000u64 / H * H + 12 * H,
            1_815_000_000_000 / H * H,
        ] {
            let shown = local_time(ms, &Local);
            let back = parse_start("--start", &shown, 0, &Local).unwrap();
            assert_eq!(back, ms, "{shown}");
        }
    }

    #[test]
    fn times_show_in_the_zone_with_how_far_away_they_are() {
        assert_eq!(local_time(NOW, &Fixed(0)), "2026-12-08 12:00");
        assert_eq!(local_time(NOW, &Fixed(-5 * 3600)), "2026-12-08 07:00");
        assert_eq!(local_time(NOW, &Fixed(13 * 3600)), "2026-12-09 01:00");
        assert_eq!(
            local_time(u64::MAX, &Fixed(0)),
            "18446744073709551615 ms after 1970"
        );
        assert_eq!(relative(NOW + 2 * H, NOW), "in 2h");
        assert_eq!(relative(NOW + 2 * H + 90_000, NOW), "in 2h 1m");
        assert_eq!(relative(NOW - 30 * 60_000, NOW), "30m ago");
        assert_eq!(relative(NOW + 30_000, NOW), "now");
        assert_eq!(relative(NOW + 75 * H, NOW), "in 3d 3h");
        assert_eq!(relative(NOW + 72 * H + 59 * 60_000, NOW), "in 3d");
    }
}
