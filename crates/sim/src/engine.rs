//! The discrete-event simulator: a trace in, every job's outcome out, driving the
//! scheduling core exactly as the live server does (`account`, then `pass`).
//!
//! Event semantics (matched to the Muri/Tiresias simulators, see docs/simulator.md):
//! - Events are job arrivals (jobs submitted at the same time arrive together), job
//!   completions, and policy wake-ups (Tiresias demotions and promotions). When an arrival
//!   and a completion fall at the same time, both are handled in one event; a wake-up
//!   earlier than both is handled alone.
//! - At each event, finished jobs leave first, arrivals join the back of the queue, every
//!   job's counters are brought up to the event time, then one scheduling pass runs.
//! - A running job progresses at its work rate between events, less the duration model's
//!   per-event pause ([`PassOverhead`]), and slower when spread over more nodes than it
//!   needs (locality penalty).
//! - Completion times within one part in 10^9 of each other are one event, at the time
//!   of the first such job in queue order (the peers coalesce float noise the same way).

use std::collections::BTreeMap;

use gpusched_core::schedule::{NeverFits, PreemptMode};
use gpusched_core::{
    Cluster, JobId, PlacementStrategy, PolicyConfig, PolicyKind, QueueId, SchedJob, Scheduler,
    UserId,
};

use crate::estimates::{Estimates, Estimator, PredictionReport};
use crate::overhead::PassOverhead;
use crate::tenants::usage::Recorder;
use crate::tenants::TenantUsage;
use crate::trace::Workload;

/// How to simulate.
#[derive(Clone, Debug, PartialEq)]
pub struct SimOptions {
    pub policy: PolicyConfig,
    pub placement: PlacementStrategy,
    pub mode: PreemptMode,
    pub overhead: PassOverhead,
    /// A job on more nodes than it needs runs `1 / locality_penalty` as fast; 1.0 = off.
    pub locality_penalty: f64,
    /// Record each tenant's GPUs in bins of this many seconds ([`SimRun::tenants`]).
    /// Off by default: it costs one walk over the queue per event.
    pub tenant_bins: Option<f64>,
    /// The most GPUs each queue may hold at once (a queue file's `max`); none: no caps.
    pub queue_limits: BTreeMap<QueueId, u32>,
    /// Quotas to reclaim by preemption after each pass, as the live server does.
    pub reclaim: Option<crate::reclaim::ReclaimOptions>,
    /// Count [`SimRun::powered_idle_gpu_seconds`] (for `--power-down-idle`). Off by
    /// default: it costs one walk over the nodes per event.
    pub powered_idle: bool,
    /// What policies are told of run times ([`Estimates`]); the default is the trace's.
    pub estimates: Estimates,
    /// Advance reservations' windows (`--reservations`), their nodes named by index:
    /// no trace job runs in one, and none starts on its nodes before it unless its
    /// estimate ends by then (the live cluster's rule, `gpusched_core::live::windows`).
    pub windows: Vec<gpusched_core::live::Window>,
    /// A cluster power budget counted at the GPUs' caps (`simulate-power`,
    /// [`crate::power::SimBudget`]): GPUs beyond what it lets be busy are held out of
    /// each pass. None: no budget (the default; every other run is as before).
    pub power_budget: Option<crate::power::SimBudget>,
    /// Elastic jobs (`--elastic`, [`crate::elastic`]). None: every job is rigid.
    pub elastic: Option<crate::elastic::SimElastic>,
}

impl SimOptions {
    pub fn new(policy: PolicyConfig) -> Self {
        SimOptions {
            policy,
            placement: PlacementStrategy::Consolidated,
            mode: PreemptMode::Repack,
            overhead: PassOverhead::None,
            locality_penalty: 1.0,
            tenant_bins: None,
            queue_limits: BTreeMap::new(),
            reclaim: None,
            powered_idle: false,
            estimates: Estimates::Trace,
            windows: Vec::new(),
            power_budget: None,
            elastic: None,
        }
    }
}

/// What happened to one job.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutcome {
    pub id: JobId,
    pub user: UserId,
    pub queue: QueueId,
    pub gpus: u32,
    pub submit: f64,
    pub start: f64,
    pub end: f64,
    /// Run time alone, from the trace.
    pub duration: f64,
    pub waited: f64,
    pub starts: u32,
    pub preemptions: u32,
}

