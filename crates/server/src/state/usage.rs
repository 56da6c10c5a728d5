//! GPU-hours, CPU-hours, memory GiB-hours and energy per user or queue over a window: the live jobs (and those that
//! ended this round) from memory, the jobs that ended before from the store's aggregate
//! (`gpusched_store::UsageSum`, asked for with `usage_ask`), or over all time from the
//! sums kept per (user, queue) as jobs leave memory (`ended.rs`).

use std::collections::BTreeMap;

use gpusched_store::UsageSum;
use gpusched_wire::{JobState, UsageQuery, UsageReport, UsageRow};

use super::{Fail, State, Who};

/// What the store sums for a usage report: the window's start, per queue (else user),
/// of one user only; `None` when the report can count no one's ended jobs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct UsageAsk {
    pub since_ms: u64,
    pub by_queue: bool,
    /// Per account: always read from the store (no sums over all time are kept per
    /// account).
    pub by_account: bool,
    pub user: Option<String>,
}

impl State {
    /// The store's part of usage report `q` by `who` (checked as `usage` checks it).
    pub fn usage_ask(&self, q: &UsageQuery, who: &Who) -> Result<Option<UsageAsk>, Fail> {
        self.usage(q, who, Vec::new())?;
        let user = match (&q.user, self.cfg.private_jobs && !who.admin) {
            (Some(u), true) if u != &who.user => return Ok(None),
            (_, true) => Some(who.user.clone()),
            (u, false) => u.clone(),
        };
        Ok(Some(UsageAsk {
            since_ms: q.since_ms.unwrap_or(0),
            by_queue: q.by.as_deref() == Some("queue"),
            by_account: q.by.as_deref() == Some("account"),
            user,
        }))
    }

