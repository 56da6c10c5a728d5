use super::*;
use crate::cluster::Cluster;

fn loc(switch: u32, rack: Option<u32>) -> Location {
    Location { switch, rack }
}

fn cand(node: u32, left: u32, switch: u32, rack: Option<u32>) -> Candidate {
    Candidate {
        node: NodeId(node),
        left,
        location: loc(switch, rack),
    }
}

fn ids(v: &[NodeId]) -> Vec<u32> {
    v.iter().map(|n| n.get()).collect()
}

#[test]
fn split_tries_the_fewest_nodes_first_and_respects_tasks_per_node() {
    let g = Gang {
        shape: GangShape::Split {
            tasks_per_node: None,
        },
        mixed_models: false,
    };
    assert_eq!(g.shapes(16), [(1, 16), (2, 8), (4, 4), (8, 2), (16, 1)]);
    let g = Gang {
        shape: GangShape::Split {
            tasks_per_node: Some(4),
        },
        mixed_models: false,
    };
    assert_eq!(g.shapes(16), [(1, 16), (2, 8), (4, 4)]);
    let g = Gang {
        shape: GangShape::Split {
            tasks_per_node: Some(3),
        },
        mixed_models: false,
    };
    assert!(g.shapes(16).is_empty(), "3 divides no divisor of 16");
}

#[test]
fn one_switch_wins_over_a_tighter_fit_across_switches() {
    let c = [
        cand(0, 0, 0, None),
        cand(1, 0, 1, None),
        cand(2, 4, 2, None),
        cand(3, 4, 2, None),
    ];
    let (score, nodes) = choose_nodes(&c, 2).unwrap();
    assert_eq!(ids(&nodes), [2, 3]);
    assert_eq!(score.switches, 1);
}

#[test]
fn the_fewest_switches_then_one_rack_then_the_tightest() {
    // Three nodes needed; no switch has three. Switch 0 (rack 0) has 2, switch 1 (rack
    // 1) has 2, switch 2 (rack 0) has 1: two switches either way; rack 0 holds three
    // alone, so its switches win over mixing racks.
    let c = [
        cand(0, 0, 0, Some(0)),
        cand(1, 0, 0, Some(0)),
        cand(2, 0, 1, Some(1)),
        cand(3, 0, 1, Some(1)),
        cand(4, 5, 2, Some(0)),
    ];
    let (score, nodes) = choose_nodes(&c, 3).unwrap();
    assert_eq!((score.switches, score.racks), (2, 1));
    assert_eq!(ids(&nodes), [0, 1, 4]);
    // Within one switch, the tightest nodes, in node order.
    let c = [
        cand(0, 4, 0, None),
        cand(1, 0, 0, None),
        cand(2, 2, 0, None),
    ];
    assert_eq!(ids(&choose_nodes(&c, 2).unwrap().1), [1, 2]);
    assert!(choose_nodes(&c, 4).is_none());
}

#[test]
fn unlabelled_nodes_get_the_tightest_fit_in_node_order() {
    let c = [
        cand(0, 4, 0, None),
        cand(1, 0, 1, None),
        cand(2, 2, 2, None),
        cand(3, 0, 3, None),
    ];
    assert_eq!(ids(&choose_nodes(&c, 2).unwrap().1), [1, 3]);
}

fn spec(gpus: u32, gang: Gang, model: Option<&str>) -> JobSpec {
    JobSpec {
        id: crate::JobId(1),
        gpus,
        gpu_model: model.map(str::to_string),
        user: crate::UserId(0),
        queue: crate::QueueId(0),
        account: Default::default(),
        priority: 0,
        submit: 0.0,
        estimate: None,
        cpu_milli: 0,
        mem_mib: 0,
        generic: Default::default(),
        gang: Some(gang),
        nodes: Vec::new(),
        prefer: Vec::new(),
        deadline: None,
    }
}

fn nodes(nodes: u32, per_node: u32, mixed: bool) -> Gang {
    Gang {
        shape: GangShape::Nodes { nodes, per_node },
        mixed_models: mixed,
    }
}

#[test]
fn a_gang_takes_whole_parts_of_one_model_or_nothing() {
    // Four nodes of 8: two V100, two A100.
    let mut c = Cluster::parse_shape("4x8", "V100").unwrap();
    for n in &mut c.nodes[2..] {
        for g in &mut n.gpus {
            g.model = "A100".into();
        }
    }
    let mut map = FreeMap::new(&c);
    map.take(NodeId(0), 4);
    // 3 nodes of 8 of one model: none (two of each, and node 0 is half busy).
    assert_eq!(
        place(
            &map,
            None,
            &spec(24, nodes(3, 8, false), None),
            &nodes(3, 8, false)
        ),
        None
    );
    // With models mixed, nodes 1, 2, 3.
    let g = nodes(3, 8, true);
    let p = place(&map, None, &spec(24, g.clone(), None), &g).unwrap();
    assert_eq!(p, [(NodeId(1), 8), (NodeId(2), 8), (NodeId(3), 8)]);
    // 2 x 4 of one model: the tightest pair of one model is... V100 nodes 0 (4 left 0)
    // and 1 (4 left): left 4; A100 pair: left 8.
    let g = nodes(2, 4, false);
    let p = place(&map, None, &spec(8, g.clone(), None), &g).unwrap();
    assert_eq!(p, [(NodeId(0), 4), (NodeId(1), 4)]);
    // The model prefix is honoured.
    let p = place(&map, None, &spec(8, g.clone(), Some("A1")), &g).unwrap();
    assert_eq!(p, [(NodeId(2), 4), (NodeId(3), 4)]);
}

#[test]
fn a_split_job_takes_the_fewest_nodes_that_fit_now() {
    let c = Cluster::parse_shape("4x8", "V100").unwrap();
    let mut map = FreeMap::new(&c);
    let g = Gang {
        shape: GangShape::Split {
            tasks_per_node: None,
        },
        mixed_models: false,
    };
    // 16 on 8-GPU nodes: 2 x 8.
    assert_eq!(
        place(&map, None, &spec(16, g.clone(), None), &g)
            .unwrap()
            .len(),
        2
    );
    for n in 0..4 {
        map.take(NodeId(n), 4);
    }
    // Only 4 free per node: 4 x 4.
    let p = place(&map, None, &spec(16, g.clone(), None), &g).unwrap();
    assert_eq!(p.len(), 4);
    assert!(p.iter().all(|&(_, k)| k == 4));
}
