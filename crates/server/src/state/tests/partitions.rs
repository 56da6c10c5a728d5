//! Partitions, constraints and node lists (issue 35): features from agents, the queue
//! file's partitions with their limits and access, placement that never leaves them, and
//! the reasons a job with rules waits.

use super::Step::*;
use super::{run, run_with};

const QUEUES: &str = r#"
[queues.default]
[queues.research]
users = ["alice"]

[partition.h100]
features = "h100"
max_walltime = "2h"
default_walltime = "30m"
priority = 5

[partition.debug]
nodes = ["d1"]
max_walltime = "10m"
users = ["bob"]

[partition.ib]
features = "ib"
queues = ["research"]
"#;

#[test]
fn partitions_hold_their_jobs_and_their_limits() {
    run(
        "partitions by feature and by name, with limits, access and order",
        &[
            Queues(QUEUES),
            FeatureNode("h1", 4, "h100,ib"),
            FeatureNode("h2", 4, "h100"),
            FeatureNode("a1", 4, "a100,ib"),
            FeatureNode("d1", 1, "a100"),
            Round,
            // No walltime: the partition's default (30m) is given, its priority added.
            Submit("alice", "gpus=4 partition=h100"),
            Show("alice", 1),
            Submit("alice", "gpus=1 partition=h100 walltime=7201"),
            Submit("alice", "gpus=1 partition=debug walltime=60"),
            Submit("bob", "gpus=1 partition=nope"),
            // ib is open to the research queue only.
            Submit("bob", "gpus=1 partition=ib"),
            Submit("alice", "gpus=1 partition=ib queue=research"),
            // debug first (1 GPU there), then h100.
            Submit("bob", "gpus=1 partition=debug,h100 walltime=60"),
            Submit("bob", "gpus=1 partition=debug,h100 walltime=60"),
            Round,
            Submit("alice", "gpus=4 partition=h100 walltime=60"),
            Round,
            Reason(5, "partition h100: no node it may use has 4 GPUs free"),
        ],
        r#"
            queues reload: Ok(())
            node h1 (4 GPUs, features h100,ib) registers: ok; partitions h100,ib
            node h2 (4 GPUs, features h100) registers: ok; partitions h100
            node a1 (4 GPUs, features a100,ib) registers: ok; partitions ib
            node d1 (1 GPUs, features a100) registers: ok; partitions debug
            round: wrote jobs - nodes a1 d1 h1 h2 tokens -; woke a1 d1 h1 h2; ended -
            alice submits gpus=4 partition=h100: ok 1
            alice shows 1: 1 pending: next to start (the scheduler runs on the next change)
            alice submits gpus=1 partition=h100 walltime=7201: Conflict("partition `h100` allows a walltime of at most 2h; this job asks for 2h1s: ask for less with --walltime, or use another partition")
            alice submits gpus=1 partition=debug walltime=60: Forbidden("alice may not use partition `debug` (from queue `default`); ask an admin to add you to its users, groups or queues")
            bob submits gpus=1 partition=nope: Conflict("no partition named `nope`; the partitions are: debug, h100, ib")
            bob submits gpus=1 partition=ib: Forbidden("bob may not use partition `ib` (from queue `default`); ask an admin to add you to its users, groups or queues")
            alice submits gpus=1 partition=ib queue=research: ok 2
            bob submits gpus=1 partition=debug,h100 walltime=60: ok 3
            bob submits gpus=1 partition=debug,h100 walltime=60: ok 4
            round: wrote jobs 1 2 3 4 nodes - tokens -; woke a1 d1 h1 h2; ended -
              job 1 starting on h1 [0, 1, 2, 3] #1: sent to h1
              job 2 starting on a1 [0] #1: sent to a1
              job 3 starting on d1 [0] #1: sent to d1
              job 4 starting on h2 [0] #1: sent to h2
            alice submits gpus=4 partition=h100 walltime=60: ok 5
            round: wrote jobs 5 nodes - tokens -; woke -; ended -
              job 5 pending #1
        "#,
    );
}

