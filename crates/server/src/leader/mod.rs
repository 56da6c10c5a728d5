//! Several servers, one leader: who leads, seen by the HTTP layer and the state task.
//!
//! - `term.rs`: the election loop: acquire the store's lease (with a new epoch), load
//!   the state and run the state task while renewing; step down before the lease can
//!   expire; as a follower, keep trying.
//! - `follow.rs`: what a server that does not lead answers: `/api/health` itself,
//!   everything else a 307 to the leader's advertised URL (or 503 while none is known).
//!
//! Invariant: only the holder of the current epoch commits. The state task's every
//! write transaction is fenced by its epoch in the store (`gpusched_store`'s
//! `leader_lease`), so a deposed leader that wakes up cannot write, whatever it believes.

mod follow;
pub(crate) mod join_token;
mod term;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

pub use follow::follow_leader;
pub(crate) use term::load_bounded;
pub use term::{Elector, Resign};

/// The leader as a follower knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Known {
    pub url: String,
    pub epoch: u64,
}

/// This server's part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// It leads under `epoch`.
    Leader { epoch: u64 },
    /// Another server leads (known), or nobody is known to (None: 503s until one is).
    Follower { leader: Option<Known> },
}

/// The role, shared by the election loop (which sets it), the HTTP layer and the state
/// task (which read it).
#[derive(Clone)]
pub struct Leadership(Arc<Inner>);

struct Inner {
    role: watch::Sender<Role>,
    /// Until when this server may act as leader by its own monotonic clock: the lease it
    /// last renewed, less a margin, counted from when the renewal was SENT.
    valid_until: Mutex<Option<Instant>>,
    /// How clients reach this server (`--advertise-url`).
    advertise: String,
    /// How long a request waits, while no leader is known, for one to be (`follow.rs`).
    hold: Duration,
}

impl Leadership {
    /// Requests wait up to `hold` for an election under way (the lease is right: a
    /// crashed leader's lease runs out within it, a lone server that stepped down after a
    /// stall takes its lease back within an eighth of it).
    pub fn new(advertise: String, hold: Duration) -> Self {
        Leadership(Arc::new(Inner {
            role: watch::channel(Role::Follower { leader: None }).0,
            valid_until: Mutex::new(None),
            advertise,
            hold,
        }))
    }

    /// Waits up to the hold for a leader to be known (this server, or another one it can
    /// send clients to); whether one is.
    pub async fn settled(&self) -> bool {
        let me = self.advertise().to_string();
        let known = move |r: &Role| match r {
            Role::Leader { .. } => true,
            Role::Follower { leader: Some(k) } => k.url != me,
            Role::Follower { leader: None } => false,
        };
        let mut rx = self.0.role.subscribe();
        let found = tokio::time::timeout(self.0.hold, rx.wait_for(known))
            .await
            .is_ok_and(|r| r.is_ok());
        found
    }

    pub fn role(&self) -> Role {
        self.0.role.borrow().clone()
    }

    pub fn advertise(&self) -> &str {
        &self.0.advertise
    }

    /// Whether this server leads (the HTTP layer's question; the state task asks
    /// [`Leadership::may_commit`]).
    pub fn leading(&self) -> bool {
        matches!(*self.0.role.borrow(), Role::Leader { .. })
    }

    /// Whether the state task of `epoch` may still commit: it leads under that epoch and
    /// its lease, by this server's clock, has not run out.
    pub fn may_commit(&self, epoch: u64) -> bool {
        let until = *self.0.valid_until.lock().unwrap_or_else(|p| p.into_inner());
        *self.0.role.borrow() == (Role::Leader { epoch })
            && until.is_some_and(|u| Instant::now() < u)
    }

    /// A leadership that holds for a day (the state task's own tests).
    #[cfg(test)]
    pub fn leading_for_tests(epoch: u64) -> Self {
        let l = Leadership::new("http://127.0.0.1:0".into(), Duration::ZERO);
        l.lead(epoch, Instant::now() + Duration::from_secs(86400));
        l
    }

    fn lead(&self, epoch: u64, until: Instant) {
        self.extend(until);
        self.0.role.send_replace(Role::Leader { epoch });
    }

    fn extend(&self, until: Instant) {
        *self.0.valid_until.lock().unwrap_or_else(|p| p.into_inner()) = Some(until);
    }

    fn follow(&self, leader: Option<Known>) {
        *self.0.valid_until.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.0.role.send_replace(Role::Follower { leader });
    }
}

/// How long before its lease runs out (by its own clock) a leader stops acting: room
/// for the clocks' rates to differ and for a commit already under way.
pub fn margin(lease: Duration) -> Duration {
    (lease / 8).max(Duration::from_millis(100))
}

/// This data directory's server identity, made once (`DATA_DIR/server-id`). A server
/// that restarts on the same data directory (its socket proven free, so the process
/// that held the lease under this identity is gone) takes its lease back at once
/// instead of waiting for it to expire.
pub fn server_id(data_dir: &std::path::Path) -> anyhow::Result<String> {
    use anyhow::Context;
    let path = data_dir.join("server-id");
    match std::fs::read_to_string(&path) {
        Ok(s) if !s.trim().is_empty() => return Ok(s.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
    let id = crate::auth::new_secret("srv_")?;
    std::fs::write(&path, format!("{id}\n"))
        .with_context(|| format!("cannot write the server identity to {}", path.display()))?;
    Ok(id)
}
