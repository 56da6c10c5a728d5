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
}
