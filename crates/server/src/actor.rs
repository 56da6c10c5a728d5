//! The one task that owns the state and the store. It takes every waiting command at
//! once, applies them in memory, runs the core, writes everything they touched in ONE
//! transaction (fsync'd), and only then answers. Batching commits this way (group
//! commit) is what lets a durable store keep up with thousands of jobs a second.
//!
//! A round whose commit fails (a full disk, an I/O error) is undone as a whole: its
//! requests are answered 503, its in-memory changes are dropped and the state is
//! reloaded from the store, which holds exactly what was ever acknowledged.

use std::time::Instant;

use gpusched_store::Store;
use gpusched_wire::history::{
    AuditAction, AuditEntry, AuditList, AuditQuery, JobEvents, PurgeRequest, PurgeResult,
};
use gpusched_wire::{
    CancelManyResult, CancelResult, JobList, JobListQuery, JobSubmit, JobView, NodeList, PollQuery,
    QueueList, Register, Registered, Report, Submitted, TokenCreate, TokenCreated, TokenList,
    TokenView, UsageQuery, UsageReport,
};
use tokio::sync::{mpsc, oneshot};

use crate::auth::SharedTokens;
use crate::clock::Now;
use crate::groups::UserGroups;
use crate::record::JobRecord;
use crate::state::{Fail, LogAsk, LogTarget, PollResult, Rows, State, WaitResult, Who};
use fetch::{fetch, Fetched, UsageRows};

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
    /// Hold, release or update a pending job (`state/hold.rs`); an update with the
    /// owner's Unix groups (a new queue's access rule).
    Hold(u64, Who, Reply<JobView>),
    Release(u64, Who, Reply<JobView>),
    Update(
        u64,
        gpusched_wire::JobUpdate,
        Who,
        UserGroups,
        Reply<JobView>,
    ),
    /// A workflow's steps in one round (`state/workflow.rs`).
    Workflow(
        gpusched_wire::workflow::WorkflowSubmit,
        Who,
        UserGroups,
        Reply<gpusched_wire::workflow::WorkflowSubmitted>,
    ),
    CreateToken(TokenCreate, Who, Reply<TokenCreated>),
    ListTokens(Reply<TokenList>),
    Usage(UsageQuery, Who, Reply<UsageReport>),
    Queues(Reply<QueueList>),
    Accounts(Who, Reply<gpusched_wire::AccountList>),
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
    /// An admin deletes ended jobs from the store (after the round's commit, in a
    /// transaction of its own with its audit entry).
    Purge(PurgeRequest, Who, Reply<PurgeResult>),
    /// Inference services (`state/services/`); create and update with the owner's Unix
    /// groups (the replica's queue's access rule).
    CreateService(
        gpusched_wire::ServiceSpec,
        Who,
        UserGroups,
        Reply<gpusched_wire::ServiceView>,
    ),
    UpdateService(
        String,
        gpusched_wire::ServiceSpec,
        Who,
        UserGroups,
        Reply<gpusched_wire::ServiceView>,
    ),
    DeleteService(String, Who, Reply<gpusched_wire::ServiceView>),
    Services(Who, Reply<gpusched_wire::ServiceList>),
    Service(String, Who, Reply<gpusched_wire::ServiceView>),
    /// Advance reservations (`state/reservations.rs`): admins change them, anyone lists.
    CreateReservation(
        gpusched_wire::reservation::ReservationSpec,
        Who,
        Reply<gpusched_wire::reservation::ReservationView>,
    ),
    UpdateReservation(
        String,
        gpusched_wire::reservation::ReservationSpec,
        Who,
        Reply<gpusched_wire::reservation::ReservationView>,
    ),
    DeleteReservation(
        String,
        Who,
        Reply<gpusched_wire::reservation::ReservationView>,
    ),
    Reservations(Reply<gpusched_wire::reservation::ReservationList>),
    Reservation(String, Reply<gpusched_wire::reservation::ReservationView>),
    /// A gateway's load in, the services' endpoints out.
    GatewaySync(
        gpusched_wire::GatewaySync,
        Reply<gpusched_wire::EndpointSet>,
    ),
    /// Liveness: answered when the state task runs.
    Ping(Reply<()>),
    /// The levels `/metrics` shows (rendered by the caller, off the state task).
    Metrics(Reply<crate::metrics::View>),
    /// A registration, with the agent protocol its request named.
    /// Boxed: a registration (with its containment) is the largest command by far.
    Register(Box<Register>, u32, Reply<Registered>),
    /// `true`: answer with the desired state even if the generation did not move.
    Poll(PollQuery, bool, Reply<PollResult>),
    Report(Report, Reply<()>),
    /// Job steps (`state/steps.rs`): one starts, an agent opens its stream, its stream
    /// ended.
    StartStep(
        u64,
        gpusched_wire::step::StepRequest,
        Who,
        Reply<crate::state::steps::StepStarted>,
    ),
    StepAttach(u64, u32, String, Reply<()>),
    EndStep(
        u64,
        u32,
        crate::state::steps::StepEnd,
        Reply<gpusched_wire::step::StepView>,
    ),
    /// Periodic: expire silent nodes.
    Tick,
    /// The election loop saw the lease lost: stop leading (`crate::leader`).
    StepDown,
}

