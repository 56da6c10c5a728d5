//! What the journal says of each attempt: its launch, its process group, its outcome,
//! and which attempts are held.

use gpusched_wire::{AttemptRef, Launch, Outcome};
use serde::{Deserialize, Serialize};

use super::journal::{Entry, Inner};
use super::{JobDir, JobDirError};
use crate::clock::now_ms;

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

impl JobDir {
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

    pub fn read_outcome(&self, a: AttemptRef) -> Result<Option<StoredOutcome>, JobDirError> {
        Ok(self.lock().index.get(&a).and_then(|r| r.outcome.clone()))
    }
}

pub(super) fn job_is_live(inner: &Inner, job: u64) -> bool {
    let first = AttemptRef { job, attempt: 0 };
    inner
        .index
        .range(first..)
        .next()
        .is_some_and(|(a, _)| a.job == job)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobdir::fixtures::{a, launch};
    use crate::jobdir::Stream;

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
}
