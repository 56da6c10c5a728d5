//! Data-driven scheduler tests: each scenario is a cluster shape, a policy, a list of
//! jobs and a list of steps (a time and the jobs that ended just before it); the test
//! asserts the whole transcript of the decisions the passes made.
//!
//! Transcript lines: `t=T start J on n0:2,n1:2`, `t=T preempt J`, `t=T move J A -> B`
//! (a running job whose placement changed without a decision, i.e. a repack migration)
//! and `t=T wakeup W` (what `Scheduler::next_wakeup` asks for after the pass).

use std::fmt::Write;

use gpusched_core::schedule::PreemptMode;
use gpusched_core::{
    Cluster, Decision, JobId, JobSpec, Placement, PlacementStrategy, PolicyConfig, PolicyKind,
    QueueId, SchedJob, Scheduler, UserId,
};
use PlacementStrategy::{BestFit, Consolidated, Pool, Spread};
use PolicyKind::{Backfill, Drf, Fifo, Priority, Sjf, Srsf, Srtf, Tiresias};
use PreemptMode::{InPlace, Repack};

/// (id, gpus, submit, estimate, user, priority)
type Job = (u64, u32, f64, Option<f64>, u32, i32);
/// (now, ids of the jobs that ended just before this pass)
type Step<'a> = (f64, &'a [u64]);

/// A tiny event driver around [`Scheduler`], recording a transcript.
struct Sim {
    sched: Scheduler,
    cluster: Cluster,
    unsubmitted: Vec<JobSpec>,
    jobs: Vec<SchedJob>,
    log: String,
}

impl Sim {
    fn new(
        cluster: &str,
        policy: PolicyConfig,
        placement: PlacementStrategy,
        mode: PreemptMode,
        jobs: &[Job],
    ) -> Sim {
        let cluster = Cluster::parse_shape(cluster, "V100").unwrap();
        let unsubmitted = jobs
            .iter()
            .map(|&(id, gpus, submit, estimate, user, priority)| JobSpec {
                id: JobId(id),
                gpus,
                gpu_model: None,
                user: UserId(user),
                queue: QueueId(0),
                account: Default::default(),
                priority,
                submit,
                estimate,
                cpu_milli: 0,
                mem_mib: 0,
                generic: Default::default(),
                gang: None,
                nodes: Vec::new(),
                prefer: Vec::new(),
                deadline: None,
            })
            .collect();
        Sim {
            sched: Scheduler::new(&cluster, policy, placement, mode),
            cluster,
            unsubmitted,
            jobs: Vec::new(),
            log: String::new(),
        }
    }

    fn job(&self, id: u64) -> &SchedJob {
        self.jobs.iter().find(|j| j.spec.id == JobId(id)).unwrap()
    }

