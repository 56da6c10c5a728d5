//! The deadline policies' rules, as transcripts: a few jobs on a small cluster, what
//! each pass starts.

use std::panic::Location;

use super::*;
use crate::schedule::{PreemptMode, Scheduler};
use crate::{Cluster, Decision, JobId, JobSpec, PlacementStrategy, PolicyKind};

/// Job `id` of `gpus` GPUs submitted at `submit`, running `secs` (known to the
/// scheduler as its estimate), due at `deadline`.
fn job(id: u64, gpus: u32, submit: f64, secs: f64, deadline: Option<f64>) -> SchedJob {
    SchedJob::new(JobSpec {
        id: JobId(id),
        gpus,
        gpu_model: None,
        user: Default::default(),
        queue: Default::default(),
        account: Default::default(),
        priority: 0,
        submit,
        estimate: Some(secs),
        cpu_milli: 0,
        mem_mib: 0,
        generic: Default::default(),
        gang: None,
        nodes: Vec::new(),
        prefer: Vec::new(),
        deadline,
    })
}

/// One pass of `kind` (demotion as given) over `jobs` at `now` on one node of 4 GPUs of
/// which `busy` are taken by job 99 (best-effort, 1000 s): what it stops and starts.
fn starts(kind: PolicyKind, demote: bool, jobs: &mut [SchedJob], busy: u32, now: f64) -> String {
    let cluster = Cluster::uniform(1, 1, 4, "V100");
    let mut policy = PolicyConfig::new(kind);
    policy.deadline_demote = demote;
    let mut s = Scheduler::new(
        &cluster,
        policy,
        PlacementStrategy::Consolidated,
        PreemptMode::Repack,
    );
    let mut all = Vec::new();
    if busy > 0 {
        let mut holder = job(99, busy, 0.0, 1000.0, None);
        s.admit(&mut holder).expect("fits");
        all.push(holder);
        let d = s.pass(&mut all, 0.0).decisions;
        assert_eq!(d.len(), 1, "the holder starts");
    }
    for j in jobs.iter() {
        let mut j = j.clone();
        s.admit(&mut j).expect("fits");
        all.push(j);
    }
    let out = s.pass(&mut all, now);
    let names: Vec<String> = out
        .decisions
        .iter()
        .map(|d| match d {
            Decision::Start { job, .. } => format!("start {}", job.0),
            Decision::Preempt { job, .. } => format!("stop {}", job.0),
        })
        .collect();
    if names.is_empty() {
        "nothing".to_string()
    } else {
        names.join(", ")
    }
}

#[track_caller]
fn check(got: &str, expected: &str) {
    gpusched_expect::check(Location::caller(), "deadline", expected, got);
}

#[test]
fn edf_runs_the_earliest_deadline_first_and_best_effort_after() {
    // Three jobs want the node's 4 GPUs each: the one due first runs, whatever the
    // submit order; a best-effort job (no deadline) comes after every due one.
    let mut jobs = [
        job(1, 4, 0.0, 100.0, None),
        job(2, 4, 10.0, 100.0, Some(5000.0)),
        job(3, 4, 20.0, 100.0, Some(1000.0)),
    ];
    check(
        &starts(PolicyKind::Edf, true, &mut jobs, 0, 30.0),
        "start 3",
    );
    check(
        &starts(PolicyKind::EdfBackfill, true, &mut jobs, 0, 30.0),
        "start 3",
    );
    // With 2 GPUs taken by a best-effort job, `edf` stops it for job 3, due; the 1-GPU
    // best-effort job 1 finds no GPU left.
    let mut jobs = [
        job(1, 1, 0.0, 100.0, None),
        job(3, 4, 20.0, 100.0, Some(1000.0)),
    ];
    check(
        &starts(PolicyKind::Edf, true, &mut jobs, 2, 30.0),
        "start 3, stop 99",
    );
    // `edf-backfill` never stops a job: job 3 reserves the node for when job 99 ends,
    // and job 1 (100 s) starts on a free GPU since it ends before then.
    check(
        &starts(PolicyKind::EdfBackfill, true, &mut jobs, 2, 30.0),
        "start 1",
    );
}

