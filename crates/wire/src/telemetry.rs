//! GPU telemetry and health, and node drains, as they cross the wire: what an agent
//! samples through NVML (it rides on reports, never a request per sample), what the
//! server concludes about a GPU's health, and an operator's drain of a node.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One GPU's latest sample. Every reading is optional: NVML answers `NOT_SUPPORTED` for
/// some of them on some GPUs (energy before Volta, ECC on consumer boards).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuSample {
    /// NVML index.
    pub index: u32,
    /// When it was read, the agent's clock (Unix ms).
    pub at_ms: u64,
    /// NVML no longer sees the GPU (it fell off the bus, `GPU_IS_LOST`): the other
    /// readings are absent.
    #[serde(default)]
    pub lost: bool,
    /// Percent of time a kernel ran over the driver's last sample period.
    #[serde(default)]
    pub util_pct: Option<u32>,
    #[serde(default)]
    pub mem_used_mib: Option<u64>,
    /// Core temperature, degrees Celsius.
    #[serde(default)]
    pub temp_c: Option<u32>,
    /// Power draw, milliwatts.
    #[serde(default)]
    pub power_mw: Option<u32>,
    /// Energy since the driver was loaded, millijoules (NVML's total energy counter).
    #[serde(default)]
    pub energy_mj: Option<u64>,
    /// NVML's clocks event (throttle) reasons bitmask.
    #[serde(default)]
    pub throttle_reasons: Option<u64>,
    /// ECC errors since the driver was loaded (volatile counters).
    #[serde(default)]
    pub ecc_corrected: Option<u64>,
    #[serde(default)]
    pub ecc_uncorrected: Option<u64>,
    /// Retired pages (pre-Ampere) or remapped rows (Ampere and later) in all.
    #[serde(default)]
    pub retired_pages: Option<u64>,
    /// A page retirement or row remap waits for a GPU reset.
    #[serde(default)]
    pub retire_pending: Option<bool>,
    /// Xid events seen since the previous report.
    #[serde(default)]
    pub xids: Vec<XidEvent>,
}

/// One Xid event (NVIDIA's error codes in the kernel log; NVML's critical Xid events).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct XidEvent {
    pub code: u64,
    pub at_ms: u64,
}

/// A node's latest samples, one per GPU, sent with the agent's reports.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeTelemetry {
    pub gpus: Vec<GpuSample>,
}

/// Whether the scheduler may place work on a GPU.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum GpuHealth {
    #[default]
    Healthy,
    /// Out of placement until an operator resumes the node (or the agent re-registers
    /// with the GPU healthy), with why.
    Unhealthy { reason: String, since_ms: u64 },
}

/// An operator's drain of a node: nothing new starts there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Drain {
    pub reason: String,
    pub since_ms: u64,
    /// Who drained it.
    pub by: String,
    /// Running jobs were requeued with the checkpoint contract (`drain --now`); else
    /// they finish.
    pub now: bool,
}

/// `POST /api/nodes/{name}/drain` (admins).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DrainRequest {
    #[serde(default)]
    #[schema(max_length = 256)]
    pub reason: Option<String>,
    /// Requeue the running jobs now (checkpoint signal, grace), instead of letting them
    /// finish.
    #[serde(default)]
    pub now: bool,
}
