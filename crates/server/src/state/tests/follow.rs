//! Followers on the live cluster (`state/follow.rs`): short jobs queued behind running
//! ones of their kind, what the agent is told, the hand-over at an end, and what sends
//! them back to the queue.

use super::Step::*;
use super::*;

fn follow(cfg: &mut ServerConfig) {
    cfg.follow = Some(gpusched_core::live::FollowConfig {
        under: 1.0,
        depth: 2,
    });
}

#[test]
fn short_jobs_queue_behind_the_running_one_and_take_its_gpu_when_it_ends() {
    run_with(
        "followers: a batch of short jobs on one GPU",
        follow,
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 walltime=1 batch=4"),
            Round,
            Poll("n1"),
            Reason(2, "queued on n1 behind job 1"),
            Hold("alice", 2),
            Started("n1", 1),
            Exit("n1", 1, 0),
            // The agent started job 2 itself the moment job 1 ended.
            Started("n1", 2),
            Round,
            Poll("n1"),
            Exit("n1", 2, 0),
            Round,
            Poll("n1"),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 walltime=1 batch=4: ok 1 2 3 4
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1 behind 1
              job 3 pending #1 behind 2
              job 4 pending #1
            n1 polls: run 1#1 [0]; cancel -; preempt -; queued 2#1 after 1#1 [0] 3#1 after 2#1 [0]
            alice holds 2: Conflict("job 2 is queued on n1 to start as soon as job 1 ends (its launch is with the node's agent), so it can no longer be held or updated; `gpusched cancel 2` still cancels it")
            n1 reports 1 started: ok
            n1 reports 1 exited 0: ok
            n1 reports 2 started: ok
            round: wrote jobs 1 2 4 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 2 running on n1 [0] #1: running on n1
              job 4 pending #1 behind 3
            n1 polls: run 2#1 [0]; cancel -; preempt -; queued 3#1 after 2#1 [0] 4#1 after 3#1 [0]
            n1 reports 2 exited 0: ok
            round: wrote jobs 2 3 nodes - tokens -; woke n1; ended 2
              job 2 succeeded on n1 [0] #1: exited with code 0
              job 3 starting on n1 [0] #1: sent to n1
            n1 polls: run 3#1 [0]; cancel -; preempt -; queued 4#1 after 3#1 [0]
        "#,
    );
}

/// A compact agent (`PollQuery::have`) is sent each launch once: later answers name the
/// ones it holds, while a launch that changed (or is new) comes whole.
#[test]
fn a_compact_agent_is_sent_each_launch_once() {
    run_with(
        "followers: what a compact agent is sent",
        follow,
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 walltime=1 batch=4"),
            Round,
            PollHeld("n1"),
            PollHeld("n1"),
            Started("n1", 1),
            Exit("n1", 1, 0),
            Started("n1", 2),
            Round,
            PollHeld("n1"),
            // An agent asking without `have` (it did not hold a name) gets everything
            // whole, and holds it all again after.
            Poll("n1"),
            PollHeld("n1"),
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 walltime=1 batch=4: ok 1 2 3 4
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1 behind 1
              job 3 pending #1 behind 2
              job 4 pending #1
            n1 polls: run 1#1 [0]; cancel -; preempt -; queued 2#1 after 1#1 [0] 3#1 after 2#1 [0]
            n1 polls: run -; cancel -; preempt -; held 1#1 2#1 after 1#1 3#1 after 2#1
            n1 reports 1 started: ok
            n1 reports 1 exited 0: ok
            n1 reports 2 started: ok
            round: wrote jobs 1 2 4 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 2 running on n1 [0] #1: running on n1
              job 4 pending #1 behind 3
            n1 polls: run -; cancel -; preempt -; queued 4#1 after 3#1 [0]; held 2#1 3#1 after 2#1
            n1 polls: run 2#1 [0]; cancel -; preempt -; queued 3#1 after 2#1 [0] 4#1 after 3#1 [0]
            n1 polls: run -; cancel -; preempt -; held 2#1 3#1 after 2#1 4#1 after 3#1
        ",
    );
}