#[test]
fn a_job_that_can_no_longer_make_its_deadline_goes_behind_those_that_can() {
    // Job 1 is due at 500 but needs 1000 s: hopeless from the start. Job 2 is due at 2000
    // and needs 100 s. Textbook EDF runs job 1 first (and job 2 may then be late too);
    // with demotion job 2 runs first, then job 1 among the best-effort jobs.
    let mut jobs = [
        job(1, 4, 0.0, 1000.0, Some(500.0)),
        job(2, 4, 0.0, 100.0, Some(2000.0)),
        job(3, 4, 0.0, 100.0, None),
    ];
    check(
        &starts(PolicyKind::Edf, false, &mut jobs, 0, 0.0),
        "start 1",
    );
    check(&starts(PolicyKind::Edf, true, &mut jobs, 0, 0.0), "start 2");
    // Among best-effort and demoted jobs, submit order: job 1 before job 3.
    let mut late = [
        job(3, 4, 0.0, 100.0, None),
        job(1, 4, 0.0, 1000.0, Some(500.0)),
    ];
    late[0].spec.submit = 5.0;
    check(
        &starts(PolicyKind::Edf, true, &mut late, 0, 10.0),
        "start 1",
    );
    // A job without an estimate is never judged hopeless.
    let mut unknown = job(4, 4, 0.0, 1.0, Some(10.0));
    unknown.spec.estimate = None;
    assert!(!hopeless(&unknown, 1e9));
    assert!(hopeless(&job(5, 1, 0.0, 100.0, Some(50.0)), 0.0));
    assert!(!hopeless(&job(6, 1, 0.0, 100.0, Some(100.0)), 0.0));
}

#[test]
fn the_answer_at_submission_says_met_with_slack_or_at_risk() {
    let text = |a: Answer| format!("{a:?}");
    check(
        &[
            text(answer(1000.0, Some(400.0))),
            text(answer(1000.0, Some(1000.0))),
            text(answer(1000.0, Some(1500.0))),
            text(answer(1000.0, None)),
        ]
        .join("\n"),
        "
        Met { finish: 400.0, slack: 600.0 }
        Met { finish: 1000.0, slack: 0.0 }
        AtRisk { finish: Some(1500.0), slack: Some(-500.0) }
        AtRisk { finish: None, slack: None }
        ",
    );
}

#[test]
fn moore_hodgson_drops_the_longest_when_the_due_work_cannot_be_done_in_time() {
    // 4 GPUs. Due at 100: job 1 (4 GPUs x 50 s = 200 GPU-s) and job 2 (4 x 80 = 320):
    // together 520 GPU-s by 100 s is more than 400: the longest, job 2, is dropped; job 3
    // (1 x 100, due 400) still fits.
    let mut jobs = vec![
        job(1, 4, 0.0, 50.0, Some(100.0)),
        job(2, 4, 0.0, 80.0, Some(100.0)),
        job(3, 1, 0.0, 100.0, Some(400.0)),
        job(4, 1, 0.0, 100.0, None),
    ];
    mark_demoted(&mut jobs, 0.0, 4.0);
    let demoted: Vec<u64> = jobs
        .iter()
        .filter(|j| j.demoted)
        .map(|j| j.spec.id.0)
        .collect();
    assert_eq!(demoted, vec![2]);
}

/// `job` whose run time is the predictor's belief: `bins` of `(lo, hi, weight)`.
fn believed_job(
    id: u64,
    gpus: u32,
    estimate: f64,
    deadline: f64,
    bins: Vec<(f64, f64, f64)>,
) -> SchedJob {
    let mut j = job(id, gpus, 0.0, estimate, Some(deadline));
    j.belief = Some(std::sync::Arc::new(
        crate::predict::Belief::from_bins(bins).expect("a belief"),
    ));
    j
}

