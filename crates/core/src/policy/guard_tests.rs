//! The starvation guard of the service- and size-ranked policies ([`super::guard`]):
//! transcripts of a one-GPU cluster where a stream of newcomers keeps a long job waiting
//! under least attained service, with the guard off and on, and the rule's promises
//! (the due time, the rank after a promotion, nothing changed with the guard off).

use std::panic::Location;

use super::guard;
use crate::policy::order::key;
use crate::schedule::{PreemptMode, SchedJob, Scheduler};
use crate::{Cluster, Decision, JobId, JobSpec, PlacementStrategy, PolicyConfig, PolicyKind};
use crate::{QueueId, UserId};

fn spec(id: u64, gpus: u32, submit: f64, estimate: Option<f64>) -> JobSpec {
    JobSpec {
        id: JobId(id),
        gpus,
        gpu_model: None,
        user: UserId(0),
        queue: QueueId(0),
        account: Default::default(),
        priority: 0,
        submit,
        estimate,
        cpu_milli: 0,
        mem_mib: 0,
        generic: Default::default(),
        gang: None,
        nodes: Vec::new(),
        prefer: Vec::new(),
        deadline: None,
    }
}

/// A one-GPU cluster under `policy`, passes every 100 s up to `until`: jobs are
/// `(id, submit, run time)`, known to nobody but this driver (the policy has no estimate,
/// so `blend` is least attained service). The transcript has one line per pass that
/// started or stopped something, and each job's completion time.
fn transcript(policy: PolicyConfig, arrivals: &[(u64, f64, f64)], until: f64) -> String {
    let cluster = Cluster::uniform(1, 1, 1, "V100");
    let mut s = Scheduler::new(
        &cluster,
        policy,
        PlacementStrategy::Consolidated,
        PreemptMode::Repack,
    );
    assert!(s.keep_ordered_queue());
    let mut jobs: Vec<(SchedJob, f64)> = Vec::new();
    let mut out = String::new();
    let mut done = Vec::new();
    let mut now = 0.0;
    while now <= until {
        for (job, _) in jobs.iter_mut() {
            job.account(now);
        }
        let mut k = 0;
        while k < jobs.len() {
            if jobs[k].0.attained >= jobs[k].1 {
                let (mut job, _) = jobs.remove(k);
                s.finish(&mut job);
                done.push(format!("{}@{now}", job.spec.id.0));
            } else {
                k += 1;
            }
        }
        for &(id, submit, run) in arrivals {
            if submit == now {
                let mut job = SchedJob::new(spec(id, 1, submit, None));
                s.admit(&mut job).expect("fits");
                jobs.push((job, run));
            }
        }
        let mut list: Vec<SchedJob> = jobs.iter().map(|(j, _)| j.clone()).collect();
        let decisions = s.pass(&mut list, now).decisions;
        for ((job, _), new) in jobs.iter_mut().zip(list) {
            *job = new;
        }
        let words: Vec<String> = decisions
            .iter()
            .map(|d| match d {
                Decision::Start { job, .. } => format!("start {}", job.0),
                Decision::Preempt { job, .. } => format!("stop {}", job.0),
            })
            .collect();
        if !words.is_empty() {
            out += &format!("t={now}: {}\n", words.join(", "));
        }
        now += 100.0;
    }
    out += &format!("ended: {}\n", done.join(" "));
    out
}

/// Job 1 needs 1000 s; from t=300 a job of 200 s arrives every 100 s, more than the one
/// GPU can serve, so least attained service always has a newcomer ahead of job 1.
fn stream() -> Vec<(u64, f64, f64)> {
    let mut jobs = vec![(1, 0.0, 1000.0)];
    for k in 0..30u64 {
        jobs.push((10 + k, 300.0 + 100.0 * k as f64, 200.0));
    }
    jobs
}

#[track_caller]
fn run(policy: PolicyConfig, arrivals: &[(u64, f64, f64)], until: f64, expected: &str) {
    let got = transcript(policy, arrivals, until);
    gpusched_expect::check(Location::caller(), "starvation guard", expected, &got);
}

fn blend(k: f64) -> PolicyConfig {
    let mut p = PolicyConfig::new(PolicyKind::Blend);
    p.promote_after = k;
    p
}

