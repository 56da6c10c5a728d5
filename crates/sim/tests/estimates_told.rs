//! Policies act on what they are told of run times (`--estimates`), never on the truth
//! unless told it (issue 31): `backfill` lets no job without an estimate past a
//! reservation, and `srtf`/`srsf` rank a trace's own estimates, not the true remaining
//! time, as `sjf` does; and each policy's predictor accuracy is reported as its own.

mod common;

use gpusched_core::{Cluster, PolicyConfig, PolicyKind};
use gpusched_sim::{simulate, trace, Estimates, SimOptions, SimRun, Summary};

/// Simulates the native CSV `csv` on `shape` under `kind` with `estimates`.
fn run(csv: &str, shape: &str, kind: PolicyKind, estimates: Estimates) -> SimRun {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toy.csv");
    std::fs::write(&path, csv).unwrap();
    let w = trace::read(&path, None).unwrap();
    let cluster = Cluster::parse_shape(shape, "V100").unwrap();
    let mut opts = SimOptions::new(PolicyConfig::new(kind));
    opts.estimates = estimates;
    simulate(&w, &cluster, &opts, &mut |_, _| {}).unwrap()
}

/// (start, end) of job `id`.
fn span(run: &SimRun, id: u64) -> (f64, f64) {
    let j = run.jobs.iter().find(|j| j.id.0 == id).expect("the job ran");
    (j.start, j.end)
}

/// Job 1 holds one of two GPUs until 100 s; job 2, the head, needs both; job 3 would hold
/// the other GPU for 1,000 s. Not knowing how long job 3 runs, backfill must not start it
/// before the head: the head starts at 100 s (it started at 1,002 s when `now + inf <=
/// inf` let job 3 pass a reservation whose shadow time was unknown).
#[test]
fn backfill_without_estimates_lets_no_job_past_the_head() {
    let csv = "id,submit,gpus,duration\n1,0,1,100\n2,1,2,10\n3,2,1,1000\n";
    for mode in [Estimates::None, Estimates::Walltime] {
        let r = run(csv, "1x2", PolicyKind::Backfill, mode.clone());
        assert_eq!(span(&r, 2), (100.0, 110.0), "{mode:?}: the head job");
        assert_eq!(
            span(&r, 3),
            (110.0, 1110.0),
            "{mode:?}: the unknown job waits"
        );
    }
    // With run times known it is the same here (job 3 does not end by the shadow, 100 s),
    // and a short job that ends by the shadow still backfills.
    let r = run(csv, "1x2", PolicyKind::Backfill, Estimates::Oracle);
    assert_eq!(span(&r, 2), (100.0, 110.0));
    let short = "id,submit,gpus,duration\n1,0,1,100\n2,1,2,10\n3,2,1,50\n";
    let r = run(short, "1x2", PolicyKind::Backfill, Estimates::Oracle);
    assert_eq!(
        span(&r, 3),
        (2.0, 52.0),
        "it ends by the shadow: backfilled"
    );
    assert_eq!(span(&r, 2), (100.0, 110.0));
}

/// A job without an estimate waits while the head waits, unless it fits in GPUs the head
/// will not need at its shadow time ("extra" GPUs).
#[test]
fn backfill_without_an_estimate_uses_only_the_extra_gpus() {
    // Job 1 (1 GPU, 100 s known) and job 2 (2 GPUs, unknown) run on 4 GPUs; the head, job
    // 3, needs 3: no known end frees enough, the shadow is unknown, and job 4 (unknown)
    // must not take the last GPU: it starts with the head when job 2 ends.
    // (Walltimes: under `trace` a job without an estimate is told its true run time.)
    let csv =
        "id,submit,gpus,duration,walltime\n1,0,1,100,100\n2,0,2,500,\n3,1,3,10,10\n4,2,1,1000,\n";
    let r = run(csv, "1x4", PolicyKind::Backfill, Estimates::Walltime);
    assert_eq!(span(&r, 3), (500.0, 510.0), "the head waits for job 2");
    assert_eq!(
        span(&r, 4),
        (500.0, 1500.0),
        "job 4, unknown, never passed it"
    );
    // Job 1 holds 3 of 5 GPUs until 100 s: the head (2 GPUs) then has 4 free, 2 of them
    // extra, so job 4 takes the free GPU at once without delaying the head.
    let csv =
        "id,submit,gpus,duration,walltime\n1,0,3,100,100\n2,0,1,500,\n3,1,2,10,10\n4,2,1,1000,\n";
    let r = run(csv, "1x5", PolicyKind::Backfill, Estimates::Walltime);
    assert_eq!(span(&r, 4), (2.0, 1002.0), "in the extra GPUs");
    assert_eq!(span(&r, 3), (100.0, 110.0), "the head on time");
}

