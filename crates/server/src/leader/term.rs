//! The election loop. A server is always in one of two phases:
//!
//! - **following**: it holds no lease, has no state loaded and runs no state task; it
//!   tries to acquire the lease every `lease / 8` and meanwhile notes who leads (for the
//!   307s of `follow.rs`);
//! - **leading** under an epoch: it loaded the state from the store (the startup path)
//!   and runs the state task, whose commits are fenced by the epoch; it renews the lease
//!   every `lease / 3`, and steps down when a renewal is refused (another server took
//!   over) or when it could not renew before the lease, counted by its own monotonic
//!   clock from the moment it SENT its last successful renewal, less a margin, would
//!   run out. So it stops acting before any other server can take the lease.
//!
//! Stepping down: the role flips to follower first (the HTTP layer redirects from then
//! on), then the state task is told to stop; it refuses its round (503), drops its
//! waiters and hands the command channel back; stale commands are dropped (503).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use gpusched_store::Store;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::{margin, Known, Leadership, Role};
use crate::actor::{self, Cmd};
use crate::auth::SharedTokens;
use crate::config::ServerConfig;

/// A leadership being served: its epoch and the state task (which returns the command
/// channel when it stops).
pub struct Term {
    epoch: u64,
    actor: JoinHandle<mpsc::Receiver<Cmd>>,
    valid_until: Instant,
}

/// Where the election loop stands.
pub enum Phase {
    Leading(Term),
    Following(mpsc::Receiver<Cmd>),
}

/// Asks the election loop to stop: a leader stops its state task and releases the
/// lease, so a follower takes over at once instead of after the lease.
pub struct Resign {
    stop: watch::Sender<bool>,
    done: oneshot::Receiver<()>,
}

impl Resign {
    pub async fn resign(self) {
        let _ = self.stop.send(true);
        if tokio::time::timeout(Duration::from_secs(10), self.done)
            .await
            .is_err()
        {
            tracing::warn!("the lease was not released within 10 s; it expires by itself");
        }
    }
}

pub struct Elector {
    cfg: Arc<ServerConfig>,
    lead: Leadership,
    /// This server's identity in the lease row.
    holder: String,
    /// The lease's own connection (renewals never wait behind a round's commit in the
    /// state task's queue).
    store: Store,
    tx: mpsc::Sender<Cmd>,
    tokens: SharedTokens,
}

async fn open_store(url: &gpusched_store::StoreUrl) -> Result<Store, gpusched_store::StoreError> {
    Store::open(url).await
}

/// The longest a leader-to-be waits for the state to load (the lease is not renewed
/// meanwhile: a load longer than the lease loses it to another server anyway, but a
/// lone server may take long over a big store). Past it, the load is given up as cut
/// off from the database and the lease released.
pub(crate) fn load_bound(lease: Duration) -> Duration {
    (lease * 15).max(Duration::from_secs(60))
}

/// The state loaded under the bound.
pub(crate) async fn load_bounded(
    url: &gpusched_store::StoreUrl,
    lease: Duration,
) -> anyhow::Result<actor::Loaded> {
    let bound = load_bound(lease);
    match tokio::time::timeout(bound, actor::load(url)).await {
        Ok(Ok(mut l)) => {
            // Every later wait on the database is bounded by the lease (PostgreSQL):
            // a state task cut off from it fails its round instead of hanging, and
            // its session's locks are released by the database.
            l.store.set_timeout(Some(lease)).await?;
            Ok(l)
        }
        Ok(Err(e)) => Err(e.into()),
        Err(_) => Err(anyhow::anyhow!(
            "loading the state from the store {url} took more than {} s; is the database \
             reachable?",
            bound.as_secs()
        )),
    }
}

impl Elector {
    /// Opens the lease's connection (which brings the schema up to date, or refuses a
    /// newer one, before anything else happens).
    pub async fn open(
        cfg: Arc<ServerConfig>,
        lead: Leadership,
        tx: mpsc::Sender<Cmd>,
        tokens: SharedTokens,
    ) -> anyhow::Result<Self> {
        let holder = super::server_id(&cfg.data_dir)?;
        let mut store = open_store(&cfg.store_url()).await?;
        // Renewals, takeovers and the follower's reads never hang on a database cut off
        // by the network (PostgreSQL; see `Store::set_timeout`).
        store.set_timeout(Some(cfg.lease)).await?;
        Ok(Elector {
            cfg,
            lead,
            holder,
            store,
            tx,
            tokens,
        })
    }

    /// Servers sharing a PostgreSQL store must share the join token (`join_token.rs`).
    pub async fn agree_on_join_token(&mut self, hash: &str) -> anyhow::Result<()> {
        if !matches!(self.cfg.store_url(), gpusched_store::StoreUrl::Postgres(_)) {
            return Ok(());
        }
        super::join_token::agree(&mut self.store, hash, &self.cfg.join_token_path()).await
    }

    /// The leadership it sets (known once the listener, so the advertised URL, is).
    pub fn with_leadership(mut self, lead: Leadership) -> Self {
        self.lead = lead;
        self
    }

    fn lease_ms(&self) -> u64 {
        self.cfg.lease.as_millis() as u64
    }