impl JobOutcome {
    pub fn jct(&self) -> f64 {
        self.end - self.submit
    }
}

/// The cluster at one event.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Sample {
    pub time: f64,
    pub queued: u32,
    pub running: u32,
    pub busy_gpus: u32,
}

/// The result of one simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct SimRun {
    /// In completion order.
    pub jobs: Vec<JobOutcome>,
    pub timeline: Vec<Sample>,
    pub total_gpus: u32,
    pub busy_gpu_seconds: f64,
    /// Idle GPU-seconds on nodes that ran at least one job at the time: what idle GPUs
    /// draw when nodes running nothing are powered down (see [`crate::power`]). Zero
    /// unless [`SimOptions::powered_idle`] asked for it.
    pub powered_idle_gpu_seconds: f64,
    /// Node-seconds whole nodes ran nothing: what powering them down saves (counted with
    /// [`SimOptions::powered_idle`] only).
    pub idle_node_seconds: f64,
    pub passes: u64,
    /// Each tenant's GPUs over time, when [`SimOptions::tenant_bins`] asked for them.
    pub tenants: Option<TenantUsage>,
    /// What the policies were told of run times ([`Estimates::name`]).
    pub estimates: String,
    /// The predictor's accuracy, under `--estimates predicted`.
    pub prediction: Option<PredictionReport>,
    /// With elastic jobs: how many there were and how often they resized.
    pub elastic: Option<ElasticCount>,
}

/// What the elastic jobs of a run did.
#[derive(Copy, Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ElasticCount {
    pub jobs: u64,
    pub resizes: u64,
}

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    // Not `source`: that would make the message print twice in an error chain.
    #[error("{file}:{line}: {why}")]
    NeverFits {
        file: String,
        line: u64,
        why: NeverFits,
    },
    #[error("{file}:{line}: job {job} asks for GPU model {model}, but the simulated cluster has no such GPU (its GPUs are {have}); simulate with --gpu-model {model}, or drop the job's gpu_model")]
    NoSuchModel {
        file: String,
        line: u64,
        job: u64,
        model: String,
        have: String,
    },
    /// A job above its queue's `max` (from the queue file) could never start.
    #[error("{file}:{line}: job {job} asks for {gpus} GPU(s) but its queue `{queue}` may hold at most {max} (its `max` in the queue file), so it could never start; raise the queue's max or take the job out of the trace")]
    OverQueueMax {
        file: String,
        line: u64,
        job: JobId,
        queue: String,
        gpus: u32,
        max: u32,
    },
    #[error("the simulation stopped at t={time}: {} waiting, none runs and none can start; please report this with the trace", jobs_text(.waiting))]
    Stuck { time: f64, waiting: usize },
}

fn jobs_text(n: &usize) -> String {
    match n {
        1 => "1 job".to_string(),
        n => format!("{n} jobs"),
    }
}

/// Per-job state the simulator keeps beside the scheduler's view.
pub(crate) struct Progress {
    trace: usize,
    units: f64,
    unit_time: f64,
    overhead: f64,
    min_nodes: usize,
    /// An elastic job's range, its resize debt and count ([`crate::elastic`]).
    pub(crate) elastic: Option<crate::elastic::ElasticRun>,
}

/// The distinct GPU models of a cluster, sorted.
fn cluster_models(cluster: &Cluster) -> Vec<String> {
    let set: std::collections::BTreeSet<&str> = cluster
        .nodes
        .iter()
        .flat_map(|n| &n.gpus)
        .map(|g| g.model.as_str())
        .collect();
    set.into_iter().map(str::to_string).collect()
}

