//! Whether a job of a given size and priority may wait in a queue at all: the queue's
//! `max`, `max_priority` and `max_gpus_per_user`. Submit and `update --queue/--priority`
//! ask the same question, so a job never gets by an update what a submit refuses.

use super::reasons;
use super::State;

impl State {
    /// `Err` (the message of a 409) if a job needing `need` whole GPUs (a slice counts as
    /// one) at `priority` (`None`: not checked, an admin's update) could never start in
    /// `queue`; `want` is what it counts toward the per-user cap.
    pub(super) fn queue_fit(
        &self,
        queue: &str,
        priority: Option<i32>,
        need: u32,
        want: u32,
    ) -> Result<(), String> {
        let Some(def) = self.queues.defs.get(queue) else {
            return Err(format!(
                "no queue named `{queue}`; the queues are: {}",
                self.queues.names()
            ));
        };
        // A job above its queue's `max` could never start: refuse it now rather than let
        // it wait forever.
        if let Some(max) = def.max {
            if need > max {
                return Err(reasons::larger_than_queue(queue, max, need));
            }
        }
        if let (Some(max), Some(priority)) = (def.max_priority, priority) {
            if priority > max {
                return Err(format!(
                    "priority {priority} is above queue `{queue}`'s max_priority {max}"
                ));
            }
        }
        if let Some(cap) = def.max_gpus_per_user {
            if want > cap {
                return Err(format!(
                    "the job asks for {want} GPUs, but one user's jobs may hold at most \
                     {cap} in queue `{queue}` (max_gpus_per_user in the queue file), so \
                     it could never start"
                ));
            }
        }
        Ok(())
    }
}
