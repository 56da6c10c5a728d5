//! Speed of the simulator and of one scheduling pass. Run with
//! `cargo bench -p gpusched-sim --bench sim_speed`; figures go to docs/benchmarks.md.
//!
//! (a) trace3 (992 jobs, 8x8) under each policy validated against the Muri simulator;
//! (b) all 82,247 jobs of philly.csv on 2,048 GPUs (256x8) under every policy;
//! (c) one preemptive pass over 100,000 waiting jobs of 1-8 GPUs on 10,000 nodes x 8;
//! (d) the live server's pass (`core::live::LiveCluster`: GPU indices picked on the book,
//!     caps, then why each job still waits) over 10,000 waiting jobs on 1,000 nodes x 8.
//!
//! (e) gang placement: a 4x8 gang on 1,000 and 10,000 nodes x 8 with about half the GPUs
//!     busy, unlabelled and under switches of 32 nodes (racks of 4 switches): the core's
//!     `gang::place` alone, and the live pass that starts it.
//!
//! (f) followers: the live pass's follows (`LiveCluster::follow_pass`) on 10,000 nodes x 8
//!     with every GPU busy and 100,000 short jobs of 50 users waiting.
//!
//! `cargo bench -p gpusched-sim --bench sim_speed -- passes` runs (c) to (f) only,
//! `-- one-pass` (c) only (the run to compare with callgrind across commits), `-- gangs`
//! (e) only.
//!
//! Traces are read from ../shared/traces; (a) and (b) are skipped with a note if absent.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gpusched_core::job::JobSpec;
use gpusched_core::schedule::{PreemptMode, SchedJob, Scheduler};
use gpusched_core::{Cluster, JobId, PlacementStrategy, PolicyConfig, PolicyKind, QueueId, UserId};
use gpusched_sim::overhead::PassOverhead;
use gpusched_sim::{simulate, trace, SimOptions};
use rand::{Rng, SeedableRng};

fn traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces")
}

/// Median wall time of `runs` runs of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[t.len() / 2]
}

fn bench_trace3() {
    let path = traces().join("muri/trace3.csv");
    let Ok(w) = trace::read(&path, None) else {
        println!("(a) skipped: {} not found", path.display());
        return;
    };
    let cluster = Cluster::parse_shape("8x8", "V100").unwrap();
    for kind in [PolicyKind::Srtf, PolicyKind::Srsf, PolicyKind::Tiresias] {
        let mut opts = SimOptions::new(PolicyConfig::new(kind));
        opts.overhead = PassOverhead::Muri;
        if kind == PolicyKind::Tiresias {
            opts.placement = PlacementStrategy::Pool;
        }
        let t = median(21, || {
            simulate(&w, &cluster, &opts, &mut |_, _| {}).unwrap();
        });
        println!(
            "(a) trace3 8x8 {:<9} {:>8.2} ms (median of 21)",
            kind.name(),
            t.as_secs_f64() * 1e3
        );
    }
}

