//! The power budget on the live cluster, transcript style: each step's starts, what is
//! drawn at the caps, and why each waiting job waits.

use std::fmt::Write;

use super::tests::{node, whole};
use super::*;
use crate::power::{Budget, GpuWatts};
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind};

#[track_caller]
fn check(name: &str, got: &str, expected: &str) {
    gpusched_expect::check(std::panic::Location::caller(), name, expected, got);
}

fn cluster(nodes: &[(&str, u32)], budget: Budget) -> LiveCluster {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    c.set_nodes(nodes.iter().map(|&(n, g)| node(n, g, false)).collect());
    // A100s capped at 300 W, 60 W idle: a start adds 240 W a GPU.
    let watts = nodes
        .iter()
        .map(|&(n, _)| {
            (
                n.to_string(),
                GpuWatts {
                    cap_w: 300,
                    idle_w: 60,
                },
            )
        })
        .collect();
    c.set_power(PowerSetup {
        budget,
        watts,
        down: Default::default(),
    });
    c
}

/// One pass at `now`: who started where, the draw, and each waiting job's reason.
fn step(c: &mut LiveCluster, now: f64, waiting: &[(u64, u32)], out: &mut String) {
    let starts = c.pass(now, &[]);
    for p in &starts {
        let parts: Vec<String> = p
            .parts
            .iter()
            .map(|x| format!("{}{:?}", x.node, x.gpus))
            .collect();
        writeln!(out, "t={now}: job {} starts on {}", p.job, parts.join(" ")).unwrap();
    }
    let v = c.power_view();
    writeln!(
        out,
        "t={now}: {} W drawn at caps, {} held",
        v.drawn_w, v.held_jobs
    )
    .unwrap();
    let ctx = c.wait_context();
    for &(id, gpus) in waiting {
        if starts.iter().any(|p| p.job == id) {
            continue;
        }
        let why = c.wait_reason(&whole(id, gpus), &Blocked::default(), &ctx);
        writeln!(out, "t={now}: job {id} waits: {why:?}").unwrap();
    }
}

#[test]
fn the_budget_holds_a_job_back_until_power_frees() {
    // Two 4-GPU nodes idle: 8 x 60 = 480 W. 1,500 W leaves room for 4 GPUs (960 W).
    let mut c = cluster(
        &[("a", 4), ("b", 4)],
        Budget {
            cluster_w: Some(1500),
            node_w: None,
        },
    );
    let mut out = String::new();
    c.add(&whole(1, 3));
    c.add(&whole(2, 2));
    c.add(&whole(3, 1));
    step(&mut c, 1.0, &[(1, 3), (2, 2), (3, 1)], &mut out);
    c.remove(1, 2.0);
    step(&mut c, 2.0, &[(2, 2)], &mut out);
    check(
        "budget",
        &out,
        "
        t=1: job 1 starts on a[0, 1, 2]
        t=1: job 3 starts on a[3]
        t=1: 1440 W drawn at caps, 1 held
        t=1: job 2 waits: PowerBudget { budget_w: 1500, would_w: 1680 }
        t=2: job 2 starts on a[0, 1]
        t=2: 1200 W drawn at caps, 0 held
        ",
    );
}

#[test]
fn a_node_budget_holds_its_gpus_beyond_it_and_down_nodes_take_nothing() {
    // Per node 600 W: 4 x 60 idle = 240 W, room for one GPU (240 W) only.
    let mut c = cluster(
        &[("a", 4), ("b", 4)],
        Budget {
            cluster_w: None,
            node_w: Some(600),
        },
    );
    let mut out = String::new();
    for id in 1..=3 {
        c.add(&whole(id, 1));
    }
    step(&mut c, 1.0, &[(1, 1), (2, 1), (3, 1)], &mut out);
    // Node b goes down: nothing more there; it comes up for the waiting job.
    let mut setup = c.power.clone();
    setup.down.insert("b".into());
    c.remove(2, 2.0);
    c.set_power(setup.clone());
    step(&mut c, 2.0, &[(3, 1)], &mut out);
    let down = [("b".to_string(), 4)];
    writeln!(
        out,
        "idle: {:?}, up: {:?}",
        c.idle_nodes(),
        c.node_to_power_up(&down)
    )
    .unwrap();
    setup.down.clear();
    c.set_power(setup);
    step(&mut c, 3.0, &[(3, 1)], &mut out);
    check(
        "node budget",
        &out,
        "
        t=1: job 1 starts on a[0]
        t=1: job 2 starts on b[0]
        t=1: 960 W drawn at caps, 0 held
        t=1: job 3 waits: NodePowerBudget { node_w: 600, gpus: 1 }
        t=2: 720 W drawn at caps, 0 held
        t=2: job 3 waits: NodePowerBudget { node_w: 600, gpus: 1 }
        idle: [\"b\"], up: None
        t=3: job 3 starts on b[0]
        t=3: 960 W drawn at caps, 0 held
        ",
    );
}

#[test]
fn without_a_budget_the_pass_is_as_before() {
    let mut c = cluster(&[("a", 2)], Budget::default());
    c.add(&whole(1, 2));
    c.add(&whole(2, 1));
    let mut out = String::new();
    step(&mut c, 1.0, &[(1, 2), (2, 1)], &mut out);
    assert!(out.contains("job 1 starts on a[0, 1]"), "{out}");
    assert_eq!(c.power_view().budget_w, None);
    assert!(c.power_held(2).is_none());
}
