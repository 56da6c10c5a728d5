//! The round loop: arrivals join at a round's start, the policy plans the round, each
//! planned job runs the round (or until it ends) at its speed on its type, and the round
//! ends when the last of them stops (a full round unless all end sooner). When nothing
//! can run, time jumps to the next arrival.

use gpusched_core::hetero::rounds::Rounds;
use gpusched_core::hetero::{self, GpuTypes, HeteroJob, RoundPlan};

use super::{HeteroCluster, HeteroOptions, HeteroPolicy, Throughputs};
use crate::engine::{JobOutcome, Sample, SimRun};
use crate::trace::Workload;

/// Why a heterogeneous run could not happen.
#[derive(Debug, thiserror::Error)]
pub enum HeteroError {
    #[error("{file}:{line}: job {job} asks for {gpus} GPUs of one type, but the largest type of the cluster ({model}) has {max}; ask for fewer or add GPUs of a type")]
    TooLarge {
        file: String,
        line: u64,
        job: u64,
        gpus: u32,
        model: String,
        max: u32,
    },
    #[error("{file}:{line}: job {job} asks for GPU model {model}; the heterogeneous simulator places jobs by speed and ignores gpu_model: drop the column, or give the job speed 0 elsewhere in the throughput table")]
    ModelAsked {
        file: String,
        line: u64,
        job: u64,
        model: String,
    },
    #[error("the simulation stopped at t={time}: {waiting} job(s) wait and none can run (each needs more GPUs of one type than any type has free while nothing runs); please report this with the trace")]
    Stuck { time: f64, waiting: usize },
}

/// A job in the cluster.
struct Active {
    trace: usize,
    view: HeteroJob,
    /// Reference seconds of work left.
    remaining: f64,
    submit: f64,
    first_start: Option<f64>,
    ran_last: bool,
    run_time: f64,
    starts: u32,
    preemptions: u32,
    /// Its type last round (direct FIFO never stops a running job; aware, it may move it
    /// up to a faster type).
    kept: Option<usize>,
}

