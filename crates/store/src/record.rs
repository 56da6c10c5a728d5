//! What the store keeps as JSON: an array's progress, a replica's service and a job's
//! placement rules (in its job's row), nodes, tokens, services and reservations.

use gpusched_wire::{Register, Role};
use serde::{Deserialize, Serialize};

/// How far an array got: the ordinal (0-based position in its index range) of the next
/// task to materialise, the tasks that ended by outcome, and the indices cancelled before
/// they ever started. Small and of fixed size but for `skipped` (one entry per index a
/// person cancelled one by one), whatever the array's length.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayProgress {
    /// Ordinals below this have been materialised (or skipped).
    pub next: u64,
    pub succeeded: u64,
    pub failed: u64,
    /// Tasks that ended cancelled, plus the unstarted remainder of an array cancelled
    /// (or failed by a dependency) as a whole.
    pub cancelled: u64,
    pub timed_out: u64,
    /// Indices cancelled one by one before they were materialised (never started).
    #[serde(default)]
    pub skipped: Vec<u32>,
    /// Materialised tasks that have no row of their own (schema 10): each is exactly the
    /// task its array makes for that id and index, pending, queued behind `behind` if
    /// set, so the array's row is enough to rebuild it after a restart. A task gets its
    /// row, and leaves this list in the same transaction, at its first other change (it
    /// is placed, started, cancelled...). Bounded by the server (at most
    /// `UNWRITTEN_PER_ARRAY` entries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unwritten: Vec<UnwrittenTask>,
}

/// A materialised array task kept in its array's row rather than in a row of its own
/// (see [`ArrayProgress::unwritten`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnwrittenTask {
    pub id: u64,
    pub index: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<std::num::NonZeroU64>,
}

/// A node as last registered, with what an operator and the server's health checks
/// decided about it (both outlive a restart of the server or of its agent). The fields
/// after `register` are absent in rows written before they existed (no migration: a
/// node row is JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeRecord {
    pub register: Register,
    /// An operator's drain: nothing new starts on the node until `resume`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain: Option<gpusched_wire::Drain>,
    /// GPUs found unhealthy (by NVML index), out of placement until `resume`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub gpu_health: std::collections::BTreeMap<u32, gpusched_wire::GpuHealth>,
}

impl NodeRecord {
    /// A node just registered: not drained, every GPU healthy.
    pub fn new(register: Register) -> Self {
        NodeRecord {
            register,
            drain: None,
            gpu_health: Default::default(),
        }
    }
}

/// An API token: only its SHA-256 is kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRecord {
    pub id: u64,
    pub user: String,
    pub role: Role,
    /// Lower-case hex SHA-256 of the secret.
    pub hash: String,
    pub created_ms: u64,
    pub revoked: bool,
}

/// A job step (`gpusched run`; schema 14's `steps` table, one row per step, JSON): what
/// it ran, where, and how it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredStep {
    pub job: u64,
    pub step: u32,
    pub command: Vec<String>,
    pub nodes: Vec<String>,
    pub tasks_per_node: u32,
    pub pty: bool,
    /// `running`, `completed`, `failed` or `cancelled`.
    pub state: String,
    pub exit_code: Option<i32>,
    pub reason: Option<String>,
    pub started_ms: u64,
    pub ended_ms: Option<u64>,
}

/// An inference service (schema 12's `services` table, one row per service, JSON): what
/// its owner asked for and what the server decided about it that must outlive a restart.
/// The replicas themselves are jobs (their rows carry a [`StoredReplica`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServiceRecord {
    pub spec: gpusched_wire::ServiceSpec,
    pub user: String,
    /// 1 at creation, one more at each update that changes the replica template.
    pub version: u32,
    pub created_ms: u64,
    pub updated_ms: u64,
    /// Replicas wanted (the autoscaler's last decision, else the spec's).
    pub desired: u32,
    /// Replicas that ended unexpectedly in a row, and when the last did (backoff).
    #[serde(default)]
    pub failures: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure_ms: Option<u64>,
    /// What the last failure was, for `service show`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
    /// Being deleted: its replicas drain and stop; the row goes with the last of them.
    #[serde(default)]
    pub deleting: bool,
}

/// What a replica's job row says of its service (schema 12's `service` column, JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredReplica {
    pub service: String,
    pub version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    #[serde(default)]
    pub ready: bool,
    /// Out of the endpoints since then, to be stopped after the rollout's drain time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draining_since_ms: Option<u64>,
}

