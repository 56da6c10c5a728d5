//! Checkpoint marks: a running attempt's new checkpoint time, reported so the server
//! preempts whoever loses the least work.

use std::collections::BTreeMap;

use gpusched_wire::{AttemptRef, RunEvent, RunEventKind};

use super::Shared;

/// Reports a new checkpoint time (the mtime of `$GPUSCHED_CHECKPOINT_DIR/checkpoint`) of
/// each running attempt, so the server preempts whoever loses the least work.
pub(super) fn report_checkpoints(sh: &Shared, seen: &mut BTreeMap<AttemptRef, u64>) {
    let running = sh.launcher.running();
    seen.retain(|a, _| running.contains(a));
    for a in running {
        let mark = sh
            .launcher
            .checkpoint_dir(a.job)
            .join(crate::launcher::CHECKPOINT_MARK);
        let Ok(modified) = std::fs::symlink_metadata(&mark).and_then(|m| m.modified()) else {
            continue;
        };
        let at_ms = crate::clock::unix_ms(modified);
        if seen.get(&a).is_none_or(|&t| at_ms > t) {
            seen.insert(a, at_ms);
            sh.outbox.push(RunEvent {
                job: a.job,
                attempt: a.attempt,
                at_ms,
                event: RunEventKind::Checkpoint,
            });
        }
    }
}