    /// The first try, at start-up: lead if the lease is free (or this data directory's
    /// own from a previous life), else follow. A state that cannot be loaded is an error
    /// of the start, as with a lone server.
    pub async fn start(&mut self, rx: mpsc::Receiver<Cmd>) -> anyhow::Result<Phase> {
        let url = self.lead.advertise().to_string();
        let won = self
            .store
            .acquire_lease(&self.holder, &url, self.lease_ms(), true)
            .await
            .context("cannot take part in the leader election")?;
        match won {
            Some(epoch) => match self.begin_term(epoch, rx).await {
                Ok(term) => Ok(Phase::Leading(term)),
                Err((e, _)) => {
                    let _ = self.store.release_lease(epoch).await;
                    Err(e)
                }
            },
            None => {
                self.note_leader().await;
                Ok(Phase::Following(rx))
            }
        }
    }

    /// Runs the loop on its own task; the handle stops it.
    pub fn spawn(self, phase: Phase) -> Resign {
        let (stop, stop_rx) = watch::channel(false);
        let (done_tx, done) = oneshot::channel();
        tokio::spawn(async move {
            self.run(phase, stop_rx).await;
            let _ = done_tx.send(());
        });
        Resign { stop, done }
    }

    async fn run(mut self, mut phase: Phase, mut stop: watch::Receiver<bool>) {
        loop {
            phase = match phase {
                Phase::Leading(term) => match self.keep(term, &mut stop).await {
                    Some(rx) => Phase::Following(rx),
                    None => return,
                },
                Phase::Following(rx) => match self.follow(rx, &mut stop).await {
                    Some(term) => Phase::Leading(term),
                    None => return,
                },
            };
        }
    }

    /// Loads the state and starts the state task under `epoch`. On an error the channel
    /// comes back with it.
    async fn begin_term(
        &mut self,
        epoch: u64,
        mut rx: mpsc::Receiver<Cmd>,
    ) -> Result<Term, (anyhow::Error, mpsc::Receiver<Cmd>)> {
        // Commands that reached the channel while it did not lead are stale (503).
        while rx.try_recv().is_ok() {}
        let loaded = match load_bounded(&self.cfg.store_url(), self.cfg.lease).await {
            Ok(l) => l,
            Err(e) => return Err((e, rx)),
        };
        let queue_conf = match &self.cfg.queues_file {
            Some(path) => match crate::read_queues(path) {
                Ok(q) => q,
                Err(e) => return Err((e, rx)),
            },
            None => crate::queues::Queues::default(),
        };
        let actor::Loaded {
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
        } = loaded;
        store.set_fence(Some(epoch));
        self.tokens
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .replace(&tokens);
        tracing::info!(epoch, jobs = jobs.len(), nodes = nodes.len(), store = %self.cfg.store_url(), url = %self.lead.advertise(), "leading: state loaded from the store");
        // Nodes of the stored state are unreachable until their agents register with this
        // leader (`State::load`): nothing new goes there, and their jobs are kept for one
        // node lease from now, the takeover grace (`state/liveness.rs`).
        let mut state = crate::state::State::load(
            self.cfg.clone(),
            jobs,
            nodes,
            tokens,
            queue_conf,
            crate::clock::Now::read(),
        );
        state.ids_after(max_id);
        state.set_ended_counts(ended);
        state.restore_learnt(learnt.0.as_deref(), learnt.1.as_deref());
        state.restore_fair_usage(fair_usage.as_deref());
        state.restore_services(services);
        // A new life: no stream of the last one survived.
        state.restore_steps(steps, true);
        state.restore_reservations(reservations);
        state.restore_compact(compact);
        // Loading may have taken a good part of the lease: renew before acting, so the
        // term starts with a whole lease (or not at all, if another server took over).
        let renewed = Instant::now();
        match self.store.renew_lease(epoch, self.lease_ms()).await {
            Ok(true) => {}
            Ok(false) => {
                let e = anyhow::anyhow!(
                    "another server took the lease while this one loaded the state (the \
                     load took longer than --lease)"
                );
                return Err((e, rx));
            }
            Err(e) => return Err((e.into(), rx)),
        }
        let valid_until = renewed + self.cfg.lease - margin(self.cfg.lease);
        self.lead.lead(epoch, valid_until);
        let term = actor::Term {
            lead: self.lead.clone(),
            epoch,
        };
        let actor = tokio::spawn(actor::run(state, store, rx, self.tokens.clone(), term));
        Ok(Term {
            epoch,
            actor,
            valid_until,
        })
    }

