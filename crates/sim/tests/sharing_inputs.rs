//! The Alibaba v2023 readers refuse bad input with file:line:field, and the sharing
//! experiment gives the same output for the same seed.

use gpusched_core::sharing::ShareStrategy;
use gpusched_sim::sharing::{bin_by_arrived, run, ShareWorkload};
use gpusched_sim::trace::openb::{parse_nodes, parse_pods};

const NODES: &str =
    "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\nn1,96000,524288,8,V100M32\n";

fn pods_err(text: &str) -> String {
    parse_pods("pods.csv", text).unwrap_err().to_string()
}

#[test]
fn bad_pod_lists_say_where_and_what() {
    let head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
    let e = pods_err(&format!("{head}p0,4000,1024,1,1500,\n"));
    assert!(e.starts_with("pods.csv:2: field `gpu_milli`"), "{e}");
    let e = pods_err(&format!("{head}p0,4000,1024,2,500,\n"));
    assert!(e.contains("one GPU only"), "{e}");
    let e = pods_err(&format!("{head}p0,4000,1024,1,0,\n"));
    assert!(e.contains("gpu_milli 1..=1000"), "{e}");
    let e = pods_err(&format!("{head}p0,4000,1024,1,500,\np1,-4,1024,0,0,\n"));
    assert!(e.starts_with("pods.csv:3: field `cpu_milli`"), "{e}");
    let e = pods_err("name,cpu_milli,num_gpu\np0,1,1\n");
    assert!(e.contains("missing column(s) memory_mib, gpu_milli"), "{e}");
    let e = pods_err(head);
    assert!(e.contains("no jobs"), "{e}");
    // A CPU-only pod's GPU fields are ignored, as the trace's simulator does.
    let ok = parse_pods(
        "p.csv",
        &format!("{head}p0,4000,1024,0,0,T4\np1,1000,0,1,250,T4|A10\n"),
    )
    .unwrap();
    assert!(ok[0].models.is_empty());
    assert_eq!(ok[1].models, vec!["T4", "A10"]);
    // gpu_spec may be absent (the multigpu lists have none).
    let ok = parse_pods(
        "p.csv",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,8,1000\n",
    )
    .unwrap();
    assert_eq!(ok[0].num_gpu, 8);
}

#[test]
fn bad_node_lists_say_where_and_what() {
    let e = parse_nodes(
        "nodes.csv",
        "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("nodes.csv:2: field `model`"), "{e}");
    let e = parse_nodes(
        "nodes.csv",
        "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,x,T4\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("field `gpu`") && e.contains("`x`"), "{e}");
    let e = parse_nodes(
        "nodes.csv",
        "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,32,T4\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("largest allowed, 16"), "{e}");
    assert_eq!(parse_nodes("n.csv", NODES).unwrap().len(), 2);
}

#[test]
fn same_seed_same_output_and_seeds_differ() {
    let mut pods = String::from("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n");
    for i in 0..60 {
        let (num, milli) = match i % 4 {
            0 => (1, 250 + 10 * i),
            1 => (1, 1000),
            2 => (2, 1000),
            _ => (0, 0),
        };
        pods.push_str(&format!(
            "p{i:03},{},2048,{num},{milli},\n",
            1000 + 500 * (i % 3)
        ));
    }
    let w = ShareWorkload {
        nodes: parse_nodes("n.csv", NODES).unwrap(),
        pods: parse_pods("p.csv", &pods).unwrap(),
        source: "synthetic".into(),
    };
    for s in ShareStrategy::ALL {
        let a = run(&w, s, 42).unwrap();
        let b = run(&w, s, 42).unwrap();
        assert_eq!(a, b, "{}", s.name());
        assert_eq!(bin_by_arrived(&a), bin_by_arrived(&b));
        assert!(a
            .samples
            .iter()
            .all(|x| x.allocated_milli <= a.total_gpu_milli));
    }
    let a = run(&w, ShareStrategy::Fgd, 42).unwrap();
    let c = run(&w, ShareStrategy::Fgd, 43).unwrap();
    assert_ne!(a.samples, c.samples, "another seed draws another order");
}
