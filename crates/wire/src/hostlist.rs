//! Host lists as Slurm writes them: `gpu[01-04,07],login1` is gpu01, gpu02, gpu03,
//! gpu04, gpu07 and login1. Used wherever a user names nodes: `--nodelist`, `--exclude`,
//! a partition's `nodes`, a reservation's `--nodes`.
//!
//! Written here rather than taken from a crate because the server expands lists users
//! send: the expansion is bounded ([`HOSTLIST_MAX`] names), so `n[1-999999999]` is a
//! clear error, not a gigabyte of names. Brackets may appear more than once in a name
//! (`r[1-2]n[1-3]`: every combination, the first bracket varying slowest). A range keeps
//! the width of its lower bound when that has a leading zero (`[08-10]`: 08 09 10).

/// The most names one list may expand to.
pub const HOSTLIST_MAX: usize = 65_536;

/// Splits a comma-separated list at the commas outside brackets: `a[1-2,5],b` is
/// `a[1-2,5]` and `b`. Items are trimmed; empty ones dropped.
pub fn split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut item = String::new();
    for c in s.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                push_item(&mut out, &item);
                item.clear();
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    push_item(&mut out, &item);
    out
}

fn push_item(out: &mut Vec<String>, item: &str) {
    let item = item.trim();
    if !item.is_empty() {
        out.push(item.to_string());
    }
}

/// Every name `items` stand for, in order, each once (the first time it appears).
pub fn expand<S: AsRef<str>>(items: &[S]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for item in items {
        for name in expand_one(item.as_ref())? {
            if seen.insert(name.clone()) {
                out.push(name);
                if out.len() > HOSTLIST_MAX {
                    return Err(too_many(item.as_ref()));
                }
            }
        }
    }
    Ok(out)
}

fn too_many(item: &str) -> String {
    format!("the node list {item:?} names more than {HOSTLIST_MAX} nodes; give smaller ranges")
}

/// The names one item (no top-level commas) stands for.
fn expand_one(item: &str) -> Result<Vec<String>, String> {
    let mut names = vec![String::new()];
    let mut rest = item.trim();
    while !rest.is_empty() {
        let Some(open) = rest.find(['[', ']']) else {
            names.iter_mut().for_each(|n| n.push_str(rest));
            break;
        };
        if rest.as_bytes()[open] == b']' {
            return Err(format!(
                "{item:?} has a `]` without its `[`; write e.g. gpu[01-04]"
            ));
        }
        let (prefix, after) = rest.split_at(open);
        let Some(close) = after.find(']') else {
            return Err(format!(
                "{item:?} has a `[` without its `]`; write e.g. gpu[01-04]"
            ));
        };
        let suffixes = bracket(item, &after[1..close])?;
        if names.len().saturating_mul(suffixes.len()) > HOSTLIST_MAX {
            return Err(too_many(item));
        }
        names = names
            .iter()
            .flat_map(|n| suffixes.iter().map(move |s| format!("{n}{prefix}{s}")))
            .collect();
        rest = &after[close + 1..];
    }
    Ok(names)
}

/// The numbers in one bracket, `01-04,07`, as text in the width they are written.
fn bracket(item: &str, inside: &str) -> Result<Vec<String>, String> {
    let bad = |what: &str| {
        format!("{item:?}: {what}; a bracket holds numbers and ranges, e.g. gpu[01-04,07]")
    };
    let mut out = Vec::new();
    for part in inside.split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let number = |s: &str| -> Result<u64, String> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(&format!("{part:?} is not a number or a range")));
            }
            s.parse().map_err(|_| bad(&format!("{s} is too large")))
        };
        let (a, b) = (number(lo)?, number(hi)?);
        if b < a {
            return Err(bad(&format!("the range {part} runs backwards")));
        }
        if (b - a) as usize >= HOSTLIST_MAX || out.len() + ((b - a) as usize) >= HOSTLIST_MAX {
            return Err(too_many(item));
        }
        let width = if lo.starts_with('0') { lo.len() } else { 0 };
        out.extend((a..=b).map(|n| format!("{n:0width$}")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &str) -> Result<Vec<String>, String> {
        expand(&split(s))
    }

    #[test]
    fn ranges_lists_and_padding_expand_in_order_once_each() {
        assert_eq!(
            names("gpu[01-03,07],login1, gpu02").unwrap(),
            ["gpu01", "gpu02", "gpu03", "gpu07", "login1"]
        );
        assert_eq!(names("n[8-10]").unwrap(), ["n8", "n9", "n10"]);
        assert_eq!(names("n[08-10]").unwrap(), ["n08", "n09", "n10"]);
        assert_eq!(
            names("r[1-2]n[1-2]-ib").unwrap(),
            ["r1n1-ib", "r1n2-ib", "r2n1-ib", "r2n2-ib"]
        );
        assert_eq!(names("plain").unwrap(), ["plain"]);
        assert!(names(" , ").unwrap().is_empty());
    }

    #[test]
    fn mistakes_name_the_item_and_the_form() {
        for (list, says) in [
            ("n[1-3", "without its `]`"),
            ("n1-3]", "without its `[`"),
            ("n[3-1]", "runs backwards"),
            ("n[a-b]", "not a number"),
            ("n[]", "not a number"),
            ("n[1-99999999999]", "more than 65536"),
            ("a[1-1000]b[1-1000]", "more than 65536"),
            ("n[1-99999999999999999999999]", "too large"),
        ] {
            let e = names(list).unwrap_err();
            assert!(e.contains(says), "{list}: {e}");
        }
    }
}
