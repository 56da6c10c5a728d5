//! GPU discovery. The agent asks a [`GpuLibrary`] (NVIDIA's management library, or the
//! [`fake::FakeNvml`] test double) what devices the host has, or takes GPUs the operator
//! declared by hand on hosts without NVML, and turns them into the wire's [`GpuInfo`].
//!
//! The trait sits at NVML's own level (count, then one device by index). MIG is part of
//! it: a GPU in MIG mode lists its GPU instances, and the agent creates and destroys
//! instances (each with one compute instance spanning it) when its node allows dynamic
//! MIG. The default methods answer as NVML does for a GPU without MIG.
//!
//! Telemetry is one call per pass over the node's GPUs ([`GpuLibrary::sample`]), made
//! by the agent every `--telemetry-interval` on a blocking thread, never per job.

mod discover;
mod error;
pub mod fake;
pub mod fake_telemetry;
pub mod nvml;
mod nvml_mig;
mod nvml_sample;
pub mod sample;
pub mod topology;

pub use discover::{discover, discover_with, Discovery, GpuBackend, GpuOptions};
pub use error::GpuError;
pub use fake::{FakeNvml, FakeTopology};
pub use sample::GpuReading;

use std::collections::BTreeMap;

use gpusched_wire::{GpuInfo, GpuLink, GpuSource, LinkKind, MigInfo, MigInstanceInfo};

/// What NVML says about one device, unconverted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceFacts {
    /// NVML index: the position in PCI bus order.
    pub index: u32,
    /// The name as NVML returns it, e.g. `NVIDIA A100-SXM4-80GB`.
    pub name: String,
    /// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    pub uuid: String,
    pub memory_total_bytes: u64,
    /// `domain:bus:device.function`, e.g. `00000000:07:00.0`.
    pub pci_bus_id: String,
    /// Whether MIG is enabled now; `None` where the device does not support MIG or the
    /// library does not report it.
    pub mig_mode_current: Option<bool>,
    /// The device file's minor number (`/dev/nvidiaN`); `None` where NVML does not say.
    pub minor_number: Option<u32>,
}

/// One GPU instance of a GPU in MIG mode, with the compute instance that spans it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigInstanceFacts {
    /// `1g.10gb`, `3g.40gb`, ...: compute slices and memory, as nvidia-smi names them.
    pub profile: String,
    /// Placement: first memory slice and how many it spans.
    pub start: u8,
    pub size: u8,
    /// The compute instance's `MIG-…` UUID; `None` while it has no compute instance.
    pub uuid: Option<String>,
}

/// A source of device facts with NVML's semantics.
pub trait GpuLibrary: Send + Sync {
    /// How many devices the library can see (including ones the caller may not use).
    fn device_count(&self) -> Result<u32, GpuError>;
    /// One device; `index` must be below [`GpuLibrary::device_count`], else
    /// [`GpuError::InvalidIndex`] (NVML's `NVML_ERROR_INVALID_ARGUMENT`).
    fn device(&self, index: u32) -> Result<DeviceFacts, GpuError>;

    /// The GPU instances of a GPU in MIG mode, by start slice.
    fn mig_instances(&self, index: u32) -> Result<Vec<MigInstanceFacts>, GpuError> {
        Err(GpuError::mig(
            "nvmlDeviceGetGpuInstances",
            index,
            NOT_SUPPORTED,
        ))
    }

    /// Creates a GPU instance of `profile` at `start` and one compute instance over all
    /// of it (`nvmlDeviceCreateGpuInstanceWithPlacement`, then
    /// `nvmlGpuInstanceCreateComputeInstance`). NVML refuses a placement that overlaps
    /// an existing instance (`NVML_ERROR_INSUFFICIENT_RESOURCES`), one the profile does
    /// not allow (`NVML_ERROR_INVALID_ARGUMENT`) and any MIG call on a GPU not in MIG
    /// mode (`NVML_ERROR_NOT_SUPPORTED`).
    fn create_mig_instance(
        &self,
        index: u32,
        profile: &str,
        start: u8,
    ) -> Result<MigInstanceFacts, GpuError> {
        let _ = (profile, start);
        Err(GpuError::mig(
            "nvmlDeviceCreateGpuInstanceWithPlacement",
            index,
            NOT_SUPPORTED,
        ))
    }

    /// The node's cores (of `cores`, the ones the agent may use) nearest GPU `index`
    /// (`nvmlDeviceGetCpuAffinity`); empty where the library cannot tell (the default).
    fn cpu_affinity(&self, index: u32, cores: &[u32]) -> Result<Vec<u32>, GpuError> {
        let _ = (index, cores);
        Ok(Vec::new())
    }

    /// How GPUs `a` and `b` are linked (see [`topology`]); `None` where the library
    /// cannot tell (the default, and NVML without topology support).
    fn link(&self, a: u32, b: u32) -> Result<Option<LinkKind>, GpuError> {
        let _ = (a, b);
        Ok(None)
    }

