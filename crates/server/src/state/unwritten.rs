//! Array tasks kept in their array's row until their first change (schema 10).
//!
//! An array materialises tasks ahead of need: to start in this pass, or to wait behind a
//! running task and start the moment it ends (`follow.rs`). Each used to get a row of its
//! own at once, then again when it started and ended: 2.5 job rows per trivial task, the
//! largest part of the server's CPU per task (docs/benchmarks-log.md (z), (za)). Until it
//! changes, such a task is exactly what `task_record` makes of its array, its id and its
//! index, queued behind the job it follows; so three numbers in its array's row
//! (`ArrayProgress::unwritten`) say all its row would. It gets its row at its first other
//! change (placed, started, cancelled, sent back...), and leaves the list in the same
//! transaction. The agent is told of a follower only after the commit that lists it.
//!
//! One check carries it, made at the end of every round for each listed task the round
//! touched: the record in memory must equal the one a restart rebuilds from the array
//! (`rebuilt`, compared without building it: [`Template`]); any other gets its row. An array whose own change would change its tasks
//! (an update of a pending array) has every listed task checked. The state tests check
//! the same from the store's side after every round of every scenario.
//!
//! At most [`UNWRITTEN_PER_ARRAY`] are listed per array: the array's row is rewritten with
//! the whole list whenever it changes, so the list stays small and the tasks past it get
//! rows as before.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::record::JobRecord;
use gpusched_store::UnwrittenTask;
use gpusched_wire::JobState;

use super::array::{task_record, INDEX_VAR};
use super::State;
use gpusched_wire::array::ArrayTask;

/// The most tasks one array's row lists (about 40 bytes each in its JSON).
pub(super) const UNWRITTEN_PER_ARRAY: usize = 256;

/// The task a restart makes of an array's list entry.
pub(super) fn rebuilt(array: &JobRecord, entry: &UnwrittenTask) -> JobRecord {
    let mut task = task_record(array, entry.id, entry.index);
    task.behind = entry.behind;
    task
}

/// The list entry for a task (None for a job that is no array task).
fn entry_of(task: &JobRecord) -> Option<UnwrittenTask> {
    Some(UnwrittenTask {
        id: task.view.id,
        index: task.view.array_task?.index,
        behind: task.behind,
    })
}

/// The tasks the live arrays among `jobs` (as the store holds them) list and that have no
/// row there, rebuilt. Only live rows are loaded, so this rests on an invariant: a task
/// leaves its array's list in the transaction that first writes its row (and only the
/// round writes either), so a listed task never has a row, ended or not. One that has
/// a live row is the row's.
pub(super) fn rebuild_listed(jobs: &[JobRecord]) -> Vec<JobRecord> {
    let listing: Vec<(&JobRecord, &[UnwrittenTask])> = jobs
        .iter()
        .filter(|j| !j.view.state.is_terminal())
        .filter_map(|j| Some((j, j.array_progress.as_deref()?.unwritten.as_slice())))
        .filter(|(_, list)| !list.is_empty())
        .collect();
    if listing.is_empty() {
        return Vec::new();
    }
    let rows: HashSet<u64> = jobs.iter().map(|j| j.view.id).collect();
    listing
        .into_iter()
        .flat_map(|(array, list)| {
            list.iter()
                .filter(|e| !rows.contains(&e.id))
                .map(move |e| rebuilt(array, e))
        })
        .collect()
}

/// Which tasks are listed in their array's row instead of rows of their own: each with
/// its array, and each array's list. Kept apart from the arrays' runs (`array.rs`), whose
/// entry goes when the array ends, so the round that ends it still finds them.
#[derive(Debug, Default)]
pub(super) struct Listed {
    in_array: BTreeMap<u64, u64>,
    by_array: BTreeMap<u64, BTreeSet<u64>>,
}

impl Listed {
    /// Whether array `array_id`'s row has room for one more task.
    fn has_room(&self, array_id: u64) -> bool {
        self.by_array
            .get(&array_id)
            .is_none_or(|l| l.len() < UNWRITTEN_PER_ARRAY)
    }

    fn insert(&mut self, array_id: u64, id: u64) {
        self.by_array.entry(array_id).or_default().insert(id);
        self.in_array.insert(id, array_id);
    }

    /// Takes task `id` off its array's list.
    fn remove(&mut self, id: u64) {
        let Some(array_id) = self.in_array.remove(&id) else {
            return;
        };
        if let Some(list) = self.by_array.get_mut(&array_id) {
            list.remove(&id);
            if list.is_empty() {
                self.by_array.remove(&array_id);
            }
        }
    }

