//! Telemetry through NVML: one pass reads each GPU's utilisation, memory, temperature,
//! power, energy counter, clocks event reasons, volatile ECC counts, retired pages or
//! remapped rows, and drains the critical Xid events NVML queued since the last pass.
//!
//! Each reading is one NVML call. `NVML_ERROR_NOT_SUPPORTED` (energy before Volta, ECC
//! on boards without it or with it off, page retirement on Ampere and later) leaves the
//! reading absent; `NVML_ERROR_GPU_IS_LOST` from any call marks the GPU lost; any other
//! failure is logged once per GPU and call and leaves the reading absent, so one broken
//! counter never hides the others.
//!
//! Xid events: one NVML event set per GPU registered for `nvmlEventTypeXidCriticalError`
//! where the GPU supports it (a set of its own, because nvml-wrapper frees a set whose
//! registration failed). NVML keeps the last Xid per event (its reference: "the most
//! recent XID error type seen by the system"), so a burst may read as repeats of the
//! last code; the count of events is right.
//!
//! Remapped rows (`nvmlDeviceGetRemappedRows`) have no safe wrapper in nvml-wrapper
//! 0.10; they go through the raw bindings, loaded once more as for MIG.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::sync::Mutex;

use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enum_wrappers::device::{
    EccCounter, MemoryError, RetirementCause, TemperatureSensor,
};
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::error::{nvml_try, NvmlError};
use nvml_wrapper::{Device, EventSet, Nvml};
use nvml_wrapper_sys::bindings::{nvmlDevice_t, NvmlLib};

use super::GpuReading;
use gpusched_wire::XidEvent;

/// The code NVML gives an Xid it cannot name.
const UNKNOWN_XID: u64 = 999;

/// NVML's remapped-row counts of one GPU.
struct RowRemap {
    correctable: u64,
    uncorrectable: u64,
    pending: bool,
    failed: bool,
}

/// The raw call for remapped rows (R450 drivers and later).
struct RemappedRows {
    lib: NvmlLib,
}

// SAFETY: NVML is thread-safe (NVIDIA's reference: "all NVML calls are thread safe");
// the function table is read-only after loading.
unsafe impl Send for RemappedRows {}
unsafe impl Sync for RemappedRows {}

impl RemappedRows {
    fn load(name: &OsStr) -> Option<Self> {
        // SAFETY: loading NVML runs only its (driver-provided) initialisers.
        let lib = unsafe { NvmlLib::new(name) }.ok()?;
        let present = lib.nvmlInit_v2.is_ok() && lib.nvmlDeviceGetRemappedRows.is_ok();
        // SAFETY: both functions are present (checked above); NVML counts its inits.
        if !present || nvml_try(unsafe { lib.nvmlInit_v2() }).is_err() {
            return None;
        }
        Some(RemappedRows { lib })
    }

    fn read(&self, dev: nvmlDevice_t) -> Result<RowRemap, NvmlError> {
        let (mut corr, mut unc, mut pending, mut failed) = (0, 0, 0, 0);
        // SAFETY: a valid device handle (from the same library) and out pointers.
        nvml_try(unsafe {
            self.lib
                .nvmlDeviceGetRemappedRows(dev, &mut corr, &mut unc, &mut pending, &mut failed)
        })?;
        Ok(RowRemap {
            correctable: u64::from(corr),
            uncorrectable: u64::from(unc),
            pending: pending != 0,
            failed: failed != 0,
        })
    }
}