    /// Admits jobs submitted by `now` (in list order), accounts every job, finishes
    /// `finished`, runs one pass and appends its transcript lines.
    fn step(&mut self, now: f64, finished: &[u64]) {
        let (due, later) = std::mem::take(&mut self.unsubmitted)
            .into_iter()
            .partition(|s: &JobSpec| s.submit <= now);
        self.unsubmitted = later;
        for spec in due {
            let mut job = SchedJob::new(spec);
            self.sched.admit(&mut job).unwrap();
            self.jobs.push(job);
        }
        for job in &mut self.jobs {
            job.account(now);
        }
        for &id in finished {
            let i = self.jobs.iter().position(|j| j.spec.id == JobId(id));
            let mut job = self.jobs.remove(i.expect("a finished job is known"));
            self.sched.finish(&mut job);
        }
        let before: Vec<Option<Placement>> =
            self.jobs.iter().map(|j| j.placement.clone()).collect();
        let out = self.sched.pass(&mut self.jobs, now);
        for d in &out.decisions {
            match d {
                Decision::Start {
                    index,
                    job,
                    placement,
                } => {
                    assert_eq!(self.jobs[*index].spec.id, *job);
                    assert_eq!(placement.gpus(), self.jobs[*index].spec.gpus);
                    writeln!(self.log, "t={now} start {job} on {}", nodes(placement)).unwrap();
                }
                Decision::Preempt { index, job } => {
                    assert_eq!(self.jobs[*index].spec.id, *job);
                    writeln!(self.log, "t={now} preempt {job}").unwrap();
                }
            }
        }
        for (job, was) in self.jobs.iter().zip(before) {
            if let (true, Some(was), Some(is)) = (job.running, was, &job.placement) {
                if was != *is {
                    let (id, a, b) = (job.spec.id, nodes(&was), nodes(is));
                    writeln!(self.log, "t={now} move {id} {a} -> {b}").unwrap();
                }
            }
        }
        // No node is over-committed and the scheduler's free count matches the jobs.
        let mut used = vec![0u32; self.cluster.nodes.len()];
        for p in self
            .jobs
            .iter()
            .filter(|j| j.running)
            .flat_map(|j| &j.placement)
        {
            p.parts.iter().for_each(|&(n, k)| used[n.index()] += k);
        }
        for (node, used) in self.cluster.nodes.iter().zip(&used) {
            assert!(
                *used as usize <= node.gpus.len(),
                "t={now} node {}",
                node.id
            );
        }
        let held: u64 = used.iter().map(|&k| k as u64).sum();
        let total = self.cluster.total_gpus() as u64;
        assert_eq!(self.sched.free_gpus(), total - held, "at t={now}");
        if let Some(w) = self.sched.next_wakeup(&self.jobs, now) {
            writeln!(self.log, "t={now} wakeup {w}").unwrap();
        }
    }
}

fn nodes(p: &Placement) -> String {
    let parts: Vec<String> = p.parts.iter().map(|(n, k)| format!("n{n}:{k}")).collect();
    parts.join(",")
}

/// Runs a whole scenario and returns its transcript.
fn transcript(
    cluster: &str,
    policy: PolicyConfig,
    placement: PlacementStrategy,
    mode: PreemptMode,
    jobs: &[Job],
    steps: &[Step],
) -> String {
    let mut sim = Sim::new(cluster, policy, placement, mode, jobs);
    for &(now, finished) in steps {
        sim.step(now, finished);
    }
    sim.log
}

fn cfg(kind: PolicyKind) -> PolicyConfig {
    PolicyConfig::new(kind)
}

/// Tiresias with small limits so the numbers stay readable: queue 0 up to 100
/// GPU-seconds, queue 1 up to 1000.
fn tiresias(starvation: f64) -> PolicyConfig {
    PolicyConfig {
        las_limits: vec![100.0, 1000.0],
        starvation,
        ..cfg(Tiresias)
    }
}

#[test]
fn fifo_is_strict_a_blocked_head_blocks_smaller_jobs_behind_it() {
    let jobs = [
        (1, 4, 0.0, None, 1, 0),
        (2, 6, 1.0, None, 1, 0),
        (3, 1, 2.0, None, 1, 0), // would fit at t=2, but 2 is ahead of it
    ];
    let steps: &[Step] = &[(0.0, &[]), (2.0, &[]), (10.0, &[1])];
    let t = transcript("2x4", cfg(Fifo), Consolidated, Repack, &jobs, steps);
    assert_eq!(
        t,
        "t=0 start 1 on n0:4\n\
         t=10 start 2 on n0:4,n1:2\n\
         t=10 start 3 on n1:1\n"
    );
}

/// One blocker at t=0 and three one-node jobs: 2 (priority 0, submitted at 0), 3
/// (priority 2, submitted 3 hours later), 4 (priority 5, submitted 3 hours later).
const PRIORITY_JOBS: [Job; 4] = [
    (1, 4, 0.0, None, 1, 10),
    (2, 4, 0.0, None, 1, 0),
    (3, 4, 10800.0, None, 1, 2),
    (4, 4, 10800.0, None, 1, 5),
];

