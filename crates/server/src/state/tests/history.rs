//! Job timelines and the audit log (issue 13 item 6): which events each transition
//! records, and which admin actions the audit log keeps. The harness commits each round's
//! journal with its rows, so what `Events` and `Audit` print is what the store would hold
//! (and still holds after a `Restart`).

use super::run;
use super::Step::*;

#[test]
fn a_job_that_runs_to_its_end_records_each_step_in_order() {
    run(
        "timeline: submitted, placed, started, checkpoint, ended",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=2"),
            Round,
            Events("alice", 1),
            Poll("n1"),
            Wait(2),
            Started("n1", 1),
            Round,
            Wait(10),
            Checkpoint("alice", 1),
            Round,
            Wait(5),
            Exit("n1", 1, 0),
            Round,
            Events("alice", 1),
            Events("bob", 1),
            Events("root", 1),
            Events("alice", 9),
            Restart,
            Events("alice", 1),
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=2: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0, 1] #1: sent to n1
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0,1
            n1 polls: run 1#1 [0, 1]; cancel -; preempt -
            2s pass
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0, 1] #1: running on n1
            10s pass
            alice reports a checkpoint of 1: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0, 1] #1: running on n1
            5s pass
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0, 1] #1: exited with code 0
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0,1
            - 2s started #1 [n1]
            - 12s checkpoint #1 [n1] reported by alice through the API
            - 17s ended #1 [n1] succeeded: exited with code 0
            bob reads events of 1: Forbidden("job 1 belongs to alice; only its owner or an admin may read its timeline (you are bob)")
            root reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0,1
            - 2s started #1 [n1]
            - 12s checkpoint #1 [n1] reported by alice through the API
            - 17s ended #1 [n1] succeeded: exited with code 0
            alice reads events of 9: NotFound("no job with id 9; `gpusched queue --all` lists the known jobs")
            server restarts
            ended, in the store only: 1
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0,1
            - 2s started #1 [n1]
            - 12s checkpoint #1 [n1] reported by alice through the API
            - 17s ended #1 [n1] succeeded: exited with code 0
        "#,
    );
}

#[test]
fn a_gang_records_one_placement_on_all_its_nodes_and_one_start() {
    run(
        "timeline: gang",
        &[
            Node("n1", 2),
            Node("n2", 2),
            Round,
            Submit("alice", "nodes=2 gpn=2"),
            Round,
            Poll("n1"),
            Poll("n2"),
            Port("n1", 1, 29500),
            Round,
            Started("n1", 1),
            Round,
            Started("n2", 1),
            Round,
            Exit("n1", 1, 0),
            Exit("n2", 1, 1),
            Round,
            Events("alice", 1),
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            node n2 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=2 gpn=2: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0, 1] #1 parts n1[0, 1]:starting n2[0, 1]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 polls: run -; cancel -; preempt -; reserve port 1#1
            n2 polls: run -; cancel -; preempt -
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0, 1] #1 parts n1[0, 1]:starting n2[0, 1]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 starting on n1 [0, 1] #1 parts n1[0, 1]:running n2[0, 1]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n2 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0, 1] #1 parts n1[0, 1]:running n2[0, 1]:running port 29500: running on n1, n2
            n1 reports 1 exited 0: ok
            n2 reports 1 exited 1: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended 1
              job 1 failed on n1 [0, 1] #1 parts n1[0, 1]:done(0) n2[0, 1]:failed(1) port 29500: part 1 on n2: exited with code 1; every other part was stopped
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1,n2] n1: GPU 0,1; n2: GPU 0,1
            - 0s started #1 [n1,n2] every part started
            - 0s ended #1 [n1,n2] failed: part 1 on n2: exited with code 1; every other part was stopped
        "#,
    );
}

#[test]
fn a_lost_node_requeues_with_the_reason_and_the_next_attempt() {
    run(
        "timeline: node lost",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "gpus=1 retries=1"),
            Round,
            Started("n1", 1),
            Round,
            Wait(20),
            Poll("n2"),
            Wait(15),
            Tick,
            Round,
            Started("n2", 1),
            Round,
            Events("alice", 1),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits gpus=1 retries=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            20s pass
            n2 polls: run -; cancel -; preempt -
            15s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n2 [0] #2: sent to n2
            n2 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n2 [0] #2: running on n2
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0
            - 0s started #1 [n1]
            - 35s requeued #1 [n1] requeued after attempt 1 on n1 was lost: no heartbeat from n1 for 30s
            - 35s placed #2 [n2] n2: GPU 0
            - 35s started #2 [n2]
        "#,
    );
}

#[test]
fn a_quota_reclaim_records_the_preemption_and_the_requeue() {
    run(
        "timeline: reclaim",
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
            Events("bob", 1),
            Audit,
        ],
        r#"
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
            bob reads events of 1:
            - 0s submitted #0 [] queue b
            - 0s placed #1 [n1] n1: GPU 0
            - 0s started #1 [n1]
            - 600s preempted #1 [n1] quota reclaim: GPUs on n1 go back to queue `a` (job 2)
            - 600s requeued #1 [n1] preempted on n1 to return GPUs to another queue's quota; requeued
            alice reads the audit log: Forbidden("only an admin may read the audit log (alice is not one); ask an admin, or use an admin token")
            audit log:
            - 0s server queue_reload queues: queues now: a, b
        "#,
    );
}

