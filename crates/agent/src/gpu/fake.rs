//! `FakeNvml`: a [`GpuLibrary`] that behaves as NVIDIA documents NVML, for tests and for
//! trying the scheduler on machines without GPUs.
//!
//! What it reproduces: indices are dense from 0 in PCI bus order, so bus ids increase
//! with the index; UUIDs have NVML's `GPU-` + 8-4-4-4-12 hex form and never change
//! between runs; asking for an index at or past the count is `NVML_ERROR_INVALID_ARGUMENT`;
//! and it can be put in a failure mode where every call fails the way an uninitialised
//! library or a host without a loaded driver does.

use super::{DeviceFacts, GpuError, GpuLibrary};

/// One device to fake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeDevice {
    /// As NVML would return it, e.g. `NVIDIA A100-SXM4-80GB`.
    pub name: String,
    pub memory_mib: u64,
    pub mig_mode_current: Option<bool>,
}

/// The failures NVML reports for every call when it cannot talk to the driver.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FakeFailure {
    /// `NVML_ERROR_UNINITIALIZED`.
    NotInitialized,
    /// `NVML_ERROR_DRIVER_NOT_LOADED`.
    DriverNotLoaded,
}

#[derive(Clone, Debug)]
pub struct FakeNvml {
    devices: Vec<FakeDevice>,
    failure: Option<FakeFailure>,
    uuid_salt: u32,
}

impl FakeNvml {
    pub fn new(devices: Vec<FakeDevice>) -> Self {
        FakeNvml {
            devices,
            failure: None,
            uuid_salt: 0,
        }
    }

    /// `count` identical devices that do not report a MIG mode (like GPUs without MIG).
    pub fn uniform(count: u32, name: &str, memory_mib: u64) -> Self {
        let device = FakeDevice {
            name: name.to_string(),
            memory_mib,
            mig_mode_current: None,
        };
        FakeNvml::new(vec![device; count as usize])
    }

    /// A library whose every call fails with `failure`.
    pub fn failing(failure: FakeFailure) -> Self {
        FakeNvml {
            devices: Vec::new(),
            failure: Some(failure),
            uuid_salt: 0,
        }
    }

    /// Real UUIDs are unique across machines; several fake nodes in one test cluster
    /// can be kept apart by giving each its own salt.
    pub fn with_uuid_salt(mut self, salt: u32) -> Self {
        self.uuid_salt = salt;
        self
    }

    fn check(&self) -> Result<(), GpuError> {
        match self.failure {
            None => Ok(()),
            Some(FakeFailure::NotInitialized) => Err(GpuError::NotInitialized),
            Some(FakeFailure::DriverNotLoaded) => Err(GpuError::DriverNotLoaded),
        }
    }

    fn count(&self) -> u32 {
        // More than u32::MAX devices cannot be built in memory, so saturating is exact.
        u32::try_from(self.devices.len()).unwrap_or(u32::MAX)
    }
}

impl GpuLibrary for FakeNvml {
    fn device_count(&self) -> Result<u32, GpuError> {
        self.check()?;
        Ok(self.count())
    }

    fn device(&self, index: u32) -> Result<DeviceFacts, GpuError> {
        self.check()?;
        let device = self
            .devices
            .get(index as usize)
            .ok_or(GpuError::InvalidIndex {
                index,
                count: self.count(),
            })?;
        Ok(DeviceFacts {
            index,
            name: device.name.clone(),
            uuid: fake_uuid(self.uuid_salt, index),
            memory_total_bytes: device.memory_mib * 1024 * 1024,
            pci_bus_id: fake_pci_bus_id(index),
            mig_mode_current: device.mig_mode_current,
        })
    }
}

/// `GPU-` and a version-4-shaped UUID built from the salt and index, so it is stable
/// and unique per (salt, index).
fn fake_uuid(salt: u32, index: u32) -> String {
    format!("GPU-{salt:08x}-fa4e-4000-8000-{index:012x}")
}

