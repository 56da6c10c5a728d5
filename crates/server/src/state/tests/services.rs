//! Inference services (issue 34): replicas made from a service's template, their ports
//! and readiness from their agents, the endpoints gateways learn, failures and backoff,
//! rolling updates, node drains, autoscaling on the gateways' load, deletion, a restart,
//! and replicas preempting training.

use super::Step::*;
use super::{run, run_with};

#[test]
fn replicas_start_report_their_ports_and_serve_once_ready() {
    run(
        "two replicas on two nodes, ready one after the other, in the gateways' endpoints",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            ServiceNew("alice", "name=web replicas=2"),
            Round,
            ServiceShow("web"),
            Poll("n1"),
            Listening("n1", 1, 41000),
            Started("n1", 1),
            Listening("n2", 2, 41001),
            Started("n2", 2),
            Round,
            Sync("gw1", "web:0:0"),
            Ready("n1", 1, true),
            Round,
            Sync("gw1", "web:0:0"),
            Ready("n2", 2, true),
            Round,
            ServiceShow("web"),
            Ready("n2", 2, false),
            Round,
            Sync("gw1", "web:3:0"),
            ServiceShow("web"),
            Show("bob", 1),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice creates service name=web replicas=2: ok version 1
            round: wrote jobs 1 2 nodes - tokens - services web; woke n1 n2; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n2 [0] #1: sent to n2
            service web v1 desired 2 ready 0 failures 0: starting: 0 of 2 ready
              replica 1 v1 Starting on n1
              replica 2 v1 Starting on n2
            n1 polls: run 1#1 [0]; cancel -; preempt -
            n1 reports 1 listening on 41000: ok
            n1 reports 1 started: ok
            n2 reports 2 listening on 41001: ok
            n2 reports 2 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
              job 2 running on n2 [0] #1: running on n2
            gateway gw1 syncs: web (desired 2) [-]
            n1 reports 1 ready: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: ready: serving service web
            gateway gw1 syncs: web (desired 2) [1 http://10.0.0.1:41000]
            n2 reports 2 ready: ok
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 running on n2 [0] #1: ready: serving service web
            service web v1 desired 2 ready 2 failures 0: serving: 2 of 2 ready
              replica 1 v1 Ready on n1 http://10.0.0.1:41000
              replica 2 v1 Ready on n2 http://10.0.0.2:41001
            n2 reports 2 not ready: ok
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 running on n2 [0] #1: not ready: GET /ready: status 503
            gateway gw1 syncs: web (desired 2) [1 http://10.0.0.1:41000]
            service web v1 desired 2 ready 1 failures 0: starting: 1 of 2 ready
              replica 1 v1 Ready on n1 http://10.0.0.1:41000
              replica 2 v1 Starting on n2 http://10.0.0.2:41001
            bob shows 1: 1 running: ready: serving service web
        "#,
    );
}

#[test]
fn a_replica_that_ends_on_its_own_is_replaced_after_a_growing_backoff() {
    run(
        "a replica exits, its replacement fails its liveness probe, the next serves",
        &[
            Node("n1", 2),
            Round,
            ServiceNew("alice", "name=web replicas=1 live=/healthz"),
            Round,
            Poll("n1"),
            Listening("n1", 1, 41000),
            Started("n1", 1),
            Ready("n1", 1, true),
            Round,
            Exit("n1", 1, 1),
            Round,
            ServiceShow("web"),
            Wait(1),
            Round,
            ServiceShow("web"),
            Listening("n1", 2, 41001),
            Started("n1", 2),
            Round,
            Unhealthy("n1", 2),
            Round,
            ServiceShow("web"),
            Wait(1),
            Round,
            ServiceShow("web"),
            Wait(1),
            Round,
            ServiceShow("web"),
            Listening("n1", 3, 41002),
            Started("n1", 3),
            Ready("n1", 3, true),
            Round,
            ServiceShow("web"),
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice creates service name=web replicas=1 live=/healthz: ok version 1
            round: wrote jobs 1 nodes - tokens - services web; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 polls: run 1#1 [0]; cancel -; preempt -
            n1 reports 1 listening on 41000: ok
            n1 reports 1 started: ok
            n1 reports 1 ready: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: ready: serving service web
            n1 reports 1 exited 1: ok
            round: wrote jobs 1 nodes - tokens - services web; woke n1; ended 1
              job 1 failed on n1 [0] #1: exited with code 1
            service web v1 desired 1 ready 0 failures 1: replica 1 ended: exited with code 1; 1 failure in a row, the next starts in 1 s
            1s pass
            round: wrote jobs 2 nodes - tokens -; woke n1; ended -
              job 2 starting on n1 [0] #1: sent to n1
            service web v1 desired 1 ready 0 failures 1: scaling from 0 to 1 replicas
              replica 2 v1 Starting on n1
            n1 reports 2 listening on 41001: ok
            n1 reports 2 started: ok
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 running on n1 [0] #1: running on n1
            n1 reports 2 unhealthy: ok
            round: wrote jobs 2 nodes - tokens - services web; woke n1; ended 2
              job 2 failed on n1 [0] #1: stopped by its agent: liveness probe failed 3 times in a row: connection refused
            service web v1 desired 1 ready 0 failures 2: replica 2 ended: stopped by its agent: liveness probe failed 3 times in a row: connection refused; 2 failures in a row, the next starts in 2 s
            1s pass
            round: wrote jobs - nodes - tokens -; woke -; ended -
            service web v1 desired 1 ready 0 failures 2: replica 2 ended: stopped by its agent: liveness probe failed 3 times in a row: connection refused; 2 failures in a row, the next starts in 1 s
            1s pass
            round: wrote jobs 3 nodes - tokens -; woke n1; ended -
              job 3 starting on n1 [0] #1: sent to n1
            service web v1 desired 1 ready 0 failures 2: scaling from 0 to 1 replicas
              replica 3 v1 Starting on n1
            n1 reports 3 listening on 41002: ok
            n1 reports 3 started: ok
            n1 reports 3 ready: ok
            round: wrote jobs 3 nodes - tokens - services web; woke -; ended -
              job 3 running on n1 [0] #1: ready: serving service web
            service web v1 desired 1 ready 1 failures 0: serving: 1 of 1 ready
              replica 3 v1 Ready on n1 http://10.0.0.1:41002
        "#,
    );
}

#[test]
fn a_rolling_update_keeps_every_old_replica_until_a_new_one_is_ready() {
    run(
        "version 2 rolls out one surge at a time; old replicas drain, then stop",
        &[
            Node("n1", 4),
            Round,
            ServiceNew("alice", "name=web replicas=2 drain=2"),
            Round,
            Listening("n1", 1, 41000),
            Started("n1", 1),
            Ready("n1", 1, true),
            Listening("n1", 2, 41001),
            Started("n1", 2),
            Ready("n1", 2, true),
            Round,
            ServiceUpdate("alice", "name=web replicas=2 drain=2 cmd=serve-v2"),
            Round,
            ServiceShow("web"),
            Listening("n1", 3, 41002),
            Started("n1", 3),
            Ready("n1", 3, true),
            Round,
            ServiceShow("web"),
            Sync("gw1", "web:0:0"),
            Wait(2),
            Round,
            Cancelled("n1", 1),
            Listening("n1", 4, 41003),
            Started("n1", 4),
            Ready("n1", 4, true),
            Round,
            ServiceShow("web"),
            Wait(2),
            Round,
            Cancelled("n1", 2),
            Round,
            ServiceShow("web"),
            Sync("gw1", "web:0:0"),
            // Only the count changes: no new version.
            ServiceUpdate("alice", "name=web replicas=1 drain=2 cmd=serve-v2"),
            Round,
            ServiceShow("web"),
            ServiceUpdate("bob", "name=web replicas=3"),
        ],
        r#"
            node n1 (4 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice creates service name=web replicas=2 drain=2: ok version 1
            round: wrote jobs 1 2 nodes - tokens - services web; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n1 [1] #1: sent to n1
            n1 reports 1 listening on 41000: ok
            n1 reports 1 started: ok
            n1 reports 1 ready: ok
            n1 reports 2 listening on 41001: ok
            n1 reports 2 started: ok
            n1 reports 2 ready: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: ready: serving service web
              job 2 running on n1 [1] #1: ready: serving service web
            alice updates service name=web replicas=2 drain=2 cmd=serve-v2: ok version 2
            round: wrote jobs 3 nodes - tokens - services web; woke n1; ended -
              job 3 starting on n1 [2] #1: sent to n1
            service web v2 desired 2 ready 2 failures 0: rolling out version 2: 0 of 2 ready
              replica 1 v1 Ready on n1 http://10.0.0.1:41000
              replica 2 v1 Ready on n1 http://10.0.0.1:41001
              replica 3 v2 Starting on n1
            n1 reports 3 listening on 41002: ok
            n1 reports 3 started: ok
            n1 reports 3 ready: ok
            round: wrote jobs 1 3 4 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: draining: replaced by version 2 of service web
              job 3 running on n1 [2] #1: ready: serving service web
              job 4 starting on n1 [3] #1: sent to n1
            service web v2 desired 2 ready 2 failures 0: rolling out version 2: 1 of 2 ready
              replica 1 v1 Draining on n1 http://10.0.0.1:41000
              replica 2 v1 Ready on n1 http://10.0.0.1:41001
              replica 3 v2 Ready on n1 http://10.0.0.1:41002
              replica 4 v2 Starting on n1
            gateway gw1 syncs: web (desired 2) [2 http://10.0.0.1:41001 3 http://10.0.0.1:41002]
            2s pass
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: stopping: replaced by version 2 of service web
            n1 reports 1 cancelled: ok
            n1 reports 4 listening on 41003: ok
            n1 reports 4 started: ok
            n1 reports 4 ready: ok
            round: wrote jobs 1 2 4 nodes - tokens -; woke n1; ended 1
              job 1 cancelled on n1 [0] #1: cancelled while running
              job 2 running on n1 [1] #1: draining: replaced by version 2 of service web
              job 4 running on n1 [3] #1: ready: serving service web
            service web v2 desired 2 ready 2 failures 0: rolling out version 2: 2 of 2 ready
              replica 2 v1 Draining on n1 http://10.0.0.1:41001
              replica 3 v2 Ready on n1 http://10.0.0.1:41002
              replica 4 v2 Ready on n1 http://10.0.0.1:41003
            2s pass
            round: wrote jobs 2 nodes - tokens -; woke n1; ended -
              job 2 running on n1 [1] #1: stopping: replaced by version 2 of service web
            n1 reports 2 cancelled: ok
            round: wrote jobs 2 nodes - tokens -; woke n1; ended 2
              job 2 cancelled on n1 [1] #1: cancelled while running
            service web v2 desired 2 ready 2 failures 0: serving: 2 of 2 ready
              replica 3 v2 Ready on n1 http://10.0.0.1:41002
              replica 4 v2 Ready on n1 http://10.0.0.1:41003
            gateway gw1 syncs: web (desired 2) [3 http://10.0.0.1:41002 4 http://10.0.0.1:41003]
            alice updates service name=web replicas=1 drain=2 cmd=serve-v2: ok version 2
            round: wrote jobs 4 nodes - tokens - services web; woke -; ended -
              job 4 running on n1 [3] #1: draining: service web scaled down to 1
            service web v2 desired 1 ready 1 failures 0: serving: 1 of 1 ready
              replica 3 v2 Ready on n1 http://10.0.0.1:41002
              replica 4 v2 Draining on n1 http://10.0.0.1:41003
            bob updates service name=web replicas=3: Forbidden("service web is alice's; only its owner or an admin may update it")
        "#,
    );
}

#[test]
fn a_drained_node_loses_its_replicas_one_at_a_time() {
    run(
        "n1 drained: each of its replicas is replaced elsewhere before it drains",
        &[
            Node("n1", 2),
            Round,
            ServiceNew("alice", "name=web replicas=2 drain=1"),
            Round,
            Listening("n1", 1, 41000),
            Started("n1", 1),
            Ready("n1", 1, true),
            Listening("n1", 2, 41001),
            Started("n1", 2),
            Ready("n1", 2, true),
            Round,
            Node("n2", 2),
            Drain("root", "n1", "maintenance", false),
            Round,
            ServiceShow("web"),
            Listening("n2", 3, 41002),
            Started("n2", 3),
            Ready("n2", 3, true),
            Round,
            ServiceShow("web"),
            Wait(1),
            Round,
            Cancelled("n1", 1),
            Round,
            ServiceShow("web"),
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice creates service name=web replicas=2 drain=1: ok version 1
            round: wrote jobs 1 2 nodes - tokens - services web; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n1 [1] #1: sent to n1
            n1 reports 1 listening on 41000: ok
            n1 reports 1 started: ok
            n1 reports 1 ready: ok
            n1 reports 2 listening on 41001: ok
            n1 reports 2 started: ok
            n1 reports 2 ready: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: ready: serving service web
              job 2 running on n1 [1] #1: ready: serving service web
            node n2 (2 GPUs) registers: ok
            root drains n1 (maintenance): ok, drained by root
            round: wrote jobs 3 nodes n1 n2 tokens -; woke n1 n2; ended -
              job 3 starting on n2 [0] #1: sent to n2
            service web v1 desired 2 ready 2 failures 0: moving 2 replicas off drained or unreachable nodes: 2 of 2 ready
              replica 1 v1 Ready on n1 http://10.0.0.1:41000
              replica 2 v1 Ready on n1 http://10.0.0.1:41001
              replica 3 v1 Starting on n2
            n2 reports 3 listening on 41002: ok
            n2 reports 3 started: ok
            n2 reports 3 ready: ok
            round: wrote jobs 1 3 4 nodes - tokens -; woke n2; ended -
              job 1 running on n1 [0] #1: draining: moved off n1, which is drained or unreachable
              job 3 running on n2 [0] #1: ready: serving service web
              job 4 starting on n2 [1] #1: sent to n2
            service web v1 desired 2 ready 2 failures 0: moving 2 replicas off drained or unreachable nodes: 3 of 2 ready
              replica 1 v1 Draining on n1 http://10.0.0.1:41000
              replica 2 v1 Ready on n1 http://10.0.0.1:41001
              replica 3 v1 Ready on n2 http://10.0.0.2:41002
              replica 4 v1 Starting on n2
            1s pass
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: stopping: moved off n1, which is drained or unreachable
            n1 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 cancelled on n1 [0] #1: cancelled while running
            service web v1 desired 2 ready 2 failures 0: moving 1 replica off drained or unreachable nodes: 2 of 2 ready
              replica 2 v1 Ready on n1 http://10.0.0.1:41001
              replica 3 v1 Ready on n2 http://10.0.0.2:41002
              replica 4 v1 Starting on n2
        "#,
    );
}

#[test]
fn the_autoscaler_follows_the_gateways_load_to_zero_and_back() {
    run(
        "0..3 replicas at 2 requests each: a held request starts one, load adds two, idle removes all",
        &[
            Node("n1", 4),
            Round,
            ServiceNew("alice", "name=web replicas=0 autoscale=0..3 target=2 down=10 idle=30"),
            Round,
            ServiceShow("web"),
            Sync("gw1", "web:0:1"),
            Round,
            ServiceShow("web"),
            Listening("n1", 1, 41000),
            Started("n1", 1),
            Ready("n1", 1, true),
            Round,
            Sync("gw1", "web:4:0"),
            Sync("gw2", "web:1:0"),
            Round,
            ServiceShow("web"),
            Wait(5),
            Sync("gw1", "web:1:0"),
            Sync("gw2", "web:0:0"),
            Round,
            ServiceShow("web"),
            Wait(6),
            Sync("gw1", "web:1:0"),
            Sync("gw2", "web:0:0"),
            Round,
            ServiceShow("web"),
            Wait(31),
            Sync("gw1", "web:0:0"),
            Round,
            ServiceShow("web"),
        ],
        r#"
            node n1 (4 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice creates service name=web replicas=0 autoscale=0..3 target=2 down=10 idle=30: ok version 1
            round: wrote jobs - nodes - tokens - services web; woke -; ended -
            service web v1 desired 0 ready 0 failures 0: scaled to zero: the first request through a gateway starts a replica
            gateway gw1 syncs: web (desired 0) [-]
            round: wrote jobs 1 nodes - tokens - services web; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            service web v1 desired 1 ready 0 failures 0: scaling from 0 to 1 replicas
              replica 1 v1 Starting on n1
            n1 reports 1 listening on 41000: ok
            n1 reports 1 started: ok
            n1 reports 1 ready: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: ready: serving service web
            gateway gw1 syncs: web (desired 1) [1 http://10.0.0.1:41000]
            gateway gw2 syncs: web (desired 1) [1 http://10.0.0.1:41000]
            round: wrote jobs 2 3 nodes - tokens - services web; woke n1; ended -
              job 2 starting on n1 [1] #1: sent to n1
              job 3 starting on n1 [2] #1: sent to n1
            service web v1 desired 3 ready 1 failures 0: scaling from 1 to 3 replicas
              replica 1 v1 Ready on n1 http://10.0.0.1:41000
              replica 2 v1 Starting on n1
              replica 3 v1 Starting on n1
            5s pass
            gateway gw1 syncs: web (desired 3) [1 http://10.0.0.1:41000]
            gateway gw2 syncs: web (desired 3) [1 http://10.0.0.1:41000]
            round: wrote jobs - nodes - tokens -; woke -; ended -
            service web v1 desired 3 ready 1 failures 0: starting: 1 of 3 ready
              replica 1 v1 Ready on n1 http://10.0.0.1:41000
              replica 2 v1 Starting on n1
              replica 3 v1 Starting on n1
            6s pass
            gateway gw1 syncs: web (desired 3) [1 http://10.0.0.1:41000]
            gateway gw2 syncs: web (desired 3) [1 http://10.0.0.1:41000]
            round: wrote jobs 2 3 nodes - tokens - services web; woke n1; ended -
              job 2 starting on n1 [1] #1: stopping: service web scaled down to 1
              job 3 starting on n1 [2] #1: stopping: service web scaled down to 1
            service web v1 desired 1 ready 1 failures 0: scaling from 3 to 1 replicas
              replica 1 v1 Ready on n1 http://10.0.0.1:41000
              replica 2 v1 Draining on n1
              replica 3 v1 Draining on n1
            31s pass
            gateway gw1 syncs: web (desired 1) [1 http://10.0.0.1:41000]
            round: wrote jobs 1 nodes - tokens - services web; woke -; ended -
              job 1 running on n1 [0] #1: draining: service web scaled down to 0
            service web v1 desired 0 ready 0 failures 0: scaling from 1 to 0 replicas
              replica 1 v1 Draining on n1 http://10.0.0.1:41000
              replica 2 v1 Draining on n1
              replica 3 v1 Draining on n1
        "#,
    );
}

#[test]
fn a_deleted_service_drains_its_replicas_and_a_restart_keeps_what_was_written() {
    run(
        "the server restarts with a service and its replicas, then the service is deleted",
        &[
            Node("n1", 2),
            Round,
            ServiceNew("alice", "name=web replicas=2 drain=1"),
            Round,
            Listening("n1", 1, 41000),
            Started("n1", 1),
            Ready("n1", 1, true),
            Started("n1", 2),
            Round,
            Restart,
            Rejoin("n1", 2, &[1, 2]),
            Round,
            ServiceShow("web"),
            Sync("gw1", "web:0:0"),
            ServiceDelete("bob", "web"),
            ServiceDelete("alice", "web"),
            Round,
            ServiceShow("web"),
            Wait(1),
            Round,
            Cancelled("n1", 1),
            Cancelled("n1", 2),
            Round,
            ServiceShow("web"),
            Sync("gw1", "web:0:0"),
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice creates service name=web replicas=2 drain=1: ok version 1
            round: wrote jobs 1 2 nodes - tokens - services web; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n1 [1] #1: sent to n1
            n1 reports 1 listening on 41000: ok
            n1 reports 1 started: ok
            n1 reports 1 ready: ok
            n1 reports 2 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: ready: serving service web
              job 2 running on n1 [1] #1: running on n1
            server restarts
              job 1 running on n1 [0] #1: ready: serving service web
              job 2 running on n1 [1] #1: running on n1
            node n1 registers again running [1, 2]: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            service web v1 desired 2 ready 1 failures 0: starting: 1 of 2 ready
              replica 1 v1 Ready on n1 http://10.0.0.1:41000
              replica 2 v1 Starting on n1
            gateway gw1 syncs: web (desired 2) [1 http://10.0.0.1:41000]
            bob deletes service web: Forbidden("service web is alice's; only its owner or an admin may delete it")
            alice deletes service web: ok: starting: 1 of 2 ready
            round: wrote jobs 1 2 nodes - tokens - services web; woke n1; ended -
              job 1 running on n1 [0] #1: draining: service web is being deleted
              job 2 running on n1 [1] #1: stopping: service web is being deleted
            service web v1 desired 2 ready 0 failures 0: deleting: 1 replica to stop, 1 still running
              replica 1 v1 Draining on n1 http://10.0.0.1:41000
              replica 2 v1 Draining on n1
            1s pass
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: stopping: service web is being deleted
            n1 reports 1 cancelled: ok
            n1 reports 2 cancelled: ok
            round: wrote jobs 1 2 nodes - tokens - services web; woke n1; ended 1 2
              job 1 cancelled on n1 [0] #1: cancelled while running
              job 2 cancelled on n1 [1] #1: cancelled while running
            service web: NotFound("no service named web; `gpusched service ls` lists them")
            gateway gw1 syncs: -
        "#,
    );
}

#[test]
fn a_replica_that_finds_no_gpu_preempts_training_and_old_agents_get_none() {
    run_with(
        "a training job holds the only node's GPUs; a replica takes them; a protocol-3 node gets no replica",
        |_| {},
        &[
            Node("n1", 1),
            Round,
            Submit("bob", "gpus=1 name=train"),
            Round,
            Started("n1", 1),
            Round,
            // Past the default --min-runtime (10 min), which protects young runs.
            Wait(601),
            ServiceNew("alice", "name=web replicas=1"),
            Round,
            Poll("n1"),
            ServiceShow("web"),
            Preempted("n1", 1),
            Round,
            ServiceShow("web"),
            // The training job goes to a node of protocol 3; a replica never does.
            Protocol3Node("n2", 1),
            Round,
            Protocol3Node("n3", 1),
            ServiceNew("alice", "name=api replicas=1"),
            Round,
            Show("alice", 3),
        ],
        r#"
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            bob submits gpus=1 name=train: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            601s pass
            alice creates service name=web replicas=1: ok version 1
            round: wrote jobs 1 2 nodes - tokens - services web; woke n1; ended -
              job 1 running on n1 [0] #1: being requeued: serving preemption: replica 2 of service web needs its GPUs on n1 (services run above training)
              job 2 pending #1
            n1 polls: run -; cancel -; preempt 1#1
            service web v1 desired 1 ready 0 failures 0: starting: 0 of 1 ready
              replica 2 v1 Waiting
            n1 reports 1 preempted: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 pending #2: requeued without using a retry: serving preemption: replica 2 of service web needs its GPUs on n1 (services run above training)
              job 2 starting on n1 [0] #1: sent to n1
            service web v1 desired 1 ready 0 failures 0: starting: 0 of 1 ready
              replica 2 v1 Starting on n1
            node n2 (1 GPUs, agent protocol 3) registers: ok
            round: wrote jobs 1 nodes n2 tokens -; woke n2; ended -
              job 1 starting on n2 [0] #2: sent to n2
            node n3 (1 GPUs, agent protocol 3) registers: ok
            alice creates service name=api replicas=1: ok version 1
            round: wrote jobs 3 nodes n3 tokens - services api; woke n3; ended -
              job 3 pending #1
            alice shows 3: 3 pending: waiting for an agent that serves replicas on n3 (its agent is older than agent protocol 5, which replicas need; upgrade it)
        "#,
    );
}
