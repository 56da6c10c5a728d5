//! The agent's durable record of each attempt it was given, one directory per attempt:
//!
//! ```text
//! <root>/<job>.<attempt>/
//!     launch.json    the Launch, written before the process is started
//!     stdout, stderr the job's output, appended
//!     pid            the process-group id (first line), then `start_ticks=` and
//!                    `boot_id=` lines that identify the group leader for recovery
//!     outcome.json   the Outcome, once known
//!     acked          empty: the server has recorded the end
//! ```
//!
//! The directory existing means the attempt was received, so a launch is never run twice.
//! Records that recovery depends on are written to a temporary file, fsync'd, renamed
//! into place and the directory fsync'd, so a crash leaves either the old state or the
//! whole new file, never a torn one; an outcome the agent wrote survives it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use gpusched_wire::{AttemptRef, Launch, Outcome};
use thiserror::Error;

const LAUNCH: &str = "launch.json";
const PID: &str = "pid";
const OUTCOME: &str = "outcome.json";
const ACKED: &str = "acked";

#[derive(Debug, Error)]
pub enum JobDirError {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("{path} is not a valid {what}: {source}")]
    Json {
        what: &'static str,
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path} does not start with a process-group id (found {found:?})")]
    BadPid { path: PathBuf, found: String },
    #[error(
        "attempt {}.{} already has records in {path}; an attempt is never run twice",
        attempt.job,
        attempt.attempt
    )]
    AlreadyExists { attempt: AttemptRef, path: PathBuf },
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PidRecord {
    pub pgid: u32,
    /// The leader's start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
    pub leader_start_ticks: Option<u64>,
    /// `/proc/sys/kernel/random/boot_id` when the job started.
    pub boot_id: Option<String>,
}

/// An outcome as stored, with when it was written (Unix ms; the file's mtime).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredOutcome {
    pub outcome: Outcome,
    pub at_ms: u64,
}

/// The directory that holds every attempt's records.
#[derive(Clone, Debug)]
pub struct JobDir {
    root: PathBuf,
}

impl JobDir {
    /// Opens `root`, creating it (and its parents) if needed.
    pub fn open(root: &Path) -> Result<JobDir, JobDirError> {
        fs::create_dir_all(root).map_err(io_err("create", root))?;
        Ok(JobDir {
            root: root.to_path_buf(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn attempt_dir(&self, a: AttemptRef) -> PathBuf {
        self.root.join(format!("{}.{}", a.job, a.attempt))
    }

    /// Whether this attempt was ever received.
    pub fn exists(&self, a: AttemptRef) -> bool {
        self.attempt_dir(a).is_dir()
    }

    /// Creates the attempt's directory with its `launch.json` and empty logs. Fails with
    /// [`JobDirError::AlreadyExists`] if the attempt was received before.
    pub fn create(&self, launch: &Launch) -> Result<(), JobDirError> {
        let a = launch.attempt_ref();
        let dir = self.attempt_dir(a);
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(JobDirError::AlreadyExists {
                    attempt: a,
                    path: dir,
                })
            }
            Err(e) => return Err(io_err("create", &dir)(e)),
        }
        let json = serde_json::to_vec_pretty(launch).map_err(|source| JobDirError::Json {
            what: "launch",
            path: dir.join(LAUNCH),
            source,
        })?;
        write_atomic(&dir, LAUNCH, &json)?;
        for stream in [Stream::Stdout, Stream::Stderr] {
            let path = dir.join(stream.file_name());
            File::create(&path).map_err(io_err("create", &path))?;
        }
        sync_dir(&dir)?;
        sync_dir(&self.root)
    }

    /// Every attempt with a directory, in (job, attempt) order. Entries that are not
    /// attempt directories are skipped.
    pub fn list(&self) -> Result<Vec<AttemptRef>, JobDirError> {
        let entries = fs::read_dir(&self.root).map_err(io_err("list", &self.root))?;
        let mut attempts = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_err("list", &self.root))?;
            let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
            if let (true, Some(a)) = (is_dir, parse_dir_name(&entry.file_name())) {
                attempts.push(a);
            }
        }
        attempts.sort();
        Ok(attempts)
    }

    /// The highest attempt number received for `job`.
    pub fn latest_attempt(&self, job: u64) -> Result<Option<u32>, JobDirError> {
        Ok(self
            .list()?
            .into_iter()
            .filter(|a| a.job == job)
            .map(|a| a.attempt)
            .max())
    }

    pub fn read_launch(&self, a: AttemptRef) -> Result<Launch, JobDirError> {
        let path = self.attempt_dir(a).join(LAUNCH);
        let bytes = fs::read(&path).map_err(io_err("read", &path))?;
        serde_json::from_slice(&bytes).map_err(|source| JobDirError::Json {
            what: "launch",
            path,
            source,
        })
    }

