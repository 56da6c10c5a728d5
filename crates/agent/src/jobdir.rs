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
//! Why a journal and not a directory of small files per attempt: creating inodes and
//! fsyncing them dominated the agent's cost per job (about 3 ms of CPU per trivial job
//! on this machine's ext4); appending a line costs microseconds.
//!
//! What is fsync'd, and why only that:
//! - an **outcome** is fsync'd before it is reported: it must survive an OS crash, or a
//!   job that finished would be reported lost and run again. The fsync also makes every
//!   earlier line durable, its launch included;
//! - a **launch** line is written before the process starts but not fsync'd: if the OS
//!   crashes before any later fsync, the process died with it, and the server's view
//!   (the attempt is starting or running, the node does not know it) requeues it;
//! - **pid** lines only matter while the OS that ran the process is up (the page cache
//!   keeps them across an agent crash), and a lost **acked** line only makes the agent
//!   report an end again, which the server ignores.
//!
//! Compaction: the journal is rewritten to hold only attempts the server has not yet
//! acknowledged (running, or ended and not yet confirmed) when it is opened, and during
//! the agent's life whenever the bytes of acknowledged attempts exceed those of the rest
//! and 1 MiB. Each compaction copies fewer bytes than it drops and every byte is dropped
//! once, so the cost is amortised O(1) per job. The new journal goes to a temporary file,
//! is fsync'd, renamed over the old one and the directory fsync'd: a crash at any step
//! leaves either the old journal or the new one, which recover the same attempts (a
//! leftover temporary file is overwritten by the next compaction).
//!
//! Memory: an acknowledged attempt leaves the index at once. Its id is kept (a
//! *tombstone*) only until a poll sent after the acknowledgement has been answered
//! ([`JobDir::forget_acked_before`]): an answer computed before the server had the end
//! may still list the attempt, and it must not run again.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use gpusched_wire::{AttemptRef, Launch, Outcome};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::retention::LogIndex;

const JOURNAL: &str = "attempts.jsonl";
const LOGS: &str = "logs";
const HOSTFILES: &str = "hostfiles";
const CHECKPOINTS: &str = "checkpoints";

/// The journal is compacted in the agent's life once it is at least this large and the
/// bytes of acknowledged attempts exceed those of the rest.
const COMPACT_MIN_BYTES: u64 = 1 << 20;

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

/// One of a job's two output streams.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    pub fn file_name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

/// Who leads an attempt's process group, recorded right after spawn. The start time
/// and boot id let recovery tell the job's group from an unrelated one that later got
/// the same number (after a reboot, or once the job's group had emptied).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PidRecord {
    pub pgid: u32,
    /// The leader's start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
    pub leader_start_ticks: Option<u64>,
    /// `/proc/sys/kernel/random/boot_id` when the job started.
    pub boot_id: Option<String>,
}

/// An outcome as stored, with when it was recorded (Unix ms).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredOutcome {
    pub outcome: Outcome,
    pub at_ms: u64,
    /// What the attempt used (its cgroup's reading at the end), reported with its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<gpusched_wire::contain::Usage>,
}

/// One journal line.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Entry {
    /// Boxed: a launch is far larger than the other lines (serde writes it the same).
    Launch(Box<Launch>),
    Pid {
        a: AttemptRef,
        pid: PidRecord,
    },
    Outcome {
        a: AttemptRef,
        stored: StoredOutcome,
    },
    Acked {
        a: AttemptRef,
    },
}

/// What the journal says of one attempt.
#[derive(Clone, Debug, Default)]
struct Record {
    launch: Option<Launch>,
    pid: Option<PidRecord>,
    outcome: Option<StoredOutcome>,
    acked: bool,
    /// The journal bytes of this attempt's lines (to know when compaction pays).
    bytes: u64,
}