#[test]
fn followers_go_back_to_the_queue_with_a_new_attempt_when_the_run_ahead_is_requeued() {
    run_with(
        "followers: sent back by a preemption, a lost node, a restart",
        follow,
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 walltime=1 batch=3"),
            Round,
            // Job 1 is preempted: its GPU is wanted elsewhere, so its followers wait again,
            // each with a new attempt and no retry used.
            Started("n1", 1),
            Preempted("n1", 1),
            Round,
            Poll("n1"),
            Events("alice", 2),
            // The server restarts: the follows are in the rows, and stay.
            Restart,
            Node("n1", 1),
            Round,
            Poll("n1"),
            // A follower cancelled: the one behind it moves up.
            Cancel("alice", 2),
            Round,
            Poll("n1"),
            // Job 1's run is lost and it has no retry left: it fails, and job 3 takes its
            // GPU (its agent did not start it, so it is in `run`).
            Started("n1", 1),
            Lost("n1", 1),
            Round,
            Poll("n1"),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 walltime=1 batch=3: ok 1 2 3
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1 behind 1
              job 3 pending #1 behind 2
            n1 reports 1 started: ok
            n1 reports 1 preempted: ok
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #2: sent to n1
              job 2 pending #2 behind 1
              job 3 pending #2 behind 2
            n1 polls: run 1#2 [0]; cancel -; preempt -; queued 2#2 after 1#2 [0] 3#2 after 2#2 [0]
            alice reads events of 2:
            - 0s submitted #0 [] queue default
            - 0s requeued #2 [] back in the queue without using a retry: attempt 1 was to start when job 1 ended, and job 1 left its GPUs another way
            server restarts
              job 1 starting on n1 [0] #2: sent to n1
              job 2 pending #2 behind 1
              job 3 pending #2 behind 2
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes - tokens -; woke n1; ended -
            n1 polls: run 1#2 [0]; cancel -; preempt -; queued 2#2 after 1#2 [0] 3#2 after 2#2 [0]
            alice cancels 2: cancelled (cancelled)
            round: wrote jobs 2 3 nodes - tokens -; woke n1; ended 2
              job 2 cancelled #2: cancelled before it started
              job 3 pending #2 behind 1
            n1 polls: run 1#2 [0]; cancel -; preempt -; queued 3#2 after 1#2 [0]
            n1 reports 1 started: ok
            n1 reports 1 lost: ok
            round: wrote jobs 1 3 nodes - tokens -; woke n1; ended 1
              job 1 failed on n1 [0] #2: lost 1 time, the last on n1: the agent lost it; no retries left (max_retries = 0)
              job 3 starting on n1 [0] #2: sent to n1
            n1 polls: run 3#2 [0]; cancel -; preempt -
        "#,
    );
}

#[test]
fn only_the_head_of_the_queue_follows_and_only_on_agents_that_can() {
    run_with(
        "followers: another user first, a long job first, an old agent",
        follow,
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 walltime=1"),
            Round,
            // Bob's job is next in line: alice's later one may not pass it.
            Submit("bob", "gpus=1 walltime=1"),
            Submit("alice", "gpus=1 walltime=1"),
            Round,
            Reason(2, "waiting for"),
            Cancel("bob", 2),
            Round,
            // A long job of alice's first stops it the same way.
            Submit("alice", "gpus=1 walltime=3600"),
            Submit("alice", "gpus=1 walltime=1"),
            Round,
            Poll("n1"),
            OldNode("n2", 1),
            Round,
            Submit("carol", "gpus=1 walltime=1 batch=2"),
            Round,
            Poll("n2"),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 walltime=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            bob submits gpus=1 walltime=1: ok 2
            alice submits gpus=1 walltime=1: ok 3
            round: wrote jobs 2 3 nodes - tokens -; woke -; ended -
              job 2 pending #1
              job 3 pending #1
            bob cancels 2: cancelled (cancelled)
            round: wrote jobs 2 3 nodes - tokens -; woke n1; ended 2
              job 2 cancelled #1: cancelled before it started
              job 3 pending #1 behind 1
            alice submits gpus=1 walltime=3600: ok 4
            alice submits gpus=1 walltime=1: ok 5
            round: wrote jobs 4 5 nodes - tokens -; woke -; ended -
              job 4 pending #1
              job 5 pending #1
            n1 polls: run 1#1 [0]; cancel -; preempt -; queued 3#1 after 1#1 [0]
            node n2 (1 GPUs, agent protocol 2) registers: ok
            round: wrote jobs 4 5 nodes n2 tokens -; woke n1 n2; ended -
              job 4 starting on n2 [0] #1: sent to n2
              job 5 pending #1 behind 3
            carol submits gpus=1 walltime=1 batch=2: ok 6 7
            round: wrote jobs 6 7 nodes - tokens -; woke -; ended -
              job 6 pending #1
              job 7 pending #1
            n2 polls: run 4#1 [0]; cancel -; preempt -
        "#,
    );
}

