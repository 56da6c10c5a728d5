//! The agent's durable record of every attempt it was given: one append-only journal
//! of JSON lines, and two log files per attempt.
//!
//! ```text
//! <root>/attempts.jsonl          {"launch": …} | {"pid": …} | {"outcome": …} | {"acked": …}
//! <root>/logs/<job>.<attempt>.stdout
//! <root>/logs/<job>.<attempt>.stderr
//! <root>/logs/<job>.<attempt>.rank<R>.stdout   one pair per process with tasks_per_node
//! <root>/logs/<job>.<attempt>.rank<R>.stderr   (R = its global RANK)
//! <root>/hostfiles/<job>.<attempt>             a gang's GPUSCHED_HOSTFILE, until acked
//! <root>/hostfiles/node-<addr>_slots=<N>       the one every job of one node shares
//! <root>/checkpoints/<job>                     GPUSCHED_CHECKPOINT_DIR (see crate::retention)
//! <root>/checkpoints/.spare-<n>                an empty one kept for the next job (crate::spare_dirs)
//! <root>/logs/.retention-removed               which jobs lost logs to retention
//! ```
//!
//! Its parts: the journal file, its replay, compaction and group-commit sync
//! (`journal.rs`); what it records of each attempt (`records.rs`); acknowledgements and
//! what goes with an acknowledged attempt (`acks.rs`); the directories and their modes
//! (`layout.rs`); hostfiles (`hostfiles.rs`); log file paths (`log_files.rs`).

mod acks;
mod hostfiles;
mod journal;
mod layout;
mod log_files;
mod records;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use gpusched_wire::AttemptRef;
use thiserror::Error;

use crate::retention::LogIndex;

pub use acks::AckedAttempt;
pub use journal::recoverable;
use journal::Inner;
#[cfg(test)]
pub(crate) use layout::checkpoint_dir_under;
use layout::{CHECKPOINTS, LOGS};
pub use log_files::Stream;
pub use records::{PidRecord, StoredOutcome};

#[derive(Debug, Error)]
pub enum JobDirError {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("{path} line {line} is not a valid journal entry: {source}")]
    Json {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
    #[error(
        "attempt {}.{} was received before; an attempt is never run twice",
        attempt.job,
        attempt.attempt
    )]
    AlreadyExists { attempt: AttemptRef },
    #[error("attempt {}.{} has no launch record", attempt.job, attempt.attempt)]
    Unknown { attempt: AttemptRef },
}

/// The records of every attempt this agent holds. Clones share one journal.
#[derive(Clone)]
pub struct JobDir {
    root: PathBuf,
    inner: Arc<Mutex<Inner>>,
    /// Ended attempts' logs, for retention. Locked after `inner` when both are.
    log_index: Arc<Mutex<LogIndex>>,
    /// Held by the one thread syncing the journal (never while waiting for `inner`'s
    /// holder to sync: `inner` is not held across a sync). See [`JobDir::sync_through`].
    sync: Arc<Mutex<()>>,
    /// Shared hostfiles written (or found right) in this life.
    hostfiles: Arc<Mutex<std::collections::BTreeSet<PathBuf>>>,
    /// Empty checkpoint directories kept for the next jobs (`spare_dirs.rs`).
    spares: Arc<crate::spare_dirs::SpareDirs>,
}

impl std::fmt::Debug for JobDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobDir").field("root", &self.root).finish()
    }
}

impl JobDir {
    /// Opens `root` (creating it if needed), reads the journal and compacts it.
    pub fn open(root: &Path) -> Result<JobDir, JobDirError> {
        layout::prepare(root)?;
        let inner = Inner::open(root)?;
        let logs = LogIndex::scan(&root.join(LOGS), |a| inner.index.contains_key(&a));
        let spares = crate::spare_dirs::SpareDirs::open(&root.join(CHECKPOINTS));
        Ok(JobDir {
            root: root.to_path_buf(),
            log_index: Arc::new(Mutex::new(logs)),
            inner: Arc::new(Mutex::new(inner)),
            sync: Arc::new(Mutex::new(())),
            hostfiles: Arc::default(),
            spares: Arc::new(spares),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the index half-updated in a way
        // that matters (each method does one insert), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The index of ended attempts' logs (see [`crate::retention`]).
    pub(crate) fn log_index(&self) -> MutexGuard<'_, LogIndex> {
        self.log_index.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> JobDirError + 'a {
    move |source| JobDirError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// What the tests of every part build on.
#[cfg(test)]
mod fixtures {
    use std::collections::BTreeMap;

    use gpusched_wire::{AttemptRef, Launch};

    pub(super) fn launch(job: u64, attempt: u32) -> Launch {
        Launch {
            user: "nobody".into(),
            job,
            attempt,
            name: format!("job{job}"),
            command: vec!["true".into()],
            cwd: "/".into(),
            env: BTreeMap::new(),
            gpus: vec![0],
            walltime_s: Some(60),
            grace_s: 5,
            slice: None,
            resources: Default::default(),
            dist: None,
            cpu_milli: 0,
            mem_mib: 0,
            pids_max: None,
            image: None,
            serve: None,
            hold: false,
        }
    }

    pub(super) fn a(job: u64, attempt: u32) -> AttemptRef {
        AttemptRef { job, attempt }
    }
}
