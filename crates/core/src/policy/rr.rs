//! `rr`: round-robin time slicing (Gandiva, OSDI 2018; issue 37 item 3). When more jobs
//! want GPUs than there are, each gets a turn: a running job that has run its quantum
//! (`PolicyConfig::rr_quantum`) since its turn began goes behind the jobs that have
//! waited since before its quantum ran out, and is preempted through the checkpoint
//! contract for them. While nobody waits, nobody is stopped.
//!
//! The order: running jobs inside their quantum first (by when their turn began), then
//! everyone else by when they became ready for a turn: a waiting job since it was
//! submitted or last stopped, a running job past its quantum since the quantum ran out.
//! Ties by the previous pass's rank (the sort's rule), so equal times keep their order.
//!
//! **Time slicing under another policy** (`PolicyConfig::time_slice`, for the policies
//! of `PolicyKind::sliceable`: `fifo`, `priority`, `sjf`, `srtf`, `srsf`, `blend`): the
//! same turns, but the jobs that have never run go first, in that policy's order
//! ([`slice`]). The pass is the preemptive one, so
//! `fifo`, `priority` and `sjf` no longer hold every job behind a head job that does not
//! fit; and a preemptive policy stops a running job only at the end of its turn.
//!
//! A quantum shorter than a few checkpoint-and-restore cycles would spend the GPUs on
//! switching: the simulator refuses one below `--quantum-floor` times the switching cost
//! it charges, and the live server's `--min-runtime` protects each turn's start.

use crate::policy::PolicyConfig;
use crate::schedule::SchedJob;
use crate::Seconds;

/// The sort key under `rr` (smaller first); see the module docs.
pub fn key(cfg: &PolicyConfig, job: &SchedJob, now: Seconds) -> (f64, f64) {
    let ends = job.turn + cfg.rr_quantum;
    match job.running {
        true if now < ends => (0.0, job.turn),
        true => (1.0, ends),
        false => (1.0, job.turn),
    }
}

/// Time slicing under another policy ([`PolicyConfig::time_slice`]): `order` (every
/// job, in the policy's order) is regrouped. The running jobs inside their turn come
/// first: a turn is not cut short, so a preemptive policy stops a job only at the end
/// of its turn, and two jobs cannot swap places at every pass. Then the jobs that have
/// never had a turn, in the policy's order. Then every job that has had one, in turn:
/// by when it became ready for the next (a waiting job since it was stopped, a running
/// job since its turn ran out), the policy's order among equals. So a new job gets its
/// first turn soon (as in Tiresias' first queue, or Gandiva's), the policy decides which
/// new job goes first, and the jobs that have run take turns as under `rr` (ranking
/// them by the policy instead starves the last of them: a job that has had five turns
/// would wait for every newcomer to have had five); a job whose turn is over keeps its
/// GPUs while nobody waits for them.
pub fn slice(cfg: &PolicyConfig, jobs: &[SchedJob], order: &mut [usize], now: Seconds) {
    let group = |j: &SchedJob| match j.running {
        true if now < j.turn + cfg.rr_quantum => (0u8, 0.0),
        true => (2, j.turn + cfg.rr_quantum),
        false if j.starts == 0 => (1, 0.0),
        false => (2, j.turn),
    };
    // A stable sort keeps the policy's order among equals.
    order.sort_by(|&a, &b| {
        let (ga, ta) = group(&jobs[a]);
        let (gb, tb) = group(&jobs[b]);
        ga.cmp(&gb).then(ta.total_cmp(&tb))
    });
}

/// When the next running job's quantum runs out, if any job waits for a turn.
pub fn next_turn(cfg: &PolicyConfig, jobs: &[SchedJob], now: Seconds) -> Option<Seconds> {
    if !jobs.iter().any(|j| !j.running) {
        return None;
    }
    jobs.iter()
        .filter(|j| j.running)
        .map(|j| j.turn + cfg.rr_quantum)
        .filter(|&t| t > now)
        .min_by(|a, b| a.total_cmp(b))
}

#[cfg(test)]
mod tests {
    use crate::schedule::{PreemptMode, SchedJob, Scheduler};
    use crate::{Cluster, Decision, JobId, JobSpec, PlacementStrategy, PolicyConfig, PolicyKind};

    fn job(id: u64, submit: f64) -> SchedJob {
        SchedJob::new(JobSpec {
            id: JobId(id),
            gpus: 1,
            gpu_model: None,
            user: Default::default(),
            queue: Default::default(),
            account: Default::default(),
            priority: 0,
            submit,
            estimate: None,
            cpu_milli: 0,
            mem_mib: 0,
            generic: Default::default(),
            gang: None,
            nodes: Vec::new(),
            prefer: Vec::new(),
            deadline: None,
        })
    }

