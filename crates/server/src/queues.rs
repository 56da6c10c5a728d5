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
//! idle_threshold_pct = 5 # interactive allocations: a GPU under 5 % is idle
//! idle_after = "30m"     # ... warned once all its GPUs are idle this long
//! idle_action = "end"    # off, warn or end (ended `idle_grace` after the warning)
//! idle_grace = "10m"
//!
//! [idle]                 # the defaults of every queue's (and partition's) idle_* keys
//! threshold_pct = 5
//! after = "1h"
//! action = "warn"
//! grace = "10m"
//! ```
//!
//! The same file holds the account tree of the `fairtree` policy (`[accounts.NAME]`,
//! `[users.NAME]`, `[fairshare]`: `accounts.rs`).
//!
//! Without a file there is one queue, `default`, open to everyone and unlimited, and
//! the built-in idle policy ([`IdleDefaults`]).

use std::collections::BTreeMap;

use gpusched_core::idle::{IdleAction, IdlePolicy};
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
    /// The idle policy of its interactive allocations, each key over the file's `[idle]`
    /// table (docs/interactive-alloc.md).
    #[serde(default)]
    pub idle_threshold_pct: Option<u32>,
    #[serde(default)]
    pub idle_after: Option<String>,
    #[serde(default)]
    pub idle_action: Option<String>,
    #[serde(default)]
    pub idle_grace: Option<String>,
    /// Refuse (409) a job with a deadline its estimate cannot meet, instead of accepting
    /// it at risk (docs/deadlines.md; default false).
    #[serde(default)]
    pub refuse_late_deadlines: bool,
}

/// A queue's or a partition's own idle keys (`idle_threshold_pct`, `idle_after`,
/// `idle_action`, `idle_grace`), unset where it leaves them to the next level.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IdleKeys {
    pub threshold_pct: Option<u32>,
    pub after: Option<String>,
    pub action: Option<String>,
    pub grace: Option<String>,
}

/// The file's `[idle]` table: the idle policy of queues that do not set their own.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleDefaults {
    #[serde(default = "IdleDefaults::threshold")]
    pub threshold_pct: u32,
    #[serde(default = "IdleDefaults::after")]
    pub after: String,
    #[serde(default = "IdleDefaults::action")]
    pub action: String,
    #[serde(default = "IdleDefaults::grace")]
    pub grace: String,
}

impl IdleDefaults {
    fn threshold() -> u32 {
        5
    }
    fn after() -> String {
        "1h".into()
    }
    fn action() -> String {
        "warn".into()
    }
    fn grace() -> String {
        "10m".into()
    }
}

impl Default for IdleDefaults {
    /// Warn after an hour below 5 %; end nothing.
    fn default() -> Self {
        IdleDefaults {
            threshold_pct: Self::threshold(),
            after: Self::after(),
            action: Self::action(),
            grace: Self::grace(),
        }
    }
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
    #[serde(default)]
    idle: IdleDefaults,
    /// `[accounts.NAME]`, `[users.NAME]` and `[fairshare]` (`accounts.rs`).
    #[serde(default)]
    accounts: BTreeMap<String, crate::accounts::AccountDef>,
    #[serde(default)]
    users: BTreeMap<String, crate::accounts::UserDef>,
    #[serde(default)]
    fairshare: crate::accounts::FairshareDef,
}

