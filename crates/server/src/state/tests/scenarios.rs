//! The scenarios: steps and the transcript they must produce (see `mod.rs`). Each round
//! also checks that the rows it wrote are exactly the rows that changed.

use super::run;
use super::Step::*;

#[test]
fn a_job_goes_from_submitted_to_succeeded() {
    run(
        "submit, start, run, succeed",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Poll("n1"),
            Wait(1),
            Started("n1", 1),
            Round,
            Wait(10),
            Exit("n1", 1, 0),
            Round,
            Poll("n1"),
        ],
        "
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 polls: run 1#1 [0]; cancel -; preempt -
            1s pass
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            10s pass
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
            n1 polls: run -; cancel -; preempt -
        ",
    );
}

#[test]
fn a_lost_node_requeues_its_job_while_retries_last_then_fails_it() {
    run(
        "lost twice, one retry",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "gpus=1 retries=1"),
            Submit("bob", "gpus=1"),
            Round,
            Started("n1", 1),
            Started("n2", 2),
            Round,
            // n2 keeps polling, n1 falls silent past the 30 s heartbeat timeout.
            Wait(20),
            Poll("n2"),
            Wait(15),
            Tick,
            Round,
            Poll("n1"),
            Wait(1),
            Exit("n2", 2, 0),
            Round,
            Started("n2", 1),
            Round,
            // Lost again (the agent says so): no retry left.
            Lost("n2", 1),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits gpus=1 retries=1: ok 1
            bob submits gpus=1: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n2 [0] #1: sent to n2
            n1 reports 1 started: ok
            n2 reports 2 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
              job 2 running on n2 [0] #1: running on n2
            20s pass
            n2 polls: run 2#1 [0]; cancel -; preempt -
            15s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 pending #2: requeued after attempt 1 on n1 was lost: no heartbeat from n1 for 30s
            n1 polls: Conflict(\"node n1 must register (again) with this server before polling or reporting\")
            1s pass
            n2 reports 2 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n2; ended 2
              job 1 starting on n2 [0] #2: sent to n2
              job 2 succeeded on n2 [0] #1: exited with code 0
            n2 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n2 [0] #2: running on n2
            n2 reports 1 lost: ok
            round: wrote jobs 1 nodes - tokens -; woke n2; ended 1
              job 1 failed on n2 [0] #2: lost 2 times, the last on n2: the agent lost it; no retries left (max_retries = 1)
        ",
    );
}

