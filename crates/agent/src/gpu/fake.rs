//! `FakeNvml`: a [`GpuLibrary`] that behaves as NVIDIA documents NVML, for tests and for
//! trying the scheduler on machines without GPUs.
//!
//! What it reproduces: indices are dense from 0 in PCI bus order, so bus ids increase
//! with the index; UUIDs have NVML's `GPU-` + 8-4-4-4-12 hex form and never change
//! between runs; asking for an index at or past the count is `NVML_ERROR_INVALID_ARGUMENT`;
//! and it can be put in a failure mode where every call fails the way an uninitialised
//! library or a host without a loaded driver does.
//!
//! MIG: a device in MIG mode keeps a list of GPU instances. Creating one follows the
//! model's profile table and placements from NVIDIA's MIG user guide (the same tables
//! the scheduler's core uses): a profile the model lacks or a start the profile does not
//! allow is `NVML_ERROR_INVALID_ARGUMENT`, an overlap with an existing instance is
//! `NVML_ERROR_INSUFFICIENT_RESOURCES`, any MIG call on a device not in MIG mode is
//! `NVML_ERROR_NOT_SUPPORTED`, and destroying where there is no instance is
//! `NVML_ERROR_NOT_FOUND`. Instance UUIDs have the `MIG-` + 8-4-4-4-12 form.
//!
//! Telemetry: plausible readings from a load model, and faults injected through a file
//! (see [`super::fake_telemetry`]).
//!
//! Power limits: a GPU accepts limits from a quarter of its board power to the board
//! power (milliwatts; outside is `NVML_ERROR_INVALID_ARGUMENT`), starts at the board
//! power, and a capped GPU draws at most its limit, so its energy counter grows slower;
//! [`FakeNvml::speed`] is the model of what the cap costs a job (docs/power.md).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use gpusched_wire::LinkKind;

use super::fake_telemetry::{SimDevice, SimState};
use super::{
    DeviceFacts, GpuError, GpuLibrary, GpuReading, MigInstanceFacts, INSUFFICIENT_RESOURCES,
    INVALID_ARGUMENT, NOT_FOUND, NOT_SUPPORTED,
};

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

/// How the fake GPUs are linked (`--fake-topology`), after two common machines.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FakeTopology {
    /// A DGX/HGX-like board: every GPU on one NVSwitch fabric.
    Dgx,
    /// A PCIe-only box of two sockets: per socket 4 GPUs, in pairs under two PCIe
    /// switches that share an upper switch (pairs (0,1), (2,3) PIX; (0,2) etc. PXB);
    /// GPUs 4-7 likewise on socket 1; across sockets SYS.
    Pcie,
}

impl FakeTopology {
    /// NVML's answer for GPUs `a` and `b` of this machine.
    fn link(self, a: u32, b: u32) -> LinkKind {
        match self {
            FakeTopology::Dgx => LinkKind::NvSwitch,
            FakeTopology::Pcie => {
                if a / 4 != b / 4 {
                    LinkKind::System
                } else if a / 2 == b / 2 {
                    LinkKind::PcieSwitch
                } else {
                    LinkKind::PcieMulti
                }
            }
        }
    }
}

impl std::str::FromStr for FakeTopology {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "dgx" => Ok(FakeTopology::Dgx),
            "pcie" => Ok(FakeTopology::Pcie),
            other => Err(format!(
                "unknown fake topology {other:?}: write dgx (every GPU on NVSwitch) or pcie \
                 (PCIe switches, two sockets)"
            )),
        }
    }
}

#[derive(Clone, Debug)]
pub struct FakeNvml {
    devices: Vec<FakeDevice>,
    failure: Option<FakeFailure>,
    uuid_salt: u32,
    topology: Option<FakeTopology>,
    /// Device index → its GPU instances (devices in MIG mode only); shared by clones.
    mig: Arc<Mutex<MigState>>,
    /// The simulated load, temperature and energy; shared by clones.
    sim: Arc<Mutex<SimState>>,
    /// The fault file read at every telemetry pass (`fake-faults.toml`).
    faults: Option<PathBuf>,
    /// Whether setting a power limit is refused as for a caller without root
    /// (`NVML_ERROR_NO_PERMISSION`); off by default, so tests need not run as root.
    power_refused: bool,
}