/// The leadership a state task serves: it commits only while `lead` says it may under
/// `epoch` (and the store's fence agrees), and stops as soon as it may not.
pub struct Term {
    pub lead: crate::leader::Leadership,
    pub epoch: u64,
}

/// Why a round is refused when its server stopped leading.
fn deposed(epoch: u64) -> Fail {
    Fail::Unavailable(format!(
        "this server stopped leading (epoch {epoch}) before the change was saved, so it was \
         not made; retry: the new leader answers (clients given several --server URLs find it)"
    ))
}

/// Commands taken per round at most, so one round's latency stays bounded.
const MAX_ROUND: usize = 8192;
/// Commands a round's buffers keep room for between rounds (see the end of `run`).
const KEEP_ROUND: usize = 1024;

/// Sends a command's answer once the round is settled: its own result after a good
/// commit, the commit's failure (`Some`) after a failed one.
type Answer = Box<dyn FnOnce(Option<&Fail>) + Send>;

/// A read of the history, answered from the store once the round is committed.
enum Read {
    Events(u64, Reply<JobEvents>),
    Audit(AuditQuery, Reply<AuditList>),
    /// A purge: the time, who asked, when (the round's time).
    Purge(PurgeRequest, Who, u64, Reply<PurgeResult>),
}

/// A failed read of the store is a 503: nothing was wrong with the ask. Not only
/// history reads fail here: a submission looks its client token up among ended jobs,
/// a command about one job may read its row, so the message names the store.
fn unavailable(e: gpusched_store::StoreError) -> Fail {
    Fail::Unavailable(format!(
        "the server could not read from its store ({e}), so nothing was done; retry once \
         the store answers again (a restart or failover of the database takes seconds)"
    ))
}

impl Read {
    /// Answers from the store (a failed read is a 503: nothing was wrong with the ask).
    async fn answer(self, store: &mut Store, state: &mut State) {
        match self {
            Read::Events(id, r) => {
                let v = store.job_events(id).await.map_err(unavailable);
                let _ = r.send(v);
            }
            Read::Audit(q, r) => {
                let v = store.audit(&q).await.map_err(unavailable);
                let _ = r.send(v);
            }
            Read::Purge(q, who, at_ms, r) => {
                let v = purge(store, &q, &who, at_ms).await;
                // The levels of ended jobs follow (none is in memory any more).
                if v.is_ok() {
                    state.forget_all_time_usage();
                    match store.ended_counts().await {
                        Ok(c) => state.set_ended_counts(c),
                        Err(e) => tracing::warn!("recounting ended jobs after a purge: {e}"),
                    }
                }
                let _ = r.send(v);
            }
        }
    }

