//! GPU discovery. The agent asks a [`GpuLibrary`] (NVIDIA's management library, or the
//! [`fake::FakeNvml`] test double) what devices the host has, or takes GPUs the operator
//! declared by hand on hosts without NVML, and turns them into the wire's [`GpuInfo`].
//!
//! The trait sits at NVML's own level (count, then one device by index) so a later MIG
//! extension is additive: a `gpu_instances(index)` method next to [`GpuLibrary::device`],
//! fed by [`DeviceFacts::mig_mode_current`].

mod discover;
mod error;
pub mod fake;
pub mod nvml;

pub use discover::{discover, discover_with, Discovery, GpuBackend, GpuOptions};
pub use error::GpuError;

use gpusched_wire::{GpuInfo, GpuSource};

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
}

/// A source of device facts with NVML's semantics.
pub trait GpuLibrary: Send + Sync {
    /// How many devices the library can see (including ones the caller may not use).
    fn device_count(&self) -> Result<u32, GpuError>;
    /// One device; `index` must be below [`GpuLibrary::device_count`], else
    /// [`GpuError::InvalidIndex`] (NVML's `NVML_ERROR_INVALID_ARGUMENT`).
    fn device(&self, index: u32) -> Result<DeviceFacts, GpuError>;
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
        .map(|index| lib.device(index).map(|facts| gpu_info(&facts, source)))
        .collect()
}

fn gpu_info(facts: &DeviceFacts, source: GpuSource) -> GpuInfo {
    const MIB: u64 = 1024 * 1024;
    GpuInfo {
        index: facts.index,
        uuid: Some(facts.uuid.clone()),
        model: model_name(&facts.name),
        mem_mib: facts.memory_total_bytes / MIB,
        source,
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
