//! The attempts with a live process, each with the means to ask its supervisor to stop it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use gpusched_wire::AttemptRef;
use tokio::sync::oneshot;

/// Why an attempt is to be stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The server cancelled it: grace period, then `Cancelled`.
    Cancel,
    /// The agent lost its lease (no contact with the server): a short grace, then
    /// `Lost` with this message, so it is not still running when the server requeues it.
    Fence(String),
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
    inner: Arc<Mutex<HashMap<AttemptRef, Option<oneshot::Sender<Stop>>>>>,
}

impl Running {
    /// Registers `a` and returns what its supervisor listens on for a cancel.
    pub fn insert(&self, a: AttemptRef) -> oneshot::Receiver<Stop> {
        let (tx, rx) = oneshot::channel();
        self.lock().insert(a, Some(tx));
        rx
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
    pub fn stop(&self, a: AttemptRef, why: Stop) -> bool {
        let sender = self.lock().get_mut(&a).and_then(Option::take);
        sender.is_some_and(|tx| tx.send(why).is_ok())
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<AttemptRef, Option<oneshot::Sender<Stop>>>> {
        // Every update is a single map operation, so a panic elsewhere while the lock
        // was held cannot have left the map half-changed.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