/// Simulates `workload` on `cluster`. `progress(done, total)` is called now and then.
pub fn simulate(
    workload: &Workload,
    cluster: &Cluster,
    opts: &SimOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<SimRun, SimError> {
    let mut sched = Scheduler::new(cluster, opts.policy.clone(), opts.placement, opts.mode);
    sched.set_queue_limits(opts.queue_limits.clone());
    // Reclaim reads the waiting jobs' ranks, which an ordered queue stops renumbering.
    // (The preemptive policies that keep one, srtf, srsf and blend, read the waiting jobs'
    // keys from it: the engine changes a job's remaining time and estimate only while it
    // runs, as the queue needs.)
    let ordered = opts.reclaim.is_none() && sched.keep_ordered_queue();
    for job in &workload.jobs {
        if let Some(model) = &job.spec.gpu_model {
            let has = |m: &str| gpusched_core::resources::model_matches(m, Some(model));
            if !cluster
                .nodes
                .iter()
                .flat_map(|n| &n.gpus)
                .any(|g| has(&g.model))
            {
                return Err(SimError::NoSuchModel {
                    file: workload.source.clone(),
                    line: job.line,
                    job: job.spec.id.0,
                    model: model.clone(),
                    have: cluster_models(cluster).join(", "),
                });
            }
        }
        sched
            .check_fits(&job.spec)
            .map_err(|why| SimError::NeverFits {
                file: workload.source.clone(),
                line: job.line,
                why,
            })?;
        if let Some(&max) = opts.queue_limits.get(&job.spec.queue) {
            if job.spec.gpus > max {
                return Err(SimError::OverQueueMax {
                    file: workload.source.clone(),
                    line: job.line,
                    job: job.spec.id,
                    queue: workload
                        .queues
                        .get(job.spec.queue.0 as usize)
                        .cloned()
                        .unwrap_or_else(|| job.spec.queue.0.to_string()),
                    gpus: job.spec.gpus,
                    max,
                });
            }
        }
    }
    let groups = arrival_groups(workload);
    let per_node = cluster.max_gpus_per_node().max(1);
    let total = workload.jobs.len();
    let total_gpus = cluster.total_gpus();

    let mut run = SimRun {
        jobs: Vec::with_capacity(total),
        timeline: Vec::new(),
        total_gpus,
        busy_gpu_seconds: 0.0,
        powered_idle_gpu_seconds: 0.0,
        idle_node_seconds: 0.0,
        passes: 0,
        tenants: None,
        estimates: opts.estimates.name(workload),
        prediction: None,
        elastic: opts.elastic.as_ref().map(|_| ElasticCount::default()),
    };
    let mut estimator = Estimator::new(&opts.estimates);
    let mut jobs: Vec<SchedJob> = Vec::new();
    let mut state: Vec<Progress> = Vec::new();
    let mut next_group = 0;
    let mut ending: Option<(f64, Vec<usize>)> = None;
    let mut wakeup: Option<f64> = None;
    // Windows name nodes by their index in the cluster.
    let node_names: Vec<String> = (0..cluster.nodes.len()).map(|i| i.to_string()).collect();
    let mut last_time = groups.first().map_or(0.0, |g| g.0);
    let mut busy: u64 = 0;
    let mut powered_idle: u64 = 0;
    let mut idle_nodes: u64 = 0;
    let mut done = vec![false; 0];
    // When each job last started (for reclaim's "least work lost" and protection).
    let mut started: Vec<f64> = Vec::new();
    let mut recorder = opts
        .tenant_bins
        .filter(|b| b.is_finite() && *b > 0.0)
        .map(|b| Recorder::new(b, last_time));
    // With an ordered queue no pass reads the whole job list, so an event need only walk
    // the running jobs (`running`, in list order), and ended jobs stay in place (marked in
    // `done`) until they are half the list: removing them at every end would move the
    // long queue each time. The tenant recorder reads every job, so it keeps the plain way.
    let lazy = ordered && recorder.is_none();
    let mut running: Vec<usize> = Vec::new();
    let mut gone = 0usize;

    loop {
        if next_group == groups.len() && jobs.len() == gone {
            break;
        }
        let start_t = groups.get(next_group).map_or(f64::INFINITY, |g| g.0);
        let end_t = ending.as_ref().map_or(f64::INFINITY, |e| e.0);
        if start_t.is_infinite() && end_t.is_infinite() && wakeup.is_none() {
            return Err(SimError::Stuck {
                time: last_time,
                waiting: jobs.len() - gone,
            });
        }
        let (mut now, mut do_end, mut do_start) = if end_t < start_t {
            (end_t, true, false)
        } else if end_t > start_t {
            (start_t, false, true)
        } else {
            (start_t, true, true)
        };
        if let Some(w) = wakeup.filter(|&w| now > w) {
            (now, do_end, do_start) = (w, false, false);
        }
        run.busy_gpu_seconds += busy as f64 * (now - last_time);
        run.powered_idle_gpu_seconds += powered_idle as f64 * (now - last_time);
        if opts.powered_idle {
            run.idle_node_seconds += idle_nodes as f64 * (now - last_time);
        }
        if let Some(r) = recorder.as_mut() {
            r.advance(last_time, now);
        }
        last_time = now;

        if do_end {
            let (_, ended) = ending.take().expect("an end event exists");
            if !lazy {
                done.clear();
                done.resize(jobs.len(), false);
            }
            for i in ended {
                let job = &mut jobs[i];
                job.account(now);
                sched.finish(job);
                let t = &workload.jobs[state[i].trace];
                estimator.ended(state[i].trace, t.work.duration());
                run.jobs.push(JobOutcome {
                    id: job.spec.id,
                    user: job.spec.user,
                    queue: job.spec.queue,
                    // The trace's size: an elastic job's changes as it runs.
                    gpus: t.spec.gpus,
                    submit: job.spec.submit,
                    start: job.first_start.unwrap_or(now),
                    end: now,
                    duration: t.work.duration(),
                    waited: job.waited,
                    starts: job.starts,
                    preemptions: job.preemptions,
                });
                done[i] = true;
                if lazy {
                    gone += 1;
                    if let Ok(k) = running.binary_search(&i) {
                        running.remove(k);
                    }
                }
            }
            if !lazy || gone * 2 > jobs.len() {
                retain_unmarked(&mut jobs, &done);
                retain_unmarked(&mut state, &done);
                if opts.reclaim.is_some() {
                    retain_unmarked(&mut started, &done);
                }
                if lazy {
                    renumber(&mut running, &done);
                    gone = 0;
                    done.clear();
                    done.resize(jobs.len(), false);
                }
            }
        }
        // A waiting job admitted before the predictor knew anything (a batch submitted
        // at once, Muri's `_pr` traces) gets the belief the predictor can give now
        // (issue 37), once enough jobs have ended and at each doubling of their number
        // since (`Estimator::refresh_due`). Beliefs given at admission stay as they were.
        // Every policy that reads beliefs: `blend`, and `edf`/`edf-backfill`, where a
        // deadline job without one would keep the deadline order ahead of every job
        // ranked by its belief, for good (on Muri's trace1, 99 of 1494 jobs).
        let reads_beliefs = opts.policy.kind == PolicyKind::Blend || opts.policy.kind.deadlines();
        if do_end && reads_beliefs && estimator.refresh_due() {
            for i in 0..jobs.len() {
                let known = jobs[i]
                    .belief
                    .as_ref()
                    .is_some_and(|b| !b.bins().is_empty());
                if known || jobs[i].running || (lazy && done[i]) {
                    continue;
                }
                let belief = estimator.refresh(state[i].trace).map(std::sync::Arc::new);
                sched.set_belief(&mut jobs[i], belief, now);
            }
        }
        if do_start {
            for &ti in &groups[next_group].1 {
                let t = &workload.jobs[ti];
                let mut spec = t.spec.clone();
                spec.estimate = estimator.admit(workload, ti);
                let mut job = SchedJob::new(spec);
                let elastic = opts.elastic.as_ref().and_then(|e| e.of(&t.spec, per_node));
                if let Some(e) = elastic {
                    // It waits for its minimum; the rest is lent after the pass.
                    job.spec.gpus = e.min;
                    job.elastic = Some(e);
                    if let Some(c) = run.elastic.as_mut() {
                        c.jobs += 1;
                    }
                }
                if opts.policy.kind == PolicyKind::Blend || opts.policy.kind.deadlines() {
                    job.belief = estimator.belief(ti).map(std::sync::Arc::new);
                }
                sched.admit(&mut job).expect("checked before the run");
                // The true remaining time (srtf's key) only where the policy is told the
                // true run time; `remaining` stays `None` for every other job.
                if opts.estimates.knows_truth(t) {
                    job.remaining = Some(t.work.units * t.work.unit_time);
                }
                jobs.push(job);
                if lazy {
                    done.push(false);
                }
                if opts.reclaim.is_some() {
                    started.push(now);
                }
                state.push(Progress {
                    trace: ti,
                    units: t.work.units,
                    unit_time: t.work.unit_time,
                    overhead: opts.overhead.seconds(t.model.as_deref(), t.spec.gpus),
                    min_nodes: t.spec.gpus.div_ceil(per_node) as usize,
                    elastic: elastic.map(|e| crate::elastic::ElasticRun::new(e, t.spec.gpus)),
                });
            }
            next_group += 1;
        }

        // Waiting jobs only need their counters brought up to date when the policy reads
        // them every pass (Tiresias' starvation clock); otherwise the core closes a wait
        // when the job starts, which keeps an event's work off the long queue.
        let account_waiting =
            opts.policy.kind == PolicyKind::Tiresias && opts.policy.starvation > 0.0;
        let advance = |job: &mut SchedJob, p: &mut Progress| {
            let dt = now - job.last_update;
            let rate = rate(job, p, opts.locality_penalty);
            job.account(now);
            if job.running {
                let mut progressed = (dt - p.overhead).max(0.0);
                if let Some(e) = p.elastic.as_mut().filter(|e| e.debt > 0.0) {
                    let paid = e.debt.min(progressed);
                    e.debt -= paid;
                    progressed -= paid;
                }
                p.units -= if rate == 1.0 {
                    progressed / p.unit_time
                } else {
                    progressed / p.unit_time * rate
                };
                if job.remaining.is_some() {
                    job.remaining = Some(p.units * p.unit_time);
                } else {
                    job.grow_estimate();
                }
            }
        };
        if lazy {
            for &i in &running {
                advance(&mut jobs[i], &mut state[i]);
            }
        } else {
            for (job, p) in jobs.iter_mut().zip(state.iter_mut()) {
                if job.running || account_waiting {
                    advance(job, p);
                }
            }
        }

        if !opts.windows.is_empty() {
            fence_windows(&mut jobs, &opts.windows, &node_names, now);
        }
        // The power budget's GPUs held out of the pass (none without one).
        let power_holds = match &opts.power_budget {
            Some(b) => crate::power::hold_for_budget(&mut sched, b, total_gpus),
            None => Vec::new(),
        };
        // Elastic jobs hand back their loans, so the pass gives them to waiting jobs
        // first, in the policy's order.
        let lent = match &opts.elastic {
            Some(_) if lazy => crate::elastic::lend_back(&mut sched, &mut jobs, &running),
            Some(_) => {
                let all: Vec<usize> = (0..jobs.len()).filter(|&i| jobs[i].running).collect();
                crate::elastic::lend_back(&mut sched, &mut jobs, &all)
            }
            None => Vec::new(),
        };
        let outcome = sched.pass(&mut jobs, now);
        for h in &power_holds {
            sched.release(h);
        }
        if let Some(b) = &opts.power_budget {
            let allowed = gpusched_core::power::busy_allowance(b.budget_w, total_gpus, b.watts);
            let busy_now = u64::from(total_gpus) - sched.free_gpus();
            debug_assert!(
                busy_now <= u64::from(allowed),
                "{busy_now} busy of {allowed}"
            );
        }
        if lazy {
            for d in &outcome.decisions {
                match *d {
                    gpusched_core::Decision::Start { index, .. } => {
                        if let Err(k) = running.binary_search(&index) {
                            running.insert(k, index);
                        }
                    }
                    // srtf, srsf and blend keep an ordered queue too, and preempt.
                    gpusched_core::Decision::Preempt { index, .. } => {
                        if let Ok(k) = running.binary_search(&index) {
                            running.remove(k);
                        }
                    }
                }
            }
        }
        if let Some(rq) = &opts.reclaim {
            for d in &outcome.decisions {
                if let gpusched_core::Decision::Start { index, .. } = d {
                    started[*index] = now;
                }
            }
            crate::reclaim::step(&mut sched, &mut jobs, &mut started, cluster, rq, now);
        }
        if let Some(e) = &opts.elastic {
            let all: Vec<usize>;
            let now_running: &[usize] = if lazy {
                &running
            } else {
                all = (0..jobs.len()).filter(|&i| jobs[i].running).collect();
                &all
            };
            let resized = crate::elastic::settle(
                &mut sched,
                &mut jobs,
                &mut state,
                now_running,
                &lent,
                now,
                e.resize_cost,
            );
            if let Some(c) = run.elastic.as_mut() {
                c.resizes += resized;
            }
        }
        run.passes += 1;
        busy = total_gpus as u64 - sched.free_gpus();
        if opts.powered_idle {
            powered_idle = idle_on_busy_nodes(sched.free_map());
            idle_nodes = whole_idle_nodes(sched.free_map());
        }
        if let Some(r) = recorder.as_mut() {
            r.observe(&jobs, &opts.policy);
        }
        let (n_running, waiting) = if lazy {
            ending = next_completion(&jobs, &state, running.iter().copied(), now, opts);
            (running.len(), jobs.len() - gone - running.len())
        } else {
            let all = (0..jobs.len()).filter(|&i| jobs[i].running);
            ending = next_completion(&jobs, &state, all, now, opts);
            let n = jobs.iter().filter(|j| j.running).count();
            (n, jobs.len() - n)
        };
        wakeup = sched.next_wakeup(&jobs, now);
        if let Some(b) = gpusched_core::live::next_boundary(&opts.windows, now) {
            wakeup = Some(wakeup.map_or(b, |w| w.min(b)));
        }
        run.timeline.push(Sample {
            time: now,
            queued: waiting as u32,
            running: n_running as u32,
            busy_gpus: busy as u32,
        });
        if run.passes.is_multiple_of(4096) {
            progress(run.jobs.len(), total);
        }
    }
    progress(run.jobs.len(), total);
    run.tenants = recorder.map(Recorder::finish);
    run.prediction = estimator.report();
    Ok(run)
}

/// Nodes on which no GPU is taken.
fn whole_idle_nodes(free: &gpusched_core::freemap::FreeMap) -> u64 {
    (0..free.nodes())
        .filter(|&i| {
            let node = gpusched_core::NodeId(i as u32);
            free.free(node) == free.capacity(node)
        })
        .count() as u64
}

/// Free GPUs on nodes where at least one GPU is taken.
fn idle_on_busy_nodes(free: &gpusched_core::freemap::FreeMap) -> u64 {
    (0..free.nodes())
        .map(|i| {
            let node = gpusched_core::NodeId(i as u32);
            let (f, cap) = (free.free(node), free.capacity(node));
            if f < cap {
                f as u64
            } else {
                0
            }
        })
        .sum()
}

fn rate(job: &SchedJob, p: &Progress, penalty: f64) -> f64 {
    let spread = match &job.placement {
        Some(pl) if penalty != 1.0 && pl.nodes() > p.min_nodes => 1.0 / penalty,
        _ => 1.0,
    };
    match &p.elastic {
        Some(e) => spread * e.rate(crate::elastic::size(job)),
        None => spread,
    }
}

/// Jobs submitted at (nearly) the same time, as (time, indices into the workload).
fn arrival_groups(w: &Workload) -> Vec<(f64, Vec<usize>)> {
    let mut groups: Vec<(f64, Vec<usize>)> = Vec::new();
    for (i, j) in w.jobs.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if is_close(g.0, j.spec.submit) => g.1.push(i),
            _ => groups.push((j.spec.submit, vec![i])),
        }
    }
    groups
}

