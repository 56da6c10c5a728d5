//! What a checkpoint costs on this cluster, measured (issue 37, item 3): from the moment
//! a running job is asked to stop through the checkpoint contract to its preempted end,
//! the time it took to save and exit. `rr`'s turn is kept at least `--quantum-floor`
//! times the slowest of the last [`KEPT`] measured, so slicing never spends most of a
//! GPU's time saving (the simulator refuses such a quantum the same way, from the
//! trace's profiled restart cost). The restore after a restart is not seen by the
//! server (a job says nothing when it is productive again), so only the save counts.
//! Measured since the server started; nothing of it is stored.

use std::collections::{BTreeMap, VecDeque};

use super::State;

/// How many of the latest checkpoints are kept.
pub const KEPT: usize = 32;

#[derive(Debug, Default)]
pub struct CheckpointCost {
    /// Running jobs asked to stop, and when (server ms).
    asked: BTreeMap<u64, u64>,
    /// The latest save times, ms, oldest first.
    recent: VecDeque<u64>,
}

impl CheckpointCost {
    /// Job `job` is (still) being asked to stop since `at_ms` at the latest.
    pub fn asked(&mut self, job: u64, at_ms: u64) {
        self.asked.entry(job).or_insert(at_ms);
    }

    /// Job `job` is not being asked to stop (any more).
    pub fn not_asked(&mut self, job: u64) {
        self.asked.remove(&job);
    }

    /// Job `job` ended preempted at `at_ms`: its save time, if it was asked here.
    pub fn saved(&mut self, job: u64, at_ms: u64) -> Option<u64> {
        let asked = self.asked.remove(&job)?;
        let took = at_ms.saturating_sub(asked);
        self.recent.push_back(took);
        if self.recent.len() > KEPT {
            self.recent.pop_front();
        }
        Some(took)
    }

    /// The slowest of the latest save times, seconds (None: none measured).
    pub fn slowest_s(&self) -> Option<f64> {
        self.recent.iter().max().map(|&ms| ms as f64 / 1000.0)
    }
}

impl State {
    /// `rr`'s turn now: `--quantum`, or `--quantum-floor` times the slowest checkpoint
    /// measured lately where that is longer.
    pub fn rr_quantum(&self) -> f64 {
        let floor = self.checkpoint_cost.slowest_s().unwrap_or(0.0) * self.cfg.rr_quantum_floor;
        self.cfg.rr_quantum.max(floor)
    }

    /// Job `id` ended preempted: its save time joins the measure, and `rr`'s turn
    /// follows it.
    pub(super) fn checkpoint_saved(&mut self, id: u64) {
        let before = self.rr_quantum();
        let Some(took_ms) = self.checkpoint_cost.saved(id, self.now.ms) else {
            return;
        };
        let quantum = self.rr_quantum();
        self.cluster.set_rr_quantum(quantum);
        if quantum != before && self.cfg.takes_turns() {
            tracing::info!(
                job = id,
                took_s = took_ms as f64 / 1000.0,
                quantum_s = quantum,
                floor = self.cfg.rr_quantum_floor,
                "the turn follows the checkpoints measured: --quantum-floor times the \
                 slowest of the last {KEPT}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_of_the_latest_saves_is_kept() {
        let mut c = CheckpointCost::default();
        assert_eq!(c.slowest_s(), None);
        // Never asked here (asked before a restart): nothing measured.
        assert_eq!(c.saved(1, 5_000), None);
        c.asked(1, 1_000);
        // Asked again in a later round: the first ask counts.
        c.asked(1, 2_000);
        assert_eq!(c.saved(1, 31_000), Some(30_000));
        c.asked(2, 0);
        c.not_asked(2);
        assert_eq!(c.saved(2, 9_000), None);
        for job in 10..10 + KEPT as u64 {
            c.asked(job, 0);
            c.saved(job, 1_000);
        }
        // The 30 s save left the window: the slowest kept is 1 s.
        assert_eq!(c.slowest_s(), Some(1.0));
    }
}
