//! Partitions, from the queue file: named sets of nodes with their own limits (Slurm's
//! partitions). A job runs only on the nodes of the partitions it names (or of the
//! default partition), tried in its order; the core reads them as node rules
//! (`gpusched_core::eligible`).
//!
//! ```toml
//! [partition.gpu-h100]
//! features = "h100&ib"          # nodes with these features (a constraint), and/or
//! nodes = ["h100-[01-02]"]       # these nodes by name (Slurm's ranges expand)
//! max_walltime = "24h"          # a longer --walltime is refused (default: none)
//! default_walltime = "4h"       # a job without --walltime gets this
//! users = ["alice"]             # who may use it (users, groups or queues; all empty: everyone)
//! groups = ["vision"]
//! queues = ["research"]
//! priority = 100                # added to its jobs' base priority (default 0)
//! span = false                  # a gang may have parts in it and another partition it lists
//! default = false               # jobs that name no partition run here
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use gpusched_core::eligible::{Constraint, NodeSelector, PartitionNodes};
use serde::Deserialize;

/// One partition as the file says it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionDef {
    #[serde(default)]
    pub nodes: Vec<String>,
    #[serde(default)]
    pub features: Option<String>,
    #[serde(default)]
    pub max_walltime: Option<String>,
    #[serde(default)]
    pub default_walltime: Option<String>,
    #[serde(default)]
    pub users: Vec<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub queues: Vec<String>,
    #[serde(default)]
    pub priority: i32,
    #[serde(default)]
    pub span: bool,
    #[serde(default)]
    pub default: bool,
    /// The idle policy of interactive allocations running in it, each key over its
    /// queue's and the `[idle]` table's (docs/interactive-alloc.md).
    #[serde(default)]
    pub idle_threshold_pct: Option<u32>,
    #[serde(default)]
    pub idle_after: Option<String>,
    #[serde(default)]
    pub idle_action: Option<String>,
    #[serde(default)]
    pub idle_grace: Option<String>,
}

/// One partition, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    pub name: String,
    /// Its nodes as the core reads them.
    pub nodes: Arc<PartitionNodes>,
    pub max_walltime_s: Option<u64>,
    pub default_walltime_s: Option<u64>,
    pub users: Vec<String>,
    pub groups: Vec<String>,
    pub queues: Vec<String>,
    pub priority: i32,
    pub default: bool,
    /// Its idle keys as written (checked with the queues' by `Queues::idle_policy`).
    pub idle: crate::queues::IdleKeys,
}

/// Every partition, by name (none without `[partition.*]` tables: jobs run anywhere).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Partitions {
    pub defs: BTreeMap<String, Partition>,
}

impl Partitions {
    /// Checks the file's `[partition.NAME]` tables; errors name the partition and what to
    /// fix.
    pub fn from_defs(
        defs: BTreeMap<String, PartitionDef>,
        origin: &str,
        queues: &[&str],
    ) -> Result<Partitions, String> {
        let mut out = BTreeMap::new();
        let mut default = None;
        for (name, d) in defs {
            let bad = |what: String| Err(format!("{origin}: partition `{name}`: {what}"));
            if name.is_empty()
                || name.len() > 64
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            {
                return bad("a name is 1-64 letters, digits, '.', '_' or '-'".into());
            }
            let features = match d.features.as_deref() {
                Some(f) => match Constraint::parse(f) {
                    Ok(c) => Some(c),
                    Err(e) => return bad(format!("features: {e}")),
                },
                None => None,
            };
            if d.nodes.is_empty() && features.is_none() {
                return bad(
                    "it selects no nodes; give `nodes = [\"name\", ...]` or `features = \"...\"`"
                        .into(),
                );
            }
            let secs = |field: &str, v: &Option<String>| -> Result<Option<u64>, String> {
                match v {
                    None => Ok(None),
                    Some(t) => match gpusched_wire::parse_duration(t) {
                        Ok(s) if s > 0 => Ok(Some(s)),
                        _ => Err(format!(
                            "{origin}: partition `{name}`: {field} = {t:?} is not a duration \
                             above 0 (e.g. \"4h\" or \"30m\")"
                        )),
                    },
                }
            };
            let max_walltime_s = secs("max_walltime", &d.max_walltime)?;
            let default_walltime_s = secs("default_walltime", &d.default_walltime)?;
            if let (Some(m), Some(dw)) = (max_walltime_s, default_walltime_s) {
                if dw > m {
                    return bad(format!(
                        "default_walltime ({}) is above max_walltime ({})",
                        d.default_walltime.as_deref().unwrap_or(""),
                        d.max_walltime.as_deref().unwrap_or("")
                    ));
                }
            }
            if let Some(q) = d.queues.iter().find(|q| !queues.contains(&q.as_str())) {
                return bad(format!(
                    "queues names `{q}`, which is not a queue of the file ({})",
                    queues.join(", ")
                ));
            }
            if d.default {
                if let Some(other) = default.replace(name.clone()) {
                    return bad(format!(
                        "both `{other}` and `{name}` say default = true; only one may"
                    ));
                }
            }
            let nodes = Arc::new(PartitionNodes {
                name: name.clone(),
                nodes: NodeSelector {
                    names: gpusched_wire::hostlist::expand(&d.nodes)
                        .map_err(|e| format!("{origin}: partition `{name}`: nodes: {e}"))?,
                    features,
                },
                span: d.span,
            });
            out.insert(
                name.clone(),
                Partition {
                    name,
                    nodes,
                    max_walltime_s,
                    default_walltime_s,
                    users: d.users,
                    groups: d.groups,
                    queues: d.queues,
                    priority: d.priority,
                    default: d.default,
                    idle: crate::queues::IdleKeys {
                        threshold_pct: d.idle_threshold_pct,
                        after: d.idle_after,
                        action: d.idle_action,
                        grace: d.idle_grace,
                    },
                },
            );
        }
        Ok(Partitions { defs: out })
    }