/// The sampling half of the NVML library.
pub struct NvmlSampler {
    nvml: &'static Nvml,
    rows: Option<RemappedRows>,
    /// One Xid event set per GPU that supports them.
    xids: Mutex<BTreeMap<u32, EventSet<'static>>>,
    /// (GPU, call) pairs whose unexpected failure was logged already.
    warned: Mutex<BTreeSet<(u32, &'static str)>>,
}

impl NvmlSampler {
    /// Sets up Xid event sets for every GPU that supports them.
    pub fn new(nvml: &'static Nvml, lib_name: &OsStr) -> Self {
        let mut sets = BTreeMap::new();
        let count = nvml.device_count().unwrap_or(0);
        for index in 0..count {
            match xid_set(nvml, index) {
                Ok(Some(set)) => {
                    sets.insert(index, set);
                }
                Ok(None) => tracing::debug!(gpu = index, "no Xid events from NVML"),
                Err(e) => tracing::warn!(
                    gpu = index,
                    "cannot watch Xid events (nvmlDeviceRegisterEvents): {e}; the GPU's other \
                     readings are still sampled"
                ),
            }
        }
        NvmlSampler {
            nvml,
            rows: RemappedRows::load(lib_name),
            xids: Mutex::new(sets),
            warned: Mutex::default(),
        }
    }

    /// One pass over `indices`.
    pub fn sample(&self, indices: &[u32], at_ms: u64) -> Vec<GpuReading> {
        let mut xids = self.drain_xids(at_ms);
        indices
            .iter()
            .map(|&index| {
                let mut r = self.read(index, at_ms);
                r.xids = xids.remove(&index).unwrap_or_default();
                r
            })
            .collect()
    }

    /// The Xid events queued since the last pass, per GPU.
    fn drain_xids(&self, at_ms: u64) -> BTreeMap<u32, Vec<XidEvent>> {
        let sets = self.xids.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: BTreeMap<u32, Vec<XidEvent>> = BTreeMap::new();
        for (&index, set) in sets.iter() {
            // Bounded: a GPU in an Xid storm cannot hold the pass.
            for _ in 0..256 {
                match set.wait(0) {
                    Ok(event) => {
                        let code = match event.event_data {
                            Some(XidError::Value(v)) => v,
                            Some(XidError::Unknown) | None => UNKNOWN_XID,
                        };
                        out.entry(index).or_default().push(XidEvent { code, at_ms });
                    }
                    Err(NvmlError::Timeout) => break,
                    Err(e) => {
                        self.warn_once(index, "nvmlEventSetWait_v2", &e);
                        break;
                    }
                }
            }
        }
        out
    }

    /// A reading's value, or `None` (marking the GPU lost where NVML says so).
    fn keep<T>(
        &self,
        index: u32,
        lost: &mut bool,
        call: &'static str,
        r: Result<T, NvmlError>,
    ) -> Option<T> {
        Reading::new(r).keep(self, index, call, lost)
    }

    fn warn_once(&self, index: u32, call: &'static str, e: &NvmlError) {
        let first = self
            .warned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((index, call));
        if first {
            tracing::warn!(gpu = index, "{call} failed: {e}; that reading is left out");
        }
    }

    fn read(&self, index: u32, at_ms: u64) -> GpuReading {
        let device = match self.nvml.device_by_index(index) {
            Ok(d) => d,
            Err(NvmlError::GpuLost) => return GpuReading::lost(index, at_ms),
            Err(e) => {
                self.warn_once(index, "nvmlDeviceGetHandleByIndex_v2", &e);
                return GpuReading {
                    index,
                    at_ms,
                    ..GpuReading::default()
                };
            }
        };
        let mut lost = false;
        let util = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetUtilizationRates",
            device.utilization_rates().map(|u| u.gpu),
        );
        let mem = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetMemoryInfo",
            device.memory_info().map(|m| (m.used, m.free)),
        );
        let temp = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetTemperature",
            device.temperature(TemperatureSensor::Gpu),
        );
        let power = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetPowerUsage",
            device.power_usage(),
        );
        let energy = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetTotalEnergyConsumption",
            device.total_energy_consumption(),
        );
        let reasons = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetCurrentClocksThrottleReasons",
            device.current_throttle_reasons().map(|r| r.bits()),
        );
        let ecc = |kind| device.total_ecc_errors(kind, EccCounter::Volatile);
        let ecc_corrected = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetTotalEccErrors",
            ecc(MemoryError::Corrected),
        );
        let ecc_uncorrected = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetTotalEccErrors",
            ecc(MemoryError::Uncorrected),
        );
        let pages = |cause| device.retired_pages(cause).map(|p| p.len() as u64);
        let retired_sbe = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetRetiredPages",
            pages(RetirementCause::MultipleSingleBitEccErrors),
        );
        let retired_dbe = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetRetiredPages",
            pages(RetirementCause::DoubleBitEccError),
        );
        let retired_pending = self.keep(
            index,
            &mut lost,
            "nvmlDeviceGetRetiredPagesPendingStatus",
            device.are_pages_pending_retired(),
        );
        let rows = match &self.rows {
            Some(raw) => self.keep(
                index,
                &mut lost,
                "nvmlDeviceGetRemappedRows",
                raw.read(handle(&device)),
            ),
            None => None,
        };
        if lost {
            return GpuReading::lost(index, at_ms);
        }
        const MIB: u64 = 1024 * 1024;
        GpuReading {
            index,
            at_ms,
            lost: false,
            util_pct: util,
            mem_used_mib: mem.map(|(used, _)| used / MIB),
            mem_free_mib: mem.map(|(_, free)| free / MIB),
            temp_c: temp,
            power_mw: power,
            energy_mj: energy,
            throttle_reasons: reasons,
            ecc_corrected,
            ecc_uncorrected,
            retired_sbe,
            retired_dbe,
            retired_pending,
            remapped_correctable: rows.as_ref().map(|r| r.correctable),
            remapped_uncorrectable: rows.as_ref().map(|r| r.uncorrectable),
            remap_pending: rows.as_ref().map(|r| r.pending),
            remap_failed: rows.as_ref().map(|r| r.failed),
            xids: Vec::new(),
        }
    }
}

