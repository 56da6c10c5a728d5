//! What the agent keeps of ended attempts, and for how long.
//!
//! - **Checkpoint directories** (`<root>/checkpoints/<job>`, `GPUSCHED_CHECKPOINT_DIR`):
//!   when an attempt's end is acknowledged and no other attempt of the job is held, an
//!   empty one (nothing but the agent's own preemption deadline file) is removed at
//!   once, or, when it holds nothing at all, kept for the next job of the same owner
//!   (`spare_dirs.rs`). One the job wrote into is removed too when the job cannot run again, else
//!   kept (see [`may_restart`]) until the log retention age has passed since it was
//!   last modified.
//! - **Logs** of acknowledged attempts go after `--log-retention` (age since the end
//!   was acknowledged) and, oldest end first, whenever together they pass
//!   `--log-max-total` (bytes written), and beyond [`MAX_ENDED_WITH_LOGS`] attempts
//!   with logs. A running (or not yet acknowledged) attempt's logs are never
//!   in the index, so never removed. The index is one small entry per ended attempt
//!   that wrote output, built by one directory listing at start, then kept up to date
//!   at each acknowledgement; a sweep on a timer pops from its old end only, so a
//!   sweep costs what it removes, not the number of files.
//!
//! Which jobs lost logs to retention is kept as one bit per job id (a million jobs:
//! 125 KB), so the log endpoint can say "removed by retention" instead of serving an
//! empty log; it is saved next to the logs so it survives a restart.

use std::collections::VecDeque;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gpusched_wire::{AttemptRef, Launch, Outcome};

use crate::jobdir::{JobDir, StoredOutcome, Stream};

/// How long ended attempts' logs are kept, and how much of them, per node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// `None`: no age limit.
    pub max_age: Option<Duration>,
    /// `None`: no size limit (bytes).
    pub max_total: Option<u64>,
}

/// The defaults the docs state (`--log-retention 7d --log-max-total 10G`).
impl Default for Policy {
    fn default() -> Self {
        Policy {
            max_age: Some(Duration::from_secs(7 * 86_400)),
            max_total: Some(10 << 30),
        }
    }
}

/// The most ended attempts whose logs are kept, whatever the age and total allow: the
/// index costs about 48 bytes per attempt, so this bounds it near 5 MB (jobs that print
/// a line each would otherwise fill it with millions of tiny files).
pub const MAX_ENDED_WITH_LOGS: usize = 100_000;

/// How often the sweeper runs (more often under a retention shorter than a minute).
pub const SWEEP_EVERY: Duration = Duration::from_secs(30);

impl Policy {
    /// Every [`SWEEP_EVERY`], or twice per retention age when that is shorter.
    pub fn sweep_every(&self) -> Duration {
        let half = self.max_age.map_or(SWEEP_EVERY, |a| a / 2);
        half.clamp(Duration::from_millis(100), SWEEP_EVERY)
    }
}

/// The file that remembers which jobs lost logs to retention.
const REMOVED_FILE: &str = ".retention-removed";

/// Whether the job of an attempt that ended so may run again (here or elsewhere), so a
/// checkpoint directory it wrote into must stay. From the server's rules (see
/// `state/agents.rs`, `ended`): a job of one node that exited, was killed by a signal,
/// passed its walltime or could not start is over, and so is a service replica stopped
/// for failing its liveness probe (its service starts another job, not this one again). A lost, preempted, stopped or
/// cancelled one may be requeued (a cancel also stops attempts the server no longer
/// wants after it requeued them), and a part of a gang ends only with its gang, which
/// another part may requeue. The agent is not told when a job is over, so these keep
/// their directory until the retention age passes.
pub fn may_restart(launch: Option<&Launch>, outcome: Option<&StoredOutcome>) -> bool {
    let gang = launch
        .and_then(|l| l.dist.as_ref())
        .is_some_and(|d| d.nnodes > 1);
    let over = matches!(
        outcome.map(|o| &o.outcome),
        Some(
            Outcome::Exited { .. }
                | Outcome::Signaled { .. }
                | Outcome::TimedOut { .. }
                | Outcome::SpawnFailed { .. }
                | Outcome::Unhealthy { .. }
        )
    );
    gang || !over
}