struct Inner {
    file: File,
    /// The journal's length after the last whole line, to cut off a torn append.
    len: u64,
    /// Attempts not yet acknowledged: everything recovery needs.
    index: BTreeMap<AttemptRef, Record>,
    /// The journal bytes of the attempts in `index`; the rest of `len` is dead.
    live_bytes: u64,
    /// Acknowledged attempts, each with the acknowledgement's number, kept until a poll
    /// sent after it was answered (see the module notes).
    acked: BTreeMap<AttemptRef, u64>,
    /// The number the next acknowledgement gets.
    ack_seq: u64,
    /// No compaction before the journal reaches this length (raised after a failed one,
    /// so a full disk is not retried at every acknowledgement).
    compact_at: u64,
    /// Compactions done in this life (for tests and the benchmark's account).
    compactions: u64,
    /// How far the current journal file is known to be on disk (`len` when every
    /// append was synced). A compaction replaces the file with one synced whole.
    synced: u64,
    /// The journal file's generation: a compaction starts a new one.
    generation: u64,
    /// `fdatasync` calls made (for tests and the benchmark's account).
    syncs: u64,
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
        for sub in [LOGS, HOSTFILES, CHECKPOINTS] {
            let d = root.join(sub);
            fs::create_dir_all(&d).map_err(io_err("create", &d))?;
        }
        // Jobs' files are their owners' alone. Jobs' output: the agent (root) reads it
        // and serves it to whoever may read it (the server checks), so nobody else
        // enters `logs/`. A job must reach its own checkpoint directory and hostfile,
        // which are its user's (0700, 0600), so the directories on the way are 0711:
        // anyone may pass through, nobody but root may list them, so nobody learns
        // another job's names. Set on every start, so a state directory of an earlier
        // release (0755, or 0700, where no non-root job could use its checkpoint
        // directory) is set right too.
        for (dir, mode) in [
            (root.to_path_buf(), 0o711),
            (root.join(LOGS), 0o700),
            (root.join(HOSTFILES), 0o711),
            (root.join(CHECKPOINTS), 0o711),
        ] {
            fs::set_permissions(&dir, fs::Permissions::from_mode(mode))
                .map_err(io_err("set the mode of", &dir))?;
        }
        warn_if_unreachable(root);
        let path = root.join(JOURNAL);
        let mut index = read_journal(&path)?;
        index.retain(|_, r| !r.acked && r.launch.is_some());
        let (file, len) = rewrite(root, &mut index)?;
        let live_bytes = index.values().map(|r| r.bytes).sum();
        let logs = LogIndex::scan(&root.join(LOGS), |a| index.contains_key(&a));
        let spares = crate::spare_dirs::SpareDirs::open(&root.join(CHECKPOINTS));
        Ok(JobDir {
            root: root.to_path_buf(),
            log_index: Arc::new(Mutex::new(logs)),
            inner: Arc::new(Mutex::new(Inner {
                file,
                len,
                index,
                live_bytes,
                acked: BTreeMap::new(),
                ack_seq: 0,
                compact_at: COMPACT_MIN_BYTES,
                compactions: 0,
                synced: len,
                generation: 0,
                syncs: 0,
            })),
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

    /// Appends one line; returns its length.
    fn append(&self, inner: &mut Inner, e: &Entry) -> Result<u64, JobDirError> {
        let line = line_of(e);
        if let Err(err) = inner.file.write_all(&line) {
            // A short write (a full disk) must not leave half a line for the next append
            // to follow: that would make the journal unreadable at the next start.
            let _ = inner.file.set_len(inner.len);
            return Err(io_err("append to", &self.root.join(JOURNAL))(err));
        }
        inner.len += line.len() as u64;
        Ok(line.len() as u64)
    }

    /// Adds an appended line's bytes to the attempt's (live) record.
    fn count(inner: &mut Inner, a: AttemptRef, bytes: u64) -> &mut Record {
        inner.live_bytes += bytes;
        let r = inner.index.entry(a).or_default();
        r.bytes += bytes;
        r
    }

    /// Whether this attempt was received (and not yet forgotten after its
    /// acknowledgement: see [`JobDir::forget_acked_before`]).
    pub fn exists(&self, a: AttemptRef) -> bool {
        let inner = self.lock();
        inner.index.contains_key(&a) || inner.acked.contains_key(&a)
    }

    /// Whether the attempt is held and not yet acknowledged (running, or its end not
    /// yet confirmed by the server).
    pub fn holds(&self, a: AttemptRef) -> bool {
        self.lock().index.contains_key(&a)
    }

    /// Whether any attempt of `job` is held and not yet acknowledged.
    pub fn job_is_live(&self, job: u64) -> bool {
        job_is_live(&self.lock(), job)
    }

    /// The number the next acknowledgement will get: read it before sending a poll,
    /// and pass it to [`JobDir::forget_acked_before`] once the answer was acted on.
    pub fn ack_mark(&self) -> u64 {
        self.lock().ack_seq
    }

    /// Forgets the tombstones of attempts acknowledged before `mark`: the server had
    /// their ends before it computed an answer already acted on, so it never asks for
    /// them again.
    pub fn forget_acked_before(&self, mark: u64) {
        self.lock().acked.retain(|_, seq| *seq >= mark);
    }

    /// Attempts held in memory: (not yet acknowledged, acknowledged tombstones).
    pub fn held(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.index.len(), inner.acked.len())
    }

    /// The journal's length now, and how many compactions ran in this life.
    pub fn journal_stats(&self) -> (u64, u64) {
        let inner = self.lock();
        (inner.len, inner.compactions)
    }

    /// Whether the attempt wrote any output here (logs are kept after it is
    /// acknowledged; they are created on the first byte).
    pub fn has_logs(&self, a: AttemptRef) -> bool {
        [Stream::Stdout, Stream::Stderr]
            .iter()
            .any(|s| self.log_path(a, *s).exists())
            || !self.log_ranks(a).is_empty()
    }

    /// The global ranks with their own log files here (a part started with
    /// `tasks_per_node`: each process's stdout is created when it starts), ascending.
    pub fn log_ranks(&self, a: AttemptRef) -> Vec<u32> {
        // While the journal holds the launch (running, or its end not yet acknowledged:
        // when `logs -f` asks most), its ranks follow from it without listing the logs.
        if let Some(launch) = self.lock().index.get(&a).and_then(|r| r.launch.as_ref()) {
            return match &launch.dist {
                Some(d) => match d.tasks_per_node {
                    Some(k) => (0..k).map(|l| d.node_rank * k + l).collect(),
                    None => Vec::new(),
                },
                None => Vec::new(),
            };
        }
        // Ended and indexed for retention: the index knows (the journal's lock is let go
        // above; the index's is taken alone).
        if let Some(ranks) = self.log_index().ranks_of(a) {
            return ranks;
        }
        let prefix = format!("{}.{}.rank", a.job, a.attempt);
        let mut ranks: Vec<u32> = fs::read_dir(self.root.join(LOGS))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let rest = name.strip_prefix(&prefix)?;
                let (rank, stream) = rest.split_once('.')?;
                (stream == "stdout" || stream == "stderr")
                    .then(|| rank.parse().ok())
                    .flatten()
            })
            .collect();
        ranks.sort_unstable();
        ranks.dedup();
        ranks
    }

    /// The hostfile every job of one node with this `text` shares (named after it).
    pub fn node_hostfile_path(&self, text: &str) -> PathBuf {
        let name: String = text
            .trim()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '=' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.root.join(HOSTFILES).join(format!("node-{name}"))
    }

    /// Writes a shared hostfile unless it is already there: a new file renamed over the
    /// name, so a job never reads half of one. A file this agent wrote (its name says its
    /// text) is only checked to still exist, not read again for every job.
    pub fn write_shared_hostfile(&self, path: &Path, text: &str) -> io::Result<()> {
        let known = || {
            self.hostfiles
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if known().contains(path) && path.exists() {
            return Ok(());
        }
        if !fs::read_to_string(path).is_ok_and(|t| t == text) {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
            // Every job of this node and size reads it, whoever runs it; it holds only
            // the node's address and slot count, nothing of any job.
            let mut f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o644)
                .open(&tmp)?;
            f.set_permissions(fs::Permissions::from_mode(0o644))?;
            f.write_all(text.as_bytes())?;
            drop(f);
            fs::rename(&tmp, path)?;
        }
        known().insert(path.to_path_buf());
        Ok(())
    }

    /// Writes an attempt's own hostfile (a gang's nodes) readable by its job's user
    /// alone (`owner`, uid and gid; the agent's own user when `None`): it names the
    /// other nodes and ports the job uses, which other users have no business reading.
    pub fn write_job_hostfile(
        &self,
        path: &Path,
        text: &str,
        owner: Option<(u32, u32)>,
    ) -> io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        // An earlier file of that name may have had another mode or owner.
        f.set_permissions(fs::Permissions::from_mode(0o600))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::fchown(&f, Some(uid), Some(gid))?;
        }
        f.write_all(text.as_bytes())
    }

    /// Where the attempt's hostfile goes (`GPUSCHED_HOSTFILE`).
    pub fn hostfile_path(&self, a: AttemptRef) -> PathBuf {
        self.root
            .join(HOSTFILES)
            .join(format!("{}.{}", a.job, a.attempt))
    }

    /// Records a launch. Fails with
    /// [`JobDirError::AlreadyExists`] if the attempt was received before.
    pub fn create(&self, launch: &Launch) -> Result<(), JobDirError> {
        let a = launch.attempt_ref();
        let mut inner = self.lock();
        if inner.index.contains_key(&a) {
            return Err(JobDirError::AlreadyExists { attempt: a });
        }
        if inner.acked.contains_key(&a) {
            return Err(JobDirError::AlreadyExists { attempt: a });
        }
        let n = self.append(&mut inner, &Entry::Launch(Box::new(launch.clone())))?;
        Self::count(&mut inner, a, n).launch = Some(launch.clone());
        Ok(())
    }

    /// Every attempt not yet acknowledged, in (job, attempt) order.
    pub fn list(&self) -> Result<Vec<AttemptRef>, JobDirError> {
        Ok(self.lock().index.keys().copied().collect())
    }

    /// The highest attempt number held for `job`.
    pub fn latest_attempt(&self, job: u64) -> Result<Option<u32>, JobDirError> {
        Ok(self
            .lock()
            .index
            .keys()
            .filter(|a| a.job == job)
            .map(|a| a.attempt)
            .max())
    }

    pub fn read_launch(&self, a: AttemptRef) -> Result<Launch, JobDirError> {
        self.lock()
            .index
            .get(&a)
            .and_then(|r| r.launch.clone())
            .ok_or(JobDirError::Unknown { attempt: a })
    }

    pub fn write_pid(&self, a: AttemptRef, record: &PidRecord) -> Result<(), JobDirError> {
        let mut inner = self.lock();
        let e = Entry::Pid {
            a,
            pid: record.clone(),
        };
        let n = self.append(&mut inner, &e)?;
        Self::count(&mut inner, a, n).pid = Some(record.clone());
        Ok(())
    }

    /// `None` when the process was never started (or the agent died before recording it).
    pub fn read_pid(&self, a: AttemptRef) -> Result<Option<PidRecord>, JobDirError> {
        Ok(self.lock().index.get(&a).and_then(|r| r.pid.clone()))
    }

    /// Records how the attempt ended, durably (fsync) before it returns. Outcomes
    /// written at the same time share one `fdatasync` (group commit, `sync_through`):
    /// jobs that end together no longer queue behind each other's syncs.
    pub fn write_outcome(&self, a: AttemptRef, outcome: &Outcome) -> Result<(), JobDirError> {
        self.write_end(a, outcome, None)
    }

    /// [`JobDir::write_outcome`] with what the attempt used.
    pub fn write_end(
        &self,
        a: AttemptRef,
        outcome: &Outcome,
        usage: Option<&gpusched_wire::contain::Usage>,
    ) -> Result<(), JobDirError> {
        let (generation, end) = self.append_end(a, outcome, usage)?;
        self.sync_through(generation, end)
    }

    /// Records how the attempt ended, in the journal but not yet durably: the agent
    /// makes it durable with [`JobDir::sync`] before it tells the server (a crash of the
    /// agent alone loses nothing written; the system's crash loses only ends the server
    /// never heard of, which the next life reports lost). Returns where it ends.
    pub fn append_outcome(
        &self,
        a: AttemptRef,
        outcome: &Outcome,
    ) -> Result<(u64, u64), JobDirError> {
        self.append_end(a, outcome, None)
    }

    /// [`JobDir::append_outcome`] with what the attempt used.
    pub fn append_end(
        &self,
        a: AttemptRef,
        outcome: &Outcome,
        usage: Option<&gpusched_wire::contain::Usage>,
    ) -> Result<(u64, u64), JobDirError> {
        let stored = StoredOutcome {
            outcome: outcome.clone(),
            at_ms: now_ms(),
            usage: usage.cloned(),
        };
        let mut inner = self.lock();
        let e = Entry::Outcome {
            a,
            stored: stored.clone(),
        };
        let n = self.append(&mut inner, &e)?;
        Self::count(&mut inner, a, n).outcome = Some(stored);
        Ok((inner.generation, inner.len))
    }

    /// Whether anything appended is not on disk yet.
    pub fn unsynced(&self) -> bool {
        let inner = self.lock();
        inner.synced < inner.len
    }

    /// Makes everything appended so far durable (one `fdatasync`, shared with syncs
    /// running at the same time).
    pub fn sync(&self) -> Result<(), JobDirError> {
        let (generation, end) = {
            let inner = self.lock();
            (inner.generation, inner.len)
        };
        self.sync_through(generation, end)
    }

    /// Returns once the journal is on disk up to `end` of file generation
    /// `generation`. One thread syncs at a time, everything appended so far; those that
    /// waited for it find their bytes covered and return without a sync of their own. A
    /// compaction in between wrote and synced a new file holding every live record.
    fn sync_through(&self, generation: u64, end: u64) -> Result<(), JobDirError> {
        let _one = self.sync.lock().unwrap_or_else(|p| p.into_inner());
        let (file, upto) = {
            let inner = self.lock();
            if inner.generation != generation || inner.synced >= end {
                return Ok(());
            }
            let path = self.root.join(JOURNAL);
            (
                inner.file.try_clone().map_err(io_err("sync", &path))?,
                inner.len,
            )
        };
        file.sync_data()
            .map_err(io_err("sync", &self.root.join(JOURNAL)))?;
        let mut inner = self.lock();
        inner.syncs += 1;
        if inner.generation == generation {
            inner.synced = inner.synced.max(upto);
        }
        Ok(())
    }

    pub fn read_outcome(&self, a: AttemptRef) -> Result<Option<StoredOutcome>, JobDirError> {
        Ok(self.lock().index.get(&a).and_then(|r| r.outcome.clone()))
    }

    /// Records that the server has the attempt's end. Marking twice is harmless. The
    /// attempt leaves the index (a tombstone stays, see the module notes), its hostfile
    /// and checkpoint directory go as [`crate::retention::may_restart`] says, and the
    /// journal is compacted when enough of it is dead. Returns the attempt's record
    /// as it was (`None` if it was not held).
    pub fn mark_acked(&self, a: AttemptRef) -> Result<Option<AckedAttempt>, JobDirError> {
        let mut inner = self.lock();
        if !inner.index.contains_key(&a) {
            return Ok(None);
        }
        // The line is dead from the start: it only matters until the next compaction.
        self.append(&mut inner, &Entry::Acked { a })?;
        let Some(r) = inner.index.remove(&a) else {
            return Ok(None);
        };
        inner.live_bytes -= r.bytes;
        let seq = inner.ack_seq;
        inner.ack_seq += 1;
        inner.acked.insert(a, seq);
        // The job is over everywhere: its hostfile has no reader left. A job of one node
        // had none of its own (it shares the node's, see `Launcher::plan`).
        if r.launch
            .as_ref()
            .is_none_or(|l| !crate::launcher::dist::is_one_node(l))
        {
            let _ = fs::remove_file(self.hostfile_path(a));
        }
        // Under the lock: a new attempt of the job cannot be created (and its
        // checkpoint directory prepared) between this check and the removal.
        if !job_is_live(&inner, a.job) {
            let ckpt = self.checkpoint_dir(a.job);
            // An empty one is kept for the next job rather than removed (most are).
            if !self.spares.offer(&ckpt) {
                let keep_used =
                    crate::retention::may_restart(r.launch.as_ref(), r.outcome.as_ref());
                crate::retention::clean_checkpoint_dir(&ckpt, keep_used);
            }
        }
        crate::retention::ended(self, a, r.launch.as_ref(), now_ms());
        self.maybe_compact(&mut inner);
        Ok(Some(AckedAttempt {
            launch: r.launch,
            outcome: r.outcome,
        }))
    }

    /// Rewrites the journal when acknowledged attempts make up most of it. A failure is
    /// logged, not returned: appending to the old journal still works.
    fn maybe_compact(&self, inner: &mut Inner) {
        let dead = inner.len.saturating_sub(inner.live_bytes);
        if inner.len < inner.compact_at || dead <= inner.live_bytes {
            return;
        }
        match rewrite(&self.root, &mut inner.index) {
            Ok((file, len)) => {
                inner.file = file;
                inner.len = len;
                inner.synced = len;
                inner.generation += 1;
                inner.live_bytes = inner.index.values().map(|r| r.bytes).sum();
                inner.compact_at = COMPACT_MIN_BYTES;
                inner.compactions += 1;
            }
            Err(e) => {
                inner.compact_at = inner.len.saturating_mul(2);
                tracing::warn!("cannot compact the agent's journal (retrying later): {e}");
            }
        }
    }

    /// Whether the server has the attempt's end (and it is not yet forgotten).
    pub fn is_acked(&self, a: AttemptRef) -> bool {
        self.lock().acked.contains_key(&a)
    }

    /// The job's checkpoint directory on this node (`GPUSCHED_CHECKPOINT_DIR`), kept
    /// across its attempts here.
    pub fn checkpoint_dir(&self, job: u64) -> PathBuf {
        self.root.join(CHECKPOINTS).join(job.to_string())
    }

    /// The empty checkpoint directories kept for the next jobs.
    pub fn spares(&self) -> &crate::spare_dirs::SpareDirs {
        &self.spares
    }

    /// Where the logs are.
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join(LOGS)
    }

    pub fn log_path(&self, a: AttemptRef, stream: Stream) -> PathBuf {
        self.rank_log_path(a, None, stream)
    }

    /// The log of the process with global `rank` (a part with `tasks_per_node`), or of
    /// the attempt's one process (`None`).
    pub fn rank_log_path(&self, a: AttemptRef, rank: Option<u32>, stream: Stream) -> PathBuf {
        let name = match rank {
            None => format!("{}.{}.{}", a.job, a.attempt, stream.file_name()),
            Some(r) => format!("{}.{}.rank{r}.{}", a.job, a.attempt, stream.file_name()),
        };
        self.root.join(LOGS).join(name)
    }

    /// Opens a log for appending, as the job's stdout or stderr.
    pub fn open_log(&self, a: AttemptRef, stream: Stream) -> Result<File, JobDirError> {
        self.open_rank_log(a, None, stream)
    }

    /// [`JobDir::open_log`] for one process of a part (see [`JobDir::rank_log_path`]).
    pub fn open_rank_log(
        &self,
        a: AttemptRef,
        rank: Option<u32>,
        stream: Stream,
    ) -> Result<File, JobDirError> {
        let path = self.rank_log_path(a, rank, stream);
        // Its directory already shuts everyone but root out; the file too, so a log
        // moved or copied elsewhere by an admin stays private.
        OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&path)
            .map_err(io_err("open", &path))
    }
}

