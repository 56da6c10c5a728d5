//! The attempts with a live process, each with the means to ask its supervisor to stop it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use gpusched_wire::AttemptRef;
use tokio::sync::{oneshot, Notify};

/// Why an attempt is to be stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The server cancelled it: grace period, then `Cancelled`.
    Cancel,
    /// The agent lost its lease (no contact with the server): a short grace, then
    /// `Lost` with this message, so it is not still running when the server requeues it.
    Fence(String),
    /// A service replica failed its liveness probe `failure_threshold` times in a row:
    /// the job's grace, then `Unhealthy` with this message (`serve.rs`).
    Unhealthy(String),
    /// The agent itself is stopping (SIGTERM or SIGINT): the job's grace, then
    /// `Stopped` with this message; the server requeues it without using a retry.
    Drain(String),
    /// Preemption: the checkpoint `signal` to the group, up to `grace` to save and exit,
    /// then stopped; it ends `Preempted` either way. The deadline (Unix seconds) is
    /// written to `deadline_file` first.
    Preempt {
        signal: i32,
        grace: std::time::Duration,
        deadline_file: std::path::PathBuf,
    },
}

/// Shared between the launcher and the supervisor tasks, which remove their attempt
/// when it ends.
#[derive(Clone, Default)]
pub struct Running {
    // `None` once a cancel was sent: the attempt runs until its supervisor stops it.
    inner: Arc<Mutex<HashMap<AttemptRef, Entry>>>,
}

/// One running attempt: the way to ask it to stop (once), and a bell that cuts the
/// grace of a stop already under way short (a fence during a cancel or a preemption).
struct Entry {
    stop: Option<oneshot::Sender<Stop>>,
    hurry: Arc<Notify>,
}

/// What a supervisor listens on.
pub struct Listen {
    pub stop: oneshot::Receiver<Stop>,
    pub hurry: Arc<Notify>,
}

impl Running {
    /// Registers `a` and returns what its supervisor listens on for a cancel.
    pub fn insert(&self, a: AttemptRef) -> Listen {
        let (tx, rx) = oneshot::channel();
        let hurry = Arc::new(Notify::new());
        self.lock().insert(
            a,
            Entry {
                stop: Some(tx),
                hurry: hurry.clone(),
            },
        );
        Listen { stop: rx, hurry }
    }

    pub fn remove(&self, a: AttemptRef) {
        self.lock().remove(&a);
    }

    pub fn contains(&self, a: AttemptRef) -> bool {
        self.lock().contains_key(&a)
    }

    /// Attempts in (job, attempt) order.
    pub fn list(&self) -> Vec<AttemptRef> {
        let mut list: Vec<AttemptRef> = self.lock().keys().copied().collect();
        list.sort();
        list
    }

    /// Asks `a`'s supervisor to stop it; false if it is not running or already asked.
    pub fn cancel(&self, a: AttemptRef) -> bool {
        self.stop(a, Stop::Cancel)
    }

    /// Asks `a`'s supervisor to stop it for `why`; false if not running or already asked.
    /// A fence reaches an attempt already stopping, too: its grace is cut short.
    pub fn stop(&self, a: AttemptRef, why: Stop) -> bool {
        let mut map = self.lock();
        let Some(entry) = map.get_mut(&a) else {
            return false;
        };
        match entry.stop.take() {
            Some(tx) => tx.send(why).is_ok(),
            None => {
                if matches!(why, Stop::Fence(_)) {
                    entry.hurry.notify_one();
                }
                false
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<AttemptRef, Entry>> {
        // Every update is a single map operation, so a panic elsewhere while the lock
        // was held cannot have left the map half-changed.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
