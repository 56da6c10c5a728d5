//! The power rules, transcript style: each scenario prints what the rule decided, line
//! by line, and compares it with the expected text (`UPDATE_EXPECT=1` rewrites it).

use std::fmt::Write;

use super::*;

#[track_caller]
fn check(name: &str, got: &str, expected: &str) {
    gpusched_expect::check(std::panic::Location::caller(), name, expected, got);
}

const A100: GpuWatts = GpuWatts {
    cap_w: 400,
    idle_w: 60,
};

fn node(gpus: u32, busy: u32, watts: GpuWatts) -> NodeDraw {
    NodeDraw { gpus, busy, watts }
}

fn held_text(held: &BTreeMap<u64, OverBudget>, waiting: &[(u64, u32)]) -> String {
    let mut out = String::new();
    for (id, gpus) in waiting {
        match held.get(id) {
            None => writeln!(out, "job {id} ({gpus} GPUs): starts").unwrap(),
            Some(o) => writeln!(
                out,
                "job {id} ({gpus} GPUs): held, {} W of {} W",
                o.would_w, o.budget_w
            )
            .unwrap(),
        }
    }
    out
}

#[test]
fn the_cluster_budget_lets_jobs_in_in_order_while_they_fit() {
    // Two 8-GPU A100 nodes, 2 GPUs busy: 2 x 400 + 14 x 60 = 1,640 W drawn.
    let nodes = [node(8, 2, A100), node(8, 0, A100)];
    assert_eq!(drawn_w(&nodes), 1640);
    // 3,000 W leaves 1,360 W: 4 GPUs at 340 W each.
    let waiting = [(1, 2), (2, 4), (3, 2), (4, 1)];
    let held = hold_back(3000, &nodes, &waiting);
    check(
        "cluster budget",
        &held_text(&held, &waiting),
        "
        job 1 (2 GPUs): starts
        job 2 (4 GPUs): held, 3680 W of 3000 W
        job 3 (2 GPUs): starts
        job 4 (1 GPUs): held, 3340 W of 3000 W
        ",
    );
}

#[test]
fn the_rule_is_at_or_under_the_budget_never_over() {
    assert_eq!(admit(1000, 600, 400), Ok(()));
    assert_eq!(
        admit(1000, 600, 401),
        Err(OverBudget {
            budget_w: 1000,
            would_w: 1001
        })
    );
    // A budget lowered under what runs holds every job back; nothing is stopped.
    let held = hold_back(500, &[node(8, 4, A100)], &[(7, 1)]);
    assert_eq!(held[&7].would_w, 4 * 400 + 4 * 60 + 340);
}

#[test]
fn a_mixed_cluster_charges_a_job_at_its_dearest_gpu() {
    let h100 = GpuWatts::of("H100 80GB HBM3", None);
    let l4 = GpuWatts::of("L4", None);
    assert_eq!(
        (h100, l4.cap_w, l4.idle_w),
        (
            GpuWatts {
                cap_w: 700,
                idle_w: 60
            },
            72,
            18
        )
    );
    // Idle: 4 x 60 + 4 x 18 = 312 W. One GPU more costs 640 W (an H100's).
    let nodes = [node(4, 0, h100), node(4, 0, l4)];
    let waiting = [(1, 1), (2, 1)];
    let held = hold_back(1000, &nodes, &waiting);
    check(
        "mixed",
        &held_text(&held, &waiting),
        "
        job 1 (1 GPUs): starts
        job 2 (1 GPUs): held, 1592 W of 1000 W
        ",
    );
    // A full H100 node no longer counts: only nodes with idle GPUs can take the job.
    let held = hold_back(1000, &[node(4, 4, h100), node(4, 0, l4)], &[(3, 1)]);
    assert_eq!(held[&3].would_w, 2800 + 72 + 54);
}

