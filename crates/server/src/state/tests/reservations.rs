//! Advance reservations (issue 35): admins only, checked against nodes and each other,
//! a backfill candidate kept out of a window it would run into, the reservation's own
//! job started as the window opens, a maintenance window, deletion, and a restart.

use super::Step::*;
use super::{run, run_with};
use gpusched_core::PolicyKind;

#[test]
fn a_window_keeps_its_nodes_and_starts_its_own_jobs_when_it_opens() {
    run_with(
        "a workshop in 100 s on n1 under backfill: a long job stays off n1, a short one runs before it",
        |cfg| cfg.policy = PolicyKind::Backfill,
        &[
            Node("n1", 2),
            Node("n2", 1),
            Round,
            Reserve("alice", "name=workshop nodes=n1 start=+100 dur=3600 users=alice"),
            Reserve("root", "name=workshop nodes=n1 start=+100 dur=3600 users=alice"),
            Reserve("root", "name=clash nodes=n1 start=+200 dur=60"),
            Reserve("root", "name=nowhere nodes=n9 start=+200 dur=60"),
            Reserve("root", "name=both nodes=n2 gpus=1 dur=60"),
            Reserve("root", "name=none gpus=0 dur=60"),
            Reservations,
            // Too long for the time left before the window; no walltime; short enough.
            Submit("bob", "gpus=2 walltime=600"),
            Submit("bob", "gpus=2"),
            Submit("bob", "gpus=2 walltime=60"),
            Submit("bob", "gpus=1 reservation=workshop"),
            Submit("alice", "gpus=2 reservation=workshop"),
            Submit("alice", "gpus=1 reservation=nope"),
            Round,
            Show("root", 1),
            Show("root", 2),
            Show("root", 3),
            Show("root", 4),
            Started("n1", 3),
            Wait(50),
            Exit("n1", 3, 0),
            Round,
            Wait(50),
            Round,
            Reservations,
            Unreserve("root", "workshop"),
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice reserves name=workshop nodes=n1 start=+100 dur=3600 users=alice: Forbidden("only an admin may create a reservation; you are alice")
            root reserves name=workshop nodes=n1 start=+100 dur=3600 users=alice: ok workshop on n1 (2 GPUs)
            root reserves name=clash nodes=n1 start=+200 dur=60: Conflict("node n1 is held by reservation workshop in an overlapping window; choose other nodes or another window")
            root reserves name=nowhere nodes=n9 start=+200 dur=60: Conflict("node n9 is not known to this cluster; `gpusched nodes` lists them")
            root reserves name=both nodes=n2 gpus=1 dur=60: Conflict("give either `nodes` (by name) or `gpus` (a count the server finds nodes for), not both and not neither")
            root reserves name=none gpus=0 dur=60: BadRequest("gpus 0 must be 1 to 1000000 (or leave it out and name `nodes`)")
            reservation workshop Waiting on n1 jobs [-]
            bob submits gpus=2 walltime=600: ok 1
            bob submits gpus=2: ok 2
            bob submits gpus=2 walltime=60: ok 3
            bob submits gpus=1 reservation=workshop: Forbidden("bob may not run in reservation workshop (from queue `default`); it is for users alice")
            alice submits gpus=2 reservation=workshop: ok 4
            alice submits gpus=1 reservation=nope: Conflict("no reservation named \"nope\"; `gpusched reservation ls` lists them")
            round: wrote jobs 1 2 3 4 nodes - tokens - reservations workshop; woke n1; ended -
              job 1 pending #1
              job 2 pending #1
              job 3 starting on n1 [0, 1] #1: sent to n1
              job 4 pending #1
            root shows 1: 1 pending: the nodes that could hold it are reserved by workshop in 1m40s, before its walltime would end; it starts elsewhere or after the window (a shorter --walltime may let it in now)
            root shows 2: 2 pending: the nodes that could hold it are reserved by workshop in 1m40s; a job without a walltime never starts on a reserved node before its window (give --walltime)
            root shows 3: 3 starting: sent to n1
            root shows 4: 4 pending: runs in reservation workshop, whose window opens in 1m40s
            n1 reports 3 started: ok
            50s pass
            n1 reports 3 exited 0: ok
            round: wrote jobs 3 nodes - tokens -; woke n1; ended 3
              job 3 succeeded on n1 [0, 1] #1: exited with code 0
            50s pass
            round: wrote jobs 4 nodes - tokens -; woke n1; ended -
              job 4 starting on n1 [0, 1] #1: sent to n1
            reservation workshop Active on n1 jobs [4]
            root deletes reservation workshop: Conflict("reservation workshop has jobs that have not ended (4); cancel them first (`gpusched cancel ID`)")
        "#,
    );
}

#[test]
fn a_maintenance_window_admits_no_job_and_survives_a_restart() {
    run(
        "maintenance on n1 from now: nothing starts there; a restart keeps it",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Reserve("root", "name=fix nodes=n1 start=+10 dur=600 maint=1"),
            Submit("alice", "gpus=1 reservation=fix"),
            Submit("alice", "gpus=1 walltime=60"),
            Submit("alice", "gpus=1 walltime=60"),
            Round,
            Wait(10),
            Round,
            Restart,
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Reservations,
            Wait(600),
            Round,
            Reservations,
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            root reserves name=fix nodes=n1 start=+10 dur=600 maint=1: ok fix on n1 (1 GPUs)
            alice submits gpus=1 reservation=fix: Conflict("reservation fix is a maintenance window: no job runs in it")
            alice submits gpus=1 walltime=60: ok 2
            alice submits gpus=1 walltime=60: ok 3
            round: wrote jobs 2 3 nodes - tokens - reservations fix; woke n2; ended -
              job 2 starting on n2 [0] #1: sent to n2
              job 3 pending #1
            10s pass
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: being requeued: n1 is in maintenance reservation fix
            server restarts
              job 1 starting on n1 [0] #1: being requeued: n1 is in maintenance reservation fix
              job 2 starting on n2 [0] #1: sent to n2
              job 3 pending #1
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes - tokens -; woke n1 n2; ended -
            reservation fix Active on n1 jobs [-]
            600s pass
            round: wrote jobs - nodes - tokens - reservations fix; woke -; ended -
        "#,
    );
}
