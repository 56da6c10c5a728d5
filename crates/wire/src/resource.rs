//! Generic counted resources (`fpga=2`): the names both ends accept, the `NAME=COUNT`
//! form of `--resource`, and the environment variable a job is told its count in.

use std::collections::BTreeMap;

/// The most distinct resources one job may ask for or one node may declare.
pub const MAX_RESOURCES: usize = 16;
/// The largest count of one resource: far above any real node, it catches typos.
pub const MAX_COUNT: u64 = 1_000_000;
/// The pattern of a resource name, as the OpenAPI document states it.
pub const NAME_PATTERN: &str = "^[a-z][a-z0-9_]{0,31}$";

/// Checks a resource name: 1-32 lowercase letters, digits and `_`, starting with a
/// letter (so `GPUSCHED_RESOURCE_<NAME>` is a plain variable name).
pub fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let ok = name.len() <= 32
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "resource name {name:?} must be 1-32 lowercase letters, digits or '_', starting \
             with a letter (e.g. `fpga` or `nvme_scratch`)"
        ))
    }
}

/// Checks a whole map (a job's ask or a node's declaration).
pub fn check_map(map: &BTreeMap<String, u64>) -> Result<(), String> {
    if map.len() > MAX_RESOURCES {
        return Err(format!(
            "{} resources given; at most {MAX_RESOURCES}",
            map.len()
        ));
    }
    for (name, &n) in map {
        check_name(name)?;
        if n == 0 || n > MAX_COUNT {
            return Err(format!(
                "resource `{name}` = {n} must be at least 1 and at most {MAX_COUNT}"
            ));
        }
    }
    Ok(())
}

/// Parses one `NAME=COUNT` (`fpga=2`) as `--resource` takes it.
pub fn parse(s: &str) -> Result<(String, u64), String> {
    let Some((name, count)) = s.split_once('=') else {
        return Err(format!("{s:?} is not NAME=COUNT; write e.g. `fpga=1`"));
    };
    let name = name.trim();
    check_name(name)?;
    let n: u64 = count.trim().parse().map_err(|_| {
        format!("{s:?}: the count {count:?} is not a whole number; write e.g. `{name}=1`")
    })?;
    if n == 0 || n > MAX_COUNT {
        return Err(format!(
            "{s:?}: the count must be at least 1 and at most {MAX_COUNT}"
        ));
    }
    Ok((name.to_string(), n))
}

/// Several `--resource` flags as one map; a name given twice is an error.
pub fn parse_all(items: &[String]) -> Result<BTreeMap<String, u64>, String> {
    let mut out = BTreeMap::new();
    for item in items {
        let (name, n) = parse(item)?;
        if out.insert(name.clone(), n).is_some() {
            return Err(format!("resource `{name}` is given twice; give it once"));
        }
    }
    check_map(&out)?;
    Ok(out)
}

/// The variable a job finds its count of `name` in: `GPUSCHED_RESOURCE_FPGA`.
pub fn env_name(name: &str) -> String {
    format!("GPUSCHED_RESOURCE_{}", name.to_ascii_uppercase())
}

/// `fpga=1, nvme=2`: a map as users write it.
pub fn describe(map: &BTreeMap<String, u64>) -> String {
    map.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_counts_parse_and_mistakes_say_what_to_write() {
        assert_eq!(parse("fpga=2").unwrap(), ("fpga".to_string(), 2));
        assert_eq!(parse(" nvme_1 = 1").unwrap(), ("nvme_1".to_string(), 1));
        let e = parse("fpga").unwrap_err();
        assert!(e.contains("NAME=COUNT") && e.contains("fpga=1"), "{e}");
        let e = parse("fpga=two").unwrap_err();
        assert!(e.contains("not a whole number"), "{e}");
        assert!(parse("fpga=0").unwrap_err().contains("at least 1"));
        assert!(parse("fpga=-1").unwrap_err().contains("not a whole number"));
        assert!(parse("fpga=1000001").is_err());
        for bad in ["FPGA=1", "1fpga=1", "=1", "fp-ga=1", "a.b=1"] {
            assert!(parse(bad).unwrap_err().contains("lowercase"), "{bad}");
        }
        assert!(check_name(&"a".repeat(33)).is_err());
        assert!(check_name(&"a".repeat(32)).is_ok());
        let e = parse_all(&["fpga=1".into(), "fpga=2".into()]).unwrap_err();
        assert!(e.contains("twice"), "{e}");
        let many: Vec<String> = (0..17).map(|i| format!("r{i}=1")).collect();
        assert!(parse_all(&many).unwrap_err().contains("at most 16"));
        assert_eq!(env_name("nvme_1"), "GPUSCHED_RESOURCE_NVME_1");
        let m = parse_all(&["b=2".into(), "a=1".into()]).unwrap();
        assert_eq!(describe(&m), "a=1, b=2");
    }
}
