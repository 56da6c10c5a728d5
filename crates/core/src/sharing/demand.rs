//! FGD's target workload from recent demand: the pods (jobs) submitted within a window,
//! instead of the whole pod list (the simulator's default) or only the jobs on the
//! cluster now.
//!
//! FGD measures a node's fragmentation as the GPU capacity the target workload's types
//! cannot use. On a live cluster the jobs that matter are those users submit, and they
//! come and go: a target made of the jobs present when a share is placed forgets the
//! 3-GPU job that ended a minute ago and will be submitted again. A window of recent
//! submissions (the live server's `--share-demand-window`, one hour by default) keeps it.
//!
//! Which entries count, at `now` with window `w`:
//! - an entry still `active` (waiting or running) always counts, however old: it is
//!   demand now;
//! - any other entry counts if it was submitted less than `w` ago (`now - submitted <
//!   w`); one submitted exactly `w` ago no longer does. Entries from the future (a clock
//!   step) count: they are recent.
//!
//! Then one rule the window alone does not give: **the target always asks for whole
//! GPUs.** If no counted entry asks for whole GPUs, one pod of one whole GPU (no CPU, no
//! memory, any model) is added; an empty window gives only that pod. Why: FGD counts as
//! fragment only capacity the target's types cannot use. With shares alone in the target
//! a fresh GPU fits every share type, so opening one costs FGD nothing, while adding a
//! 0.25 share to a GPU with 0.5 free leaves 0.25 that a 0.5 type cannot use: FGD scores
//! the fresh GPU higher (50 against 46) and spreads the shares. On the live cluster a GPU
//! that holds a share is lost to whole-GPU jobs until its last share ends, so whole GPUs
//! are always part of the demand the placement must protect; with one whole-GPU pod in
//! the target, a GPU with shares on it is already fragment for it and a fresh one is not,
//! and FGD fills opened GPUs first. A window that holds whole-GPU jobs already says so,
//! with their real sizes and weights, and nothing is added.

use super::cluster::SharePod;
use crate::Seconds;

/// One entry of the demand: when it was submitted, whether it still waits or runs, and
/// what it asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct Demand<A> {
    pub submitted: Seconds,
    pub active: bool,
    pub ask: A,
}

/// Whether an entry submitted at `submitted` counts at `now` with a window of `window`
/// seconds (see the module). Callers with many entries use it to skip building the
/// ones that do not.
pub fn counts(submitted: Seconds, active: bool, now: Seconds, window: Seconds) -> bool {
    active || now - submitted < window
}

/// The asks that count at `now` with a window of `window` seconds (see the module).
pub fn recent<A>(demand: &[Demand<A>], now: Seconds, window: Seconds) -> impl Iterator<Item = &A> {
    demand
        .iter()
        .filter(move |d| counts(d.submitted, d.active, now, window))
        .map(|d| &d.ask)
}

/// Whether a pod asks for whole GPUs.
fn whole(p: &SharePod) -> bool {
    p.num_gpu > 0 && p.gpu_milli >= super::MILLI
}

/// The pod of one whole GPU the target gets when its demand has none.
pub fn one_whole_gpu() -> SharePod {
    SharePod {
        name: String::new(),
        cpu_milli: 0,
        mem_mib: 0,
        num_gpu: 1,
        gpu_milli: super::MILLI,
        models: Vec::new(),
    }
}

/// FGD's target workload at `now`: the pods of the window, in the order given, and one
/// pod of one whole GPU if none of them asks for whole GPUs (see the module).
pub fn target_pods(demand: &[Demand<SharePod>], now: Seconds, window: Seconds) -> Vec<SharePod> {
    let mut pods: Vec<SharePod> = recent(demand, now, window).cloned().collect();
    if !pods.iter().any(whole) {
        pods.push(one_whole_gpu());
    }
    pods
}

