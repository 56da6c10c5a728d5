//! Each association's past use, decayed with a half-life: GPU-seconds as of `at`.
//!
//! Plain data, so the server can store it and load it back after a restart or a
//! takeover ([`Usage::restore`]); the simulator keeps it in memory.

use std::collections::BTreeMap;

use super::Assoc;
use crate::Seconds;

/// Decayed GPU-seconds per association, as of `at`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Usage {
    pub gpu_seconds: BTreeMap<Assoc, f64>,
    pub at: Option<Seconds>,
}

/// Below this many decayed GPU-seconds an association is forgotten (a GPU-second is
/// nothing against a week's half-life), so the map does not grow with every user ever
/// seen.
const FORGET_BELOW: f64 = 1e-3;

impl Usage {
    /// Decays what was remembered to `now` and adds what `running` (association, GPUs)
    /// used since the last call: they are taken to have run the whole interval, as each
    /// pass is a point of the history. Time going back changes nothing.
    pub fn advance(
        &mut self,
        half_life: Seconds,
        running: impl IntoIterator<Item = (Assoc, u32)>,
        now: Seconds,
    ) {
        let dt = self.at.map_or(0.0, |at| (now - at).max(0.0));
        self.at = Some(self.at.map_or(now, |at| at.max(now)));
        if dt == 0.0 {
            return;
        }
        if half_life > 0.0 {
            let keep = (-dt / half_life).exp2();
            for v in self.gpu_seconds.values_mut() {
                *v *= keep;
            }
        }
        for (a, gpus) in running {
            *self.gpu_seconds.entry(a).or_default() += gpus as f64 * dt;
        }
        self.gpu_seconds.retain(|_, v| *v >= FORGET_BELOW);
    }

    /// Adds GPU-seconds to an association (a job that left between two points).
    pub fn charge(&mut self, a: Assoc, gpu_seconds: f64) {
        *self.gpu_seconds.entry(a).or_default() += gpu_seconds;
    }

    /// The usage as of `at`, as a store kept it (an association may have moved or gone:
    /// the caller maps what it still knows).
    pub fn restore(gpu_seconds: BTreeMap<Assoc, f64>, at: Option<Seconds>) -> Self {
        Usage { gpu_seconds, at }
    }
}
