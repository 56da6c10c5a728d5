//! Fair share over a tree of accounts, by Slurm's Fair Tree rule
//! (<https://slurm.schedmd.com/fair_tree.html>; docs/accounts.md).
//!
//! Accounts form a tree (an organisation, its groups, ...) under one root; each has
//! `shares` among its siblings. A job is charged to an *association*: the pair (account,
//! user), the tree's leaves. Each association's GPU-seconds are remembered with a
//! half-life ([`usage::Usage`], Slurm's `PriorityDecayHalfLife`), and an account's usage is
//! the sum over its subtree.
//!
//! At every level, siblings (sub-accounts and users alike) are ranked by their *level
//! fair share*: their shares normalised among the siblings over their usage normalised
//! among the siblings (infinite without usage). The tree is walked depth first, best
//! sibling first, and the users get ranks in the order they are met, from the number of
//! users down ([`rank::standings`]); a user's fair-share factor is its rank over that
//! number, in (0, 1]. So if account A stands above its sibling B, every user under A
//! stands above every user under B, whatever happens deeper.
//!
//! The `fairtree` policy ([`crate::policy::PolicyKind::FairTree`]) orders waiting jobs by
//! their association's factor, best first, then as `priority` does (priority with aging,
//! then submit time); a job that does not fit holds back its association's later jobs for
//! the pass while other associations go on (as `drf` does per tenant).
//!
//! The rule is pure: the server and the simulator hand in the tree, the usage and the
//! time, and read the same standings.

pub mod rank;
pub mod usage;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::ids::UserId;
use crate::Seconds;

/// An account: an index into [`AccountTree::accounts`]; 0 is the root.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct AccountId(pub u32);

impl AccountId {
    /// The root of every tree: jobs charged to no account are its users.
    pub const ROOT: AccountId = AccountId(0);
}

/// What a job is charged to: a user under an account (Slurm's association).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Assoc {
    pub account: AccountId,
    pub user: UserId,
}

/// One account of the tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Account {
    pub name: String,
    /// Its parent (the root's is itself).
    pub parent: AccountId,
    /// Its part among its siblings (at least 1).
    pub shares: u32,
}

/// The accounts, and the shares of the users declared under them.
#[derive(Clone, Debug, PartialEq)]
pub struct AccountTree {
    /// Index = [`AccountId`]; `accounts[0]` is the root. A parent comes before its
    /// children.
    pub accounts: Vec<Account>,
    /// Declared users' shares under their account. A user charged to an account it is
    /// not declared under (the simulator's tenants) counts with [`UNDECLARED_SHARES`].
    pub users: BTreeMap<Assoc, u32>,
}

/// The shares of a user not declared under its account.
pub const UNDECLARED_SHARES: u32 = 1;

impl Default for AccountTree {
    /// Only the root: every user is a sibling of every other, with equal shares.
    fn default() -> Self {
        AccountTree {
            accounts: vec![Account {
                name: "root".into(),
                parent: AccountId::ROOT,
                shares: 1,
            }],
            users: BTreeMap::new(),
        }
    }
}

impl AccountTree {
    /// The account's children, in id order (the caller's order of declaration).
    pub fn children(&self, of: AccountId) -> impl Iterator<Item = AccountId> + '_ {
        self.accounts
            .iter()
            .enumerate()
            .skip(1)
            .filter(move |(_, a)| a.parent == of)
            .map(|(i, _)| AccountId(i as u32))
    }

    /// The account of `id`, the root for an id the tree does not have.
    pub fn account(&self, id: AccountId) -> AccountId {
        if id.0 as usize >= self.accounts.len() {
            AccountId::ROOT
        } else {
            id
        }
    }

    /// Adds an account under `parent`; its id.
    pub fn add(&mut self, name: &str, parent: AccountId, shares: u32) -> AccountId {
        self.accounts.push(Account {
            name: name.into(),
            parent,
            shares,
        });
        AccountId(self.accounts.len() as u32 - 1)
    }

    /// The shares of a user under its account (declared, or [`UNDECLARED_SHARES`]).
    pub fn user_shares(&self, a: Assoc) -> u32 {
        self.users.get(&a).copied().unwrap_or(UNDECLARED_SHARES)
    }

    /// The account's path from the root, names joined by `/` (`root` itself: "root").
    pub fn path(&self, id: AccountId) -> String {
        let mut names = Vec::new();
        let mut at = self.account(id);
        while at != AccountId::ROOT {
            names.push(self.accounts[at.0 as usize].name.as_str());
            at = self.accounts[at.0 as usize].parent;
        }
        if names.is_empty() {
            return self.accounts[0].name.clone();
        }
        names.reverse();
        names.join("/")
    }
}

/// The `fairtree` policy's knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct FairTreeConfig {
    pub tree: AccountTree,
    /// Usage halves every this many seconds (Slurm's `PriorityDecayHalfLife`, whose
    /// default is 7 days).
    pub half_life: Seconds,
}

/// Slurm's default half-life: 7 days.
pub const DEFAULT_HALF_LIFE: Seconds = 7.0 * 86_400.0;

impl Default for FairTreeConfig {
    fn default() -> Self {
        FairTreeConfig {
            tree: AccountTree::default(),
            half_life: DEFAULT_HALF_LIFE,
        }
    }
}
