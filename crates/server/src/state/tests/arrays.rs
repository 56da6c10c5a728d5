//! Job arrays (issue 14): one record for the whole array, tasks materialised only as
//! they could start, `%K`, cancels of the array and of one task, restarts mid-array,
//! gang-shaped tasks and `after` on an array.

use super::Step::*;
use super::{run, Harness};

#[test]
fn an_array_materialises_only_what_can_start_and_ends_with_its_last_task() {
    run(
        "array: materialisation",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1 array=0-4"),
            Counts(1),
            Round,
            Counts(1),
            Poll("n1"),
            Started("n1", 2),
            Started("n1", 3),
            Round,
            Task(1, 0),
            Task(1, 3),
            Task(1, 5),
            Exit("n1", 2, 0),
            Round,
            Counts(1),
            Poll("n1"),
            Started("n1", 4),
            Exit("n1", 3, 0),
            Exit("n1", 4, 1),
            Round,
            Poll("n1"),
            Started("n1", 5),
            Started("n1", 6),
            Exit("n1", 5, 0),
            Exit("n1", 6, 0),
            Round,
            Counts(1),
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 array=0-4: ok 1
            array 1 pending: pending 5 starting 0 running 0 succeeded 0 failed 0 cancelled 0 timed_out 0
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
              job 1 running #1 array 0-4 next 2: its tasks are running
              job 2 starting on n1 [0] #1 task 1.0: sent to n1
              job 3 starting on n1 [1] #1 task 1.1: sent to n1
            array 1 running: pending 3 starting 2 running 0 succeeded 0 failed 0 cancelled 0 timed_out 0
            n1 polls: run 2#1 [0] 3#1 [1]; cancel -; preempt -
            n1 reports 2 started: ok
            n1 reports 3 started: ok
            round: wrote jobs 2 3 nodes - tokens -; woke -; ended -
              job 2 running on n1 [0] #1 task 1.0: running on n1
              job 3 running on n1 [1] #1 task 1.1: running on n1
            task 1.0: job 2 true[0] running: running on n1
            task 1.3: job 0 true[3] pending: not started yet: array 1 starts its tasks in index order as GPUs free up, and 1 unstarted before this one
            task 1.5: NotFound("array 1 has no task 5; its indices are 0-4 (5 tasks)")
            n1 reports 2 exited 0: ok
            round: wrote jobs 1 2 4 nodes - tokens -; woke n1; ended 2
              job 1 running #1 array 0-4 next 3: its tasks are running
              job 2 succeeded on n1 [0] #1 task 1.0: exited with code 0
              job 4 starting on n1 [0] #1 task 1.2: sent to n1
            array 1 running: pending 2 starting 1 running 1 succeeded 1 failed 0 cancelled 0 timed_out 0
            n1 polls: run 3#1 [1] 4#1 [0]; cancel -; preempt -
            n1 reports 4 started: ok
            n1 reports 3 exited 0: ok
            n1 reports 4 exited 1: ok
            round: wrote jobs 1 3 4 5 6 nodes - tokens -; woke n1; ended 3 4
              job 1 running #1 array 0-4 next 5: its tasks are running
              job 3 succeeded on n1 [1] #1 task 1.1: exited with code 0
              job 4 failed on n1 [0] #1 task 1.2: exited with code 1
              job 5 starting on n1 [0] #1 task 1.3: sent to n1
              job 6 starting on n1 [1] #1 task 1.4: sent to n1
            n1 polls: run 5#1 [0] 6#1 [1]; cancel -; preempt -
            n1 reports 5 started: ok
            n1 reports 6 started: ok
            n1 reports 5 exited 0: ok
            n1 reports 6 exited 0: ok
            round: wrote jobs 1 5 6 nodes - tokens -; woke n1; ended 1 5 6
              job 1 failed #1 array 0-4 next 5: 1 of 5 tasks did not succeed (1 failed, 0 timed out, 0 cancelled); `gpusched queue --all --tasks 1` lists them
              job 5 succeeded on n1 [0] #1 task 1.3: exited with code 0
              job 6 succeeded on n1 [1] #1 task 1.4: exited with code 0
            array 1 failed: pending 0 starting 0 running 0 succeeded 4 failed 1 cancelled 0 timed_out 0
        "#,
    );
}

