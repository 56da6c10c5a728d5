//! Ended jobs live in the store only. A job that ends stays in memory until its round
//! has committed (the row is written first), then leaves (`forget_ended`); the server
//! keeps only live jobs (pending, starting, running) plus small bounded state:
//!
//! - `ended_counts`: ended jobs per (queue, state), for the metrics' levels (one entry
//!   per queue and terminal state, counted from the store at start);
//! - `recent`: what share placement's demand window needs of jobs that ended within it
//!   (counts per time slot and ask, `recent.rs`: bounded whatever the job rate);
//! - `usage`: the usage over all time per (user, queue), read from the store at the
//!   first report over all time and kept up to date as jobs leave, so such a report
//!   (the dashboard's default, every 10 s) reads no row; dropped by a purge;
//! - `recalled`: rows of ended jobs the actor read from the store for this round's
//!   commands (show, wait, cancel, logs, events, `after`, client tokens), dropped when
//!   the next round begins.
//!
//! Reads of ended jobs are answered from those rows; lists and usage merge the live jobs
//! in memory with the store's page or aggregate, or the kept sums (`list.rs`, `usage.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::record::JobRecord;
use gpusched_store::UsageSum;
use gpusched_wire::JobState;

use super::State;

/// What the state keeps of ended jobs (see the module's comment).
#[derive(Default)]
pub struct Ended {
    /// Jobs that ended this round: they leave memory once it has committed.
    pub(super) leaving: BTreeSet<u64>,
    /// Ended jobs no longer in memory, per (queue, state).
    pub(super) counts: BTreeMap<(String, JobState), u64>,
    /// Rows read from the store for this round's commands.
    pub(super) recalled: BTreeMap<u64, JobRecord>,
    /// Client retry keys (`user/token`) the store knows, for this round's submissions.
    pub(super) tokens: HashMap<String, u64>,
    /// Ended jobs submitted within the share demand window.
    pub(super) recent: super::recent::RecentDemand,
    /// The usage over all time of the ended jobs no longer in memory, per (user,
    /// queue): read from the store at the first report over all time (one pass over
    /// every row: 0.8 s at a million), then kept as jobs leave, so later reports read
    /// no row. `None` until then, and again after a purge.
    pub(super) usage: Option<BTreeMap<(String, String), UsageSum>>,
}

impl State {
    /// Drops the jobs that ended this round from memory; the actor calls it after the
    /// round's commit, so their rows are in the store. Idempotent.
    pub fn forget_ended(&mut self) {
        let window = self.cfg.share_demand_window.as_secs_f64();
        let now_s = self.now.secs();
        for id in std::mem::take(&mut self.ended.leaving) {
            if self
                .jobs
                .get(&id)
                .is_none_or(|j| !j.view.state.is_terminal())
            {
                continue;
            }
            let Some(job) = self.jobs.remove_written(&id) else {
                continue;
            };
            self.forget_steps_of(id);
            self.forget_task_row(id);
            let v = &job.view;
            if let Some(t) = &job.client_token {
                self.retry_keys.remove(t);
            }
            *self
                .ended
                .counts
                .entry((v.queue.clone(), v.state))
                .or_default() += 1;
            if let Some(usage) = &mut self.ended.usage {
                super::usage::add_ended(usage, v);
            }
            let submitted = v.submit_ms as f64 / 1000.0;
            if submitted >= now_s - window {
                let milli = match v.slice.as_deref() {
                    Some(gpusched_wire::SliceAsk::Share { milli }) => Some(*milli),
                    Some(_) => v.slice_at.as_ref().map(|at| at.milli),
                    None => None,
                };
                self.ended.recent.add(window, submitted, v.gpus, milli);
            }
            self.dependents.take(id);
        }
        self.ended.recent.expire(window, now_s);
    }

    /// Notes that job `id` reached a terminal state this round.
    pub(super) fn leaving(&mut self, id: u64) {
        self.ended.leaving.insert(id);
    }

    /// Whether job `id` is neither in memory nor read for this round, but may be in the
    /// store (an id this server issued): the actor reads it before the command.
    pub fn wants_row(&self, id: u64) -> bool {
        id < self.next_id && !self.jobs.contains_key(&id) && !self.ended.recalled.contains_key(&id)
    }

    /// A row the actor read from the store for this round's commands (only ended jobs
    /// are taken: a live one is in memory).
    pub fn recall(&mut self, job: JobRecord) {
        if job.view.state.is_terminal() && !self.jobs.contains_key(&job.view.id) {
            self.ended.recalled.insert(job.view.id, job);
        }
    }

    /// Whether a submission's retry key needs the store (not a live job's).
    pub fn wants_token(&self, key: &str) -> bool {
        !self.retry_keys.contains_key(key) && !self.ended.tokens.contains_key(key)
    }

