//! The `--after [KIND:]ID` syntax of `submit` (a job's dependencies), read and shown.

use anyhow::bail;

/// `--after` values sorted by kind.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct After {
    pub after: Vec<u64>,
    pub after_any: Vec<u64>,
    pub after_notok: Vec<u64>,
}

/// Reads `--after` values: `ID` or `ok:ID` (afterok), `any:ID`, `notok:ID`; a value
/// may also hold several, comma-separated (`--after 3,any:4`).
pub fn parse_after(values: &[String]) -> anyhow::Result<After> {
    let mut out = After::default();
    for v in values.iter().flat_map(|v| v.split(',')) {
        let (kind, id) = v.trim().split_once(':').unwrap_or(("ok", v.trim()));
        let Ok(id) = id.parse::<u64>() else {
            bail!("--after {v:?}: expected a job id, or KIND:ID with KIND ok, any or notok (e.g. --after any:12)");
        };
        match kind {
            "ok" => out.after.push(id),
            "any" => out.after_any.push(id),
            "notok" => out.after_notok.push(id),
            _ => bail!(
                "--after {v:?}: unknown kind `{kind}`; write ok:ID (succeeded), any:ID (ended \
                 however) or notok:ID (ended without succeeding)"
            ),
        }
    }
    Ok(out)
}

/// A job's dependencies as `submit --after` takes them: `3 any:5 notok:6` (`after` ids
/// bare), or `-`.
pub fn dependencies(j: &gpusched_wire::JobView) -> String {
    let all: Vec<String> = j
        .after
        .iter()
        .map(u64::to_string)
        .chain(j.after_any.iter().map(|d| format!("any:{d}")))
        .chain(j.after_notok.iter().map(|d| format!("notok:{d}")))
        .collect();
    if all.is_empty() {
        "-".into()
    } else {
        all.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn after_takes_each_kind_and_bare_ids() {
        let a = parse_after(&strings(&["3", "ok:4", "any:5,notok:6"])).unwrap();
        assert_eq!(
            a,
            After {
                after: vec![3, 4],
                after_any: vec![5],
                after_notok: vec![6]
            }
        );
        let e = parse_after(&strings(&["maybe:3"])).unwrap_err().to_string();
        assert!(
            e.contains("unknown kind `maybe`") && e.contains("notok:ID"),
            "{e}"
        );
        let e = parse_after(&strings(&["any:x"])).unwrap_err().to_string();
        assert!(e.contains("expected a job id"), "{e}");
    }
}