/// Says, once at open, when a directory above the state directory lets no other user
/// through: a job that runs as its submitter could then not reach its checkpoint
/// directory or hostfile (it would fail at its first use of them).
fn warn_if_unreachable(root: &Path) {
    if !nix::unistd::geteuid().is_root() {
        return; // its jobs run as the agent's own user
    }
    let Ok(root) = fs::canonicalize(root) else {
        return;
    };
    for dir in root.ancestors().skip(1) {
        if let Ok(meta) = fs::metadata(dir) {
            if meta.permissions().mode() & 0o001 == 0 {
                tracing::warn!(
                    "{} is mode {:o}: jobs that run as their submitters cannot pass through \
                     it to their checkpoint directories and hostfiles under {}; make it \
                     0711 (chmod o+x) or choose another --state-dir",
                    dir.display(),
                    meta.permissions().mode() & 0o7777,
                    root.display()
                );
                return;
            }
        }
    }
}

/// What the journal held of an attempt when its end was acknowledged.
#[derive(Clone, Debug)]
pub struct AckedAttempt {
    pub launch: Option<Launch>,
    pub outcome: Option<StoredOutcome>,
}

fn job_is_live(inner: &Inner, job: u64) -> bool {
    let first = AttemptRef { job, attempt: 0 };
    inner
        .index
        .range(first..)
        .next()
        .is_some_and(|(a, _)| a.job == job)
}

