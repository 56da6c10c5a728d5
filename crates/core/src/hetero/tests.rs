//! The heterogeneous policies' rules, as transcripts: a small cluster of GPU types and a
//! few jobs in, each job's type (or its shares) out.

use std::panic::Location;

use super::*;

fn types(spec: &[(&str, u32)]) -> GpuTypes {
    GpuTypes {
        names: spec.iter().map(|s| s.0.to_string()).collect(),
        gpus: spec.iter().map(|s| s.1).collect(),
    }
}

/// Job `id` of `gpus` GPUs with `speeds` per type.
fn job(id: u64, gpus: u32, speeds: &[f64]) -> HeteroJob {
    HeteroJob {
        id: JobId(id),
        gpus,
        speeds: speeds.to_vec(),
        weight: 1.0,
        attained: 0.0,
    }
}

fn plan_text(jobs: &[HeteroJob], t: &GpuTypes, plan: &RoundPlan) -> String {
    jobs.iter()
        .zip(plan)
        .map(|(j, p)| match p {
            Some(k) => format!("job {}: {}\n", j.id.0, t.names[*k]),
            None => format!("job {}: waits\n", j.id.0),
        })
        .collect()
}

#[track_caller]
fn check(got: &str, expected: &str) {
    gpusched_expect::check(Location::caller(), "hetero", expected, got);
}

#[test]
fn fifo_aware_puts_each_job_on_its_fastest_free_type_in_arrival_order() {
    let t = types(&[("V100", 1), ("P100", 1), ("K80", 2)]);
    let jobs = [
        job(0, 1, &[1.0, 0.9, 0.3]),
        job(1, 1, &[1.0, 0.5, 0.2]),
        job(2, 2, &[1.0, 0.6, 0.4]),
        job(3, 1, &[1.0, 0.6, 0.4]),
    ];
    let none = vec![None; 4];
    // Job 0 came first: it takes the V100 although job 1 would gain more there; job 2
    // (2 GPUs) takes both K80s; job 3 finds nothing free and waits.
    check(
        &plan_text(&jobs, &t, &fifo::choose(&jobs, &none, &t, true)),
        "
        job 0: V100
        job 1: P100
        job 2: K80
        job 3: waits
        ",
    );
    // Agnostic: the type with the most free GPUs, first in the cluster's order on ties;
    // job 2 then finds no type with 2 free and stops the line (strict FIFO).
    check(
        &plan_text(&jobs, &t, &fifo::choose(&jobs, &none, &t, false)),
        "
        job 0: K80
        job 1: V100
        job 2: waits
        job 3: waits
        ",
    );
    // Running jobs are not stopped (FIFO does not preempt); job 1 keeps the V100.
    let running = vec![None, Some(0), None, None];
    check(
        &plan_text(&jobs, &t, &fifo::choose(&jobs, &running, &t, true)),
        "
        job 0: P100
        job 1: V100
        job 2: K80
        job 3: waits
        ",
    );
}

#[test]
fn fifo_aware_moves_a_running_job_up_to_a_faster_type_the_starts_left_free() {
    let t = types(&[("V100", 2), ("P100", 1), ("K80", 2)]);
    let jobs = [
        job(0, 1, &[1.0, 0.9, 0.3]),
        job(1, 1, &[1.0, 0.5, 0.2]),
        job(2, 1, &[1.0, 0.6, 0.4]),
    ];
    // Jobs 0 and 1 run on K80s (the V100s were busy when they started); the V100s and
    // the P100 are free now. Job 2 starts first, on a V100; then job 0 moves up to the
    // other V100, and job 1, next in line, to the P100.
    let running = vec![Some(2), Some(2), None];
    check(
        &plan_text(&jobs, &t, &fifo::choose(&jobs, &running, &t, true)),
        "
        job 0: V100
        job 1: P100
        job 2: V100
        ",
    );
    // Agnostic FIFO does not know speeds: nothing moves.
    check(
        &plan_text(&jobs, &t, &fifo::choose(&jobs, &running, &t, false)),
        "
        job 0: K80
        job 1: K80
        job 2: V100
        ",
    );
}

#[test]
fn las_runs_the_least_served_first_and_gives_fast_gpus_to_who_gains_most() {
    let t = types(&[("V100", 1), ("K80", 2)]);
    let mut jobs = [
        job(0, 1, &[1.0, 0.9]),
        job(1, 1, &[1.0, 0.2]),
        job(2, 1, &[1.0, 0.5]),
        job(3, 1, &[1.0, 0.5]),
    ];
    jobs[0].attained = 100.0;
    jobs[1].attained = 50.0;
    jobs[2].attained = 0.0;
    jobs[3].attained = 400.0;
    // Jobs 2, 1, 0 have attained least; job 1 loses most off the V100 (0.8), so it gets
    // it; job 3 waits.
    check(
        &plan_text(&jobs, &t, &las::choose(&jobs, &t, true)),
        "
        job 0: K80
        job 1: V100
        job 2: K80
        job 3: waits
        ",
    );
    // Agnostic: in LAS order, each on the type with the most free GPUs.
    check(
        &plan_text(&jobs, &t, &las::choose(&jobs, &t, false)),
        "
        job 0: K80
        job 1: V100
        job 2: K80
        job 3: waits
        ",
    );
}

