//! The heterogeneous simulator: the cluster text, the throughput table, determinism, and
//! small constructed runs where knowing speeds must pay.

use super::*;
use crate::report;
use crate::trace::native::parse_csv;
use crate::Summary;

const TABLE: &str = r#"{"reference": "v100", "jobs": [
  {"job": "flat", "speed": {"v100": 1.0, "k80": 0.9}},
  {"job": "fast", "speed": {"v100": 1.0, "k80": 0.1}},
  {"job": "fast", "gpus": 2, "speed": {"v100": 1.0, "k80": 0.2}}
]}"#;

fn table() -> Throughputs {
    Throughputs::parse("t.json", TABLE).unwrap()
}

fn run(trace: &str, cluster: &str, policy: HeteroPolicy) -> crate::SimRun {
    let w = parse_csv("w.csv", trace).unwrap();
    let c = HeteroCluster::parse(cluster).unwrap();
    simulate_hetero(&w, &c, &table(), &HeteroOptions::new(policy)).unwrap()
}

fn avg_jct(r: &crate::SimRun) -> f64 {
    Summary::of(r, "", "", false).avg_jct
}

#[test]
fn a_typed_cluster_reads_and_each_mistake_names_the_part_and_the_fix() {
    let c = HeteroCluster::parse("v100:36x1, p100:36x1,k80:4x8").unwrap();
    assert_eq!(c.types().names, ["v100", "p100", "k80"]);
    assert_eq!(c.types().gpus, [36, 36, 32]);
    assert_eq!(c.total_gpus(), 104);
    assert!(HeteroCluster::is_typed("v100:1x1"));
    assert!(!HeteroCluster::is_typed("8x8"));
    let e = |t: &str| HeteroCluster::parse(t).unwrap_err().to_string();
    assert_eq!(
        e("v100=36x1"),
        "--cluster part `v100=36x1` is not MODEL:NODESxGPUS; write e.g. v100:36x1,k80:16x4"
    );
    assert_eq!(
        e("v100:36"),
        "--cluster part `v100:36`: `36` is not NODESxGPUS with both at least 1 (e.g. 36x1, 16x8)"
    );
    assert!(e("v100:0x8").contains("both at least 1"));
    assert!(e("v100:1x8,v100:2x8").contains("names GPU model `v100` twice"));
    assert!(e(":1x8").contains("is not MODEL:NODESxGPUS"));
    assert!(e("v100:100000x100000").contains("at most"));
}

