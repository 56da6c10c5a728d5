//! The account tree of the `fairtree` policy as `GET /api/accounts` shows it
//! (docs/accounts.md; Slurm's `sshare -l`).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Every account, depth first from the root, siblings in the order the scheduler ranks
/// them (best first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AccountList {
    /// The server's policy: the standings order jobs only under `fairtree`.
    pub policy: String,
    /// Usage halves this often, seconds.
    pub half_life_s: u64,
    pub accounts: Vec<AccountView>,
}

/// One account and the users charged to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AccountView {
    /// `root` for the root.
    pub name: String,
    /// Its parent (absent for the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// 0 for the root.
    pub depth: u32,
    /// Its shares among its siblings, as the file says.
    pub shares: u32,
    /// Shares over its siblings' shares.
    pub norm_shares: f64,
    /// Decayed GPU-hours of its whole subtree.
    pub usage_gpu_hours: f64,
    /// Usage over its siblings' usage (0 when none used anything).
    pub norm_usage: f64,
    /// `norm_shares / norm_usage`; absent while it used nothing (infinite: it ranks
    /// first).
    #[serde(default)]
    pub level_fs: Option<f64>,
    /// Who users ask to be added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coordinators: Vec<String>,
    pub users: Vec<AccountUserView>,
}

/// One user under an account (Slurm's association).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AccountUserView {
    pub user: String,
    pub shares: u32,
    pub norm_shares: f64,
    /// Decayed GPU-hours.
    pub usage_gpu_hours: f64,
    pub norm_usage: f64,
    #[serde(default)]
    pub level_fs: Option<f64>,
    /// From the number of users (the best) down to 1.
    pub rank: u32,
    /// `rank / users`, in (0, 1]: the `fairtree` policy starts higher factors first.
    pub fair_share: f64,
    /// Whether it is in the file (a user with jobs here that the file does not name
    /// counts with 1 share).
    pub declared: bool,
}
