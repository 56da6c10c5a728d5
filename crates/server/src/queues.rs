//! Queues, from one TOML file: who may use each, how many GPUs it may hold, its weight
//! for fair share and its priorities.
//!
//! ```toml
//! [queues.research]
//! quota = 16            # GPUs guaranteed: lent when idle, reclaimed by preemption
//! max = 32              # the most it may hold, borrowing idle GPUs (default: no limit)
//! max_gpus_per_user = 8 # the most one user's running jobs may hold in it (default: no limit)
//! weight = 2            # share under the drf policy (default 1)
//! users = ["alice"]     # who may submit (users or groups; both empty: everyone)
//! groups = ["ml"]
//! default_priority = 0
//! max_priority = 10
//! preemptible = true    # its borrowing jobs may be preempted (default true)
//! preempt_lower_priority = true  # a waiting job may preempt lower tiers of this queue
//! priority_tiers = [100, 1000]   # tiers of base priority: <100, 100-999, 1000 and up
//! ```
//!
//! Without a file there is one queue, `default`, open to everyone and unlimited.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One queue as configured.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueDef {
    #[serde(default)]
    pub quota: u32,
    #[serde(default)]
    pub max: Option<u32>,
    /// Whole GPUs one user's jobs may hold in this queue at once (slices count by their
    /// fraction, rounded up).
    #[serde(default)]
    pub max_gpus_per_user: Option<u32>,
    #[serde(default = "one")]
    pub weight: f64,
    #[serde(default)]
    pub users: Vec<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub default_priority: i32,
    #[serde(default)]
    pub max_priority: Option<i32>,
    /// Whether its jobs may be preempted to give other queues their quota back.
    #[serde(default = "yes")]
    pub preemptible: bool,
    /// Whether a waiting job of a higher priority tier may preempt running jobs of lower
    /// tiers of this queue (`state/tiers.rs`; default false).
    #[serde(default)]
    pub preempt_lower_priority: bool,
    /// Ascending bounds of base priority (without aging) that start each tier above
    /// the lowest.
    #[serde(default)]
    pub priority_tiers: Vec<i32>,
}

fn yes() -> bool {
    true
}

fn one() -> f64 {
    1.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    queues: BTreeMap<String, QueueDef>,
    /// `[partition.NAME]` tables (`partitions.rs`).
    #[serde(default)]
    partition: BTreeMap<String, crate::partitions::PartitionDef>,
}

/// Every queue, by name, and the partitions the same file defines.
#[derive(Clone, Debug, PartialEq)]
pub struct Queues {
    pub defs: BTreeMap<String, QueueDef>,
    pub partitions: crate::partitions::Partitions,
}

pub const DEFAULT_QUEUE: &str = "default";

impl Default for Queues {
    fn default() -> Self {
        let open = QueueDef {
            quota: 0,
            max: None,
            max_gpus_per_user: None,
            weight: 1.0,
            users: Vec::new(),
            groups: Vec::new(),
            default_priority: 0,
            max_priority: None,
            preemptible: true,
            preempt_lower_priority: false,
            priority_tiers: Vec::new(),
        };
        Queues {
            defs: [(DEFAULT_QUEUE.to_string(), open)].into_iter().collect(),
            partitions: Default::default(),
        }
    }
}

