//! Accounts (docs/accounts.md): the account a submission is charged to, checked; the
//! queue file's tree handed to the core (`fairtree`); the core's decayed usage kept in
//! the store's `meta` under [`FAIR_USAGE_KEY`] and put back at startup or a takeover;
//! the tree with its standings for `GET /api/accounts`.
//!
//! The usage is stored by names (account, user), not by the core's numbers, which a
//! reload of the file or a new life may change. It is written with a round's writes,
//! once a minute ([`WRITE_EVERY_MS`]) while jobs run, and in the round a job ends unless
//! it was written less than five seconds before ([`AFTER_END_MS`]; then the first round
//! after, a tick at the latest), as the run-time predictor is: it moves with every round
//! while jobs run, and a write per round would add a value to every commit for nothing
//! a minute changes against a half-life of days. A crash loses no charge of a job still
//! running (the usage is stored with the time it is as of, and the first pass after the
//! restart charges the running jobs from then on), only the last five seconds' ends.

use std::collections::BTreeMap;

use gpusched_core::policy::fairtree::usage::Usage;
use gpusched_core::policy::fairtree::{AccountId, Assoc};
use gpusched_core::PolicyKind;
use gpusched_wire::{AccountList, AccountUserView, AccountView, JobSubmit};
use serde::{Deserialize, Serialize};

use super::{Fail, State};
use crate::accounts::{Accounts, ROOT};

/// The `meta` key of the decayed usage.
pub const FAIR_USAGE_KEY: &str = "fair_usage";
/// The usage is written this often while jobs run (ms).
pub const WRITE_EVERY_MS: u64 = 60_000;
/// ... and after a job ended, at most this often (ms).
pub const AFTER_END_MS: u64 = 5_000;

/// The stored form: the time it is as of, and each association's GPU-seconds.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Stored {
    at_s: Option<f64>,
    usage: Vec<StoredAssoc>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct StoredAssoc {
    account: String,
    user: String,
    gpu_seconds: f64,
}

/// When the usage was last written, in this server's life.
#[derive(Default)]
pub(super) struct FairWrites {
    last_ms: Option<u64>,
    /// A job ended since the last write (its whole run is charged).
    pub(super) ended: bool,
}

impl State {
    /// Settles the account of a submission by `user`: the one it names (which must
    /// exist: 409, and have the user: 403 naming whom to ask), else the user's default;
    /// none without accounts or for a user in none (the root is charged). Admins may
    /// charge any account.
    pub(super) fn settle_account(
        &self,
        j: &mut JobSubmit,
        user: &str,
        admin: bool,
    ) -> Result<(), Fail> {
        let accounts = &self.queues.accounts;
        let Some(name) = j.account.clone() else {
            j.account = accounts.default_for(user);
            return Ok(());
        };
        let Some(def) = accounts.defs.get(&name) else {
            let mine = accounts.of_user(user);
            return Err(Fail::Conflict(format!(
                "no account named `{name}`; {}",
                if mine.is_empty() {
                    format!(
                        "{user} is in no account (leave --account out, or ask an admin to add \
                         {user} to one in the queue file)"
                    )
                } else {
                    format!("{user}'s accounts are: {}", mine.join(", "))
                }
            )));
        };
        if !admin && !def.users.iter().any(|u| u == user) {
            return Err(Fail::Forbidden(format!(
                "{user} may not charge account `{name}`; ask {} to add {user} to \
                 [accounts.{name}] users{}",
                accounts.who_to_ask(&name),
                match accounts.of_user(user).as_slice() {
                    [] => String::new(),
                    mine => format!(" (your accounts: {})", mine.join(", ")),
                }
            )));
        }
        Ok(())
    }

    /// The core's account of a job's view.
    pub(super) fn account_id(&self, account: Option<&str>) -> AccountId {
        self.queues.accounts.id(account)
    }

    /// Hands the file's tree to the core, renumbering the live jobs' accounts and the
    /// usage when a reload changed the tree (`old`: the accounts before).
    pub(super) fn apply_accounts(&mut self, old: &Accounts, new: &Accounts) {
        let names = self.cluster.user_names();
        let usage = self.cluster.fair_usage().clone();
        let by_name = to_names(&usage, old, &names);
        let cfg = new.tree(|u| self.cluster.user_id(u));
        self.cluster.set_fair_tree(cfg);
        let usage = self.usage_of_names(by_name, usage.at, new);
        self.cluster.set_fair_usage(usage);
        let charged: Vec<(u64, AccountId)> = self
            .jobs
            .values()
            .map(|j| (j.view.id, new.id(j.view.account.as_deref())))
            .collect();
        for (id, account) in charged {
            self.cluster.set_account(id, account);
        }
    }

    fn usage_of_names(
        &mut self,
        by_name: Vec<StoredAssoc>,
        at: Option<f64>,
        accounts: &Accounts,
    ) -> Usage {
        let mut gpu_seconds: BTreeMap<Assoc, f64> = BTreeMap::new();
        for a in by_name {
            // An account the file no longer has: its users' usage goes to the root.
            let assoc = Assoc {
                account: accounts.id(Some(a.account.as_str())),
                user: self.cluster.user_id(&a.user),
            };
            *gpu_seconds.entry(assoc).or_default() += a.gpu_seconds;
        }
        Usage::restore(gpu_seconds, at)
    }

