//! Accounts, from the queue file: a tree (an organisation, its groups, their users) with
//! shares, for the `fairtree` policy (docs/accounts.md; Slurm's `sacctmgr` associations).
//!
//! ```toml
//! [fairshare]
//! half_life = "7d"            # decayed usage halves this often (Slurm's PriorityDecayHalfLife)
//!
//! [accounts.physics]           # under the root (no parent)
//! shares = 60
//! coordinators = ["ann"]       # who users ask to be added (named in a refusal)
//!
//! [accounts.theory]
//! parent = "physics"
//! shares = 1                   # default 1
//! users = ["ann", "bob"]       # who may charge it (each with 1 share among its siblings)
//! user_shares = { ann = 3 }    # other shares for some of them
//!
//! [users.ann]
//! default_account = "theory"   # needed when a user is in several accounts
//! ```
//!
//! A job is charged to `--account`, else to its user's default account (the one account
//! the user is in, or `default_account`); a user in no account is charged to the root.

use std::collections::{BTreeMap, BTreeSet};

use gpusched_core::policy::fairtree::{AccountId, AccountTree, Assoc, FairTreeConfig};
use gpusched_core::UserId;
use serde::Deserialize;

/// One account as the file says it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountDef {
    #[serde(default)]
    pub parent: Option<String>,
    #[serde(default = "one")]
    pub shares: u32,
    #[serde(default)]
    pub users: Vec<String>,
    #[serde(default)]
    pub user_shares: BTreeMap<String, u32>,
    #[serde(default)]
    pub coordinators: Vec<String>,
}

fn one() -> u32 {
    1
}

/// `[users.NAME]`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserDef {
    pub default_account: String,
}

/// `[fairshare]`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FairshareDef {
    #[serde(default = "FairshareDef::week")]
    pub half_life: String,
}

impl FairshareDef {
    fn week() -> String {
        "7d".into()
    }
}

impl Default for FairshareDef {
    fn default() -> Self {
        FairshareDef {
            half_life: Self::week(),
        }
    }
}

/// The root account's name (no account may take it).
pub const ROOT: &str = "root";

/// The accounts, checked, in the order the core numbers them (parents first).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Accounts {
    /// Index + 1 = the core's `AccountId` (0 is the root).
    pub order: Vec<String>,
    pub defs: BTreeMap<String, AccountDef>,
    pub users: BTreeMap<String, UserDef>,
    pub half_life_s: u64,
}