#[derive(Debug, Default)]
struct MigState {
    instances: BTreeMap<u32, Vec<MigInstanceFacts>>,
    /// Instances created so far: keeps every UUID new.
    created: u64,
}

impl FakeNvml {
    pub fn new(devices: Vec<FakeDevice>) -> Self {
        FakeNvml {
            devices,
            failure: None,
            uuid_salt: 0,
            topology: None,
            mig: Arc::default(),
            sim: Arc::default(),
            faults: None,
            power_refused: false,
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
            topology: None,
            mig: Arc::default(),
            sim: Arc::default(),
            faults: None,
            power_refused: false,
        }
    }

    /// Reads injected faults from `path` at every telemetry pass (see
    /// [`super::fake_telemetry`] for the format).
    pub fn with_faults_file(mut self, path: PathBuf) -> Self {
        self.faults = Some(path);
        self
    }

    /// Refuses power limits as NVML does for a caller who is not root.
    pub fn refusing_power_limits(mut self) -> Self {
        self.power_refused = true;
        self
    }

    /// How fast a job runs on GPU `index` at its power limit now, relative to
    /// uncapped ([`gpusched_core::power::capped_speed`]: a model, not a measurement).
    /// The fake's jobs are real processes that run as fast as the host lets them; this
    /// is what a test (or the simulator) reads as the cap's cost.
    pub fn speed(&self, index: u32) -> Result<f64, GpuError> {
        let (_, max) = self.power_limit_constraints(index)?;
        let limit = self.power_limit(index)?;
        Ok(gpusched_core::power::capped_speed(limit / 1000, max / 1000))
    }

    /// Real UUIDs are unique across machines; several fake nodes in one test cluster
    /// can be kept apart by giving each its own salt.
    pub fn with_uuid_salt(mut self, salt: u32) -> Self {
        self.uuid_salt = salt;
        self
    }

    /// Links the devices as `topology` does; without it the library cannot tell how
    /// they are linked (as NVML on a host without topology support).
    pub fn with_topology(mut self, topology: FakeTopology) -> Self {
        self.topology = Some(topology);
        self
    }