#[test]
fn priority_runs_the_highest_priority_first() {
    let policy = PolicyConfig {
        aging_per_hour: 0.0,
        ..cfg(Priority)
    };
    let steps: &[Step] = &[
        (0.0, &[]),
        (10800.0, &[1]),
        (14400.0, &[4]),
        (18000.0, &[3]),
    ];
    let t = transcript("1x4", policy, Consolidated, Repack, &PRIORITY_JOBS, steps);
    assert_eq!(
        t,
        "t=0 start 1 on n0:4\n\
         t=10800 start 4 on n0:4\n\
         t=14400 start 3 on n0:4\n\
         t=18000 start 2 on n0:4\n"
    );
}

#[test]
fn priority_aging_lets_an_old_low_priority_job_overtake_a_newer_high_priority_one() {
    let steps: &[Step] = &[(0.0, &[]), (10800.0, &[1]), (14400.0, &[4])];
    let run = |aging_per_hour| {
        let policy = PolicyConfig {
            aging_per_hour,
            ..cfg(Priority)
        };
        transcript("1x4", policy, Consolidated, Repack, &PRIORITY_JOBS, steps)
    };
    // Job 2 waited 3 hours before job 3 came: at 1 point per hour that beats job 3's
    // 2 extra points (but not job 4's 5).
    assert_eq!(
        run(1.0),
        "t=0 start 1 on n0:4\n\
         t=10800 start 4 on n0:4\n\
         t=14400 start 2 on n0:4\n"
    );
    // At half a point per hour, 3 hours are worth only 1.5 points: job 3 still wins.
    assert_eq!(
        run(0.5),
        "t=0 start 1 on n0:4\n\
         t=10800 start 4 on n0:4\n\
         t=14400 start 3 on n0:4\n"
    );
}

#[test]
fn sjf_orders_by_estimate_and_a_job_without_one_goes_last() {
    let jobs = [
        (1, 4, 0.0, Some(100.0), 1, 0),
        (2, 4, 1.0, None, 1, 0),
        (3, 4, 2.0, Some(500.0), 1, 0),
        (4, 4, 3.0, Some(50.0), 1, 0),
    ];
    let steps: &[Step] = &[(0.0, &[]), (100.0, &[1]), (150.0, &[4]), (650.0, &[3])];
    let t = transcript("1x4", cfg(Sjf), Consolidated, Repack, &jobs, steps);
    assert_eq!(
        t,
        "t=0 start 1 on n0:4\n\
         t=100 start 4 on n0:4\n\
         t=150 start 3 on n0:4\n\
         t=650 start 2 on n0:4\n"
    );
}

#[test]
fn srtf_preempts_a_long_running_job_when_a_shorter_one_arrives_on_a_full_cluster() {
    let jobs = [
        (1, 4, 0.0, Some(1000.0), 1, 0),
        (2, 2, 10.0, Some(100.0), 1, 0),
    ];
    let steps: &[Step] = &[(0.0, &[]), (10.0, &[]), (110.0, &[2])];
    let mut sim = Sim::new("1x4", cfg(Srtf), Consolidated, Repack, &jobs);
    for &(now, finished) in steps {
        sim.step(now, finished);
    }
    assert_eq!(
        sim.log,
        "t=0 start 1 on n0:4\n\
         t=10 start 2 on n0:2\n\
         t=10 preempt 1\n\
         t=110 start 1 on n0:4\n"
    );
    let j = sim.job(1);
    assert_eq!(
        (j.attained, j.waited, j.starts, j.preemptions),
        (10.0, 100.0, 2, 1)
    );
}

