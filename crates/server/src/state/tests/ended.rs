//! Ended jobs live in the store only (issue 14 item 3): they leave memory once their
//! round has committed (the harness checks it after every round), and every read of one
//! is answered from the store's row: show, cancel, logs, `after`, client-token retries,
//! lists merged with the live jobs, and all of it again after a restart that loads only
//! live jobs.

use super::run;
use super::Step::*;

#[test]
fn ended_jobs_leave_memory_and_still_answer_from_the_store() {
    run(
        "ended jobs: read from the store, before and after a restart",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 token=t1"),
            Submit("bob", "gpus=1"),
            Round,
            Poll("n1"),
            Started("n1", 1),
            Round,
            Exit("n1", 1, 0),
            Round,
            Poll("n1"),
            Started("n1", 2),
            Round,
            Exit("n1", 2, 3),
            Round,
            // Job 1 succeeded and job 2 failed, both out of memory now.
            Show("alice", 1),
            Show("bob", 2),
            Cancel("alice", 1),
            Cancel("alice", 2),
            Logs(1, None, None),
            Submit("alice", "gpus=1 token=t1"),
            Submit("alice", "gpus=1 after=1"),
            Submit("alice", "gpus=1 after=2"),
            Submit("alice", "gpus=1 after=9"),
            Submit("bob", "gpus=1"),
            Round,
            List("root", "state=all"),
            List("root", "state=all limit=1"),
            List("root", "state=all limit=1 before=3"),
            List("root", "state=all limit=1 before=2"),
            List("root", "state=succeeded,pending"),
            List("root", "state=active"),
            List("alice", "user=bob"),
            List("root", "node=n1"),
            Restart,
            Show("alice", 1),
            List("root", "state=all"),
            Submit("alice", "gpus=1 token=t1"),
            Submit("alice", "gpus=1"),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 token=t1: ok 1
            bob submits gpus=1: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
            n1 polls: run 1#1 [0]; cancel -; preempt -
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 2 starting on n1 [0] #1: sent to n1
            n1 polls: run 2#1 [0]; cancel -; preempt -
            n1 reports 2 started: ok
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 running on n1 [0] #1: running on n1
            n1 reports 2 exited 3: ok
            round: wrote jobs 2 nodes - tokens -; woke n1; ended 2
              job 2 failed on n1 [0] #1: exited with code 3
            alice shows 1: 1 succeeded: exited with code 0
            bob shows 2: 2 failed: exited with code 3
            alice cancels 1: already_ended (succeeded)
            alice cancels 2: Forbidden("job 2 belongs to bob; only its owner or an admin may cancel it (you are alice)")
            logs of 1 node None rank None: http://n1.test:7000 rank None
            alice submits gpus=1 token=t1: ok 1
            alice submits gpus=1 after=1: ok 3
            alice submits gpus=1 after=2: Conflict("`after`: job 2 already ended failed, so this job could never start")
            alice submits gpus=1 after=9: Conflict("`after`: there is no job 9")
            bob submits gpus=1: ok 4
            round: wrote jobs 3 4 nodes - tokens -; woke n1; ended -
              job 3 starting on n1 [0] #1: sent to n1
              job 4 pending #1
            root lists state=all: 4:pending 3:starting 2:failed 1:succeeded; next_before None
            root lists state=all limit=1: 4:pending; next_before Some(4)
            root lists state=all limit=1 before=3: 2:failed; next_before Some(2)
            root lists state=all limit=1 before=2: 1:succeeded; next_before None
            root lists state=succeeded,pending: 4:pending 1:succeeded; next_before None
            root lists state=active: 4:pending 3:starting; next_before None
            alice lists user=bob: 4:pending 2:failed; next_before None
            root lists node=n1: 3:starting 2:failed 1:succeeded; next_before None
            server restarts
              job 3 starting on n1 [0] #1: sent to n1
              job 4 pending #1
            ended, in the store only: 2
            alice shows 1: 1 succeeded: exited with code 0
            root lists state=all: 4:pending 3:starting 2:failed 1:succeeded; next_before None
            alice submits gpus=1 token=t1: ok 1
            alice submits gpus=1: ok 5
        "#,
    );
}

#[test]
fn usage_over_all_time_is_kept_as_jobs_leave_memory() {
    run(
        "usage over all time: read from the store once, then kept as jobs end",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=2"),
            Round,
            Poll("n1"),
            Started("n1", 1),
            Round,
            Wait(1800),
            Exit("n1", 1, 0),
            Round,
            // Job 1 is in the store only: the sums are read from it.
            UsageAllTime,
            Submit("bob", "gpus=1"),
            Submit("alice", "gpus=1"),
            Round,
            Poll("n1"),
            Started("n1", 2),
            Started("n1", 3),
            Round,
            Wait(3600),
            Exit("n1", 2, 1),
            Exit("n1", 3, 0),
            Round,
            // Jobs 2 and 3 left memory after the sums were read: added as they left.
            UsageAllTime,
        ],
        "
        node n1 (2 GPUs) registers: ok
        round: wrote jobs - nodes n1 tokens -; woke n1; ended -
        alice submits gpus=2: ok 1
        round: wrote jobs 1 nodes - tokens -; woke n1; ended -
          job 1 starting on n1 [0, 1] #1: sent to n1
        n1 polls: run 1#1 [0, 1]; cancel -; preempt -
        n1 reports 1 started: ok
        round: wrote jobs 1 nodes - tokens -; woke -; ended -
          job 1 running on n1 [0, 1] #1: running on n1
        1800s pass
        n1 reports 1 exited 0: ok
        round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
          job 1 succeeded on n1 [0, 1] #1: exited with code 0
        usage over all time by user: alice 1 jobs 1.000000 GPU-h
        usage over all time by queue: default 1 jobs 1.000000 GPU-h
        bob submits gpus=1: ok 2
        alice submits gpus=1: ok 3
        round: wrote jobs 2 3 nodes - tokens -; woke n1; ended -
          job 2 starting on n1 [0] #1: sent to n1
          job 3 starting on n1 [1] #1: sent to n1
        n1 polls: run 2#1 [0] 3#1 [1]; cancel -; preempt -
        n1 reports 2 started: ok
        n1 reports 3 started: ok
        round: wrote jobs 2 3 nodes - tokens -; woke -; ended -
          job 2 running on n1 [0] #1: running on n1
          job 3 running on n1 [1] #1: running on n1
        3600s pass
        n1 reports 2 exited 1: ok
        n1 reports 3 exited 0: ok
        round: wrote jobs 2 3 nodes - tokens -; woke n1; ended 2 3
          job 2 failed on n1 [0] #1: exited with code 1
          job 3 succeeded on n1 [1] #1: exited with code 0
        usage over all time by user: alice 2 jobs 2.000000 GPU-h, bob 1 jobs 1.000000 GPU-h
        usage over all time by queue: default 3 jobs 3.000000 GPU-h
        ",
    );
}
