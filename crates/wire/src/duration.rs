//! Durations as users write them (walltimes, `--since`, timeouts): plain seconds, unit
//! sums like `2h30m`, or Slurm's `HH:MM:SS` forms. One parser for the CLI flags and the
//! job file, so a bare number means the same in both. [`parse_duration_us`] reads the
//! same spellings to the microsecond (`500us`, `2ms`) for what is shorter than a second
//! (a batch's queue delay, a latency target).

const UNITS: &[(&[&str], u64)] = &[
    (&["w", "week", "weeks"], 7 * 86_400),
    (&["d", "day", "days"], 86_400),
    (&["h", "hr", "hrs", "hour", "hours"], 3_600),
    (&["m", "min", "mins", "minute", "minutes"], 60),
    (&["s", "sec", "secs", "second", "seconds"], 1),
];

/// The same units in microseconds, with the two below a second.
const UNITS_US: &[(&[&str], u64)] = &[
    (&["w", "week", "weeks"], 7 * 86_400 * 1_000_000),
    (&["d", "day", "days"], 86_400 * 1_000_000),
    (&["h", "hr", "hrs", "hour", "hours"], 3_600 * 1_000_000),
    (&["m", "min", "mins", "minute", "minutes"], 60 * 1_000_000),
    (&["s", "sec", "secs", "second", "seconds"], 1_000_000),
    (
        &["ms", "msec", "msecs", "millisecond", "milliseconds"],
        1_000,
    ),
    (
        &[
            "us",
            "\u{b5}s",
            "\u{3bc}s",
            "usec",
            "usecs",
            "microsecond",
            "microseconds",
        ],
        1,
    ),
];

/// Parses `90` (seconds), `90s`, `15m`, `2h30m`, `1d 12h`, `2w` or Slurm's `MM:SS`,
/// `HH:MM:SS`, `D-HH:MM:SS` into seconds. Each unit may appear once: `1h1h` is refused
/// rather than read as 2 h, since it is far more likely a typo than a sum.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let s = s.trim();
    if let Ok(n) = s.parse::<u64>() {
        return Ok(n);
    }
    if s.contains(':') {
        return clock(s);
    }
    units(s, UNITS)
}

/// [`parse_duration`] in microseconds, also taking `ms` and `us` (or `µs`): `500us`,
/// `2ms`, `1s 500ms`. A bare number is seconds, as everywhere else.
pub fn parse_duration_us(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let secs = if let Ok(n) = t.parse::<u64>() {
        n
    } else if t.contains(':') {
        clock(t)?
    } else {
        return units(t, UNITS_US).map_err(|e| e.replace("units (15m,", "units (500us, 2ms, 15m,"));
    };
    secs.checked_mul(1_000_000).ok_or_else(|| too_long(t))
}

/// `MM:SS`, `HH:MM:SS`, `D-HH:MM:SS`.
fn clock(s: &str) -> Result<u64, String> {
    let (days, rest) = match s.split_once('-') {
        Some((d, r)) => (number(d, s)?, r),
        None => (0, s),
    };
    let parts: Vec<u64> = rest
        .split(':')
        .map(|p| number(p, s))
        .collect::<Result<_, _>>()?;
    let (h, m, sec) = match parts[..] {
        [m, sec] => (0, m, sec),
        [h, m, sec] => (h, m, sec),
        _ => return Err(bad(s)),
    };
    [(days, 86_400), (h, 3_600), (m, 60), (sec, 1)]
        .iter()
        .try_fold(0u64, |acc, &(n, unit)| {
            n.checked_mul(unit).and_then(|v| acc.checked_add(v))
        })
        .ok_or_else(|| too_long(s))
}

/// A sum of `<number><unit>` terms, spaces allowed between them, in the table's unit.
fn units(s: &str, table: &[(&[&str], u64)]) -> Result<u64, String> {
    let mut rest = s;
    let mut seen: Vec<&str> = Vec::new();
    let mut total = 0u64;
    if rest.is_empty() {
        return Err(bad(s));
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(bad(s));
        }
        let n = number(&rest[..digits], s)?;
        rest = rest[digits..].trim_start();
        // Any letter, so `µs` is one word (no ASCII-only unit is the worse for it).
        let letters = rest
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(rest.len());
        let word = &rest[..letters];
        let (names, secs) = table
            .iter()
            .find(|(names, _)| names.contains(&word))
            .ok_or_else(|| bad(s))?;
        if seen.contains(&names[0]) {
            return Err(format!(
                "{s:?} gives the unit `{}` twice; write each unit once, e.g. 2h30m",
                names[0]
            ));
        }
        seen.push(names[0]);
        total = n
            .checked_mul(*secs)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| too_long(s))?;
        rest = rest[letters..].trim_start();
    }
    Ok(total)
}

