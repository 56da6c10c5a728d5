//! The real [`GpuLibrary`]: NVIDIA's management library, loaded at run time so the agent
//! binary starts (and can run declared or GPU-less nodes) on hosts without a driver.

use std::ffi::OsStr;

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml;

use super::nvml_mig::NvmlMig;
use super::nvml_sample::NvmlSampler;
use super::topology::{link_of_level, TopologyLevel};
use super::{DeviceFacts, GpuError, GpuLibrary, GpuReading, MigInstanceFacts};
use gpusched_wire::LinkKind;

/// The names tried, in order. The driver installs the versioned `.so.1`; the bare `.so`
/// that `Nvml::init()` looks for comes only with development packages, so trying it
/// alone would miss NVML on most driver-only hosts.
const LIBRARY_NAMES: [&str; 2] = ["libnvidia-ml.so.1", "libnvidia-ml.so"];

pub struct NvmlLibrary {
    /// Kept for the life of the process: the Xid event sets borrow it, and the agent
    /// loads NVML once (the driver releases it when the process exits).
    nvml: &'static Nvml,
    /// MIG calls through the raw bindings; `None` where the driver lacks them.
    mig: Option<NvmlMig>,
    sampler: NvmlSampler,
}

impl NvmlLibrary {
    /// Loads and initialises NVML. A host without the library gets
    /// [`GpuError::LibraryNotFound`].
    pub fn init() -> Result<Self, GpuError> {
        let mut last_load_error = None;
        for name in LIBRARY_NAMES {
            match Nvml::builder().lib_path(OsStr::new(name)).init() {
                Ok(nvml) => {
                    let nvml: &'static Nvml = Box::leak(Box::new(nvml));
                    let mig = NvmlMig::load(OsStr::new(name));
                    let sampler = NvmlSampler::new(nvml, OsStr::new(name));
                    return Ok(NvmlLibrary { nvml, mig, sampler });
                }
                Err(NvmlError::LibloadingError(e)) => {
                    tracing::debug!("could not load {name}: {e}");
                    last_load_error = Some(e);
                }
                Err(e) => return Err(map_error("nvmlInit_v2", e)),
            }
        }
        tracing::debug!("NVML not loadable: {last_load_error:?}");
        Err(GpuError::LibraryNotFound)
    }
}

impl NvmlLibrary {
    /// Device `index`'s handle (the power calls' first step).
    fn handle(&self, index: u32) -> Result<nvml_wrapper::Device<'_>, GpuError> {
        self.nvml
            .device_by_index(index)
            .map_err(|e| map_error("nvmlDeviceGetHandleByIndex_v2", e))
    }

    fn mig_calls(&self, index: u32, call: &'static str) -> Result<&NvmlMig, GpuError> {
        self.mig
            .as_ref()
            .ok_or_else(|| GpuError::mig(call, index, super::NOT_SUPPORTED))
    }
}

impl NvmlLibrary {
    /// The PCI bus ids at the far end of GPU `index`'s active NVLinks (empty without
    /// NVLink).
    fn nvlink_remotes(&self, index: u32) -> Result<Vec<String>, GpuError> {
        let device = self
            .nvml
            .device_by_index(index)
            .map_err(|e| map_error("nvmlDeviceGetHandleByIndex_v2", e))?;
        let mut out = Vec::new();
        for link in 0..nvml_wrapper_sys::bindings::NVML_NVLINK_MAX_LINKS {
            let l = device.link_wrapper_for(link);
            match l.is_active() {
                Ok(true) => {}
                Ok(false) => continue,
                // No NVLink on this GPU, or no more links past this one.
                Err(NvmlError::NotSupported | NvmlError::InvalidArg) => break,
                Err(e) => return Err(map_error("nvmlDeviceGetNvLinkState", e)),
            }
            match l.remote_pci_info() {
                Ok(info) => out.push(info.bus_id),
                Err(NvmlError::NotSupported) => {}
                Err(e) => return Err(map_error("nvmlDeviceGetNvLinkRemotePciInfo_v2", e)),
            }
        }
        Ok(out)
    }
}

/// Bus ids compare without case (NVML writes hex digits in either).
fn same_bus(a: &str, b: &str) -> bool {
    a.trim_end_matches('\0')
        .eq_ignore_ascii_case(b.trim_end_matches('\0'))
}

fn level_of(level: nvml_wrapper::enum_wrappers::device::TopologyLevel) -> TopologyLevel {
    use nvml_wrapper::enum_wrappers::device::TopologyLevel as L;
    match level {
        L::Internal => TopologyLevel::Internal,
        L::Single => TopologyLevel::Single,
        L::Multiple => TopologyLevel::Multiple,
        L::HostBridge => TopologyLevel::HostBridge,
        L::Node => TopologyLevel::Node,
        L::System => TopologyLevel::System,
    }
}

impl GpuLibrary for NvmlLibrary {
    fn device_count(&self) -> Result<u32, GpuError> {
        self.nvml
            .device_count()
            .map_err(|e| map_error("nvmlDeviceGetCount_v2", e))
    }