#[test]
fn an_array_offers_tasks_to_follow_its_running_ones_within_its_limit() {
    run_with(
        "followers: an array of short tasks with %1 on two GPUs",
        follow,
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1 walltime=1 array=0-5%1"),
            Round,
            Poll("n1"),
            Started("n1", 2),
            Exit("n1", 2, 0),
            Started("n1", 3),
            Round,
            Counts(1),
            Poll("n1"),
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 walltime=1 array=0-5%1: ok 1
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 running #1 array 0-5%1 next 3: its tasks are running
              job 2 starting on n1 [0] #1 task 1.0: sent to n1
            n1 polls: run 2#1 [0]; cancel -; preempt -; queued 3#1 after 2#1 [0] 4#1 after 3#1 [0]
            n1 reports 2 started: ok
            n1 reports 2 exited 0: ok
            n1 reports 3 started: ok
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended 2
              job 1 running #1 array 0-5%1 next 4: its tasks are running
              job 2 succeeded on n1 [0] #1 task 1.0: exited with code 0
              job 3 running on n1 [0] #1 task 1.1: running on n1
            array 1 running: pending 4 starting 0 running 1 succeeded 1 failed 0 cancelled 0 timed_out 0
            n1 polls: run 3#1 [0]; cancel -; preempt -; queued 4#1 after 3#1 [0] 5#1 after 4#1 [0]
        "#,
    );
}

/// Tasks waiting behind others have no rows of their own, only entries in their array's
/// row (`unwritten.rs`): a restart rebuilds them, follows and all, from that row; a task
/// gets its row at its first change (cancelled, or its array updated while pending).
#[test]
fn tasks_kept_in_their_arrays_row_survive_a_restart_and_get_rows_when_they_change() {
    run_with(
        "followers: listed array tasks across a restart, a cancel and an update",
        follow,
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 walltime=1 array=0-5"),
            Round,
            Poll("n1"),
            Restart,
            Rejoin("n1", 1, &[]),
            Round,
            Poll("n1"),
            CancelTask("alice", 1, 2),
            Round,
            Submit("bob", "gpus=1 walltime=1 array=0-3"),
            Round,
            // Updated in the first round after a restart: its listed task is made
            // otherwise now, so it gets its row (as it was).
            Restart,
            Rejoin("n1", 1, &[]),
            Update("bob", 7, "priority=3"),
            Round,
            Restart,
            Rejoin("n1", 1, &[]),
            Round,
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 walltime=1 array=0-5: ok 1
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 running #1 array 0-5 next 3: its tasks are running
              job 2 starting on n1 [0] #1 task 1.0: sent to n1
            n1 polls: run 2#1 [0]; cancel -; preempt -; queued 3#1 after 2#1 [0] 4#1 after 3#1 [0]
            server restarts
              job 1 running #1 array 0-5 next 3: its tasks are running
              job 2 starting on n1 [0] #1 task 1.0: sent to n1
              job 3 pending #1 behind 2 task 1.1
              job 4 pending #1 behind 3 task 1.2
            node n1 registers again running []: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running #1 array 0-5 next 4: its tasks are running
            n1 polls: run 2#1 [0]; cancel -; preempt -; queued 3#1 after 2#1 [0] 4#1 after 3#1 [0]
            alice cancels 1.2: cancelled (cancelled) job 4
            round: wrote jobs 1 4 nodes - tokens -; woke n1; ended 4
              job 1 running #1 array 0-5 next 5: its tasks are running
              job 4 cancelled #1 task 1.2: cancelled before it started
            bob submits gpus=1 walltime=1 array=0-3: ok 7
            round: wrote jobs 7 nodes - tokens -; woke -; ended -
              job 7 pending #1 array 0-3 next 1
            server restarts
              job 1 running #1 array 0-5 next 5: its tasks are running
              job 2 starting on n1 [0] #1 task 1.0: sent to n1
              job 3 pending #1 behind 2 task 1.1
              job 5 pending #1 behind 3 task 1.3
              job 6 pending #1 task 1.4
              job 7 pending #1 array 0-3 next 1
              job 8 pending #1 task 7.0
            ended, in the store only: 1
            node n1 registers again running []: ok
            bob updates 7 priority=3: ok priority 3 walltime Some(1) queue default
            round: wrote jobs 7 8 nodes - tokens -; woke n1; ended -
              job 7 pending #1 array 0-3 next 1
              job 8 pending #1 task 7.0
            server restarts
              job 1 running #1 array 0-5 next 5: its tasks are running
              job 2 starting on n1 [0] #1 task 1.0: sent to n1
              job 3 pending #1 behind 2 task 1.1
              job 5 pending #1 behind 3 task 1.3
              job 6 pending #1 task 1.4
              job 7 pending #1 array 0-3 next 1
              job 8 pending #1 task 7.0
            ended, in the store only: 1
            node n1 registers again running []: ok
            round: wrote jobs - nodes - tokens -; woke n1; ended -
        "#,
    );
}

