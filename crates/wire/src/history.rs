//! History as it crosses the wire: a job's timeline (`gpusched show --events`,
//! `GET /api/jobs/{id}/events`) and the audit log of admin actions (`gpusched audit`,
//! `GET /api/audit`). Both are written by the server in the transaction of the change they
//! describe, so they never claim what the store does not hold.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// What happened to a job.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum JobEventKind {
    /// Accepted into its queue.
    Submitted,
    /// The scheduler placed it: `nodes` and `detail` say where (GPU indices, slice).
    Placed,
    /// Its process started (for a gang: its first part started).
    Started,
    /// It saved a checkpoint.
    Checkpoint,
    /// The scheduler took its GPUs back (quota reclaim, priority): `detail` says why.
    Preempted,
    /// Put back in the queue (node lost, preemption, unhealthy GPU, `drain --now`):
    /// `detail` says why.
    Requeued,
    /// A cancel was asked for: `detail` names who asked.
    CancelRequested,
    /// It reached a terminal state: `detail` says which and why (exit code, signal,
    /// walltime, dependency).
    Ended,
    /// Held while pending (`hold`, or `submit --hold`): `detail` names who held it.
    Held,
    /// Released from a hold: `detail` names who released it.
    Released,
    /// Its priority, walltime or queue changed while pending: `detail` says what, and who.
    Updated,
    /// An interactive allocation's GPUs have all been idle past its queue's idle policy:
    /// `detail` says how long, under what threshold, and whether (and when) it ends.
    IdleWarning,
    /// A step (`gpusched run`) started in it: `nodes` where, `detail` its number and
    /// command.
    StepStarted,
    /// A step ended: `detail` its number, state, exit code and how long it ran.
    StepEnded,
}

impl JobEventKind {
    pub fn name(self) -> &'static str {
        match self {
            JobEventKind::Submitted => "submitted",
            JobEventKind::Placed => "placed",
            JobEventKind::Started => "started",
            JobEventKind::Checkpoint => "checkpoint",
            JobEventKind::Preempted => "preempted",
            JobEventKind::Requeued => "requeued",
            JobEventKind::CancelRequested => "cancel_requested",
            JobEventKind::Ended => "ended",
            JobEventKind::Held => "held",
            JobEventKind::Released => "released",
            JobEventKind::Updated => "updated",
            JobEventKind::IdleWarning => "idle_warning",
            JobEventKind::StepStarted => "step_started",
            JobEventKind::StepEnded => "step_ended",
        }
    }
}

/// One step of a job's life.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct JobEvent {
    /// The server's clock, Unix ms (a `checkpoint` or `started` carries the node's).
    pub at_ms: u64,
    pub kind: JobEventKind,
    /// The attempt it belongs to (0 while the job has never been placed: `submitted`,
    /// and what happens to it while it first waits).
    pub attempt: u32,
    /// The nodes involved, in rank order (empty when none is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// Why, or where, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// `GET /api/jobs/{id}/events`: a job's timeline, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct JobEvents {
    pub job: u64,
    pub events: Vec<JobEvent>,
    /// Older events were dropped: the server keeps at most this many per job (the first
    /// `submitted` is always kept).
    #[serde(default)]
    pub dropped: u64,
}

/// An admin action the audit log records.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    TokenCreate,
    TokenRevoke,
    Drain,
    Resume,
    QueueReload,
    /// An admin cancelled a job of another user.
    CancelOther,
    /// An admin held, released or updated a job of another user.
    HoldOther,
    ReleaseOther,
    UpdateOther,
    /// An admin deleted ended jobs from the history (`gpusched admin purge`).
    Purge,
    /// An admin created, changed or deleted an advance reservation.
    ReservationCreate,
    ReservationUpdate,
    ReservationDelete,
}

impl AuditAction {
    /// Every action, for readers that map a stored name back (the store's audit rows).
    pub const ALL: [AuditAction; 13] = [
        AuditAction::TokenCreate,
        AuditAction::TokenRevoke,
        AuditAction::Drain,
        AuditAction::Resume,
        AuditAction::QueueReload,
        AuditAction::CancelOther,
        AuditAction::HoldOther,
        AuditAction::ReleaseOther,
        AuditAction::UpdateOther,
        AuditAction::Purge,
        AuditAction::ReservationCreate,
        AuditAction::ReservationUpdate,
        AuditAction::ReservationDelete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AuditAction::TokenCreate => "token_create",
            AuditAction::TokenRevoke => "token_revoke",
            AuditAction::Drain => "drain",
            AuditAction::Resume => "resume",
            AuditAction::QueueReload => "queue_reload",
            AuditAction::CancelOther => "cancel_other",
            AuditAction::HoldOther => "hold_other",
            AuditAction::ReleaseOther => "release_other",
            AuditAction::UpdateOther => "update_other",
            AuditAction::Purge => "purge",
            AuditAction::ReservationCreate => "reservation_create",
            AuditAction::ReservationUpdate => "reservation_update",
            AuditAction::ReservationDelete => "reservation_delete",
        }
    }
}

/// One entry of the audit log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AuditEntry {
    /// Increasing: the order actions took effect.
    pub id: u64,
    /// The server's clock, Unix ms.
    pub at_ms: u64,
    /// Who did it: the token's user, or `uid N` / `root` over the Unix socket, or
    /// `server` for the server itself (a queue file reloaded on SIGHUP).
    pub actor: String,
    pub action: AuditAction,
    /// What it was done to: a user (tokens), a token id, a node, `queues`, a job id.
    pub target: String,
    /// The rest, in words (a drain's reason and mode, a token's role).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// `GET /api/audit` filters: newest first, a page at a time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, IntoParams, ToSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only entries with an id below this: the previous page's `next_before`.
    #[serde(default)]
    pub before: Option<u64>,
    /// Only entries at or after this Unix time (ms).
    #[serde(default)]
    pub since_ms: Option<u64>,
    /// At most this many entries (default 100, at most 10000).
    #[serde(default)]
    #[param(minimum = 1, maximum = 10000)]
    pub limit: Option<usize>,
}

/// One page of the audit log, newest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AuditList {
    pub entries: Vec<AuditEntry>,
    /// More (older) entries match: ask again with `before` set to this.
    #[serde(default)]
    pub next_before: Option<u64>,
}

/// `POST /api/admin/purge`: delete the jobs that ended before a time from the history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PurgeRequest {
    /// Jobs that ended before this time (Unix ms) are deleted with their timelines;
    /// live jobs never are.
    pub before_ms: u64,
}

/// What a purge deleted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PurgeResult {
    /// Ended jobs deleted.
    pub deleted: u64,
    pub before_ms: u64,
}