fn bench_philly() {
    let path = traces().join("philly/philly.csv");
    let started = Instant::now();
    let Ok(w) = trace::read(&path, None) else {
        println!("(b) skipped: {} not found", path.display());
        return;
    };
    println!(
        "(b) reading philly.csv: {:.0} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let cluster = Cluster::parse_shape("256x8", "V100").unwrap();
    for kind in PolicyKind::ALL {
        let opts = SimOptions::new(PolicyConfig::new(kind));
        let t = median(3, || {
            simulate(&w, &cluster, &opts, &mut |_, _| {}).unwrap();
        });
        println!(
            "(b) philly 82,247 jobs 256x8 {:<9} {:>8.0} ms (median of 3)",
            kind.name(),
            t.as_secs_f64() * 1e3
        );
    }
}

fn bench_one_pass() {
    let cluster = Cluster::parse_shape("10000x8", "V100").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let template: Vec<SchedJob> = (0..100_000u64)
        .map(|i| {
            let mut j = SchedJob::new(JobSpec {
                id: JobId(i),
                gpus: rng.gen_range(1..=8),
                gpu_model: None,
                user: UserId((i % 16) as u32),
                queue: QueueId(0),
                account: Default::default(),
                priority: 0,
                submit: 0.0,
                estimate: Some(rng.gen_range(60.0..86_400.0)),
                cpu_milli: 0,
                mem_mib: 0,
                generic: Default::default(),
                gang: None,
                nodes: Vec::new(),
                prefer: Vec::new(),
                deadline: None,
            });
            j.remaining = j.spec.estimate;
            j
        })
        .collect();
    for kind in [
        PolicyKind::Srtf,
        PolicyKind::Fifo,
        PolicyKind::Backfill,
        PolicyKind::Drf,
    ] {
        // Setup (scheduler, admission) is outside the timed region; the pass alone is timed.
        let mut times = Vec::new();
        let mut placed = 0;
        for _ in 0..5 {
            let mut s = Scheduler::new(
                &cluster,
                PolicyConfig::new(kind),
                PlacementStrategy::Consolidated,
                PreemptMode::Repack,
            );
            let mut jobs = template.clone();
            for j in &mut jobs {
                s.admit(j).unwrap();
            }
            let start = Instant::now();
            let out = s.pass(&mut jobs, 0.0);
            times.push(start.elapsed());
            placed = out.decisions.len();
        }
        times.sort();
        let pass = times[times.len() / 2];
        println!(
            "(c) one {:<8} pass, 100,000 waiting jobs on 10,000x8: {} placed in {:.1} ms (median of 5) = {:.2} M placements/s, {:.2} M jobs considered/s",
            kind.name(),
            placed,
            pass.as_secs_f64() * 1e3,
            placed as f64 / pass.as_secs_f64() / 1e6,
            100_000.0 / pass.as_secs_f64() / 1e6,
        );
    }
}

fn main() {
    // `cargo test --benches` runs this with --bench absent; keep that quick.
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with `cargo bench -p gpusched-sim --bench sim_speed`");
        return;
    }
    let only = |name: &str| std::env::args().any(|a| a == name);
    if only("gangs") {
        bench_gangs();
        return;
    }
    if !only("passes") && !only("one-pass") {
        bench_trace3();
        bench_philly();
    }
    bench_one_pass();
    if !only("one-pass") {
        bench_live_pass();
        bench_gangs();
        bench_follows();
    }
}

/// A live node of 8 A100s, 64 CPUs and 512 GiB, unlabelled, whose agent starts no
/// followers.
fn a100_node(name: String) -> gpusched_core::live::LiveNode {
    use gpusched_core::live::{LiveGpu, LiveNode};
    LiveNode {
        name,
        model: "A100-SXM4-80GB".into(),
        cpus: 64,
        mem_mib: 512 * 1024,
        mps: false,
        gpus: (0..8)
            .map(|index| LiveGpu {
                index,
                model: "A100-SXM4-80GB".into(),
                mem_mib: 81920,
                mig: None,
                unhealthy: None,
            })
            .collect(),
        resources: Default::default(),
        topology: Default::default(),
        drained: None,
        unreachable: None,
        follows: false,
        features: Vec::new(),
    }
}