/// Every queue, by name, and the partitions the same file defines.
#[derive(Clone, Debug, PartialEq)]
pub struct Queues {
    pub defs: BTreeMap<String, QueueDef>,
    pub partitions: crate::partitions::Partitions,
    /// The idle policy of interactive allocations in queues that set none.
    pub idle: IdleDefaults,
    /// The account tree (empty: every job is charged to the root).
    pub accounts: crate::accounts::Accounts,
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
            idle_threshold_pct: None,
            idle_after: None,
            idle_action: None,
            idle_grace: None,
            refuse_late_deadlines: false,
        };
        Queues {
            defs: [(DEFAULT_QUEUE.to_string(), open)].into_iter().collect(),
            partitions: Default::default(),
            idle: IdleDefaults::default(),
            accounts: crate::accounts::Accounts {
                half_life_s: gpusched_core::policy::fairtree::DEFAULT_HALF_LIFE as u64,
                ..Default::default()
            },
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
        let accounts = crate::accounts::Accounts::from_defs(
            file.accounts,
            file.users,
            file.fairshare,
            origin,
        )?;
        let queues = Queues {
            defs: file.queues,
            partitions,
            idle: file.idle,
            accounts,
        };
        queues
            .idle_policy(None)
            .map_err(|e| format!("{origin}: [idle]: {e}"))?;
        for name in queues.defs.keys() {
            queues
                .idle_policy(Some(name))
                .map_err(|e| format!("{origin}: queue `{name}`: {e}"))?;
        }
        for name in queues.partitions.defs.keys() {
            queues
                .idle_policy_in(None, Some(name))
                .map_err(|e| format!("{origin}: partition `{name}`: {e}"))?;
        }
        Ok(queues)
    }

    /// The idle policy of interactive allocations in `queue` (`None`, or a queue not in
    /// the file: the `[idle]` table's), its keys over the `[idle]` table's.
    pub fn idle_policy(&self, queue: Option<&str>) -> Result<IdlePolicy, String> {
        self.idle_policy_in(queue, None)
    }

    /// The idle policy of an allocation of `queue` running in `partition`: each key the
    /// partition's, else the queue's, else the `[idle]` table's.
    pub fn idle_policy_in(
        &self,
        queue: Option<&str>,
        partition: Option<&str>,
    ) -> Result<IdlePolicy, String> {
        let q = queue.and_then(|q| self.defs.get(q)).map(|q| IdleKeys {
            threshold_pct: q.idle_threshold_pct,
            after: q.idle_after.clone(),
            action: q.idle_action.clone(),
            grace: q.idle_grace.clone(),
        });
        let p = partition.and_then(|p| self.partitions.defs.get(p));
        let p = p.map(|p| &p.idle);
        let d = &self.idle;
        let own = |f: fn(&IdleKeys) -> Option<&String>| {
            p.and_then(f).or_else(|| q.as_ref().and_then(f)).cloned()
        };
        let pick = |own: Option<String>, key: &str, default: &String| match own {
            Some(v) => (format!("idle_{key}"), v),
            None => (key.to_string(), default.clone()),
        };
        let threshold_pct = p
            .and_then(|p| p.threshold_pct)
            .or_else(|| q.as_ref().and_then(|q| q.threshold_pct))
            .unwrap_or(d.threshold_pct);
        if threshold_pct > 100 {
            return Err(format!(
                "idle threshold {threshold_pct} is a percentage of utilisation: 0 to 100"
            ));
        }
        let duration = |(key, text): (String, String)| {
            gpusched_wire::duration::parse_duration(&text)
                .map(|s| s * 1000)
                .map_err(|e| format!("{key} = {text:?}: {e}"))
        };
        let after_ms = duration(pick(own(|k| k.after.as_ref()), "after", &d.after))?;
        let grace_ms = duration(pick(own(|k| k.grace.as_ref()), "grace", &d.grace))?;
        let (key, action) = pick(own(|k| k.action.as_ref()), "action", &d.action);
        let action = IdleAction::parse(&action)
            .ok_or_else(|| format!("{key} = {action:?}: write \"off\", \"warn\" or \"end\""))?;
        Ok(IdlePolicy {
            threshold_pct,
            after_ms,
            action,
            grace_ms,
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
        let e = Queues::parse("[queues.a]\nidle_action = \"kill\"\n", "q.toml").unwrap_err();
        assert!(
            e.contains("queue `a`: idle_action = \"kill\"") && e.contains("\"end\""),
            "{e}"
        );
        let e = Queues::parse("[idle]\nafter = \"soon\"\n[queues.a]\n", "q.toml").unwrap_err();
        assert!(e.starts_with("q.toml: [idle]: after = \"soon\""), "{e}");
        let e = Queues::parse("[queues.a]\nidle_threshold_pct = 150\n", "q.toml").unwrap_err();
        assert!(e.contains("0 to 100"), "{e}");
    }

    #[test]
    fn a_queues_idle_keys_lie_over_the_idle_table_and_the_built_in_defaults() {
        let q = Queues::parse(
            "[idle]\nafter = \"30m\"\n\n[queues.debug]\nidle_action = \"end\"\nidle_grace = \"5m\"\n\n[queues.default]\n",
            "q.toml",
        )
        .unwrap();
        let min = 60_000;
        let debug = q.idle_policy(Some("debug")).unwrap();
        assert_eq!(
            debug,
            IdlePolicy {
                threshold_pct: 5,
                after_ms: 30 * min,
                action: IdleAction::End,
                grace_ms: 5 * min
            }
        );
        let default = q.idle_policy(Some("default")).unwrap();
        assert_eq!(
            (default.action, default.after_ms),
            (IdleAction::Warn, 30 * min)
        );
        // No file: warn after an hour.
        let none = Queues::default().idle_policy(None).unwrap();
        assert_eq!(
            (none.action, none.after_ms, none.threshold_pct),
            (IdleAction::Warn, 60 * min, 5)
        );
    }

    #[test]
    fn a_partitions_idle_keys_lie_over_its_queues_and_are_checked() {
        let q = Queues::parse(
            "[queues.lab]\nidle_after = \"20m\"\nidle_action = \"end\"\n\n\
             [partition.debug]\nnodes = [\"d1\"]\nidle_after = \"5m\"\n",
            "q.toml",
        )
        .unwrap();
        let p = q.idle_policy_in(Some("lab"), Some("debug")).unwrap();
        assert_eq!((p.after_ms, p.action), (300_000, IdleAction::End));
        let e = Queues::parse(
            "[queues.lab]\n[partition.debug]\nnodes = [\"d1\"]\nidle_action = \"kill\"\n",
            "q.toml",
        )
        .unwrap_err();
        assert!(
            e.contains("partition `debug`: idle_action = \"kill\""),
            "{e}"
        );
    }
}
