//! Inference services: a model server kept running as replicas (each a job placed by
//! the core like any other, above training), probed by their agents, rolled out version
//! by version and scaled on the load gateways report; and what gateways learn from the
//! server: the ready endpoints of every service and how to batch for each model.
//!
//! What a user writes (`POST /api/services`, the TOML service file of
//! `gpusched service create`) is a [`ServiceSpec`]; what they see is a [`ServiceView`].
//! Gateways call `POST /api/gateway/sync` with a [`GatewaySync`] (their load) and get
//! an [`EndpointSet`] back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::job::JobSubmit;

/// The most replicas one service may ask for.
pub const MAX_REPLICAS: u32 = 256;

/// A service to run: `POST /api/services` creates it, `PUT /api/services/{name}` rolls
/// out a new version of it (every field but `name` may change).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// 1-63 lowercase letters, digits and `-`, starting with a letter (it names the
    /// service in URLs, metrics labels and the gateway's routes).
    #[schema(pattern = r"^[a-z][a-z0-9-]{0,62}$")]
    pub name: String,
    /// What each replica runs: a job as `POST /api/jobs` takes it, without arrays,
    /// gangs, dependencies, holds or client tokens. The replica listens on the port the
    /// agent gives it in `$PORT` (also `$GPUSCHED_PORT`), on all addresses.
    pub replica: JobSubmit,
    /// Replicas to keep when the service does not autoscale (default 1). With
    /// `autoscale`, the number it starts with (clamped to its bounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 256)]
    pub replicas: Option<u32>,
    /// What the replicas speak: the Open Inference Protocol (KServe v2, Triton's
    /// HTTP/REST) or the OpenAI API. The gateway batches only the former.
    #[serde(default)]
    pub protocol: ServeProtocol,
    /// The models the service serves (the gateway routes a request for a model to the
    /// service that lists it); default: one model named as the service, unbatched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelConfig>,
    /// When a replica takes traffic. Default: when its port accepts a connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<Probe>,
    /// When a replica is restarted: this many failures in a row and the agent stops it
    /// (the replica ends `failed`, "liveness probe failed ..."), and the service starts
    /// another. Default: none (a replica is restarted only when it exits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<Probe>,
    /// How a new version replaces the old.
    #[serde(default)]
    pub rollout: Rollout,
    /// Scale on load instead of keeping `replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscale: Option<Autoscale>,
}

/// The protocol replicas speak.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServeProtocol {
    /// KServe v2 / Triton HTTP/REST: `/v2/health/*`, `/v2/models/{name}/infer`.
    #[default]
    Oip,
    /// OpenAI-compatible: `/v1/models`, `/v1/completions`, `/v1/chat/completions`.
    Openai,
}

/// An HTTP GET (or, without `path`, a TCP connection) the replica's agent makes to the
/// replica's port every `period_s`; a status 200-399 within `timeout_s` is a success.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// The path to GET, e.g. `/v2/health/ready`; absent: a TCP connection to the port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = r"^/[\x21-\x7e]*$", max_length = 1024)]
    pub path: Option<String>,
    /// Seconds between probes (default 2).
    #[serde(default = "two")]
    #[schema(minimum = 1, maximum = 3600)]
    pub period_s: u32,
    /// Seconds a probe may take (default 1).
    #[serde(default = "one")]
    #[schema(minimum = 1, maximum = 3600)]
    pub timeout_s: u32,
    /// Failures in a row that make the replica not ready (readiness) or restart it
    /// (liveness); default 3.
    #[serde(default = "three")]
    #[schema(minimum = 1, maximum = 100)]
    pub failure_threshold: u32,
    /// Seconds after the replica starts before the first probe (default 0).
    #[serde(default)]
    #[schema(maximum = 86400)]
    pub initial_delay_s: u32,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            path: None,
            period_s: 2,
            timeout_s: 1,
            failure_threshold: 3,
            initial_delay_s: 0,
        }
    }
}

fn one() -> u32 {
    1
}
fn two() -> u32 {
    2
}
fn three() -> u32 {
    3
}