fn number(digits: &str, whole: &str) -> Result<u64, String> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(whole));
    }
    digits.parse().map_err(|_| too_long(whole))
}

fn bad(s: &str) -> String {
    format!("cannot read {s:?} as a duration; use seconds (90), units (15m, 2h30m, 1d) or HH:MM:SS")
}

fn too_long(s: &str) -> String {
    format!("{s:?} is too long a duration to count in seconds")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_accepted_spelling() {
        assert_eq!(parse_duration("90"), Ok(90));
        assert_eq!(parse_duration(" 90s "), Ok(90));
        assert_eq!(parse_duration("2h30m"), Ok(9000));
        assert_eq!(parse_duration("1d 12h"), Ok(129_600));
        assert_eq!(parse_duration("2 hours 5 minutes"), Ok(7500));
        assert_eq!(parse_duration("1w"), Ok(604_800));
        assert_eq!(parse_duration("01:00:05"), Ok(3605));
        assert_eq!(parse_duration("1-00:00:00"), Ok(86400));
        assert_eq!(parse_duration("5:00"), Ok(300));
        assert!(parse_duration("soon").unwrap_err().contains("HH:MM:SS"));
    }

    #[test]
    fn microseconds_take_the_units_below_a_second() {
        assert_eq!(parse_duration_us("500us"), Ok(500));
        assert_eq!(parse_duration_us("500\u{b5}s"), Ok(500));
        assert_eq!(parse_duration_us("2ms"), Ok(2_000));
        assert_eq!(parse_duration_us("1s 500ms"), Ok(1_500_000));
        assert_eq!(parse_duration_us("2"), Ok(2_000_000));
        assert_eq!(parse_duration_us("1m"), Ok(60_000_000));
        assert_eq!(parse_duration_us("00:01"), Ok(1_000_000));
        let e = parse_duration_us("1.5ms").unwrap_err();
        assert!(e.contains("500us"), "{e}");
        assert!(parse_duration_us("2ms2ms").unwrap_err().contains("twice"));
        assert!(parse_duration_us("18446744073709551615").is_err());
        // The seconds parser still refuses what is below a second.
        assert!(parse_duration("500ms").is_err());
    }

    #[test]
    fn a_repeated_unit_is_refused_not_summed() {
        let e = parse_duration("1h1h").unwrap_err();
        assert!(e.contains("`h` twice") && e.contains("2h30m"), "{e}");
        let e = parse_duration("1m 2min").unwrap_err();
        assert!(e.contains("`m` twice"), "{e}");
    }

    #[test]
    fn malformed_and_overflowing_durations_are_errors_not_panics() {
        for s in [
            "",
            "h",
            "1x",
            "1h-",
            "-1h",
            "1.5h",
            "1:2:3:4",
            ":",
            "1-",
            "a-1:00",
            "18446744073709551615w",
            "99999999999999999999",
            "9999999999999999:00:00",
            "213503982334602-00:00:00",
            "1e3s",
            "+5m",
        ] {
            assert!(parse_duration(s).is_err(), "{s:?} was accepted");
        }
    }
}

/// Seconds as the shortest exact `1d2h3m4s` text ([`parse_duration`] reads it back):
/// `86400` is `1d`, `5400` is `1h30m`, `0` is `0s`.
pub fn format_duration(secs: u64) -> String {
    if secs == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    let mut left = secs;
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] {
        if left >= size {
            out.push_str(&format!("{}{unit}", left / size));
            left %= size;
        }
    }
    out
}

#[cfg(test)]
mod format_tests {
    #[test]
    fn durations_are_written_shortest_and_read_back() {
        for (secs, text) in [
            (0, "0s"),
            (86_400, "1d"),
            (5_400, "1h30m"),
            (90_061, "1d1h1m1s"),
        ] {
            assert_eq!(super::format_duration(secs), text);
            assert_eq!(super::parse_duration(text).unwrap(), secs);
        }
    }
}