/// Removes a job's checkpoint directory if it is empty (the agent's deadline file
/// aside), or whatever it holds unless `keep_used`. Problems are logged: a directory
/// left behind costs disk, not correctness.
pub fn clean_checkpoint_dir(dir: &Path, keep_used: bool) {
    // Most jobs never write into theirs: one `rmdir` ends it (reading it first cost five
    // more system calls a job).
    match fs::remove_dir(dir) {
        Ok(()) => return,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return,
        Err(_) => {}
    }
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return,
        Err(e) => {
            tracing::warn!("cannot read {}: {e}", dir.display());
            return;
        }
    };
    let used = entries
        .filter_map(|e| e.ok())
        .any(|e| e.file_name() != crate::launcher::DEADLINE_FILE);
    let result = if !used {
        let _ = fs::remove_file(dir.join(crate::launcher::DEADLINE_FILE));
        fs::remove_dir(dir)
    } else if !keep_used {
        fs::remove_dir_all(dir)
    } else {
        Ok(())
    };
    if let Err(e) = result {
        if e.kind() != io::ErrorKind::NotFound {
            tracing::warn!(
                "cannot remove the checkpoint directory {}: {e}",
                dir.display()
            );
        }
    }
}

/// One ended attempt's logs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Ended {
    a: AttemptRef,
    /// When its end was acknowledged (Unix ms), or its newest log's time for logs found
    /// at start.
    at_ms: u64,
    bytes: u64,
    /// Its ranks with files, first and count (a part with `tasks_per_node`).
    ranks: Option<(u32, u32)>,
}

/// Ended attempts with logs, oldest first, and which jobs lost logs to retention.
#[derive(Debug, Default)]
pub struct LogIndex {
    ended: VecDeque<Ended>,
    total: u64,
    /// Bit `job` set: logs of an attempt of that job were removed by retention.
    removed: Vec<u64>,
    /// `removed` changed since it was last saved.
    dirty: bool,
}

/// What one sweep did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub attempts: usize,
    pub bytes: u64,
    pub checkpoint_dirs: usize,
}