fn is_close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// The next completion event: the earliest predicted end, with every running job whose
/// end is within 1e-9 of it (grouped greedily in queue order, as the peers do).
/// `running` lists the running jobs in list order.
fn next_completion(
    jobs: &[SchedJob],
    state: &[Progress],
    running: impl Iterator<Item = usize>,
    now: f64,
    opts: &SimOptions,
) -> Option<(f64, Vec<usize>)> {
    let penalty = opts.locality_penalty;
    let end_of = |i: usize| {
        let p = &state[i];
        let r = rate(&jobs[i], p, penalty);
        let debt = p.elastic.as_ref().map_or(0.0, |e| e.debt);
        if r == 1.0 {
            now + debt + p.units * p.unit_time
        } else {
            now + debt + p.units * p.unit_time / r
        }
    };
    let ends: Vec<(usize, f64)> = running.map(|i| (i, end_of(i))).collect();
    let min = ends.iter().map(|e| e.1).min_by(f64::total_cmp)?;
    let window = min + min.abs() * 1e-6;
    let mut groups: Vec<(f64, Vec<usize>)> = Vec::new();
    for &(i, e) in ends.iter().filter(|e| e.1 <= window) {
        match groups.iter_mut().find(|g| is_close(g.0, e)) {
            Some(g) => g.1.push(i),
            None => groups.push((e, vec![i])),
        }
    }
    groups.into_iter().min_by(|a, b| a.0.total_cmp(&b.0))
}