    /// Puts devices in MIG mode with a starting layout, from a spec such as
    /// `0:3g.40gb@0+3g.40gb@4,1`: GPU 0 with two 3g.40gb instances (at slices 0 and 4),
    /// GPU 1 in MIG mode with no instance. Instances are created as NVML would create
    /// them, so a layout NVML would refuse is refused here with NVML's error.
    pub fn with_mig_spec(mut self, spec: &str) -> Result<Self, GpuError> {
        let bad = |why: String| GpuError::Call {
            call: "--fake-mig",
            message: format!(
                "{why}; write GPU[:PROFILE@START+PROFILE@START...],... e.g. 0:3g.40gb@0+1g.10gb@4,1"
            ),
        };
        let mut layouts = Vec::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (gpu, layout) = part.split_once(':').unwrap_or((part, ""));
            let index: u32 = gpu
                .trim()
                .parse()
                .map_err(|_| bad(format!("{gpu:?} is not a GPU index")))?;
            let device = self
                .devices
                .get_mut(index as usize)
                .ok_or_else(|| bad(format!("there is no fake GPU {index}")))?;
            device.mig_mode_current = Some(true);
            layouts.push((index, layout.to_string()));
        }
        for (index, layout) in layouts {
            self.mig
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .instances
                .entry(index)
                .or_default();
            for inst in layout.split('+').map(str::trim).filter(|p| !p.is_empty()) {
                let (profile, start) = inst
                    .split_once('@')
                    .ok_or_else(|| bad(format!("{inst:?} lacks @START")))?;
                let start: u8 = start
                    .parse()
                    .map_err(|_| bad(format!("{start:?} is not a start slice")))?;
                self.create_mig_instance(index, profile, start)?;
            }
        }
        Ok(self)
    }

    /// Device `index`, as NVML answers for a handle (failure mode, then the index).
    fn fake_device(&self, index: u32) -> Result<&FakeDevice, GpuError> {
        self.check()?;
        self.devices
            .get(index as usize)
            .ok_or(GpuError::InvalidIndex {
                index,
                count: self.count(),
            })
    }

    fn mig_device(&self, index: u32, call: &'static str) -> Result<&FakeDevice, GpuError> {
        let device = self.fake_device(index)?;
        if device.mig_mode_current != Some(true) {
            return Err(GpuError::mig(call, index, NOT_SUPPORTED));
        }
        Ok(device)
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

    /// A two-socket server's wiring: the first half of the GPUs near the first half of
    /// the cores, the rest near the rest.
    fn cpu_affinity(&self, index: u32, cores: &[u32]) -> Result<Vec<u32>, GpuError> {
        self.fake_device(index)?;
        let gpus: Vec<u32> = (0..self.count()).collect();
        Ok(crate::cgroup::cores::two_socket_model(&gpus, cores)
            .remove(&index)
            .unwrap_or_default())
    }

    fn device(&self, index: u32) -> Result<DeviceFacts, GpuError> {
        let device = self.fake_device(index)?;
        Ok(DeviceFacts {
            index,
            name: device.name.clone(),
            uuid: fake_uuid(self.uuid_salt, index),
            memory_total_bytes: device.memory_mib * 1024 * 1024,
            pci_bus_id: fake_pci_bus_id(index),
            mig_mode_current: device.mig_mode_current,
            minor_number: Some(index),
        })
    }

    fn link(&self, a: u32, b: u32) -> Result<Option<LinkKind>, GpuError> {
        self.fake_device(a)?;
        self.fake_device(b)?;
        Ok(self.topology.map(|t| t.link(a.min(b), a.max(b))))
    }

    fn mig_instances(&self, index: u32) -> Result<Vec<MigInstanceFacts>, GpuError> {
        self.mig_device(index, "nvmlDeviceGetGpuInstances")?;
        let state = self.mig.lock().unwrap_or_else(|p| p.into_inner());
        Ok(state.instances.get(&index).cloned().unwrap_or_default())
    }

    fn create_mig_instance(
        &self,
        index: u32,
        profile: &str,
        start: u8,
    ) -> Result<MigInstanceFacts, GpuError> {
        const CALL: &str = "nvmlDeviceCreateGpuInstanceWithPlacement";
        let device = self.mig_device(index, CALL)?;
        let p = gpusched_core::resources::mig_profile_for(&device.name, profile)
            .map_err(|_| GpuError::mig(CALL, index, INVALID_ARGUMENT))?;
        if !p.starts.contains(&start) {
            return Err(GpuError::mig(CALL, index, INVALID_ARGUMENT));
        }
        let mut state = self.mig.lock().unwrap_or_else(|p| p.into_inner());
        state.created += 1;
        let n = state.created;
        let list = state.instances.entry(index).or_default();
        let want = gpusched_core::slices::span_mask(start, p.memory_slices);
        if list
            .iter()
            .any(|i| gpusched_core::slices::span_mask(i.start, i.size) & want != 0)
        {
            return Err(GpuError::mig(CALL, index, INSUFFICIENT_RESOURCES));
        }
        let made = MigInstanceFacts {
            profile: p.name,
            start,
            size: p.memory_slices,
            uuid: Some(fake_mig_uuid(self.uuid_salt, index, n)),
        };
        list.push(made.clone());
        list.sort_by_key(|i| i.start);
        Ok(made)
    }

    fn sample(
        &self,
        indices: &[u32],
        busy: &std::collections::BTreeSet<u32>,
        at_ms: u64,
    ) -> Vec<GpuReading> {
        if self.check().is_err() {
            return Vec::new();
        }
        let devices: Vec<SimDevice<'_>> = indices
            .iter()
            .filter_map(|&index| {
                self.devices.get(index as usize).map(|d| SimDevice {
                    index,
                    name: &d.name,
                    memory_mib: d.memory_mib,
                })
            })
            .collect();
        let mut sim = self.sim.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(path) = &self.faults {
            sim.load_faults(path);
        }
        sim.sample(self.uuid_salt, &devices, busy, at_ms)
    }

    /// A quarter of the board power to the board power, as NVIDIA's data-centre GPUs
    /// allow (an A100 SXM4: 100 W to 400 W).
    fn power_limit_constraints(&self, index: u32) -> Result<(u32, u32), GpuError> {
        let device = self.fake_device(index)?;
        let board = super::fake_telemetry::board_power_w(&device.name) * 1000;
        Ok((board / 4, board))
    }

    /// The limit last set, else the default: the board power.
    fn power_limit(&self, index: u32) -> Result<u32, GpuError> {
        let (_, max) = self.power_limit_constraints(index)?;
        let sim = self.sim.lock().unwrap_or_else(|p| p.into_inner());
        Ok(sim.cap_mw(index).unwrap_or(max))
    }

    fn set_power_limit(&self, index: u32, limit_mw: u32) -> Result<(), GpuError> {
        const CALL: &str = "nvmlDeviceSetPowerManagementLimit";
        let (min, max) = self.power_limit_constraints(index)?;
        if self.power_refused {
            return Err(GpuError::mig(CALL, index, super::NO_PERMISSION));
        }
        if !(min..=max).contains(&limit_mw) {
            return Err(GpuError::mig(CALL, index, INVALID_ARGUMENT));
        }
        let mut sim = self.sim.lock().unwrap_or_else(|p| p.into_inner());
        sim.set_cap_mw(index, (limit_mw < max).then_some(limit_mw));
        Ok(())
    }

    fn destroy_mig_instance(&self, index: u32, start: u8) -> Result<(), GpuError> {
        const CALL: &str = "nvmlGpuInstanceDestroy";
        self.mig_device(index, CALL)?;
        let mut state = self.mig.lock().unwrap_or_else(|p| p.into_inner());
        let list = state.instances.entry(index).or_default();
        let before = list.len();
        list.retain(|i| i.start != start);
        if list.len() == before {
            return Err(GpuError::mig(CALL, index, NOT_FOUND));
        }
        Ok(())
    }
}