#[test]
fn percent_k_bounds_the_tasks_that_hold_gpus_at_once() {
    run(
        "array: %K",
        &[
            Node("n1", 4),
            Round,
            Submit("alice", "gpus=1 array=0-4%2"),
            Submit("bob", "gpus=1"),
            Round,
            Counts(1),
            Poll("n1"),
            Started("n1", 3),
            Started("n1", 4),
            Exit("n1", 3, 0),
            Round,
            Counts(1),
        ],
        r#"
            node n1 (4 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 array=0-4%2: ok 1
            bob submits gpus=1: ok 2
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke n1; ended -
              job 1 running #1 array 0-4%2 next 2: its tasks are running
              job 2 starting on n1 [0] #1: sent to n1
              job 3 starting on n1 [1] #1 task 1.0: sent to n1
              job 4 starting on n1 [2] #1 task 1.1: sent to n1
            array 1 running: pending 3 starting 2 running 0 succeeded 0 failed 0 cancelled 0 timed_out 0
            n1 polls: run 2#1 [0] 3#1 [1] 4#1 [2]; cancel -; preempt -
            n1 reports 3 started: ok
            n1 reports 4 started: ok
            n1 reports 3 exited 0: ok
            round: wrote jobs 1 3 4 5 nodes - tokens -; woke n1; ended 3
              job 1 running #1 array 0-4%2 next 3: its tasks are running
              job 3 succeeded on n1 [1] #1 task 1.0: exited with code 0
              job 4 running on n1 [2] #1 task 1.1: running on n1
              job 5 starting on n1 [1] #1 task 1.2: sent to n1
            array 1 running: pending 2 starting 1 running 1 succeeded 1 failed 0 cancelled 0 timed_out 0
        "#,
    );
}

#[test]
fn cancelling_one_task_or_the_whole_array() {
    run(
        "array: cancel",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 array=0-5"),
            Round,
            Poll("n1"),
            Started("n1", 2),
            Round,
            CancelTask("alice", 1, 1),
            CancelTask("alice", 1, 1),
            CancelTask("bob", 1, 2),
            CancelTask("alice", 1, 9),
            Task(1, 1),
            CancelTask("alice", 1, 0),
            Round,
            // Task 1 was cancelled before it started: listed as cancelled, with its own
            // id and timeline, and the array's counts hold it once.
            Tasks("alice", 1),
            Events("alice", 3),
            Poll("n1"),
            Cancelled("n1", 2),
            Round,
            Counts(1),
            Cancel("alice", 1),
            Poll("n1"),
            Cancelled("n1", 4),
            Round,
            Counts(1),
            Task(1, 5),
            Task(1, 1),
            Cancel("alice", 1),
            Restart,
            Tasks("alice", 1),
            Counts(1),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 array=0-5: ok 1
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 running #1 array 0-5 next 1: its tasks are running
              job 2 starting on n1 [0] #1 task 1.0: sent to n1
            n1 polls: run 2#1 [0]; cancel -; preempt -
            n1 reports 2 started: ok
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 running on n1 [0] #1 task 1.0: running on n1
            alice cancels 1.1: cancelled (cancelled) job 3
            alice cancels 1.1: already_ended (cancelled) job 3
            bob cancels 1.2: Forbidden("job 1 belongs to alice; only its owner or an admin may cancel its tasks (you are bob)")
            alice cancels 1.9: NotFound("array 1 has no task 9; its indices are 0-5 (6 tasks)")
            task 1.1: job 3 true[1] cancelled: cancelled before it started
            alice cancels 1.0: cancelling (running) job 2
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended 3
              job 1 running #1 array 0-5 next 3: its tasks are running
              job 2 running on n1 [0] #1 task 1.0: cancel requested; n1 is stopping it
              job 3 cancelled #1 task 1.1: cancelled before it started
            alice lists the tasks of 1: 4:1.2:pending 3:1.1:cancelled 2:1.0:running; next_before None
            alice reads events of 3:
            - 0s submitted #0 [] task 1 of array 1
            - 0s cancel_requested #0 [] by alice
            - 0s ended #0 [] cancelled: cancelled before it started
            n1 polls: run -; cancel 2#1; preempt -
            n1 reports 2 cancelled: ok
            round: wrote jobs 1 2 4 nodes - tokens -; woke n1; ended 2
              job 1 running #1 array 0-5 next 3: its tasks are running
              job 2 cancelled on n1 [0] #1 task 1.0: cancelled while running
              job 4 starting on n1 [0] #1 task 1.2: sent to n1
            array 1 running: pending 3 starting 1 running 0 succeeded 0 failed 0 cancelled 2 timed_out 0
            alice cancels 1: cancelling (running)
            n1 polls: run -; cancel 4#1; preempt -
            n1 reports 4 cancelled: ok
            round: wrote jobs 1 4 nodes - tokens -; woke n1; ended 1 4
              job 1 cancelled #1 array 0-5 next 6: cancelled: 0 of 6 tasks succeeded before
              job 4 cancelled on n1 [0] #1 task 1.2: cancelled while running
            array 1 cancelled: pending 0 starting 0 running 0 succeeded 0 failed 0 cancelled 6 timed_out 0
            task 1.5: job 0 true[5] cancelled: cancelled before it started
            task 1.1: job 3 true[1] cancelled: cancelled before it started
            alice cancels 1: already_ended (cancelled)
            server restarts
            ended, in the store only: 4
            alice lists the tasks of 1: 4:1.2:cancelled 3:1.1:cancelled 2:1.0:cancelled; next_before None
            array 1 cancelled: pending 0 starting 0 running 0 succeeded 0 failed 0 cancelled 6 timed_out 0
        "#,
    );
}

#[test]
fn a_restart_mid_array_goes_on_from_where_it_was() {
    run(
        "array: restart",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1 array=10-20:5"),
            Round,
            Poll("n1"),
            Started("n1", 2),
            Started("n1", 3),
            Exit("n1", 2, 0),
            Round,
            Restart,
            Counts(1),
            Rejoin("n1", 2, &[3, 4]),
            Round,
            Started("n1", 4),
            Exit("n1", 3, 0),
            Exit("n1", 4, 0),
            Round,
            Counts(1),
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 array=10-20:5: ok 1
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
              job 1 running #1 array 10-20:5 next 2: its tasks are running
              job 2 starting on n1 [0] #1 task 1.10: sent to n1
              job 3 starting on n1 [1] #1 task 1.15: sent to n1
            n1 polls: run 2#1 [0] 3#1 [1]; cancel -; preempt -
            n1 reports 2 started: ok
            n1 reports 3 started: ok
            n1 reports 2 exited 0: ok
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke n1; ended 2
              job 1 running #1 array 10-20:5 next 3: its tasks are running
              job 2 succeeded on n1 [0] #1 task 1.10: exited with code 0
              job 3 running on n1 [1] #1 task 1.15: running on n1
              job 4 starting on n1 [0] #1 task 1.20: sent to n1
            server restarts
              job 1 running #1 array 10-20:5 next 3: its tasks are running
              job 3 running on n1 [1] #1 task 1.15: running on n1
              job 4 starting on n1 [0] #1 task 1.20: sent to n1
            ended, in the store only: 1
            array 1 running: pending 0 starting 1 running 1 succeeded 1 failed 0 cancelled 0 timed_out 0
            node n1 registers again running [3, 4]: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            n1 reports 4 started: ok
            n1 reports 3 exited 0: ok
            n1 reports 4 exited 0: ok
            round: wrote jobs 1 3 4 nodes - tokens -; woke n1; ended 1 3 4
              job 1 succeeded #1 array 10-20:5 next 3: all 3 tasks succeeded
              job 3 succeeded on n1 [1] #1 task 1.15: exited with code 0
              job 4 succeeded on n1 [0] #1 task 1.20: exited with code 0
            array 1 succeeded: pending 0 starting 0 running 0 succeeded 3 failed 0 cancelled 0 timed_out 0
        "#,
    );
}

#[test]
fn a_gang_array_runs_each_task_on_several_nodes() {
    run(
        "array: gang tasks",
        &[
            Node("n1", 2),
            Node("n2", 2),
            Round,
            Submit("alice", "nodes=2 gpn=2 array=2"),
            Round,
            Counts(1),
            Poll("n1"),
            Port("n1", 2, 29500),
            Round,
            Poll("n2"),
            Started("n1", 2),
            Started("n2", 2),
            Exit("n1", 2, 0),
            Exit("n2", 2, 0),
            Round,
            Counts(1),
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            node n2 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=2 gpn=2 array=2: ok 1
            round: wrote jobs 1 2 nodes - tokens -; woke n1 n2; ended -
              job 1 running #1 array 0-1 next 1: its tasks are running
              job 2 starting on n1 [0, 1] #1 task 1.0 parts n1[0, 1]:starting n2[0, 1]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            array 1 running: pending 1 starting 1 running 0 succeeded 0 failed 0 cancelled 0 timed_out 0
            n1 polls: run -; cancel -; preempt -; reserve port 2#1
            n1 reports 2 port 29500: ok
            round: wrote jobs 2 nodes - tokens -; woke n1 n2; ended -
              job 2 starting on n1 [0, 1] #1 task 1.0 parts n1[0, 1]:starting n2[0, 1]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n2 polls: run 2#1 [0, 1] rank 1/2 master 10.0.0.1:29500 hosts 10.0.0.1*2 10.0.0.2*2; cancel -; preempt -
            n1 reports 2 started: ok
            n2 reports 2 started: ok
            n1 reports 2 exited 0: ok
            n2 reports 2 exited 0: ok
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1 n2; ended 2
              job 1 running #1 array 0-1 next 2: its tasks are running
              job 2 succeeded on n1 [0, 1] #1 task 1.0 parts n1[0, 1]:done(0) n2[0, 1]:done(0) port 29500: every part (2) exited with code 0
              job 3 starting on n1 [0, 1] #1 task 1.1 parts n1[0, 1]:starting n2[0, 1]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            array 1 running: pending 0 starting 1 running 0 succeeded 1 failed 0 cancelled 0 timed_out 0
        "#,
    );
}

#[test]
fn after_an_array_means_after_every_task_succeeded() {
    run(
        "array: after",
        &[
            Node("n1", 4),
            Round,
            Submit("alice", "gpus=1 array=2"),
            Submit("alice", "gpus=1 after=1"),
            Submit("alice", "gpus=1 array=3 after=1"),
            Round,
            Counts(3),
            Task(3, 0),
            Started("n1", 4),
            Exit("n1", 4, 0),
            Round,
            Started("n1", 5),
            Exit("n1", 5, 0),
            Round,
            Counts(1),
            Counts(3),
            Started("n1", 2),
            Started("n1", 6),
            Started("n1", 7),
            Started("n1", 8),
            Exit("n1", 2, 0),
            Exit("n1", 6, 0),
            Exit("n1", 7, 0),
            Exit("n1", 8, 0),
            Round,
            Counts(3),
            Submit("alice", "gpus=1 array=2"),
            Submit("alice", "gpus=1 array=2 after=9"),
            Round,
            Started("n1", 11),
            Started("n1", 12),
            Exit("n1", 11, 1),
            Exit("n1", 12, 0),
            Round,
            Counts(9),
            Counts(10),
        ],
        r#"
            node n1 (4 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 array=2: ok 1
            alice submits gpus=1 after=1: ok 2
            alice submits gpus=1 array=3 after=1: ok 3
            round: wrote jobs 1 2 3 4 5 nodes - tokens -; woke n1; ended -
              job 1 running #1 array 0-1 next 2: its tasks are running
              job 2 pending #1
              job 3 pending #1 array 0-2 next 0
              job 4 starting on n1 [0] #1 task 1.0: sent to n1
              job 5 starting on n1 [1] #1 task 1.1: sent to n1
            array 3 pending: pending 3 starting 0 running 0 succeeded 0 failed 0 cancelled 0 timed_out 0
            task 3.0: job 0 true[0] pending: not started yet: array 3 waits for its dependencies
            n1 reports 4 started: ok
            n1 reports 4 exited 0: ok
            round: wrote jobs 1 4 nodes - tokens -; woke n1; ended 4
              job 1 running #1 array 0-1 next 2: its tasks are running
              job 4 succeeded on n1 [0] #1 task 1.0: exited with code 0
            n1 reports 5 started: ok
            n1 reports 5 exited 0: ok
            round: wrote jobs 1 2 3 5 6 7 8 nodes - tokens -; woke n1; ended 1 5
              job 1 succeeded #1 array 0-1 next 2: all 2 tasks succeeded
              job 2 starting on n1 [0] #1: sent to n1
              job 3 running #1 array 0-2 next 3: its tasks are running
              job 5 succeeded on n1 [1] #1 task 1.1: exited with code 0
              job 6 starting on n1 [1] #1 task 3.0: sent to n1
              job 7 starting on n1 [2] #1 task 3.1: sent to n1
              job 8 starting on n1 [3] #1 task 3.2: sent to n1
            array 1 succeeded: pending 0 starting 0 running 0 succeeded 2 failed 0 cancelled 0 timed_out 0
            array 3 running: pending 0 starting 3 running 0 succeeded 0 failed 0 cancelled 0 timed_out 0
            n1 reports 2 started: ok
            n1 reports 6 started: ok
            n1 reports 7 started: ok
            n1 reports 8 started: ok
            n1 reports 2 exited 0: ok
            n1 reports 6 exited 0: ok
            n1 reports 7 exited 0: ok
            n1 reports 8 exited 0: ok
            round: wrote jobs 2 3 6 7 8 nodes - tokens -; woke n1; ended 2 3 6 7 8
              job 2 succeeded on n1 [0] #1: exited with code 0
              job 3 succeeded #1 array 0-2 next 3: all 3 tasks succeeded
              job 6 succeeded on n1 [1] #1 task 3.0: exited with code 0
              job 7 succeeded on n1 [2] #1 task 3.1: exited with code 0
              job 8 succeeded on n1 [3] #1 task 3.2: exited with code 0
            array 3 succeeded: pending 0 starting 0 running 0 succeeded 3 failed 0 cancelled 0 timed_out 0
            alice submits gpus=1 array=2: ok 9
            alice submits gpus=1 array=2 after=9: ok 10
            round: wrote jobs 9 10 11 12 nodes - tokens -; woke n1; ended -
              job 9 running #1 array 0-1 next 2: its tasks are running
              job 10 pending #1 array 0-1 next 0
              job 11 starting on n1 [0] #1 task 9.0: sent to n1
              job 12 starting on n1 [1] #1 task 9.1: sent to n1
            n1 reports 11 started: ok
            n1 reports 12 started: ok
            n1 reports 11 exited 1: ok
            n1 reports 12 exited 0: ok
            round: wrote jobs 9 10 11 12 nodes - tokens -; woke n1; ended 9 10 11 12
              job 9 failed #1 array 0-1 next 2: 1 of 2 tasks did not succeed (1 failed, 0 timed out, 0 cancelled); `gpusched queue --all --tasks 9` lists them
              job 10 failed #1 array 0-1 next 2: dependency job 9 ended failed; it can never start
              job 11 failed on n1 [0] #1 task 9.0: exited with code 1
              job 12 succeeded on n1 [1] #1 task 9.1: exited with code 0
            array 9 failed: pending 0 starting 0 running 0 succeeded 1 failed 1 cancelled 0 timed_out 0
            array 10 failed: pending 0 starting 0 running 0 succeeded 0 failed 0 cancelled 2 timed_out 0
        "#,
    );
}

#[test]
fn an_array_refuses_the_variables_the_server_sets() {
    run(
        "array: refusals",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "array=3 env=GPUSCHED_ARRAY_INDEX:7"),
            Submit("alice", "array=3 env=GPUSCHED_ARRAY_ID:7"),
            Submit("alice", "array=3 gpus=2"),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits array=3 env=GPUSCHED_ARRAY_INDEX:7: Conflict("`env` sets GPUSCHED_ARRAY_INDEX, which the server sets in each task of an array; leave it out")
            alice submits array=3 env=GPUSCHED_ARRAY_ID:7: Conflict("`env` sets GPUSCHED_ARRAY_ID, which the server sets in each task of an array; leave it out")
            alice submits array=3 gpus=2: Conflict("the job asks for 2 GPUs on one node, but the largest node (n1) has 1; ask for at most 1, or run it on several nodes: `--nodes N --gpus-per-node G` (N x G = 2) or `--split` to let the scheduler choose")
        "#,
    );
}

/// The invariant: however long the array, the tasks that exist but have not started are
/// bounded by the cluster's size.
#[test]
fn a_ten_thousand_task_array_is_one_record_and_a_handful_of_tasks() {
    let mut h = Harness::new();
    h.step(Node("n1", 4));
    h.step(Round);
    h.step(Submit("alice", "gpus=1 array=0-9999"));
    h.step(Round);
    for round in 0..50u64 {
        let live: Vec<u64> =
            h.st.jobs
                .values()
                .filter(|j| j.view.array_task.is_some() && !j.view.state.is_terminal())
                .map(|j| j.view.id)
                .collect();
        assert!(
            live.len() <= 4 + 1,
            "round {round}: {} live tasks for 4 GPUs",
            live.len()
        );
        let unstarted = live
            .iter()
            .filter(|id| h.st.jobs[id].view.state == gpusched_wire::JobState::Pending)
            .count();
        assert!(unstarted <= 1, "round {round}: {unstarted} tasks wait");
        for id in live {
            if h.st.jobs[&id].view.state == gpusched_wire::JobState::Starting {
                h.report(
                    "n1",
                    id,
                    gpusched_wire::RunEventKind::Started {
                        pid: 1,
                        mig_uuid: None,
                    },
                );
                let outcome = gpusched_wire::Outcome::Exited { code: 0 };
                h.report(
                    "n1",
                    id,
                    gpusched_wire::RunEventKind::Ended {
                        outcome,
                        usage: None,
                    },
                );
            }
        }
        h.step(Round);
    }
    let a = h.st.get(1, &super::who("alice")).unwrap();
    let c = a.array_counts.unwrap();
    assert_eq!((c.succeeded, c.pending + c.starting), (200, 9800));
    // Ended tasks leave memory with their round's commit (the store keeps them).
    assert_eq!(h.st.jobs.len(), 1 + 4, "the array and its starting tasks");
    // Every task written was written as a compact record (store schema 17): the
    // server's task and the store's template of it agree (`gpusched_store::task_template`).
    let tasks: Vec<u64> = (h.store.jobs.values())
        .filter(|j| j.view.array_task.is_some())
        .map(|j| j.view.id)
        .collect();
    assert!(tasks.len() >= 200, "{} tasks stored", tasks.len());
    let rows: Vec<&u64> = tasks
        .iter()
        .filter(|id| !h.store.compact.contains(id))
        .collect();
    assert!(rows.is_empty(), "tasks written as job rows: {rows:?}");
}

/// An array is one submission toward the pending cap, however many tasks it has.
#[test]
fn an_array_counts_once_toward_the_pending_cap() {
    let mut h = Harness::new();
    let mut cfg = (*h.cfg).clone();
    cfg.limits.max_pending_per_user = 2;
    h.cfg = std::sync::Arc::new(cfg);
    h.st.cfg = h.cfg.clone();
    h.step(Node("n1", 1));
    h.step(Round);
    h.step(Submit("alice", "array=0-9999"));
    h.step(Round);
    h.step(Submit("alice", "array=50"));
    h.step(Round);
    h.step(Submit("alice", "gpus=1"));
    assert!(
        h.log.contains("alice submits array=50: ok 3"),
        "the second array fits under a cap of 2:\n{}",
        h.log
    );
    assert!(
        h.log
            .contains("alice submits gpus=1: Forbidden(\"alice has 2 pending jobs"),
        "{}",
        h.log
    );
}

/// Ids from a request path reach the task lookup before anything checks them: the
/// largest id is no array and no panic (the contract test's fuzzing found the overflow).
#[test]
fn a_task_of_the_largest_id_is_none() {
    let h = Harness::new();
    assert_eq!(h.st.task_id(u64::MAX, 0), None);
    assert_eq!(h.st.task_id(u64::MAX, u32::MAX), None);
}

/// A compact task that no longer fits its record (here its environment changed, which no
/// record carries) gets its job row for good: its record goes in the same commit
/// (`state/compact.rs`), and the next change writes the row again, never a record.
#[test]
fn a_compact_task_that_no_longer_fits_its_record_gets_its_job_row() {
    let mut h = Harness::new();
    h.step(Node("n1", 2));
    h.step(Round);
    h.step(Submit("alice", "gpus=1 array=0-1"));
    h.step(Round);
    let id = *h
        .store
        .compact
        .iter()
        .next()
        .expect("a task written as a record");
    h.st.jobs
        .get_mut(&id)
        .expect("live")
        .env
        .insert("EXTRA".into(), "1".into());
    h.step(Round);
    assert!(h.store.promoted.contains(&id), "task {id} promoted");
    assert!(!h.store.compact.contains(&id));
    h.report(
        "n1",
        id,
        gpusched_wire::RunEventKind::Started {
            pid: 1,
            mig_uuid: None,
        },
    );
    h.step(Round);
    assert!(!h.store.compact.contains(&id), "a row for good");
    assert_eq!(
        h.store.jobs[&id].view.state,
        gpusched_wire::JobState::Running
    );
}
