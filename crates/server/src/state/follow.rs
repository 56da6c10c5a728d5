//! Followers on the live cluster. The core decides them (`gpusched_core::live::follow`):
//! a short pending job queued on a busy node behind a running job of its kind, to start
//! on its GPUs the moment that job ends. The server keeps the fact where a restart finds
//! it (the job's `behind`, stored), tells the node's agent (`Desired::queued`, so the
//! agent starts it with no round of the server in between), and applies what the core
//! did when the job ahead leaves: the follower starts there (its agent has usually
//! started it already and says so in the same report), or goes back to the queue.
//!
//! A follower sent back to the queue takes a new attempt number: its launch went out, so
//! its agent may have started the old attempt (and stops it, as no longer wanted), and an
//! attempt never runs twice. That uses no retry (`recalls`, like preemptions).

use gpusched_core::live::Left;
use gpusched_wire::compact::Answer;
use gpusched_wire::history::JobEventKind;
use gpusched_wire::{AttemptRef, Desired, QueuedKnown, QueuedLaunch};

use super::State;

/// What the predictor believes of job `id`'s run time, for a job queued before the
/// cluster had run jobs like it (no estimate): it may follow on that (not made its
/// estimate: the policy's view of it stays as it was).
pub(super) fn guess(
    jobs: &super::tracked::Tracked<u64, Box<crate::record::JobRecord>>,
    learnt: &super::learn::Learnt,
    policy: gpusched_core::PolicyKind,
    id: u64,
) -> Option<gpusched_core::Seconds> {
    super::learn::estimate_for(learnt, policy, &jobs.get(&id)?.view)
}

impl State {
    /// The follows the core made, each written (`behind`) and told to its node.
    pub(super) fn apply_follows(&mut self, follows: Vec<gpusched_core::live::Follow>) {
        self.cfg.metrics.followed("queued", follows.len() as u64);
        for f in follows {
            self.set_behind(f.job, Some(f.after));
            self.bump(&f.node);
        }
    }

    /// Records whom a pending job follows (written only when it changes).
    fn set_behind(&mut self, id: u64, after: Option<u64>) {
        let after = after.and_then(std::num::NonZeroU64::new);
        if self.jobs.get(&id).is_some_and(|j| j.behind != after) {
            if let Some(j) = self.jobs.get_mut(&id) {
                j.behind = after;
            }
        }
    }

    /// Takes job `id` out of the core's queue for good (it ended, or is held or updated
    /// while waiting). A follower leaving lets the one behind it move up, which its node
    /// is told. Returns what the core did with the jobs queued behind `id` (see
    /// [`State::after_leaving`]).
    pub(super) fn unqueue(&mut self, id: u64) -> Left {
        let node = self.follow_node(id);
        let next = self.cluster.followers_of(id).first().copied();
        let left = self.cluster.remove(id, self.now.secs());
        if node.is_some() {
            self.set_behind(id, None);
            self.moved_up(next, node);
        }
        left
    }

    /// A follower left its chain on `node`: `next`, the job that was behind it, now
    /// follows its predecessor (as the core says), and the node is told.
    fn moved_up(&mut self, next: Option<u64>, node: Option<String>) {
        if let Some(next) = next {
            let after = self.cluster.following(next);
            self.set_behind(next, after);
        }
        if let Some(node) = node {
            self.bump(&node);
        }
    }

    /// A job left the core's queue: its first follower took its GPUs and starts there
    /// (`next`); followers the core sent back to the queue are recalled.
    pub(super) fn after_leaving(&mut self, left: Left, ahead: u64) {
        if let Some(p) = left.next {
            self.cfg.metrics.followed("handed_over", 1);
            self.set_behind(p.job, None);
            self.apply_placement(p);
        }
        self.send_back(&left.back, ahead);
    }

