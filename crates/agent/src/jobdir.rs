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
//! Opening the journal compacts it: attempts the server acknowledged are dropped (their
//! logs stay), so it holds only what recovery needs.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use gpusched_wire::{AttemptRef, Launch, Outcome};
use serde::{Deserialize, Serialize};
use thiserror::Error;

const JOURNAL: &str = "attempts.jsonl";
const LOGS: &str = "logs";
const HOSTFILES: &str = "hostfiles";

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
}

struct Inner {
    file: File,
    /// The journal's length after the last whole line, to cut off a torn append.
    len: u64,
    index: BTreeMap<AttemptRef, Record>,
}

/// The records of every attempt this agent holds. Clones share one journal.
#[derive(Clone)]
pub struct JobDir {
    root: PathBuf,
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for JobDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobDir").field("root", &self.root).finish()
    }
}

impl JobDir {
    /// Opens `root` (creating it if needed), reads the journal and compacts it.
    pub fn open(root: &Path) -> Result<JobDir, JobDirError> {
        for sub in [LOGS, HOSTFILES] {
            let d = root.join(sub);
            fs::create_dir_all(&d).map_err(io_err("create", &d))?;
        }
        let path = root.join(JOURNAL);
        let mut index = read_journal(&path)?;
        index.retain(|_, r| !r.acked && r.launch.is_some());
        // Compact: write what is left to a new file and swap it in atomically.
        let tmp = root.join(format!(".{JOURNAL}.tmp"));
        {
            let mut out = io::BufWriter::new(File::create(&tmp).map_err(io_err("create", &tmp))?);
            for (a, r) in &index {
                let mut lines = Vec::new();
                if let Some(l) = &r.launch {
                    lines.push(Entry::Launch(Box::new(l.clone())));
                }
                if let Some(p) = &r.pid {
                    lines.push(Entry::Pid {
                        a: *a,
                        pid: p.clone(),
                    });
                }
                if let Some(o) = &r.outcome {
                    lines.push(Entry::Outcome {
                        a: *a,
                        stored: o.clone(),
                    });
                }
                for e in lines {
                    out.write_all(&line_of(&e)).map_err(io_err("write", &tmp))?;
                }
            }
            let file = out
                .into_inner()
                .map_err(|e| io_err("write", &tmp)(e.into_error()))?;
            file.sync_all().map_err(io_err("sync", &tmp))?;
        }
        fs::rename(&tmp, &path).map_err(io_err("replace", &path))?;
        sync_dir(root)?;
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io_err("open", &path))?;
        let len = file.metadata().map_err(io_err("read", &path))?.len();
        Ok(JobDir {
            root: root.to_path_buf(),
            inner: Arc::new(Mutex::new(Inner { file, len, index })),
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

    fn append(&self, inner: &mut Inner, e: &Entry, sync: bool) -> Result<(), JobDirError> {
        let path = self.root.join(JOURNAL);
        let line = line_of(e);
        if let Err(err) = inner.file.write_all(&line) {
            // A short write (a full disk) must not leave half a line for the next append
            // to follow: that would make the journal unreadable at the next start.
            let _ = inner.file.set_len(inner.len);
            return Err(io_err("append to", &path)(err));
        }
        inner.len += line.len() as u64;
        if sync {
            inner.file.sync_data().map_err(io_err("sync", &path))?;
        }
        Ok(())
    }

    /// Whether this attempt was received and not yet acknowledged as ended.
    pub fn exists(&self, a: AttemptRef) -> bool {
        self.lock().index.contains_key(&a)
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
    /// name, so a job never reads half of one.
    pub fn write_shared_hostfile(&self, path: &Path, text: &str) -> io::Result<()> {
        if fs::read_to_string(path).is_ok_and(|t| t == text) {
            return Ok(());
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
        fs::write(&tmp, text)?;
        fs::rename(&tmp, path)
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
        self.append(&mut inner, &Entry::Launch(Box::new(launch.clone())), false)?;
        inner.index.insert(
            a,
            Record {
                launch: Some(launch.clone()),
                ..Record::default()
            },
        );
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
        self.append(&mut inner, &e, false)?;
        inner.index.entry(a).or_default().pid = Some(record.clone());
        Ok(())
    }

    /// `None` when the process was never started (or the agent died before recording it).
    pub fn read_pid(&self, a: AttemptRef) -> Result<Option<PidRecord>, JobDirError> {
        Ok(self.lock().index.get(&a).and_then(|r| r.pid.clone()))
    }

    /// Records how the attempt ended, durably (fsync) before it returns.
    pub fn write_outcome(&self, a: AttemptRef, outcome: &Outcome) -> Result<(), JobDirError> {
        let stored = StoredOutcome {
            outcome: outcome.clone(),
            at_ms: now_ms(),
        };
        let mut inner = self.lock();
        let e = Entry::Outcome {
            a,
            stored: stored.clone(),
        };
        self.append(&mut inner, &e, true)?;
        inner.index.entry(a).or_default().outcome = Some(stored);
        Ok(())
    }

    pub fn read_outcome(&self, a: AttemptRef) -> Result<Option<StoredOutcome>, JobDirError> {
        Ok(self.lock().index.get(&a).and_then(|r| r.outcome.clone()))
    }

    /// Records that the server has the attempt's end. Marking twice is harmless.
    pub fn mark_acked(&self, a: AttemptRef) -> Result<(), JobDirError> {
        let mut inner = self.lock();
        if inner.index.get(&a).is_none_or(|r| r.acked) {
            return Ok(());
        }
        self.append(&mut inner, &Entry::Acked { a }, false)?;
        // The job is over everywhere: its hostfile has no reader left.
        let _ = fs::remove_file(self.hostfile_path(a));
        if let Some(r) = inner.index.get_mut(&a) {
            // Only "seen" matters from now on; drop the launch (its env can be large).
            *r = Record {
                acked: true,
                ..Record::default()
            };
        }
        Ok(())
    }

    pub fn is_acked(&self, a: AttemptRef) -> bool {
        self.lock().index.get(&a).is_some_and(|r| r.acked)
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
        OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io_err("open", &path))
    }
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
        match entry {
            Entry::Launch(l) => {
                let a = l.attempt_ref();
                index.entry(a).or_default().launch = Some(*l);
            }
            Entry::Pid { a, pid } => index.entry(a).or_default().pid = Some(pid),
            Entry::Outcome { a, stored } => index.entry(a).or_default().outcome = Some(stored),
            Entry::Acked { a } => index.entry(a).or_default().acked = true,
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
}
