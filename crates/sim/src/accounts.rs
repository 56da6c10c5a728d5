//! The `fairtree` policy in the simulator: traces carry no account tree, so each tenant
//! (user, or queue with `--fair-by queue`; Philly's virtual clusters either way) is an
//! account under the root, its shares the tenant's queue-file weight (1 without), and
//! each job is charged to its tenant's account with its user: a flat tree, which is what
//! per-queue DRF balances too, so the two are compared on the same entitlement.

use std::collections::BTreeMap;

use gpusched_core::policy::fairtree::{AccountId, AccountTree};
use gpusched_core::policy::Tenant;

use crate::trace::Workload;

/// Charges every job of `workload` to its tenant's account and returns the tree.
/// `weights`: by tenant number (a queue file's), rounded to whole shares, at least 1.
pub fn charge_tenants(
    workload: &mut Workload,
    tenant: Tenant,
    weights: &BTreeMap<u32, f64>,
) -> AccountTree {
    let names = match tenant {
        Tenant::User => &workload.users,
        Tenant::Queue => &workload.queues,
    };
    let mut tree = AccountTree::default();
    for (i, name) in names.iter().enumerate() {
        let w = weights.get(&(i as u32)).copied().unwrap_or(1.0);
        let shares = (w.round() as u32).max(1);
        let id = tree.add(name, AccountId::ROOT, shares);
        debug_assert_eq!(id, AccountId(i as u32 + 1));
    }
    for j in &mut workload.jobs {
        let t = match tenant {
            Tenant::User => j.spec.user.get(),
            Tenant::Queue => j.spec.queue.get(),
        };
        j.spec.account = AccountId(t + 1);
    }
    tree
}
