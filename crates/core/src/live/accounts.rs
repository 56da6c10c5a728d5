//! The live cluster's side of the `fairtree` policy: each job charged to an account, the
//! users interned for the tree's declared associations, the decayed usage handed out to
//! the store and back, and the standings for the views.

use std::collections::BTreeMap;

use super::cluster::{LiveCluster, LiveJob};
use crate::policy::fairtree::rank::Standings;
use crate::policy::fairtree::usage::Usage;
use crate::policy::fairtree::{AccountId, FairTreeConfig};
use crate::UserId;

impl LiveCluster {
    /// Adds a job charged to `account` (with its user, the association `fairtree`
    /// ranks); [`LiveCluster::add`] charges the root.
    pub fn add_charged(&mut self, v: &LiveJob, account: AccountId) {
        self.add(v);
        if let Some(i) = self.job_index(v.id) {
            self.jobs[i].spec.account = account;
        }
    }

    /// Charges a job already added to `account` (the tree was renumbered by a reload).
    pub fn set_account(&mut self, id: u64, account: AccountId) {
        if let Some(i) = self.job_index(id) {
            self.jobs[i].spec.account = account;
        }
    }

    /// The user's number in the core (given now if it has none), for the tree's
    /// declared associations.
    pub fn user_id(&mut self, name: &str) -> UserId {
        let next = self.users.len() as u32;
        *self.users.entry(name.to_string()).or_insert(UserId(next))
    }

    /// Every user's name by number.
    pub fn user_names(&self) -> BTreeMap<UserId, String> {
        self.users.iter().map(|(n, &u)| (u, n.clone())).collect()
    }

    /// The account tree and half-life of `fairtree` (the queue file's).
    pub fn set_fair_tree(&mut self, cfg: FairTreeConfig) {
        self.scheduler.policy_mut().fair_tree = cfg;
    }

    /// Charges the running jobs up to `now` (the usage's views and store read it between
    /// passes).
    pub fn advance_fair_usage(&mut self, now: crate::Seconds) {
        self.scheduler.advance_fair_usage(&self.jobs, now);
    }

    /// Each association's decayed usage as of the last pass.
    pub fn fair_usage(&self) -> &Usage {
        self.scheduler.fair_usage()
    }

    /// Usage a store kept, put back before the first pass.
    pub fn set_fair_usage(&mut self, usage: Usage) {
        self.scheduler.set_fair_usage(usage);
    }

    /// The standings now, over every declared user, every association with usage and
    /// every whole-GPU job's.
    pub fn fair_standings(&self) -> Standings {
        self.scheduler.fair_standings(&self.jobs)
    }

    fn job_index(&self, id: u64) -> Option<usize> {
        let i = self.jobs.partition_point(|j| j.spec.id.0 < id);
        (i < self.jobs.len() && self.jobs[i].spec.id.0 == id).then_some(i)
    }
}