    /// The store's answer for a retry key (`user/token`).
    pub fn recall_token(&mut self, key: String, id: u64) {
        self.ended.tokens.insert(key, id);
    }

    /// The job accepted with retry key `key`, live or ended.
    pub(super) fn retry_of(&self, key: &str) -> Option<u64> {
        self.retry_keys
            .get(key)
            .or_else(|| self.ended.tokens.get(key))
            .copied()
    }

    /// The id of a row read from the store for this round that `is` picks.
    pub(super) fn recalled_where(&self, is: &dyn Fn(&JobRecord) -> bool) -> Option<u64> {
        self.ended
            .recalled
            .values()
            .find(|j| is(j))
            .map(|j| j.view.id)
    }

    /// Job `id` in memory or read from the store for this round.
    pub(super) fn row(&self, id: u64) -> Option<&JobRecord> {
        self.jobs
            .get(&id)
            .map(|j| &**j)
            .or_else(|| self.ended.recalled.get(&id))
    }

    /// Sets the ended jobs per (queue, state) from the store (at start and after a
    /// purge, when no ended job is left in memory).
    pub fn set_ended_counts(&mut self, counts: Vec<(String, JobState, u64)>) {
        self.ended.counts = counts.into_iter().map(|(q, s, n)| ((q, s), n)).collect();
    }

    /// Whether a report over all time needs the store's sums first (see `usage`).
    pub fn wants_all_time_usage(&self) -> bool {
        self.ended.usage.is_none()
    }

    /// The store's usage over all time per (user, queue), read when no ended job of it
    /// is in memory (a command of a round, before its commit).
    pub fn set_all_time_usage(&mut self, rows: Vec<(String, UsageSum)>) {
        self.ended.usage = Some(
            rows.into_iter()
                .map(|(user, sum)| ((user, sum.key.clone()), sum))
                .collect(),
        );
    }

    /// Forgets the usage over all time (a purge deleted rows it counts).
    pub fn forget_all_time_usage(&mut self) {
        self.ended.usage = None;
    }

    /// May `who` purge the history before `q.before_ms`: admins only, and a time not in
    /// the future (that would read as "every ended job" by mistake). The round's time,
    /// for the audit entry.
    pub fn may_purge(
        &self,
        q: &gpusched_wire::history::PurgeRequest,
        who: &super::Who,
    ) -> Result<u64, super::Fail> {
        if !who.admin {
            return Err(super::Fail::Forbidden(format!(
                "only an admin may purge the job history ({} is not one); ask an admin, or \
                 use an admin token",
                who.user
            )));
        }
        let now = self.now.ms;
        if q.before_ms > now {
            return Err(super::Fail::Conflict(format!(
                "`before_ms` = {} is in the future (now is {now}); give a time in the past \
                 (jobs that ended before it are deleted)",
                q.before_ms
            )));
        }
        Ok(now)
    }

    /// The rows read for the last round go (the next reads again what it needs).
    pub(super) fn clear_recalled(&mut self) {
        self.ended.recalled.clear();
        self.recalled_steps.clear();
        self.ended.tokens.clear();
    }
}

#[cfg(test)]
mod tests {
    use gpusched_core::JobState as Core;
    use gpusched_wire::{JobState, JobSubmit};

    use super::super::Who;

    /// A job that ends leaves memory only when the actor says its round committed, and
    /// the metrics still count it; its row, recalled, answers `show` again.
    #[test]
    fn an_ended_job_leaves_memory_after_the_commit_and_is_still_counted() {
        let mut st = crate::state::tests::one_gpu_state();
        let ann = Who {
            user: "ann".into(),
            admin: false,
        };
        let job = JobSubmit {
            command: vec!["/bin/true".into()],
            client_token: Some("k".into()),
            ..Default::default()
        };
        st.submit(vec![job], &ann, &crate::groups::UserGroups::default())
            .unwrap_or_else(|e| panic!("submitted: {}", e.message()));
        st.schedule();
        assert!(st.set_state(1, &[Core::Running]));
        st.end(1, JobState::Succeeded, "exited with code 0".into(), 5);
        // Not committed yet: still in memory, written by this round.
        assert!(st.jobs.contains_key(&1));
        assert!(st.take_touched().jobs.contains(&1));
        let row = st.jobs[&1].clone();
        st.forget_ended();
        assert!(st.jobs.is_empty());
        assert!(st.retry_keys.is_empty());
        let counts = st.metrics_view().jobs;
        assert_eq!(counts[&("default".to_string(), JobState::Succeeded)], 1);
        // The next round: an unknown id until the actor reads the row.
        assert!(st.wants_row(1) && !st.wants_row(2));
        assert!(st.get(1, &ann).is_err());
        st.recall(*row);
        assert_eq!(st.get(1, &ann).map(|v| v.state), Ok(JobState::Succeeded));
        st.begin_round(st.now);
        assert!(st.get(1, &ann).is_err(), "recalled rows last one round");
    }
}
