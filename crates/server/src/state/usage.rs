//! GPU-hours and energy per user or queue over a window, from the jobs the server keeps.

use std::collections::BTreeMap;

use gpusched_wire::{JobState, UsageQuery, UsageReport, UsageRow};

use super::{Fail, State, Who};

impl State {
    /// Under `--private-jobs` a non-admin's report counts only their own jobs.
    pub fn usage(&self, q: &UsageQuery, who: &Who) -> Result<UsageReport, Fail> {
        let by = q.by.clone().unwrap_or_else(|| "user".into());
        if by != "user" && by != "queue" {
            return Err(Fail::BadRequest(format!(
                "`by` must be user or queue, got {by:?}"
            )));
        }
        let now = self.now.ms;
        let since = q.since_ms.unwrap_or(0);
        // A window that starts after now would print an inverted range and count nothing.
        if since > now {
            return Err(Fail::Conflict(format!(
                "`since_ms` = {since} is in the future (now is {now}); give a time in the past"
            )));
        }
        let mut rows: BTreeMap<String, (UsageRow, f64, u64)> = BTreeMap::new();
        for job in self.jobs.values() {
            let v = &job.view;
            if q.user.as_ref().is_some_and(|u| u != &v.user) || !self.visible(v, who) {
                continue;
            }
            // An array holds nothing itself: its tasks are charged.
            if v.array.is_some() {
                continue;
            }
            let Some(start) = v.start_ms else { continue };
            let end = v.end_ms.unwrap_or(now);
            if end < since {
                continue;
            }
            let key = if by == "user" {
                v.user.clone()
            } else {
                v.queue.clone()
            };
            let (row, wait_sum, started) = rows.entry(key.clone()).or_insert_with(|| {
                (
                    UsageRow {
                        key,
                        jobs: 0,
                        gpu_hours: 0.0,
                        succeeded: 0,
                        failed: 0,
                        cancelled: 0,
                        timed_out: 0,
                        mean_wait_s: 0.0,
                        energy_kwh: 0.0,
                    },
                    0.0,
                    0,
                )
            });
            let ran_ms = end.saturating_sub(start.max(since));
            row.jobs += 1;
            // A slice counts as its share of the GPU (a MIG instance: its compute slices).
            let gpus = super::held_milli(v) as f64 / 1000.0;
            row.gpu_hours += gpus * ran_ms as f64 / 3_600_000.0;
            // Energy is kept per job, not per moment: a job in the window counts whole.
            row.energy_kwh += v.energy_j.unwrap_or(0) as f64 / 3_600_000.0;
            match v.state {
                JobState::Succeeded => row.succeeded += 1,
                JobState::Failed => row.failed += 1,
                JobState::Cancelled => row.cancelled += 1,
                JobState::TimedOut => row.timed_out += 1,
                _ => {}
            }
            *wait_sum += start.saturating_sub(v.submit_ms) as f64 / 1000.0;
            *started += 1;
        }
        let rows = rows
            .into_values()
            .map(|(mut r, wait, n)| {
                r.mean_wait_s = if n > 0 { wait / n as f64 } else { 0.0 };
                r
            })
            .collect();
        Ok(UsageReport {
            by,
            since_ms: q.since_ms,
            until_ms: now,
            rows,
        })
    }
}