    /// Followers sent back to the queue because the job `ahead` of them left without
    /// handing its GPUs over (its run was lost, preempted or stopped): each takes a new
    /// attempt number, no retry used.
    pub(super) fn send_back(&mut self, ids: &[u64], ahead: u64) {
        for &id in ids {
            let Some(job) = self.jobs.get_mut(&id) else {
                continue;
            };
            job.behind = None;
            job.recalls += 1;
            let attempt = job.view.attempt;
            job.view.attempt += 1;
            self.note(
                id,
                JobEventKind::Requeued,
                format!(
                    "back in the queue without using a retry: attempt {attempt} was to start \
                     when job {ahead} ended, and job {ahead} left its GPUs another way"
                ),
            );
        }
        if !ids.is_empty() {
            self.cfg.metrics.followed("sent_back", ids.len() as u64);
            self.sched_due = true;
        }
    }

    /// The agent reported on the current attempt of a job the server still has queued
    /// behind another: it started that attempt, so the end of the one ahead has not
    /// reached the server first (a restarted agent reports its journal's attempts in
    /// id order, not in the order they ran). That attempt is used up: the job goes back
    /// to the queue with the next one (no retry used), and the report about it is moot.
    pub(super) fn follower_started_early(&mut self, id: u64) {
        let Some(ahead) = self.cluster.following(id) else {
            return;
        };
        let node = self.follow_node(id);
        let next = self.cluster.followers_of(id).first().copied();
        if !self.cluster.send_back(id, self.now.secs()) {
            return;
        }
        self.moved_up(next, node);
        self.send_back(&[id], ahead);
    }

    /// The node a follower waits on: the node of the running job at the head of its
    /// chain. `None` for a job that follows nobody.
    pub(super) fn follow_node(&self, id: u64) -> Option<String> {
        let mut at = self.cluster.following(id)?;
        while let Some(p) = self.cluster.following(at) {
            at = p;
        }
        self.jobs.get(&at)?.view.node.clone()
    }

    /// The launches queued behind job `head` (running on `node` on `gpus`), first to
    /// start first, each after the one before it, into `out`: whole, or named where the
    /// agent holds them (`answer`).
    pub(super) fn queued_behind(
        &self,
        head: u64,
        gpus: &[u32],
        node: &str,
        answer: &mut Answer<'_>,
        out: &mut Desired,
    ) {
        let chain = self.cluster.followers_of(head);
        let Some(h) = self.jobs.get(&head) else {
            return;
        };
        let mut after = AttemptRef {
            job: head,
            attempt: h.view.attempt,
        };
        for id in chain {
            let Some(job) = self.jobs.get(&id) else {
                break;
            };
            let next = AttemptRef {
                job: id,
                attempt: job.view.attempt,
            };
            // The agent holds it already, or it is sent whole (`gpusched_wire::compact`).
            if answer.holds(next, gpus, 0) {
                out.queued_known.push(QueuedKnown {
                    after,
                    attempt: next,
                });
            } else {
                let launch = self.launch(job, gpus.to_vec(), 0, node);
                out.queued.push(QueuedLaunch { after, launch });
            }
            after = next;
        }
    }

    /// After a restart: pending jobs that followed others follow them again where those
    /// still run (or follow) with room behind them; the others go back to the queue
    /// (recalled: their launch may have reached the agent).
    pub(super) fn restore_follows(&mut self) {
        let mut left: Vec<(u64, u64)> = self
            .jobs
            .iter()
            .filter_map(|(&id, j)| Some((id, j.behind?.get())))
            .collect();
        // A chain is restored from its head: repeat while any joins.
        loop {
            let before = left.len();
            left.retain(|&(id, after)| !self.cluster.restore_follow(id, after));
            if left.len() == before {
                break;
            }
        }
        for (id, after) in left {
            tracing::info!(
                job = id,
                after,
                "a follower could not follow again after the restart; back in the queue"
            );
            self.send_back(&[id], after);
        }
    }

    /// Why a follower cannot be held or updated (`None` for any other job).
    pub(super) fn follow_refusal(&self, id: u64) -> Option<String> {
        let after = self.cluster.following(id)?;
        let node = self.follow_node(id).unwrap_or_default();
        Some(format!(
            "job {id} is queued on {node} to start as soon as job {after} ends (its launch \
             is with the node's agent), so it can no longer be held or updated; `gpusched \
             cancel {id}` still cancels it"
        ))
    }
}
