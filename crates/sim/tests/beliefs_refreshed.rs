//! A batch submitted at once (Muri's `_pr` traces): every job is admitted before any has
//! ended, so no job had a prediction or a belief and `blend` was least attained service
//! throughout. Waiting jobs' beliefs are now refreshed as the predictor learns (issue 37).

use gpusched_core::{Cluster, PolicyConfig, PolicyKind};
use gpusched_sim::{simulate, trace, Estimates, SimOptions, SimRun};

/// 40 one-GPU jobs submitted at 0 on one GPU, alternately `long` (1,000 s) and `short`
/// (10 s), under `blend` with `estimates`.
fn batch(estimates: Estimates) -> SimRun {
    batch_under(PolicyKind::Blend, estimates)
}

/// The same batch under `kind`; every job due at 3 times its run time under `edf`.
fn batch_under(kind: PolicyKind, estimates: Estimates) -> SimRun {
    let mut csv = String::from("id,submit,gpus,duration,name\n");
    for id in 1..=40u32 {
        let (name, secs) = if id % 2 == 1 {
            ("long", 1000)
        } else {
            ("short", 10)
        };
        csv += &format!("{id},0,1,{secs},{name}\n");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("batch.csv");
    std::fs::write(&path, csv).unwrap();
    let mut w = trace::read(&path, None).unwrap();
    if kind.deadlines() {
        let spec = gpusched_sim::deadlines::DeadlineSpec::parse("3", 1.0, 1).unwrap();
        gpusched_sim::deadlines::assign(&mut w, &spec);
    }
    let cluster = Cluster::parse_shape("1x1", "V100").unwrap();
    let mut opts = SimOptions::new(PolicyConfig::new(kind));
    opts.estimates = estimates;
    simulate(&w, &cluster, &opts, &mut |_, _| {}).unwrap()
}

fn end(run: &SimRun, id: u64) -> f64 {
    run.jobs.iter().find(|j| j.id.0 == id).expect("ran").end
}

#[test]
fn a_batch_admitted_before_any_job_ended_gets_predictions_while_it_waits() {
    let run = batch(Estimates::Predicted);
    let p = run.prediction.as_ref().expect("predicted mode reports");
    // The ten first to end came without any prediction; every job after was predicted
    // while it waited.
    assert_eq!((p.predicted, p.unpredicted), (30, 10), "{p:?}");
    // And blend used it: once ten jobs had ended, the short jobs left went before the
    // long ones admitted ahead of them.
    let last_short = (12..=40)
        .step_by(2)
        .map(|id| end(&run, id))
        .fold(0.0, f64::max);
    let first_long_after = (11..=39)
        .step_by(2)
        .map(|id| end(&run, id))
        .fold(f64::INFINITY, f64::min);
    assert!(
        last_short < first_long_after,
        "short jobs end by {last_short}, the long ones from {first_long_after}"
    );
    // Without estimates the batch runs in admission order (nothing to tell jobs apart).
    let blind = batch(Estimates::None);
    assert!(end(&blind, 40) > end(&blind, 39));
    let avg = |r: &SimRun| r.jobs.iter().map(|j| j.end - j.submit).sum::<f64>() / 40.0;
    assert!(avg(&run) < avg(&blind), "{} vs {}", avg(&run), avg(&blind));
}

/// `edf` reads beliefs too (a deadline job without one keeps the deadline order ahead of
/// every job ranked by its belief): its waiting jobs get them as the predictor learns,
/// as `blend`'s do (on Muri's trace1 this took `edf` from 21.2 % of deadlines met to
/// 27.8 %; docs/scheduling-results.md).
#[test]
fn edf_refreshes_the_beliefs_of_a_batch_admitted_before_any_job_ended() {
    let run = batch_under(PolicyKind::Edf, Estimates::Predicted);
    let p = run.prediction.as_ref().expect("predicted mode reports");
    assert_eq!((p.predicted, p.unpredicted), (30, 10), "{p:?}");
}