impl Accounts {
    /// Checks the file's `[accounts.*]`, `[users.*]` and `[fairshare]` tables.
    pub fn from_defs(
        defs: BTreeMap<String, AccountDef>,
        users: BTreeMap<String, UserDef>,
        fairshare: FairshareDef,
        origin: &str,
    ) -> Result<Accounts, String> {
        let half_life_s =
            gpusched_wire::duration::parse_duration(&fairshare.half_life).map_err(|e| {
                format!(
                    "{origin}: [fairshare]: half_life = {:?}: {e}",
                    fairshare.half_life
                )
            })?;
        if half_life_s == 0 {
            return Err(format!(
                "{origin}: [fairshare]: half_life must be above 0, e.g. \"7d\""
            ));
        }
        let names = || defs.keys().cloned().collect::<Vec<_>>().join(", ");
        for (name, a) in &defs {
            let bad = |what: String| Err(format!("{origin}: account `{name}`: {what}"));
            if name == ROOT {
                return bad(format!(
                    "`{ROOT}` is the tree's root; leave `parent` out to put an account under it"
                ));
            }
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            {
                return bad("a name is letters, digits, '.', '_' or '-'".into());
            }
            if a.shares == 0 {
                return bad("shares = 0: shares are 1 or more".into());
            }
            if let Some(p) = &a.parent {
                if p != ROOT && !defs.contains_key(p) {
                    return bad(format!(
                        "parent = {p:?} is no account; add [accounts.{p}] or name one of: {}",
                        names()
                    ));
                }
            }
            for (u, s) in &a.user_shares {
                if !a.users.contains(u) {
                    return bad(format!(
                        "user_shares names {u}, who is not in its users; add {u:?} to users"
                    ));
                }
                if *s == 0 {
                    return bad(format!("user_shares.{u} = 0: shares are 1 or more"));
                }
            }
        }
        // Parents first; an account never reached from the root is in a cycle.
        let mut order: Vec<String> = Vec::new();
        let mut placed: BTreeSet<&str> = BTreeSet::new();
        let parent = |a: &AccountDef| a.parent.clone().unwrap_or_else(|| ROOT.into());
        loop {
            let before = order.len();
            for (name, a) in &defs {
                let p = parent(a);
                if !placed.contains(name.as_str()) && (p == ROOT || placed.contains(p.as_str())) {
                    order.push(name.clone());
                }
            }
            for n in &order[before..] {
                placed.insert(defs.get_key_value(n).expect("from defs").0.as_str());
            }
            if order.len() == before {
                break;
            }
        }
        if let Some((name, _)) = defs.iter().find(|(n, _)| !placed.contains(n.as_str())) {
            return Err(format!(
                "{origin}: account `{name}`: its parents lead back to itself; give one of \
                 them no parent (or parent = \"{ROOT}\")"
            ));
        }
        let accounts = Accounts {
            order,
            defs,
            users,
            half_life_s,
        };
        for (user, u) in &accounts.users {
            let Some(a) = accounts.defs.get(&u.default_account) else {
                return Err(format!(
                    "{origin}: user `{user}`: default_account = {:?} is no account; name one \
                     of: {}",
                    u.default_account,
                    accounts.defs.keys().cloned().collect::<Vec<_>>().join(", ")
                ));
            };
            if !a.users.contains(user) {
                return Err(format!(
                    "{origin}: user `{user}`: default_account = {:?}, but {user} is not in its \
                     users; add {user:?} to [accounts.{}] users",
                    u.default_account, u.default_account
                ));
            }
        }
        for user in accounts.members() {
            if accounts.default_for(&user).is_none() {
                return Err(format!(
                    "{origin}: user `{user}` is in accounts {} and has no default; add \
                     [users.{user}] default_account = \"...\"",
                    accounts.of_user(&user).join(", ")
                ));
            }
        }
        Ok(accounts)
    }

    /// Every user named in some account.
    fn members(&self) -> BTreeSet<String> {
        self.defs.values().flat_map(|a| a.users.clone()).collect()
    }