    /// Puts back the usage the store kept (`meta`'s [`FAIR_USAGE_KEY`]), after the jobs
    /// were restored and before the first pass. Unreadable usage is logged and dropped:
    /// fair share starts over rather than the server refusing to start.
    pub fn restore_fair_usage(&mut self, stored: Option<&str>) {
        let Some(text) = stored else { return };
        match serde_json::from_str::<Stored>(text) {
            Ok(s) => {
                let accounts = self.queues.accounts.clone();
                let usage = self.usage_of_names(s.usage, s.at_s, &accounts);
                self.cluster.set_fair_usage(usage);
            }
            Err(e) => {
                tracing::warn!("the stored fair-share usage is unreadable ({e}); starting over")
            }
        }
    }

    /// The usage to write this round, if due (under `fairtree` only: no other policy
    /// moves it).
    pub(super) fn take_fair_usage_write(&mut self) -> Option<(&'static str, String)> {
        if self.cfg.policy != PolicyKind::FairTree {
            return None;
        }
        let now = self.now.ms;
        let w = &self.fair_writes;
        let since = w.last_ms.map(|t| now.saturating_sub(t));
        let due = since.is_none_or(|s| s >= WRITE_EVERY_MS || (w.ended && s >= AFTER_END_MS));
        if !due {
            return None;
        }
        self.cluster.advance_fair_usage(self.now.secs());
        let usage = self.cluster.fair_usage();
        let stored = Stored {
            at_s: usage.at,
            usage: to_names(usage, &self.queues.accounts, &self.cluster.user_names()),
        };
        self.fair_writes.last_ms = Some(now);
        self.fair_writes.ended = false;
        Some((FAIR_USAGE_KEY, serde_json::to_string(&stored).ok()?))
    }

    /// The tree and every standing (`GET /api/accounts`); under `--private-jobs` a
    /// non-admin's rows only (accounts' sums stay: they name no one).
    pub fn accounts_view(&mut self, who: &super::Who) -> AccountList {
        if self.cfg.policy == PolicyKind::FairTree {
            self.cluster.advance_fair_usage(self.now.secs());
        }
        let hide = self.cfg.private_jobs && !who.admin;
        let accounts = &self.queues.accounts;
        let s = self.cluster.fair_standings();
        let names = self.cluster.user_names();
        let tree = &self.cluster.policy().fair_tree.tree;
        let hours = |gs: f64| gs / 3600.0;
        let finite = |v: f64| v.is_finite().then_some(v);
        let mut out = Vec::new();
        // Depth first, siblings best first (ties by name).
        let mut stack: Vec<(AccountId, u32)> = vec![(AccountId::ROOT, 0)];
        while let Some((id, depth)) = stack.pop() {
            let a = &s.accounts[id.0 as usize];
            let name = accounts.name(id).to_string();
            let def = accounts.defs.get(&name);
            let mut users: Vec<AccountUserView> = s
                .users
                .iter()
                .filter(|(assoc, _)| assoc.account == id)
                .map(|(assoc, u)| {
                    let user = names.get(&assoc.user).cloned().unwrap_or_default();
                    AccountUserView {
                        declared: def.is_some_and(|d| d.users.contains(&user)),
                        shares: tree.user_shares(*assoc),
                        user,
                        norm_shares: u.norm_shares,
                        usage_gpu_hours: hours(
                            self.cluster
                                .fair_usage()
                                .gpu_seconds
                                .get(assoc)
                                .copied()
                                .unwrap_or(0.0),
                        ),
                        norm_usage: u.norm_usage,
                        level_fs: finite(u.level_fs),
                        rank: u.rank,
                        fair_share: u.factor,
                    }
                })
                .collect();
            users.retain(|u| !hide || u.user == who.user);
            users.sort_by(|a, b| b.rank.cmp(&a.rank).then(a.user.cmp(&b.user)));
            out.push(AccountView {
                parent: (id != AccountId::ROOT).then(|| {
                    def.and_then(|d| d.parent.clone())
                        .unwrap_or_else(|| ROOT.to_string())
                }),
                depth,
                shares: tree.accounts.get(id.0 as usize).map_or(1, |a| a.shares),
                norm_shares: a.norm_shares,
                usage_gpu_hours: hours(a.usage),
                norm_usage: a.norm_usage,
                level_fs: finite(a.level_fs),
                coordinators: def.map(|d| d.coordinators.clone()).unwrap_or_default(),
                users,
                name,
            });
            let mut kids: Vec<AccountId> = tree.children(id).collect();
            // Pushed worst first, so the best is popped first.
            kids.sort_by(|x, y| {
                let (lx, ly) = (
                    s.accounts[x.0 as usize].level_fs,
                    s.accounts[y.0 as usize].level_fs,
                );
                lx.total_cmp(&ly)
                    .then(accounts.name(*y).cmp(accounts.name(*x)))
            });
            stack.extend(kids.into_iter().map(|k| (k, depth + 1)));
        }
        AccountList {
            policy: self.cfg.policy.name().to_string(),
            half_life_s: accounts.half_life_s,
            accounts: out,
        }
    }
}

/// The usage by names (an association whose user the core never numbered is dropped).
fn to_names(
    usage: &Usage,
    accounts: &Accounts,
    names: &BTreeMap<gpusched_core::UserId, String>,
) -> Vec<StoredAssoc> {
    usage
        .gpu_seconds
        .iter()
        .filter_map(|(a, &gs)| {
            Some(StoredAssoc {
                account: accounts.name(a.account).to_string(),
                user: names.get(&a.user)?.clone(),
                gpu_seconds: gs,
            })
        })
        .collect()
}