#[test]
fn a_node_budget_says_how_many_more_gpus_start_there() {
    let mut out = String::new();
    for busy in 0..=8 {
        let n = node(8, busy, A100);
        writeln!(
            out,
            "busy {busy}: {} W drawn, room {}",
            n.drawn_w(),
            node_room(2000, &n)
        )
        .unwrap();
    }
    check(
        "node budget",
        &out,
        "
        busy 0: 480 W drawn, room 4
        busy 1: 820 W drawn, room 3
        busy 2: 1160 W drawn, room 2
        busy 3: 1500 W drawn, room 1
        busy 4: 1840 W drawn, room 0
        busy 5: 2180 W drawn, room 0
        busy 6: 2520 W drawn, room 0
        busy 7: 2860 W drawn, room 0
        busy 8: 3200 W drawn, room 0
        ",
    );
}

#[test]
fn the_simulators_allowance_is_the_rule_on_one_model() {
    let v100 = GpuWatts::of("V100", Some(210));
    assert_eq!(
        v100,
        GpuWatts {
            cap_w: 210,
            idle_w: 60
        }
    );
    // 512 GPUs idle: 30,720 W; each busy one adds 150 W.
    assert_eq!(busy_allowance(30_720, 512, v100), 0);
    assert_eq!(busy_allowance(30_720 + 149, 512, v100), 0);
    assert_eq!(busy_allowance(30_720 + 150, 512, v100), 1);
    assert_eq!(busy_allowance(100_000, 512, v100), 461);
    assert_eq!(busy_allowance(1_000_000, 512, v100), 512);
    for b in [31_000, 50_000, 80_000] {
        let k = busy_allowance(b, 512, v100);
        let drawn = drawn_w(&[node(512, 0, v100)]);
        assert!(admit(b, drawn, u64::from(k) * v100.start_w()).is_ok());
        assert!(k == 512 || admit(b, drawn, u64::from(k + 1) * v100.start_w()).is_err());
    }
}

#[test]
fn a_capped_gpu_is_slower_but_less_than_its_cap() {
    assert_eq!(capped_speed(400, 400), 1.0);
    assert_eq!(capped_speed(500, 400), 1.0);
    let s70 = capped_speed(280, 400);
    let s50 = capped_speed(200, 400);
    assert!((s70 - 0.8985).abs() < 1e-3, "{s70}");
    assert!((s50 - 0.8123).abs() < 1e-3, "{s50}");
    // Energy per unit of work falls with the cap: watts fall faster than speed.
    assert!(0.7 / s70 < 1.0 && 0.5 / s50 < 0.7 / s70);
}

#[test]
fn idle_nodes_go_down_after_the_wait_and_come_up_for_work() {
    let nodes = vec![
        IdleNode {
            name: "n2".into(),
            idle_since: Some(0.0),
            down: false,
        },
        IdleNode {
            name: "n1".into(),
            idle_since: Some(50.0),
            down: false,
        },
        IdleNode {
            name: "n3".into(),
            idle_since: None,
            down: false,
        },
        IdleNode {
            name: "n4".into(),
            idle_since: Some(0.0),
            down: true,
        },
    ];
    let mut out = String::new();
    for now in [30.0, 60.0, 110.0] {
        writeln!(out, "t={now}: down {:?}", to_power_down(&nodes, now, 60.0)).unwrap();
    }
    let down = [
        ("n4".to_string(), 8),
        ("n2".to_string(), 8),
        ("n5".to_string(), 4),
    ];
    for (waiting, free) in [
        (vec![], 0),
        (vec![2], 4),
        (vec![2, 8], 4),
        (vec![6], 0),
        (vec![16], 8),
    ] {
        writeln!(
            out,
            "waiting {waiting:?}, {free} free up: up {:?}",
            to_power_up(&down, &waiting, free)
        )
        .unwrap();
    }
    check(
        "idle nodes",
        &out,
        r#"
        t=30: down []
        t=60: down ["n2"]
        t=110: down ["n1", "n2"]
        waiting [], 0 free up: up None
        waiting [2], 4 free up: up None
        waiting [2, 8], 4 free up: up Some("n2")
        waiting [6], 0 free up: up Some("n2")
        waiting [16], 8 free up: up None
        "#,
    );
}