/// The journal lines that hold `index` (what a compaction writes), and each
/// attempt's share of them recorded in its `bytes`.
fn compacted(index: &mut BTreeMap<AttemptRef, Record>) -> Vec<u8> {
    let mut out = Vec::new();
    for (a, r) in index.iter_mut() {
        let start = out.len();
        if let Some(l) = &r.launch {
            out.extend(line_of(&Entry::Launch(Box::new(l.clone()))));
        }
        if let Some(p) = &r.pid {
            out.extend(line_of(&Entry::Pid {
                a: *a,
                pid: p.clone(),
            }));
        }
        if let Some(o) = &r.outcome {
            out.extend(line_of(&Entry::Outcome {
                a: *a,
                stored: o.clone(),
            }));
        }
        r.bytes = (out.len() - start) as u64;
    }
    out
}

/// Replaces the journal with one holding only `index`: a temporary file written and
/// fsync'd, renamed over the journal, the directory fsync'd. Returns the new journal
/// open for appending and its length.
fn rewrite(
    root: &Path,
    index: &mut BTreeMap<AttemptRef, Record>,
) -> Result<(File, u64), JobDirError> {
    let path = root.join(JOURNAL);
    let tmp = root.join(format!(".{JOURNAL}.tmp"));
    let bytes = compacted(index);
    {
        // The journal holds every job's command and environment (secrets among them):
        // the agent's alone.
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io_err("create", &tmp))?;
        f.set_permissions(fs::Permissions::from_mode(0o600))
            .map_err(io_err("set the mode of", &tmp))?;
        f.write_all(&bytes).map_err(io_err("write", &tmp))?;
        f.sync_all().map_err(io_err("sync", &tmp))?;
    }
    fs::rename(&tmp, &path).map_err(io_err("replace", &path))?;
    sync_dir(root)?;
    let file = OpenOptions::new()
        .append(true)
        .open(&path)
        .map_err(io_err("open", &path))?;
    Ok((file, bytes.len() as u64))
}