/// Where a job may run (schema 13's `placement` column, JSON): the partitions it may
/// use in order of preference, the node features it needs, the nodes it may and may not
/// use, and the advance reservation it runs in (the store's own copy of the
/// submission's fields, `wire::JobSubmit`). A job with no rule has none (NULL), not an
/// empty one: see [`StoredPlacement::is_empty`]. Empty fields are left out of the JSON.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredPlacement {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<String>,
    /// A feature expression, as submitted (`a100&nvlink`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodelist: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<String>,
    /// Declared speed-ups per GPU model (`H100=2.8`, canonical), a preference of where
    /// it runs (issue 36; JSON, so no schema change: older rows have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<String>,
    /// When it must be finished, Unix ms (issue 37; JSON, no schema change: older rows
    /// have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
    /// An elastic job's most GPUs (`gpus` is its least; issue 37; JSON, no schema
    /// change: older rows have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_max: Option<u32>,
    /// Its Amdahl serial fraction as it declared it, in thousandths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling_serial_milli: Option<u32>,
}

impl StoredPlacement {
    /// No rule at all: such a job's row holds NULL (`StoredJob::placement` None).
    pub fn is_empty(&self) -> bool {
        self == &StoredPlacement::default()
    }
}

/// An advance reservation (schema 13's `reservations` table, one row per reservation,
/// JSON under its name): what an admin asked for and what the server decided at its
/// creation (the nodes it holds, for a reservation of `gpus`, and their GPUs). Its state
/// (waiting, active, ended) is worked out from the clock, and the jobs in it from the
/// jobs' `placement`; neither is stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReservationRecord {
    pub spec: gpusched_wire::reservation::ReservationSpec,
    /// The nodes it holds (the spec's, or those the server picked for its `gpus`).
    pub nodes: Vec<String>,
    /// GPUs on those nodes.
    pub gpus: u32,
    /// Who created it.
    pub created_by: String,
    pub created_ms: u64,
    /// When it was created or last updated.
    pub updated_ms: u64,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A service named `name` with every field set (the spec's optional parts too).
    pub(crate) fn service(name: &str) -> ServiceRecord {
        let spec = serde_json::json!({
            "name": name,
            "replica": {
                "command": ["python3", "serve.py"],
                "gpus": 1,
                "gpu_share": 0.25,
                "env": {"MODEL": name},
                "image": "localhost/triton:24.01"
            },
            "replicas": 2,
            "protocol": "oip",
            "models": [{"name": "m1", "batching": {
                "max_batch_size": 8, "preferred_batch_sizes": [4, 8],
                "max_queue_delay_us": 500, "priority_levels": 2}}],
            "readiness": {"path": "/v2/health/ready", "period_s": 3},
            "liveness": {"failure_threshold": 5},
            "rollout": {"max_surge": 2, "max_unavailable": 1, "drain_s": 7},
            "autoscale": {"min": 0, "max": 8, "target_in_flight": 2.5,
                          "latency_p95_ms": 250}
        });
        ServiceRecord {
            spec: serde_json::from_value(spec).expect("a service spec"),
            user: "alice".into(),
            version: 3,
            created_ms: 1_700_000_000_000,
            updated_ms: 1_700_000_100_000,
            desired: 4,
            failures: 2,
            last_failure_ms: Some(1_700_000_200_000),
            last_failure: Some("exited with code 1".into()),
            deleting: true,
        }
    }

    /// A reservation named `name` with every field set (the spec's optional parts too).
    pub(crate) fn reservation(name: &str) -> ReservationRecord {
        ReservationRecord {
            spec: gpusched_wire::reservation::ReservationSpec {
                name: name.into(),
                start_ms: 1_800_000_000_000,
                duration_s: 4 * 3600,
                nodes: vec![],
                gpus: Some(16),
                gpu_model: Some("H100".into()),
                features: Some("nvlink&!slow".into()),
                users: vec!["alice".into(), "bob".into()],
                queues: vec!["workshop".into()],
                maintenance: true,
            },
            nodes: vec!["n1".into(), "n2".into()],
            gpus: 16,
            created_by: "root".into(),
            created_ms: 1_700_000_000_000,
            updated_ms: 1_700_000_300_000,
        }
    }

    /// A placement with every rule set.
    pub(crate) fn placement() -> StoredPlacement {
        StoredPlacement {
            partitions: vec!["gpu-h100".into(), "debug".into()],
            constraint: Some("a100&(nvlink|ib)&!slow".into()),
            nodelist: vec!["n1".into(), "n2".into(), "n3".into()],
            exclude: vec!["n4".into()],
            reservation: Some("workshop".into()),
            speedup: Some("A100=1.6,H100=2.8".into()),
            deadline_ms: None,
            gpus_max: Some(8),
            scaling_serial_milli: Some(50),
        }
    }

    /// Empty fields are left out of the JSON, and JSON without them reads back.
    #[test]
    fn a_placement_leaves_its_empty_fields_out() {
        let only = StoredPlacement {
            reservation: Some("r".into()),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&only).unwrap(),
            r#"{"reservation":"r"}"#
        );
        assert!(!only.is_empty() && StoredPlacement::default().is_empty());
        assert!(!placement().is_empty());
        for p in [only, placement(), StoredPlacement::default()] {
            let text = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<StoredPlacement>(&text).unwrap(), p);
        }
        assert_eq!(
            serde_json::to_string(&StoredPlacement::default()).unwrap(),
            "{}"
        );
    }
}