impl Queues {
    /// Parses and checks a queue file; errors name the file, the line and what to fix.
    pub fn parse(text: &str, origin: &str) -> Result<Queues, String> {
        let file: File = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| {
                    let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                    format!(" line {line}")
                })
                .unwrap_or_default();
            format!("{origin}{at}: {}", e.message())
        })?;
        if file.queues.is_empty() {
            return Err(format!(
                "{origin}: no queues; add at least one [queues.NAME] table"
            ));
        }
        for (name, q) in &file.queues {
            let bad = |what: String| Err(format!("{origin}: queue `{name}`: {what}"));
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            {
                return bad("a name is letters, digits, '.', '_' or '-'".into());
            }
            if let Some(max) = q.max {
                if max < q.quota {
                    return bad(format!(
                        "max = {max} is below quota = {}; max counts the quota too",
                        q.quota
                    ));
                }
            }
            if !(q.weight.is_finite() && q.weight > 0.0) {
                return bad(format!("weight = {} must be above 0", q.weight));
            }
            if q.priority_tiers.windows(2).any(|w| w[0] >= w[1]) {
                return bad(format!(
                    "priority_tiers = {:?} must be ascending, e.g. [100, 1000]",
                    q.priority_tiers
                ));
            }
            if q.preempt_lower_priority && q.priority_tiers.is_empty() {
                return bad(
                    "preempt_lower_priority = true needs priority_tiers, the base priorities \
                     where higher tiers start, e.g. priority_tiers = [100, 1000]"
                        .into(),
                );
            }
            if let Some(mp) = q.max_priority {
                if q.default_priority > mp {
                    return bad(format!(
                        "default_priority = {} is above max_priority = {mp}",
                        q.default_priority
                    ));
                }
            }
        }
        let names: Vec<&str> = file.queues.keys().map(String::as_str).collect();
        let partitions = crate::partitions::Partitions::from_defs(file.partition, origin, &names)?;
        Ok(Queues {
            defs: file.queues,
            partitions,
        })
    }

    /// Whether `user` (a member of `groups`) may submit to `queue`.
    pub fn allows(&self, queue: &str, user: &str, groups: &[String]) -> bool {
        self.defs.get(queue).is_some_and(|q| {
            (q.users.is_empty() && q.groups.is_empty())
                || q.users.iter().any(|u| u == user)
                || q.groups.iter().any(|g| groups.contains(g))
        })
    }

    /// The queue a job goes to when it names none: `default` if the user may use it,
    /// else the first (by name) the user may use.
    pub fn pick_for(&self, user: &str, groups: &[String]) -> Option<&str> {
        if self.allows(DEFAULT_QUEUE, user, groups) {
            return Some(DEFAULT_QUEUE);
        }
        self.defs
            .keys()
            .find(|q| self.allows(q, user, groups))
            .map(String::as_str)
    }

    pub fn names(&self) -> String {
        self.defs.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// The Unix groups of `user` on the server (for queues open to groups).
pub fn unix_groups(user: &str) -> Vec<String> {
    let Ok(Some(account)) = nix::unistd::User::from_name(user) else {
        return Vec::new();
    };
    let Ok(name) = std::ffi::CString::new(user) else {
        return Vec::new();
    };
    nix::unistd::getgrouplist(&name, account.gid)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|g| nix::unistd::Group::from_gid(g).ok().flatten())
        .map(|g| g.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_file_parses_and_answers_who_may_use_what() {
        let q = Queues::parse(
            "[queues.research]\nquota = 4\nmax = 8\nweight = 2\nusers = [\"alice\"]\n\n[queues.default]\n",
            "q.toml",
        )
        .unwrap();
        assert!(q.allows("research", "alice", &[]));
        assert!(!q.allows("research", "bob", &[]));
        assert!(q.allows("default", "bob", &[]));
        assert_eq!(q.pick_for("bob", &[]), Some("default"));
        assert!(!q.allows("nope", "alice", &[]));
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_fix() {
        let e = Queues::parse("[queues.a]\nquota = 4\nmaxx = 8\n", "q.toml").unwrap_err();
        assert!(e.starts_with("q.toml line 3") && e.contains("maxx"), "{e}");
        let e = Queues::parse("[queues.a]\nquota = 8\nmax = 4\n", "q.toml").unwrap_err();
        assert!(e.contains("max = 4 is below quota = 8"), "{e}");
        let e = Queues::parse("[queues.a]\npreempt_lower_priority = true\n", "q.toml").unwrap_err();
        assert!(e.contains("needs priority_tiers"), "{e}");
        let e = Queues::parse("[queues.a]\npriority_tiers = [5, 5]\n", "q.toml").unwrap_err();
        assert!(e.contains("must be ascending"), "{e}");
        let e = Queues::parse("[queues.a]\nweight = 0\n", "q.toml").unwrap_err();
        assert!(e.contains("weight"), "{e}");
        let e = Queues::parse(
            "[queues.a]\ndefault_priority = 5\nmax_priority = 1\n",
            "q.toml",
        )
        .unwrap_err();
        assert!(e.contains("max_priority"), "{e}");
        let e = Queues::parse("", "q.toml").unwrap_err();
        assert!(e.contains("queues"), "{e}");
    }
}
