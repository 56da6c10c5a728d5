//! Acknowledgements: the server has an attempt's end, so it leaves the index (a
//! tombstone stays a while), and its hostfile and checkpoint directory go as the
//! attempt's end allows.
//!
//! Memory: an acknowledged attempt leaves the index at once. Its id is kept (a
//! *tombstone*) only until a poll sent after the acknowledgement has been answered
//! ([`JobDir::forget_acked_before`]): an answer computed before the server had the end
//! may still list the attempt, and it must not run again.

use std::fs;

use gpusched_wire::{AttemptRef, Launch};

use super::journal::Entry;
use super::records::{job_is_live, StoredOutcome};
use super::{JobDir, JobDirError};
use crate::clock::now_ms;

impl JobDir {
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

    /// Whether the server has the attempt's end (and it is not yet forgotten).
    pub fn is_acked(&self, a: AttemptRef) -> bool {
        self.lock().acked.contains_key(&a)
    }
}

/// What the journal held of an attempt when its end was acknowledged.
#[derive(Clone, Debug)]
pub struct AckedAttempt {
    pub launch: Option<Launch>,
    pub outcome: Option<StoredOutcome>,
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use gpusched_wire::Outcome;

    use super::*;
    use crate::jobdir::fixtures::{a, launch};

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
        // ... or a replica stopped by its liveness probe (its service starts a new job).
        let unhealthy = wrote_checkpoint(&dir, 11);
        let why = "liveness probe failed 3 times in a row: connection refused";
        acked_with(
            &dir,
            &launch(11, 1),
            Outcome::Unhealthy {
                message: why.into(),
            },
        );
        assert!(!unhealthy.exists());
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
}
