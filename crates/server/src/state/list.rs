//! `list`: a page of jobs, newest first, the live ones from memory merged with the
//! store's page of ended ones.

use crate::record::JobRecord;
use gpusched_wire::{JobList, JobListQuery, JobState};

use super::privacy;
use super::{Fail, State, Who};

/// A list's query, checked (`State::list_ask`).
struct ListAsk {
    states: Option<Vec<JobState>>,
    limit: usize,
    range: Option<(u64, u64)>,
}

impl State {
    /// What a list asks for, checked: the states (None: all), the page size, and the
    /// ids `[from, to)` (None: no id can match).
    fn list_ask(q: &JobListQuery) -> Result<ListAsk, Fail> {
        let states: Option<Vec<JobState>> = match q.state.as_deref() {
            None | Some("") | Some("all") => None,
            Some("active") => Some(vec![
                JobState::Pending,
                JobState::Starting,
                JobState::Running,
            ]),
            Some(list) => Some(
                list.split(',')
                    .map(|s| {
                        JobState::parse(s).ok_or_else(|| {
                            Fail::BadRequest(format!(
                                "unknown state `{s}` in `state`; use {}, `active` or `all`",
                                JobState::ALL.map(|s| s.name()).join(", ")
                            ))
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        let limit = q.limit.unwrap_or(1000);
        if limit == 0 || limit > 100_000 {
            return Err(Fail::BadRequest(
                "`limit` must be between 1 and 100000".into(),
            ));
        }
        // Newest first, ids in [after + 1, before).
        let from = q.after.map_or(Some(0), |a| a.checked_add(1));
        let to = q.before.unwrap_or(u64::MAX);
        let range = from.filter(|&f| f < to).map(|f| (f, to));
        Ok(ListAsk {
            states,
            limit,
            range,
        })
    }

    /// The page of ended jobs the store must give for list `q` by `who` (None: the list
    /// can hold no ended job). One more than the page, to know whether another follows.
    pub fn ended_query(
        &self,
        q: &JobListQuery,
        who: &Who,
    ) -> Result<Option<gpusched_store::EndedQuery>, Fail> {
        let ask = Self::list_ask(q)?;
        let Some((from, to)) = ask.range else {
            return Ok(None);
        };
        let states: Vec<JobState> = match &ask.states {
            None => Vec::new(),
            Some(s) => {
                let ended: Vec<JobState> = s.iter().copied().filter(|s| s.is_terminal()).collect();
                if ended.is_empty() {
                    return Ok(None);
                }
                ended
            }
        };
        // Under --private-jobs a user sees only their own jobs: the store filters them.
        let user = match (&q.user, self.cfg.private_jobs && !who.admin) {
            (Some(u), true) if u != &who.user => return Ok(None),
            (_, true) => Some(who.user.clone()),
            (u, false) => u.clone(),
        };
        Ok(Some(gpusched_store::EndedQuery {
            from,
            to,
            limit: ask.limit.saturating_add(1),
            states,
            user,
            node: q.node.clone(),
            tasks: if Self::lists_tasks(q) {
                gpusched_store::TaskRows::All
            } else {
                gpusched_store::TaskRows::None
            },
        }))
    }

    /// Whether a list shows arrays' tasks: an array is one item, its tasks only with
    /// `tasks=true`, or when asking by node, where tasks are what runs.
    fn lists_tasks(q: &JobListQuery) -> bool {
        q.tasks.unwrap_or(false) || q.node.is_some()
    }

    /// A page of jobs, newest first: the live ones (and those that ended this round)
    /// from memory, merged with `stored`, the store's page of ended jobs for the same
    /// query (`ended_query`).
    pub fn list(
        &self,
        q: &JobListQuery,
        who: &Who,
        stored: Vec<JobRecord>,
    ) -> Result<JobList, Fail> {
        let tasks = Self::lists_tasks(q);
        self.list_where(q, who, stored, &|j: &JobRecord| {
            tasks || j.view.array_task.is_none()
        })
    }

    /// [`Self::list`] of the jobs `keep` keeps (`stored` was read with the same rule).
    pub(super) fn list_where(
        &self,
        q: &JobListQuery,
        who: &Who,
        stored: Vec<JobRecord>,
        keep: &dyn Fn(&JobRecord) -> bool,
    ) -> Result<JobList, Fail> {
        let ask = Self::list_ask(q)?;
        let Some((from, to)) = ask.range else {
            return Ok(JobList {
                jobs: Vec::new(),
                next_before: None,
            });
        };
        let (states, limit) = (ask.states, ask.limit);
        let matches = |j: &&JobRecord| {
            keep(j)
                && states.as_ref().is_none_or(|s| s.contains(&j.view.state))
                && q.user.as_ref().is_none_or(|u| &j.view.user == u)
                && self.visible(&j.view, who)
                && q.node.as_ref().is_none_or(|n| {
                    j.view.node.as_ref() == Some(n) || j.view.parts.iter().any(|p| &p.node == n)
                })
        };
        let live: Vec<&JobRecord> = self
            .jobs
            .range(from..to)
            .rev()
            .map(|(_, j)| &**j)
            .filter(matches)
            .take(limit.saturating_add(1))
            .collect();
        // Both sides newest first: merge them (memory wins a tie; it cannot happen,
        // ended jobs leave memory before the next round reads the store).
        let stored: Vec<&JobRecord> = stored
            .iter()
            .filter(|j| j.view.id >= from && j.view.id < to)
            .filter(matches)
            .collect();
        let mut merged: Vec<&JobRecord> = Vec::with_capacity(limit.min(live.len() + stored.len()));
        let (mut a, mut b) = (live.into_iter().peekable(), stored.into_iter().peekable());
        while merged.len() <= limit {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.view.id == y.view.id => {
                    b.next();
                    a.next()
                }
                (Some(x), Some(y)) if x.view.id > y.view.id => a.next(),
                (Some(_), Some(_)) | (None, Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, None) => None,
            };
            match next {
                Some(j) => merged.push(j),
                None => break,
            }
        }
        // The cursor only when an older match really exists, so the last page says so.
        let next_before = if merged.len() > limit {
            merged.truncate(limit);
            merged.last().map(|j| j.view.id)
        } else {
            None
        };
        let ctx = merged
            .iter()
            .any(|j| j.view.state == JobState::Pending)
            .then(|| self.reason_context());
        let jobs = merged
            .into_iter()
            .map(|j| {
                let mut v = self.view_with(j, ctx.as_ref());
                privacy::redact(&mut v, who);
                v
            })
            .collect();
        Ok(JobList { jobs, next_before })
    }
}
