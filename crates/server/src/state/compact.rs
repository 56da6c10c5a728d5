//! Array tasks written as compact records (store schema 17, `gpusched_store::CompactTask`)
//! instead of job rows and events: a trivial task's row of 64 values and its four events
//! were most of the server's CPU per array task (docs/benchmarks.md).
//!
//! At each commit, every touched task that has no job row is checked: if the compact
//! record rebuilds exactly the row the task would get (`compact_if_exact`, against its
//! array's row as written), the record is written instead, carrying the task's events of
//! the round. Otherwise the task gets its job row, and keeps it for good; one that had a
//! compact record is promoted (the record goes, its events move to `job_events`, in the
//! same transaction). A live compact task with events but no change is written too, so
//! its events stay in order in its record.

use std::collections::{BTreeMap, HashMap, HashSet};

use gpusched_store::{compact_if_exact, CompactTask, StoredJob};

use super::history::Journal;
use super::{Rows, State};

/// Which live array tasks the store holds how.
#[derive(Debug, Default)]
pub(super) struct TaskRows {
    /// As compact records.
    compact: HashSet<u64>,
    /// As job rows (never compact again).
    full: HashSet<u64>,
}

/// What a round writes of compact tasks besides its job rows.
#[derive(Debug, Default)]
pub struct CompactWrites {
    pub tasks: Vec<CompactTask>,
    /// Compact tasks that get their job row this round.
    pub promoted: Vec<u64>,
}

impl State {
    /// After a load: which live tasks are compact records (`ids`); every other loaded
    /// task not listed in its array's row has a job row.
    pub fn restore_compact(&mut self, ids: Vec<u64>) {
        let compact: HashSet<u64> = ids.into_iter().collect();
        let full = self
            .jobs
            .iter()
            .filter(|(id, j)| {
                j.view.array_task.is_some() && !compact.contains(id) && !self.listed.contains(**id)
            })
            .map(|(id, _)| *id)
            .collect();
        self.task_rows = TaskRows { compact, full };
    }

    /// A task that ended and left memory: nothing more is written of it.
    pub(super) fn forget_task_row(&mut self, id: u64) {
        self.task_rows.compact.remove(&id);
        self.task_rows.full.remove(&id);
    }

    /// Takes the array tasks that are written compactly this round out of `rows` (and
    /// their events out of `journal`), and says which compact tasks get job rows.
    pub fn compact_tasks(&mut self, rows: &mut Rows, journal: &mut Journal) -> CompactWrites {
        let mut out = CompactWrites::default();
        let mut candidates: Vec<u64> = rows
            .jobs
            .iter()
            .copied()
            .filter(|id| !self.task_rows.full.contains(id))
            .filter(|id| {
                self.jobs
                    .get(id)
                    .is_some_and(|j| j.view.array_task.is_some())
            })
            .collect();
        // A compact task with events and no change: written for its events.
        for (id, _) in &journal.events {
            if self.task_rows.compact.contains(id) && !rows.jobs.contains(id) {
                candidates.push(*id);
            }
        }
        if candidates.is_empty() {
            return out;
        }
        candidates.sort_unstable();
        candidates.dedup();
        let mut arrays: BTreeMap<u64, Option<StoredJob>> = BTreeMap::new();
        let mut at: HashMap<u64, usize> = HashMap::new();
        for id in candidates {
            let Some(job) = self.jobs.get(&id) else {
                continue;
            };
            let Some(task) = job.view.array_task else {
                continue;
            };
            let array = arrays
                .entry(task.array_id)
                .or_insert_with(|| self.jobs.get(&task.array_id).map(|a| a.to_row()));
            let compact = array
                .as_ref()
                .and_then(|a| compact_if_exact(a, job.to_row()));
            match compact {
                Some(t) => {
                    rows.jobs.remove(&id);
                    self.task_rows.compact.insert(id);
                    at.insert(id, out.tasks.len());
                    out.tasks.push(t);
                }
                None => {
                    rows.jobs.insert(id);
                    if self.task_rows.compact.remove(&id) {
                        out.promoted.push(id);
                    }
                    self.task_rows.full.insert(id);
                }
            }
        }
        if !at.is_empty() {
            let events = std::mem::take(&mut journal.events);
            for (id, e) in events {
                match at.get(&id) {
                    Some(&i) => out.tasks[i].events.push(e),
                    None => journal.events.push((id, e)),
                }
            }
        }
        out
    }
}