/// (f): the follows of one round on a large, full cluster: 80,000 one-GPU jobs running
/// on 10,000 nodes x 8, 100,000 more waiting (50 users, estimated half a second), four
/// followers at most behind each: the first round queues 100,000, the next finds every
/// chain full.
fn bench_follows() {
    use gpusched_core::live::{FollowConfig, LiveCluster, LiveJob, LiveNode};
    use gpusched_core::sharing::ShareStrategy;
    let nodes: Vec<LiveNode> = (0..10_000)
        .map(|i| LiveNode {
            follows: true,
            ..a100_node(format!("n{i:05}"))
        })
        .collect();
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    c.set_follow(Some(FollowConfig {
        under: 1.0,
        depth: 4,
    }));
    c.set_nodes(nodes);
    for id in 1..=180_000u64 {
        c.add(&LiveJob {
            id,
            user: format!("u{}", id % 50),
            queue: QueueId(0),
            priority: 0,
            submit: id as f64,
            walltime: Some(0.5),
            gpus: 1,
            model: None,
            cpu_milli: 0,
            mem_mib: 0,
            resources: Default::default(),
            slice: None,
            gang: None,
            group: None,
            serving: false,
            rules: None,
            prefer: Vec::new(),
            deadline: None,
            elastic: None,
        });
    }
    let started = c.pass(1.0, &[]).len();
    let t = Instant::now();
    let first = c.follow_pass(|_| None).len();
    let first_t = t.elapsed();
    let t = Instant::now();
    let second = c.follow_pass(|_| None).len();
    let second_t = t.elapsed();
    println!(
        "(f) follows on 10,000x8, {started} running, 100,000 waiting: {first} queued in {:.0} ms; then {second} (every chain full) in {:.2} ms",
        first_t.as_secs_f64() * 1e3,
        second_t.as_secs_f64() * 1e3,
    );
}

/// (e): what placing one 4x8 gang costs on a large, half-busy cluster.
fn bench_gangs() {
    use gpusched_core::gang::{self, Gang, GangShape};
    use gpusched_core::live::{LiveCluster, LiveJob, LiveNode, NodeTopology};
    use gpusched_core::sharing::ShareStrategy;
    let gang_of = |id: u64| LiveJob {
        id,
        user: "g".into(),
        queue: QueueId(0),
        priority: 0,
        submit: id as f64,
        walltime: None,
        gpus: 32,
        model: None,
        cpu_milli: 0,
        mem_mib: 0,
        resources: Default::default(),
        slice: None,
        gang: Some(Gang {
            shape: GangShape::Nodes {
                nodes: 4,
                per_node: 8,
            },
            mixed_models: false,
        }),
        group: None,
        serving: false,
        rules: None,
        prefer: Vec::new(),
        deadline: None,
        elastic: None,
    };
    for n in [1_000usize, 10_000] {
        for labelled in [false, true] {
            let nodes: Vec<LiveNode> = (0..n)
                .map(|i| LiveNode {
                    topology: NodeTopology {
                        switch: labelled.then(|| format!("s{}", i / 32)),
                        rack: labelled.then(|| format!("r{}", i / 128)),
                        links: Default::default(),
                    },
                    ..a100_node(format!("n{i:05}"))
                })
                .collect();
            // About half the GPUs busy: each node 0-8 busy, uniformly (seeded).
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
            let busy: Vec<u32> = (0..n).map(|_| rng.gen_range(0..=8)).collect();
            let setup = || {
                let mut policy = PolicyConfig::new(PolicyKind::Fifo);
                policy.backfill_nodes = true;
                let mut c = LiveCluster::new(policy, ShareStrategy::Fgd);
                c.set_nodes(nodes.clone());
                for (i, &b) in busy.iter().enumerate() {
                    if b == 0 {
                        continue;
                    }
                    let id = i as u64 + 1;
                    c.add(&LiveJob {
                        gpus: b,
                        gang: None,
                        user: "u".into(),
                        ..gang_of(id)
                    });
                    let idx: Vec<u32> = (0..b).collect();
                    assert!(c.restore(id, &nodes[i].name, &idx, None, 0.0));
                }
                c
            };
            let mut pass_t = Vec::new();
            let mut parts = 0;
            for _ in 0..5 {
                let mut c = setup();
                c.add(&gang_of(u64::MAX - 1));
                let start = Instant::now();
                let s = c.pass(1.0, &[]);
                pass_t.push(start.elapsed());
                parts = s.first().map_or(0, |p| p.parts.len());
            }
            pass_t.sort();
            // The placement alone, on the scheduler's free map.
            let c = setup();
            let map = c.free_map();
            let spec = JobSpec {
                id: JobId(0),
                gpus: 32,
                gpu_model: None,
                user: UserId(0),
                queue: QueueId(0),
                account: Default::default(),
                priority: 0,
                submit: 0.0,
                estimate: None,
                cpu_milli: 0,
                mem_mib: 0,
                generic: Default::default(),
                gang: gang_of(0).gang,
                nodes: Vec::new(),
                prefer: Vec::new(),
                deadline: None,
            };
            let g = spec.gang.clone().unwrap();
            let runs = 200;
            let t = median(runs, || {
                assert!(gang::place(map, None, &spec, &g).is_some());
            });
            println!(
                "(e) 4x8 gang on {n}x8, ~half busy, {}: place {:.0} µs (median of {runs}); live pass that starts it {:.2} ms ({parts} parts; median of 5)",
                if labelled { "switches of 32 nodes" } else { "no switch labels" },
                t.as_secs_f64() * 1e6,
                pass_t[2].as_secs_f64() * 1e3,
            );
        }
    }
}