    /// One telemetry pass: every reading of each GPU of `indices`, and the Xid events
    /// since the last pass. `busy` are the GPUs jobs hold now: only a simulated device
    /// uses it (a real one measures its load). Never fails: a reading the GPU does not
    /// support is `None`, a GPU NVML no longer sees is `lost`, any other failure is
    /// logged and its reading is `None`. The default: a library without telemetry.
    fn sample(
        &self,
        indices: &[u32],
        busy: &std::collections::BTreeSet<u32>,
        at_ms: u64,
    ) -> Vec<GpuReading> {
        let _ = (indices, busy, at_ms);
        Vec::new()
    }

    /// The power limits GPU `index` accepts, milliwatts, as (min, max)
    /// (`nvmlDeviceGetPowerManagementLimitConstraints`); `NVML_ERROR_NOT_SUPPORTED`
    /// where the GPU has no power management (the default).
    fn power_limit_constraints(&self, index: u32) -> Result<(u32, u32), GpuError> {
        Err(GpuError::mig(
            "nvmlDeviceGetPowerManagementLimitConstraints",
            index,
            NOT_SUPPORTED,
        ))
    }

    /// GPU `index`'s power limit now, milliwatts (`nvmlDeviceGetPowerManagementLimit`):
    /// the most the GPU draws before it lowers its clocks.
    fn power_limit(&self, index: u32) -> Result<u32, GpuError> {
        Err(GpuError::mig(
            "nvmlDeviceGetPowerManagementLimit",
            index,
            NOT_SUPPORTED,
        ))
    }

    /// Sets GPU `index`'s power limit, milliwatts (`nvmlDeviceSetPowerManagementLimit`):
    /// needs root (`NVML_ERROR_NO_PERMISSION`), a limit outside
    /// [`GpuLibrary::power_limit_constraints`] is `NVML_ERROR_INVALID_ARGUMENT`, and the
    /// limit lasts until the driver unloads (persistence mode keeps it loaded).
    fn set_power_limit(&self, index: u32, limit_mw: u32) -> Result<(), GpuError> {
        let _ = limit_mw;
        Err(GpuError::mig(
            "nvmlDeviceSetPowerManagementLimit",
            index,
            NOT_SUPPORTED,
        ))
    }

    /// Destroys the instance starting at `start`: its compute instances, then the GPU
    /// instance (`NVML_ERROR_NOT_FOUND` if there is none there).
    fn destroy_mig_instance(&self, index: u32, start: u8) -> Result<(), GpuError> {
        let _ = start;
        Err(GpuError::mig(
            "nvmlGpuInstanceDestroy",
            index,
            NOT_SUPPORTED,
        ))
    }
}

/// NVML's names for the errors MIG and power calls return.
pub const NOT_SUPPORTED: &str = "NVML_ERROR_NOT_SUPPORTED";
pub const INVALID_ARGUMENT: &str = "NVML_ERROR_INVALID_ARGUMENT";
pub const INSUFFICIENT_RESOURCES: &str = "NVML_ERROR_INSUFFICIENT_RESOURCES";
pub const NOT_FOUND: &str = "NVML_ERROR_NOT_FOUND";
pub const NO_PERMISSION: &str = "NVML_ERROR_NO_PERMISSION";

/// The library the node's GPUs came from, kept for MIG changes (none for declared GPUs).
#[derive(Clone, Default)]
pub struct GpuControl(pub Option<std::sync::Arc<dyn GpuLibrary>>);

impl std::fmt::Debug for GpuControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "GpuControl(library)"
        } else {
            "GpuControl(none)"
        })
    }
}

impl PartialEq for GpuControl {
    fn eq(&self, other: &Self) -> bool {
        self.0.is_some() == other.0.is_some()
    }
}

impl Eq for GpuControl {}

impl GpuControl {
    /// How the node's GPUs are linked, every pair the library knows; empty for
    /// declared GPUs.
    pub fn links(&self, gpus: &[GpuInfo]) -> Vec<GpuLink> {
        match &self.0 {
            Some(lib) => topology::links(lib.as_ref(), gpus),
            None => Vec::new(),
        }
    }

    /// Each GPU's device minor number (`/dev/nvidiaN`), where the library says.
    pub fn minors(&self, gpus: &[GpuInfo]) -> Vec<(u32, u32)> {
        self.facts(gpus)
            .into_iter()
            .filter_map(|f| Some((f.index, f.minor_number?)))
            .collect()
    }

    /// Each GPU's nearby cores among `cores` (empty for declared GPUs, or where the
    /// library cannot tell).
    pub fn affinity(&self, gpus: &[GpuInfo], cores: &[u32]) -> BTreeMap<u32, Vec<u32>> {
        let Some(lib) = &self.0 else {
            return BTreeMap::new();
        };
        gpus.iter()
            .filter_map(|g| match lib.cpu_affinity(g.index, cores) {
                Ok(near) if !near.is_empty() => Some((g.index, near)),
                Ok(_) => None,
                Err(e) => {
                    tracing::warn!(gpu = g.index, "cannot read the GPU's CPU affinity: {e}");
                    None
                }
            })
            .collect()
    }

