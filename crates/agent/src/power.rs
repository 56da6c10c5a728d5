//! The server's per-GPU power caps (`Desired::power_caps`, docs/power.md) applied
//! through NVML. Level-triggered like the rest of the protocol: each desired state names
//! the cap each GPU should have; the agent sets the ones that differ from what it set
//! last, and puts back the board's maximum on a GPU whose cap the server no longer
//! names. NVML calls run on a blocking thread, never on the session's.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::gpu::{GpuError, GpuLibrary};

/// What the agent set on each GPU, milliwatts.
#[derive(Debug, Default)]
pub struct PowerCaps {
    applied: Mutex<BTreeMap<u32, u32>>,
}

impl PowerCaps {
    /// The GPUs whose limit must change for `wanted`: `(index, Some(mW))` to cap,
    /// `(index, None)` to lift a cap this agent set. Marks them applied: a failure is
    /// logged, not retried at every poll (the next different desired state retries).
    pub fn changes(&self, wanted: &BTreeMap<u32, u32>) -> Vec<(u32, Option<u32>)> {
        let mut applied = self.applied.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<(u32, Option<u32>)> = wanted
            .iter()
            .filter(|(i, mw)| applied.get(i) != Some(mw))
            .map(|(&i, &mw)| (i, Some(mw)))
            .collect();
        out.extend(
            applied
                .keys()
                .filter(|i| !wanted.contains_key(i))
                .map(|&i| (i, None)),
        );
        *applied = wanted.clone();
        out
    }
}

/// Sets GPU `index`'s limit to `cap_mw` (none: the most it accepts), clamped to what it
/// accepts (`nvmlDeviceGetPowerManagementLimitConstraints`); the limit it has after.
pub fn apply_one(lib: &dyn GpuLibrary, index: u32, cap_mw: Option<u32>) -> Result<u32, GpuError> {
    let (min, max) = lib.power_limit_constraints(index)?;
    let target = cap_mw.map_or(max, |c| c.clamp(min, max));
    if lib.power_limit(index)? != target {
        lib.set_power_limit(index, target)?;
    }
    Ok(target)
}

/// Applies `changes` on a blocking thread; each failure is logged with what to do.
pub fn apply(lib: Option<Arc<dyn GpuLibrary>>, changes: Vec<(u32, Option<u32>)>) {
    if changes.is_empty() {
        return;
    }
    let Some(lib) = lib else {
        tracing::warn!(
            "the server asks for GPU power caps, but this node's GPUs were declared by hand \
             (no NVML): they run uncapped; run the agent with NVML to apply them"
        );
        return;
    };
    tokio::task::spawn_blocking(move || {
        for (index, cap) in changes {
            match apply_one(lib.as_ref(), index, cap) {
                Ok(mw) => tracing::info!(gpu = index, limit_w = mw / 1000, "GPU power limit set"),
                Err(e) => tracing::warn!(gpu = index, "cannot set the GPU's power limit: {e}"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::FakeNvml;

    #[test]
    fn only_changed_caps_are_set_and_a_dropped_cap_is_lifted() {
        let caps = PowerCaps::default();
        let want = BTreeMap::from([(0, 250_000), (1, 250_000)]);
        assert_eq!(
            caps.changes(&want),
            [(0, Some(250_000)), (1, Some(250_000))]
        );
        assert_eq!(caps.changes(&want), []);
        let want = BTreeMap::from([(0, 300_000)]);
        assert_eq!(caps.changes(&want), [(0, Some(300_000)), (1, None)]);
        assert_eq!(caps.changes(&BTreeMap::new()), [(0, None)]);
    }

    #[test]
    fn a_cap_is_clamped_to_what_the_gpu_accepts_and_lifted_to_its_maximum() {
        let lib = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920);
        assert_eq!(apply_one(&lib, 0, Some(250_000)), Ok(250_000));
        assert_eq!(lib.power_limit(0), Ok(250_000));
        // Under the minimum (100 W) and over the maximum (400 W): clamped.
        assert_eq!(apply_one(&lib, 1, Some(20_000)), Ok(100_000));
        assert_eq!(apply_one(&lib, 1, Some(900_000)), Ok(400_000));
        assert_eq!(apply_one(&lib, 0, None), Ok(400_000));
        assert_eq!(lib.power_limit(0), Ok(400_000));
        let refused = FakeNvml::uniform(1, "NVIDIA A100-SXM4-80GB", 81920).refusing_power_limits();
        let e = apply_one(&refused, 0, Some(250_000)).unwrap_err();
        assert!(e.to_string().contains("NVML_ERROR_NO_PERMISSION"), "{e}");
        assert!(e.to_string().contains("root"), "{e}");
    }
}