/// How a new version rolls out (Kubernetes' rolling update, in replicas).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rollout {
    /// Replicas above the desired count a rollout (or a drain) may start (default 1).
    #[serde(default = "one")]
    #[schema(maximum = 256)]
    pub max_surge: u32,
    /// Ready replicas below the desired count a rollout may go (default 0: every old
    /// replica keeps serving until a new one is ready). `max_surge` and
    /// `max_unavailable` may not both be 0.
    #[serde(default)]
    #[schema(maximum = 256)]
    pub max_unavailable: u32,
    /// Seconds a replica leaving the service is kept out of the gateways' endpoints
    /// before it is stopped, so no new request reaches a stopping replica (default 2).
    #[serde(default = "two")]
    #[schema(maximum = 3600)]
    pub drain_s: u32,
}

impl Default for Rollout {
    fn default() -> Self {
        Rollout {
            max_surge: 1,
            max_unavailable: 0,
            drain_s: 2,
        }
    }
}

/// Scaling on load: the desired replicas are the requests in flight and waiting at the
/// gateways divided by `target_in_flight`, rounded up, within `min..=max`; a rise is
/// acted on after `up_window_s` of it, a fall after `down_window_s` (the most replicas
/// recommended over that window), so the count does not flap.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Autoscale {
    /// At least this many replicas (0: scale to zero when idle).
    #[schema(maximum = 256)]
    pub min: u32,
    /// At most this many.
    #[schema(minimum = 1, maximum = 256)]
    pub max: u32,
    /// Requests in flight (at replicas or queued at gateways) one replica should carry
    /// (default 4).
    #[serde(default = "four")]
    #[schema(exclusive_minimum = 0, maximum = 100000)]
    pub target_in_flight: f64,
    /// Scale up, as for load, when the gateways' p95 latency passes this (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub latency_p95_ms: Option<u64>,
    /// Seconds a higher recommendation must hold before scaling up (default 0).
    #[serde(default)]
    #[schema(maximum = 3600)]
    pub up_window_s: u32,
    /// Seconds over which the highest recommendation is kept before scaling down
    /// (default 60).
    #[serde(default = "sixty")]
    #[schema(maximum = 86400)]
    pub down_window_s: u32,
    /// With `min = 0`: seconds without any request before the last replica goes
    /// (default 300).
    #[serde(default = "three_hundred")]
    #[schema(maximum = 86400)]
    pub idle_to_zero_s: u32,
}

fn four() -> f64 {
    4.0
}
fn sixty() -> u32 {
    60
}
fn three_hundred() -> u32 {
    300
}

/// One model a service serves, and how the gateway batches its inference requests
/// (Open Inference Protocol only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The model's name in `/v2/models/{name}` (or the OpenAI `model` field).
    #[schema(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
    pub name: String,
    /// Dynamic batching (Triton's dynamic batcher); absent: each request goes alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batching: Option<Batching>,
}

/// Triton's dynamic batcher, at the gateway: requests for the model wait in a queue
/// (ordered by priority level, then arrival) and go to one replica as one request, their
/// inputs concatenated along the first dimension, when the batch reaches the largest
/// `preferred_batch_sizes` (or `max_batch_size`) it can, or when the oldest has waited
/// `max_queue_delay_us`; the answer is split back along the first dimension.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Batching {
    /// The most items (sum of the requests' first dimensions) in one batch.
    #[schema(minimum = 1, maximum = 65536)]
    pub max_batch_size: u32,
    /// Batch sizes to send as soon as they are reached (each at most
    /// `max_batch_size`); empty: send at `max_batch_size`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferred_batch_sizes: Vec<u32>,
    /// The longest the oldest request waits for a batch to fill, in microseconds
    /// (default 0: send whatever is queued once a replica is free).
    #[serde(default)]
    #[schema(maximum = 60000000)]
    pub max_queue_delay_us: u64,
    /// Priority levels (1 is the highest); 0: one level. A request names its level in
    /// the `priority` parameter.
    #[serde(default)]
    #[schema(maximum = 16)]
    pub priority_levels: u32,
    /// The level of a request that names none (default: the lowest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_priority_level: Option<u32>,
    /// Requests queued for the model beyond which new ones are refused (503 with
    /// `Retry-After`); default 1024.
    #[serde(default = "queue_cap")]
    #[schema(minimum = 1, maximum = 1000000)]
    pub max_queue_size: u32,
    /// A request still queued after this many microseconds is refused (Triton's
    /// `default_timeout_microseconds` with `REJECT`); 0: no timeout. A request's own
    /// `timeout` parameter overrides it when `allow_timeout_override`.
    #[serde(default)]
    pub default_timeout_us: u64,
    #[serde(default)]
    pub allow_timeout_override: bool,
}