impl LogIndex {
    /// Reads the logs directory once: every attempt with files that is not `live`
    /// (held in the journal, so not yet acknowledged), oldest first.
    pub fn scan(logs: &Path, live: impl Fn(AttemptRef) -> bool) -> LogIndex {
        let mut by: std::collections::BTreeMap<AttemptRef, Ended> = Default::default();
        for e in fs::read_dir(logs)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
        {
            let name = e.file_name();
            let Some((a, rank)) = name.to_str().and_then(parse_log_name) else {
                continue;
            };
            if live(a) {
                continue;
            }
            let Ok(meta) = e.metadata() else { continue };
            let at_ms = meta.modified().ok().map(crate::clock::unix_ms).unwrap_or(0);
            let entry = by.entry(a).or_insert(Ended {
                a,
                at_ms: 0,
                bytes: 0,
                ranks: None,
            });
            entry.at_ms = entry.at_ms.max(at_ms);
            entry.bytes += meta.len();
            if let Some(r) = rank {
                entry.ranks = Some(match entry.ranks {
                    None => (r, 1),
                    Some((first, n)) => {
                        let last = (first + n - 1).max(r);
                        let first = first.min(r);
                        (first, last - first + 1)
                    }
                });
            }
        }
        let mut ended: Vec<Ended> = by.into_values().collect();
        ended.sort_by_key(|e| (e.at_ms, e.a));
        let total = ended.iter().map(|e| e.bytes).sum();
        let removed = fs::read(logs.join(REMOVED_FILE))
            .map(|b| {
                b.chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        LogIndex {
            ended: ended.into(),
            total,
            removed,
            dirty: false,
        }
    }

    /// Ended attempts indexed, and their bytes.
    pub fn size(&self) -> (usize, u64) {
        (self.ended.len(), self.total)
    }

    /// The ranks with log files of an ended attempt in the index (`Some(empty)`: one
    /// process, no ranks); `None` if it is not indexed. A scan of the index, far
    /// cheaper than listing a directory of as many files.
    pub fn ranks_of(&self, a: AttemptRef) -> Option<Vec<u32>> {
        let e = self.ended.iter().rev().find(|e| e.a == a)?;
        Some(
            e.ranks
                .map_or_else(Vec::new, |(first, n)| (first..first + n).collect()),
        )
    }

    /// Whether retention removed logs of an attempt of `job`.
    pub fn was_removed(&self, job: u64) -> bool {
        let (w, b) = ((job / 64) as usize, job % 64);
        self.removed.get(w).is_some_and(|x| x & (1 << b) != 0)
    }

    fn mark_removed(&mut self, job: u64) {
        let (w, b) = ((job / 64) as usize, job % 64);
        // Job ids are dense from 1; a wild one would cost memory, so it is not marked
        // (its log then reads as empty, as before retention existed).
        if w > 1 << 24 {
            return;
        }
        if self.removed.len() <= w {
            self.removed.resize(w + 1, 0);
        }
        self.removed[w] |= 1 << b;
        self.dirty = true;
    }
}

/// The log files of an attempt whose ranks are `ranks` (see [`Ended::ranks`]).
fn log_files(dir: &JobDir, a: AttemptRef, ranks: Option<(u32, u32)>) -> Vec<PathBuf> {
    let mut files = Vec::with_capacity(2);
    for s in [Stream::Stdout, Stream::Stderr] {
        files.push(dir.log_path(a, s));
        if let Some((first, n)) = ranks {
            for r in first..first + n {
                files.push(dir.rank_log_path(a, Some(r), s));
            }
        }
    }
    files
}

/// Indexes an acknowledged attempt's logs (two `stat`s for an attempt of one process).
pub fn ended(dir: &JobDir, a: AttemptRef, launch: Option<&Launch>, now_ms: u64) {
    let ranks = launch
        .and_then(|l| l.dist.as_ref())
        .and_then(|d| d.tasks_per_node.map(|k| (d.node_rank * k, k)));
    let bytes: Option<u64> = log_files(dir, a, ranks)
        .iter()
        .filter_map(|p| fs::metadata(p).ok())
        .map(|m| m.len())
        .reduce(|x, y| x + y);
    // No file: the attempt printed nothing, there is nothing to keep track of.
    let Some(bytes) = bytes else { return };
    let mut index = dir.log_index();
    index.total += bytes;
    index.ended.push_back(Ended {
        a,
        at_ms: now_ms,
        bytes,
        ranks,
    });
}

/// Removes the logs that `policy` no longer keeps (oldest end first) and checkpoint
/// directories kept for a restart past the age limit, and saves which jobs lost logs.
pub fn sweep(dir: &JobDir, policy: &Policy, now_ms: u64) -> Swept {
    sweep_to(dir, policy, now_ms, MAX_ENDED_WITH_LOGS)
}

/// [`sweep`], keeping at most `max_attempts` ended attempts' logs.
fn sweep_to(dir: &JobDir, policy: &Policy, now_ms: u64, max_attempts: usize) -> Swept {
    let mut gone = Vec::new();
    {
        let mut index = dir.log_index();
        let max_age_ms = policy.max_age.map(|d| d.as_millis() as u64);
        while let Some(front) = index.ended.front() {
            let too_old = max_age_ms.is_some_and(|age| now_ms.saturating_sub(front.at_ms) > age);
            let too_big = policy.max_total.is_some_and(|max| index.total > max);
            let too_many = index.ended.len() > max_attempts;
            if !(too_old || too_big || too_many) {
                break;
            }
            let e = index.ended.pop_front().expect("front exists");
            index.total -= e.bytes;
            index.mark_removed(e.a.job);
            gone.push(e);
        }
    }
    let mut swept = Swept::default();
    for e in &gone {
        for p in log_files(dir, e.a, e.ranks) {
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(err) => tracing::warn!("cannot remove the log {}: {err}", p.display()),
            }
        }
        swept.attempts += 1;
        swept.bytes += e.bytes;
    }
    if let Some(age) = policy.max_age {
        swept.checkpoint_dirs = expire_checkpoints(dir, age);
    }
    save_removed(dir);
    swept
}

/// Removes the checkpoint directories of jobs with no attempt held here that were not
/// modified for `age` (kept in case the job restarted here; see [`may_restart`]).
fn expire_checkpoints(dir: &JobDir, age: Duration) -> usize {
    let root = dir.checkpoint_dir(0);
    let Some(root) = root.parent() else { return 0 };
    let mut n = 0;
    for e in fs::read_dir(root)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
    {
        let Some(job) = e.file_name().to_str().and_then(|s| s.parse::<u64>().ok()) else {
            continue;
        };
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|d| d > age);
        if old && !dir.job_is_live(job) {
            clean_checkpoint_dir(&e.path(), false);
            n += 1;
        }
    }
    n
}

