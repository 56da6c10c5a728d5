//! The submission limits of `Limits` that need the state: batch size, command and
//! environment size, and pending jobs per user. Each refusal says the limit, its value
//! and the flag that sets it.

use std::collections::{BTreeMap, HashMap};

use gpusched_wire::{JobState, JobSubmit};

use super::{Fail, State, Who};

impl State {
    /// Refuses a submission over a limit (before anything of it is applied).
    pub(super) fn check_limits(&mut self, jobs: &[JobSubmit], who: &Who) -> Result<(), Fail> {
        let l = &self.cfg.limits;
        if jobs.len() > l.max_batch {
            return Err(Fail::BadRequest(format!(
                "{} jobs in one submission; this server takes at most {} (--max-batch): \
                 split it",
                jobs.len(),
                l.max_batch
            )));
        }
        let many = jobs.len() > 1;
        let at = |i: usize, e: String| {
            Fail::BadRequest(if many {
                format!("job #{i} of the batch: {e}")
            } else {
                e
            })
        };
        let mut adds: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, j) in jobs.iter().enumerate() {
            let command: usize = j.command.iter().map(String::len).sum();
            if command > l.max_command_bytes {
                return Err(at(
                    i,
                    format!(
                        "the command is {command} bytes; this server takes at most {} \
                         (--max-command-bytes): put long inputs in a file",
                        l.max_command_bytes
                    ),
                ));
            }
            let env: usize = j.env.iter().map(|(k, v)| k.len() + v.len()).sum();
            if env > l.max_env_bytes {
                return Err(at(
                    i,
                    format!(
                        "the environment is {env} bytes; this server takes at most {} \
                         (--max-env-bytes): put long values in a file",
                        l.max_env_bytes
                    ),
                ));
            }
            *adds
                .entry(j.user.as_deref().unwrap_or(&who.user))
                .or_default() += 1;
        }
        // Counted once per round, not per submission: thousands of submissions in one
        // round must not each walk every job. Within the round the count only grows with
        // accepted jobs (`count_pending`), so a job that started or was cancelled in the
        // same round still counts until the next: conservative by one round.
        let counts = self.pending_count.get_or_insert_with(|| {
            let mut m = HashMap::new();
            for j in self.jobs.values() {
                // An array is one submission while it has tasks left; its tasks are not
                // counted again.
                let array = j.view.array.is_some() && !j.view.state.is_terminal();
                if (j.view.state == JobState::Pending && j.view.array_task.is_none()) || array {
                    *m.entry(j.view.user.clone()).or_default() += 1;
                }
            }
            m
        });
        for (user, add) in adds {
            let pending = counts.get(user).copied().unwrap_or(0);
            if pending + add > l.max_pending_per_user {
                return Err(Fail::Forbidden(format!(
                    "{user} has {} and this submission adds {add}; a user may have at most \
                     {} pending (--max-pending-per-user): wait for some to start, or cancel \
                     some",
                    gpusched_wire::count(pending as u64, "pending job"),
                    l.max_pending_per_user
                )));
            }
        }
        Ok(())
    }

    /// A job was accepted: one more pending for its user in this round's count.
    pub(super) fn count_pending(&mut self, user: &str) {
        if let Some(c) = self.pending_count.as_mut() {
            *c.entry(user.to_string()).or_default() += 1;
        }
    }
}
