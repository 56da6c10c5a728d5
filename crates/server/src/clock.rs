//! The time of one round of the state task. The actor reads the clocks once per round
//! and hands the reading to `State` (`State::begin_round`), so nothing in the state reads
//! a clock itself: a round sees one time throughout, and tests set the time they want.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Both clocks at one moment.
#[derive(Clone, Copy, Debug)]
pub struct Now {
    /// Wall-clock milliseconds since the Unix epoch: what records and the API show.
    pub ms: u64,
    /// The monotonic clock: heartbeat silences are measured on it, so a wall-clock jump
    /// never expires a node.
    pub instant: Instant,
}

impl Now {
    /// The clocks now (the actor, once per round; start-up).
    pub fn read() -> Now {
        Now {
            ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            instant: Instant::now(),
        }
    }

    /// The wall-clock time in seconds, as the core counts time.
    pub fn secs(&self) -> f64 {
        self.ms as f64 / 1000.0
    }

    /// `d` later on both clocks (tests move time forward with it).
    pub fn after(self, d: Duration) -> Now {
        Now {
            ms: self.ms + d.as_millis() as u64,
            instant: self.instant + d,
        }
    }
}
