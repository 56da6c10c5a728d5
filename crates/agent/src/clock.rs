//! The agent's one reading of the wall clock: Unix milliseconds, for the times it
//! journals and reports (ends, events, samples) and the retention sweep's "now".

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    unix_ms(SystemTime::now())
}

/// `t` in milliseconds since the Unix epoch (0 before it; a file's mtime, say).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
