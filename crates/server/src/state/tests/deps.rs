//! Dependency kinds, holds, updates and workflows, as transcripts.

use super::run;
use super::Step::*;

#[test]
fn after_any_runs_once_its_dependency_ended_however() {
    run(
        "after_any",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1 any=1"),
            Round,
            Reason(2, "dependency: waiting for job 1 to end (however it ends)"),
            Started("n1", 1),
            Exit("n1", 1, 3),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            alice submits gpus=1 any=1: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
            n1 reports 1 started: ok
            n1 reports 1 exited 3: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 1
              job 1 failed on n1 [0] #1: exited with code 3
              job 2 starting on n1 [0] #1: sent to n1
        ",
    );
}

#[test]
fn after_notok_runs_on_failure_and_is_cancelled_by_success() {
    run(
        "after_notok",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1 notok=1"),
            Submit("alice", "gpus=1 notok=2"),
            // A chain: 5 waits for 3 to succeed, so 3's cancel ends 5 too.
            Submit("alice", "gpus=1 after=3"),
            Round,
            Reason(3, "dependency: waiting for job 1 to end without succeeding"),
            Started("n1", 1),
            Started("n1", 2),
            Exit("n1", 1, 0),
            Exit("n1", 2, 1),
            Round,
            Submit("alice", "gpus=1 notok=1"),
            Submit("alice", "gpus=1 after=2"),
            Submit("alice", "gpus=1 any=2 notok=2"),
        ],
        "
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            alice submits gpus=1: ok 2
            alice submits gpus=1 notok=1: ok 3
            alice submits gpus=1 notok=2: ok 4
            alice submits gpus=1 after=3: ok 5
            round: wrote jobs 1 2 3 4 5 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n1 [1] #1: sent to n1
              job 3 pending #1
              job 4 pending #1
              job 5 pending #1
            n1 reports 1 started: ok
            n1 reports 2 started: ok
            n1 reports 1 exited 0: ok
            n1 reports 2 exited 1: ok
            round: wrote jobs 1 2 3 4 5 nodes - tokens -; woke n1; ended 1 2 3 5
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 2 failed on n1 [1] #1: exited with code 1
              job 3 cancelled #1: dependency job 1 succeeded, and this job was to run only if it did not (after_notok); it can never start
              job 4 starting on n1 [0] #1: sent to n1
              job 5 failed #1: dependency job 3 ended cancelled; it can never start
            alice submits gpus=1 notok=1: Conflict(\"`after_notok`: job 1 already ended succeeded, so this job could never start\")
            alice submits gpus=1 after=2: Conflict(\"`after`: job 2 already ended failed, so this job could never start\")
            alice submits gpus=1 any=2 notok=2: ok 6
        ",
    );
}

#[test]
fn a_held_job_waits_out_of_the_queue_until_released_and_a_restart_keeps_it_so() {
    run(
        "hold",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1 hold=1"),
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1 after=1"),
            Round,
            Reason(2, "held by alice; release with `gpusched release 2`"),
            Hold("bob", 3),
            Hold("alice", 3),
            Hold("alice", 2),
            Release("alice", 4),
            Hold("alice", 1),
            Round,
            Restart,
            Rejoin("n1", 1, &[]),
            Round,
            Reason(3, "held by alice; release with `gpusched release 3`"),
            Release("root", 2),
            Started("n1", 1),
            Exit("n1", 1, 0),
            Round,
            Reason(3, "held by alice"),
            Reason(4, "waiting for 1 free GPU"),
            Events("alice", 3),
            Events("alice", 2),
            Audit,
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            alice submits gpus=1 hold=1: ok 2
            alice submits gpus=1: ok 3
            alice submits gpus=1 after=1: ok 4
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1: held by alice
              job 3 pending #1
              job 4 pending #1
            bob holds 3: Forbidden(\"job 3 belongs to alice; only its owner or an admin may hold it (you are bob)\")
            alice holds 3: ok held by alice; release with `gpusched release 3`
            alice holds 2: Conflict(\"job 2 is already held by alice; `gpusched release 2` releases it\")
            alice releases 4: Conflict(\"job 4 is not held, so there is nothing to release; `gpusched hold 4` holds it\")
            alice holds 1: Conflict(\"job 1 is starting, not pending: only a pending job can be held, released or updated\")
            round: wrote jobs 3 nodes - tokens -; woke -; ended -
              job 3 pending #1: held by alice
            server restarts
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1: held by alice
              job 3 pending #1: held by alice
              job 4 pending #1
            node n1 registers again running []: ok
            round: wrote jobs - nodes - tokens -; woke n1; ended -
            root releases 2: ok waiting for 1 free GPU on one node (at most 0 free on a node now; 1 job waiting)
            n1 reports 1 started: ok
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 2 starting on n1 [0] #1: sent to n1
            alice reads events of 3:
            - 0s submitted #0 [] queue default
            - 0s held #0 [] by alice
            alice reads events of 2:
            - 0s submitted #0 [] queue default
            - 0s held #0 [] by alice at submit
            - 0s released #0 [] by root (held by alice)
            - 0s placed #1 [n1] n1: GPU 0
            alice reads the audit log: Forbidden(\"only an admin may read the audit log (alice is not one); ask an admin, or use an admin token\")
            audit log:
            - 0s root release_other job 2: of alice
        ",
    );
}

#[test]
fn an_update_passes_the_checks_of_a_submit_and_is_recorded() {
    run(
        "update",
        &[
            Queues(
                "[queues.default]\nmax_priority = 5\n\n[queues.small]\nmax = 1\n\n\
                 [queues.staff]\nusers = [\"root\"]\n",
            ),
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=2"),
            Submit("alice", "gpus=2"),
            Submit("alice", "gpus=2"),
            Round,
            Update("alice", 3, "priority=9"),
            Update("root", 3, "priority=9"),
            Update("alice", 2, "walltime=0"),
            Update("alice", 2, "queue=small"),
            Update("alice", 2, "queue=staff"),
            Update("alice", 2, "queue=nowhere"),
            Update("bob", 2, "priority=1"),
            Update("alice", 1, "priority=1"),
            Update("alice", 2, "walltime=600 priority=1"),
            Update("alice", 2, "walltime=600 priority=1"),
            Round,
            Events("alice", 2),
            Events("alice", 3),
            Audit,
        ],
        "
            queues reload: Ok(())
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=2: ok 1
            alice submits gpus=2: ok 2
            alice submits gpus=2: ok 3
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0, 1] #1: sent to n1
              job 2 pending #1
              job 3 pending #1
            alice updates 3 priority=9: Conflict(\"priority 9 is above queue `default`'s max_priority 5\")
            root updates 3 priority=9: ok priority 9 walltime None queue default
            alice updates 2 walltime=0: BadRequest(\"`walltime_s` must be above 0 (seconds); leave it out for no limit\")
            alice updates 2 queue=small: Conflict(\"the job asks for 2 GPUs but queue `small` may hold at most 1 GPU (its `max`), so it could never start; ask for at most 1 or submit to another queue\")
            alice updates 2 queue=staff: Forbidden(\"alice may not submit to queue `staff`; ask an admin to add them to its users or groups\")
            alice updates 2 queue=nowhere: Conflict(\"no queue named `nowhere`; the queues are: default, small, staff\")
            bob updates 2 priority=1: Forbidden(\"job 2 belongs to alice; only its owner or an admin may update it (you are bob)\")
            alice updates 1 priority=1: Conflict(\"job 1 is starting, not pending: only a pending job can be held, released or updated\")
            alice updates 2 walltime=600 priority=1: ok priority 1 walltime Some(600) queue default
            alice updates 2 walltime=600 priority=1: ok priority 1 walltime Some(600) queue default
            round: wrote jobs 2 3 nodes - tokens -; woke -; ended -
              job 2 pending #1
              job 3 pending #1
            alice reads events of 2:
            - 0s submitted #0 [] queue default
            - 0s updated #0 [] by alice: priority 0 -> 1, walltime none -> 600s
            alice reads events of 3:
            - 0s submitted #0 [] queue default
            - 0s updated #0 [] by root: priority 0 -> 9
            alice reads the audit log: Forbidden(\"only an admin may read the audit log (alice is not one); ask an admin, or use an admin token\")
            audit log:
            - 0s server queue_reload queues: queues now: default, small, staff
            - 0s root update_other job 3: of alice
        ",
    );
}

#[test]
fn a_workflow_is_taken_whole_in_dependency_order_or_refused_whole() {
    run(
        "workflow",
        &[
            Node("n1", 2),
            Round,
            Workflow("alice", "eval after=train; train after=prep gpus=2; prep; clean any=eval"),
            Workflow("alice", "a after=b; b after=c; c after=a; d"),
            Workflow("alice", "a after=zz"),
            Workflow("alice", "a; a"),
            // One step the cluster cannot take refuses the others too.
            Workflow("alice", "ok; big gpus=3 after=ok"),
            Workflow("alice", "x notok=y; y after=1"),
            Round,
            Reason(2, "dependency: waiting for job 1 to succeed"),
            Reason(4, "dependency: waiting for job 3 to end (however it ends)"),
            Started("n1", 1),
            Exit("n1", 1, 0),
            Round,
            Started("n1", 2),
            Exit("n1", 2, 1),
            Round,
        ],
        "
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits workflow eval after=train; train after=prep gpus=2; prep; clean any=eval: ok clean=4 eval=3 prep=1 train=2
            alice submits workflow a after=b; b after=c; c after=a; d: Conflict(\"steps form a cycle: a -> c -> b -> a; a step may only wait for steps that do not wait for it\")
            alice submits workflow a after=zz: Conflict(\"step `a`: `after` names no step `zz`; the steps are: a\")
            alice submits workflow a; a: Conflict(\"step key `a` appears twice; each step needs its own\")
            alice submits workflow ok; big gpus=3 after=ok: Conflict(\"step `big`: the job asks for 3 GPUs on one node, but the largest node (n1) has 2; ask for at most 2, or run it on several nodes: `--nodes N --gpus-per-node G` (N x G = 3) or `--split` to let the scheduler choose\")
            alice submits workflow x notok=y; y after=1: Conflict(\"step `y`: `after` names no step `1`; the steps are: x, y\")
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
              job 3 pending #1
              job 4 pending #1
            n1 reports 1 started: ok
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 2 starting on n1 [0, 1] #1: sent to n1
            n1 reports 2 started: ok
            n1 reports 2 exited 1: ok
            round: wrote jobs 2 3 4 nodes - tokens -; woke n1; ended 2 3
              job 2 failed on n1 [0, 1] #1: exited with code 1
              job 3 failed #1: dependency job 2 ended failed; it can never start
              job 4 starting on n1 [0] #1: sent to n1
        ",
    );
}

#[test]
fn dependants_of_each_kind_wait_across_a_restart() {
    run(
        "deps_restart",
        &[
            Node("n1", 3),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1 notok=1"),
            Submit("alice", "gpus=1 any=1"),
            Submit("alice", "gpus=1 after=1 hold=1"),
            Round,
            Restart,
            Rejoin("n1", 3, &[1]),
            Round,
            Reason(2, "dependency: waiting for job 1 to end without succeeding"),
            Reason(4, "held by alice; release with `gpusched release 4`; then dependency: waiting for job 1 to succeed"),
            Started("n1", 1),
            Exit("n1", 1, 1),
            Round,
        ],
        "
            node n1 (3 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            alice submits gpus=1 notok=1: ok 2
            alice submits gpus=1 any=1: ok 3
            alice submits gpus=1 after=1 hold=1: ok 4
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
              job 3 pending #1
              job 4 pending #1: held by alice
            server restarts
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
              job 3 pending #1
              job 4 pending #1: held by alice
            node n1 registers again running [1]: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            n1 reports 1 started: ok
            n1 reports 1 exited 1: ok
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke n1; ended 1 4
              job 1 failed on n1 [0] #1: exited with code 1
              job 2 starting on n1 [0] #1: sent to n1
              job 3 starting on n1 [1] #1: sent to n1
              job 4 failed #1: dependency job 1 ended failed; it can never start
        ",
    );
}