fn line_of(e: &Entry) -> Vec<u8> {
    // Serialising these plain structs cannot fail.
    let mut v = serde_json::to_vec(e).unwrap_or_default();
    v.push(b'\n');
    v
}

/// Reads and replays the journal (see [`replay`]).
fn read_journal(path: &Path) -> Result<BTreeMap<AttemptRef, Record>, JobDirError> {
    match fs::read(path) {
        Ok(bytes) => replay(path, &bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(io_err("read", path)(e)),
    }
}

/// Replays journal bytes. A torn last line (the agent died mid-append) is ignored, even
/// when the tear split a multi-byte character; a bad line before it means the file was
/// damaged, which is an error worth stopping for.
fn replay(path: &Path, bytes: &[u8]) -> Result<BTreeMap<AttemptRef, Record>, JobDirError> {
    let mut index: BTreeMap<AttemptRef, Record> = BTreeMap::new();
    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop(); // the newline that ends the last whole line
    }
    let n = lines.len();
    for (i, line) in lines.iter().enumerate() {
        let entry: Entry = match serde_json::from_slice(line) {
            Ok(e) => e,
            Err(_) if i + 1 == n => break,
            Err(source) => {
                return Err(JobDirError::Json {
                    path: path.to_path_buf(),
                    line: i + 1,
                    source,
                })
            }
        };
        let bytes = line.len() as u64 + 1;
        let a = match &entry {
            Entry::Launch(l) => l.attempt_ref(),
            Entry::Pid { a, .. } | Entry::Outcome { a, .. } | Entry::Acked { a } => *a,
        };
        let rec = index.entry(a).or_default();
        rec.bytes += bytes;
        match entry {
            Entry::Launch(l) => rec.launch = Some(*l),
            Entry::Pid { pid, .. } => rec.pid = Some(pid),
            Entry::Outcome { stored, .. } => rec.outcome = Some(stored),
            Entry::Acked { .. } => rec.acked = true,
        }
    }
    Ok(index)
}