/// `MIG-` and a UUID built from the salt, device and creation count.
fn fake_mig_uuid(salt: u32, index: u32, n: u64) -> String {
    format!("MIG-{salt:08x}-{index:04x}-4000-8000-{n:012x}")
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
    fn mig_follows_nvidias_profiles_placements_and_error_codes() {
        let nvml = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920)
            .with_mig_spec("0:3g.40gb@4,1")
            .unwrap();
        assert_eq!(nvml.device(0).unwrap().mig_mode_current, Some(true));
        let first = nvml.mig_instances(0).unwrap();
        assert_eq!(
            (first[0].profile.as_str(), first[0].start, first[0].size),
            ("3g.40gb", 4, 4)
        );
        assert!(first[0].uuid.as_deref().unwrap().starts_with("MIG-"));
        let code = |e: GpuError| match e {
            GpuError::Mig { code, .. } => code,
            other => panic!("{other}"),
        };
        // Overlap with the instance at 4..8.
        assert_eq!(
            code(nvml.create_mig_instance(0, "1g.10gb", 5).unwrap_err()),
            INSUFFICIENT_RESOURCES
        );
        // 3g.40gb may start only at 0 or 4; 3g.20gb is an A100-40GB profile.
        assert_eq!(
            code(nvml.create_mig_instance(0, "3g.40gb", 2).unwrap_err()),
            INVALID_ARGUMENT
        );
        assert_eq!(
            code(nvml.create_mig_instance(0, "3g.20gb", 0).unwrap_err()),
            INVALID_ARGUMENT
        );
        let made = nvml.create_mig_instance(0, "2g.20gb", 2).unwrap();
        assert_eq!(made.size, 2);
        assert_ne!(made.uuid, first[0].uuid);
        assert_eq!(nvml.mig_instances(0).unwrap().len(), 2);
        nvml.destroy_mig_instance(0, 2).unwrap();
        assert_eq!(
            code(nvml.destroy_mig_instance(0, 2).unwrap_err()),
            NOT_FOUND
        );
        // GPU 1 is in MIG mode with nothing on it; a non-MIG GPU refuses MIG calls.
        assert!(nvml.mig_instances(1).unwrap().is_empty());
        let plain = FakeNvml::uniform(1, "NVIDIA A100-SXM4-80GB", 81920);
        assert_eq!(code(plain.mig_instances(0).unwrap_err()), NOT_SUPPORTED);
        assert_eq!(
            code(plain.create_mig_instance(0, "1g.10gb", 0).unwrap_err()),
            NOT_SUPPORTED
        );
        // A layout NVML would refuse is refused when the fake is built.
        let e = FakeNvml::uniform(1, "NVIDIA A100-SXM4-80GB", 81920)
            .with_mig_spec("0:4g.40gb@0+3g.40gb@0")
            .unwrap_err();
        assert_eq!(code(e), INSUFFICIENT_RESOURCES);
        let e = FakeNvml::uniform(1, "NVIDIA L4", 23034)
            .with_mig_spec("0:1g.10gb@0")
            .unwrap_err();
        assert_eq!(code(e), INVALID_ARGUMENT);
        assert!(FakeNvml::uniform(1, "NVIDIA L4", 23034)
            .with_mig_spec("3")
            .is_err());
    }

    #[test]
    fn failure_modes_fail_every_call() {
        let nvml = FakeNvml::failing(FakeFailure::NotInitialized);
        assert_eq!(nvml.device_count(), Err(GpuError::NotInitialized));
        assert_eq!(nvml.device(0), Err(GpuError::NotInitialized));
        let nvml = FakeNvml::failing(FakeFailure::DriverNotLoaded);
        assert_eq!(nvml.device_count(), Err(GpuError::DriverNotLoaded));
    }

    fn links_of(lib: &FakeNvml) -> BTreeMap<(u32, u32), LinkKind> {
        let gpus = crate::gpu::gpus_from_library(lib, gpusched_wire::GpuSource::Fake).unwrap();
        crate::gpu::topology::links(lib, &gpus)
            .into_iter()
            .map(|l| ((l.a, l.b), l.kind))
            .collect()
    }

    #[test]
    fn a_dgx_like_box_links_every_pair_through_nvswitch() {
        let lib =
            FakeNvml::uniform(8, "NVIDIA H100 80GB HBM3", 81920).with_topology(FakeTopology::Dgx);
        let links = links_of(&lib);
        assert_eq!(links.len(), 28, "every pair of 8: {links:?}");
        assert!(links.values().all(|k| *k == LinkKind::NvSwitch));
        assert!(links.keys().all(|(a, b)| a < b));
    }

    #[test]
    fn a_pcie_only_box_has_switch_pairs_sockets_and_sys_between_them() {
        let lib = FakeNvml::uniform(8, "NVIDIA L40S", 46068).with_topology(FakeTopology::Pcie);
        let links = links_of(&lib);
        assert_eq!(links.len(), 28);
        let expect = |a, b, k| assert_eq!(links[&(a, b)], k, "GPUs {a},{b}");
        for (a, b) in [(0, 1), (2, 3), (4, 5), (6, 7)] {
            expect(a, b, LinkKind::PcieSwitch);
        }
        for (a, b) in [(0, 2), (0, 3), (1, 2), (1, 3), (4, 6), (5, 7)] {
            expect(a, b, LinkKind::PcieMulti);
        }
        for (a, b) in [(0, 4), (3, 4), (1, 7), (2, 5)] {
            expect(a, b, LinkKind::System);
        }
        assert_eq!("pcie".parse::<FakeTopology>(), Ok(FakeTopology::Pcie));
        let err = "nvlink".parse::<FakeTopology>().unwrap_err();
        assert!(err.contains("dgx") && err.contains("pcie"), "{err}");
    }

    #[test]
    fn without_a_topology_or_with_a_bad_index_nothing_is_known() {
        let lib = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920);
        assert!(links_of(&lib).is_empty());
        let lib = lib.with_topology(FakeTopology::Dgx);
        assert!(matches!(
            lib.link(0, 5),
            Err(GpuError::InvalidIndex { index: 5, .. })
        ));
    }
}