/// Two jobs on one GPU: job 1 runs 100 s but its trace estimate says 10 s; job 2 runs
/// 10 s, estimated 100 s. Told the trace's estimates, srtf and srsf run job 1 first, as
/// sjf does; only the oracle runs job 2 first (on main they read the true remaining time
/// under `trace` too).
#[test]
fn srtf_and_srsf_rank_the_trace_estimates_not_the_truth() {
    let csv = "id,submit,gpus,duration,estimate\n1,0,1,100,10\n2,0,1,10,100\n";
    for kind in [PolicyKind::Sjf, PolicyKind::Srtf, PolicyKind::Srsf] {
        let told = run(csv, "1x1", kind, Estimates::Trace);
        assert_eq!(span(&told, 1), (0.0, 100.0), "{kind:?} under trace");
        assert_eq!(span(&told, 2), (100.0, 110.0), "{kind:?} under trace");
        let oracle = run(csv, "1x1", kind, Estimates::Oracle);
        assert_eq!(span(&oracle, 2), (0.0, 10.0), "{kind:?} under oracle");
        assert_eq!(span(&oracle, 1), (10.0, 110.0), "{kind:?} under oracle");
    }
}

/// A job of a trace with an estimate column that has none of its own is told its true
/// run time (the report's "the true run time where it has none"), so srtf may read it:
/// here job 2 (no estimate, 10 s) runs before job 1 (estimate 50 s, runs 20 s).
#[test]
fn a_job_without_its_own_estimate_is_told_the_truth_under_trace() {
    let csv = "id,submit,gpus,duration,estimate\n1,0,1,20,50\n2,0,1,10,\n";
    let r = run(csv, "1x1", PolicyKind::Srtf, Estimates::Trace);
    assert_eq!(span(&r, 2), (0.0, 10.0));
    assert_eq!(span(&r, 1), (10.0, 30.0));
}

/// Each policy's run has its own predictor, learning from the jobs in the order they end
/// in that run, so the accuracy line under the table is per policy and names it (one
/// unnamed line, the first policy's, was quoted for another: issue 31).
#[test]
fn each_policy_reports_its_own_predictor_accuracy_by_name() {
    let w = trace::read(&common::shared_trace("muri/trace3.csv"), None).unwrap();
    let cluster = Cluster::parse_shape("8x8", "V100").unwrap();
    let summaries: Vec<Summary> = [PolicyKind::Fifo, PolicyKind::Sjf, PolicyKind::Blend]
        .into_iter()
        .map(|kind| {
            let mut opts = SimOptions::new(PolicyConfig::new(kind));
            opts.estimates = Estimates::Predicted;
            let run = simulate(&w, &cluster, &opts, &mut |_, _| {}).unwrap();
            Summary::of(&run, kind.name(), "consolidated", false)
        })
        .collect();
    let p90 = |s: &Summary| s.prediction.as_ref().unwrap().p90_rel_error;
    // The runs' predictors did differ (else the test could not tell them apart).
    assert_ne!(p90(&summaries[0]), p90(&summaries[2]));
    assert_ne!(p90(&summaries[1]), p90(&summaries[2]));
    let text = gpusched_sim::report::estimates(&summaries);
    for s in &summaries {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("predictor ({}):", s.policy)))
            .unwrap_or_else(|| panic!("no line for {} in\n{text}", s.policy));
        assert!(
            line.contains(&format!("p90 {:.0}%", p90(s) * 100.0)),
            "{line}"
        );
    }
}