fn queue_cap() -> u32 {
    1024
}

/// A service as `GET /api/services/{name}` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServiceView {
    pub spec: ServiceSpec,
    pub user: String,
    /// The spec's version: 1 at creation, one more at each update.
    pub version: u32,
    pub created_ms: u64,
    pub updated_ms: u64,
    /// Replicas wanted now (the autoscaler's, else `replicas`).
    pub desired: u32,
    /// Replicas ready to serve (of any version).
    pub ready: u32,
    /// Replicas of the current version ready.
    pub updated_ready: u32,
    /// Replicas that ended unexpectedly in a row (reset when one becomes ready).
    pub failures: u32,
    /// While a failed replica's restart waits (exponential backoff): until when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_until_ms: Option<u64>,
    /// What the service is doing or waiting for, in words ("rolling out version 3: 1
    /// of 2 ready", "replica 41 failed: exit code 1; restarting in 8 s").
    pub status: String,
    /// The load the gateways last reported (requests in flight and queued, over
    /// every gateway heard from lately).
    pub in_flight: u32,
    pub replicas_list: Vec<ReplicaView>,
}

/// One replica of a service (a job).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReplicaView {
    pub job: u64,
    pub version: u32,
    pub phase: ReplicaPhase,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// `http://ADDRESS:PORT` once its agent gave it a port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Where a replica is in its life.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplicaPhase {
    /// Waiting for GPUs (a job pending in its queue).
    Waiting,
    /// Placed or running, not (yet, or no longer) passing its readiness probe.
    Starting,
    /// Passing its readiness probe: in the gateways' endpoints.
    Ready,
    /// Out of the endpoints, stopped after the rollout's `drain_s`.
    Draining,
}

/// `GET /api/services`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServiceList {
    pub services: Vec<ServiceView>,
}

/// What a replica's job says of its service (`JobView::service`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReplicaOf {
    pub service: String,
    pub version: u32,
    /// The port its agent gave it, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Whether it passes its readiness probe now.
    pub ready: bool,
    /// Out of the gateways' endpoints since then (Unix ms): its service is replacing or
    /// removing it, and stops it once the rollout's `drain_s` has passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draining_since_ms: Option<u64>,
}

/// `POST /api/gateway/sync`: a gateway's load, sent every poll; the answer is the
/// endpoints it routes to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GatewaySync {
    /// The gateway's identity (stable for its life: its load replaces its last report).
    #[schema(min_length = 1, max_length = 128)]
    pub gateway: String,
    /// Its load per service, as of now.
    #[serde(default)]
    pub load: Vec<ServiceLoad>,
}

/// One gateway's load on one service.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceLoad {
    pub service: String,
    /// Requests sent to replicas and not yet answered.
    pub in_flight: u32,
    /// Requests waiting in the gateway (batch queues, held for a replica to start).
    pub queued: u32,
    /// The p95 latency of the requests answered since the last sync, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<f64>,
    /// Requests answered since the last sync.
    #[serde(default)]
    pub answered: u64,
}

/// The answer to a gateway's sync.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EndpointSet {
    pub services: Vec<ServiceEndpoints>,
    /// How often the gateway should sync (ms).
    pub sync_ms: u64,
}

/// Where one service can be called now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServiceEndpoints {
    pub name: String,
    pub protocol: ServeProtocol,
    /// The models it serves (never empty: the default model is filled in).
    pub models: Vec<ModelConfig>,
    /// Ready replicas, lowest job first.
    pub endpoints: Vec<Endpoint>,
    /// Replicas wanted now; with none ready and `desired` 0 the service is scaled to
    /// zero and a request is held (bounded) while the gateway's load brings one up.
    pub desired: u32,
}

/// One ready replica.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Endpoint {
    pub job: u64,
    /// `http://ADDRESS:PORT`, no trailing slash.
    pub url: String,
}

impl ServiceSpec {
    /// The models the service serves: its own list, or one model named as it.
    pub fn served_models(&self) -> Vec<ModelConfig> {
        if self.models.is_empty() {
            vec![ModelConfig {
                name: self.name.clone(),
                batching: None,
            }]
        } else {
            self.models.clone()
        }
    }

