//! One GPU's readings as the agent takes them, richer than what crosses the wire: the
//! agent's `/metrics` exports retired pages and remapped rows by cause, as DCGM
//! exporter does, while the server only needs their totals.
//!
//! Every reading is optional: NVML answers `NOT_SUPPORTED` for some of them on some
//! GPUs (energy before Volta, ECC on consumer boards, page retirement on Ampere and
//! later, which remap rows instead), and a GPU that fell off the bus answers nothing.

use gpusched_wire::{GpuSample, XidEvent};

/// What one pass read from one GPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuReading {
    /// NVML index.
    pub index: u32,
    /// When it was read (Unix ms, the agent's clock).
    pub at_ms: u64,
    /// NVML answered `GPU_IS_LOST`: the GPU fell off the bus; nothing else was read.
    pub lost: bool,
    /// Percent of the driver's last sample period a kernel ran.
    pub util_pct: Option<u32>,
    pub mem_used_mib: Option<u64>,
    pub mem_free_mib: Option<u64>,
    /// Core temperature, degrees Celsius.
    pub temp_c: Option<u32>,
    /// Power draw, milliwatts.
    pub power_mw: Option<u32>,
    /// Energy since the driver was loaded, millijoules; never decreases.
    pub energy_mj: Option<u64>,
    /// NVML's clocks event (throttle) reasons bitmask.
    pub throttle_reasons: Option<u64>,
    /// Volatile ECC counts (since the driver was loaded): single-bit corrected and
    /// double-bit uncorrected errors.
    pub ecc_corrected: Option<u64>,
    pub ecc_uncorrected: Option<u64>,
    /// Pages retired for single-bit and double-bit errors (before Ampere).
    pub retired_sbe: Option<u64>,
    pub retired_dbe: Option<u64>,
    /// A page waits to be retired at the next driver reload.
    pub retired_pending: Option<bool>,
    /// Rows remapped for correctable and uncorrectable errors (Ampere and later).
    pub remapped_correctable: Option<u64>,
    pub remapped_uncorrectable: Option<u64>,
    /// A remap waits for a GPU reset.
    pub remap_pending: Option<bool>,
    /// Remapping failed: the GPU has run out of spare rows.
    pub remap_failed: Option<bool>,
    /// Xid events seen since the previous pass.
    pub xids: Vec<XidEvent>,
}

/// NVML's clocks event reasons (`nvmlClocksEventReason*`, formerly throttle reasons).
pub mod throttle {
    pub const GPU_IDLE: u64 = 0x1;
    pub const SW_POWER_CAP: u64 = 0x4;
    pub const HW_SLOWDOWN: u64 = 0x8;
    pub const SW_THERMAL_SLOWDOWN: u64 = 0x20;
    pub const HW_THERMAL_SLOWDOWN: u64 = 0x40;
}

fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

fn any(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(false) || b.unwrap_or(false)),
    }
}

impl GpuReading {
    /// A reading of a GPU NVML no longer sees.
    pub fn lost(index: u32, at_ms: u64) -> Self {
        GpuReading {
            index,
            at_ms,
            lost: true,
            ..GpuReading::default()
        }
    }

    /// The wire's sample: retired pages and remapped rows add up to one count (a GPU
    /// has one mechanism or the other), either one pending makes it pending.
    pub fn to_wire(&self) -> GpuSample {
        GpuSample {
            index: self.index,
            at_ms: self.at_ms,
            lost: self.lost,
            util_pct: self.util_pct,
            mem_used_mib: self.mem_used_mib,
            temp_c: self.temp_c,
            power_mw: self.power_mw,
            energy_mj: self.energy_mj,
            throttle_reasons: self.throttle_reasons,
            ecc_corrected: self.ecc_corrected,
            ecc_uncorrected: self.ecc_uncorrected,
            retired_pages: sum(
                sum(self.retired_sbe, self.retired_dbe),
                sum(self.remapped_correctable, self.remapped_uncorrectable),
            ),
            retire_pending: any(self.retired_pending, self.remap_pending),
            xids: self.xids.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_sample_sums_retirements_and_keeps_absence() {
        let r = GpuReading {
            index: 3,
            at_ms: 9,
            retired_sbe: Some(2),
            retired_dbe: Some(1),
            remap_pending: Some(true),
            ..GpuReading::default()
        };
        let w = r.to_wire();
        assert_eq!(w.retired_pages, Some(3));
        assert_eq!(w.retire_pending, Some(true));
        assert_eq!(w.temp_c, None);
        let none = GpuReading::lost(1, 5).to_wire();
        assert!(none.lost);
        assert_eq!((none.retired_pages, none.retire_pending), (None, None));
        let ampere = GpuReading {
            remapped_correctable: Some(0),
            remapped_uncorrectable: Some(4),
            ..GpuReading::default()
        };
        assert_eq!(ampere.to_wire().retired_pages, Some(4));
    }
}
