//! The Fair Tree ranking: level fair shares among siblings, a depth-first walk best
//! sibling first, ranks from the number of users down, factor = rank / users.
//!
//! Ties, as Slurm has them: users of equal level fair share under one walk get the same
//! rank (the next rank down skips as many as they are); accounts of equal level fair
//! share have their children merged and ranked as if siblings, each child keeping the
//! level fair share it has among its own siblings. Inside a tie, users come before
//! accounts and lower ids first, so the walk's order is fixed.

use std::collections::{BTreeMap, BTreeSet};

use super::{AccountId, AccountTree, Assoc};

/// Where one user (association) stands.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct UserStanding {
    /// Shares over the siblings' shares.
    pub norm_shares: f64,
    /// Usage over the siblings' usage (0 when none of them used anything).
    pub norm_usage: f64,
    /// `norm_shares / norm_usage`; infinite without usage.
    pub level_fs: f64,
    /// From the number of users (the best) down to 1.
    pub rank: u32,
    /// `rank / users`, in (0, 1].
    pub factor: f64,
}

/// Where one account stands among its siblings.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct AccountStanding {
    /// Decayed GPU-seconds of its whole subtree.
    pub usage: f64,
    pub norm_shares: f64,
    pub norm_usage: f64,
    pub level_fs: f64,
}

/// Every standing, for the order and for the views.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Standings {
    pub users: BTreeMap<Assoc, UserStanding>,
    /// By account id (the root's: its whole usage, shares 1, level fair share 1).
    pub accounts: Vec<AccountStanding>,
}

impl Standings {
    /// The factor of `a` (0 for an association that was not ranked).
    pub fn factor(&self, a: Assoc) -> f64 {
        self.users.get(&a).map_or(0.0, |s| s.factor)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Member {
    // Users sort before accounts inside a tie.
    User(Assoc),
    Account(AccountId),
}

/// The standings of every user declared in `tree`, every association with `usage`, and
/// every one in `more` (those with jobs); `usage` is decayed GPU-seconds. An
/// association under an account the tree lacks is the root's.
pub fn standings(
    tree: &AccountTree,
    usage: &BTreeMap<Assoc, f64>,
    more: impl IntoIterator<Item = Assoc>,
) -> Standings {
    let fix = |a: Assoc| Assoc {
        account: tree.account(a.account),
        user: a.user,
    };
    let mut leaves: BTreeSet<Assoc> = tree.users.keys().map(|&a| fix(a)).collect();
    leaves.extend(usage.keys().map(|&a| fix(a)));
    leaves.extend(more.into_iter().map(fix));
    let mut leaf_usage: BTreeMap<Assoc, f64> = leaves.iter().map(|&a| (a, 0.0)).collect();
    for (&a, &u) in usage {
        *leaf_usage.entry(fix(a)).or_default() += u.max(0.0);
    }
    // An account's usage: its users' and its sub-accounts' (children have higher ids).
    let n = tree.accounts.len();
    let mut acc_usage = vec![0.0; n];
    for (a, u) in &leaf_usage {
        acc_usage[a.account.0 as usize] += u;
    }
    for i in (1..n).rev() {
        let p = tree.accounts[i].parent.0 as usize;
        acc_usage[p] += acc_usage[i];
    }
    // Each account's members (sub-accounts, then users), with raw shares and usage.
    let mut members: Vec<Vec<(Member, f64, f64)>> = vec![Vec::new(); n];
    for (i, (a, &used)) in tree.accounts.iter().zip(&acc_usage).enumerate().skip(1) {
        members[a.parent.0 as usize].push((
            Member::Account(AccountId(i as u32)),
            a.shares as f64,
            used,
        ));
    }
    for (&a, &u) in &leaf_usage {
        members[a.account.0 as usize].push((Member::User(a), tree.user_shares(a) as f64, u));
    }
    // Level fair shares, each relative to its own siblings.
    let mut level: BTreeMap<Member, (f64, f64, f64)> = BTreeMap::new();
    for sibs in &members {
        let total_s: f64 = sibs.iter().map(|m| m.1).sum();
        let total_u: f64 = sibs.iter().map(|m| m.2).sum();
        for &(m, s, u) in sibs {
            let ns = if total_s > 0.0 { s / total_s } else { 0.0 };
            let nu = if total_u > 0.0 { u / total_u } else { 0.0 };
            let lf = if nu > 0.0 { ns / nu } else { f64::INFINITY };
            level.insert(m, (ns, nu, lf));
        }
    }
    let count = leaf_usage.len() as u32;
    let mut out = Standings {
        users: BTreeMap::new(),
        accounts: (0..n)
            .map(|i| {
                let (ns, nu, lf) = level
                    .get(&Member::Account(AccountId(i as u32)))
                    .copied()
                    .unwrap_or((1.0, 1.0, 1.0));
                AccountStanding {
                    usage: acc_usage[i],
                    norm_shares: ns,
                    norm_usage: nu,
                    level_fs: lf,
                }
            })
            .collect(),
    };
    let mut next = count;
    let root: Vec<Member> = members[0].iter().map(|m| m.0).collect();
    walk(root, &members, &level, &mut next, count, &mut out);
    out
}

fn walk(
    mut group: Vec<Member>,
    members: &[Vec<(Member, f64, f64)>],
    level: &BTreeMap<Member, (f64, f64, f64)>,
    next: &mut u32,
    count: u32,
    out: &mut Standings,
) {
    let lf = |m: &Member| level[m].2;
    // Best first; inside a tie users first, then ids.
    group.sort_by(|a, b| lf(b).total_cmp(&lf(a)).then(a.cmp(b)));
    let mut i = 0;
    while i < group.len() {
        let tie = lf(&group[i]);
        let mut j = i;
        while j < group.len() && lf(&group[j]) == tie {
            j += 1;
        }
        let (users, accounts): (Vec<Member>, Vec<Member>) = group[i..j]
            .iter()
            .partition(|m| matches!(m, Member::User(_)));
        let rank = *next;
        for m in &users {
            let Member::User(a) = *m else { continue };
            let (ns, nu, lf) = level[m];
            out.users.insert(
                a,
                UserStanding {
                    norm_shares: ns,
                    norm_usage: nu,
                    level_fs: lf,
                    rank,
                    factor: rank as f64 / count as f64,
                },
            );
        }
        *next -= users.len() as u32;
        // Tied accounts: their children ranked together.
        let merged: Vec<Member> = accounts
            .iter()
            .flat_map(|m| match m {
                Member::Account(id) => members[id.0 as usize].iter().map(|c| c.0).collect(),
                Member::User(_) => Vec::new(),
            })
            .collect();
        if !merged.is_empty() {
            walk(merged, members, level, next, count, out);
        }
        i = j;
    }
}