/// NVML's `domain:bus:device.function` form; the bus counts up with the index and
/// carries into the domain past 255, so ids sort in index order.
fn fake_pci_bus_id(index: u32) -> String {
    let domain = index / 256;
    let bus = index % 256;
    format!("{domain:08X}:{bus:02X}:00.0")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_hex(s: &str) -> bool {
        s.chars().all(|c| c.is_ascii_hexdigit())
    }

    fn well_formed_uuid(uuid: &str) -> bool {
        let Some(rest) = uuid.strip_prefix("GPU-") else {
            return false;
        };
        let groups: Vec<&str> = rest.split('-').collect();
        let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
        lengths == [8, 4, 4, 4, 12] && groups.iter().all(|g| is_hex(g))
    }

    #[test]
    fn uniform_devices_follow_nvml_shapes() {
        let nvml = FakeNvml::uniform(4, "NVIDIA A100-SXM4-80GB", 81920);
        assert_eq!(nvml.device_count(), Ok(4));
        let devices: Vec<DeviceFacts> = (0..4).map(|i| nvml.device(i).unwrap()).collect();
        for (i, d) in devices.iter().enumerate() {
            assert_eq!(d.index, i as u32);
            assert_eq!(d.name, "NVIDIA A100-SXM4-80GB");
            assert_eq!(d.memory_total_bytes, 81920 * 1024 * 1024);
            assert!(well_formed_uuid(&d.uuid), "{}", d.uuid);
        }
        let uuids: std::collections::BTreeSet<&str> =
            devices.iter().map(|d| d.uuid.as_str()).collect();
        assert_eq!(uuids.len(), 4, "UUIDs are unique");
        let buses: Vec<&str> = devices.iter().map(|d| d.pci_bus_id.as_str()).collect();
        assert!(buses.windows(2).all(|w| w[0] < w[1]), "{buses:?}");
    }

    #[test]
    fn uuids_are_deterministic_and_salted() {
        let a = FakeNvml::uniform(2, "NVIDIA L4", 23034);
        let b = FakeNvml::uniform(2, "NVIDIA L4", 23034);
        assert_eq!(a.device(1).unwrap().uuid, b.device(1).unwrap().uuid);
        let c = b.with_uuid_salt(7);
        let salted = c.device(1).unwrap().uuid;
        assert_ne!(a.device(1).unwrap().uuid, salted);
        assert!(well_formed_uuid(&salted));
    }

    #[test]
    fn bus_ids_keep_increasing_past_256_devices() {
        assert!(fake_pci_bus_id(255) < fake_pci_bus_id(256));
        assert_eq!(fake_pci_bus_id(0), "00000000:00:00.0");
        assert_eq!(fake_pci_bus_id(257), "00000001:01:00.0");
    }

    #[test]
    fn index_past_the_count_is_invalid_argument() {
        let nvml = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920);
        assert_eq!(
            nvml.device(2),
            Err(GpuError::InvalidIndex { index: 2, count: 2 })
        );
        assert!(nvml
            .device(2)
            .unwrap_err()
            .to_string()
            .contains("INVALID_ARGUMENT"));
    }

    #[test]
    fn mixed_devices_keep_their_own_facts() {
        let nvml = FakeNvml::new(vec![
            FakeDevice {
                name: "NVIDIA H100 80GB HBM3".into(),
                memory_mib: 81559,
                mig_mode_current: Some(false),
            },
            FakeDevice {
                name: "NVIDIA L4".into(),
                memory_mib: 23034,
                mig_mode_current: None,
            },
        ]);
        assert_eq!(nvml.device(0).unwrap().mig_mode_current, Some(false));
        assert_eq!(nvml.device(1).unwrap().name, "NVIDIA L4");
    }

    #[test]
    fn failure_modes_fail_every_call() {
        let nvml = FakeNvml::failing(FakeFailure::NotInitialized);
        assert_eq!(nvml.device_count(), Err(GpuError::NotInitialized));
        assert_eq!(nvml.device(0), Err(GpuError::NotInitialized));
        let nvml = FakeNvml::failing(FakeFailure::DriverNotLoaded);
        assert_eq!(nvml.device_count(), Err(GpuError::DriverNotLoaded));
    }
}