#[test]
fn srtf_ranks_by_remaining_time_and_srsf_by_remaining_time_times_gpus() {
    // Job 1: 100 s x 4 GPUs = 400; job 2: 200 s x 1 GPU = 200; job 3 (at t=50):
    // 150 s x 2 GPUs = 300. They cannot all run on 4 GPUs.
    let jobs = [
        (1, 4, 0.0, Some(100.0), 1, 0),
        (2, 1, 0.0, Some(200.0), 1, 0),
        (3, 2, 50.0, Some(150.0), 1, 0),
    ];
    let steps: &[Step] = &[(0.0, &[]), (50.0, &[])];
    let srtf = transcript("1x4", cfg(Srtf), Consolidated, Repack, &jobs, steps);
    assert_eq!(srtf, "t=0 start 1 on n0:4\n");
    let srsf = transcript("1x4", cfg(Srsf), Consolidated, Repack, &jobs, steps);
    assert_eq!(
        srsf,
        "t=0 start 2 on n0:1\n\
         t=50 start 3 on n0:2\n"
    );
}

#[test]
fn tiresias_demotes_at_the_limit_and_a_newer_queue0_job_preempts_the_demoted_one() {
    // 4 GPUs: job 1 reaches 100 GPU-seconds after 25 s, which next_wakeup announces.
    let jobs = [(1, 4, 0.0, None, 1, 0), (2, 4, 10.0, None, 1, 0)];
    let mut sim = Sim::new("1x4", tiresias(0.0), Consolidated, Repack, &jobs);
    sim.step(0.0, &[]);
    sim.step(10.0, &[]);
    assert_eq!(sim.job(1).las.level, 0);
    sim.step(25.0, &[]);
    assert_eq!(
        sim.log,
        "t=0 start 1 on n0:4\n\
         t=0 wakeup 25\n\
         t=10 wakeup 25\n\
         t=25 start 2 on n0:4\n\
         t=25 preempt 1\n\
         t=25 wakeup 50\n"
    );
    assert_eq!((sim.job(1).las.level, sim.job(1).las.service), (1, 25.0));
    assert_eq!(sim.job(2).las.level, 0);
}

#[test]
fn tiresias_promotes_a_starved_job_back_to_queue0() {
    // Job 2 (3 GPUs) reaches 100 GPU-seconds after ceil(100 / 3) = 34 s. Job 1, demoted
    // at t=25 after 25 s of service, has starved 1 x 25 s at t=50 and is promoted.
    let jobs = [(1, 4, 0.0, None, 1, 0), (2, 3, 10.0, None, 1, 0)];
    let mut sim = Sim::new("1x4", tiresias(1.0), Consolidated, Repack, &jobs);
    for now in [0.0, 10.0, 25.0] {
        sim.step(now, &[]);
    }
    assert_eq!((sim.job(1).las.level, sim.job(1).las.promotions), (1, 0));
    sim.step(50.0, &[]);
    let las = &sim.job(1).las;
    assert_eq!((las.level, las.promotions, las.service), (0, 1, 0.0));
    assert!(!sim.job(1).running, "job 2 is ahead of it in queue 0");
    sim.step(59.0, &[]);
    assert_eq!(
        sim.log,
        "t=0 start 1 on n0:4\n\
         t=0 wakeup 25\n\
         t=10 wakeup 25\n\
         t=25 start 2 on n0:3\n\
         t=25 preempt 1\n\
         t=25 wakeup 50\n\
         t=50 wakeup 59\n\
         t=59 start 1 on n0:4\n\
         t=59 preempt 2\n\
         t=59 wakeup 84\n"
    );
    assert_eq!(sim.job(2).las.level, 1);
}

#[test]
fn drf_serves_the_light_user_before_the_heavy_users_second_job() {
    let jobs = [
        (1, 1, 0.0, None, 1, 0),
        (2, 1, 1.0, None, 1, 0),
        (3, 1, 2.0, None, 1, 0),
        (4, 1, 3.0, None, 1, 0),
        (5, 1, 4.0, None, 2, 0), // the newest job, but user 2 has nothing yet
    ];
    let steps: &[Step] = &[(5.0, &[])];
    let t = transcript("1x4", cfg(Drf), Consolidated, Repack, &jobs, steps);
    assert_eq!(
        t,
        "t=5 start 1 on n0:1\n\
         t=5 start 5 on n0:1\n\
         t=5 start 2 on n0:1\n\
         t=5 start 3 on n0:1\n"
    );
}