/// Runs `workload` on `cluster` with the speeds of `table`.
pub fn simulate_hetero(
    workload: &Workload,
    cluster: &HeteroCluster,
    table: &Throughputs,
    opts: &HeteroOptions,
) -> Result<SimRun, HeteroError> {
    let types = cluster.types();
    let (max, max_k) = types
        .gpus
        .iter()
        .enumerate()
        .map(|(k, &g)| (g, k))
        .max_by_key(|&(g, k)| (g, std::cmp::Reverse(k)))
        .unwrap_or((0, 0));
    for j in &workload.jobs {
        if let Some(m) = &j.spec.gpu_model {
            return Err(HeteroError::ModelAsked {
                file: workload.source.clone(),
                line: j.line,
                job: j.spec.id.0,
                model: m.clone(),
            });
        }
        if j.spec.gpus > max {
            return Err(HeteroError::TooLarge {
                file: workload.source.clone(),
                line: j.line,
                job: j.spec.id.0,
                gpus: j.spec.gpus,
                model: types.names[max_k].clone(),
                max,
            });
        }
    }
    let total_gpus = types.gpus.iter().sum::<u32>();
    let mut run = SimRun {
        jobs: Vec::with_capacity(workload.jobs.len()),
        timeline: Vec::new(),
        total_gpus,
        busy_gpu_seconds: 0.0,
        powered_idle_gpu_seconds: 0.0,
        passes: 0,
        tenants: None,
        estimates: "throughput table (oracle)".to_string(),
        prediction: None,
        elastic: None,
        idle_node_seconds: 0.0,
    };
    let mut rounds = Rounds::new(types.len(), opts.round, opts.min_reset);
    if opts.policy == HeteroPolicy::GavelFifo || opts.policy == HeteroPolicy::GavelFifoAware {
        rounds = rounds.only_where_shared();
    }
    let mut active: Vec<Active> = Vec::new();
    let mut next = 0;
    let mut now = workload.jobs.first().map_or(0.0, |j| j.spec.submit);
    let mut forced = false;
    let mut ended_types: Vec<(gpusched_core::JobId, usize)> = Vec::new();
    loop {
        while next < workload.jobs.len() && workload.jobs[next].spec.submit <= now {
            let t = &workload.jobs[next];
            let speeds = table.speeds(t.known.name.as_deref(), t.spec.gpus, &types.names);
            let view = HeteroJob {
                id: t.spec.id,
                gpus: t.spec.gpus,
                speeds: speeds.iter().map(|s| s.factor).collect(),
                weight: 1.0,
                attained: 0.0,
            };
            rounds.add(view.id);
            active.push(Active {
                trace: next,
                view,
                remaining: t.work.duration(),
                submit: t.spec.submit,
                first_start: None,
                ran_last: false,
                run_time: 0.0,
                starts: 0,
                preemptions: 0,
                kept: None,
            });
            next += 1;
        }
        if active.is_empty() {
            match workload.jobs.get(next) {
                Some(j) => {
                    now = j.spec.submit;
                    continue;
                }
                None => break,
            }
        }
        let views: Vec<HeteroJob> = active.iter().map(|a| a.view.clone()).collect();
        let plan = plan_round(
            opts,
            &types,
            &views,
            &active,
            &mut rounds,
            now,
            &mut ended_types,
        );
        run.passes += 1;
        let mut end = now;
        let mut busy = 0u32;
        let mut ended = Vec::new();
        for (i, a) in active.iter_mut().enumerate() {
            let Some(k) = plan[i] else {
                if a.ran_last {
                    a.preemptions += 1;
                }
                a.ran_last = false;
                a.kept = None;
                continue;
            };
            let speed = a.view.speeds[k];
            let t = (a.remaining / speed).min(opts.round);
            if !a.ran_last {
                a.starts += 1;
            }
            a.first_start.get_or_insert(now);
            a.ran_last = true;
            a.kept = Some(k);
            a.run_time += t;
            a.remaining -= t * speed;
            a.view.attained += t * speed * a.view.gpus as f64;
            rounds.ran(a.view.id, k, t);
            busy += a.view.gpus;
            run.busy_gpu_seconds += t * a.view.gpus as f64;
            end = end.max(now + t);
            // Within a part in 10^9 of its work: float noise, not work left.
            if a.remaining <= 1e-9 * workload.jobs[a.trace].work.duration() {
                ended.push((i, now + t));
            }
        }
        run.timeline.push(Sample {
            time: now,
            queued: (active.len() - plan.iter().filter(|p| p.is_some()).count()) as u32,
            running: plan.iter().filter(|p| p.is_some()).count() as u32,
            busy_gpus: busy,
        });
        for &(i, at) in ended.iter().rev() {
            let a = active.remove(i);
            // Gavel's agnostic FIFO hands an ended job's type to the head of the queue.
            if let Some(k) = rounds
                .share(a.view.id)
                .and_then(|row| row.iter().position(|&x| x >= 1.0))
            {
                ended_types.push((a.view.id, k));
            }
            rounds.remove(a.view.id);
            let t = &workload.jobs[a.trace];
            run.jobs.push(JobOutcome {
                id: t.spec.id,
                user: t.spec.user,
                queue: t.spec.queue,
                gpus: t.spec.gpus,
                submit: a.submit,
                start: a.first_start.unwrap_or(at),
                end: at,
                duration: t.work.duration(),
                waited: (at - a.submit) - a.run_time,
                starts: a.starts,
                preemptions: a.preemptions,
            });
        }
        if end > now {
            now = end;
            forced = false;
        } else if let Some(j) = workload.jobs.get(next) {
            // Nothing ran: wait for the next arrival (Gavel jumps there too).
            now = j.spec.submit;
        } else if !forced {
            // Nothing runs and nothing will arrive: Gavel lets the allocation be
            // recomputed at once, so jobs still without a share get one.
            rounds.allow_recompute();
            forced = true;
        } else {
            return Err(HeteroError::Stuck {
                time: now,
                waiting: active.len(),
            });
        }
    }
    // Completion order, ties by id, as the event engine reports.
    run.jobs
        .sort_by(|a, b| a.end.total_cmp(&b.end).then(a.id.cmp(&b.id)));
    Ok(run)
}