#[test]
fn without_the_guard_least_attained_service_starves_the_long_job() {
    // Job 1 runs until the stream starts, then every newcomer goes ahead of it for as
    // long as they come and until the backlog is gone: it waits from 300 to 6300.
    run(blend(0.0), &stream(), 9000.0, "
            t=0: start 1
            t=300: start 10, stop 1
            t=400: start 11, stop 10
            t=500: start 12, stop 11
            t=600: start 13, stop 12
            t=700: start 14, stop 13
            t=800: start 15, stop 14
            t=900: start 16, stop 15
            t=1000: start 17, stop 16
            t=1100: start 18, stop 17
            t=1200: start 19, stop 18
            t=1300: start 20, stop 19
            t=1400: start 21, stop 20
            t=1500: start 22, stop 21
            t=1600: start 23, stop 22
            t=1700: start 24, stop 23
            t=1800: start 25, stop 24
            t=1900: start 26, stop 25
            t=2000: start 27, stop 26
            t=2100: start 28, stop 27
            t=2200: start 29, stop 28
            t=2300: start 30, stop 29
            t=2400: start 31, stop 30
            t=2500: start 32, stop 31
            t=2600: start 33, stop 32
            t=2700: start 34, stop 33
            t=2800: start 35, stop 34
            t=2900: start 36, stop 35
            t=3000: start 37, stop 36
            t=3100: start 38, stop 37
            t=3200: start 39, stop 38
            t=3400: start 38
            t=3500: start 37
            t=3600: start 36
            t=3700: start 35
            t=3800: start 34
            t=3900: start 33
            t=4000: start 32
            t=4100: start 31
            t=4200: start 30
            t=4300: start 29
            t=4400: start 28
            t=4500: start 27
            t=4600: start 26
            t=4700: start 25
            t=4800: start 24
            t=4900: start 23
            t=5000: start 22
            t=5100: start 21
            t=5200: start 20
            t=5300: start 19
            t=5400: start 18
            t=5500: start 17
            t=5600: start 16
            t=5700: start 15
            t=5800: start 14
            t=5900: start 13
            t=6000: start 12
            t=6100: start 11
            t=6200: start 10
            t=6300: start 1
            ended: 39@3400 38@3500 37@3600 36@3700 35@3800 34@3900 33@4000 32@4100 31@4200 30@4300 29@4400 28@4500 27@4600 26@4700 25@4800 24@4900 23@5000 22@5100 21@5200 20@5300 19@5400 18@5500 17@5600 16@5700 15@5800 14@5900 13@6000 12@6100 11@6200 10@6300 1@7000
        ");
}

#[test]
fn with_the_guard_the_long_job_is_promoted_after_its_bound() {
    // At K = 2 job 1, stopped at t=300 with 300 s of service, is due at 900: promoted
    // then, it ranks by its service since (0), behind the newcomers promoted before it
    // (10, 11, 12: ties keep their order), and runs again at 1200, not 6300; each
    // later wait of twice its new service promotes it again. The newcomers are promoted
    // by the same rule. (On one GPU it still ends last: the work is the same.)
    run(blend(2.0), &stream(), 9000.0, "
            t=0: start 1
            t=300: start 10, stop 1
            t=400: start 11, stop 10
            t=500: start 12, stop 11
            t=600: start 10, stop 12
            t=700: start 13
            t=800: start 11, stop 13
            t=900: start 14
            t=1000: start 12, stop 14
            t=1100: start 15
            t=1200: start 1, stop 15
            t=1300: start 16, stop 1
            t=1400: start 13, stop 16
            t=1500: start 17
            t=1600: start 18, stop 17
            t=1700: start 14, stop 18
            t=1800: start 19
            t=1900: start 20, stop 19
            t=2000: start 15, stop 20
            t=2100: start 21
            t=2200: start 1, stop 21
            t=2300: start 22, stop 1
            t=2400: start 16, stop 22
            t=2500: start 23
            t=2600: start 24, stop 23
            t=2700: start 17, stop 24
            t=2800: start 25
            t=2900: start 18, stop 25
            t=3000: start 26
            t=3100: start 27, stop 26
            t=3200: start 19, stop 27
            t=3300: start 28
            t=3400: start 20, stop 28
            t=3500: start 29
            t=3600: start 30, stop 29
            t=3700: start 21, stop 30
            t=3800: start 31
            t=3900: start 1, stop 31
            t=4000: start 32, stop 1
            t=4100: start 22, stop 32
            t=4200: start 33
            t=4300: start 34, stop 33
            t=4400: start 23, stop 34
            t=4500: start 35
            t=4600: start 24, stop 35
            t=4700: start 36
            t=4800: start 37, stop 36
            t=4900: start 25, stop 37
            t=5000: start 38
            t=5100: start 39, stop 38
            t=5200: start 26, stop 39
            t=5300: start 27
            t=5400: start 28
            t=5500: start 29
            t=5600: start 30
            t=5700: start 31
            t=5800: start 1
            t=5900: start 32, stop 1
            t=6000: start 33
            t=6100: start 34
            t=6200: start 35
            t=6300: start 36
            t=6400: start 37
            t=6500: start 38
            t=6600: start 39
            t=6700: start 1
            ended: 10@700 11@900 12@1100 13@1500 14@1800 15@2100 16@2500 17@2800 18@3000 19@3300 20@3500 21@3800 22@4200 23@4500 24@4700 25@5000 26@5300 27@5400 28@5500 29@5600 30@5700 31@5800 32@6000 33@6100 34@6200 35@6300 36@6400 37@6500 38@6600 39@6700 1@7000
        ");
}

#[test]
fn a_larger_bound_promotes_later() {
    // Job 1 is due at 300 + 5 x 300 = 1800.
    run(blend(5.0), &stream(), 9000.0, "
            t=0: start 1
            t=300: start 10, stop 1
            t=400: start 11, stop 10
            t=500: start 12, stop 11
            t=600: start 13, stop 12
            t=700: start 14, stop 13
            t=800: start 15, stop 14
            t=900: start 10, stop 15
            t=1000: start 16
            t=1100: start 11, stop 16
            t=1200: start 17
            t=1300: start 12, stop 17
            t=1400: start 18
            t=1500: start 13, stop 18
            t=1600: start 19
            t=1700: start 14, stop 19
            t=1800: start 20
            t=1900: start 15, stop 20
            t=2000: start 21
            t=2100: start 22, stop 21
            t=2200: start 16, stop 22
            t=2300: start 23
            t=2400: start 24, stop 23
            t=2500: start 17, stop 24
            t=2600: start 1
            t=2700: start 25, stop 1
            t=2800: start 26, stop 25
            t=2900: start 18, stop 26
            t=3000: start 27
            t=3100: start 28, stop 27
            t=3200: start 19, stop 28
            t=3300: start 29
            t=3400: start 30, stop 29
            t=3500: start 20, stop 30
            t=3600: start 31
            t=3700: start 32, stop 31
            t=3800: start 21, stop 32
            t=3900: start 33
            t=4000: start 22, stop 33
            t=4100: start 34
            t=4200: start 35, stop 34
            t=4300: start 23, stop 35
            t=4400: start 36
            t=4500: start 24, stop 36
            t=4600: start 37
            t=4700: start 38, stop 37
            t=4800: start 1, stop 38
            t=4900: start 39, stop 1
            t=5000: start 25, stop 39
            t=5100: start 26
            t=5200: start 27
            t=5300: start 28
            t=5400: start 29
            t=5500: start 30
            t=5600: start 31
            t=5700: start 32
            t=5800: start 33
            t=5900: start 34
            t=6000: start 35
            t=6100: start 36
            t=6200: start 37
            t=6300: start 38
            t=6400: start 1
            t=6500: start 39, stop 1
            t=6600: start 1
            ended: 10@1000 11@1200 12@1400 13@1600 14@1800 15@2000 16@2300 17@2600 18@3000 19@3300 20@3600 21@3900 22@4100 23@4400 24@4600 25@5100 26@5200 27@5300 28@5400 29@5500 30@5600 31@5700 32@5800 33@5900 34@6000 35@6100 36@6200 37@6300 38@6400 39@6600 1@7000
        ");
}

#[test]
fn the_guard_is_off_by_default_and_applies_to_the_ranked_preemptive_policies() {
    for kind in PolicyKind::ALL {
        let mut cfg = PolicyConfig::new(kind);
        assert_eq!(cfg.promote_after, 0.0, "{kind:?}");
        assert!(!guard::applies(&cfg), "{kind:?}");
        cfg.promote_after = 2.0;
        let ranked = matches!(
            kind,
            PolicyKind::Srtf | PolicyKind::Srsf | PolicyKind::Blend
        );
        assert_eq!(guard::applies(&cfg), ranked, "{kind:?}");
    }
    assert_eq!(crate::policy::BLEND_PROMOTE_AFTER, 0.0);
}

#[test]
fn the_due_time_is_k_times_the_service_since_the_promotion_less_the_wait_so_far() {
    let mut cfg = PolicyConfig::new(PolicyKind::Srsf);
    cfg.promote_after = 3.0;
    let mut job = SchedJob::new(spec(1, 2, 0.0, Some(5000.0)));
    // Never run: never due.
    assert_eq!(guard::due(&cfg, &job), None);
    job.las.service = 100.0;
    job.las.starved = 50.0;
    job.last_update = 1000.0;
    assert_eq!(guard::due(&cfg, &job), Some(1250.0));
    // Off: never due.
    cfg.promote_after = 0.0;
    assert_eq!(guard::due(&cfg, &job), None);
    cfg.promote_after = 3.0;
    job.las.due = guard::due(&cfg, &job);
    assert!(!guard::is_due(&job, 1249.0));
    assert!(guard::is_due(&job, 1250.0));
    // Promoted: the rank is at most the GPU-service since then (srtf: the service).
    job.attained = 100.0;
    let before = key(&cfg, &job, 1250.0).0;
    assert_eq!(before, 4900.0 * 2.0);
    guard::promote(&mut job);
    assert_eq!(
        (job.las.service, job.las.starved, job.las.due),
        (0.0, 0.0, None)
    );
    assert_eq!(key(&cfg, &job, 1250.0).0, 0.0);
    job.las.service = 30.0;
    assert_eq!(key(&cfg, &job, 1280.0).0, 60.0);
    cfg.kind = PolicyKind::Srtf;
    assert_eq!(key(&cfg, &job, 1280.0).0, 30.0);
}

#[test]
fn the_guard_off_leaves_every_key_as_it_was_bit_for_bit() {
    let mut job = SchedJob::new(spec(1, 2, 123.5, Some(3600.0)));
    job.attained = 17.25;
    job.las.promotions = 3;
    job.las.service = 1.0;
    for kind in [PolicyKind::Srtf, PolicyKind::Srsf, PolicyKind::Blend] {
        let mut cfg = PolicyConfig::new(kind);
        let rank = match kind {
            PolicyKind::Srtf => 3600.0 - 17.25,
            PolicyKind::Srsf => (3600.0 - 17.25) * 2.0,
            _ => crate::policy::blend::key(&job),
        };
        for off in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            cfg.promote_after = off;
            assert_eq!(
                key(&cfg, &job, 5000.0).0.to_bits(),
                rank.to_bits(),
                "{kind:?}"
            );
            assert_eq!(guard::due(&cfg, &job), None);
        }
    }
}

#[test]
fn a_starving_long_job_runs_again_within_its_bound() {
    let first_restart = |k: f64| {
        let t = transcript(blend(k), &stream(), 9000.0);
        t.lines()
            .skip(1)
            .find(|l| l.contains("start 1,") || l.ends_with("start 1"))
            .map(|l| {
                l.trim_start_matches("t=")
                    .split(':')
                    .next()
                    .unwrap()
                    .parse::<f64>()
                    .unwrap()
            })
            .expect("job 1 runs again")
    };
    // Stopped at 300 with 300 s of service.
    assert_eq!(first_restart(0.0), 6300.0);
    // Due at 900 (K = 2) and 1800 (K = 5); it starts once the jobs promoted before it
    // (the stream's, by the same rule) have had their turn, long before 6300.
    let (two, five) = (first_restart(2.0), first_restart(5.0));
    assert!((900.0..=1300.0).contains(&two), "{two}");
    assert!((1800.0..=3000.0).contains(&five), "{five}");
    assert!(two < five);
}

/// The long-job class (`PolicyConfig::fifo_after`): two jobs of 1000 s on one GPU.
/// Least attained service alone shares the GPU between them, and both end late; past
/// 150 GPU-seconds each goes into the class, where the older runs to its end first.
#[test]
fn past_the_limit_long_jobs_run_first_come_first_served() {
    let pair = [(1, 0.0, 1000.0), (2, 100.0, 1000.0)];
    run(
        blend(0.0),
        &pair,
        2500.0,
        "
            t=0: start 1
            t=100: start 2, stop 1
            t=300: start 1, stop 2
            t=500: start 2, stop 1
            t=700: start 1, stop 2
            t=900: start 2, stop 1
            t=1100: start 1, stop 2
            t=1300: start 2, stop 1
            t=1500: start 1, stop 2
            t=1700: start 2, stop 1
            t=1900: start 1
            ended: 2@1900 1@2000
        ",
    );
    let mut class = blend(0.0);
    class.fifo_after = 150.0;
    run(
        class,
        &pair,
        2500.0,
        "
            t=0: start 1
            t=100: start 2, stop 1
            t=300: start 1, stop 2
            t=1200: start 2
            ended: 1@1200 2@2000
        ",
    );
}

/// The class's key: behind every finite rank, by submit time; below the limit (or with
/// the limit 0) the policy's key unchanged.
#[test]
fn the_long_class_key_is_submit_time_behind_every_rank() {
    let mut cfg = PolicyConfig::new(PolicyKind::Blend);
    let mut old = SchedJob::new(spec(1, 2, 10.0, None));
    old.attained = 100.0; // 200 GPU-seconds
    let mut young = SchedJob::new(spec(2, 1, 20.0, None));
    young.attained = 199.0;
    assert_eq!(key(&cfg, &old, 0.0), (200.0, 0.0));
    cfg.fifo_after = 200.0;
    assert_eq!(key(&cfg, &old, 0.0), (f64::INFINITY, 10.0));
    assert_eq!(key(&cfg, &young, 0.0), (199.0, 0.0));
    young.attained = 250.0;
    assert!(key(&cfg, &old, 0.0) < key(&cfg, &young, 0.0));
}