    /// The replicas it starts with.
    pub fn initial_replicas(&self) -> u32 {
        let asked = self.replicas.unwrap_or(1);
        match &self.autoscale {
            Some(a) => asked.clamp(a.min, a.max),
            None => asked,
        }
    }

    /// What is wrong with its name (the schema's pattern), worded for its author.
    pub fn name_problem(&self) -> Option<String> {
        let n = &self.name;
        let name_ok = n.len() <= 63
            && n.starts_with(|c: char| c.is_ascii_lowercase())
            && n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        (!name_ok).then(|| {
            format!(
                "service name {n:?}: use 1-63 lowercase letters, digits and '-', starting with \
                 a letter"
            )
        })
    }

    /// What is wrong with it, worded for its author; `None`: nothing this module can
    /// see (the replica's job is checked by the server as a submission).
    pub fn problem(&self) -> Option<String> {
        if let Some(p) = self.name_problem() {
            return Some(p);
        }
        let n = &self.name;
        let r = &self.replica;
        let forbidden = [
            (r.array.is_some(), "an array"),
            (
                r.nodes.is_some_and(|k| k > 1) || r.split,
                "a gang (nodes, split)",
            ),
            (
                !r.after.is_empty() || !r.after_any.is_empty() || !r.after_notok.is_empty(),
                "dependencies (after)",
            ),
            (r.hold, "hold"),
            (r.client_token.is_some(), "a client token"),
        ];
        if let Some((_, what)) = forbidden.iter().find(|(bad, _)| *bad) {
            return Some(format!(
                "service {n}: a replica cannot have {what}; a replica is one job on one node"
            ));
        }
        if self.replicas.is_some_and(|k| k > MAX_REPLICAS) {
            return Some(format!("service {n}: at most {MAX_REPLICAS} replicas"));
        }
        // The schema's bound (256), which a request must not pass by leaving it unchecked.
        if self.rollout.max_surge > 256 || self.rollout.max_unavailable > 256 {
            return Some(format!(
                "service {n}: rollout max_surge and max_unavailable are at most 256"
            ));
        }
        if self.rollout.max_surge == 0 && self.rollout.max_unavailable == 0 {
            return Some(format!(
                "service {n}: rollout max_surge and max_unavailable are both 0, so no replica \
                 could ever be replaced; allow a surge (max_surge = 1) or an unavailable one"
            ));
        }
        if let Some(a) = &self.autoscale {
            if a.max == 0 || a.min > a.max || a.max > MAX_REPLICAS {
                return Some(format!(
                    "service {n}: autoscale needs 0 <= min <= max, 1 <= max <= {MAX_REPLICAS} \
                     (got min {} max {})",
                    a.min, a.max
                ));
            }
            if !(a.target_in_flight.is_finite() && a.target_in_flight > 0.0) {
                return Some(format!(
                    "service {n}: autoscale target_in_flight must be above 0"
                ));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for m in &self.models {
            let ok = !m.name.is_empty()
                && m.name.len() <= 128
                && m.name.starts_with(|c: char| c.is_ascii_alphanumeric())
                && m.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
            if !ok {
                return Some(format!(
                    "service {n}: model name {:?}: use letters, digits, '.', '_' and '-'",
                    m.name
                ));
            }
            if !seen.insert(&m.name) {
                return Some(format!("service {n}: model {} is listed twice", m.name));
            }
            if let Some(b) = &m.batching {
                if self.protocol != ServeProtocol::Oip {
                    return Some(format!(
                        "service {n}: model {}: batching is for the Open Inference Protocol \
                         (protocol = \"oip\"); OpenAI-compatible servers batch themselves",
                        m.name
                    ));
                }
                if b.max_batch_size == 0 {
                    return Some(format!(
                        "service {n}: model {}: max_batch_size must be at least 1",
                        m.name
                    ));
                }
                if let Some(p) = b
                    .preferred_batch_sizes
                    .iter()
                    .find(|&&p| p == 0 || p > b.max_batch_size)
                {
                    return Some(format!(
                        "service {n}: model {}: preferred batch size {p} is not within 1..={}",
                        m.name, b.max_batch_size
                    ));
                }
                if let Some(d) = b.default_priority_level {
                    if d == 0 || d > b.priority_levels.max(1) {
                        return Some(format!(
                            "service {n}: model {}: default_priority_level {d} is not within \
                             1..={}",
                            m.name,
                            b.priority_levels.max(1)
                        ));
                    }
                }
            }
        }
        for (what, p) in [("readiness", &self.readiness), ("liveness", &self.liveness)] {
            if let Some(p) = p {
                if let Some(path) = &p.path {
                    if !path.starts_with('/') || path.chars().any(|c| !c.is_ascii_graphic()) {
                        return Some(format!(
                            "service {n}: {what} probe path {path:?} must start with '/' and \
                             hold no spaces or control characters"
                        ));
                    }
                }
                if p.period_s == 0 || p.timeout_s == 0 || p.failure_threshold == 0 {
                    return Some(format!(
                        "service {n}: {what} probe period_s, timeout_s and failure_threshold \
                         must be at least 1"
                    ));
                }
            }
        }
        None
    }
}

/// The agent's part of a replica ([`crate::Launch::serve`], protocol 5): give it a
/// port in `$PORT`, report the port ([`crate::RunEventKind::Listening`]), probe it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServeLaunch {
    /// Readiness: each change reported ([`crate::RunEventKind::Ready`]). Absent: the
    /// agent reports ready once the port accepts a TCP connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<Probe>,
    /// Liveness: `failure_threshold` failures in a row and the agent stops the attempt
    /// (SIGTERM, grace, SIGKILL), which ends [`crate::Outcome::Unhealthy`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness: Option<Probe>,
}

/// Environment variables a replica gets besides the job's.
pub fn replica_env(port: u16) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("PORT".to_string(), port.to_string()),
        ("GPUSCHED_PORT".to_string(), port.to_string()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ServiceSpec {
        ServiceSpec {
            name: "resnet".into(),
            replica: JobSubmit {
                command: vec!["python3".into(), "serve.py".into()],
                ..Default::default()
            },
            replicas: Some(2),
            protocol: ServeProtocol::Oip,
            models: vec![],
            readiness: None,
            liveness: None,
            rollout: Rollout::default(),
            autoscale: None,
        }
    }

    #[test]
    fn a_plain_spec_has_no_problem_and_serves_its_own_name() {
        let s = spec();
        assert_eq!(s.problem(), None);
        assert_eq!(s.served_models()[0].name, "resnet");
        assert_eq!(s.initial_replicas(), 2);
    }

    #[test]
    fn problems_are_named() {
        let mut s = spec();
        s.name = "Bad_Name".into();
        assert!(s.problem().unwrap().contains("lowercase"));
        let mut s = spec();
        s.replica.hold = true;
        assert!(s.problem().unwrap().contains("hold"));
        let mut s = spec();
        s.rollout.max_surge = 0;
        assert!(s.problem().unwrap().contains("max_surge"));
        s.rollout.max_surge = 257;
        assert!(s.problem().unwrap().contains("at most 256"));
        s.rollout.max_surge = 1;
        s.rollout.max_unavailable = 257;
        assert!(s.problem().unwrap().contains("at most 256"));
        s.rollout.max_unavailable = 0;
        let mut s = spec();
        s.models = vec![ModelConfig {
            name: "m".into(),
            batching: Some(Batching {
                max_batch_size: 8,
                preferred_batch_sizes: vec![16],
                max_queue_delay_us: 0,
                priority_levels: 0,
                default_priority_level: None,
                max_queue_size: 10,
                default_timeout_us: 0,
                allow_timeout_override: false,
            }),
        }];
        assert!(s.problem().unwrap().contains("preferred batch size 16"));
        let mut s = spec();
        s.autoscale = Some(Autoscale {
            min: 3,
            max: 2,
            target_in_flight: 4.0,
            latency_p95_ms: None,
            up_window_s: 0,
            down_window_s: 60,
            idle_to_zero_s: 300,
        });
        assert!(s.problem().unwrap().contains("min 3 max 2"));
    }

    #[test]
    fn defaults_fill_a_minimal_json_spec() {
        let s: ServiceSpec = serde_json::from_str(
            r#"{"name":"m","replica":{"command":["x"]},"readiness":{"path":"/ready"}}"#,
        )
        .unwrap();
        let p = s.readiness.unwrap();
        assert_eq!((p.period_s, p.timeout_s, p.failure_threshold), (2, 1, 3));
        assert_eq!(s.rollout, Rollout::default());
        assert_eq!(s.protocol, ServeProtocol::Oip);
    }
}