/// Drops the elements whose flag in `marked` is set, keeping the others in order.
fn retain_unmarked<T>(items: &mut Vec<T>, marked: &[bool]) {
    let mut i = 0;
    items.retain(|_| {
        i += 1;
        !marked[i - 1]
    });
}

/// Indices into a list after the marked elements were dropped from it (none of `indices`
/// is marked; they stay sorted).
fn renumber(indices: &mut [usize], marked: &[bool]) {
    let mut dropped = 0;
    let mut next = 0;
    for (i, &m) in marked.iter().enumerate() {
        while next < indices.len() && indices[next] == i {
            indices[next] -= dropped;
            next += 1;
        }
        if m {
            dropped += 1;
        }
    }
}

/// Each job's node set under the windows at `now` (what it has left to run, else its
/// estimate, as how long it would run), one set shared by the jobs kept out by the same
/// windows. Running jobs too: under `repack` they are placed again at every pass.
fn fence_windows(
    jobs: &mut [SchedJob],
    windows: &[gpusched_core::live::Window],
    names: &[String],
    now: f64,
) {
    use gpusched_core::live::{keeping_out, outside};
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut free_of = std::collections::BTreeMap::new();
    for j in jobs.iter_mut() {
        let until = j.remaining.or(j.spec.estimate).map(|e| now + e);
        let out = keeping_out(windows, now, until);
        j.spec.nodes = if out.is_empty() {
            Vec::new()
        } else {
            let free = free_of
                .entry(out)
                .or_insert_with_key(|out| outside(windows, out, &names));
            vec![free.clone()]
        };
    }
}

