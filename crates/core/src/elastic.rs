//! Elastic jobs (issue 37 item 2): a job that runs on any number of GPUs from `min` to
//! `max` on one node. The core gives each its minimum first, like any rigid job of that
//! size, then lends the GPUs the policy left idle to the elastic jobs where they gain most,
//! and takes them back as soon as a waiting job needs them (AFS, NSDI 2021, and Pollux,
//! OSDI 2021, grow and shrink jobs the same way; neither's code is used here).
//!
//! - **Scaling model.** Amdahl's law with a serial fraction: on `n` GPUs a job runs
//!   `1 / (serial + (1 - serial) / n)` times as fast as on one. The fraction is the job's
//!   own (declared), else [`DEFAULT_SERIAL`]. A job's throughput on `n` GPUs relative to
//!   `m` is `speedup(n) / speedup(m)`.
//! - **Spreading** ([`spread`]): idle GPUs go one at a time to the job whose run time
//!   shrinks most by one more GPU (`1 - speedup(n) / speedup(n + 1)`, the share of its
//!   remaining time saved), on that job's node, up to its `max`; ties to the earlier job
//!   in the caller's order. A running job is only grown when what it saves
//!   (`remaining * (1 - speedup(a) / speedup(b))`) is at least [`GROW_PAYBACK`] times the
//!   resize's cost, since a resize is a checkpoint and a restart; a job just starting
//!   grows for free.
//! - **Taking back** ([`take_back`]): a waiting job that needs GPUs on a node where the
//!   idle GPUs and the elastic jobs' GPUs above their minimum would make room shrinks the
//!   fewest elastic jobs it can, largest loan first; never below the minimum.
//!
//! The simulator applies these at every event (a resize costs `--resize-cost` seconds of
//! progress); the live server through the checkpoint contract: the job is asked to save
//! and stop, and restarts with its new `CUDA_VISIBLE_DEVICES` and `WORLD_SIZE`.

use crate::Seconds;

/// Amdahl's serial fraction for a job that declares none: 5 % of its time does not
/// speed up with more GPUs (a data-parallel job whose all-reduce and input pipeline
/// take a twentieth of a step on one GPU). A documented default, not a measurement.
pub const DEFAULT_SERIAL: f64 = 0.05;

/// A running job is grown only when the time it is expected to save is at least this
/// many times the resize's cost: a grow that barely pays for its own checkpoint would
/// leave the job no better off and risk being taken back before it paid.
pub const GROW_PAYBACK: f64 = 2.0;

/// After a resize (or, live, a start), a job may not grow for this many resize costs: a
/// job grown at one event and taken back at the next would spend its time restarting.
pub const COOLDOWN_RESIZES: f64 = 10.0;

/// How far a job may grow and shrink, and how well it scales.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Elastic {
    pub min: u32,
    pub max: u32,
    /// Amdahl's serial fraction, in [0, 1).
    pub serial: f64,
}

/// Why a job's elastic range was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ElasticError {
    #[error("an elastic job needs at least 1 GPU as its minimum (got {min}-{max}); write --gpus 1-{max} or more")]
    ZeroMin { min: u32, max: u32 },
    #[error("the elastic range {min}-{max} is upside down: the minimum must not exceed the maximum (write --gpus {max}-{min})")]
    Inverted { min: u32, max: u32 },
    #[error("the serial fraction {serial} is outside [0, 1): it is the share of a step that does not speed up with more GPUs (0.05 by default)")]
    Serial { serial: f64 },
}

impl Elastic {
    /// A range with the default scaling model.
    pub fn new(min: u32, max: u32) -> Result<Self, ElasticError> {
        Elastic {
            min,
            max,
            serial: DEFAULT_SERIAL,
        }
        .checked()
    }

    /// The same range, refused with a reason if it is not one.
    pub fn checked(self) -> Result<Self, ElasticError> {
        let Elastic { min, max, serial } = self;
        if min == 0 {
            return Err(ElasticError::ZeroMin { min, max });
        }
        if min > max {
            return Err(ElasticError::Inverted { min, max });
        }
        if !(0.0..1.0).contains(&serial) {
            return Err(ElasticError::Serial { serial });
        }
        Ok(self)
    }

    /// How many times faster than on one GPU it runs on `n` (Amdahl).
    pub fn speedup(&self, n: u32) -> f64 {
        let n = f64::from(n.max(1));
        1.0 / (self.serial + (1.0 - self.serial) / n)
    }

    /// The share of its remaining time a job saves going from `from` to `to` GPUs
    /// (negative when shrinking).
    pub fn saving(&self, from: u32, to: u32) -> f64 {
        1.0 - self.speedup(from) / self.speedup(to)
    }
}