    pub fn write_pid(&self, a: AttemptRef, record: &PidRecord) -> Result<(), JobDirError> {
        let mut text = format!("{}\n", record.pgid);
        if let Some(ticks) = record.leader_start_ticks {
            text.push_str(&format!("start_ticks={ticks}\n"));
        }
        if let Some(boot) = &record.boot_id {
            text.push_str(&format!("boot_id={boot}\n"));
        }
        write_atomic(&self.attempt_dir(a), PID, text.as_bytes())
    }

    /// `None` when the process was never started (or the agent died before recording it).
    pub fn read_pid(&self, a: AttemptRef) -> Result<Option<PidRecord>, JobDirError> {
        let path = self.attempt_dir(a).join(PID);
        let Some(text) = read_optional(&path)? else {
            return Ok(None);
        };
        let mut lines = text.lines();
        let first = lines.next().unwrap_or("").trim();
        let pgid = first.parse::<u32>().map_err(|_| JobDirError::BadPid {
            path: path.clone(),
            found: first.to_string(),
        })?;
        let mut record = PidRecord {
            pgid,
            leader_start_ticks: None,
            boot_id: None,
        };
        // Unknown or malformed extra lines only cost recovery its extra checks.
        for line in lines {
            match line.split_once('=') {
                Some(("start_ticks", v)) => record.leader_start_ticks = v.trim().parse().ok(),
                Some(("boot_id", v)) => record.boot_id = Some(v.trim().to_string()),
                _ => {}
            }
        }
        Ok(Some(record))
    }

    pub fn write_outcome(&self, a: AttemptRef, outcome: &Outcome) -> Result<(), JobDirError> {
        let dir = self.attempt_dir(a);
        let json = serde_json::to_vec_pretty(outcome).map_err(|source| JobDirError::Json {
            what: "outcome",
            path: dir.join(OUTCOME),
            source,
        })?;
        write_atomic(&dir, OUTCOME, &json)
    }

    pub fn read_outcome(&self, a: AttemptRef) -> Result<Option<StoredOutcome>, JobDirError> {
        let path = self.attempt_dir(a).join(OUTCOME);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("read", &path)(e)),
        };
        let at_ms = file
            .metadata()
            .and_then(|m| m.modified())
            .map_err(io_err("read the time of", &path))?
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        let outcome = serde_json::from_reader(io::BufReader::new(file)).map_err(|source| {
            JobDirError::Json {
                what: "outcome",
                path,
                source,
            }
        })?;
        Ok(Some(StoredOutcome { outcome, at_ms }))
    }

    /// Records that the server has the attempt's end. Marking twice is harmless.
    pub fn mark_acked(&self, a: AttemptRef) -> Result<(), JobDirError> {
        let dir = self.attempt_dir(a);
        let path = dir.join(ACKED);
        let file = File::create(&path).map_err(io_err("create", &path))?;
        file.sync_all().map_err(io_err("sync", &path))?;
        sync_dir(&dir)
    }

    pub fn is_acked(&self, a: AttemptRef) -> bool {
        self.attempt_dir(a).join(ACKED).exists()
    }

    pub fn log_path(&self, a: AttemptRef, stream: Stream) -> PathBuf {
        self.attempt_dir(a).join(stream.file_name())
    }

    /// Opens a log for appending, as the job's stdout or stderr.
    pub fn open_log(&self, a: AttemptRef, stream: Stream) -> Result<File, JobDirError> {
        let path = self.log_path(a, stream);
        OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io_err("open", &path))
    }
}

fn parse_dir_name(name: &std::ffi::OsStr) -> Option<AttemptRef> {
    let name = name.to_str()?;
    let (job, attempt) = name.split_once('.')?;
    let a = AttemptRef {
        job: job.parse().ok()?,
        attempt: attempt.parse().ok()?,
    };
    // Only the canonical spelling counts: `+7.1` or `07.1` would be a second name for 7.1.
    (format!("{}.{}", a.job, a.attempt) == name).then_some(a)
}

fn read_optional(path: &Path) -> Result<Option<String>, JobDirError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err("read", path)(e)),
    }
}