    fn refuse(self, f: &Fail) {
        match self {
            Read::Events(_, r) => drop(r.send(Err(f.clone()))),
            Read::Audit(_, r) => drop(r.send(Err(f.clone()))),
            Read::Purge(_, _, _, r) => drop(r.send(Err(f.clone()))),
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

/// Serves rounds until the server stops leading; the command channel back.
pub async fn run(
    mut state: State,
    mut store: Store,
    mut rx: mpsc::Receiver<Cmd>,
    tokens: SharedTokens,
    term: Term,
) -> mpsc::Receiver<Cmd> {
    let mut answers: Vec<Answer> = Vec::new();
    let mut reads: Vec<Read> = Vec::new();
    let mut cmds = Vec::new();
    let mut last_round = Instant::now();
    while rx.recv_many(&mut cmds, MAX_ROUND).await > 0 {
        // A server that no longer leads acts on nothing: the commands are dropped
        // (their callers get 503) and the election loop takes the channel back.
        if !term.lead.may_commit(term.epoch) || cmds.iter().any(|c| matches!(c, Cmd::StepDown)) {
            cmds.clear();
            break;
        }
        // The one reading of the clock for this round: the state never reads it itself.
        let now = Now::read();
        state.begin_round(now);
        // Heartbeats queued in this round count before any node is judged silent; and
        // if this task itself was stalled, the silence was ours, not the nodes'.
        let mut tick = false;
        for cmd in cmds.drain(..) {
            match cmd {
                Cmd::Tick => tick = true,
                cmd => match fetch(&state, &mut store, &cmd).await {
                    Ok(rows) => handle(&mut state, cmd, rows, &mut answers, &mut reads, term.epoch),
                    Err(f) => refuse(cmd, f, &mut answers),
                },
            }
        }
        if tick {
            state.expire_nodes(now.instant.saturating_duration_since(last_round));
            // Time alone can make a reclaim possible (protections expire).
            state.schedule_if_quotas();
            state.schedule_if_preemptive();
        }
        let pass = state.pass_due().then(Instant::now);
        state.schedule();
        state.cfg.metrics.pass_took(pass);
        let mut rows = state.take_touched();
        let mut journal = state.take_journal();
        let compact = state.compact_tasks(&mut rows, &mut journal);
        let learnt = state.take_learnt_writes();
        let tokens_changed = !rows.tokens.is_empty();
        let saved = if term.lead.may_commit(term.epoch) {
            persist(&state, rows, compact, journal, learnt, &mut store).await
        } else {
            Err(gpusched_store::StoreError::Fenced {
                mine: term.epoch,
                current: None,
            })
        };
        if let Err(gpusched_store::StoreError::Fenced { current, .. }) = &saved {
            // Another server leads (or may by now): nothing of this round is made, and
            // this one stops acting instead of reloading.
            tracing::warn!(
                epoch = term.epoch,
                current = ?current,
                "stepping down: this server no longer holds the leader lease"
            );
            let fail = deposed(term.epoch);
            for a in answers.drain(..) {
                a(Some(&fail));
            }
            for r in reads.drain(..) {
                r.refuse(&fail);
            }
            state.cfg.metrics.discard_round();
            break;
        }
        if let Err(e) = saved {
            // Nothing of this round was acknowledged, so nothing of it may survive:
            // refuse its requests, then forget it by reloading what is durable.
            let url = state.cfg.store_url();
            tracing::error!(
                "saving a round failed ({e}); its requests are refused and the state is \
                 reloaded from the store"
            );
            let fail = Fail::Unavailable(format!(
                "the server could not save this change ({e}), so it was not made; if the \
                 store {url} is full or unreachable, free space there or bring it back; \
                 then retry"
            ));
            for a in answers.drain(..) {
                a(Some(&fail));
            }
            for r in reads.drain(..) {
                r.refuse(&fail);
            }
            state.cfg.metrics.discard_round();
            let Some((reloaded, reopened)) = reload(state, store, &term).await else {
                return rx;
            };
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
        for (w, view) in state.take_ended_waiters() {
            let _ = w.send(view);
        }
        // The jobs that ended are in the store now: they leave memory.
        state.forget_ended();
        for r in reads.drain(..) {
            r.answer(&mut store, &mut state).await;
        }
        for name in std::mem::take(&mut state.touched.bumped) {
            if let Some(n) = state.nodes.get(&name) {
                n.watch.send_replace(n.gen);
            }
        }
        last_round = Instant::now();
        // A burst leaves these buffers at its size (a command is ~300 bytes, so a full
        // round of MAX_ROUND held 2.5 MB for good); keep what a busy round needs.
        cmds.shrink_to(KEEP_ROUND);
        answers.shrink_to(KEEP_ROUND);
        reads.shrink_to(KEEP_ROUND);
    }
    // Stepping down: the waiters go with the state (their clients get 503 and retry),
    // and the agents' long polls end as the node watches close.
    drop(state);
    let _ = store.close().await;
    rx
}

/// Runs one command on memory, with the rows `fetch` read for it.
fn handle(
    state: &mut State,
    cmd: Cmd,
    fetched: Fetched,
    out: &mut Vec<Answer>,
    reads: &mut Vec<Read>,
    epoch: u64,
) {
    let Fetched {
        jobs: rows,
        tokens: keys,
        page,
        usage,
        steps,
    } = fetched;
    if let Some((id, steps)) = steps {
        let steps = steps
            .into_iter()
            .map(|s| crate::state::steps::from_stored(s).1)
            .collect();
        state.recall_steps(id, steps);
    }
    for job in rows {
        state.recall(job);
    }
    for (key, id) in keys {
        state.recall_token(key, id);
    }
    match cmd {
        Cmd::Submit(jobs, who, groups, r) => {
            let v = state.submit(jobs, &who, &groups);
            answer(out, r, v)
        }
        Cmd::List(q, who, r) => {
            let v = state.list(&q, &who, page);
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
            let v = state.list_tasks(id, &q, &who, page);
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
        Cmd::Hold(id, who, r) => {
            let v = state.hold(id, &who);
            answer(out, r, v)
        }
        Cmd::Release(id, who, r) => {
            let v = state.release_hold(id, &who);
            answer(out, r, v)
        }
        Cmd::Update(id, up, who, groups, r) => {
            let v = state.update(id, &up, &who, &groups);
            answer(out, r, v)
        }
        Cmd::Workflow(wf, who, groups, r) => {
            let v = state.submit_workflow(wf, &who, &groups);
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
        Cmd::Accounts(who, r) => {
            let v = Ok(state.accounts_view(&who));
            answer(out, r, v)
        }
        Cmd::CreateService(spec, who, groups, r) => {
            let v = state.create_service(spec, &who, &groups);
            answer(out, r, v)
        }
        Cmd::UpdateService(name, spec, who, groups, r) => {
            let v = state.update_service(&name, spec, &who, &groups);
            answer(out, r, v)
        }
        Cmd::DeleteService(name, who, r) => {
            let v = state.delete_service(&name, &who);
            answer(out, r, v)
        }
        Cmd::Services(who, r) => {
            let v = Ok(state.list_services(&who));
            answer(out, r, v)
        }
        Cmd::Service(name, who, r) => {
            let v = state.get_service(&name, &who);
            answer(out, r, v)
        }
        Cmd::CreateReservation(spec, who, r) => {
            let v = state.create_reservation(spec, &who);
            answer(out, r, v)
        }
        Cmd::UpdateReservation(name, spec, who, r) => {
            let v = state.update_reservation(&name, spec, &who);
            answer(out, r, v)
        }
        Cmd::DeleteReservation(name, who, r) => {
            let v = state.delete_reservation(&name, &who);
            answer(out, r, v)
        }
        Cmd::Reservations(r) => {
            let v = Ok(state.list_reservations());
            answer(out, r, v)
        }
        Cmd::Reservation(name, r) => {
            let v = state.get_reservation(&name);
            answer(out, r, v)
        }
        Cmd::GatewaySync(sync, r) => {
            let v = Ok(state.gateway_sync(sync));
            answer(out, r, v)
        }
        Cmd::StartStep(id, req, who, r) => {
            let v = state.start_step(id, &req, &who);
            answer(out, r, v)
        }
        Cmd::StepAttach(id, step, node, r) => {
            let v = state.step_attach(id, step, &node);
            answer(out, r, v)
        }
        Cmd::EndStep(id, step, end, r) => {
            let v = state.end_step(id, step, end);
            answer(out, r, v)
        }
        Cmd::Reload(q, r) => {
            let v = state.reload_queues(q).map_err(Fail::BadRequest);
            answer(out, r, v)
        }
        Cmd::Usage(q, who, r) => {
            let stored = match usage {
                // Over all time: the sums kept as jobs end (read once from the store).
                Some(UsageRows::AllTime { ask, rows }) => {
                    if let Some(rows) = rows {
                        state.set_all_time_usage(rows);
                    }
                    state.all_time_usage(&ask)
                }
                Some(UsageRows::Since(rows)) => rows,
                None => Vec::new(),
            };
            let v = state.usage(&q, &who, stored);
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
        Cmd::Purge(q, who, r) => match state.may_purge(&q, &who) {
            Ok(at_ms) => reads.push(Read::Purge(q, who, at_ms, r)),
            Err(f) => answer(out, r, Err(f)),
        },
        Cmd::Ping(r) => answer(out, r, Ok(())),
        Cmd::Metrics(r) => answer(out, r, Ok(state.metrics_view())),
        Cmd::Register(reg, protocol, r) => {
            let v = state.register_as(*reg, protocol);
            answer(out, r, v)
        }
        Cmd::Poll(q, force, r) => {
            // The agent refuses desired state of an epoch older than one it has seen.
            let v = state.poll(&q, force).map(|p| match p {
                PollResult::Ready(mut d) => {
                    d.epoch = epoch;
                    PollResult::Ready(d)
                }
                wait => wait,
            });
            answer(out, r, v)
        }
        Cmd::Report(rep, r) => {
            let v = state.report(&rep.node, &rep.instance, &rep.events);
            if v.is_ok() {
                if let Some(t) = &rep.telemetry {
                    state.cfg.metrics.saw_telemetry(&rep.node, t);
                    state.telemetry(&rep.node, t);
                }
                if rep.leaving {
                    state.node_leaving(&rep.node);
                }
            }
            answer(out, r, v)
        }
        // Ticks are taken out of the round in `run`, after the other commands; a step
        // down ends the round before any command runs.
        Cmd::Tick | Cmd::StepDown => {}
    }
}

/// Answers a command with `f` without running it: its store read failed, or the
/// state refused what it asked to read (every command that has a reply gets one).
fn refuse(cmd: Cmd, f: Fail, out: &mut Vec<Answer>) {
    match cmd {
        Cmd::Submit(.., r) => answer(out, r, Err(f)),
        Cmd::List(.., r) => answer(out, r, Err(f)),
        Cmd::Get(.., r) => answer(out, r, Err(f)),
        Cmd::Cancel(.., r) => answer(out, r, Err(f)),
        Cmd::Tasks(.., r) => answer(out, r, Err(f)),
        Cmd::Task(.., r) => answer(out, r, Err(f)),
        Cmd::CancelTask(.., r) => answer(out, r, Err(f)),
        Cmd::CancelMany(.., r) => answer(out, r, Err(f)),
        Cmd::Checkpoint(.., r) => answer(out, r, Err(f)),
        Cmd::Hold(.., r) => answer(out, r, Err(f)),
        Cmd::Release(.., r) => answer(out, r, Err(f)),
        Cmd::Update(.., r) => answer(out, r, Err(f)),
        Cmd::Workflow(.., r) => answer(out, r, Err(f)),
        Cmd::CreateToken(.., r) => answer(out, r, Err(f)),
        Cmd::ListTokens(r) => answer(out, r, Err(f)),
        Cmd::Usage(.., r) => answer(out, r, Err(f)),
        Cmd::Queues(r) => answer(out, r, Err(f)),
        Cmd::Accounts(_, r) => answer(out, r, Err(f)),
        Cmd::Reload(.., r) => answer(out, r, Err(f)),
        Cmd::RevokeToken(.., r) => answer(out, r, Err(f)),
        Cmd::Wait(.., r) => answer(out, r, Err(f)),
        Cmd::Logs(.., r) => answer(out, r, Err(f)),
        Cmd::Nodes(.., r) => answer(out, r, Err(f)),
        Cmd::Drain(.., r) => answer(out, r, Err(f)),
        Cmd::Resume(.., r) => answer(out, r, Err(f)),
        Cmd::Events(.., r) => answer(out, r, Err(f)),
        Cmd::Audit(.., r) => answer(out, r, Err(f)),
        Cmd::Purge(.., r) => answer(out, r, Err(f)),
        Cmd::CreateService(.., r) => answer(out, r, Err(f)),
        Cmd::UpdateService(.., r) => answer(out, r, Err(f)),
        Cmd::DeleteService(.., r) => answer(out, r, Err(f)),
        Cmd::Services(.., r) => answer(out, r, Err(f)),
        Cmd::Service(.., r) => answer(out, r, Err(f)),
        Cmd::CreateReservation(.., r) => answer(out, r, Err(f)),
        Cmd::UpdateReservation(.., r) => answer(out, r, Err(f)),
        Cmd::DeleteReservation(.., r) => answer(out, r, Err(f)),
        Cmd::Reservations(r) => answer(out, r, Err(f)),
        Cmd::Reservation(.., r) => answer(out, r, Err(f)),
        Cmd::GatewaySync(.., r) => answer(out, r, Err(f)),
        Cmd::StartStep(.., r) => answer(out, r, Err(f)),
        Cmd::StepAttach(.., r) => answer(out, r, Err(f)),
        Cmd::EndStep(.., r) => answer(out, r, Err(f)),
        Cmd::Ping(r) => answer(out, r, Err(f)),
        Cmd::Metrics(r) => answer(out, r, Err(f)),
        Cmd::Register(.., r) => answer(out, r, Err(f)),
        Cmd::Poll(.., r) => answer(out, r, Err(f)),
        Cmd::Report(.., r) => answer(out, r, Err(f)),
        Cmd::Tick | Cmd::StepDown => {}
    }
}

/// Deletes the jobs that ended before the time, with the audit entry saying how many,
/// in one transaction of its own.
async fn purge(
    store: &mut Store,
    q: &PurgeRequest,
    who: &Who,
    at_ms: u64,
) -> Result<PurgeResult, Fail> {
    let failed = |e: gpusched_store::StoreError| {
        Fail::Unavailable(format!(
            "the server could not purge the history ({e}); nothing was deleted; retry"
        ))
    };
    let mut tx = store.begin().await.map_err(failed)?;
    let deleted = tx.purge_ended(q.before_ms).await.map_err(failed)?;
    let entry = AuditEntry {
        id: 0,
        at_ms,
        actor: who.user.clone(),
        action: AuditAction::Purge,
        target: "jobs".into(),
        detail: format!(
            "{} that ended before {} ms",
            gpusched_wire::count(deleted as u32, "job"),
            q.before_ms
        ),
    };
    tx.add_audit(&entry).await.map_err(failed)?;
    tx.commit().await.map_err(failed)?;
    tracing::info!(deleted, before_ms = q.before_ms, by = %who.user, "history purged");
    Ok(PurgeResult {
        deleted,
        before_ms: q.before_ms,
    })
}

/// Reopens the store (a fresh connection: whatever the failed commit left open is rolled
/// back) and rebuilds the state from it, retrying until the store can be read. The node
/// watches of the old state close, so agents' polls return and fetch the reloaded
/// desired state.
/// None: the server stopped leading meanwhile (the election loop takes over).
async fn reload(old: State, store: Store, term: &Term) -> Option<(State, Store)> {
    // The new connection is fenced as the old one was.
    let fence = store.fence();
    if let Err(e) = store.close().await {
        tracing::warn!("closing the store after a failed commit: {e}");
    }
    let url = old.cfg.store_url();
    let mut pause = std::time::Duration::from_millis(100);
    loop {
        if !term.lead.may_commit(term.epoch) {
            return None;
        }
        match crate::leader::load_bounded(&url, old.cfg.lease).await {
            Ok(Loaded {
                mut store,
                jobs,
                compact,
                nodes,
                tokens,
                max_id,
                ended,
                learnt,
                fair_usage,
                services,
                steps,
                reservations,
            }) => {
                store.set_fence(fence);
                let mut state = old.reloaded(jobs, nodes, tokens);
                state.ids_after(max_id);
                state.restore_learnt(learnt.0.as_deref(), learnt.1.as_deref());
                state.restore_fair_usage(fair_usage.as_deref());
                state.restore_services(services);
                // The same process: the steps' streams are still open.
                state.restore_steps(steps, false);
                state.restore_reservations(reservations);
                state.restore_compact(compact);
                state.set_ended_counts(ended);
                tracing::info!(jobs = state.jobs.len(), "state reloaded from the store");
                return Some((state, store));
            }
            Err(e) => {
                tracing::error!("cannot reload the state from the store ({e}); retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(std::time::Duration::from_secs(5));
            }
        }
    }
}

/// What the state is rebuilt from: the live jobs only (ended ones stay in the store),
/// the highest id ever issued and the ended jobs' counts per (queue, state).
pub struct Loaded {
    pub store: Store,
    pub jobs: Vec<JobRecord>,
    /// The live array tasks among `jobs` that are compact records.
    pub compact: Vec<u64>,
    pub nodes: Vec<gpusched_store::NodeRecord>,
    pub tokens: Vec<gpusched_store::TokenRecord>,
    pub max_id: u64,
    pub ended: Vec<(String, gpusched_wire::JobState, u64)>,
    /// The `meta` values of `state/learn.rs`: the predictor, the attained service.
    pub learnt: (Option<String>, Option<String>),
    /// The `meta` value of `state/accounts.rs`: the fair-share usage.
    pub fair_usage: Option<String>,
    pub services: Vec<gpusched_store::ServiceRecord>,
    /// The steps of the live jobs.
    pub steps: Vec<gpusched_store::StoredStep>,
    pub reservations: Vec<gpusched_store::ReservationRecord>,
}

pub async fn load(url: &gpusched_store::StoreUrl) -> Result<Loaded, gpusched_store::StoreError> {
    let mut store = Store::open(url).await?;
    let jobs = store.load_live_jobs().await?;
    let jobs = jobs.into_iter().map(JobRecord::from_row).collect();
    let nodes = store.load_nodes().await?;
    let tokens = store.load_tokens().await?;
    let max_id = store.max_job_id().await?;
    let compact = store.live_compact_tasks().await?;
    let services = store.load_services().await?;
    let steps = store.load_live_steps().await?;
    let reservations = store.load_reservations().await?;
    let ended = store.ended_counts().await?;
    let learnt = (
        store.meta(crate::state::learn::PREDICTOR_KEY).await?,
        store.meta(crate::state::learn::ATTAINED_KEY).await?,
    );
    let fair_usage = store.meta(crate::state::accounts::FAIR_USAGE_KEY).await?;
    Ok(Loaded {
        compact,
        learnt,
        fair_usage,
        services,
        steps,
        reservations,
        store,
        jobs,
        nodes,
        tokens,
        max_id,
        ended,
    })
}

/// Writes the rows the round changed (the tracked maps marked them) in one transaction.
async fn persist(
    state: &State,
    rows: Rows,
    compact: crate::state::compact::CompactWrites,
    journal: crate::state::history::Journal,
    learnt: Vec<(&'static str, String)>,
    store: &mut Store,
) -> Result<(), gpusched_store::StoreError> {
    if rows.is_empty() && compact.tasks.is_empty() && journal.is_empty() && learnt.is_empty() {
        return Ok(());
    }
    let _timer = state.cfg.metrics.commit_timer();
    let mut w = gpusched_store::RoundWrites::default();
    for name in &rows.nodes {
        if let Some(n) = state.nodes.get(name) {
            w.node(&n.record)?;
        }
    }
    for id in &rows.tokens {
        if let Some(t) = state.tokens.get(id) {
            w.token(t)?;
        }
    }
    for name in &rows.services {
        match state.services.records.get(name) {
            Some(s) => w.service(s)?,
            None => w.service_gone(name),
        }
    }
    for key in &rows.steps {
        if let Some(s) = state.steps.get(key) {
            w.step(&crate::state::steps::to_stored(key.0, s))?;
        }
    }
    for name in &rows.reservations {
        match state.reservations.get(name) {
            Some(r) => w.reservation(r)?,
            None => w.reservation_gone(name),
        }
    }
    w.events(journal.events, crate::state::history::EVENTS_KEPT);
    for t in compact.tasks {
        w.task(t);
    }
    for id in compact.promoted {
        w.promote(id);
    }
    for entry in journal.audit {
        w.audit(entry);
    }
    for (key, value) in learnt {
        w.meta(key, value)?;
    }
    // The job rows are made as the store writes them, a bounded number at a time: a
    // round of a 10,000-job batch never holds every row at once.
    let mut job_rows = rows
        .jobs
        .iter()
        .filter_map(|id| state.jobs.get(id))
        .map(|j| j.to_row());
    store.write_round_streamed(w, &mut job_rows).await
}

#[cfg(test)]
mod failed_commit_tests;
mod fetch;
#[cfg(test)]
mod fetch_tests;