#[test]
fn a_cancel_names_who_asked_and_an_admins_cancel_of_anothers_job_is_audited() {
    run(
        "timeline: cancel",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1"),
            Submit("bob", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Cancel("alice", 1),
            Cancel("alice", 1),
            Cancel("root", 2),
            Cancel("bob", 3),
            Round,
            Cancelled("n1", 1),
            Round,
            Events("alice", 1),
            Events("alice", 2),
            Events("bob", 3),
            Audit,
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            alice submits gpus=1: ok 2
            bob submits gpus=1: ok 3
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
              job 3 pending #1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            alice cancels 1: cancelling (running)
            alice cancels 1: cancelling (running)
            root cancels 2: cancelled (cancelled)
            bob cancels 3: cancelled (cancelled)
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended 2 3
              job 1 running on n1 [0] #1: cancel requested; n1 is stopping it
              job 2 cancelled #1: cancelled before it started
              job 3 cancelled #1: cancelled before it started
            n1 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 cancelled on n1 [0] #1: cancelled while running
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0
            - 0s started #1 [n1]
            - 0s cancel_requested #1 [n1] by alice
            - 0s ended #1 [n1] cancelled: cancelled while running
            alice reads events of 2:
            - 0s submitted #0 [] queue default
            - 0s cancel_requested #0 [] by root
            - 0s ended #0 [] cancelled: cancelled before it started
            bob reads events of 3:
            - 0s submitted #0 [] queue default
            - 0s cancel_requested #0 [] by bob
            - 0s ended #0 [] cancelled: cancelled before it started
            alice reads the audit log: Forbidden("only an admin may read the audit log (alice is not one); ask an admin, or use an admin token")
            audit log:
            - 0s root cancel_other job 2: of alice, pending
        "#,
    );
}

#[test]
fn tokens_drains_resumes_and_queue_reloads_are_audited() {
    run(
        "audit",
        &[
            Node("n1", 1),
            Round,
            Token("carol"),
            Revoke(1),
            Revoke(1),
            Round,
            Drain("alice", "n1", "no", false),
            Drain("root", "n1", "fan swap", false),
            Drain("root", "n1", "fan swap, now", true),
            Round,
            Resume("root", "n1"),
            Resume("root", "n1"),
            Queues("[queues.default]\n\n[queues.big]\n"),
            Round,
            Restart,
            Audit,
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            token for carol: ok 1
            revoke token 1: revoked true
            revoke token 1: revoked true
            round: wrote jobs - nodes - tokens 1; woke -; ended -
            alice drains n1 (no): Forbidden("only an admin may drain a node (alice is not one); ask an admin, or use an admin token")
            root drains n1 (fan swap): ok, drained by root
            root drains n1 --now (fan swap, now): ok, drained by root
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            root resumes n1: ok
            root resumes n1: ok
            queues reload: Ok(())
            round: wrote jobs - nodes n1 tokens -; woke -; ended -
            server restarts
            alice reads the audit log: Forbidden("only an admin may read the audit log (alice is not one); ask an admin, or use an admin token")
            audit log:
            - 0s root token_create carol: token 1, role user
            - 0s root token_revoke token 1: of carol, role user
            - 0s root drain n1: fan swap (its jobs finish)
            - 0s root drain n1: fan swap, now (now: its jobs are requeued)
            - 0s root resume n1:
            - 0s server queue_reload queues: queues now: big, default
        "#,
    );
}

#[test]
fn a_drain_now_records_the_preemption_with_the_drains_reason_and_the_requeue() {
    run(
        "timeline: drain --now",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Drain("root", "n1", "bios update", true),
            Round,
            Preempted("n1", 1),
            Round,
            Events("alice", 1),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            root drains n1 --now (bios update): ok, drained by root
            round: wrote jobs 1 nodes n1 tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: being requeued: n1 is drained (bios update)
            n1 reports 1 preempted: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 pending #2: requeued without using a retry: n1 was drained (bios update)
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0
            - 0s started #1 [n1]
            - 0s preempted #1 [n1] n1 is drained (bios update)
            - 0s requeued #1 [n1] requeued without using a retry: n1 was drained (bios update)
        "#,
    );
}

#[test]
fn what_happens_to_a_job_before_it_is_placed_belongs_to_no_attempt() {
    run(
        "timeline: attempts of a waiting job",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 retries=1"),
            Submit("alice", "gpus=1 hold=1"),
            Round,
            Release("alice", 2),
            Round,
            Started("n1", 1),
            Round,
            // Lost and requeued: held while it waits again, it keeps its next attempt.
            Lost("n1", 1),
            Hold("alice", 1),
            Round,
            Events("alice", 2),
            Events("alice", 1),
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 retries=1: ok 1
            alice submits gpus=1 hold=1: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1: held by alice
            alice releases 2: ok waiting for 1 free GPU on one node (at most 0 free on a node now; 1 job waiting)
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 pending #1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            n1 reports 1 lost: ok
            alice holds 1: ok held by alice; release with `gpusched release 1`
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 pending #2: held by alice
              job 2 starting on n1 [0] #1: sent to n1
            alice reads events of 2:
            - 0s submitted #0 [] queue default
            - 0s held #0 [] by alice at submit
            - 0s released #0 [] by alice (held by alice)
            - 0s placed #1 [n1] n1: GPU 0
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0
            - 0s started #1 [n1]
            - 0s requeued #1 [n1] requeued after attempt 1 on n1 was lost: the agent lost it
            - 0s held #2 [] by alice
        ",
    );
}