    /// Under `--private-jobs` a non-admin's report counts only their own jobs. `stored`:
    /// the store's sums of the jobs that ended before this round (`usage_ask`).
    pub fn usage(
        &self,
        q: &UsageQuery,
        who: &Who,
        stored: Vec<UsageSum>,
    ) -> Result<UsageReport, Fail> {
        let by = q.by.clone().unwrap_or_else(|| "user".into());
        if !["user", "queue", "account"].contains(&by.as_str()) {
            return Err(Fail::BadRequest(format!(
                "`by` must be user, queue or account, got {by:?}"
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
        let mut live: BTreeMap<String, UsageSum> = BTreeMap::new();
        let root = crate::accounts::ROOT.to_string();
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
            let key = match by.as_str() {
                "user" => &v.user,
                "queue" => &v.queue,
                _ => v.account.as_ref().unwrap_or(&root),
            };
            let sum = live.entry(key.clone()).or_insert_with(|| UsageSum {
                key: key.clone(),
                ..Default::default()
            });
            add_job(sum, v, end.saturating_sub(start.max(since)));
        }
        let mut rows: BTreeMap<String, (UsageRow, f64, u64)> = BTreeMap::new();
        for sum in stored.into_iter().chain(live.into_values()) {
            let key = sum.key.clone();
            let (row, wait_sum, started) = rows.entry(key.clone()).or_insert_with(|| empty(key));
            row.jobs += sum.jobs;
            row.gpu_hours += sum.gpu_hours;
            // Energy is kept per job, not per moment: a job in the window counts whole.
            row.energy_kwh += sum.energy_j as f64 / 3_600_000.0;
            // So is CPU time (measured once, as the attempt ended); memory is held over
            // time, counted in the window as GPUs are.
            row.cpu_hours += sum.cpu_ms as f64 / 3_600_000.0;
            row.mem_gib_hours += sum.mem_gib_hours;
            row.succeeded += sum.succeeded;
            row.failed += sum.failed;
            row.cancelled += sum.cancelled;
            row.timed_out += sum.timed_out;
            // Idle time and steps are kept per job, as energy: whole when in the window.
            row.idle_gpu_hours += sum.idle_gpu_s as f64 / 3_600.0;
            row.steps += sum.steps;
            row.step_gpu_hours += sum.step_gpu_s as f64 / 3_600.0;
            *wait_sum += sum.wait_s;
            *started += sum.jobs;
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

impl State {
    /// The store's part of a report over all time (`ask.since_ms` 0), from the sums kept
    /// per (user, queue) (`set_all_time_usage` first): per queue or user, of one user
    /// when asked.
    pub(crate) fn all_time_usage(&self, ask: &UsageAsk) -> Vec<UsageSum> {
        let mut out: BTreeMap<&str, UsageSum> = BTreeMap::new();
        for ((user, queue), sum) in self.ended.usage.iter().flatten() {
            if ask.user.as_ref().is_some_and(|u| u != user) {
                continue;
            }
            let key = if ask.by_queue { queue } else { user };
            let to = out.entry(key).or_insert_with(|| UsageSum {
                key: key.clone(),
                ..Default::default()
            });
            to.jobs += sum.jobs;
            to.gpu_hours += sum.gpu_hours;
            to.succeeded += sum.succeeded;
            to.failed += sum.failed;
            to.cancelled += sum.cancelled;
            to.timed_out += sum.timed_out;
            to.wait_s += sum.wait_s;
            to.energy_j += sum.energy_j;
            to.cpu_ms += sum.cpu_ms;
            to.mem_gib_hours += sum.mem_gib_hours;
            to.idle_gpu_s += sum.idle_gpu_s;
            to.steps += sum.steps;
            to.step_gpu_s += sum.step_gpu_s;
        }
        out.into_values().collect()
    }
}

/// Adds a job that leaves memory to the sums over all time per (user, queue), as the
/// store's aggregate counts its row (`gpusched_store` `usage_sql` from 0): ended, started.
pub(super) fn add_ended(
    usage: &mut BTreeMap<(String, String), UsageSum>,
    v: &gpusched_wire::JobView,
) {
    let (Some(start), Some(end)) = (v.start_ms, v.end_ms) else {
        return;
    };
    // An array holds nothing itself: its tasks are charged (as in the live sum).
    if !v.state.is_terminal() || v.array.is_some() {
        return;
    }
    let s = usage
        .entry((v.user.clone(), v.queue.clone()))
        .or_insert_with(|| UsageSum {
            key: v.queue.clone(),
            ..Default::default()
        });
    add_job(s, v, end.saturating_sub(start));
}

/// Counts job `v` (started) into `s`, charged for `ran_ms` of the window: a slice as its
/// share of the GPU (a MIG instance: its compute slices), its energy and CPU time whole,
/// its peak memory on each of its nodes for `ran_ms` (as the store's `usage_sql`).
fn add_job(s: &mut UsageSum, v: &gpusched_wire::JobView, ran_ms: u64) {
    s.jobs += 1;
    s.gpu_hours += super::held_milli(v) as f64 / 1000.0 * ran_ms as f64 / 3_600_000.0;
    s.wait_s += v.start_ms.unwrap_or(0).saturating_sub(v.submit_ms) as f64 / 1000.0;
    s.energy_j += v.energy_j.unwrap_or(0);
    s.idle_gpu_s += v.idle_gpu_s.map_or(0, u64::from);
    if let Some(u) = v.step_use.as_deref() {
        s.steps += u64::from(u.steps);
        s.step_gpu_s += u.gpu_s;
    }
    if let Some(u) = v.usage.as_deref() {
        s.cpu_ms += u.cpu_ms;
        let gib = u.mem_peak_bytes.unwrap_or(0) as f64 / (1u64 << 30) as f64;
        s.mem_gib_hours += gib * f64::from(v.nodes.max(1)) * ran_ms as f64 / 3_600_000.0;
    }
    match v.state {
        JobState::Succeeded => s.succeeded += 1,
        JobState::Failed => s.failed += 1,
        JobState::Cancelled => s.cancelled += 1,
        JobState::TimedOut => s.timed_out += 1,
        _ => {}
    }
}

/// A row before anything is counted, with its wait sum and started count.
fn empty(key: String) -> (UsageRow, f64, u64) {
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
            cpu_hours: 0.0,
            mem_gib_hours: 0.0,
            idle_gpu_hours: 0.0,
            steps: 0,
            step_gpu_hours: 0.0,
        },
        0.0,
        0,
    )
}

/// What the store's aggregate per (user, queue) gives for `jobs`, as [`ended_sums`].
#[cfg(test)]
pub(crate) fn ended_pairs<'a>(
    jobs: impl Iterator<Item = &'a crate::record::JobRecord>,
) -> Vec<(String, UsageSum)> {
    let mut by_user: BTreeMap<&str, Vec<&crate::record::JobRecord>> = BTreeMap::new();
    for j in jobs {
        by_user.entry(&j.view.user).or_default().push(j);
    }
    by_user
        .into_iter()
        .flat_map(|(user, jobs)| {
            ended_sums(jobs.into_iter(), 0, true)
                .into_iter()
                .map(move |s| (user.to_string(), s))
        })
        .collect()
}

/// What the store's aggregate (`gpusched_store::UsageSum`, in SQL) gives for `jobs`,
/// computed here the way the live sum is: the state tests stand in for the store with
/// it, and a store test would compare the two.
#[cfg(test)]
pub(crate) fn ended_sums<'a>(
    jobs: impl Iterator<Item = &'a crate::record::JobRecord>,
    since: u64,
    by_queue: bool,
) -> Vec<UsageSum> {
    let mut out: BTreeMap<String, UsageSum> = BTreeMap::new();
    for j in jobs {
        let v = &j.view;
        let (Some(start), Some(end)) = (v.start_ms, v.end_ms) else {
            continue;
        };
        if !v.state.is_terminal() || end < since || v.array.is_some() {
            continue;
        }
        let key = if by_queue { &v.queue } else { &v.user };
        let s = out.entry(key.clone()).or_insert_with(|| UsageSum {
            key: key.clone(),
            ..Default::default()
        });
        add_job(s, v, end.saturating_sub(start.max(since)));
    }
    out.into_values().collect()
}