/// A live job's ask in FGD's terms: `gpus` whole GPUs, or a share of `milli` thousandths
/// of one GPU (`gpus` 0); no CPU, memory or model (the live placement compares GPUs).
/// A job that asks for neither (CPU only, or a memory share not yet placed) is `None`.
pub fn live_pod(gpus: u32, milli: Option<u32>) -> Option<SharePod> {
    let (num_gpu, gpu_milli) = match (gpus, milli) {
        (g, _) if g > 0 => (g, super::MILLI),
        (_, Some(m)) if m > 0 => (1, m.min(super::MILLI)),
        _ => return None,
    };
    Some(SharePod {
        num_gpu,
        gpu_milli,
        ..one_whole_gpu()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(submitted: Seconds, active: bool, gpus: u32, milli: Option<u32>) -> Demand<SharePod> {
        Demand {
            submitted,
            active,
            ask: live_pod(gpus, milli).unwrap(),
        }
    }

    fn shape(pods: &[SharePod]) -> Vec<(u32, u32)> {
        pods.iter().map(|p| (p.num_gpu, p.gpu_milli)).collect()
    }

    const HOUR: Seconds = 3600.0;

    #[test]
    fn the_window_keeps_what_was_submitted_less_than_its_length_ago() {
        let now = 10_000.0;
        let demand = [
            d(now - HOUR - 1.0, false, 0, Some(100)), // ended, before the window
            d(now - HOUR, false, 0, Some(200)),       // exactly the window ago: out
            d(now - HOUR + 0.001, false, 0, Some(300)), // just inside
            d(now, false, 0, Some(400)),              // submitted now
            d(now + 5.0, false, 0, Some(500)),        // a clock step: recent
        ];
        let target = target_pods(&demand, now, HOUR);
        assert_eq!(
            shape(&target),
            vec![(1, 300), (1, 400), (1, 500), (1, 1000)],
            "in-window shares, then the whole GPU no share asked for"
        );
    }

    #[test]
    fn waiting_and_running_jobs_count_however_old() {
        let now = 100.0 * HOUR;
        let demand = [
            d(0.0, true, 3, None),  // a 3-GPU job waiting for 100 hours
            d(0.0, false, 2, None), // ended long ago
            d(now - 60.0, false, 0, Some(250)),
        ];
        assert_eq!(
            shape(&target_pods(&demand, now, HOUR)),
            vec![(3, 1000), (1, 250)]
        );
    }

    #[test]
    fn whole_gpu_jobs_of_the_window_are_counted_and_nothing_is_added() {
        let now = 5000.0;
        let demand = [
            d(now - 10.0, false, 0, Some(500)),
            d(now - 20.0, false, 4, None),
            d(now - 30.0, true, 0, Some(250)),
        ];
        let target = target_pods(&demand, now, HOUR);
        assert_eq!(shape(&target), vec![(1, 500), (4, 1000), (1, 250)]);
    }

    #[test]
    fn an_empty_window_falls_back_to_one_whole_gpu() {
        let now = 50.0 * HOUR;
        assert_eq!(shape(&target_pods(&[], now, HOUR)), vec![(1, 1000)]);
        // Everything ended before the window: the same.
        let old = [d(0.0, false, 0, Some(500)), d(1.0, false, 8, None)];
        assert_eq!(shape(&target_pods(&old, now, HOUR)), vec![(1, 1000)]);
        // A zero window keeps only what is active.
        let mixed = [d(now, false, 2, None), d(now, true, 0, Some(500))];
        assert_eq!(
            shape(&target_pods(&mixed, now, 0.0)),
            vec![(1, 500), (1, 1000)]
        );
    }

    #[test]
    fn live_jobs_that_ask_for_no_gpu_are_not_demand() {
        assert_eq!(live_pod(0, None), None);
        assert_eq!(live_pod(0, Some(0)), None);
        let p = live_pod(2, None).unwrap();
        assert_eq!((p.num_gpu, p.gpu_milli, p.cpu_milli), (2, 1000, 0));
        let s = live_pod(0, Some(250)).unwrap();
        assert_eq!((s.num_gpu, s.gpu_milli), (1, 250));
    }
}