    /// One telemetry pass over the node's GPUs (none for declared GPUs).
    pub fn sample(
        &self,
        gpus: &[GpuInfo],
        busy: &std::collections::BTreeSet<u32>,
        at_ms: u64,
    ) -> Vec<GpuReading> {
        let Some(lib) = &self.0 else {
            return Vec::new();
        };
        let indices: Vec<u32> = gpus.iter().map(|g| g.index).collect();
        lib.sample(&indices, busy, at_ms)
    }

    /// What NVML says of each GPU (name, UUID, bus id), for labelling its metrics;
    /// GPUs it cannot read are left out.
    pub fn facts(&self, gpus: &[GpuInfo]) -> Vec<DeviceFacts> {
        let Some(lib) = &self.0 else {
            return Vec::new();
        };
        gpus.iter()
            .filter_map(|g| lib.device(g.index).ok())
            .collect()
    }

    /// `gpus` with each MIG GPU's instance list read again (instances change as jobs
    /// come and go on a node with dynamic MIG).
    pub fn refresh(&self, gpus: &[GpuInfo]) -> Vec<GpuInfo> {
        let mut out = gpus.to_vec();
        let Some(lib) = &self.0 else {
            return out;
        };
        for g in &mut out {
            if let Some(m) = &mut g.mig {
                match lib.mig_instances(g.index) {
                    Ok(list) => m.instances = list.into_iter().map(instance_info).collect(),
                    Err(e) => tracing::warn!(gpu = g.index, "cannot list MIG instances: {e}"),
                }
            }
        }
        out
    }
}

fn instance_info(i: MigInstanceFacts) -> MigInstanceInfo {
    MigInstanceInfo {
        profile: i.profile,
        start: i.start,
        size: i.size,
        uuid: i.uuid,
    }
}

/// The model users match against: NVML's name without the vendor prefix, so
/// `NVIDIA A100-SXM4-80GB` becomes `A100-SXM4-80GB` and a request for `A100` matches it
/// by prefix. Older names without the prefix (`Tesla V100-SXM2-16GB`) are kept whole.
pub fn model_name(nvml_name: &str) -> String {
    let name = nvml_name.trim();
    name.strip_prefix("NVIDIA ")
        .unwrap_or(name)
        .trim_start()
        .to_string()
}

/// Reads every device of `lib` in index order.
pub fn gpus_from_library(
    lib: &dyn GpuLibrary,
    source: GpuSource,
) -> Result<Vec<GpuInfo>, GpuError> {
    let count = lib.device_count()?;
    (0..count)
        .map(|index| {
            let facts = lib.device(index)?;
            // A GPU in MIG mode lists its instances; dynamic re-layout is the node's
            // choice, set by discovery.
            let mig = match facts.mig_mode_current {
                Some(true) => Some(MigInfo {
                    dynamic: false,
                    instances: lib
                        .mig_instances(index)?
                        .into_iter()
                        .map(instance_info)
                        .collect(),
                }),
                _ => None,
            };
            Ok(gpu_info(&facts, source, mig))
        })
        .collect()
}

fn gpu_info(facts: &DeviceFacts, source: GpuSource, mig: Option<MigInfo>) -> GpuInfo {
    const MIB: u64 = 1024 * 1024;
    GpuInfo {
        index: facts.index,
        uuid: Some(facts.uuid.clone()),
        model: model_name(&facts.name),
        mem_mib: facts.memory_total_bytes / MIB,
        source,
        mig,
    }
}

#[cfg(test)]
mod tests {
    use super::fake::FakeNvml;
    use super::*;

    #[test]
    fn model_name_strips_the_vendor_prefix() {
        assert_eq!(model_name("NVIDIA A100-SXM4-80GB"), "A100-SXM4-80GB");
        assert_eq!(model_name("NVIDIA H100 80GB HBM3"), "H100 80GB HBM3");
        assert_eq!(model_name("Tesla V100-SXM2-16GB"), "Tesla V100-SXM2-16GB");
        assert_eq!(model_name("  NVIDIA  L4 "), "L4");
        assert_eq!(model_name("NVIDIA"), "NVIDIA");
    }

    #[test]
    fn library_devices_become_gpu_infos_in_index_order() {
        let lib = FakeNvml::uniform(3, "NVIDIA A100-SXM4-80GB", 81920);
        let gpus = gpus_from_library(&lib, GpuSource::Fake).unwrap();
        assert_eq!(gpus.len(), 3);
        for (i, gpu) in gpus.iter().enumerate() {
            assert_eq!(gpu.index, i as u32);
            assert_eq!(gpu.model, "A100-SXM4-80GB");
            assert_eq!(gpu.mem_mib, 81920);
            assert_eq!(gpu.source, GpuSource::Fake);
            assert!(gpu.uuid.as_deref().unwrap().starts_with("GPU-"));
        }
    }
}