#[test]
fn a_follower_reported_before_the_end_ahead_of_it_takes_a_new_attempt() {
    run_with(
        "followers: a restarted agent reports a follower's attempt before the end ahead",
        follow,
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 walltime=1 batch=3"),
            Round,
            Started("n1", 1),
            // A restarted agent reports its journal in id order: job 2's attempt, which
            // it had started, before job 1's end. That attempt is used up.
            Lost("n1", 2),
            Exit("n1", 1, 0),
            Round,
            Poll("n1"),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 walltime=1 batch=3: ok 1 2 3
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1 behind 1
              job 3 pending #1 behind 2
            n1 reports 1 started: ok
            n1 reports 2 lost: ok
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 2 pending #2 behind 3
              job 3 starting on n1 [0] #1: sent to n1
            n1 polls: run 3#1 [0]; cancel -; preempt -; queued 2#2 after 3#1 [0]
        "#,
    );
}

/// A store whose array lists more tasks than this binary keeps (a build with a larger
/// bound wrote it): at the restart every listed task comes back, those past the bound
/// get rows of their own in the first round, and the list shrinks to the bound.
#[test]
fn a_list_longer_than_this_binary_keeps_gives_the_rest_rows_at_restart() {
    use crate::state::unwritten::UNWRITTEN_PER_ARRAY;
    let mut h = Harness::with(follow);
    h.step(Node("n1", 1));
    h.step(Round);
    h.step(Submit("alice", "gpus=1 walltime=3600 array=0-999"));
    h.step(Round);
    let extra = 10u32;
    let listed = UNWRITTEN_PER_ARRAY as u32 + extra;
    let array = h.store.jobs.get_mut(&1).expect("the array's row");
    let p = array.array_progress.as_deref_mut().expect("its progress");
    p.next = 500 + u64::from(listed);
    p.unwritten = (0..listed)
        .map(|i| gpusched_store::UnwrittenTask {
            id: 5000 + u64::from(i),
            index: 500 + i,
            behind: None,
        })
        .collect();
    h.step(Restart);
    let live: Vec<u64> = (5000..5000 + u64::from(listed))
        .filter(|id| h.st.jobs.contains_key(id))
        .collect();
    assert_eq!(live.len(), listed as usize, "every listed task is back");
    h.step(Round);
    let rows = (5000..5000 + u64::from(listed))
        .filter(|id| h.store.jobs.contains_key(id))
        .count();
    assert_eq!(rows, extra as usize, "the tasks past the bound got rows");
    let p = h.store.jobs[&1].array_progress.as_deref().unwrap();
    assert_eq!(p.unwritten.len(), UNWRITTEN_PER_ARRAY);
    // And a restart from that store gives back the same live jobs.
    let before: Vec<u64> = h.st.jobs.keys().copied().collect();
    h.step(Restart);
    let after: Vec<u64> = h.st.jobs.keys().copied().collect();
    assert_eq!(before, after);
}