    /// The ideal cores of the device: NVML's bitmask, one bit per CPU, in words of the
    /// platform's `unsigned long`.
    fn cpu_affinity(&self, index: u32, cores: &[u32]) -> Result<Vec<u32>, GpuError> {
        let device = self
            .nvml
            .device_by_index(index)
            .map_err(|e| map_error("nvmlDeviceGetHandleByIndex_v2", e))?;
        let highest = cores.iter().copied().max().unwrap_or(0) as usize;
        let bits = std::mem::size_of::<std::os::raw::c_ulong>() * 8;
        let words = device
            .cpu_affinity(highest / bits + 1)
            .map_err(|e| map_error("nvmlDeviceGetCpuAffinity", e))?;
        Ok(cores
            .iter()
            .copied()
            .filter(|&c| {
                let (w, b) = (c as usize / bits, c as usize % bits);
                words.get(w).is_some_and(|word| (word >> b) & 1 == 1)
            })
            .collect())
    }

    fn device(&self, index: u32) -> Result<DeviceFacts, GpuError> {
        let device = match self.nvml.device_by_index(index) {
            Ok(device) => device,
            Err(NvmlError::InvalidArg) => {
                return Err(GpuError::InvalidIndex {
                    index,
                    count: self.device_count()?,
                })
            }
            Err(e) => return Err(map_error("nvmlDeviceGetHandleByIndex_v2", e)),
        };
        Ok(DeviceFacts {
            index,
            name: device
                .name()
                .map_err(|e| map_error("nvmlDeviceGetName", e))?,
            uuid: device
                .uuid()
                .map_err(|e| map_error("nvmlDeviceGetUUID", e))?,
            memory_total_bytes: device
                .memory_info()
                .map_err(|e| map_error("nvmlDeviceGetMemoryInfo", e))?
                .total,
            pci_bus_id: device
                .pci_info()
                .map_err(|e| map_error("nvmlDeviceGetPciInfo", e))?
                .bus_id,
            mig_mode_current: match &self.mig {
                Some(m) => m.mig_mode(index)?,
                None => None,
            },
            minor_number: device.minor_number().ok(),
        })
    }

    fn mig_instances(&self, index: u32) -> Result<Vec<MigInstanceFacts>, GpuError> {
        self.mig_calls(index, "nvmlDeviceGetGpuInstances")?
            .instances(index)
    }

    fn link(&self, a: u32, b: u32) -> Result<Option<LinkKind>, GpuError> {
        let bus_b = self.device(b)?.pci_bus_id;
        let remotes_a = self.nvlink_remotes(a)?;
        if remotes_a.iter().any(|r| same_bus(r, &bus_b)) {
            return Ok(Some(LinkKind::NvLink));
        }
        if !remotes_a.is_empty() {
            let gpus: Vec<String> = (0..self.device_count()?)
                .map(|i| self.device(i).map(|d| d.pci_bus_id))
                .collect::<Result<_, _>>()?;
            let to_fabric =
                |remotes: &[String]| remotes.iter().any(|r| !gpus.iter().any(|g| same_bus(g, r)));
            if to_fabric(&remotes_a) && to_fabric(&self.nvlink_remotes(b)?) {
                return Ok(Some(LinkKind::NvSwitch));
            }
        }
        let handle = |i| {
            self.nvml
                .device_by_index(i)
                .map_err(|e| map_error("nvmlDeviceGetHandleByIndex_v2", e))
        };
        let (da, db) = (handle(a)?, handle(b)?);
        match da.topology_common_ancestor(db) {
            Ok(level) => Ok(Some(link_of_level(level_of(level)))),
            Err(NvmlError::NotSupported) => Ok(None),
            Err(e) => Err(map_error("nvmlDeviceGetTopologyCommonAncestor", e)),
        }
    }

    fn create_mig_instance(
        &self,
        index: u32,
        profile: &str,
        start: u8,
    ) -> Result<MigInstanceFacts, GpuError> {
        self.mig_calls(index, "nvmlDeviceCreateGpuInstanceWithPlacement")?
            .create(index, profile, start)
    }

    fn sample(
        &self,
        indices: &[u32],
        _busy: &std::collections::BTreeSet<u32>,
        at_ms: u64,
    ) -> Vec<GpuReading> {
        self.sampler.sample(indices, at_ms)
    }

    fn power_limit_constraints(&self, index: u32) -> Result<(u32, u32), GpuError> {
        const CALL: &str = "nvmlDeviceGetPowerManagementLimitConstraints";
        let c = self
            .handle(index)?
            .power_management_limit_constraints()
            .map_err(|e| power_error(CALL, index, e))?;
        Ok((c.min_limit, c.max_limit))
    }

    fn power_limit(&self, index: u32) -> Result<u32, GpuError> {
        const CALL: &str = "nvmlDeviceGetPowerManagementLimit";
        self.handle(index)?
            .power_management_limit()
            .map_err(|e| power_error(CALL, index, e))
    }

    fn set_power_limit(&self, index: u32, limit_mw: u32) -> Result<(), GpuError> {
        const CALL: &str = "nvmlDeviceSetPowerManagementLimit";
        // The wrapper takes the handle mutably for every setter.
        let mut device = self.handle(index)?;
        device
            .set_power_management_limit(limit_mw)
            .map_err(|e| power_error(CALL, index, e))
    }

