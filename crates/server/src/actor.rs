//! The one task that owns the state and the store. It takes every waiting command at
//! once, applies them in memory, runs the core, writes everything they touched in ONE
//! transaction (fsync'd), and only then answers. Batching commits this way (group
//! commit) is what lets a durable store keep up with thousands of jobs a second.
//!
//! A round whose commit fails (a full disk, an I/O error) is undone as a whole: its
//! requests are answered 503, its in-memory changes are dropped and the state is
//! reloaded from the store, which holds exactly what was ever acknowledged.

use std::time::Instant;

use gpusched_store::SqliteStore;
use gpusched_wire::history::{AuditList, AuditQuery, JobEvents};
use gpusched_wire::{
    CancelManyResult, CancelResult, JobList, JobListQuery, JobSubmit, JobView, NodeList, PollQuery,
    QueueList, Register, Registered, Report, Submitted, TokenCreate, TokenCreated, TokenList,
    TokenView, UsageQuery, UsageReport,
};
use tokio::sync::{mpsc, oneshot};

use crate::auth::SharedTokens;
use crate::clock::Now;
use crate::groups::UserGroups;
use crate::state::{Fail, LogAsk, LogTarget, PollResult, Rows, State, WaitResult, Who};

pub type Reply<T> = oneshot::Sender<Result<T, Fail>>;

/// What the HTTP layer asks of the state.
pub enum Cmd {
    /// With the Unix groups of the users the jobs are for (looked up by the HTTP layer:
    /// the state task never blocks on a directory lookup).
    Submit(Vec<JobSubmit>, Who, UserGroups, Reply<Submitted>),
    List(JobListQuery, Who, Reply<JobList>),
    Get(u64, Who, Reply<JobView>),
    Cancel(u64, Who, Reply<CancelResult>),
    /// An array's started tasks; one task by index; cancel one task (`state/array_ops.rs`).
    Tasks(u64, JobListQuery, Who, Reply<JobList>),
    Task(u64, u32, Who, Reply<JobView>),
    CancelTask(u64, u32, Who, Reply<CancelResult>),
    /// Several jobs cancelled in one round (one commit, one scheduling pass after all).
    CancelMany(Vec<u64>, Who, Reply<CancelManyResult>),
    /// The job saved a checkpoint now (it told the API, not the file).
    Checkpoint(u64, Who, Reply<JobView>),
    CreateToken(TokenCreate, Who, Reply<TokenCreated>),
    ListTokens(Reply<TokenList>),
    Usage(UsageQuery, Who, Reply<UsageReport>),
    Queues(Reply<QueueList>),
    /// A new queue configuration (SIGHUP).
    Reload(crate::queues::Queues, Reply<()>),
    RevokeToken(u64, Who, Reply<TokenView>),
    Wait(u64, Who, Reply<WaitResult>),
    /// Where one attempt's output is (None: the current attempt), and the job.
    Logs(u64, LogAsk, Who, Reply<(LogTarget, JobView)>),
    Nodes(Who, Reply<NodeList>),
    /// An admin drains a node, or resumes it (`state/health.rs`).
    Drain(
        String,
        gpusched_wire::DrainRequest,
        Who,
        Reply<gpusched_wire::NodeView>,
    ),
    Resume(String, Who, Reply<gpusched_wire::NodeView>),
    /// A job's timeline and the audit log: checked by the state, read from the store
    /// after the round's commit (so they include it; `state/history.rs`).
    Events(u64, Who, Reply<JobEvents>),
    Audit(AuditQuery, Who, Reply<AuditList>),
    /// Liveness: answered when the state task runs.
    Ping(Reply<()>),
    /// The levels `/metrics` shows (rendered by the caller, off the state task).
    Metrics(Reply<crate::metrics::View>),
    Register(Register, Reply<Registered>),
    /// `true`: answer with the desired state even if the generation did not move.
    Poll(PollQuery, bool, Reply<PollResult>),
    Report(Report, Reply<()>),
    /// Periodic: expire silent nodes.
    Tick,
}

/// Commands taken per round at most, so one round's latency stays bounded.
const MAX_ROUND: usize = 8192;

/// Sends a command's answer once the round is settled: its own result after a good
/// commit, the commit's failure (`Some`) after a failed one.
type Answer = Box<dyn FnOnce(Option<&Fail>) + Send>;

/// A read of the history, answered from the store once the round is committed.
enum Read {
    Events(u64, Reply<JobEvents>),
    Audit(AuditQuery, Reply<AuditList>),
}

impl Read {
    /// Answers from the store (a failed read is a 503: nothing was wrong with the ask).
    async fn answer(self, store: &mut SqliteStore) {
        let unavailable = |e: gpusched_store::StoreError| {
            Fail::Unavailable(format!(
                "the server could not read its history from the store ({e}); retry"
            ))
        };
        match self {
            Read::Events(id, r) => {
                let v = store.job_events(id).await.map_err(unavailable);
                let _ = r.send(v);
            }
            Read::Audit(q, r) => {
                let v = store.audit(&q).await.map_err(unavailable);
                let _ = r.send(v);
            }
        }
    }