/// An elastic job as the spreading sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// The node it runs on (an index the caller's `free` slice is indexed by).
    pub node: usize,
    /// GPUs it holds now.
    pub size: u32,
    pub elastic: Elastic,
    /// Its expected remaining run time at `size`, where known.
    pub remaining: Option<Seconds>,
    /// True for a job this round starts: growing it costs nothing.
    pub starting: bool,
    /// False where the job may not be resized now (protected, stopping, resized too
    /// recently): it keeps its size.
    pub may_grow: bool,
}

/// The sizes the members grow to from the idle GPUs in `free` (indexed by node), in
/// the members' order; `free` is left with what remains. `cost`: a resize's cost in
/// seconds, for the payback rule (see the module's doc).
pub fn spread(members: &[Member], free: &mut [u32], cost: Seconds) -> Vec<u32> {
    // A running job whose whole grow does not pay for its resize is left as it is, and
    // the GPUs are spread again without it; each try leaves out one more job at least.
    let mut excluded = vec![false; members.len()];
    loop {
        let mut sizes: Vec<u32> = members.iter().map(|m| m.size).collect();
        let mut avail = free.to_vec();
        greedy(members, &excluded, &mut sizes, &mut avail);
        let mut again = false;
        for (i, m) in members.iter().enumerate() {
            if sizes[i] > m.size && !m.starting && !pays(m, sizes[i], cost) {
                excluded[i] = true;
                again = true;
            }
        }
        if !again {
            free.copy_from_slice(&avail);
            return sizes;
        }
    }
}

/// Whether growing a running member to `to` saves at least [`GROW_PAYBACK`] times the
/// resize's cost; a member whose remaining time is unknown is assumed long enough.
fn pays(m: &Member, to: u32, cost: Seconds) -> bool {
    match m.remaining {
        Some(r) => r * m.elastic.saving(m.size, to) >= GROW_PAYBACK * cost,
        None => true,
    }
}

/// One GPU at a time to the member that saves the largest share of its time with it.
fn greedy(members: &[Member], excluded: &[bool], sizes: &mut [u32], avail: &mut [u32]) {
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;

    /// A candidate's gain, ordered largest first, then lowest index.
    #[derive(PartialEq)]
    struct Gain(f64, usize);
    impl Eq for Gain {}
    impl PartialOrd for Gain {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Gain {
        fn cmp(&self, other: &Self) -> Ordering {
            self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
        }
    }

    let gain = |m: &Member, n: u32| m.elastic.saving(n, n + 1);
    let mut heap = BinaryHeap::new();
    for (i, m) in members.iter().enumerate() {
        if !excluded[i] && m.may_grow && sizes[i] < m.elastic.max && avail[m.node] > 0 {
            heap.push(Gain(gain(m, sizes[i]), i));
        }
    }
    while let Some(Gain(_, i)) = heap.pop() {
        let m = &members[i];
        if avail[m.node] == 0 {
            continue;
        }
        avail[m.node] -= 1;
        sizes[i] += 1;
        if sizes[i] < m.elastic.max && avail[m.node] > 0 {
            heap.push(Gain(gain(m, sizes[i]), i));
        }
    }
}

/// What a waiting job's claim takes back: from each member (by index) the GPUs it
/// gives up, and its new size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TakeBack {
    pub node: usize,
    /// `(member index, new size)`, each at least the member's minimum.
    pub shrinks: Vec<(usize, u32)>,
}