/// The raw handle of a device, for the raw calls.
fn handle(device: &Device<'_>) -> nvmlDevice_t {
    // SAFETY: the handle is only passed to NVML calls while `device` lives.
    unsafe { device.handle() }
}

/// How one reading's result counts.
#[derive(Debug)]
enum Reading<T> {
    Value(T),
    /// `NVML_ERROR_NOT_SUPPORTED`: absent, silently.
    Unsupported,
    /// `NVML_ERROR_GPU_IS_LOST`.
    Lost,
    /// Anything else: absent, logged.
    Failed(NvmlError),
}

impl<T> Reading<T> {
    fn new(r: Result<T, NvmlError>) -> Self {
        match r {
            Ok(v) => Reading::Value(v),
            Err(NvmlError::NotSupported) => Reading::Unsupported,
            Err(NvmlError::GpuLost) => Reading::Lost,
            Err(e) => Reading::Failed(e),
        }
    }

    fn keep(self, s: &NvmlSampler, index: u32, call: &'static str, lost: &mut bool) -> Option<T> {
        match self {
            Reading::Value(v) => Some(v),
            Reading::Unsupported => None,
            Reading::Lost => {
                *lost = true;
                None
            }
            Reading::Failed(e) => {
                s.warn_once(index, call, &e);
                None
            }
        }
    }
}

/// An event set watching GPU `index`'s critical Xids; `None` where it has none.
fn xid_set(nvml: &'static Nvml, index: u32) -> Result<Option<EventSet<'static>>, NvmlError> {
    let device = nvml.device_by_index(index)?;
    match device.supported_event_types() {
        Ok(t) if t.contains(EventTypes::CRITICAL_XID_ERROR) => {}
        Ok(_) | Err(NvmlError::NotSupported) => return Ok(None),
        Err(e) => return Err(e),
    }
    let set = nvml.create_event_set()?;
    device
        .register_events(EventTypes::CRITICAL_XID_ERROR, set)
        .map(Some)
        .map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_is_absent_lost_is_lost_and_other_failures_are_absent() {
        assert!(matches!(Reading::new(Ok(3)), Reading::Value(3)));
        assert!(matches!(
            Reading::<u32>::new(Err(NvmlError::NotSupported)),
            Reading::Unsupported
        ));
        assert!(matches!(
            Reading::<u32>::new(Err(NvmlError::GpuLost)),
            Reading::Lost
        ));
        assert!(matches!(
            Reading::<u32>::new(Err(NvmlError::Unknown)),
            Reading::Failed(NvmlError::Unknown)
        ));
    }
}