#[test]
fn cancelling_ends_a_pending_job_and_asks_the_node_to_stop_a_running_one() {
    run(
        "cancel pending and running",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Cancel("bob", 1),
            Cancel("alice", 2),
            Cancel("alice", 1),
            Round,
            // Asking again changes nothing, so writes nothing.
            Cancel("alice", 1),
            Cancel("alice", 2),
            Round,
            Poll("n1"),
            Exit("n1", 1, 143),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            alice submits gpus=1: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            bob cancels 1: Forbidden(\"job 1 belongs to alice; only its owner or an admin may cancel it (you are bob)\")
            alice cancels 2: cancelled (cancelled)
            alice cancels 1: cancelling (running)
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 2
              job 1 running on n1 [0] #1: cancel requested; n1 is stopping it
              job 2 cancelled #1: cancelled before it started
            alice cancels 1: cancelling (running)
            alice cancels 2: already_ended (cancelled)
            round: wrote jobs - nodes - tokens -; woke -; ended -
            n1 polls: run -; cancel 1#1; preempt -
            n1 reports 1 exited 143: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 cancelled on n1 [0] #1: cancelled; it ended during the grace period
        ",
    );
}

#[test]
fn dependents_start_when_their_dependency_succeeds_and_fail_when_it_does_not() {
    run(
        "after",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1 after=1"),
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1 after=3"),
            Round,
            Reason(2, "dependency: waiting for job 1 to succeed"),
            Started("n1", 1),
            Started("n1", 3),
            Exit("n1", 1, 0),
            Exit("n1", 3, 1),
            Round,
            Submit("alice", "gpus=1 after=4"),
        ],
        "
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            alice submits gpus=1 after=1: ok 2
            alice submits gpus=1: ok 3
            alice submits gpus=1 after=3: ok 4
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
              job 3 starting on n1 [1] #1: sent to n1
              job 4 pending #1
            n1 reports 1 started: ok
            n1 reports 3 started: ok
            n1 reports 1 exited 0: ok
            n1 reports 3 exited 1: ok
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke n1; ended 1 3 4
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 2 starting on n1 [0] #1: sent to n1
              job 3 failed on n1 [1] #1: exited with code 1
              job 4 failed #1: dependency job 3 ended failed; it can never start
            alice submits gpus=1 after=4: Conflict(\"`after`: job 4 already ended failed, so this job could never start\")
        ",
    );
}

#[test]
fn a_users_cap_in_a_queue_holds_their_next_job_but_not_others() {
    run(
        "max_gpus_per_user",
        &[
            Queues("[queues.default]\nmax_gpus_per_user = 1\n"),
            Node("n1", 3),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1"),
            Submit("bob", "gpus=1"),
            Submit("alice", "gpus=2"),
            Round,
            Reason(2, "alice's jobs hold 1 of the 1 GPU one user may hold"),
            Started("n1", 1),
            Exit("n1", 1, 0),
            Round,
        ],
        "
            queues reload: Ok(())
            node n1 (3 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            alice submits gpus=1: ok 2
            bob submits gpus=1: ok 3
            alice submits gpus=2: Conflict(\"the job asks for 2 GPUs, but one user's jobs may hold at most 1 in queue `default` (max_gpus_per_user in the queue file), so it could never start\")
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
              job 3 starting on n1 [1] #1: sent to n1
            n1 reports 1 started: ok
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 2 starting on n1 [0] #1: sent to n1
        ",
    );
}

#[test]
fn a_queue_at_its_max_holds_jobs_and_refuses_one_larger_than_it() {
    run(
        "queue max",
        &[
            Queues("[queues.default]\nmax = 2\n"),
            Node("n1", 4),
            Round,
            Submit("alice", "gpus=2"),
            Submit("bob", "gpus=1"),
            Submit("bob", "gpus=3"),
            Round,
            Reason(2, "queue `default` is at its limit: its jobs hold 2 of its 2 GPUs"),
            Started("n1", 1),
            Exit("n1", 1, 0),
            Round,
        ],
        "
            queues reload: Ok(())
            node n1 (4 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=2: ok 1
            bob submits gpus=1: ok 2
            bob submits gpus=3: Conflict(\"the job asks for 3 GPUs but queue `default` may hold at most 2 GPUs (its `max`), so it could never start; ask for at most 2 or submit to another queue\")
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0, 1] #1: sent to n1
              job 2 pending #1
            n1 reports 1 started: ok
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0, 1] #1: exited with code 0
              job 2 starting on n1 [0] #1: sent to n1
        ",
    );
}

#[test]
fn shares_of_one_gpu_run_together_and_keep_whole_jobs_off_it() {
    run(
        "shares",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "share=0.5"),
            Submit("bob", "share=0.5"),
            Submit("carol", "gpus=1"),
            Round,
            Reason(3, "waiting for"),
            Poll("n1"),
            Started("n1", 1),
            Started("n1", 2),
            Exit("n1", 1, 0),
            Round,
            Exit("n1", 2, 0),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits share=0.5: ok 1
            bob submits share=0.5: ok 2
            carol submits gpus=1: ok 3
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 gpu 0 share 500 #1: sent to n1
              job 2 starting on n1 gpu 0 share 500 #1: sent to n1
              job 3 pending #1
            n1 polls: run 1#1 [0] 2#1 [0]; cancel -; preempt -
            n1 reports 1 started: ok
            n1 reports 2 started: ok
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 gpu 0 share 500 #1: exited with code 0
              job 2 running on n1 gpu 0 share 500 #1: running on n1
            n1 reports 2 exited 0: ok
            round: wrote jobs 2 3 nodes - tokens -; woke n1; ended 2
              job 2 succeeded on n1 gpu 0 share 500 #1: exited with code 0
              job 3 starting on n1 [0] #1: sent to n1
        ",
    );
}

#[test]
fn a_restart_keeps_running_jobs_from_what_was_committed() {
    run(
        "restart",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1"),
            Submit("bob", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            // Reported but never committed: the restart must not know it.
            Started("n1", 2),
            Wait(2),
            Restart,
            // The agent still talks to the old instance: it must register again.
            Poll("n1"),
            Rejoin("n1", 2, &[1, 2]),
            Round,
            Poll("n1"),
            Exit("n1", 1, 0),
            Round,
        ],
        "
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            alice submits gpus=1: ok 2
            bob submits gpus=1: ok 3
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n1 [1] #1: sent to n1
              job 3 pending #1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            n1 reports 2 started: ok
            2s pass
            server restarts
              job 1 running on n1 [0] #1: running on n1
              job 2 starting on n1 [1] #1: sent to n1
              job 3 pending #1
            n1 polls: Conflict(\"node n1 must register (again) with this server before polling or reporting\")
            node n1 registers again running [1, 2]: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            n1 polls: run 1#1 [0] 2#1 [1]; cancel -; preempt -
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 3 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 3 starting on n1 [0] #1: sent to n1
        ",
    );
}

#[test]
fn an_agent_that_restarts_without_a_running_job_has_lost_it() {
    run(
        "agent restart",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 retries=1"),
            Round,
            Started("n1", 1),
            Round,
            Rejoin("n1", 1, &[]),
            Round,
            Poll("n1"),
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 retries=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            node n1 registers again running []: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #2: sent to n1
            n1 polls: run 1#2 [0]; cancel -; preempt -
        ",
    );
}

#[test]
fn reads_and_stale_reports_write_nothing() {
    run(
        "no-op paths",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            // A poll, a repeated start, a report of an attempt that is not current, a
            // refused cancel and a refused submission change no row.
            Poll("n1"),
            Started("n1", 1),
            Exit("n2", 1, 0),
            Cancel("bob", 1),
            Submit("alice", "gpus=9"),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            n1 polls: run 1#1 [0]; cancel -; preempt -
            n1 reports 1 started: ok
            n2 reports 1 exited 0: Conflict(\"node n2 must register (again) with this server before polling or reporting\")
            bob cancels 1: Forbidden(\"job 1 belongs to alice; only its owner or an admin may cancel it (you are bob)\")
            alice submits gpus=9: Conflict(\"the job asks for 9 GPUs on one node, but the largest node (n1) has 1; ask for at most 1, or run it on several nodes: `--nodes N --gpus-per-node G` (N x G = 9) or `--split` to let the scheduler choose\")
            round: wrote jobs - nodes - tokens -; woke -; ended -
        ",
    );
}

#[test]
fn tokens_are_written_when_created_or_revoked_and_not_when_revoked_again() {
    run(
        "tokens",
        &[
            Token("alice"),
            Token("bob"),
            Round,
            Revoke(1),
            Round,
            Revoke(1),
            Revoke(7),
            Round,
            Restart,
            Revoke(2),
            Round,
        ],
        "
            token for alice: ok 1
            token for bob: ok 2
            round: wrote jobs - nodes - tokens 1 2; woke -; ended -
            revoke token 1: revoked true
            round: wrote jobs - nodes - tokens 1; woke -; ended -
            revoke token 1: revoked true
            revoke token 7: NotFound(\"no token with id 7; `gpusched token list` shows them\")
            round: wrote jobs - nodes - tokens -; woke -; ended -
            server restarts
            revoke token 2: revoked true
            round: wrote jobs - nodes - tokens 2; woke -; ended -
        ",
    );
}

#[test]
fn an_admin_submits_for_another_user_with_that_users_groups() {
    run(
        "groups",
        &[
            Queues("[queues.default]\n\n[queues.ml]\ngroups = [\"g-carol\"]\n"),
            Node("n1", 1),
            Round,
            Submit("alice", "queue=ml"),
            Submit("carol", "queue=ml"),
            Submit("root", "queue=ml for=alice"),
            Submit("root", "queue=ml for=carol"),
            Submit("alice", "for=carol"),
            Round,
        ],
        "
            queues reload: Ok(())
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits queue=ml: Forbidden(\"alice may not submit to queue `ml`; ask an admin to add you to its users or groups\")
            carol submits queue=ml: ok 1
            root submits queue=ml for=alice: Forbidden(\"alice may not submit to queue `ml`; ask an admin to add you to its users or groups\")
            root submits queue=ml for=carol: ok 2
            alice submits for=carol: Forbidden(\"you are alice; only an admin may submit jobs as another user (carol)\")
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
        ",
    );
}

#[test]
fn after_a_restart_a_node_that_never_comes_back_loses_its_jobs() {
    run(
        "restart, node gone",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "gpus=1 retries=1"),
            Round,
            Started("n1", 1),
            Round,
            Wait(5),
            Restart,
            // n2's agent comes back, n1's does not: one heartbeat timeout later its job
            // is requeued and starts on n2.
            Rejoin("n2", 1, &[]),
            Round,
            Wait(31),
            Poll("n2"),
            Tick,
            Round,
            Poll("n2"),
        ],
        "
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits gpus=1 retries=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            5s pass
            server restarts
              job 1 running on n1 [0] #1: running on n1
            node n2 registers again running []: ok
            round: wrote jobs - nodes - tokens -; woke n2; ended -
            31s pass
            n2 polls: run -; cancel -; preempt -
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n2 [0] #2: sent to n2
            n2 polls: run 1#2 [0]; cancel -; preempt -
        ",
    );
}

#[test]
fn a_queue_below_its_quota_gets_its_gpu_back_by_preemption() {
    run(
        "quota reclaim",
        &[
            Queues("[queues.a]\nquota = 1\n\n[queues.b]\n"),
            Node("n1", 1),
            Round,
            Submit("bob", "queue=b"),
            Round,
            Started("n1", 1),
            Round,
            Wait(600),
            Submit("alice", "queue=a"),
            Round,
            Poll("n1"),
            Preempted("n1", 1),
            Round,
            Poll("n1"),
        ],
        "
            queues reload: Ok(())
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            bob submits queue=b: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            600s pass
            alice submits queue=a: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: being preempted on n1 to return GPUs to queue `a` (job 2)
              job 2 pending #1
            n1 polls: run -; cancel -; preempt 1#1
            n1 reports 1 preempted: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 pending #2: preempted on n1 to return GPUs to another queue's quota; requeued
              job 2 starting on n1 [0] #1: sent to n1
            n1 polls: run 2#1 [0]; cancel -; preempt -
        ",
    );
}

#[test]
fn silence_caused_by_a_stalled_state_task_expires_no_node() {
    run(
        "stall",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            // 40 s without a poll, but 20 of them were the state task's own stall (more
            // than half the 30 s timeout): the node's clock restarts instead.
            Wait(40),
            TickAfterStall(20),
            Round,
            Wait(25),
            Tick,
            Round,
            Wait(10),
            Tick,
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            40s pass
            tick after a 20s stall
            round: wrote jobs - nodes - tokens -; woke -; ended -
            25s pass
            tick
            round: wrote jobs - nodes - tokens -; woke -; ended -
            10s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 failed on n1 [0] #1: lost 1 time, the last on n1: no heartbeat from n1 for 30s; no retries left (max_retries = 0)
        ",
    );
}
