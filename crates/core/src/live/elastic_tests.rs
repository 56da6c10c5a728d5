//! Elastic jobs on the live cluster: a start spreads idle GPUs, the first waiting job
//! takes loans back (one resize at a time, the node claimed for it), and a running job
//! grows into GPUs that free up once its cooldown is over.

use super::round_tests::{round, started};
use super::tests::{node, whole};
use super::*;
use crate::elastic::Elastic;
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind};

fn elastic(id: u64, min: u32, max: u32) -> LiveJob {
    LiveJob {
        elastic: Some(Elastic::new(min, max).unwrap()),
        ..whole(id, min)
    }
}

fn gpus_of(r: &Round, id: u64) -> Option<usize> {
    r.starts
        .iter()
        .find(|s| s.job == id)
        .map(|s| s.parts[0].gpus.len())
}

#[test]
fn an_elastic_job_starts_wide_gives_back_for_a_waiting_job_and_grows_again() {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    c.set_nodes(vec![node("a", 4, false)]);
    c.set_resize_cost(1.0);
    // Alone, it starts on all 4 GPUs (its max), though it waited for 1.
    c.add(&elastic(1, 1, 4));
    let r = round(&mut c, 0);
    assert_eq!(gpus_of(&r, 1), Some(4), "{r:?}");
    assert!(r.elastic.is_none());
    started(&mut c, 0);
    // A rigid 2-GPU job arrives: job 1 is asked to stop, the node claimed for job 2.
    c.add(&whole(2, 2));
    let r = round(&mut c, 1_000);
    let e = r.elastic.expect("loans are taken back");
    assert_eq!(
        (e.claimant, e.node.as_str(), e.victims.clone()),
        (Some(2), "a", vec![(1, 2)])
    );
    assert!(c.preempting());
    assert!(round(&mut c, 2_000).elastic.is_none(), "one at a time");
    // Job 1 stops: job 2 goes first on its claim, job 1 restarts on what is left.
    c.requeue(1, 3.0);
    let r = round(&mut c, 3_000);
    assert_eq!(r.starts[0].job, 2);
    assert_eq!(
        (gpus_of(&r, 2), gpus_of(&r, 1)),
        (Some(2), Some(2)),
        "{r:?}"
    );
    started(&mut c, 3_000);
    // Job 2 ends: job 1 may grow only after its cooldown (10 resize costs, 10 s).
    c.remove(2, 4.0);
    assert!(
        round(&mut c, 5_000).elastic.is_none(),
        "within the cooldown"
    );
    let e = round(&mut c, 13_000).elastic.expect("it grows");
    assert_eq!((e.claimant, e.victims), (None, vec![(1, 4)]));
    c.requeue(1, 14.0);
    assert_eq!(gpus_of(&round(&mut c, 14_000), 1), Some(4));
}

#[test]
fn loans_go_back_only_to_the_first_waiting_job_and_never_below_the_minimum() {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    c.set_nodes(vec![node("a", 4, false)]);
    c.add(&elastic(1, 3, 4));
    assert_eq!(gpus_of(&round(&mut c, 0), 1), Some(4));
    started(&mut c, 0);
    // 2 GPUs would need job 1 below its minimum of 3: nothing is taken.
    c.add(&whole(2, 2));
    let r = round(&mut c, 120_000);
    assert!(r.elastic.is_none() && r.starts.is_empty(), "{r:?}");
    // The cluster restarted: job 1 is restored on its 4 GPUs (any size of its range).
    let mut d = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    d.set_nodes(vec![node("a", 4, false)]);
    d.add(&elastic(1, 1, 4));
    assert!(d.restore(1, "a", &[0, 1, 2, 3], None, 0.0));
    d.add(&whole(2, 1));
    assert!(round(&mut d, 0).starts.is_empty(), "its 4 GPUs are held");
    // Requeued, it waits for its minimum again.
    d.requeue(1, 1.0);
    let r = round(&mut d, 1_000);
    assert_eq!(
        (gpus_of(&r, 2), gpus_of(&r, 1)),
        (Some(1), Some(3)),
        "{r:?}"
    );
}
