//! What the server hands to share placement as demand: each job's submission time,
//! whether it still waits or runs, and what it asks for. Which of them count, and the
//! target workload FGD measures against, is the core's `sharing::demand` (docs/slices.md).

use gpusched_core::sharing::demand::{counts, live_pod, target_pods, Demand};
use gpusched_core::sharing::SharePod;
use gpusched_wire::SliceAsk;

use super::State;

impl State {
    /// FGD's target workload at `now_s` for the shares that wait: the jobs of the last
    /// `--share-demand-window` and those still waiting or running, whole-GPU jobs
    /// included. Walks every job the state holds and the window's ended ones (building
    /// only those that count);
    /// called only in passes where a share waits.
    pub(super) fn share_target(&self, now_s: f64) -> Vec<SharePod> {
        let window = self.cfg.share_demand_window.as_secs_f64();
        let demand: Vec<Demand<SharePod>> = self
            .jobs
            .values()
            .filter_map(|r| {
                let v = &r.view;
                let submitted = v.submit_ms as f64 / 1000.0;
                let active = !v.state.is_terminal();
                // Only what counts is built (the core applies the same rule again).
                if !counts(submitted, active, now_s, window) {
                    return None;
                }
                // A memory share's (or MIG instance's) thousandths are known once placed.
                let milli = match v.slice.as_deref() {
                    Some(SliceAsk::Share { milli }) => Some(*milli),
                    Some(_) => v.slice_at.as_ref().map(|at| at.milli),
                    None => None,
                };
                Some(Demand {
                    submitted,
                    active,
                    ask: live_pod(v.gpus, milli)?,
                })
            })
            .chain(
                // Jobs that ended and left memory, submitted within the window.
                self.ended
                    .recent
                    .jobs(window)
                    .filter(|(submitted, _, _)| counts(*submitted, false, now_s, window))
                    .filter_map(|(submitted, gpus, milli)| {
                        Some(Demand {
                            submitted,
                            active: false,
                            ask: live_pod(gpus, milli)?,
                        })
                    }),
            )
            .collect();
        target_pods(&demand, now_s, window)
    }
}