#[test]
fn drf_weights_change_the_split() {
    let jobs: Vec<Job> = (1..=8)
        .map(|i| (i, 1, (i - 1) as f64, None, if i <= 4 { 1 } else { 2 }, 0))
        .collect();
    let steps: &[Step] = &[(10.0, &[])];
    let even = transcript("1x4", cfg(Drf), Consolidated, Repack, &jobs, steps);
    assert_eq!(
        even,
        "t=10 start 1 on n0:1\n\
         t=10 start 5 on n0:1\n\
         t=10 start 2 on n0:1\n\
         t=10 start 6 on n0:1\n"
    );
    let mut weighted = cfg(Drf);
    weighted.weights.insert(2, 3.0);
    let t = transcript("1x4", weighted, Consolidated, Repack, &jobs, steps);
    assert_eq!(
        t,
        "t=10 start 1 on n0:1\n\
         t=10 start 5 on n0:1\n\
         t=10 start 6 on n0:1\n\
         t=10 start 7 on n0:1\n"
    );
}

#[test]
fn backfill_starts_short_jobs_and_extra_gpu_jobs_but_never_delays_the_head() {
    // 8 GPUs. Job 1 holds 4 until t=100, so head job 2 (6 GPUs) is reserved for t=100,
    // when 2 GPUs will be spare ("extra").
    let jobs = [
        (1, 4, 0.0, Some(100.0), 1, 0),
        (2, 6, 1.0, Some(50.0), 1, 0),
        (3, 3, 2.0, Some(500.0), 1, 0), // long and larger than the extra: waits
        (4, 2, 3.0, Some(500.0), 1, 0), // long but fits the extra GPUs: starts
        (5, 1, 4.0, Some(500.0), 1, 0), // long, extra used up: waits
        (6, 1, 5.0, Some(50.0), 1, 0),  // ends by t=55 <= 100: starts
    ];
    let steps: &[Step] = &[
        (0.0, &[]),
        (5.0, &[]),
        (55.0, &[6]),
        (100.0, &[1]),
        (150.0, &[2]),
    ];
    let t = transcript("1x8", cfg(Backfill), Consolidated, Repack, &jobs, steps);
    assert_eq!(
        t,
        "t=0 start 1 on n0:4\n\
         t=5 start 4 on n0:2\n\
         t=5 start 6 on n0:1\n\
         t=100 start 2 on n0:6\n\
         t=150 start 3 on n0:3\n\
         t=150 start 5 on n0:1\n"
    );
}

#[test]
fn in_place_never_moves_a_running_job() {
    // srtf on 2x4: at t=10 a short 2-GPU job arrives, at t=20 a short 4-GPU one. An idle
    // re-pack would put job 3 on n0 and move jobs 1 and 2; in place, nothing moves.
    let jobs = [
        (1, 4, 0.0, Some(1000.0), 1, 0),
        (2, 2, 0.0, Some(2000.0), 1, 0),
        (3, 2, 10.0, Some(100.0), 1, 0),
        (4, 4, 20.0, Some(50.0), 1, 0),
    ];
    let steps: &[Step] = &[(0.0, &[]), (10.0, &[]), (20.0, &[])];
    let t = transcript("2x4", cfg(Srtf), Consolidated, InPlace, &jobs, steps);
    assert_eq!(
        t,
        "t=0 start 1 on n0:4\n\
         t=0 start 2 on n1:2\n\
         t=10 start 3 on n1:2\n\
         t=20 preempt 1\n\
         t=20 start 4 on n0:4\n"
    );
}

