//! Nodes and their GPUs.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How the agent learned about a GPU.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GpuSource {
    /// Read from NVIDIA's management library.
    Nvml,
    /// Declared by flag or config on a host without NVML: nothing checks it is real.
    Declared,
    /// The test double that follows NVML's documented behaviour.
    Fake,
}

impl GpuSource {
    pub fn name(self) -> &'static str {
        match self {
            GpuSource::Nvml => "nvml",
            GpuSource::Declared => "declared",
            GpuSource::Fake => "fake",
        }
    }
}

/// One GPU as the agent found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuInfo {
    /// NVML index (PCI bus order).
    pub index: u32,
    /// `GPU-…` UUID where known.
    pub uuid: Option<String>,
    pub model: String,
    pub mem_mib: u64,
    pub source: GpuSource,
    /// MIG mode and layout; absent when MIG is off (or the GPU has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig: Option<crate::slice::MigInfo>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeState {
    Online,
    /// Its agent has not been heard from for the heartbeat timeout, or since the
    /// server started: nothing new is placed there, and its jobs are kept (they may
    /// still run) until the agent is heard again or the node lease ends.
    Unreachable,
    /// Its agent stopped, or was silent for the whole node lease (its jobs were
    /// requeued).
    Offline,
}

/// One GPU as `GET /api/nodes` shows it: what its agent reported, and who holds it.
/// Its OpenAPI schema is [`GpuViewSchema`]: a flattened `GpuInfo` would bring along its
/// `additionalProperties: false` and forbid `job` and `slices`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuView {
    #[serde(flatten)]
    pub info: GpuInfo,
    /// The job holding this GPU whole (absent when it is another user's job hidden by
    /// the server's `--private-jobs`).
    pub job: Option<u64>,
    /// The user of the job holding this GPU whole, or `(another user)` for a job hidden
    /// by `--private-jobs`.
    #[serde(default)]
    pub user: Option<String>,
    /// Shares and MIG instances of this GPU, with who holds them.
    #[serde(default)]
    pub slices: Vec<crate::slice::SliceView>,
}

/// The fields of [`GpuView`] as one object, for its schema only (the test below keeps
/// the two in step).
#[derive(ToSchema)]
#[allow(dead_code)]
struct GpuViewSchema {
    /// NVML index (PCI bus order).
    index: u32,
    /// `GPU-…` UUID where known.
    uuid: Option<String>,
    model: String,
    mem_mib: u64,
    source: GpuSource,
    /// MIG mode and layout; absent when MIG is off (or the GPU has none).
    #[schema(nullable = false)]
    mig: Option<crate::slice::MigInfo>,
    /// The job holding this GPU whole (absent when it is another user's job hidden by
    /// the server's `--private-jobs`).
    job: Option<u64>,
    /// The user of the job holding this GPU whole, or `(another user)` for a job hidden
    /// by `--private-jobs`.
    user: Option<String>,
    /// Shares and MIG instances of this GPU, with who holds them.
    slices: Vec<crate::slice::SliceView>,
}

impl utoipa::PartialSchema for GpuView {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        GpuViewSchema::schema()
    }
}

impl ToSchema for GpuView {
    fn name() -> std::borrow::Cow<'static, str> {
        "GpuView".into()
    }
    fn schemas(
        out: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        GpuViewSchema::schemas(out)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct NodeView {
    pub name: String,
    pub state: NodeState,
    pub gpus: Vec<GpuView>,
    pub cpus: u32,
    pub mem_mib: u64,
    /// Generic counted resources the node declares (`--resource fpga=2`), by name.
    #[serde(default)]
    pub resources: std::collections::BTreeMap<String, u64>,
    /// Features it offers (`--feature`), sorted.
    #[serde(default)]
    pub features: Vec<String>,
    /// Partitions it is in (the queue file's `[partition.NAME]`), in file order.
    #[serde(default)]
    pub partitions: Vec<String>,
    /// CPUs (thousandths), memory (MiB) and generic resources not held by its running
    /// jobs (what jobs that ask for them may still get here). Accounting only.
    #[serde(default)]
    pub free_cpu_milli: u64,
    #[serde(default)]
    pub free_mem_mib: u64,
    #[serde(default)]
    pub free_resources: std::collections::BTreeMap<String, u64>,
    /// The node runs NVIDIA MPS: shares of its GPUs get MPS limits.
    #[serde(default)]
    pub mps: bool,
    /// The address its agent advertised (`MASTER_ADDR`, hostfiles).
    #[serde(default)]
    pub addr: Option<String>,
    /// Where it sits (switch, rack).
    #[serde(default)]
    pub location: crate::gang::NodeLocation,
    /// How its GPUs are linked, pair by pair.
    #[serde(default)]
    pub gpu_links: Vec<crate::gang::GpuLink>,
    /// An operator's drain, if the node is drained (nothing new starts there).
    #[serde(default)]
    pub drain: Option<crate::telemetry::Drain>,
    /// Each GPU's health (by NVML index; a GPU absent here is healthy).
    #[serde(default)]
    pub gpu_health: std::collections::BTreeMap<u32, crate::telemetry::GpuHealth>,
    /// The latest GPU samples its agent reported.
    #[serde(default)]
    pub telemetry: Option<crate::telemetry::NodeTelemetry>,
    /// Milliseconds since the agent was last heard from.
    pub last_seen_ms_ago: u64,
    pub agent_version: String,
    /// What its agent enforces on jobs (cgroup limits, devices, kill, images), as it
    /// registered; an agent before protocol 4 enforces nothing, and the server says so
    /// here (`accounting only`, with why). `None` only from servers before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<crate::contain::Containment>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct NodeList {
    pub nodes: Vec<NodeView>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field a GPU view serializes is in its schema, and nothing else.
    #[test]
    fn the_gpu_view_schema_names_every_field() {
        let view = GpuView {
            info: GpuInfo {
                index: 0,
                uuid: Some("GPU-1".into()),
                model: "A100-SXM4-80GB".into(),
                mem_mib: 81920,
                source: GpuSource::Fake,
                mig: Some(crate::slice::MigInfo {
                    dynamic: true,
                    instances: vec![],
                }),
            },
            job: Some(3),
            user: Some("alice".into()),
            slices: vec![],
        };
        let json = serde_json::to_value(&view).unwrap();
        let mut fields: Vec<&String> = json.as_object().unwrap().keys().collect();
        fields.sort();
        let schema = serde_json::to_value(<GpuView as utoipa::PartialSchema>::schema()).unwrap();
        let mut props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        props.sort();
        assert_eq!(fields, props);
        assert_ne!(schema["additionalProperties"], serde_json::json!(false));
    }
}