    /// Whether task `id` is listed in its array's row.
    pub(super) fn contains(&self, id: u64) -> bool {
        self.in_array.contains_key(&id)
    }

    /// The tasks array `array_id`'s row lists.
    fn of(&self, array_id: u64) -> impl Iterator<Item = u64> + '_ {
        self.by_array.get(&array_id).into_iter().flatten().copied()
    }
}

impl State {
    /// Task `id` of array `array_id` was just made (or rebuilt at load): its array's row
    /// lists it while there is room. False when there is none (its row is written).
    pub(super) fn list_unwritten(&mut self, array_id: u64, id: u64) -> bool {
        let (Some(array), Some(run)) = (self.jobs.get(&array_id), self.arrays.get_mut(&array_id))
        else {
            return false;
        };
        if !self.listed.has_room(array_id) {
            return false;
        }
        // What the task was made from, to notice a change of it (an update in this
        // very round included).
        if run.template.is_none() {
            run.template = Some(Box::new(task_record(array, 0, 0)));
        }
        self.listed.insert(array_id, id);
        true
    }

    /// Before the round's rows are taken: each listed task the round touched stays in its
    /// array's list (its own row unmarked) if a restart would rebuild it as it is, else
    /// leaves the list and gets its row; each array whose list changed is marked. The
    /// work follows the round's: the smaller of the touched rows and the listed tasks
    /// is walked, and an array's whole list only when the array changed.
    pub(super) fn keep_unwritten_in_arrays(&mut self) {
        if self.listed.in_array.is_empty() {
            return;
        }
        let touched = self.jobs.touched();
        let mut check: BTreeSet<u64> = both(touched, &self.listed.in_array);
        for array_id in both(touched, &self.listed.by_array) {
            // An array that ended (its run is gone) lists nothing; one whose tasks would
            // now be made otherwise has each listed task checked.
            let template = self
                .jobs
                .get(&array_id)
                .map(|a| Box::new(task_record(a, 0, 0)));
            let recheck = match (self.arrays.get_mut(&array_id), template) {
                (Some(run), Some(template)) => {
                    let changed = run.template.as_ref().is_some_and(|t| *t != template);
                    run.template = Some(template);
                    changed
                }
                _ => true,
            };
            if recheck {
                check.extend(self.listed.of(array_id));
            }
        }
        let mut relist = BTreeSet::new();
        // Task 0 of each array checked, made once per array and round.
        let mut templates: BTreeMap<u64, Option<Template>> = BTreeMap::new();
        for id in check {
            let Some(&array_id) = self.listed.in_array.get(&id) else {
                continue;
            };
            relist.insert(array_id);
            let template = templates
                .entry(array_id)
                .or_insert_with(|| self.template_of(array_id));
            if self.rebuilds_as_is(template.as_mut(), id) {
                self.jobs.stored_elsewhere(&id);
                continue;
            }
            self.listed.remove(id);
            // It changed, or its array did: its row is written this round.
            self.jobs.store_itself(&id);
        }
        for array_id in relist {
            self.relist(array_id);
        }
    }

    /// The array's row lists what [`Listed`] holds of it (marked only if that changed).
    pub(super) fn relist(&mut self, array_id: u64) {
        let list: Vec<UnwrittenTask> = self
            .listed
            .of(array_id)
            .filter_map(|id| entry_of(self.jobs.get(&id)?))
            .collect();
        let stored = self
            .jobs
            .get(&array_id)
            .and_then(|a| a.array_progress.as_deref())
            .map(|p| &p.unwritten);
        if stored.is_some_and(|l| *l != list) {
            if let Some(p) = self
                .jobs
                .get_mut(&array_id)
                .and_then(|a| a.array_progress.as_deref_mut())
            {
                p.unwritten = list;
            }
        }
    }

    /// What the listed tasks of array `array_id` are checked against: None where a
    /// restart would rebuild none of them (the array ended, or its run is gone).
    fn template_of(&self, array_id: u64) -> Option<Template> {
        let array = self.jobs.get(&array_id)?;
        if !self.arrays.contains_key(&array_id) || array.view.state.is_terminal() {
            return None;
        }
        Some(Template::new(array))
    }

    /// Whether task `id` is still what a restart would rebuild from its array, whose
    /// `template` is given (`rebuilt(array, entry_of(task)) == task`).
    fn rebuilds_as_is(&mut self, template: Option<&mut Template>, id: u64) -> bool {
        let (Some(template), Some(task)) = (template, self.jobs.get_mut_unstored(&id)) else {
            return false;
        };
        task.view.state == JobState::Pending && template.makes(task)
    }
}