/// The fewest elastic jobs to shrink so that a job needing `gpus` GPUs fits on one of
/// the nodes `allowed` accepts, with `free` idle GPUs per node; `None` when no node
/// could make room that way (or it has room already). The node that needs the fewest
/// shrinks wins, then the one that takes the fewest GPUs back, then the lowest index;
/// on it the largest loans go first (ties to the earlier member).
pub fn take_back(
    members: &[Member],
    free: &[u32],
    gpus: u32,
    allowed: impl Fn(usize) -> bool,
) -> Option<TakeBack> {
    let room_already = free
        .iter()
        .enumerate()
        .any(|(node, &idle)| idle >= gpus && allowed(node));
    if room_already {
        return None;
    }
    let mut best: Option<(usize, u32, TakeBack)> = None;
    for (node, &idle) in free.iter().enumerate() {
        if !allowed(node) {
            continue;
        }
        let mut loans: Vec<(usize, u32)> = members
            .iter()
            .enumerate()
            .filter(|(_, m)| m.node == node && m.may_grow && m.size > m.elastic.min)
            .map(|(i, m)| (i, m.size - m.elastic.min))
            .collect();
        loans.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut need = gpus - idle;
        let mut shrinks = Vec::new();
        let mut taken = 0;
        for (i, loan) in loans {
            if need == 0 {
                break;
            }
            let k = loan.min(need);
            need -= k;
            taken += k;
            shrinks.push((i, members[i].size - k));
        }
        if need > 0 {
            continue;
        }
        let better = match &best {
            None => true,
            Some((n, t, _)) => (shrinks.len(), taken) < (*n, *t),
        };
        if better {
            best = Some((shrinks.len(), taken, TakeBack { node, shrinks }));
        }
    }
    best.map(|b| b.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(node: usize, size: u32, min: u32, max: u32) -> Member {
        Member {
            node,
            size,
            elastic: Elastic::new(min, max).unwrap(),
            remaining: None,
            starting: false,
            may_grow: true,
        }
    }

    #[test]
    fn amdahl_speedup_and_saving() {
        let e = Elastic::new(1, 8).unwrap();
        assert_eq!(e.speedup(1), 1.0);
        assert!((e.speedup(8) - 1.0 / (0.05 + 0.95 / 8.0)).abs() < 1e-12);
        assert!((e.saving(2, 4) - (1.0 - e.speedup(2) / e.speedup(4))).abs() < 1e-12);
        assert!(e.saving(4, 2) < 0.0);
        let linear = Elastic { serial: 0.0, ..e };
        assert_eq!(linear.saving(2, 4), 0.5);
    }

    #[test]
    fn ranges_are_checked_with_reasons() {
        assert_eq!(
            Elastic::new(0, 4).unwrap_err(),
            ElasticError::ZeroMin { min: 0, max: 4 }
        );
        let e = Elastic::new(8, 2).unwrap_err();
        assert!(e.to_string().contains("--gpus 2-8"), "{e}");
        let bad = Elastic {
            min: 1,
            max: 2,
            serial: 1.0,
        };
        assert!(bad.checked().is_err());
    }

    /// Two jobs on one node with 4 idle GPUs: each GPU goes to whichever job saves the
    /// larger share of its time with it, the smaller job first (ties to the earlier
    /// job): 2 -> 3, then 3 -> 4 (tie), the other 3 -> 4, then 4 -> 5 (tie).
    #[test]
    fn idle_gpus_go_where_they_save_the_largest_share() {
        let members = vec![member(0, 2, 1, 8), member(0, 3, 1, 8)];
        let mut free = vec![4];
        let sizes = spread(&members, &mut free, 0.0);
        assert_eq!(sizes, vec![5, 4]);
        assert_eq!(free, vec![0]);
        // Capped by max, and by the job's own node's GPUs.
        let members = vec![member(0, 1, 1, 2), member(1, 1, 1, 8)];
        let mut free = vec![3, 2];
        assert_eq!(spread(&members, &mut free, 0.0), vec![2, 3]);
        assert_eq!(free, vec![2, 0]);
    }

    /// A running job whose grow would not save twice its resize's cost keeps its size,
    /// and its GPUs go to the next job; a starting job grows regardless.
    #[test]
    fn a_grow_that_does_not_pay_for_its_resize_is_not_made() {
        let mut short = member(0, 1, 1, 4);
        short.remaining = Some(60.0); // 1 -> 3 would save 38 s < 2 x 30 s
        let mut long = member(0, 2, 1, 4);
        long.remaining = Some(3600.0);
        let mut free = vec![3];
        assert_eq!(spread(&[short.clone(), long], &mut free, 30.0), vec![1, 4]);
        assert_eq!(free, vec![1]);
        short.starting = true;
        let mut free = vec![3];
        assert_eq!(spread(&[short], &mut free, 30.0), vec![4]);
        let mut frozen = member(0, 1, 1, 4);
        frozen.may_grow = false;
        let mut free = vec![3];
        assert_eq!(spread(&[frozen], &mut free, 0.0), vec![1]);
    }

    /// A 4-GPU job waits; node 0 has 1 idle and loans of 2 and 3 GPUs, node 1 has 2 idle
    /// and a loan of 2: node 1 needs one shrink, node 0 one too but takes 3 back; node 1
    /// wins with the fewer GPUs taken.
    #[test]
    fn taking_back_shrinks_the_fewest_jobs_never_below_their_minimum() {
        let members = vec![member(0, 4, 2, 8), member(0, 4, 1, 8), member(1, 6, 4, 8)];
        let free = vec![1, 2];
        let t = take_back(&members, &free, 4, |_| true).unwrap();
        assert_eq!(
            t,
            TakeBack {
                node: 1,
                shrinks: vec![(2, 4)]
            }
        );
        // Node 1 not allowed: on node 0 the larger loan (3) goes first, then the other.
        let t = take_back(&members, &free, 5, |n| n == 0).unwrap();
        assert_eq!(t.shrinks, vec![(1, 1), (0, 3)]);
        // Not enough above the minimums anywhere: nothing.
        assert_eq!(take_back(&members, &free, 7, |_| true), None);
        // Room already: nothing to take.
        assert_eq!(take_back(&members, &free, 2, |_| true), None);
    }
}