    fn destroy_mig_instance(&self, index: u32, start: u8) -> Result<(), GpuError> {
        self.mig_calls(index, "nvmlGpuInstanceDestroy")?
            .destroy(index, start)
    }
}

/// A power call's failure in NVML's terms (its code and usual meaning).
fn power_error(call: &'static str, index: u32, e: NvmlError) -> GpuError {
    let code = match e {
        NvmlError::NotSupported => super::NOT_SUPPORTED,
        NvmlError::InvalidArg => super::INVALID_ARGUMENT,
        NvmlError::NoPermission => super::NO_PERMISSION,
        other => return map_error(call, other),
    };
    GpuError::mig(call, index, code)
}

fn map_error(call: &'static str, e: NvmlError) -> GpuError {
    match e {
        NvmlError::LibloadingError(_) | NvmlError::LibraryNotFound => GpuError::LibraryNotFound,
        NvmlError::DriverNotLoaded => GpuError::DriverNotLoaded,
        NvmlError::NoPermission => GpuError::NoPermission,
        NvmlError::Uninitialized => GpuError::NotInitialized,
        other => GpuError::Call {
            call,
            message: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which case a host hits depends on its driver; the wording is checked where the
    /// library is absent (the build machines), and a host with NVML must list devices.
    #[test]
    fn init_reports_absence_clearly_or_lists_devices() {
        match NvmlLibrary::init() {
            Ok(lib) => {
                let count = lib.device_count().unwrap();
                for index in 0..count {
                    let facts = lib.device(index).unwrap();
                    assert!(facts.uuid.starts_with("GPU-"), "{facts:?}");
                }
                assert!(matches!(
                    lib.device(count),
                    Err(GpuError::InvalidIndex { .. })
                ));
                // A telemetry pass reads every GPU; a live GPU has a temperature and
                // memory, and the energy counter does not go back.
                let all: Vec<u32> = (0..count).collect();
                let none = std::collections::BTreeSet::new();
                let first = lib.sample(&all, &none, 1);
                std::thread::sleep(std::time::Duration::from_millis(200));
                let second = lib.sample(&all, &none, 2);
                for (a, b) in first.iter().zip(&second) {
                    eprintln!("GPU {}: {b:?}", b.index);
                    assert!(!b.lost, "{b:?}");
                    assert!(b.temp_c.is_some() && b.mem_used_mib.is_some(), "{b:?}");
                    if let (Some(x), Some(y)) = (a.energy_mj, b.energy_mj) {
                        assert!(y >= x, "energy went back: {x} -> {y}");
                    }
                }
                // The topology calls answer for every GPU and pair (a kind, or None
                // where the driver has no topology support).
                for index in 0..count {
                    let remotes = lib.nvlink_remotes(index).unwrap();
                    eprintln!("GPU {index}: NVLink peers {remotes:?}");
                    for other in index + 1..count {
                        let kind = lib.link(index, other).unwrap();
                        eprintln!("GPUs {index},{other}: {kind:?}");
                    }
                }
            }
            Err(GpuError::LibraryNotFound) => {
                let text = GpuError::LibraryNotFound.to_string();
                assert!(text.contains("libnvidia-ml.so.1"), "{text}");
                assert!(text.contains("no NVIDIA driver"), "{text}");
            }
            // A library without a working driver is a host problem, not a code one.
            Err(other) => eprintln!("NVML present but unusable here: {other}"),
        }
    }

    #[test]
    fn topology_levels_map_to_links_best_first() {
        use nvml_wrapper::enum_wrappers::device::TopologyLevel as L;
        let kinds: Vec<LinkKind> = [
            L::Internal,
            L::Single,
            L::Multiple,
            L::HostBridge,
            L::Node,
            L::System,
        ]
        .into_iter()
        .map(|l| link_of_level(level_of(l)))
        .collect();
        assert_eq!(
            kinds,
            [
                LinkKind::PcieSwitch,
                LinkKind::PcieSwitch,
                LinkKind::PcieMulti,
                LinkKind::HostBridge,
                LinkKind::Numa,
                LinkKind::System
            ]
        );
        assert!(kinds.windows(2).all(|w| w[0] <= w[1]));
        assert!(same_bus("00000000:07:00.0", "00000000:07:00.0\0"));
        assert!(same_bus("0000000A:07:00.0", "0000000a:07:00.0"));
        assert!(!same_bus("00000000:07:00.0", "00000000:08:00.0"));
    }

    #[test]
    fn nvml_errors_map_to_operator_errors() {
        assert_eq!(
            map_error("x", NvmlError::DriverNotLoaded),
            GpuError::DriverNotLoaded
        );
        assert_eq!(
            map_error("x", NvmlError::NoPermission),
            GpuError::NoPermission
        );
        assert_eq!(
            map_error("nvmlDeviceGetName", NvmlError::GpuLost),
            GpuError::Call {
                call: "nvmlDeviceGetName",
                message: NvmlError::GpuLost.to_string()
            }
        );
    }
}