/// Replaces `dir/name` with `bytes` so that after a crash it holds the old or the new
/// content, and the new content is on disk once this returns.
fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), JobDirError> {
    let tmp = dir.join(format!(".{name}.tmp"));
    let path = dir.join(name);
    let mut file = File::create(&tmp).map_err(io_err("create", &tmp))?;
    file.write_all(bytes).map_err(io_err("write", &tmp))?;
    file.sync_all().map_err(io_err("sync", &tmp))?;
    drop(file);
    fs::rename(&tmp, &path).map_err(io_err("rename into place", &path))?;
    sync_dir(dir)
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
            job,
            attempt,
            name: format!("job{job}"),
            command: vec!["true".into()],
            cwd: "/".into(),
            env: BTreeMap::new(),
            gpus: vec![0],
            walltime_s: Some(60),
            grace_s: 5,
        }
    }

    fn a(job: u64, attempt: u32) -> AttemptRef {
        AttemptRef { job, attempt }
    }

    #[test]
    fn create_writes_launch_and_empty_logs_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(&tmp.path().join("jobs")).unwrap();
        assert!(!dir.exists(a(7, 1)));
        dir.create(&launch(7, 1)).unwrap();
        assert!(dir.exists(a(7, 1)));
        assert_eq!(dir.read_launch(a(7, 1)).unwrap(), launch(7, 1));
        for stream in [Stream::Stdout, Stream::Stderr] {
            assert_eq!(fs::read(dir.log_path(a(7, 1), stream)).unwrap(), b"");
        }
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
        // Stray entries are not attempts.
        fs::create_dir(tmp.path().join("notes")).unwrap();
        fs::create_dir(tmp.path().join("010.1")).unwrap();
        fs::write(tmp.path().join("3.1"), b"").unwrap();
        assert_eq!(
            dir.list().unwrap(),
            vec![a(2, 1), a(10, 1), a(10, 2), a(10, 3)]
        );
        assert_eq!(dir.latest_attempt(10).unwrap(), Some(3));
        assert_eq!(dir.latest_attempt(2).unwrap(), Some(1));
        assert_eq!(dir.latest_attempt(99).unwrap(), None);
    }

    #[test]
    fn pid_records_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        dir.create(&launch(1, 1)).unwrap();
        assert_eq!(dir.read_pid(a(1, 1)).unwrap(), None);
        let record = PidRecord {
            pgid: 4242,
            leader_start_ticks: Some(123456),
            boot_id: Some("b00t".into()),
        };
        dir.write_pid(a(1, 1), &record).unwrap();
        assert_eq!(dir.read_pid(a(1, 1)).unwrap(), Some(record));
        let bare = PidRecord {
            pgid: 9,
            leader_start_ticks: None,
            boot_id: None,
        };
        dir.write_pid(a(1, 1), &bare).unwrap();
        assert_eq!(
            fs::read_to_string(dir.attempt_dir(a(1, 1)).join("pid")).unwrap(),
            "9\n"
        );
        assert_eq!(dir.read_pid(a(1, 1)).unwrap(), Some(bare));
        fs::write(dir.attempt_dir(a(1, 1)).join("pid"), "x\n").unwrap();
        assert!(matches!(
            dir.read_pid(a(1, 1)),
            Err(JobDirError::BadPid { .. })
        ));
    }

    #[test]
    fn outcome_is_replaced_whole_and_timestamped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        dir.create(&launch(1, 2)).unwrap();
        assert_eq!(dir.read_outcome(a(1, 2)).unwrap(), None);
        dir.write_outcome(a(1, 2), &Outcome::Exited { code: 3 })
            .unwrap();
        let stored = dir.read_outcome(a(1, 2)).unwrap().unwrap();
        assert_eq!(stored.outcome, Outcome::Exited { code: 3 });
        assert!(stored.at_ms > 1_600_000_000_000, "{}", stored.at_ms);
        dir.write_outcome(a(1, 2), &Outcome::Cancelled).unwrap();
        assert_eq!(
            dir.read_outcome(a(1, 2)).unwrap().unwrap().outcome,
            Outcome::Cancelled
        );
        let leftovers: Vec<_> = fs::read_dir(dir.attempt_dir(a(1, 2)))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn corrupt_outcome_is_an_error_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        dir.create(&launch(1, 1)).unwrap();
        fs::write(dir.attempt_dir(a(1, 1)).join("outcome.json"), b"{").unwrap();
        let err = dir.read_outcome(a(1, 1)).unwrap_err();
        assert!(err.to_string().contains("outcome.json"), "{err}");
    }

    #[test]
    fn acked_marker_is_idempotent() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        dir.create(&launch(5, 1)).unwrap();
        assert!(!dir.is_acked(a(5, 1)));
        dir.mark_acked(a(5, 1)).unwrap();
        dir.mark_acked(a(5, 1)).unwrap();
        assert!(dir.is_acked(a(5, 1)));
    }

    #[test]
    fn logs_open_for_appending() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        dir.create(&launch(5, 1)).unwrap();
        for chunk in ["one\n", "two\n"] {
            let mut f = dir.open_log(a(5, 1), Stream::Stderr).unwrap();
            f.write_all(chunk.as_bytes()).unwrap();
        }
        assert_eq!(
            fs::read_to_string(dir.log_path(a(5, 1), Stream::Stderr)).unwrap(),
            "one\ntwo\n"
        );
    }
}
