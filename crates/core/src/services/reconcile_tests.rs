//! Reconcile: rolling updates with surge and unavailability, scale down, drains, back-off,
//! nodes being left, deletion.

use super::reconcile::*;
use ReplicaPhase::{Draining, Ready, Starting, Waiting};

fn svc(version: u32, desired: u32, surge: u32, unavailable: u32) -> ServiceFacts {
    ServiceFacts {
        version,
        desired,
        max_surge: surge,
        max_unavailable: unavailable,
        drain_ms: 2_000,
        ..Default::default()
    }
}

fn r(job: u64, version: u32, phase: ReplicaPhase) -> ReplicaFacts {
    ReplicaFacts {
        job,
        version,
        phase,
        node_leaving: false,
    }
}

/// Applies a plan as the server would: new replicas waiting (ids from `next`), drains
/// and stops.
fn apply(rs: &mut Vec<ReplicaFacts>, p: &ServicePlan, version: u32, next: &mut u64, now: u64) {
    rs.retain(|x| !p.stop.contains(&x.job));
    for x in rs.iter_mut() {
        if p.drain.contains(&x.job) {
            x.phase = Draining { since_ms: now };
        }
    }
    for _ in 0..p.start {
        rs.push(r(*next, version, Waiting));
        *next += 1;
    }
}

#[test]
fn backoff_doubles_from_a_second_to_five_minutes() {
    let b: Vec<u64> = [0, 1, 2, 3, 9, 10, 40, u32::MAX].map(backoff_ms).to_vec();
    assert_eq!(
        b,
        [0, 1_000, 2_000, 4_000, 256_000, 300_000, 300_000, 300_000]
    );
}

#[test]
fn a_new_service_starts_its_replicas_and_then_is_steady() {
    let s = svc(1, 3, 1, 0);
    let p = reconcile(&s, &[], 0);
    assert_eq!(
        (p.start, p.status),
        (
            3,
            ServiceStatus::Scaling {
                live: 0,
                desired: 3
            }
        )
    );
    let rs = [r(1, 1, Ready), r(2, 1, Starting), r(3, 1, Waiting)];
    let p = reconcile(&s, &rs, 0);
    assert_eq!(p.start, 0);
    assert_eq!(
        p.status,
        ServiceStatus::Starting {
            ready: 1,
            desired: 3
        }
    );
    let rs = [r(1, 1, Ready), r(2, 1, Ready), r(3, 1, Ready)];
    let p = reconcile(&s, &rs, 0);
    assert_eq!(p.status, ServiceStatus::Steady { ready: 3 });
    assert!(p.drain.is_empty() && p.stop.is_empty() && p.wake_ms.is_none());
}

#[test]
fn a_rollout_with_surge_keeps_every_old_replica_serving_until_a_new_one_is_ready() {
    let s = svc(2, 2, 1, 0);
    let mut rs = vec![r(1, 1, Ready), r(2, 1, Ready)];
    let mut next = 10;
    // One surge replica.
    let p = reconcile(&s, &rs, 0);
    assert_eq!((p.start, p.drain.len()), (1, 0));
    assert!(matches!(
        p.status,
        ServiceStatus::RollingOut {
            version: 2,
            ready_new: 0,
            desired: 2
        }
    ));
    apply(&mut rs, &p, 2, &mut next, 0);
    // While it starts, nothing more.
    rs[2].phase = Starting;
    let p = reconcile(&s, &rs, 1_000);
    assert_eq!(
        (p.start, p.drain.clone(), p.stop.clone()),
        (0, vec![], vec![])
    );
    // Ready: the oldest old one drains and the next new one starts in its room.
    rs[2].phase = Ready;
    let p = reconcile(&s, &rs, 2_000);
    assert_eq!((p.start, p.drain.clone()), (1, vec![1]));
    assert_eq!(p.wake_ms, Some(4_000));
    apply(&mut rs, &p, 2, &mut next, 2_000);
    // The drain ends: stopped; the second new one becomes ready: the last old drains.
    let p = reconcile(&s, &rs, 4_000);
    assert_eq!(p.stop, vec![1]);
    assert!(p.drain.is_empty(), "job 11 is not ready yet");
    apply(&mut rs, &p, 2, &mut next, 4_000);
    rs.iter_mut().for_each(|x| {
        if x.version == 2 {
            x.phase = Ready;
        }
    });
    let p = reconcile(&s, &rs, 5_000);
    assert_eq!((p.start, p.drain.clone()), (0, vec![2]));
    apply(&mut rs, &p, 2, &mut next, 5_000);
    let p = reconcile(&s, &rs, 7_000);
    assert_eq!(p.stop, vec![2]);
    apply(&mut rs, &p, 2, &mut next, 7_000);
    assert_eq!(
        reconcile(&s, &rs, 7_000).status,
        ServiceStatus::Steady { ready: 2 }
    );
}

#[test]
fn without_surge_a_drain_frees_room_first() {
    let s = svc(2, 2, 0, 1);
    let rs = [r(1, 1, Ready), r(2, 1, Ready)];
    let p = reconcile(&s, &rs, 0);
    assert_eq!((p.start, p.drain.clone()), (1, vec![1]));
    // Ready below desired - max_unavailable would be passed by a second drain.
    let rs = [
        r(1, 1, Draining { since_ms: 0 }),
        r(2, 1, Ready),
        r(3, 2, Starting),
    ];
    let p = reconcile(&s, &rs, 1_000);
    assert_eq!((p.start, p.drain.len(), p.stop.len()), (0, 0, 0));
}