/// Saves which jobs lost logs (a new file renamed over the old: never half a file).
fn save_removed(dir: &JobDir) {
    let bytes: Vec<u8> = {
        let mut index = dir.log_index();
        if !index.dirty {
            return;
        }
        index.dirty = false;
        index.removed.iter().flat_map(|w| w.to_le_bytes()).collect()
    };
    let path = dir.logs_dir().join(REMOVED_FILE);
    let tmp = dir.logs_dir().join(format!("{REMOVED_FILE}.tmp"));
    if let Err(e) = fs::write(&tmp, bytes).and_then(|()| fs::rename(&tmp, &path)) {
        tracing::warn!("cannot save {}: {e}", path.display());
    }
}

/// `JOB.ATTEMPT.stdout`, `JOB.ATTEMPT.rankR.stderr`, … as the attempt and the rank.
fn parse_log_name(name: &str) -> Option<(AttemptRef, Option<u32>)> {
    let mut parts = name.split('.');
    let job = parts.next()?.parse().ok()?;
    let attempt = parts.next()?.parse().ok()?;
    let mut next = parts.next()?;
    let mut rank = None;
    if let Some(r) = next.strip_prefix("rank") {
        rank = Some(r.parse().ok()?);
        next = parts.next()?;
    }
    if !(next == "stdout" || next == "stderr") || parts.next().is_some() {
        return None;
    }
    Some((AttemptRef { job, attempt }, rank))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::io::Write;

    use super::*;

    fn launch(job: u64) -> Launch {
        Launch {
            user: "nobody".into(),
            job,
            attempt: 1,
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

    fn a(job: u64) -> AttemptRef {
        AttemptRef { job, attempt: 1 }
    }

    /// An attempt that printed `bytes` bytes to stdout and ended.
    fn printed(dir: &JobDir, job: u64, bytes: usize) {
        dir.create(&launch(job)).unwrap();
        let mut f = dir.open_log(a(job), Stream::Stdout).unwrap();
        f.write_all(&vec![b'x'; bytes]).unwrap();
        dir.write_outcome(a(job), &Outcome::Exited { code: 0 })
            .unwrap();
    }

    const HOUR_MS: u64 = 3_600_000;

    #[test]
    fn logs_go_by_age_oldest_first_and_a_running_jobs_never() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        for job in 1..=3 {
            printed(&dir, job, 10);
        }
        dir.mark_acked(a(1)).unwrap();
        dir.mark_acked(a(2)).unwrap();
        // Job 3 ended but the server does not have it yet; job 4 runs.
        dir.create(&launch(4)).unwrap();
        dir.open_log(a(4), Stream::Stderr).unwrap();
        assert_eq!(dir.log_index().size(), (2, 20));
        let policy = Policy {
            max_age: Some(Duration::from_secs(3600)),
            max_total: None,
        };
        let now = crate::clock::now_ms();
        assert_eq!(sweep(&dir, &policy, now).attempts, 0, "not old yet");
        let swept = sweep(&dir, &policy, now + 2 * HOUR_MS);
        assert_eq!((swept.attempts, swept.bytes), (2, 20));
        assert!(!dir.log_path(a(1), Stream::Stdout).exists());
        assert!(dir.log_path(a(3), Stream::Stdout).exists());
        assert!(dir.log_path(a(4), Stream::Stderr).exists());
        let index = dir.log_index();
        assert!(index.was_removed(1) && index.was_removed(2) && !index.was_removed(3));
    }

    #[test]
    fn logs_go_oldest_first_once_they_pass_the_total() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        for job in [5, 2, 9, 7] {
            printed(&dir, job, 100);
            dir.mark_acked(a(job)).unwrap();
        }
        let policy = Policy {
            max_age: None,
            max_total: Some(250),
        };
        let swept = sweep(&dir, &policy, 0);
        assert_eq!(swept.attempts, 2);
        // The first two ended (acknowledged) go, whatever their ids.
        for (job, kept) in [(5, false), (2, false), (9, true), (7, true)] {
            assert_eq!(
                dir.log_path(a(job), Stream::Stdout).exists(),
                kept,
                "job {job}"
            );
        }
        assert_eq!(dir.log_index().size(), (2, 200));
        assert_eq!(sweep(&dir, &policy, 0), Swept::default());
    }

    #[test]
    fn beyond_the_most_attempts_kept_the_oldest_go() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        for job in 1..=5 {
            printed(&dir, job, 1);
            dir.mark_acked(a(job)).unwrap();
        }
        let policy = Policy {
            max_age: None,
            max_total: None,
        };
        assert_eq!(sweep_to(&dir, &policy, 0, 3).attempts, 2);
        assert!(!dir.log_path(a(2), Stream::Stdout).exists());
        assert!(dir.log_path(a(3), Stream::Stdout).exists());
    }

    #[test]
    fn the_index_is_rebuilt_at_start_and_remembers_what_retention_removed() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let dir = JobDir::open(tmp.path()).unwrap();
            for job in 1..=3 {
                printed(&dir, job, 10);
            }
            // Ranked files of a part with two processes.
            for r in [4, 5] {
                let mut f = dir.open_rank_log(a(6), Some(r), Stream::Stdout).unwrap();
                f.write_all(b"rank").unwrap();
            }
            dir.mark_acked(a(1)).unwrap();
            let policy = Policy {
                max_age: None,
                max_total: Some(5),
            };
            assert_eq!(sweep(&dir, &policy, 0).attempts, 1);
        }
        // Job 1's logs are gone; 2 and 3 are not acknowledged (still in the journal),
        // so only job 6's files are indexed.
        let dir = JobDir::open(tmp.path()).unwrap();
        assert_eq!(dir.log_index().size(), (1, 8));
        assert!(dir.log_index().was_removed(1));
        let policy = Policy {
            max_age: None,
            max_total: Some(1),
        };
        assert_eq!(sweep(&dir, &policy, 0).attempts, 1);
        assert!(!dir.rank_log_path(a(6), Some(5), Stream::Stdout).exists());
        assert!(dir.log_path(a(2), Stream::Stdout).exists());
    }

    #[test]
    fn an_ended_parts_ranks_come_from_the_index_not_a_listing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        let mut l = launch(4);
        l.dist = Some(gpusched_wire::DistLaunch {
            nnodes: 2,
            node_rank: 1,
            gpus_per_node: 2,
            tasks_per_node: Some(2),
            master_addr: None,
            master_port: None,
            hosts: Vec::new(),
        });
        dir.create(&l).unwrap();
        for r in [2, 3] {
            dir.open_rank_log(a(4), Some(r), Stream::Stdout).unwrap();
        }
        dir.mark_acked(a(4)).unwrap();
        assert_eq!(dir.log_index().ranks_of(a(4)), Some(vec![2, 3]));
        // The files are not listed: with them gone (by hand), the index still answers.
        for r in [2, 3] {
            fs::remove_file(dir.rank_log_path(a(4), Some(r), Stream::Stdout)).unwrap();
        }
        assert_eq!(dir.log_ranks(a(4)), vec![2, 3]);
        assert_eq!(dir.log_ranks(a(5)), Vec::<u32>::new());
    }

    #[test]
    fn log_names_parse_and_others_are_ignored() {
        assert_eq!(
            parse_log_name("7.2.stdout"),
            Some((AttemptRef { job: 7, attempt: 2 }, None))
        );
        assert_eq!(
            parse_log_name("7.2.rank13.stderr"),
            Some((AttemptRef { job: 7, attempt: 2 }, Some(13)))
        );
        for bad in [
            "7.2.stdin",
            "7.stdout",
            ".retention-removed",
            "7.2.stdout.tmp",
            "x.2.stdout",
        ] {
            assert_eq!(parse_log_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn checkpoint_directories_kept_for_a_restart_expire_with_the_age() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        let kept = dir.checkpoint_dir(3);
        fs::create_dir_all(&kept).unwrap();
        fs::write(kept.join("state"), "s").unwrap();
        let live = dir.checkpoint_dir(4);
        fs::create_dir_all(&live).unwrap();
        dir.create(&launch(4)).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let policy = Policy {
            max_age: Some(Duration::from_millis(10)),
            max_total: None,
        };
        assert_eq!(sweep(&dir, &policy, 0).checkpoint_dirs, 1);
        assert!(!kept.exists() && live.exists());
    }
}