/// What an agent starting on this journal would recover: the attempts it still holds
/// (launched, not acknowledged), each with whether it has a pid and an outcome. The
/// fuzz target and its replay test drive the same [`replay`] as [`JobDir::open`].
pub fn recoverable(bytes: &[u8]) -> Result<Vec<(AttemptRef, bool, bool)>, JobDirError> {
    let index = replay(Path::new(JOURNAL), bytes)?;
    Ok(index
        .into_iter()
        .filter(|(_, r)| !r.acked && r.launch.is_some())
        .map(|(a, r)| (a, r.pid.is_some(), r.outcome.is_some()))
        .collect())
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Makes a directory's entries (new or renamed files) durable.
fn sync_dir(dir: &Path) -> Result<(), JobDirError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("sync", dir))
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> JobDirError + 'a {
    move |source| JobDirError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn launch(job: u64, attempt: u32) -> Launch {
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
        }
    }

    fn a(job: u64, attempt: u32) -> AttemptRef {
        AttemptRef { job, attempt }
    }

    #[test]
    fn create_records_the_launch_once_and_no_logs_until_output() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(&tmp.path().join("jobs")).unwrap();
        assert!(!dir.exists(a(7, 1)));
        dir.create(&launch(7, 1)).unwrap();
        assert!(dir.exists(a(7, 1)) && !dir.has_logs(a(7, 1)));
        assert_eq!(dir.read_launch(a(7, 1)).unwrap(), launch(7, 1));
        dir.open_log(a(7, 1), Stream::Stderr).unwrap();
        assert!(dir.has_logs(a(7, 1)));
        assert!(matches!(
            dir.create(&launch(7, 1)),
            Err(JobDirError::AlreadyExists { .. })
        ));
    }

    #[test]
    fn outcomes_written_together_share_one_sync_and_all_survive() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        for job in 1..=3 {
            dir.create(&launch(job, 1)).unwrap();
        }
        // Two outcomes appended, as two ending jobs do before either syncs.
        let mut ends = Vec::new();
        for job in 1..=2 {
            let mut inner = dir.lock();
            let e = Entry::Outcome {
                a: a(job, 1),
                stored: StoredOutcome {
                    outcome: Outcome::Exited { code: 0 },
                    at_ms: 1,
                    usage: None,
                },
            };
            let n = dir.append(&mut inner, &e).unwrap();
            JobDir::count(&mut inner, a(job, 1), n).outcome = None;
            ends.push((inner.generation, inner.len));
        }
        let syncs = || dir.lock().syncs;
        dir.sync_through(ends[0].0, ends[0].1).unwrap();
        assert_eq!(syncs(), 1);
        // The second job's bytes were covered by the first sync: no sync of its own.
        dir.sync_through(ends[1].0, ends[1].1).unwrap();
        assert_eq!(syncs(), 1);
        // A later outcome syncs again, and every outcome is read back after a reopen.
        dir.write_outcome(a(3, 1), &Outcome::Exited { code: 7 })
            .unwrap();
        assert_eq!(syncs(), 2);
        std::thread::scope(|t| {
            for job in 4..=11 {
                let dir = &dir;
                t.spawn(move || {
                    dir.create(&launch(job, 1)).unwrap();
                    dir.write_outcome(a(job, 1), &Outcome::Exited { code: 0 })
                        .unwrap();
                });
            }
        });
        assert!(syncs() <= 2 + 8);
        drop(dir);
        let dir = JobDir::open(tmp.path()).unwrap();
        for job in 1..=11 {
            assert!(dir.read_outcome(a(job, 1)).unwrap().is_some(), "job {job}");
        }
    }

    #[test]
    fn list_and_latest_attempt() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        for (job, attempt) in [(10, 1), (2, 1), (10, 3), (10, 2)] {
            dir.create(&launch(job, attempt)).unwrap();
        }
        assert_eq!(
            dir.list().unwrap(),
            vec![a(2, 1), a(10, 1), a(10, 2), a(10, 3)]
        );
        assert_eq!(dir.latest_attempt(10).unwrap(), Some(3));
        assert_eq!(dir.latest_attempt(99).unwrap(), None);
    }

    #[test]
    fn everything_survives_a_reopen_and_acked_attempts_are_compacted_away() {
        let tmp = tempfile::tempdir().unwrap();
        let pid = PidRecord {
            pgid: 4242,
            leader_start_ticks: Some(123456),
            boot_id: Some("b00t".into()),
        };
        {
            let dir = JobDir::open(tmp.path()).unwrap();
            for j in 1..=3 {
                dir.create(&launch(j, 1)).unwrap();
            }
            dir.write_pid(a(1, 1), &pid).unwrap();
            dir.write_outcome(a(2, 1), &Outcome::Exited { code: 3 })
                .unwrap();
            dir.write_outcome(a(3, 1), &Outcome::Cancelled).unwrap();
            dir.mark_acked(a(3, 1)).unwrap();
            dir.mark_acked(a(3, 1)).unwrap(); // twice is harmless
            assert!(dir.is_acked(a(3, 1)));
        }
        let dir = JobDir::open(tmp.path()).unwrap();
        assert_eq!(dir.list().unwrap(), vec![a(1, 1), a(2, 1)]);
        assert_eq!(dir.read_pid(a(1, 1)).unwrap(), Some(pid));
        assert_eq!(dir.read_pid(a(2, 1)).unwrap(), None);
        let stored = dir.read_outcome(a(2, 1)).unwrap().unwrap();
        assert_eq!(stored.outcome, Outcome::Exited { code: 3 });
        assert!(stored.at_ms > 1_600_000_000_000, "{}", stored.at_ms);
        // The acked attempt left the journal.
        assert!(!dir.exists(a(3, 1)));
        let journal = fs::read_to_string(tmp.path().join(JOURNAL)).unwrap();
        assert_eq!(journal.lines().count(), 4, "{journal}");
    }

    #[test]
    fn a_torn_last_line_is_ignored_but_damage_before_it_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let dir = JobDir::open(tmp.path()).unwrap();
            dir.create(&launch(1, 1)).unwrap();
        }
        let path = tmp.path().join(JOURNAL);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"outcome\": {\"a\": {\"job\"").unwrap();
        drop(f);
        let dir = JobDir::open(tmp.path()).unwrap();
        assert_eq!(dir.list().unwrap(), vec![a(1, 1)]);
        drop(dir);
        let good = fs::read_to_string(&path).unwrap();
        fs::write(&path, format!("garbage\n{good}")).unwrap();
        let err = JobDir::open(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn a_line_torn_inside_a_multibyte_character_is_still_just_torn() {
        // Before, the journal was read as UTF-8 text first, so a tear inside a
        // non-ASCII character (a job name or env value) made the whole journal
        // unreadable and the agent refused to start.
        let tmp = tempfile::tempdir().unwrap();
        {
            let dir = JobDir::open(tmp.path()).unwrap();
            dir.create(&launch(1, 1)).unwrap();
        }
        let path = tmp.path().join(JOURNAL);
        let mut l = launch(2, 1);
        l.name = "entraînement".into();
        let whole = line_of(&Entry::Launch(Box::new(l)));
        let cut = whole.iter().position(|b| *b == 0xc3).unwrap() + 1;
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&whole[..cut]).unwrap();
        drop(f);
        let dir = JobDir::open(tmp.path()).unwrap();
        assert_eq!(dir.list().unwrap(), vec![a(1, 1)]);
    }

    #[test]
    fn jobs_of_one_node_share_a_hostfile_named_after_its_text() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        let two = dir.node_hostfile_path("10.0.0.5 slots=2\n");
        let four = dir.node_hostfile_path("10.0.0.5 slots=4\n");
        let v6 = dir.node_hostfile_path("fe80::1 slots=2\n");
        assert_ne!(two, four);
        assert!(two.ends_with("node-10.0.0.5_slots=2"), "{}", two.display());
        assert!(v6.ends_with("node-fe80__1_slots=2"), "{}", v6.display());
        dir.write_shared_hostfile(&two, "10.0.0.5 slots=2\n")
            .unwrap();
        dir.write_shared_hostfile(&two, "10.0.0.5 slots=2\n")
            .unwrap();
        assert_eq!(fs::read_to_string(&two).unwrap(), "10.0.0.5 slots=2\n");
        // Nothing else was left in the directory.
        assert_eq!(fs::read_dir(two.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn logs_open_for_appending() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        dir.create(&launch(5, 1)).unwrap();
        for text in ["a", "b"] {
            let mut f = dir.open_log(a(5, 1), Stream::Stdout).unwrap();
            f.write_all(text.as_bytes()).unwrap();
        }
        assert_eq!(
            fs::read(dir.log_path(a(5, 1), Stream::Stdout)).unwrap(),
            b"ab"
        );
    }

    fn big_launch(job: u64) -> Launch {
        let mut l = launch(job, 1);
        // About 4 KB a line, so a few hundred attempts pass the compaction threshold.
        l.env.insert("PAYLOAD".into(), "x".repeat(4000));
        l
    }

    fn ended(dir: &JobDir, job: u64, code: i32) {
        dir.create(&big_launch(job)).unwrap();
        dir.write_outcome(a(job, 1), &Outcome::Exited { code })
            .unwrap();
    }

    #[test]
    fn the_journal_is_compacted_in_the_agents_life_and_reopens_the_same() {
        let tmp = tempfile::tempdir().unwrap();
        let pid = PidRecord {
            pgid: 77,
            leader_start_ticks: Some(1),
            boot_id: None,
        };
        let dir = JobDir::open(tmp.path()).unwrap();
        // Two attempts stay: one running (a pid, no outcome), one ended, not acked.
        dir.create(&big_launch(1)).unwrap();
        dir.write_pid(a(1, 1), &pid).unwrap();
        ended(&dir, 2, 4);
        for job in 10..1010 {
            ended(&dir, job, 0);
            dir.mark_acked(a(job, 1)).unwrap();
        }
        let (len, compactions) = dir.journal_stats();
        assert!(compactions >= 2, "{compactions} compactions");
        // Never more than the threshold plus what two live attempts and a line hold.
        assert!(len < COMPACT_MIN_BYTES + 20_000, "journal of {len} bytes");
        assert_eq!(
            fs::metadata(tmp.path().join(JOURNAL)).unwrap().len(),
            len,
            "the index's length is the file's"
        );
        // The index holds the two, and the tombstones until a poll lets them go.
        assert_eq!(dir.held(), (2, 1000));
        dir.forget_acked_before(dir.ack_mark());
        assert_eq!(dir.held(), (2, 0));
        // Appends after a compaction land in the new file.
        dir.write_outcome(a(1, 1), &Outcome::Cancelled).unwrap();
        drop(dir);
        let dir = JobDir::open(tmp.path()).unwrap();
        assert_eq!(dir.list().unwrap(), vec![a(1, 1), a(2, 1)]);
        assert_eq!(dir.read_pid(a(1, 1)).unwrap(), Some(pid));
        assert_eq!(
            dir.read_outcome(a(1, 1)).unwrap().unwrap().outcome,
            Outcome::Cancelled
        );
        assert_eq!(
            dir.read_outcome(a(2, 1)).unwrap().unwrap().outcome,
            Outcome::Exited { code: 4 }
        );
        assert_eq!(dir.read_launch(a(2, 1)).unwrap(), big_launch(2));
    }

    #[test]
    fn no_compaction_while_most_of_the_journal_is_live() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        for job in 1..400 {
            ended(&dir, job, 0);
        }
        for job in 1..100 {
            dir.mark_acked(a(job, 1)).unwrap();
        }
        // 1.6 MB, a quarter of it dead: copying the live rest would not pay.
        assert_eq!(dir.journal_stats().1, 0);
    }

    /// What an agent opening `root` recovers, whole.
    fn recovered(root: &Path) -> Vec<(AttemptRef, Option<PidRecord>, Option<Outcome>)> {
        let dir = JobDir::open(root).unwrap();
        dir.list()
            .unwrap()
            .into_iter()
            .map(|x| {
                let o = dir.read_outcome(x).unwrap().map(|s| s.outcome);
                (x, dir.read_pid(x).unwrap(), o)
            })
            .collect()
    }

    fn copy_dir(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for e in fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    }

    #[test]
    fn a_crash_at_any_step_of_a_compaction_recovers_the_same_attempts() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        {
            let dir = JobDir::open(&src).unwrap();
            dir.create(&launch(1, 1)).unwrap();
            dir.write_pid(
                a(1, 1),
                &PidRecord {
                    pgid: 9,
                    leader_start_ticks: None,
                    boot_id: None,
                },
            )
            .unwrap();
            for job in 2..8 {
                dir.create(&launch(job, 1)).unwrap();
                dir.write_outcome(a(job, 1), &Outcome::Exited { code: 0 })
                    .unwrap();
                if job % 2 == 0 {
                    dir.mark_acked(a(job, 1)).unwrap();
                }
            }
        }
        let old = fs::read(src.join(JOURNAL)).unwrap();
        // What the compaction writes, from the same replay an open does.
        let mut index = replay(Path::new(JOURNAL), &old).unwrap();
        index.retain(|_, r| !r.acked && r.launch.is_some());
        let new = compacted(&mut index);
        assert!(new.len() < old.len());
        assert_eq!(recoverable(&new).unwrap(), recoverable(&old).unwrap());
        let want = {
            let probe = tmp.path().join("probe");
            copy_dir(&src, &probe);
            recovered(&probe)
        };
        assert_eq!(want.len(), 4, "{want:?}");
        // Died while writing or before fsyncing the temporary file (any prefix of it),
        // or after fsyncing it but before the rename: the old journal is still in place.
        let cuts = (0..new.len()).step_by(37).chain([new.len()]);
        for (i, cut) in cuts.enumerate() {
            let root = tmp.path().join(format!("tmp{i}"));
            copy_dir(&src, &root);
            fs::write(root.join(format!(".{JOURNAL}.tmp")), &new[..cut]).unwrap();
            assert_eq!(recovered(&root), want, "a temporary file of {cut} bytes");
        }
        // Renamed (whether or not the directory was fsync'd after: the rename is
        // atomic, so the name holds the old file or the new one whole).
        let root = tmp.path().join("renamed");
        copy_dir(&src, &root);
        fs::write(root.join(JOURNAL), &new).unwrap();
        assert_eq!(recovered(&root), want);
    }

    #[test]
    fn an_acknowledged_attempt_stays_seen_until_a_later_poll_was_answered() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        dir.create(&launch(3, 1)).unwrap();
        dir.write_outcome(a(3, 1), &Outcome::Exited { code: 0 })
            .unwrap();
        let before = dir.ack_mark(); // a poll sent before the ack
        dir.mark_acked(a(3, 1)).unwrap();
        assert!(dir.exists(a(3, 1)) && dir.is_acked(a(3, 1)) && !dir.holds(a(3, 1)));
        assert!(matches!(
            dir.create(&launch(3, 1)),
            Err(JobDirError::AlreadyExists { .. })
        ));
        dir.forget_acked_before(before);
        assert!(
            dir.exists(a(3, 1)),
            "the old poll's answer may still list it"
        );
        let after = dir.ack_mark();
        dir.forget_acked_before(after);
        assert!(!dir.exists(a(3, 1)));
        assert_eq!(dir.held(), (0, 0));
    }

    fn wrote_checkpoint(dir: &JobDir, job: u64) -> PathBuf {
        let ckpt = dir.checkpoint_dir(job);
        fs::create_dir_all(&ckpt).unwrap();
        fs::write(ckpt.join("model.pt"), "weights").unwrap();
        ckpt
    }

    fn acked_with(dir: &JobDir, l: &Launch, outcome: Outcome) {
        dir.create(l).unwrap();
        dir.write_outcome(l.attempt_ref(), &outcome).unwrap();
        dir.mark_acked(l.attempt_ref()).unwrap();
    }

    #[test]
    fn checkpoint_directories_go_when_empty_or_when_the_job_cannot_restart() {
        checkpoint_directories_go(false);
    }

    #[test]
    fn the_same_with_empty_directories_kept_for_the_next_jobs() {
        checkpoint_directories_go(true);
    }

    /// `keeping`: the agent has made a checkpoint directory before, so empty ones are
    /// kept for the next jobs (`spare_dirs.rs`) rather than removed.
    fn checkpoint_directories_go(keeping: bool) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        if keeping {
            let first = dir.checkpoint_dir(0);
            fs::create_dir_all(&first).unwrap();
            dir.spares().learn(&first);
            fs::remove_dir(&first).unwrap();
            if !dir.spares().keeping() {
                eprintln!("skipped: new directories here are not bare");
                return;
            }
        }
        // Empty (only the agent's deadline file): removed, whatever the outcome.
        let empty = dir.checkpoint_dir(1);
        fs::create_dir_all(&empty).unwrap();
        fs::write(empty.join(crate::launcher::DEADLINE_FILE), "123").unwrap();
        acked_with(&dir, &launch(1, 1), Outcome::Preempted);
        assert!(!empty.exists());
        // Never written into at all (most jobs): removed.
        let bare = dir.checkpoint_dir(9);
        fs::create_dir_all(&bare).unwrap();
        acked_with(&dir, &launch(9, 1), Outcome::Exited { code: 0 });
        assert!(!bare.exists());
        assert_eq!(dir.spares().len(), usize::from(keeping));
        // Written into, and the job is over (it exited): removed.
        let done = wrote_checkpoint(&dir, 2);
        acked_with(&dir, &launch(2, 1), Outcome::Exited { code: 1 });
        assert!(!done.exists());
        // Written into, and the server may requeue it: kept.
        for (job, outcome) in [
            (3, Outcome::Preempted),
            (
                4,
                Outcome::Lost {
                    message: "x".into(),
                },
            ),
            (
                5,
                Outcome::Stopped {
                    message: "x".into(),
                },
            ),
            (6, Outcome::Cancelled),
        ] {
            let kept = wrote_checkpoint(&dir, job);
            let ino = std::os::unix::fs::MetadataExt::ino(&fs::metadata(&kept).unwrap());
            acked_with(&dir, &launch(job, 1), outcome.clone());
            assert!(kept.join("model.pt").exists(), "{outcome:?}");
            let now = std::os::unix::fs::MetadataExt::ino(&fs::metadata(&kept).unwrap());
            assert_eq!(now, ino, "{outcome:?}");
        }
        // A part of a gang that exited 0: another part may still requeue the job.
        let mut part = launch(7, 1);
        part.dist = Some(gpusched_wire::DistLaunch {
            nnodes: 2,
            node_rank: 1,
            gpus_per_node: 1,
            tasks_per_node: None,
            master_addr: None,
            master_port: None,
            hosts: Vec::new(),
        });
        let gang = wrote_checkpoint(&dir, 7);
        acked_with(&dir, &part, Outcome::Exited { code: 0 });
        assert!(gang.exists());
        // A part told its hosts had a hostfile of its own: it goes with the attempt.
        let mut spread = launch(10, 1);
        let hosts = ["10.0.0.1", "10.0.0.2"].map(|addr| gpusched_wire::DistHost {
            addr: addr.into(),
            slots: 1,
        });
        spread.dist = part.dist.clone().map(|d| gpusched_wire::DistLaunch {
            hosts: hosts.to_vec(),
            ..d
        });
        let hostfile = dir.hostfile_path(spread.attempt_ref());
        fs::write(&hostfile, "10.0.0.1 slots=1\n10.0.0.2 slots=1\n").unwrap();
        acked_with(&dir, &spread, Outcome::Exited { code: 0 });
        assert!(!hostfile.exists());
        // Another attempt of the job is held here: its directory is in use.
        dir.create(&launch(8, 2)).unwrap();
        let busy = dir.checkpoint_dir(8);
        fs::create_dir_all(&busy).unwrap();
        acked_with(&dir, &launch(8, 1), Outcome::Exited { code: 0 });
        assert!(busy.exists());
    }

    /// Jobs' output and the journal (commands, environments) are the agent's alone, and
    /// a job's checkpoint directory its owner's: another user on the node reads none of
    /// them (a state directory of an earlier release is closed at the next start).
    #[test]
    fn logs_and_the_journal_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        drop(JobDir::open(tmp.path()).unwrap());
        let logs = tmp.path().join(LOGS);
        fs::set_permissions(&logs, fs::Permissions::from_mode(0o755)).unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        assert_eq!(mode(&logs), 0o700);
        assert_eq!(mode(&tmp.path().join(JOURNAL)), 0o600);
        drop(dir);
    }
}
