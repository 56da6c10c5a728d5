//! What a command needs from the store, read in one step before it runs. An ended job
//! has left memory (its row is committed), so a command may need: the rows of ended jobs
//! it names, an ended array's task by index, a submission's dependencies and client
//! retry keys, a list's page of ended jobs, or usage sums. The state says what it lacks
//! (read-only: `wants_row`, `ended_query`, `usage_ask`...); everything is read here; then
//! the command runs on memory alone with what was read handed in (`handle`). No command
//! goes back to the store while it runs.

use gpusched_store::{EndedQuery, Store, UsageSum};
use gpusched_wire::JobSubmit;

use super::{unavailable, Cmd};
use crate::record::JobRecord;
use crate::state::usage::UsageAsk;
use crate::state::{Fail, State, Who};

/// The rows one command needs, read before it runs.
#[derive(Default)]
pub(super) struct Fetched {
    /// Rows of ended jobs the command names, for the state to hold for this round.
    pub jobs: Vec<JobRecord>,
    /// Client retry keys (`user/token`) of ended jobs, with their job id.
    pub tokens: Vec<(String, u64)>,
    /// A list's page of ended jobs (`List`, `Tasks`).
    pub page: Vec<JobRecord>,
    /// What a usage report needs of ended jobs.
    pub usage: Option<UsageRows>,
    /// An ended job's steps (`Get`): (job, its steps as stored).
    pub steps: Option<(u64, Vec<gpusched_store::StoredStep>)>,
}

/// The store's part of a usage report.
pub(super) enum UsageRows {
    /// Over all time: the state keeps the sums as jobs end; `rows` are read once, when
    /// it has none yet.
    AllTime {
        ask: UsageAsk,
        rows: Option<Vec<(String, UsageSum)>>,
    },
    /// Since a time: the sums of the jobs that ended in that window.
    Since(Vec<UsageSum>),
}

/// Reads what `cmd` needs that the state lacks. A refusal (a store that cannot be read,
/// a list or usage request the state turns down) is the command's answer.
pub(super) async fn fetch(state: &State, store: &mut Store, cmd: &Cmd) -> Result<Fetched, Fail> {
    let mut f = Fetched::default();
    // Commands about one job may be about an ended one.
    let mut ids = match cmd {
        Cmd::Get(id, ..)
        | Cmd::Cancel(id, ..)
        | Cmd::Checkpoint(id, ..)
        | Cmd::Wait(id, ..)
        | Cmd::Logs(id, ..)
        | Cmd::Events(id, ..)
        | Cmd::Hold(id, ..)
        | Cmd::Release(id, ..)
        | Cmd::Update(id, ..)
        | Cmd::Tasks(id, ..)
        | Cmd::Task(id, ..)
        | Cmd::CancelTask(id, ..) => vec![*id],
        Cmd::CancelMany(ids, ..) => ids.clone(),
        Cmd::Submit(..) | Cmd::Workflow(..) => dependencies(submitted(cmd)),
        _ => Vec::new(),
    };
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        if state.wants_row(id) {
            let row = store.job(id).await.map_err(unavailable)?;
            f.jobs.extend(row.map(JobRecord::from_row));
        }
    }
    // The steps of an ended job shown whole (the live jobs' are in memory).
    if let Cmd::Get(id, ..) = cmd {
        if f.jobs.iter().any(|j| j.view.id == *id) {
            let steps = store.job_steps(*id).await.map_err(unavailable)?;
            f.steps = Some((*id, steps));
        }
    }
    match cmd {
        // One task of an array that ended and left memory: its row, by array and index.
        Cmd::Task(id, index, ..) | Cmd::CancelTask(id, index, ..)
            if state.task_id(*id, *index).is_none() =>
        {
            let row = store.task(*id, *index).await.map_err(unavailable)?;
            f.jobs.extend(row.map(JobRecord::from_row));
        }
        Cmd::Submit(_, who, ..) | Cmd::Workflow(_, who, ..) => {
            f.tokens = tokens(state, store, submitted(cmd), who).await?;
        }
        Cmd::List(q, who, _) => f.page = page(store, state.ended_query(q, who)?).await?,
        Cmd::Tasks(id, q, who, _) => f.page = page(store, state.task_query(*id, q, who)?).await?,
        Cmd::Usage(q, who, _) => {
            f.usage = match state.usage_ask(q, who)? {
                Some(a) if a.by_account => Some(UsageRows::Since(
                    store
                        .ended_usage_by_account(a.since_ms, a.user.as_deref())
                        .await
                        .map_err(unavailable)?,
                )),
                Some(ask) if ask.since_ms == 0 => {
                    let rows = match state.wants_all_time_usage() {
                        true => Some(
                            store
                                .ended_usage_by_user_and_queue()
                                .await
                                .map_err(unavailable)?,
                        ),
                        false => None,
                    };
                    Some(UsageRows::AllTime { ask, rows })
                }
                Some(a) => Some(UsageRows::Since(
                    store
                        .ended_usage(a.since_ms, a.by_queue, a.user.as_deref())
                        .await
                        .map_err(unavailable)?,
                )),
                None => None,
            }
        }
        _ => {}
    }
    Ok(f)
}

/// The jobs a submission or a workflow's steps submit.
fn submitted(cmd: &Cmd) -> Vec<&JobSubmit> {
    match cmd {
        Cmd::Submit(jobs, ..) => jobs.iter().collect(),
        Cmd::Workflow(wf, ..) => wf.steps.iter().map(|s| &s.job).collect(),
        _ => Vec::new(),
    }
}

/// Every job a submission runs after.
fn dependencies(jobs: Vec<&JobSubmit>) -> Vec<u64> {
    jobs.into_iter()
        .flat_map(|j| j.after.iter().chain(&j.after_any).chain(&j.after_notok))
        .copied()
        .collect()
}

/// The submission's retry keys (`user/token`) that are not a live job's, found in the
/// store.
async fn tokens(
    state: &State,
    store: &mut Store,
    jobs: Vec<&JobSubmit>,
    who: &Who,
) -> Result<Vec<(String, u64)>, Fail> {
    let mut found = Vec::new();
    for j in jobs {
        let Some(t) = &j.client_token else { continue };
        let user = j.user.as_deref().unwrap_or(&who.user);
        let key = format!("{user}/{t}");
        if state.wants_token(&key) && !found.iter().any(|(k, _)| *k == key) {
            if let Some(id) = store.job_by_token(&key).await.map_err(unavailable)? {
                found.push((key, id));
            }
        }
    }
    Ok(found)
}

/// A list's page of ended jobs (`None`: no ended job can be on it).
async fn page(store: &mut Store, query: Option<EndedQuery>) -> Result<Vec<JobRecord>, Fail> {
    match query {
        Some(q) => Ok(store
            .ended_jobs(&q)
            .await
            .map_err(unavailable)?
            .into_iter()
            .map(JobRecord::from_row)
            .collect()),
        None => Ok(Vec::new()),
    }
}