#[test]
fn repack_may_move_running_jobs() {
    // srtf on 2x4. At t=10 the short jobs 3 (4 GPUs) and 4 (1 GPU) do not fit the free
    // GPUs, so the pass re-packs from an idle cluster: job 1 loses its node and job 2
    // migrates to the other node. At t=60 job 3 migrates to make room for job 1.
    let jobs = [
        (1, 4, 0.0, Some(1000.0), 1, 0),
        (2, 2, 0.0, Some(2000.0), 1, 0),
        (3, 4, 10.0, Some(100.0), 1, 0),
        (4, 1, 10.0, Some(50.0), 1, 0),
    ];
    let steps: &[Step] = &[(0.0, &[]), (10.0, &[]), (60.0, &[4])];
    let t = transcript("2x4", cfg(Srtf), Consolidated, Repack, &jobs, steps);
    assert_eq!(
        t,
        "t=0 start 1 on n0:4\n\
         t=0 start 2 on n1:2\n\
         t=10 start 4 on n0:1\n\
         t=10 start 3 on n1:4\n\
         t=10 preempt 1\n\
         t=10 move 2 n1:2 -> n0:2\n\
         t=60 start 1 on n1:4\n\
         t=60 preempt 2\n\
         t=60 move 3 n1:4 -> n0:4\n"
    );
}

#[test]
fn placement_strategies_pick_different_nodes_through_the_scheduler() {
    let jobs = [
        (1, 2, 0.0, None, 1, 0),
        (2, 3, 0.0, None, 1, 0),
        (3, 6, 0.0, None, 1, 0),
    ];
    let steps: &[Step] = &[(0.0, &[])];
    let run = |p| transcript("4x4", cfg(Fifo), p, Repack, &jobs, steps);
    assert_eq!(
        run(Consolidated),
        "t=0 start 1 on n0:2\n\
         t=0 start 2 on n1:3\n\
         t=0 start 3 on n0:2,n2:4\n"
    );
    assert_eq!(
        run(Spread),
        "t=0 start 1 on n0:1,n1:1\n\
         t=0 start 2 on n0:1,n2:1,n3:1\n\
         t=0 start 3 on n0:1,n1:2,n2:2,n3:1\n"
    );
    assert_eq!(
        run(Pool),
        "t=0 start 1 on n0:2\n\
         t=0 start 2 on n0:2,n1:1\n\
         t=0 start 3 on n1:3,n2:3\n"
    );
}

#[test]
fn the_same_scenario_twice_gives_the_same_transcript() {
    let jobs = [
        (1, 4, 0.0, Some(300.0), 1, 0),
        (2, 2, 5.0, Some(50.0), 2, 1),
        (3, 6, 10.0, None, 1, 3),
        (4, 1, 15.0, Some(20.0), 3, 0),
        (5, 3, 20.0, Some(100.0), 2, 2),
        (6, 2, 25.0, Some(500.0), 3, 1),
        (7, 8, 25.0, Some(40.0), 1, 0),
    ];
    let steps: &[Step] = &[
        (0.0, &[]),
        (5.0, &[]),
        (10.0, &[]),
        (20.0, &[]),
        (30.0, &[2]),
        (60.0, &[4]),
        (100.0, &[1]),
        (200.0, &[5]),
        (400.0, &[3]),
    ];
    for kind in PolicyKind::ALL {
        for placement in [Consolidated, BestFit, Spread, Pool] {
            for mode in [Repack, InPlace] {
                let policy = PolicyConfig {
                    las_limits: vec![100.0, 1000.0],
                    starvation: 1.0,
                    ..cfg(kind)
                };
                let run = || transcript("2x2x4", policy.clone(), placement, mode, &jobs, steps);
                let first = run();
                assert!(first.contains("start"), "{kind:?} {placement:?} {mode:?}");
                assert_eq!(first, run(), "{kind:?} {placement:?} {mode:?}");
            }
        }
    }
}
