//! The journal file: one append-only file of JSON lines, replayed at open, compacted
//! when most of it is dead, and synced to disk in groups.
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

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use gpusched_wire::{AttemptRef, Launch};
use serde::{Deserialize, Serialize};

use super::records::{PidRecord, StoredOutcome};
use super::{io_err, JobDir, JobDirError};

pub(super) const JOURNAL: &str = "attempts.jsonl";

/// The journal is compacted in the agent's life once it is at least this large and the
/// bytes of acknowledged attempts exceed those of the rest.
const COMPACT_MIN_BYTES: u64 = 1 << 20;

/// One journal line.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Entry {
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
pub(super) struct Record {
    pub(super) launch: Option<Launch>,
    pub(super) pid: Option<PidRecord>,
    pub(super) outcome: Option<StoredOutcome>,
    pub(super) acked: bool,
    /// The journal bytes of this attempt's lines (to know when compaction pays).
    pub(super) bytes: u64,
}

pub(super) struct Inner {
    pub(super) file: File,
    /// The journal's length after the last whole line, to cut off a torn append.
    pub(super) len: u64,
    /// Attempts not yet acknowledged: everything recovery needs.
    pub(super) index: BTreeMap<AttemptRef, Record>,
    /// The journal bytes of the attempts in `index`; the rest of `len` is dead.
    pub(super) live_bytes: u64,
    /// Acknowledged attempts, each with the acknowledgement's number, kept until a poll
    /// sent after it was answered (see the notes of `acks.rs`).
    pub(super) acked: BTreeMap<AttemptRef, u64>,
    /// The number the next acknowledgement gets.
    pub(super) ack_seq: u64,
    /// No compaction before the journal reaches this length (raised after a failed one,
    /// so a full disk is not retried at every acknowledgement).
    pub(super) compact_at: u64,
    /// Compactions done in this life (for tests and the benchmark's account).
    pub(super) compactions: u64,
    /// How far the current journal file is known to be on disk (`len` when every
    /// append was synced). A compaction replaces the file with one synced whole.
    pub(super) synced: u64,
    /// The journal file's generation: a compaction starts a new one.
    pub(super) generation: u64,
    /// `fdatasync` calls made (for tests and the benchmark's account).
    pub(super) syncs: u64,
}

impl Inner {
    /// Reads the journal at `root`, keeps what is not yet acknowledged and rewrites it
    /// to hold only that.
    pub(super) fn open(root: &Path) -> Result<Inner, JobDirError> {
        let path = root.join(JOURNAL);
        let mut index = read_journal(&path)?;
        index.retain(|_, r| !r.acked && r.launch.is_some());
        let (file, len) = rewrite(root, &mut index)?;
        let live_bytes = index.values().map(|r| r.bytes).sum();
        Ok(Inner {
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
        })
    }
}

impl JobDir {
    /// Appends one line; returns its length.
    pub(super) fn append(&self, inner: &mut Inner, e: &Entry) -> Result<u64, JobDirError> {
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
    pub(super) fn count(inner: &mut Inner, a: AttemptRef, bytes: u64) -> &mut Record {
        inner.live_bytes += bytes;
        let r = inner.index.entry(a).or_default();
        r.bytes += bytes;
        r
    }

    /// The journal's length now, and how many compactions ran in this life.
    pub fn journal_stats(&self) -> (u64, u64) {
        let inner = self.lock();
        (inner.len, inner.compactions)
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
    pub(super) fn sync_through(&self, generation: u64, end: u64) -> Result<(), JobDirError> {
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

    /// Rewrites the journal when acknowledged attempts make up most of it. A failure is
    /// logged, not returned: appending to the old journal still works.
    pub(super) fn maybe_compact(&self, inner: &mut Inner) {
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

/// Makes a directory's entries (new or renamed files) durable.
fn sync_dir(dir: &Path) -> Result<(), JobDirError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("sync", dir))
}

#[cfg(test)]
mod tests {
    use gpusched_wire::Outcome;

    use super::*;
    use crate::jobdir::fixtures::{a, launch};

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

    /// Protocol 5: a replica's launch (its probes) and its end by liveness are
    /// journalled and read back whole (every journal type refuses unknown fields, so a
    /// field it did not carry would make the next life refuse the journal).
    #[test]
    fn a_replicas_launch_and_unhealthy_end_survive_a_reopen() {
        use gpusched_wire::service::{Probe, ServeLaunch};
        let tmp = tempfile::tempdir().unwrap();
        let mut l = launch(1, 1);
        l.serve = Some(ServeLaunch {
            readiness: Some(Probe {
                path: Some("/v2/health/ready".into()),
                period_s: 5,
                timeout_s: 2,
                failure_threshold: 4,
                initial_delay_s: 10,
            }),
            liveness: Some(Probe::default()),
        });
        let end = Outcome::Unhealthy {
            message: "liveness probe failed 3 times in a row: connection refused".into(),
        };
        {
            let dir = JobDir::open(tmp.path()).unwrap();
            dir.create(&l).unwrap();
            dir.write_outcome(a(1, 1), &end).unwrap();
        }
        let dir = JobDir::open(tmp.path()).unwrap();
        assert_eq!(dir.read_launch(a(1, 1)).unwrap(), l);
        assert_eq!(dir.read_outcome(a(1, 1)).unwrap().unwrap().outcome, end);
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
}
