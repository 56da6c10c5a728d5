//! Energy per job from NVML's energy counters (issue 13; the rule is in docs/energy.md).
//!
//! Each GPU's counter (`GpuSample::energy_mj`, mJ since the driver was loaded) is read
//! on every report; the step since the GPU's previous sample goes to the jobs holding
//! the GPU when the report arrives: a whole-GPU job all of it, a share or a MIG
//! instance its thousandths of the GPU (`SliceAt::milli`, for MIG its compute slices
//! out of the GPU's). What nobody holds is idle energy, charged to no one. A counter
//! that went back (the driver was reloaded) or a step longer than the heartbeat timeout
//! (the agent was away; who held the GPU meanwhile is unknown) charges nothing.
//!
//! Reports come often, so the running totals are never a reason to write a job's row:
//! they change the view unstored (`get_mut_unstored`) and reach the store with the
//! row's next write (a state change, the end). A server crash loses what was measured
//! since then.

use std::collections::HashMap;

use gpusched_wire::NodeTelemetry;

use super::State;

/// The last counter reading of each GPU, and the millijoules below a whole Joule each
/// job has been charged (so many small steps add up instead of rounding away).
#[derive(Default)]
pub struct Meter {
    last: HashMap<(String, u32), (u64, u64)>,
    remainder_mj: HashMap<u64, u64>,
}

impl State {
    /// Charges the energy of each GPU's step since its previous sample to the jobs
    /// holding it. O(GPUs of the node) per report.
    pub(super) fn meter_energy(&mut self, node: &str, t: &NodeTelemetry) {
        let max_gap_ms = self.cfg.heartbeat_timeout.as_millis() as u64;
        let mut charges: Vec<(u64, u64)> = Vec::new();
        for s in &t.gpus {
            let key = (node.to_string(), s.index);
            let reading = match (s.lost, s.energy_mj) {
                (false, Some(e)) => (s.at_ms, e),
                // No reading: the next one starts afresh.
                _ => {
                    self.energy.last.remove(&key);
                    continue;
                }
            };
            let Some((at0, e0)) = self.energy.last.insert(key, reading) else {
                continue;
            };
            let (at, e) = reading;
            if e < e0 || at <= at0 || at - at0 > max_gap_ms {
                continue;
            }
            let delta = e - e0;
            if delta == 0 {
                continue;
            }
            for (job, milli) in self.cluster.gpu_holders(node, s.index) {
                charges.push((job, delta * u64::from(milli) / 1000));
            }
        }
        for (job, mj) in charges {
            self.charge(job, mj);
        }
    }

    /// Drops an ended job's sub-Joule remainder (under 1 J, not worth keeping), so the
    /// meter holds entries only for jobs that may still run.
    pub(super) fn forget_energy(&mut self, job: u64) {
        self.energy.remainder_mj.remove(&job);
    }

    fn charge(&mut self, job: u64, mj: u64) {
        let Some(rec) = self.jobs.get_mut_unstored(&job) else {
            return;
        };
        let rem = self.energy.remainder_mj.entry(job).or_default();
        let total = *rem + mj;
        *rem = total % 1000;
        let v = &mut rec.view;
        v.energy_j = Some(v.energy_j.unwrap_or(0) + total / 1000);
    }
}