    /// The default partition, if the file names one.
    pub fn default_partition(&self) -> Option<&Partition> {
        self.defs.values().find(|p| p.default)
    }

    pub fn names(&self) -> String {
        self.defs.keys().cloned().collect::<Vec<_>>().join(", ")
    }

    /// The partitions node `name` (with `features`) is in, by name.
    pub fn of_node(&self, name: &str, features: &[String]) -> Vec<String> {
        let facts = gpusched_core::eligible::NodeFacts { name, features };
        self.defs
            .values()
            .filter(|p| p.nodes.nodes.selects(facts))
            .map(|p| p.name.clone())
            .collect()
    }
}

impl Partition {
    /// Whether a job of `user` (in `groups`) in `queue` may run here.
    pub fn allows(&self, user: &str, groups: &[String], queue: &str) -> bool {
        (self.users.is_empty() && self.groups.is_empty() && self.queues.is_empty())
            || self.users.iter().any(|u| u == user)
            || self.groups.iter().any(|g| groups.contains(g))
            || self.queues.iter().any(|q| q == queue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Partitions, String> {
        #[derive(Deserialize)]
        struct F {
            partition: BTreeMap<String, PartitionDef>,
        }
        let f: F = toml::from_str(text).map_err(|e| e.to_string())?;
        Partitions::from_defs(f.partition, "queues.toml", &["default", "research"])
    }

    #[test]
    fn a_partition_is_checked_and_selects_its_nodes() {
        let p = parse(
            r#"
            [partition.gpu]
            features = "h100&ib"
            nodes = ["extra"]
            max_walltime = "24h"
            default_walltime = "4h"
            queues = ["research"]
            default = true
            "#,
        )
        .unwrap();
        let gpu = &p.defs["gpu"];
        assert_eq!(gpu.max_walltime_s, Some(86400));
        assert_eq!(gpu.default_walltime_s, Some(14400));
        assert!(gpu.allows("bob", &[], "research"));
        assert!(!gpu.allows("bob", &[], "default"));
        let f = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(p.of_node("n1", &f(&["h100", "ib"])), ["gpu"]);
        assert_eq!(p.of_node("extra", &[]), ["gpu"]);
        assert!(p.of_node("n2", &f(&["h100"])).is_empty());
        assert_eq!(p.default_partition().map(|d| d.name.as_str()), Some("gpu"));
    }

    #[test]
    fn mistakes_name_the_partition_and_the_fix() {
        let e = parse("[partition.x]\nmax_walltime = \"1h\"").unwrap_err();
        assert!(e.contains("partition `x`: it selects no nodes"), "{e}");
        let e = parse("[partition.x]\nfeatures = \"a&\"").unwrap_err();
        assert!(e.contains("features: constraint"), "{e}");
        let e = parse("[partition.x]\nnodes = [\"a\"]\nmax_walltime = \"soon\"").unwrap_err();
        assert!(
            e.contains("max_walltime = \"soon\" is not a duration"),
            "{e}"
        );
        let e = parse(
            "[partition.x]\nnodes = [\"a\"]\nmax_walltime = \"1h\"\ndefault_walltime = \"2h\"",
        )
        .unwrap_err();
        assert!(e.contains("above max_walltime"), "{e}");
        let e = parse("[partition.x]\nnodes = [\"a\"]\nqueues = [\"nope\"]").unwrap_err();
        assert!(e.contains("`nope`, which is not a queue"), "{e}");
        let e = parse(
            "[partition.x]\nnodes = [\"a\"]\ndefault = true\n[partition.y]\nnodes = [\"b\"]\ndefault = true",
        )
        .unwrap_err();
        assert!(e.contains("only one may"), "{e}");
    }
}