    fn refuse(self, f: &Fail) {
        match self {
            Read::Events(_, r) => drop(r.send(Err(f.clone()))),
            Read::Audit(_, r) => drop(r.send(Err(f.clone()))),
        }
    }
}

fn answer<T: Send + 'static>(out: &mut Vec<Answer>, reply: Reply<T>, value: Result<T, Fail>) {
    out.push(Box::new(move |failed: Option<&Fail>| {
        let _ = reply.send(match failed {
            Some(f) => Err(f.clone()),
            None => value,
        });
    }));
}

pub async fn run(
    mut state: State,
    mut store: SqliteStore,
    mut rx: mpsc::Receiver<Cmd>,
    tokens: SharedTokens,
) {
    let mut answers: Vec<Answer> = Vec::new();
    let mut reads: Vec<Read> = Vec::new();
    let mut cmds = Vec::with_capacity(MAX_ROUND);
    let mut last_round = Instant::now();
    while rx.recv_many(&mut cmds, MAX_ROUND).await > 0 {
        // The one reading of the clock for this round: the state never reads it itself.
        let now = Now::read();
        state.begin_round(now);
        // Heartbeats queued in this round count before any node is judged silent; and
        // if this task itself was stalled, the silence was ours, not the nodes'.
        let mut tick = false;
        for cmd in cmds.drain(..) {
            match cmd {
                Cmd::Tick => tick = true,
                cmd => handle(&mut state, cmd, &mut answers, &mut reads),
            }
        }
        if tick {
            state.expire_nodes(now.instant.saturating_duration_since(last_round));
            // Time alone can make a reclaim possible (protections expire).
            state.schedule_if_quotas();
        }
        let pass = state.pass_due().then(Instant::now);
        state.schedule();
        state.cfg.metrics.pass_took(pass);
        let rows = state.take_touched();
        let journal = state.take_journal();
        let tokens_changed = !rows.tokens.is_empty();
        if let Err(e) = persist(&state, rows, journal, &mut store).await {
            // Nothing of this round was acknowledged, so nothing of it may survive:
            // refuse its requests, then forget it by reloading what is durable.
            let dir = state.cfg.data_dir.clone();
            tracing::error!(
                "saving a round failed ({e}); its requests are refused and the state is \
                 reloaded from the store"
            );
            let fail = Fail::Unavailable(format!(
                "the server could not save this change ({e}), so it was not made; if the \
                 disk holding {} is full, free space there; then retry",
                dir.display()
            ));
            for a in answers.drain(..) {
                a(Some(&fail));
            }
            for r in reads.drain(..) {
                r.refuse(&fail);
            }
            state.cfg.metrics.discard_round();
            let (reloaded, reopened) = reload(state, store).await;
            state = reloaded;
            store = reopened;
            let all: Vec<_> = state.tokens.values().cloned().collect();
            tokens
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .replace(&all);
            last_round = Instant::now();
            continue;
        }
        state.cfg.metrics.settle_round();
        if tokens_changed {
            let all: Vec<_> = state.tokens.values().cloned().collect();
            tokens
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .replace(&all);
        }
        for a in answers.drain(..) {
            a(None);
        }
        for r in reads.drain(..) {
            r.answer(&mut store).await;
        }
        for (w, view) in state.take_ended_waiters() {
            let _ = w.send(view);
        }
        for name in std::mem::take(&mut state.touched.bumped) {
            if let Some(n) = state.nodes.get(&name) {
                n.watch.send_replace(n.gen);
            }
        }
        last_round = Instant::now();
    }
}

