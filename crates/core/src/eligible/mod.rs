//! Which nodes a job may run on: the one rule placement, backfill, reclaim, tiers, wait
//! reasons and the simulator ask (docs/partitions.md). A job's [`NodeRules`] (its
//! partitions, `--constraint`, `--nodelist`, `--exclude`) are read against each node's
//! [`NodeFacts`] (name and features) once per change of either, giving a [`NodeMask`]
//! over the scheduler's node indices that the placement functions test beside the GPU
//! model ([`crate::freemap::Want`]).

pub mod constraint;
mod mask;
mod rules;

pub use constraint::{Constraint, ConstraintError};
pub use mask::NodeMask;
pub use rules::{NodeFacts, NodeRules, NodeSelector, PartitionNodes, Refusal};

/// The most characters in a feature's name.
pub const FEATURE_MAX: usize = 64;

pub(crate) fn feature_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Checks one feature name: 1 to 64 letters, digits, `_`, `-` and `.`, starting with a
/// letter or digit.
pub fn check_feature(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a feature name is empty".into());
    }
    if name.len() > FEATURE_MAX {
        return Err(format!(
            "feature {name:?} is longer than {FEATURE_MAX} characters"
        ));
    }
    if !name.chars().all(feature_char) || !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "feature {name:?} must be letters, digits, '_', '-' and '.', starting with a \
             letter or digit"
        ));
    }
    Ok(())
}

/// A node's features from a list (trimmed), checked, sorted, without repeats.
pub fn feature_set<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in items {
        let name = item.trim();
        check_feature(name)?;
        out.push(name.to_string());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn feature_lists_are_checked_sorted_and_deduplicated() {
        assert_eq!(
            super::feature_set(["nvlink", " a100", "nvlink"]).unwrap(),
            ["a100", "nvlink"]
        );
        assert!(super::feature_set(["a100", ""])
            .unwrap_err()
            .contains("empty"));
        assert!(super::feature_set(["-x"])
            .unwrap_err()
            .contains("starting with"));
        assert!(super::feature_set(["a b"]).is_err());
    }
}