#[test]
fn outdated_replicas_that_serve_nobody_stop_at_once() {
    let s = svc(3, 2, 1, 0);
    let rs = [r(1, 2, Waiting), r(2, 2, Starting), r(3, 2, Ready)];
    let p = reconcile(&s, &rs, 0);
    assert_eq!(p.stop, vec![1, 2]);
    // Live after the stops: the old ready one; min(2 - 0, 3 - 1) start.
    assert_eq!(p.start, 2);
    assert!(p.drain.is_empty(), "the only ready replica keeps serving");
}

#[test]
fn scale_down_takes_waiting_then_starting_then_the_newest_ready() {
    let s = svc(1, 2, 1, 0);
    let rs = [
        r(1, 1, Ready),
        r(2, 1, Ready),
        r(3, 1, Ready),
        r(4, 1, Starting),
        r(5, 1, Waiting),
        r(6, 1, Waiting),
    ];
    let p = reconcile(&s, &rs, 0);
    assert_eq!(p.stop, vec![4, 5, 6]);
    assert_eq!(p.drain, vec![3]);
    assert_eq!(p.start, 0);
    assert_eq!(
        p.status,
        ServiceStatus::Scaling {
            live: 6,
            desired: 2
        }
    );
}

#[test]
fn a_replica_on_a_leaving_node_is_replaced_before_it_drains() {
    let s = svc(1, 1, 1, 0);
    let mut leaving = r(1, 1, Ready);
    leaving.node_leaving = true;
    let p = reconcile(&s, &[leaving], 0);
    assert_eq!((p.start, p.drain.len()), (1, 0));
    assert!(matches!(
        p.status,
        ServiceStatus::MovingOffNode { moving: 1, .. }
    ));
    let p = reconcile(&s, &[leaving, r(2, 1, Starting)], 1_000);
    assert_eq!((p.start, p.drain.len()), (0, 0));
    let p = reconcile(&s, &[leaving, r(2, 1, Ready)], 2_000);
    assert_eq!((p.start, p.drain.clone()), (0, vec![1]));
    // A starting replica on a leaving node serves nobody: stopped, replaced.
    let mut starting = r(3, 1, Starting);
    starting.node_leaving = true;
    let p = reconcile(&s, &[starting], 0);
    assert_eq!((p.start, p.stop.clone()), (1, vec![3]));
}

#[test]
fn a_failing_service_backs_off_before_starting_again() {
    let s = ServiceFacts {
        failures: 3,
        last_failure_ms: Some(10_000),
        ..svc(1, 2, 1, 0)
    };
    let rs = [r(1, 1, Ready)];
    let p = reconcile(&s, &rs, 12_000);
    assert_eq!(p.start, 0);
    assert_eq!(p.wake_ms, Some(14_000));
    assert_eq!(
        p.status,
        ServiceStatus::BackingOff {
            until_ms: 14_000,
            failures: 3
        }
    );
    let p = reconcile(&s, &rs, 14_000);
    assert_eq!((p.start, p.wake_ms), (1, None));
    // Nothing to start: no back-off shown.
    let full = [r(1, 1, Ready), r(2, 1, Ready)];
    assert_eq!(
        reconcile(&s, &full, 12_000).status,
        ServiceStatus::Steady { ready: 2 }
    );
}

#[test]
fn draining_replicas_stop_after_the_drain_time() {
    let s = svc(1, 1, 1, 0);
    let rs = [r(1, 1, Ready), r(2, 1, Draining { since_ms: 1_000 })];
    let p = reconcile(&s, &rs, 2_500);
    assert_eq!((p.stop.len(), p.wake_ms), (0, Some(3_000)));
    let p = reconcile(&s, &rs, 3_000);
    assert_eq!((p.stop.clone(), p.wake_ms), (vec![2], None));
    assert_eq!(p.status, ServiceStatus::Steady { ready: 1 });
}

#[test]
fn deleting_stops_what_serves_nobody_and_drains_the_rest() {
    let s = ServiceFacts {
        deleting: true,
        ..svc(1, 3, 1, 0)
    };
    let rs = [
        r(4, 1, Waiting),
        r(1, 1, Ready),
        r(2, 1, Draining { since_ms: 0 }),
        r(3, 1, Starting),
    ];
    let p = reconcile(&s, &rs, 1_000);
    assert_eq!(p.start, 0);
    assert_eq!(p.stop, vec![3, 4]);
    assert_eq!(p.drain, vec![1]);
    assert_eq!(p.wake_ms, Some(2_000));
    assert_eq!(p.status, ServiceStatus::Deleting { left: 2 });
    let p = reconcile(&s, &rs, 2_000);
    assert_eq!(p.stop, vec![2, 3, 4]);
}

#[test]
fn the_plan_does_not_depend_on_the_replicas_order() {
    let s = svc(2, 3, 1, 1);
    let mut rs = vec![
        r(7, 1, Ready),
        r(3, 1, Ready),
        r(9, 2, Ready),
        r(5, 1, Starting),
        r(1, 1, Draining { since_ms: 0 }),
    ];
    let a = reconcile(&s, &rs, 1_000);
    rs.reverse();
    assert_eq!(a, reconcile(&s, &rs, 1_000));
    assert_eq!(a.stop, vec![5]);
    // Ready 3, at least 2: one old one drains (the lowest job), the other keeps serving.
    assert_eq!(a.drain, vec![3]);
    assert_eq!(a.start, 2, "min(3 - 1, 3 + 1 - 2)");
}