fn handle(state: &mut State, cmd: Cmd, out: &mut Vec<Answer>, reads: &mut Vec<Read>) {
    match cmd {
        Cmd::Submit(jobs, who, groups, r) => {
            let v = state.submit(jobs, &who, &groups);
            answer(out, r, v)
        }
        Cmd::List(q, who, r) => {
            let v = state.list(&q, &who);
            answer(out, r, v)
        }
        Cmd::Get(id, who, r) => {
            let v = state.get(id, &who);
            answer(out, r, v)
        }
        Cmd::Cancel(id, who, r) => {
            let v = state.cancel(id, &who);
            answer(out, r, v)
        }
        Cmd::Tasks(id, q, who, r) => {
            let v = state.list_tasks(id, &q, &who);
            answer(out, r, v)
        }
        Cmd::Task(id, index, who, r) => {
            let v = state.task_view(id, index, &who);
            answer(out, r, v)
        }
        Cmd::CancelTask(id, index, who, r) => {
            let v = state.cancel_task(id, index, &who);
            answer(out, r, v)
        }
        Cmd::CancelMany(ids, who, r) => {
            let v = state.cancel_many(&ids, &who);
            answer(out, r, v)
        }
        Cmd::Checkpoint(id, who, r) => {
            let v = state.checkpoint(id, &who);
            answer(out, r, v)
        }
        Cmd::CreateToken(req, who, r) => {
            let v = state.create_token(req, &who);
            answer(out, r, v)
        }
        Cmd::Queues(r) => {
            let v = Ok(state.queue_list());
            answer(out, r, v)
        }
        Cmd::Reload(q, r) => {
            let v = state.reload_queues(q).map_err(Fail::BadRequest);
            answer(out, r, v)
        }
        Cmd::Usage(q, who, r) => {
            let v = state.usage(&q, &who);
            answer(out, r, v)
        }
        Cmd::ListTokens(r) => {
            let v = Ok(state.list_tokens());
            answer(out, r, v)
        }
        Cmd::RevokeToken(id, who, r) => {
            let v = state.revoke_token(id, &who);
            answer(out, r, v)
        }
        Cmd::Wait(id, who, r) => {
            let v = state.wait(id, &who);
            answer(out, r, v)
        }
        Cmd::Logs(id, ask, who, r) => {
            let v = state
                .log_target(id, &ask, &who)
                .and_then(|t| Ok((t, state.get(id, &who)?)));
            answer(out, r, v)
        }
        Cmd::Nodes(who, r) => {
            let v = Ok(state.node_list(&who));
            answer(out, r, v)
        }
        Cmd::Drain(node, req, who, r) => {
            let v = state.drain(&who, &node, &req);
            answer(out, r, v)
        }
        Cmd::Resume(node, who, r) => {
            let v = state.resume(&who, &node);
            answer(out, r, v)
        }
        Cmd::Events(id, who, r) => match state.may_read_events(id, &who) {
            Ok(()) => reads.push(Read::Events(id, r)),
            Err(f) => answer(out, r, Err(f)),
        },
        Cmd::Audit(q, who, r) => match state.may_read_audit(&q, &who) {
            Ok(()) => reads.push(Read::Audit(q, r)),
            Err(f) => answer(out, r, Err(f)),
        },
        Cmd::Ping(r) => answer(out, r, Ok(())),
        Cmd::Metrics(r) => answer(out, r, Ok(state.metrics_view())),
        Cmd::Register(reg, r) => {
            let v = state.register(reg);
            answer(out, r, v)
        }
        Cmd::Poll(q, force, r) => {
            let v = state.poll(&q, force);
            answer(out, r, v)
        }
        Cmd::Report(rep, r) => {
            let v = state.report(&rep.node, &rep.instance, &rep.events);
            if v.is_ok() {
                if let Some(t) = &rep.telemetry {
                    state.cfg.metrics.saw_telemetry(&rep.node, t);
                    state.telemetry(&rep.node, t);
                }
            }
            answer(out, r, v)
        }
        // Ticks are taken out of the round in `run`, after the other commands.
        Cmd::Tick => {}
    }
}

/// Reopens the store (a fresh connection: whatever the failed commit left open is rolled
/// back) and rebuilds the state from it, retrying until the store can be read. The node
/// watches of the old state close, so agents' polls return and fetch the reloaded
/// desired state.
async fn reload(old: State, store: SqliteStore) -> (State, SqliteStore) {
    if let Err(e) = store.close().await {
        tracing::warn!("closing the store after a failed commit: {e}");
    }
    let dir = old.cfg.data_dir.clone();
    let mut pause = std::time::Duration::from_millis(100);
    loop {
        match load(&dir).await {
            Ok((store, jobs, nodes, tokens)) => {
                let state = old.reloaded(jobs, nodes, tokens);
                tracing::info!(jobs = state.jobs.len(), "state reloaded from the store");
                return (state, store);
            }
            Err(e) => {
                tracing::error!("cannot reload the state from the store ({e}); retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(std::time::Duration::from_secs(5));
            }
        }
    }
}

type Loaded = (
    SqliteStore,
    Vec<gpusched_store::JobRecord>,
    Vec<gpusched_store::NodeRecord>,
    Vec<gpusched_store::TokenRecord>,
);

async fn load(dir: &std::path::Path) -> Result<Loaded, gpusched_store::StoreError> {
    let mut store = SqliteStore::open(dir).await?;
    let jobs = store.load_jobs().await?;
    let nodes = store.load_nodes().await?;
    let tokens = store.load_tokens().await?;
    Ok((store, jobs, nodes, tokens))
}

/// Writes the rows the round changed (the tracked maps marked them) in one transaction.
async fn persist(
    state: &State,
    rows: Rows,
    journal: crate::state::history::Journal,
    store: &mut SqliteStore,
) -> Result<(), gpusched_store::StoreError> {
    if rows.is_empty() && journal.is_empty() {
        return Ok(());
    }
    let _timer = state.cfg.metrics.commit_timer();
    let mut tx = store.begin().await?;
    for id in rows.jobs {
        if let Some(j) = state.jobs.get(&id) {
            tx.put_job(j).await?;
        }
    }
    for name in rows.nodes {
        if let Some(n) = state.nodes.get(&name) {
            tx.put_node(&n.record).await?;
        }
    }
    for id in rows.tokens {
        if let Some(t) = state.tokens.get(&id) {
            tx.put_token(t).await?;
        }
    }
    tx.add_events(&journal.events, crate::state::history::EVENTS_KEPT)
        .await?;
    for entry in &journal.audit {
        tx.add_audit(entry).await?;
    }
    tx.commit().await
}

#[cfg(test)]
mod failed_commit_tests;