/// The server's pass: 10,000 waiting 1-8 GPU jobs of 16 users on 1,000 nodes x 8 (some
/// start, the rest wait), then the reason of every waiting job, as `queue` asks for them.
fn bench_live_pass() {
    use gpusched_core::live::{LiveCluster, LiveJob, LiveNode};
    use gpusched_core::sharing::ShareStrategy;
    let nodes: Vec<LiveNode> = (0..1000).map(|i| a100_node(format!("n{i:04}"))).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let jobs: Vec<LiveJob> = (1..=10_000u64)
        .map(|id| LiveJob {
            id,
            user: format!("u{}", id % 16),
            queue: QueueId(0),
            priority: 0,
            submit: id as f64,
            walltime: Some(rng.gen_range(60.0..86_400.0)),
            gpus: rng.gen_range(1..=8),
            model: None,
            cpu_milli: 0,
            mem_mib: 0,
            resources: Default::default(),
            slice: None,
            gang: None,
            group: None,
            serving: false,
            rules: None,
            prefer: Vec::new(),
            deadline: None,
            elastic: None,
        })
        .collect();
    for kind in [PolicyKind::Fifo, PolicyKind::Backfill] {
        let (mut pass_t, mut reason_t, mut placed) = (Vec::new(), Vec::new(), 0);
        for _ in 0..5 {
            let mut policy = PolicyConfig::new(kind);
            policy.backfill_nodes = true;
            let mut c = LiveCluster::new(policy, ShareStrategy::Fgd);
            c.set_nodes(nodes.clone());
            for j in &jobs {
                c.add(j);
            }
            let start = Instant::now();
            placed = c.pass(1.0, &[]).len();
            pass_t.push(start.elapsed());
            let start = Instant::now();
            let ctx = c.wait_context();
            let order: std::collections::BTreeSet<u64> = c.waiting_order().into_iter().collect();
            let waiting = jobs.iter().filter(|j| order.contains(&j.id));
            let reasons: Vec<_> = waiting
                .map(|j| c.wait_reason(j, &gpusched_core::live::Blocked::default(), &ctx))
                .collect();
            let n = reasons.len();
            reason_t.push(start.elapsed());
            assert_eq!(n + placed, jobs.len());
        }
        pass_t.sort();
        reason_t.sort();
        println!(
            "(d) one live {:<8} pass, 10,000 waiting jobs on 1,000x8: {} placed in {:.1} ms; reasons of the {} still waiting in {:.1} ms (medians of 5)",
            kind.name(),
            placed,
            pass_t[2].as_secs_f64() * 1e3,
            jobs.len() - placed,
            reason_t[2].as_secs_f64() * 1e3,
        );
    }
}