/// The round's plan under the policy.
fn plan_round(
    opts: &HeteroOptions,
    types: &GpuTypes,
    views: &[HeteroJob],
    active: &[Active],
    rounds: &mut Rounds,
    now: f64,
    ended: &mut Vec<(gpusched_core::JobId, usize)>,
) -> RoundPlan {
    let aware = opts.policy.aware();
    match opts.policy {
        HeteroPolicy::Fifo | HeteroPolicy::FifoAware => {
            let kept: Vec<Option<usize>> = active.iter().map(|a| a.kept).collect();
            hetero::fifo::choose(views, &kept, types, aware)
        }
        HeteroPolicy::Las | HeteroPolicy::LasAware => hetero::las::choose(views, types, aware),
        HeteroPolicy::MaxMin | HeteroPolicy::MaxMinAware => {
            rounds.plan(views, types, now, aware, |js| {
                hetero::maxmin::allocation(js, types, aware)
            })
        }
        HeteroPolicy::GavelFifo | HeteroPolicy::GavelFifoAware => {
            // The type each job had in the last allocation (agnostic FIFO keeps it).
            let previous: Vec<Option<usize>> = views
                .iter()
                .map(|j| {
                    rounds
                        .share(j.id)
                        .and_then(|row| row.iter().position(|&x| x >= 1.0))
                })
                .collect();
            rounds.plan(views, types, now, aware, |js| {
                if aware {
                    hetero::fifo::allocation(js, &previous, types, true)
                } else {
                    let mut gone = std::mem::take(ended);
                    gone.sort();
                    gavel_base_fifo(js, &previous, &gone, types)
                }
            })
        }
    }
}

/// Gavel's agnostic FIFO allocation as its code behaves (`policies/fifo.py`, mode
/// `base`, at commit c4fa400): the type it draws at random for a new job is never used;
/// the job gets the `worker_type` a loop left behind: the last, in name order, of the
/// types with a GPU left (Gavel registers types sorted: k80, p100, v100), while any type
/// has room for the job. When that type's count reaches 0 exactly, Gavel drops a type
/// drawn at random from the candidates; here the type that filled (no randomness), so
/// types fill in reverse name order. Jobs keep their type, and each job that ended since
/// the last allocation (by id) first hands its type to the head of the queue if there is
/// room. Emulated so that its numbers can be compared; `fifo` is the agnostic FIFO to
/// use (it places by free GPUs).
fn gavel_base_fifo(
    jobs: &[HeteroJob],
    previous: &[Option<usize>],
    ended: &[(gpusched_core::JobId, usize)],
    types: &GpuTypes,
) -> Vec<Vec<f64>> {
    let n = types.len();
    let mut free: Vec<i64> = types.gpus.iter().map(|&g| g as i64).collect();
    for (j, p) in jobs.iter().zip(previous) {
        if let Some(k) = *p {
            free[k] -= j.gpus as i64;
        }
    }
    let mut rows = vec![vec![0.0; n]; jobs.len()];
    for (row, p) in rows.iter_mut().zip(previous) {
        if let Some(k) = *p {
            row[k] = 1.0;
        }
    }
    // Types with a GPU left, in name order.
    let mut open: Vec<usize> = (0..n).filter(|&k| free[k] > 0).collect();
    open.sort_by(|&a, &b| types.names[a].cmp(&types.names[b]));
    let mut queue = (0..jobs.len())
        .filter(|&i| previous[i].is_none())
        .peekable();
    let mut handed = vec![false; jobs.len()];
    for &(_, k) in ended {
        if let Some(&i) = queue.peek() {
            if free[k] >= jobs[i].gpus as i64 {
                free[k] -= jobs[i].gpus as i64;
                rows[i][k] = 1.0;
                handed[i] = true;
                queue.next();
            }
        }
    }
    for (i, j) in jobs.iter().enumerate() {
        if previous[i].is_some() || handed[i] {
            continue;
        }
        let room = open.iter().any(|&k| free[k] >= j.gpus as i64);
        let Some(&last) = open.last().filter(|_| room) else {
            break;
        };
        free[last] -= j.gpus as i64;
        rows[i][last] = 1.0;
        if free[last] == 0 {
            open.pop();
        }
    }
    rows
}
