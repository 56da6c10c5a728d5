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
        r#""#,
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
        r#""#,
    );
}

#[test]
fn a_rolling_update_keeps_every_old_replica_until_a_new_one_is_ready() {
    run(
        "version 2 rolls out one surge at a time; old replicas drain, then stop",
        &[
            Node("n1", 2),
            Node("n2", 2),
            Round,
            ServiceNew("alice", "name=web replicas=2 drain=2"),
            Round,
            Listening("n1", 1, 41000),
            Started("n1", 1),
            Ready("n1", 1, true),
            Listening("n2", 2, 41001),
            Started("n2", 2),
            Ready("n2", 2, true),
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
            ServiceShow("web"),
            Cancelled("n1", 1),
            Round,
            Listening("n2", 4, 41003),
            Started("n2", 4),
            Ready("n2", 4, true),
            Round,
            Wait(2),
            Round,
            Cancelled("n2", 2),
            Round,
            ServiceShow("web"),
            // Only the count changes: no new version.
            ServiceUpdate("alice", "name=web replicas=1 drain=2 cmd=serve-v2"),
            Round,
            ServiceShow("web"),
            ServiceUpdate("bob", "name=web replicas=3"),
        ],
        r#""#,
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
        r#""#,
    );
}

#[test]
fn the_autoscaler_follows_the_gateways_load_to_zero_and_back() {
    run(
        "0..3 replicas at 2 requests each: a held request starts one, load adds two, idle removes all",
        &[
            Node("n1", 4),
            Round,
            ServiceNew("alice", "name=web autoscale=0..3 target=2 down=10 idle=30"),
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
        r#""#,
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
        r#""#,
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
            Wait(60),
            ServiceNew("alice", "name=web replicas=1"),
            Round,
            Poll("n1"),
            ServiceShow("web"),
            Preempted("n1", 1),
            Round,
            ServiceShow("web"),
            Protocol3Node("n2", 1),
            ServiceNew("alice", "name=api replicas=1"),
            Round,
            Show("alice", 4),
        ],
        r#""#,
    );
}