#[test]
fn a_bad_table_says_what_and_how() {
    let e = |t: &str| Throughputs::parse("t.json", t).unwrap_err().to_string();
    assert!(e("{}").starts_with("t.json: not a throughput table: missing field `jobs`"));
    assert!(e(r#"{"jobs": [{"job": "a", "speed": {"v100": 0}}]}"#)
        .contains("job `a`: speed on `v100` is 0; give a positive number"));
    assert!(
        e(r#"{"jobs": [{"job": "a", "speed": {}}, {"job": "a", "speed": {}}]}"#)
            .contains("has two rows; keep one")
    );
    assert!(e(r#"{"jobs": [{"job": "a", "sped": {}}]}"#).contains("unknown field `sped`"));
    // A row by GPU count beats the row without one; unknown jobs and types take defaults.
    let t = table();
    let models = vec!["v100".to_string(), "k80".to_string(), "a100".to_string()];
    let f = |name, gpus| -> Vec<f64> {
        t.speeds(Some(name), gpus, &models)
            .iter()
            .map(|s| s.factor)
            .collect()
    };
    assert_eq!(f("fast", 1), [1.0, 0.1, 2.0]);
    assert_eq!(f("fast", 2), [1.0, 0.2, 2.0]);
    assert_eq!(f("other", 1), [1.0, 0.297, 2.0]);
}

/// Four jobs at once on two V100s and two K80s: the two that came first barely slow
/// on a K80, the two after run ten times slower there.
const CONTENDED: &str =
    "submit,gpus,duration,name\n0,1,3600,flat\n0,1,3600,flat\n0,1,3600,fast\n0,1,3600,fast\n";

#[test]
fn knowing_speeds_gives_the_fast_gpus_to_the_jobs_that_gain_most() {
    let cluster = "v100:1x2,k80:1x2";
    let las = avg_jct(&run(CONTENDED, cluster, HeteroPolicy::Las));
    let aware = avg_jct(&run(CONTENDED, cluster, HeteroPolicy::LasAware));
    let maxmin = avg_jct(&run(CONTENDED, cluster, HeteroPolicy::MaxMin));
    let maxmin_aware = avg_jct(&run(CONTENDED, cluster, HeteroPolicy::MaxMinAware));
    // LAS-aware: the fast jobs on the V100s (done at 3600 s), the flat ones on the K80s
    // until then (0.9 x 3600 s of work), then on the V100s for the last 360 s: 3960 s.
    assert!((aware - 3780.0).abs() < 1e-6, "las-aware {aware}");
    assert!(aware < las, "las-aware {aware} vs las {las}");
    assert!(
        maxmin_aware < maxmin,
        "max-min-aware {maxmin_aware} vs max-min {maxmin}"
    );
}

/// One job at a time, each gaining 10x on the V100: agnostic FIFO sends them to the K80s
/// (two free beat one free), aware FIFO to the V100.
#[test]
fn aware_fifo_takes_the_fastest_free_type() {
    let trace = "submit,gpus,duration,name\n0,1,3600,fast\n40000,1,3600,fast\n80000,1,3600,fast\n";
    let cluster = "v100:1x1,k80:1x2";
    let fifo = avg_jct(&run(trace, cluster, HeteroPolicy::Fifo));
    let aware = avg_jct(&run(trace, cluster, HeteroPolicy::FifoAware));
    assert!((aware - 3600.0).abs() < 1e-6, "fifo-aware {aware}");
    assert!((fifo - 36000.0).abs() < 1e-6, "fifo {fifo}");
}

#[test]
fn the_same_inputs_give_the_same_report_byte_for_byte() {
    // A busier trace: arrivals spread, 2-GPU jobs, both job kinds.
    let mut trace = String::from("submit,gpus,duration,name\n");
    for i in 0..40u32 {
        let gpus = if i % 5 == 0 { 2 } else { 1 };
        let name = if i % 3 == 0 { "fast" } else { "flat" };
        trace += &format!("{},{gpus},{},{name}\n", i * 700, 1800 + (i * 7919) % 20000);
    }
    let w = parse_csv("w.csv", &trace).unwrap();
    let text = || {
        let mut out = String::new();
        let mut sums = Vec::new();
        for p in HeteroPolicy::ALL {
            let r = run(&trace, "v100:2x2,k80:3x2", p);
            let mut csv = Vec::new();
            report::write_jobs_csv_with(&mut csv, &r, &w, None).unwrap();
            out += &String::from_utf8(csv).unwrap();
            sums.push(Summary::of(&r, p.name(), "rounds", false));
        }
        out + &report::table(&sums)
    };
    let first = text();
    assert_eq!(first, text());
    assert!(first.contains("las-aware"));
}

#[test]
fn a_job_larger_than_every_type_is_refused_with_the_fix() {
    let mut w = parse_csv("w.csv", "submit,gpus,duration\n0,4,10\n").unwrap();
    w.source = "w.csv".into();
    let c = HeteroCluster::parse("v100:1x2,k80:1x3").unwrap();
    let e = simulate_hetero(&w, &c, &table(), &HeteroOptions::new(HeteroPolicy::Fifo))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "w.csv:2: job 0 asks for 4 GPUs of one type, but the largest type of the cluster \
         (k80) has 3; ask for fewer or add GPUs of a type"
    );
}
