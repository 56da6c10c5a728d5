//! Advance reservations: nodes held for a window of time, for some users or queues
//! (Slurm's `scontrol create reservation`), or for nobody at all (maintenance).
//! Admins create them (`POST /api/reservations`); jobs run inside one with
//! `JobSubmit::reservation` (docs/reservations.md).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A reservation to create, or (`PUT /api/reservations/{name}`) its new terms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReservationSpec {
    /// 1-64 letters, digits, `_`, `-` and `.`, starting with a letter or digit.
    #[schema(pattern = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
    pub name: String,
    /// When the window opens, milliseconds since the Unix epoch (the CLI takes
    /// `2026-12-11T09:00`, `+2h` or `now`).
    pub start_ms: u64,
    /// How long it lasts, seconds (at least 60, at most 366 days).
    #[schema(minimum = 60, maximum = 31622400)]
    pub duration_s: u64,
    /// The nodes it holds, by name. Either this or `gpus`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 4096)]
    pub nodes: Vec<String>,
    /// Or: at least this many GPUs, on whole nodes the server picks when it is created
    /// (the fewest nodes that hold them, of `gpu_model` and with `features` if given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1000000)]
    pub gpus: Option<u32>,
    /// With `gpus`: only nodes whose GPUs are of this model (a prefix, as jobs ask).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// With `gpus`: only nodes with these features (a constraint, as jobs' `--constraint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<String>,
    /// Users who may run jobs in it (with `queues`: either lets a job in). Both empty:
    /// only admins' jobs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<String>,
    /// Queues whose jobs may run in it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<String>,
    /// A maintenance window: no job at all runs on its nodes in it, and the nodes are
    /// drained as it opens (their running jobs are asked to stop, with the checkpoint
    /// contract's grace).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub maintenance: bool,
}

/// Where a reservation's window stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReservationState {
    /// Its window has not opened.
    Waiting,
    /// Its window is open now.
    Active,
    /// Its window has closed (it is deleted soon after).
    Ended,
}

/// A reservation as `GET /api/reservations` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReservationView {
    pub spec: ReservationSpec,
    /// The nodes it holds (for `gpus`, those the server picked at creation).
    pub nodes: Vec<String>,
    /// GPUs on those nodes.
    pub gpus: u32,
    pub state: ReservationState,
    pub end_ms: u64,
    /// Who created it.
    pub created_by: String,
    pub created_ms: u64,
    /// Jobs that asked for it and have not ended.
    #[serde(default)]
    pub jobs: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReservationList {
    pub reservations: Vec<ReservationView>,
}

/// Checks a reservation's (or a job's `reservation`) name.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "reservation name {name:?} must be 1-64 letters, digits, '_', '-' and '.', \
             starting with a letter or digit"
        ))
    }
}