    /// Leads until the lease is lost or the server stops; the channel back when it
    /// stepped down, None when it stopped.
    async fn keep(
        &mut self,
        mut term: Term,
        stop: &mut watch::Receiver<bool>,
    ) -> Option<mpsc::Receiver<Cmd>> {
        let lease = self.cfg.lease;
        let every = lease / 3;
        let mut next = every;
        loop {
            let left = term.valid_until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::error!(
                    epoch = term.epoch,
                    "could not renew the leader lease in time; stepping down before it can expire"
                );
                return Some(self.step_down(term).await);
            }
            tokio::select! {
                _ = tokio::time::sleep(next.min(left)) => {}
                r = &mut term.actor => {
                    // The state task stopped by itself: a fenced commit (another server
                    // took over) or a lease it saw run out.
                    self.lead.follow(None);
                    return Some(rejoin(r));
                }
                _ = stopped(stop) => {
                    let epoch = term.epoch;
                    let _ = self.step_down(term).await;
                    match self.store.release_lease(epoch).await {
                        Ok(_) => tracing::info!(epoch, "released the leader lease"),
                        Err(e) => tracing::warn!("releasing the leader lease: {e}"),
                    }
                    return None;
                }
            }
            if Instant::now() >= term.valid_until {
                continue;
            }
            let sent = Instant::now();
            let left = term.valid_until.saturating_duration_since(sent);
            let renewed =
                tokio::time::timeout(left, self.store.renew_lease(term.epoch, self.lease_ms()))
                    .await;
            match renewed {
                Ok(Ok(true)) => {
                    term.valid_until = sent + lease - margin(lease);
                    self.lead.extend(term.valid_until);
                    next = every;
                }
                Ok(Ok(false)) => {
                    tracing::warn!(
                        epoch = term.epoch,
                        "another server took the leader lease; stepping down"
                    );
                    return Some(self.step_down(term).await);
                }
                Ok(Err(e)) => {
                    tracing::warn!("renewing the leader lease failed ({e}); retrying");
                    next = (every / 4).max(Duration::from_millis(50));
                }
                Err(_) => {
                    // No answer before the lease would run out (a database cut off by
                    // the network answers nothing): the connection is in an unknown
                    // state after a cancelled statement, so the next use opens a new
                    // one, within the store's bound. Reopening it here could hang as
                    // long as the network does, past the step-down below.
                    tracing::warn!(
                        epoch = term.epoch,
                        "the store did not answer the lease renewal in time"
                    );
                    self.store.forget_connection();
                    next = Duration::ZERO;
                }
            }
        }
    }

    /// Stops acting as leader: the role first (the HTTP layer redirects from now on),
    /// then the state task; the channel back.
    async fn step_down(&mut self, term: Term) -> mpsc::Receiver<Cmd> {
        self.lead.follow(None);
        // The state task also checks the role at every round; this wakes it up.
        let _ = self.tx.try_send(Cmd::StepDown);
        rejoin(term.actor.await)
    }

    /// Follows until it wins the lease (Some) or the server stops (None).
    async fn follow(
        &mut self,
        mut rx: mpsc::Receiver<Cmd>,
        stop: &mut watch::Receiver<bool>,
    ) -> Option<Term> {
        let retry = (self.cfg.lease / 8).clamp(Duration::from_millis(50), Duration::from_secs(1));
        let url = self.lead.advertise().to_string();
        loop {
            while rx.try_recv().is_ok() {}
            // Its own lease (it stepped down in time, e.g. after a stall, and nobody
            // took over) may be taken back at once under a new epoch: its state task
            // has stopped, so nothing of the old epoch is still being written.
            match self
                .store
                .acquire_lease(&self.holder, &url, self.lease_ms(), true)
                .await
            {
                Ok(Some(epoch)) => match self.begin_term(epoch, rx).await {
                    Ok(term) => return Some(term),
                    Err((e, back)) => {
                        tracing::error!("won the lease but cannot lead ({e:#}); giving it up");
                        let _ = self.store.release_lease(epoch).await;
                        rx = back;
                    }
                },
                Ok(None) => self.note_leader().await,
                Err(e) => {
                    tracing::warn!(
                        "cannot reach the store for the leader election ({e}); retrying"
                    );
                    self.lead.follow(None);
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(retry) => {}
                _ = stopped(stop) => return None,
            }
        }
    }

    /// Notes who leads (for the redirects), from the lease row.
    async fn note_leader(&mut self) {
        let known = match self.store.leader().await {
            Ok(Some(l)) if l.live() && l.holder != self.holder => Some(Known {
                url: l.url,
                epoch: l.epoch,
            }),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!("cannot read who leads ({e})");
                None
            }
        };
        let before = self.lead.role();
        let now = Role::Follower {
            leader: known.clone(),
        };
        if before != now {
            match &known {
                Some(k) => tracing::info!(leader = %k.url, epoch = k.epoch, "following"),
                None => tracing::info!("following; no server leads right now"),
            }
            self.lead.follow(known);
        }
    }
}

/// Resolves once asked to stop; never when the handle was dropped without asking (a
/// server whose `Resign` was not taken leads until the process ends).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// The channel back from a stopped state task; a task that panicked stops the server
/// (a supervisor restarts it; the store has every answer given).
fn rejoin(r: Result<mpsc::Receiver<Cmd>, tokio::task::JoinError>) -> mpsc::Receiver<Cmd> {
    match r {
        Ok(rx) => rx,
        Err(e) => {
            tracing::error!("the state task failed: {e}; stopping the server");
            eprintln!("error: the server's state task failed: {e}");
            std::process::exit(70);
        }
    }
}

#[cfg(test)]
#[path = "term_tests.rs"]
mod tests;