/// The jobs' order under `edf` (demotion on) at `now`, with their keys.
fn order(jobs: &mut [SchedJob], now: f64) -> String {
    let cfg = PolicyConfig::new(PolicyKind::Edf);
    mark_demoted(jobs, now, 4.0);
    let mut keyed: Vec<((f64, f64), u64)> = jobs
        .iter()
        .map(|j| (key(&cfg, j, now), j.spec.id.0))
        .collect();
    keyed.sort_by(|a, b| a.0 .0.total_cmp(&b.0 .0).then(a.0 .1.total_cmp(&b.0 .1)));
    keyed
        .iter()
        .map(|((a, b), id)| {
            let class = if *a == f64::INFINITY {
                "best-effort".to_string()
            } else if *a == f64::MAX {
                "believed, no chance".to_string()
            } else if *a == f64::MAX / 2.0 {
                "believed".to_string()
            } else {
                format!("due {a}")
            };
            format!("{id}: {class}, {b}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_believed_job_is_ranked_by_its_chance_within_the_deadline_not_judged_on_a_point() {
    // Every point estimate here says 100 s. Job 1's belief: surely 1000 s, due at 500:
    // no chance (the point estimate alone would put it first, due soonest). Job 2: 50 s
    // or 5000 s, due at 3000: only the 50 s outcome counts, 50 s per half a chance =
    // 100 s, x 4 GPUs. Job 3: surely 200 s, due at 2000: 200 x 4. Job 4 has no belief
    // (a walltime): deadline order, first. Job 5: best-effort, last.
    let mut jobs = vec![
        believed_job(1, 4, 100.0, 500.0, vec![(1000.0, 1000.0, 1.0)]),
        believed_job(
            2,
            4,
            100.0,
            3000.0,
            vec![(50.0, 50.0, 1.0), (5000.0, 5000.0, 1.0)],
        ),
        believed_job(3, 4, 100.0, 2000.0, vec![(200.0, 200.0, 1.0)]),
        job(4, 4, 0.0, 100.0, Some(5000.0)),
        job(5, 4, 0.0, 100.0, None),
    ];
    check(
        &order(&mut jobs, 0.0),
        "
        4: due 5000, 0
        2: believed, 400
        3: believed, 800
        1: believed, no chance, 0
        5: best-effort, 0
        ",
    );
    assert!(hopeless(&jobs[0], 0.0), "no chance by its belief");
    assert!(!hopeless(&jobs[1], 0.0));
    // At 2900 s job 2 is due in 100 s and job 3 cannot end by its deadline any more;
    // job 1, having run 600 s, has 400 s to go by its belief and none to meet it.
    jobs[0].attained = 600.0;
    check(
        &order(&mut jobs, 2900.0),
        "
        4: due 5000, 0
        2: believed, 400
        3: believed, no chance, 0
        1: believed, no chance, 2400
        5: best-effort, 0
        ",
    );
    // A pass: `edf` starts job 2; textbook EDF (no demotion) job 1, due soonest.
    let mut three = [jobs[0].clone(), jobs[1].clone(), jobs[2].clone()];
    for j in &mut three {
        j.attained = 0.0;
    }
    check(
        &starts(PolicyKind::Edf, true, &mut three, 0, 0.0),
        "start 2",
    );
    check(
        &starts(PolicyKind::Edf, false, &mut three, 0, 0.0),
        "start 1",
    );
}

#[test]
fn moore_hodgson_counts_no_believed_job() {
    // Job 1 (4 x 80 s by its point estimate, due at 100) and job 2 (4 x 50 s, due at 100)
    // cannot both be done: on point estimates the longer, job 1, is dropped. Believed,
    // job 1 is neither counted nor dropped, and job 2 fits alone.
    let mut jobs = vec![
        believed_job(
            1,
            4,
            80.0,
            100.0,
            vec![(10.0, 10.0, 1.0), (80.0, 80.0, 1.0)],
        ),
        job(2, 4, 0.0, 50.0, Some(100.0)),
    ];
    mark_demoted(&mut jobs, 0.0, 4.0);
    assert!(!jobs[0].demoted && !jobs[1].demoted);
    jobs[0].belief = None;
    mark_demoted(&mut jobs, 0.0, 4.0);
    assert!(jobs[0].demoted && !jobs[1].demoted);
}