#[test]
fn constraints_and_node_lists_place_and_explain() {
    run(
        "constraint, nodelist and exclude, a gang per part, and why each waits",
        &[
            FeatureNode("n1", 2, "a100,nvlink"),
            FeatureNode("n2", 2, "a100,ib"),
            FeatureNode("n3", 2, "h100,ib"),
            Round,
            Submit("alice", "gpus=2 constraint=a100&!nvlink"),
            Submit("alice", "gpus=1 nodelist=n1,n3 exclude=n1"),
            Submit("alice", "gpus=1 constraint=a100&(h100"),
            Submit("alice", "gpus=1 constraint=v100"),
            Submit("alice", "gpus=1 nodelist=n9"),
            Round,
            // A gang of two parts on nodes with ib (n2 and n3), both busy: it waits for them.
            Submit("alice", "nodes=2 gpn=2 constraint=ib"),
            Round,
            Reason(3, "no node it may use has 2 GPUs free"),
            Exit("n2", 1, 0),
            Round,
            Exit("n3", 2, 0),
            Round,
        ],
        r#"
            node n1 (2 GPUs, features a100,nvlink) registers: ok; partitions -
            node n2 (2 GPUs, features a100,ib) registers: ok; partitions -
            node n3 (2 GPUs, features h100,ib) registers: ok; partitions -
            round: wrote jobs - nodes n1 n2 n3 tokens -; woke n1 n2 n3; ended -
            alice submits gpus=2 constraint=a100&!nvlink: ok 1
            alice submits gpus=1 nodelist=n1,n3 exclude=n1: ok 2
            alice submits gpus=1 constraint=a100&(h100: Conflict("constraint \"a100&(h100\": a \"(\" is never closed; write features joined by & (and), | (or), ! (not) and parentheses, e.g. \"a100&(nvlink|ib)&!slow\"")
            alice submits gpus=1 constraint=v100: Conflict("no node this cluster knows is one this job may use (constraint v100); `gpusched nodes` lists each node's features and partitions")
            alice submits gpus=1 nodelist=n9: Conflict("--nodelist names \"n9\", a node this cluster has never seen; `gpusched nodes` lists them")
            round: wrote jobs 1 2 nodes - tokens -; woke n2 n3; ended -
              job 1 starting on n2 [0, 1] #1: sent to n2
              job 2 starting on n3 [0] #1: sent to n3
            alice submits nodes=2 gpn=2 constraint=ib: ok 3
            round: wrote jobs 3 nodes - tokens -; woke -; ended -
              job 3 pending #1
            n2 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke n2; ended 1
              job 1 succeeded on n2 [0, 1] #1: exited with code 0
            n3 reports 2 exited 0: ok
            round: wrote jobs 2 3 nodes - tokens -; woke n2 n3; ended 2
              job 2 succeeded on n3 [0] #1: exited with code 0
              job 3 starting on n2 [0, 1] #1 parts n2[0, 1]:starting n3[0, 1]:starting: sent to n2, n3; waiting for n2 to reserve MASTER_PORT
        "#,
    );
}

/// Features from the server's topology file join the agent's; node lists take Slurm's
/// host ranges.
#[test]
fn the_topology_files_features_and_host_ranges_choose_nodes() {
    run_with(
        "topology-file features beside the agent's, and host ranges",
        |cfg| {
            let place = |f: &[&str]| crate::live_map::NodePlace {
                features: f.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            };
            cfg.topology.insert("n2".into(), place(&["ib"]));
            cfg.topology.insert("n3".into(), place(&["ib", "a100"]));
        },
        &[
            FeatureNode("n1", 1, "a100"),
            FeatureNode("n2", 1, "a100"),
            FeatureNode("n3", 1, "h100"),
            Round,
            Submit("alice", "gpus=1 constraint=a100&ib&!h100"),
            Submit("alice", "gpus=1 nodelist=n[1-3] exclude=n[02-03],n2"),
            Submit("alice", "gpus=1 nodelist=n[3-1]"),
            Submit("alice", "gpus=1 nodelist=n[1-9]"),
            Round,
        ],
        r#"
            node n1 (1 GPUs, features a100) registers: ok; partitions -
            node n2 (1 GPUs, features a100,ib) registers: ok; partitions -
            node n3 (1 GPUs, features a100,h100,ib) registers: ok; partitions -
            round: wrote jobs - nodes n1 n2 n3 tokens -; woke n1 n2 n3; ended -
            alice submits gpus=1 constraint=a100&ib&!h100: ok 1
            alice submits gpus=1 nodelist=n[1-3] exclude=n[02-03],n2: ok 2
            alice submits gpus=1 nodelist=n[3-1]: Conflict("--nodelist: \"n[3-1]\": the range 3-1 runs backwards; a bracket holds numbers and ranges, e.g. gpu[01-04,07]")
            alice submits gpus=1 nodelist=n[1-9]: Conflict("--nodelist names \"n4\", a node this cluster has never seen; `gpusched nodes` lists them")
            round: wrote jobs 1 2 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n2 [0] #1: sent to n2
              job 2 starting on n1 [0] #1: sent to n1
        "#,
    );
}