    /// The accounts `user` may charge, by name.
    pub fn of_user(&self, user: &str) -> Vec<String> {
        self.defs
            .iter()
            .filter(|(_, a)| a.users.iter().any(|u| u == user))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Whether there are accounts at all.
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// `user`'s default account: `default_account`, else the only one it is in; `None`
    /// for a user in no account (charged to the root) or in several without a default
    /// (refused when the file is read).
    pub fn default_for(&self, user: &str) -> Option<String> {
        if let Some(u) = self.users.get(user) {
            return Some(u.default_account.clone());
        }
        match self.of_user(user).as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }

    /// The core's id of `name` (the root for a name the file lacks).
    pub fn id(&self, name: Option<&str>) -> AccountId {
        name.and_then(|n| self.order.iter().position(|x| x == n))
            .map_or(AccountId::ROOT, |i| AccountId(i as u32 + 1))
    }

    /// The name of the core's account `id` (`root` for 0 or one it lacks).
    pub fn name(&self, id: AccountId) -> &str {
        (id.0 as usize)
            .checked_sub(1)
            .and_then(|i| self.order.get(i))
            .map_or(ROOT, String::as_str)
    }

    /// The tree the core ranks, users numbered by `user_id`.
    pub fn tree(&self, mut user_id: impl FnMut(&str) -> UserId) -> FairTreeConfig {
        let mut tree = AccountTree::default();
        for name in &self.order {
            let a = &self.defs[name];
            let parent = self.id(a.parent.as_deref());
            tree.add(name, parent, a.shares);
        }
        for (i, name) in self.order.iter().enumerate() {
            let a = &self.defs[name];
            for u in &a.users {
                let assoc = Assoc {
                    account: AccountId(i as u32 + 1),
                    user: user_id(u),
                };
                tree.users
                    .insert(assoc, a.user_shares.get(u).copied().unwrap_or(1));
            }
        }
        FairTreeConfig {
            tree,
            half_life: self.half_life_s as f64,
        }
    }

    /// Who to ask to be let into `account`: its coordinators, else its parent's, up to
    /// the root; "an admin" when none is named.
    pub fn who_to_ask(&self, account: &str) -> String {
        let mut at = Some(account.to_string());
        while let Some(name) = at {
            let Some(a) = self.defs.get(&name) else { break };
            if !a.coordinators.is_empty() {
                return format!(
                    "its coordinator ({}) or an admin",
                    a.coordinators.join(", ")
                );
            }
            at = a.parent.clone();
        }
        "an admin".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queues::Queues;

    const FILE: &str = "
[queues.default]

[fairshare]
half_life = \"2d\"

[accounts.physics]
shares = 60
coordinators = [\"ann\"]

[accounts.theory]
parent = \"physics\"
users = [\"ann\", \"bob\"]
user_shares = { ann = 3 }

[accounts.chem]
shares = 40
users = [\"bob\", \"dan\"]

[users.bob]
default_account = \"chem\"
";

    #[test]
    fn a_tree_parses_parents_first_with_defaults_and_shares() {
        let q = Queues::parse(FILE, "q.toml").unwrap();
        let a = &q.accounts;
        assert_eq!(a.order, vec!["chem", "physics", "theory"]);
        assert_eq!(a.half_life_s, 2 * 86_400);
        assert_eq!(a.default_for("ann").as_deref(), Some("theory"));
        assert_eq!(a.default_for("bob").as_deref(), Some("chem"));
        assert_eq!(a.default_for("zed"), None);
        assert_eq!(a.who_to_ask("theory"), "its coordinator (ann) or an admin");
        assert_eq!(a.who_to_ask("chem"), "an admin");
        let mut names = Vec::new();
        let cfg = a.tree(|u| {
            names.push(u.to_string());
            UserId(names.len() as u32 - 1)
        });
        assert_eq!(cfg.half_life, 172_800.0);
        assert_eq!(cfg.tree.path(a.id(Some("theory"))), "physics/theory");
        let ann = Assoc {
            account: a.id(Some("theory")),
            user: UserId(names.iter().position(|n| n == "ann").unwrap() as u32),
        };
        assert_eq!(cfg.tree.users[&ann], 3);
        assert_eq!(a.name(a.id(Some("chem"))), "chem");
        assert_eq!(a.name(AccountId::ROOT), "root");
    }

    #[test]
    fn mistakes_name_the_account_and_the_fix() {
        let err = |extra: &str| {
            Queues::parse(&format!("[queues.default]\n{extra}"), "q.toml").unwrap_err()
        };
        let e = err("[accounts.a]\nparent = \"nope\"\n");
        assert!(
            e.contains("account `a`: parent = \"nope\" is no account"),
            "{e}"
        );
        let e = err("[accounts.a]\nparent = \"b\"\n[accounts.b]\nparent = \"a\"\n");
        assert!(e.contains("lead back to itself"), "{e}");
        let e = err("[accounts.a]\nshares = 0\n");
        assert!(e.contains("account `a`: shares = 0"), "{e}");
        let e = err("[accounts.root]\n");
        assert!(e.contains("the tree's root"), "{e}");
        let e = err("[accounts.a]\nusers = [\"x\"]\n[accounts.b]\nusers = [\"x\"]\n");
        assert!(
            e.contains("user `x` is in accounts a, b and has no default")
                && e.contains("[users.x] default_account"),
            "{e}"
        );
        let e = err("[accounts.a]\n[users.x]\ndefault_account = \"a\"\n");
        assert!(e.contains("add \"x\" to [accounts.a] users"), "{e}");
        let e = err("[accounts.a]\nuser_shares = { x = 2 }\n");
        assert!(e.contains("not in its users"), "{e}");
        let e = err("[fairshare]\nhalf_life = \"soon\"\n");
        assert!(e.contains("[fairshare]: half_life = \"soon\""), "{e}");
        let e = err("[accounts.a]\nshare = 2\n");
        assert!(e.contains("line") && e.contains("share"), "{e}");
    }
}