#[cfg(test)]
mod window_tests {
    //! Reservations' windows in the simulator: the live cluster's rule on node indices.
    use super::*;
    use gpusched_core::live::Window;

    /// Two 4-GPU nodes; a window on node 0 from t=50 to t=250. At t=0: job 0 (100 s)
    /// would run into it, so it takes node 1; job 1 (40 s) ends before it, so it runs
    /// on node 0; job 2 (100 s) waits for node 1 (t=100), node 0 staying out until 250.
    #[test]
    fn a_window_keeps_out_what_would_run_into_it() {
        let csv = "submit,gpus,duration\n0,4,100\n0,4,40\n0,4,100\n";
        let w = crate::trace::native::parse_csv("w.csv", csv).unwrap();
        let cluster = Cluster::parse_shape("2x4", "V100").unwrap();
        let mut opts = SimOptions::new(PolicyConfig::new(PolicyKind::Backfill));
        let starts = |opts: &SimOptions| {
            let run = simulate(&w, &cluster, opts, &mut |_, _| {}).unwrap();
            let mut s: Vec<(u64, f64)> = run.jobs.iter().map(|j| (j.id.0, j.start)).collect();
            s.sort_by_key(|x| x.0);
            s.into_iter().map(|x| x.1).collect::<Vec<f64>>()
        };
        assert_eq!(starts(&opts), [0.0, 0.0, 40.0], "without the window");
        opts.windows = vec![Window {
            name: "m".into(),
            nodes: vec!["0".into()],
            start: 50.0,
            end: 250.0,
            maintenance: true,
        }];
        assert_eq!(starts(&opts), [0.0, 0.0, 100.0], "with it");
    }
}
