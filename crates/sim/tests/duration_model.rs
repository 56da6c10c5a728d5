//! The duration models: the locality penalty and the Muri per-event pause.

use gpusched_core::{Cluster, PlacementStrategy, PolicyConfig, PolicyKind};
use gpusched_sim::overhead::PassOverhead;
use gpusched_sim::{simulate, trace, SimOptions};

fn ends(csv: &str, shape: &str, opts: &SimOptions) -> Vec<(u64, f64)> {
    let w = trace::parse("t.csv", csv, None).unwrap();
    let c = Cluster::parse_shape(shape, "V100").unwrap();
    let r = simulate(&w, &c, opts, &mut |_, _| {}).unwrap();
    let mut e: Vec<(u64, f64)> = r.jobs.iter().map(|j| (j.id.get(), j.end)).collect();
    e.sort_by_key(|x| x.0);
    e
}

#[test]
fn a_job_spread_over_more_nodes_than_needed_runs_slower() {
    let csv = "id,submit,gpus,duration\n0,0,2,100\n";
    let mut opts = SimOptions::new(PolicyConfig::new(PolicyKind::Fifo));
    opts.locality_penalty = 2.0;
    assert_eq!(
        ends(csv, "2x4", &opts),
        [(0, 100.0)],
        "consolidated: one node, full speed"
    );
    opts.placement = PlacementStrategy::Spread;
    assert_eq!(
        ends(csv, "2x4", &opts),
        [(0, 200.0)],
        "spread over 2 nodes: half speed"
    );
    opts.locality_penalty = 1.0;
    assert_eq!(ends(csv, "2x4", &opts), [(0, 100.0)], "penalty off");
}

#[test]
fn the_muri_pause_is_charged_at_each_intervening_event() {
    // Job 0 runs alone from 0; job 1 arrives at 50, an event that costs job 0 a 10 s
    // pause (unknown model: the peer's default), so job 0 ends at 110, not 100.
    let csv = "id,submit,gpus,duration\n0,0,1,100\n1,50,1,20\n";
    let mut opts = SimOptions::new(PolicyConfig::new(PolicyKind::Srtf));
    assert_eq!(ends(csv, "1x2", &opts), [(0, 100.0), (1, 70.0)]);
    opts.overhead = PassOverhead::Muri;
    // Job 1 starts at 50 and ends at 70 (no event in between); the event at 70 costs job 0
    // another pause: 100 + 10 + 10.
    assert_eq!(ends(csv, "1x2", &opts), [(0, 120.0), (1, 70.0)]);
}