#[test]
fn las_passes_over_a_job_no_type_can_hold_and_fills_with_the_next() {
    let t = types(&[("V100", 2), ("K80", 2)]);
    let jobs = [
        job(0, 1, &[1.0, 0.5]),
        job(1, 3, &[1.0, 0.5]),
        job(2, 1, &[1.0, 0.5]),
        job(3, 2, &[1.0, 0.5]),
    ];
    check(
        &plan_text(&jobs, &t, &las::choose(&jobs, &t, true)),
        "
        job 0: V100
        job 1: waits
        job 2: V100
        job 3: K80
        ",
    );
}

/// The allocation's rows, two decimals.
fn shares(jobs: &[HeteroJob], t: &GpuTypes, rows: &[Vec<f64>]) -> String {
    jobs.iter()
        .zip(rows)
        .map(|(j, r)| {
            let cells: Vec<String> = t
                .names
                .iter()
                .zip(r)
                .map(|(n, x)| format!("{n} {x:.2}"))
                .collect();
            format!("job {}: {}\n", j.id.0, cells.join(", "))
        })
        .collect()
}

fn jobs2() -> [HeteroJob; 2] {
    [job(0, 1, &[1.0, 0.8]), job(1, 1, &[1.0, 0.1])]
}

#[test]
fn max_min_fairness_shares_time_agnostic_and_work_aware() {
    let t3 = types(&[("V100", 1), ("K80", 2)]);
    // Job 0 barely slows on a K80, job 1 runs 10x slower there. Normalised by what an
    // equal share of each type would give it, job 0 can get at most 1.15 (the V100 all
    // the time) and job 1 at most 2.5; max-min fairness equalises them at 1.07, job 1
    // taking most of the V100 and job 0 most of a K80 (checked by hand).
    check(
        &shares(&jobs2(), &t3, &maxmin::allocation(&jobs2(), &t3, true)),
        "
        job 0: V100 0.64, K80 0.36
        job 1: V100 0.36, K80 0.64
        ",
    );
    let t = types(&[("V100", 1), ("K80", 1)]);
    // Three jobs on two GPUs, agnostic: each gets 2/3 of a GPU's time in all.
    let three = [
        job(0, 1, &[1.0, 0.8]),
        job(1, 1, &[1.0, 0.1]),
        job(2, 1, &[1.0, 0.5]),
    ];
    let rows = maxmin::allocation(&three, &t, false);
    for r in &rows {
        let sum: f64 = r.iter().sum();
        assert!(
            (sum - 2.0 / 3.0).abs() < 1e-6,
            "each row sums to 2/3: {rows:?}"
        );
    }
    // A job that cannot run on a type gets no share there.
    let only_v100 = [job(0, 1, &[1.0, 0.0]), job(1, 1, &[1.0, 1.0])];
    let rows = maxmin::allocation(&only_v100, &t, true);
    assert_eq!(rows[0][1], 0.0);
}

#[test]
fn gavel_rounds_follow_the_shares_and_a_new_job_waits_for_the_next_recomputation() {
    let t = types(&[("V100", 1), ("K80", 1)]);
    let mut jobs = vec![job(0, 1, &[1.0, 0.8]), job(1, 1, &[1.0, 0.1])];
    let mut r = rounds::Rounds::new(2, 360.0, 1920.0);
    for j in &jobs {
        r.add(j.id);
    }
    let mut log = String::new();
    let mut now = 0.0;
    for round in 0..8 {
        let plan = r.plan(&jobs, &t, now, true, |js| maxmin::allocation(js, &t, true));
        log += &format!("round {round} at {now}:\n{}", plan_text(&jobs, &t, &plan));
        for (j, p) in jobs.iter().zip(&plan) {
            if let Some(k) = p {
                r.ran(j.id, *k, 360.0);
            }
        }
        now += 360.0;
        if round == 0 {
            // A third job arrives after the first round: the last recomputation was at
            // time 0, which Gavel's rule exempts, so it gets a row at once.
            jobs.push(job(2, 1, &[1.0, 0.5]));
            r.add(JobId(2));
        }
        if round == 1 {
            // A fourth arrives 360 s after the recomputation at 360: it has no row, so it
            // does not run, until the first round 1920 s after that one (2520); then it
            // waits on its priority (three jobs, two GPUs).
            jobs.push(job(3, 1, &[1.0, 0.5]));
            r.add(JobId(3));
        }
    }
    check(
        &log,
        "
        round 0 at 0:
        job 0: K80
        job 1: V100
        round 1 at 360:
        job 0: K80
        job 1: waits
        job 2: V100
        round 2 at 720:
        job 0: K80
        job 1: V100
        job 2: waits
        job 3: waits
        round 3 at 1080:
        job 0: K80
        job 1: waits
        job 2: V100
        job 3: waits
        round 4 at 1440:
        job 0: K80
        job 1: V100
        job 2: waits
        job 3: waits
        round 5 at 1800:
        job 0: K80
        job 1: waits
        job 2: V100
        job 3: waits
        round 6 at 2160:
        job 0: waits
        job 1: V100
        job 2: K80
        job 3: waits
        round 7 at 2520:
        job 0: K80
        job 1: waits
        job 2: V100
        job 3: waits
        ",
    );
}