/// Task 0 of an array as `task_record` makes it, to tell whether another task of it is
/// still exactly what `task_record` makes (this runs for every listed task a round
/// touches, and building each task again to compare was most of its cost).
pub(super) struct Template {
    record: JobRecord,
    /// Task 0's name, lent to the task compared.
    name: String,
    /// Task 0's index variable, lent likewise.
    index_var: String,
}

impl Template {
    pub(super) fn new(array: &JobRecord) -> Self {
        let record = task_record(array, 0, 0);
        let name = record.view.name.clone();
        let index_var = record.env.get(INDEX_VAR).cloned().unwrap_or_default();
        Template {
            record,
            name,
            index_var,
        }
    }

    /// Whether `task` is what `task_record` makes of the template's array under the
    /// task's own id and index, with its own `behind` (a restart takes it from the list
    /// entry). What `task_record` sets per task (id, name, index variable and index) is
    /// checked against the index, then swapped for task 0's while the rest is compared
    /// whole, and given back: the same answer as building the task and comparing,
    /// without building it.
    pub(super) fn makes(&mut self, task: &mut JobRecord) -> bool {
        let Some(at) = task.view.array_task else {
            return false;
        };
        let index = at.index.to_string();
        let prefix = self.name.strip_suffix("[0]").unwrap_or_default();
        let named = task
            .view
            .name
            .strip_prefix(prefix)
            .and_then(|r| r.strip_prefix('['))
            .and_then(|r| r.strip_suffix(']'))
            == Some(index.as_str());
        if !named || task.env.get(INDEX_VAR) != Some(&index) {
            return false;
        }
        let lend = |t: &mut JobRecord, name: &mut String, var: &mut String| {
            std::mem::swap(&mut t.view.name, name);
            if let Some(v) = t.env.get_mut(INDEX_VAR) {
                std::mem::swap(v, var);
            }
        };
        let (id, behind) = (task.view.id, task.behind.take());
        task.view.id = self.record.view.id;
        task.view.array_task = Some(ArrayTask { index: 0, ..at });
        lend(task, &mut self.name, &mut self.index_var);
        let same = *task == self.record;
        lend(task, &mut self.name, &mut self.index_var);
        task.view.id = id;
        task.view.array_task = Some(at);
        task.behind = behind;
        same
    }
}

/// The keys of `map` that are in `set`, walking the smaller of the two.
fn both<V>(set: &BTreeSet<u64>, map: &BTreeMap<u64, V>) -> BTreeSet<u64> {
    if set.len() <= map.len() {
        set.iter()
            .filter(|k| map.contains_key(k))
            .copied()
            .collect()
    } else {
        map.keys().filter(|k| set.contains(k)).copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Template::makes` gives the answer of building the task and comparing, for a
    /// task as made and after a change of each field `task_record` sets per task, and of
    /// others.
    #[test]
    fn a_template_tells_a_task_as_made_from_one_changed() {
        let mut array = crate::record::row::tests::full_record();
        array.view.array_task = None;
        array.array_progress = None;
        let made = {
            let mut t = task_record(&array, 57, 12);
            t.behind = std::num::NonZeroU64::new(56);
            t
        };
        type Change = fn(&mut JobRecord);
        let changes: [(&str, Change); 10] = [
            ("nothing", |_| {}),
            ("id", |t| t.view.id += 1),
            ("name", |t| t.view.name.push('x')),
            ("name of another index", |t| {
                t.view.name = t.view.name.replace("[12]", "[13]")
            }),
            ("index", |t| t.view.array_task.as_mut().unwrap().index += 1),
            ("array id", |t| {
                t.view.array_task.as_mut().unwrap().array_id += 1
            }),
            ("index variable", |t| {
                t.env.insert(INDEX_VAR.into(), "13".into());
            }),
            ("no index variable", |t| {
                t.env.remove(INDEX_VAR);
            }),
            ("priority", |t| t.view.priority += 1),
            ("another variable", |t| {
                t.env.insert("OTHER".into(), "1".into());
            }),
        ];
        let mut template = Template::new(&array);
        for (what, change) in changes {
            let mut task = made.clone();
            change(&mut task);
            let built = match task.view.array_task {
                Some(at) => {
                    let mut b = task_record(&array, task.view.id, at.index);
                    b.behind = task.behind;
                    b == task
                }
                None => false,
            };
            let before = task.clone();
            assert_eq!(template.makes(&mut task), built, "{what}");
            assert_eq!(task, before, "{what}: the task is given back as it was");
        }
        assert!(template.makes(&mut made.clone()));
    }
}
