//! The live cluster's jobs that can still run, ordered by id, as one slice the core's
//! pass can take.
//!
//! A `Vec` ordered by id made every end cost a shift of every later job: jobs end
//! roughly in admission order, so the one that ends sits near the front and the whole
//! queue behind it moved (with 10,000 jobs pending, a third of the server's instructions
//! per job, and a cost per job that grew with the backlog). A ring buffer shifts the
//! shorter side instead: an end near the front moves the few jobs before it, a submission
//! (the newest id) appends. The pass wants one slice, so the ring is kept in one piece:
//! after any change that wrapped it, it is straightened, which copies it at most once per
//! `capacity - len` appends; keeping the capacity at least twice the length makes that
//! a constant per change.

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};

use crate::SchedJob;

/// Jobs by id, always contiguous; reads and writes as a slice.
#[derive(Default)]
pub struct JobList {
    ring: VecDeque<SchedJob>,
}

impl JobList {
    pub fn new() -> Self {
        JobList::default()
    }

    /// Puts `job` in its place by id (usually the newest, at the end).
    pub fn insert(&mut self, job: SchedJob) {
        let at = self.partition_point(|j| j.spec.id < job.spec.id);
        self.ring.insert(at, job);
        self.straighten();
    }

    /// Takes out the job at `i`.
    pub fn remove(&mut self, i: usize) -> SchedJob {
        let job = self.ring.remove(i).expect("index within the list");
        self.straighten();
        job
    }

    /// Every job, leaving the list empty.
    pub fn take_all(&mut self) -> Vec<SchedJob> {
        std::mem::take(&mut self.ring).into()
    }

    /// Replaces the jobs with `jobs`, which must be ordered by id.
    pub fn set_all(&mut self, jobs: Vec<SchedJob>) {
        debug_assert!(jobs.windows(2).all(|w| w[0].spec.id < w[1].spec.id));
        self.ring = jobs.into();
    }

    /// Makes the ring one piece again if a change wrapped it.
    fn straighten(&mut self) {
        if !self.ring.as_slices().1.is_empty() {
            if self.ring.capacity() < 2 * self.ring.len() {
                self.ring.reserve(self.ring.len());
            }
            self.ring.make_contiguous();
        }
    }
}

impl Deref for JobList {
    type Target = [SchedJob];

    fn deref(&self) -> &[SchedJob] {
        let (front, back) = self.ring.as_slices();
        debug_assert!(back.is_empty(), "the list is kept in one piece");
        front
    }
}

impl DerefMut for JobList {
    fn deref_mut(&mut self) -> &mut [SchedJob] {
        let (front, back) = self.ring.as_mut_slices();
        debug_assert!(back.is_empty(), "the list is kept in one piece");
        front
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JobId, JobSpec, QueueId, UserId};

    fn job(id: u64) -> SchedJob {
        SchedJob::new(JobSpec {
            id: JobId(id),
            gpus: 1,
            gpu_model: None,
            user: UserId(0),
            queue: QueueId(0),
            account: Default::default(),
            priority: 0,
            submit: id as f64,
            estimate: None,
            cpu_milli: 0,
            mem_mib: 0,
            generic: Default::default(),
            gang: None,
            nodes: Vec::new(),
            prefer: Vec::new(),
            deadline: None,
        })
    }

    fn ids(l: &JobList) -> Vec<u64> {
        l.iter().map(|j| j.spec.id.0).collect()
    }

    /// A queue's life: submissions at the end, ends near the front, a job released from
    /// a dependency in the middle; the list stays ordered, whole and as a model says.
    #[test]
    fn ends_near_the_front_and_submissions_at_the_end_keep_the_order() {
        let mut l = JobList::new();
        let mut model: Vec<u64> = Vec::new();
        let mut next = 100;
        for round in 0..5_000u64 {
            for _ in 0..3 {
                l.insert(job(next));
                model.push(next);
                next += 1;
            }
            if round % 7 == 0 {
                // An older id (a job whose dependency was released).
                let old = 50 - (round / 7) % 50;
                if !model.contains(&old) {
                    l.insert(job(old));
                    let at = model.partition_point(|&m| m < old);
                    model.insert(at, old);
                }
            }
            for k in [0, 1, round as usize % 5] {
                if k < model.len() {
                    let i = l.binary_search_by_key(&model[k], |j| j.spec.id.0).unwrap();
                    assert_eq!(l.remove(i).spec.id.0, model.remove(k));
                }
            }
            assert!(l.ring.as_slices().1.is_empty());
        }
        assert_eq!(ids(&l), model);
        let all = l.take_all();
        assert!(l.is_empty());
        l.set_all(all);
        assert_eq!(ids(&l), model);
    }
}
