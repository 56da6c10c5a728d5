//! Accounts and the `fairtree` policy in the state machine: a job charged to its user's
//! default account or to the one it names, the refusals (an account that does not exist,
//! one the user is not in, naming whom to ask), the order of waiting jobs by the
//! accounts' decayed usage, and that order kept over a restart because the usage was
//! stored.

use gpusched_core::PolicyKind;

use super::Step::*;
use super::{run_with, Step};

const FILE: &str = "
[queues.default]

[fairshare]
half_life = \"7d\"

[accounts.physics]
shares = 1
users = [\"alice\", \"bob\"]
coordinators = [\"bob\"]

[accounts.chem]
shares = 1
users = [\"carol\", \"alice\"]

[users.alice]
default_account = \"physics\"
";

fn steps(restart: bool) -> Vec<Step> {
    let mut s = vec![
        Queues(FILE),
        Node("n1", 1),
        Round,
        // alice's job runs two hours on the one GPU, charged to physics.
        Submit("alice", "gpus=1"),
        Round,
        Started("n1", 1),
        Round,
        // Refusals: an account that does not exist, one carol is not in.
        Submit("alice", "gpus=1 account=biology"),
        Submit("carol", "gpus=1 account=physics"),
        // Waiting, in submit order: physics (alice), physics (bob), chem (carol).
        Submit("alice", "gpus=1"),
        Submit("bob", "gpus=1"),
        Submit("carol", "gpus=1"),
        Round,
    ];
    s.extend([Wait(7200), Tick, Round]);
    s.push(Accounts);
    if restart {
        s.extend([Restart, Rejoin("n1", 1, &[1]), Round, Accounts]);
    }
    // Job 1 ends: chem has used nothing, so carol's job starts first although it was
    // submitted last; physics' users wait.
    s.extend([Exit("n1", 1, 0), Round]);
    s
}

#[test]
fn the_waiting_order_follows_the_accounts_usage() {
    run_with(
        "fairtree: charged accounts, refusals, the order by usage",
        |cfg| {
            cfg.policy = PolicyKind::FairTree;
            cfg.heartbeat_timeout = std::time::Duration::from_secs(36_000);
            cfg.node_lease = cfg.heartbeat_timeout;
        },
        &steps(false),
        "
            queues reload: Ok(())
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1 account physics: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 account physics: running on n1
            alice submits gpus=1 account=biology: Conflict(\"no account named `biology`; alice's accounts are: chem, physics\")
            carol submits gpus=1 account=physics: Forbidden(\"carol may not charge account `physics`; ask its coordinator (bob) or an admin to add carol to [accounts.physics] users (your accounts: chem)\")
            alice submits gpus=1: ok 2
            bob submits gpus=1: ok 3
            carol submits gpus=1: ok 4
            round: wrote jobs 2 3 4 nodes - tokens -; woke -; ended -
              job 2 pending #1 account physics
              job 3 pending #1 account physics
              job 4 pending #1 account chem
            7200s pass
            tick
            round: wrote jobs - nodes - tokens -; woke -; ended -
            account root: shares 1 usage 2.00h level 1.000; -
            account   chem: shares 1 usage 0.00h level inf; alice 0.00h rank 4 factor 1.000 carol 0.00h rank 4 factor 1.000
            account   physics: shares 1 usage 2.00h level 0.500; bob 0.00h rank 2 factor 0.500 alice 2.00h rank 1 factor 0.250
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 4 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1 account physics: exited with code 0
              job 4 starting on n1 [0] #1 account chem: sent to n1
        ",
    );
}

#[test]
fn the_order_is_the_same_after_a_restart() {
    run_with(
        "fairtree: the usage survives a restart",
        |cfg| {
            cfg.policy = PolicyKind::FairTree;
            cfg.heartbeat_timeout = std::time::Duration::from_secs(36_000);
            cfg.node_lease = cfg.heartbeat_timeout;
        },
        &steps(true),
        "
            queues reload: Ok(())
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1 account physics: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 account physics: running on n1
            alice submits gpus=1 account=biology: Conflict(\"no account named `biology`; alice's accounts are: chem, physics\")
            carol submits gpus=1 account=physics: Forbidden(\"carol may not charge account `physics`; ask its coordinator (bob) or an admin to add carol to [accounts.physics] users (your accounts: chem)\")
            alice submits gpus=1: ok 2
            bob submits gpus=1: ok 3
            carol submits gpus=1: ok 4
            round: wrote jobs 2 3 4 nodes - tokens -; woke -; ended -
              job 2 pending #1 account physics
              job 3 pending #1 account physics
              job 4 pending #1 account chem
            7200s pass
            tick
            round: wrote jobs - nodes - tokens -; woke -; ended -
            account root: shares 1 usage 2.00h level 1.000; -
            account   chem: shares 1 usage 0.00h level inf; alice 0.00h rank 4 factor 1.000 carol 0.00h rank 4 factor 1.000
            account   physics: shares 1 usage 2.00h level 0.500; bob 0.00h rank 2 factor 0.500 alice 2.00h rank 1 factor 0.250
            server restarts
              job 1 running on n1 [0] #1 account physics: running on n1
              job 2 pending #1 account physics
              job 3 pending #1 account physics
              job 4 pending #1 account chem
            node n1 registers again running [1]: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            account root: shares 1 usage 2.00h level 1.000; -
            account   chem: shares 1 usage 0.00h level inf; alice 0.00h rank 4 factor 1.000 carol 0.00h rank 4 factor 1.000
            account   physics: shares 1 usage 2.00h level 0.500; bob 0.00h rank 2 factor 0.500 alice 2.00h rank 1 factor 0.250
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 4 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1 account physics: exited with code 0
              job 4 starting on n1 [0] #1 account chem: sent to n1
        ",
    );
}