    /// Three one-GPU jobs on one GPU with a 100 s quantum: each pass at the wake-up the
    /// scheduler asks for, what it starts and stops.
    #[test]
    fn three_jobs_take_turns_of_one_quantum_on_one_gpu() {
        let cluster = Cluster::uniform(1, 1, 1, "V100");
        let mut policy = PolicyConfig::new(PolicyKind::Rr);
        policy.rr_quantum = 100.0;
        let mut s = Scheduler::new(
            &cluster,
            policy,
            PlacementStrategy::Consolidated,
            PreemptMode::Repack,
        );
        let mut jobs: Vec<SchedJob> = (1..=3).map(|i| job(i, i as f64)).collect();
        for j in &mut jobs {
            s.admit(j).expect("fits");
        }
        let mut now = 3.0;
        let mut log = Vec::new();
        for _ in 0..5 {
            for j in jobs.iter_mut() {
                j.account(now);
            }
            let d = s.pass(&mut jobs, now).decisions;
            let what: Vec<String> = d
                .iter()
                .map(|d| match d {
                    Decision::Start { job, .. } => format!("start {}", job.0),
                    Decision::Preempt { job, .. } => format!("stop {}", job.0),
                })
                .collect();
            log.push(format!("t={now}: {}", what.join(", ")));
            match s.next_wakeup(&jobs, now) {
                Some(t) => now = t,
                None => break,
            }
        }
        assert_eq!(
            log.join("\n"),
            "t=3: start 1\n\
             t=103: start 2, stop 1\n\
             t=203: start 3, stop 2\n\
             t=303: start 1, stop 3\n\
             t=403: start 2, stop 1"
        );
        // Alone, a job is never stopped: no wake-up is asked for.
        let mut alone = vec![job(9, 0.0)];
        let mut s = Scheduler::new(
            &cluster,
            PolicyConfig::new(PolicyKind::Rr),
            PlacementStrategy::Consolidated,
            PreemptMode::Repack,
        );
        s.admit(&mut alone[0]).expect("fits");
        s.pass(&mut alone, 0.0);
        assert_eq!(s.next_wakeup(&alone, 0.0), None);
    }

    /// `srtf` taking turns of 100 s on one GPU: a short job that arrives waits for the
    /// running job's turn to end instead of stopping it at once; when a turn ends the
    /// waiting jobs that have never run go first, in srtf's order (the shortest
    /// remaining first), not by how long they waited as under `rr`.
    #[test]
    fn a_sliced_policy_stops_jobs_only_at_turn_ends_and_keeps_its_order() {
        let cluster = Cluster::uniform(1, 1, 1, "V100");
        let mut policy = PolicyConfig::new(PolicyKind::Srtf);
        policy.rr_quantum = 100.0;
        policy.time_slice = true;
        assert!(policy.sliced() && policy.preemptive());
        let mut s = Scheduler::new(
            &cluster,
            policy,
            PlacementStrategy::Consolidated,
            PreemptMode::Repack,
        );
        let sized = |id, submit, estimate| {
            let mut j = job(id, submit);
            j.spec.estimate = Some(estimate);
            j
        };
        // 1 (long) first, then 2 (longest) at 10 and 3 (short) at 20.
        let arrivals = [
            sized(1, 0.0, 1000.0),
            sized(2, 10.0, 2000.0),
            sized(3, 20.0, 50.0),
        ];
        let mut jobs: Vec<SchedJob> = Vec::new();
        let mut log = Vec::new();
        let mut pass = |s: &mut Scheduler, jobs: &mut Vec<SchedJob>, now: f64| {
            for j in jobs.iter_mut() {
                j.account(now);
            }
            let d = s.pass(jobs, now).decisions;
            let what: Vec<String> = d
                .iter()
                .map(|d| match d {
                    Decision::Start { job, .. } => format!("start {}", job.0),
                    Decision::Preempt { job, .. } => format!("stop {}", job.0),
                })
                .collect();
            log.push(format!("t={now}: {}", what.join(", ")));
        };
        for a in arrivals {
            let now = a.spec.submit;
            jobs.push(a);
            let last = jobs.len() - 1;
            s.admit(&mut jobs[last]).expect("fits");
            pass(&mut s, &mut jobs, now);
        }
        let mut now = 20.0;
        for _ in 0..2 {
            now = s
                .next_wakeup(&jobs, now)
                .expect("a turn ends while jobs wait");
            pass(&mut s, &mut jobs, now);
        }
        assert_eq!(
            log.join("\n"),
            "t=0: start 1\n\
             t=10: \n\
             t=20: \n\
             t=100: start 3, stop 1\n\
             t=200: start 2, stop 3"
        );
        // At 100 srtf's order put 3 (50 s) before 2 (2000 s), where rr would have given
        // the turn to 2, waiting since 10. At 200, 2 has had no turn and 1 has had one:
        // 2 goes first though srtf ranks 1 (900 s left) ahead of it.
        // Plain srtf stops the long job as soon as the short one arrives.
        let mut plain = Scheduler::new(
            &cluster,
            PolicyConfig::new(PolicyKind::Srtf),
            PlacementStrategy::Consolidated,
            PreemptMode::Repack,
        );
        let mut jobs = vec![sized(1, 0.0, 1000.0)];
        plain.admit(&mut jobs[0]).expect("fits");
        plain.pass(&mut jobs, 0.0);
        jobs.push(sized(2, 10.0, 50.0));
        plain.admit(&mut jobs[1]).expect("fits");
        jobs[0].account(10.0);
        let stopped: Vec<u64> = plain
            .pass(&mut jobs, 10.0)
            .decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Preempt { job, .. } => Some(job.0),
                Decision::Start { .. } => None,
            })
            .collect();
        assert_eq!(stopped, vec![1]);
        // And a policy whose order is not one key per job cannot take turns.
        let mut drf = PolicyConfig::new(PolicyKind::Drf);
        drf.time_slice = true;
        assert!(!drf.sliced() && !drf.preemptive());
    }
}
