//! Followers: who may follow whom, the hand-over at an end, and what goes back to the
//! queue.

use super::*;
use crate::live::{JobGroup, Left};
use crate::live::{LiveJob, LiveNode};
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind, QueueId};

/// A node of `n` GPUs whose agent starts followers.
fn node(name: &str, n: u32) -> LiveNode {
    LiveNode {
        follows: true,
        ..crate::live::tests::node(name, n, false)
    }
}

/// A job of user `u`, one GPU, a walltime of 10 ms.
fn short(id: u64, user: &str) -> LiveJob {
    LiveJob {
        user: user.into(),
        walltime: Some(0.01),
        ..crate::live::tests::whole(id, 1)
    }
}

fn cluster(nodes: Vec<LiveNode>, depth: u32) -> LiveCluster {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    c.set_follow(Some(FollowConfig { under: 1.0, depth }));
    assert!(c.set_nodes(nodes).is_empty());
    c
}

/// (job, after, gpus) of each follow, for short assertions.
fn brief(f: &[Follow]) -> Vec<(u64, u64, Vec<u32>)> {
    f.iter().map(|f| (f.job, f.after, f.gpus.clone())).collect()
}

#[test]
fn short_jobs_queue_behind_running_ones_of_their_kind_and_take_their_gpus_at_the_end() {
    let mut c = cluster(vec![node("a", 2)], 2);
    for id in 1..=7 {
        c.add(&short(id, "u"));
    }
    let starts = c.pass(0.0, &[]);
    assert_eq!(starts.len(), 2);
    let gpu_of = |id: u64| {
        starts.iter().find(|p| p.job == id).unwrap().parts[0]
            .gpus
            .clone()
    };
    let (g1, g2) = (gpu_of(1), gpu_of(2));
    // Two behind each running job, in the queue's order, shortest chain first; job 7
    // stays waiting (both chains are full).
    let f = c.follow_pass(|_| None);
    assert_eq!(
        brief(&f),
        vec![
            (3, 1, g1.clone()),
            (4, 2, g2.clone()),
            (5, 3, g1.clone()),
            (6, 4, g2.clone())
        ]
    );
    assert_eq!(c.followers_of(1), vec![3, 5]);
    assert_eq!(c.following(5), Some(3));
    // A follower waits behind the job ahead of it, on the node of its chain's head.
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&short(5, "u"), &crate::live::Blocked::default(), &ctx),
        crate::live::WaitReason::Following {
            after: 3,
            node: "a".into()
        }
    );
    assert_eq!(c.waiting_order(), vec![7]);
    assert!(c.follow_pass(|_| None).is_empty(), "every chain is full");
    // Job 1 ends: job 3 takes its GPU in the same step; it never came free.
    let left = c.remove(1, 1.0);
    let next = left.next.expect("job 3 takes over");
    assert_eq!((next.job, next.parts[0].node.as_str()), (3, "a"));
    assert_eq!(next.parts[0].gpus, g1);
    assert!(left.back.is_empty());
    assert_eq!(c.whole_free("a"), 0);
    assert_eq!(c.followers_of(3), vec![5]);
    // The pass starts nothing (no GPU is free); job 7 now follows job 5.
    assert!(c.pass(1.0, &[]).is_empty());
    assert_eq!(brief(&c.follow_pass(|_| None)), vec![(7, 5, g1.clone())]);
}

#[test]
fn a_job_ranked_first_that_cannot_follow_stops_the_walk() {
    let mut c = cluster(vec![node("a", 1)], 2);
    c.add(&short(1, "u"));
    assert_eq!(c.pass(0.0, &[]).len(), 1);
    // Job 2 (another user) is next in line: nothing of user u's may pass it.
    c.add(&short(2, "v"));
    c.add(&short(3, "u"));
    assert!(c.follow_pass(|_| None).is_empty());
    // A long job first stops it the same way.
    let mut c = cluster(vec![node("a", 1)], 2);
    c.add(&short(1, "u"));
    c.pass(0.0, &[]);
    c.add(&LiveJob {
        walltime: Some(3600.0),
        ..short(2, "u")
    });
    c.add(&short(3, "u"));
    assert!(c.follow_pass(|_| None).is_empty());
    // So does a job without an estimate.
    let mut c = cluster(vec![node("a", 1)], 2);
    c.add(&short(1, "u"));
    c.pass(0.0, &[]);
    c.add(&LiveJob {
        walltime: None,
        ..short(2, "u")
    });
    assert!(c.follow_pass(|_| None).is_empty());
}

#[test]
fn only_jobs_of_the_same_kind_group_and_node_capability_follow() {
    // Another GPU count, another queue, more CPUs: none follows job 1.
    for other in [
        LiveJob {
            gpus: 2,
            ..short(2, "u")
        },
        LiveJob {
            queue: QueueId(1),
            ..short(2, "u")
        },
        LiveJob {
            cpu_milli: 1000,
            ..short(2, "u")
        },
        LiveJob {
            group: Some(JobGroup {
                id: 9,
                max_running: 4,
            }),
            ..short(2, "u")
        },
    ] {
        let mut c = cluster(vec![node("a", 2)], 1);
        c.add(&LiveJob {
            gpus: 1,
            ..short(1, "u")
        });
        c.add(&short(3, "u"));
        assert_eq!(c.pass(0.0, &[]).len(), 2, "jobs 1 and 3 start");
        c.add(&other);
        assert!(c.follow_pass(|_| None).is_empty(), "{other:?}");
    }
    // Tasks of one group follow each other.
    let mut c = cluster(vec![node("a", 1)], 1);
    for id in 1..=2 {
        c.add(&LiveJob {
            group: Some(JobGroup {
                id: 9,
                max_running: 4,
            }),
            ..short(id, "u")
        });
    }
    c.pass(0.0, &[]);
    assert_eq!(brief(&c.follow_pass(|_| None)), vec![(2, 1, vec![0])]);
    // No followers on a node whose agent cannot start them, or a drained one.
    for n in [
        LiveNode {
            follows: false,
            ..node("a", 1)
        },
        LiveNode {
            drained: Some("maintenance".into()),
            ..node("a", 1)
        },
    ] {
        let mut c = cluster(vec![node("a", 1)], 1);
        c.add(&short(1, "u"));
        c.pass(0.0, &[]);
        c.set_nodes(vec![n]);
        c.add(&short(2, "u"));
        assert!(c.follow_pass(|_| None).is_empty());
    }
    // Nothing follows without the setting.
    let mut c = cluster(vec![node("a", 1)], 1);
    c.set_follow(None);
    c.add(&short(1, "u"));
    c.pass(0.0, &[]);
    c.add(&short(2, "u"));
    assert!(c.follow_pass(|_| None).is_empty());
}

#[test]
fn a_run_requeued_sends_its_followers_back_in_their_order() {
    let mut c = cluster(vec![node("a", 1)], 2);
    for id in 1..=4 {
        c.add(&short(id, "u"));
    }
    c.pass(0.0, &[]);
    assert_eq!(c.follow_pass(|_| None).len(), 2);
    assert_eq!(c.waiting_order(), vec![4]);
    // Job 1's run is lost: it waits again, and so do 2 and 3, in their places.
    assert_eq!(c.requeue(1, 1.0), vec![2, 3]);
    assert_eq!(c.following(2), None);
    assert_eq!(c.waiting_order(), vec![1, 2, 3, 4]);
    let starts = c.pass(1.0, &[]);
    assert_eq!(starts.iter().map(|p| p.job).collect::<Vec<_>>(), vec![1]);
}

#[test]
fn a_follower_that_leaves_lets_the_next_one_move_up() {
    let mut c = cluster(vec![node("a", 1)], 3);
    for id in 1..=4 {
        c.add(&short(id, "u"));
    }
    c.pass(0.0, &[]);
    assert_eq!(c.follow_pass(|_| None).len(), 3);
    assert_eq!(c.followers_of(1), vec![2, 3, 4]);
    // Job 3 is cancelled while it follows job 2.
    assert_eq!(c.remove(3, 0.5), Left::default());
    assert_eq!(c.followers_of(1), vec![2, 4]);
    assert_eq!(c.following(4), Some(2));
    assert_eq!(c.following(3), None);
    // Job 2 is cancelled too: job 4 follows job 1 itself, and takes over at its end.
    c.remove(2, 0.6);
    assert_eq!(c.following(4), Some(1));
    assert_eq!(c.remove(1, 1.0).next.map(|p| p.job), Some(4));
    assert_eq!(c.waiting(), 0);
}

#[test]
fn open_slots_count_what_a_kind_could_still_queue() {
    let mut c = cluster(vec![node("a", 2)], 2);
    c.add(&short(1, "u"));
    c.add(&short(2, "u"));
    c.pass(0.0, &[]);
    assert_eq!(c.open_follow_slots(&short(10, "u")), 4);
    assert_eq!(c.open_follow_slots(&short(10, "v")), 0);
    c.add(&short(3, "u"));
    c.follow_pass(|_| None);
    assert_eq!(c.open_follow_slots(&short(10, "u")), 3);
}

#[test]
fn a_restart_puts_followers_back_behind_the_jobs_they_followed() {
    let mut c = cluster(vec![node("a", 1)], 2);
    for id in 1..=3 {
        c.add(&short(id, "u"));
    }
    assert!(c.restore(1, "a", &[0], None, 0.0));
    assert!(c.restore_follow(2, 1));
    assert!(c.restore_follow(3, 2));
    assert_eq!(c.followers_of(1), vec![2, 3]);
    // Not behind a job that already has a follower, nor behind a waiting job.
    c.add(&short(4, "u"));
    c.add(&short(5, "u"));
    assert!(!c.restore_follow(4, 1));
    assert!(!c.restore_follow(4, 5));
    assert_eq!(c.remove(1, 1.0).next.map(|p| p.job), Some(2));
}

#[test]
fn a_hand_over_keeps_the_room_the_job_held() {
    let mut c = cluster(vec![node("a", 1)], 1);
    let ask = |id| LiveJob {
        cpu_milli: 8000,
        ..short(id, "u")
    };
    c.add(&ask(1));
    c.add(&ask(2));
    c.pass(0.0, &[]);
    assert_eq!(c.follow_pass(|_| None).len(), 1);
    let left = c.remove(1, 1.0);
    assert_eq!(left.next.map(|p| p.job), Some(2));
    // All 8 CPUs are job 2's now: a job asking for one waits.
    c.add(&LiveJob {
        cpu_milli: 1000,
        gpus: 0,
        ..short(3, "v")
    });
    assert!(c.pass(1.0, &[]).is_empty());
}

#[test]
fn a_group_holds_at_most_its_limit_whatever_waits_of_it() {
    let mut c = cluster(vec![node("a", 4)], 2);
    let g = JobGroup {
        id: 100,
        max_running: 2,
    };
    for id in 1..=5 {
        c.add(&LiveJob {
            group: Some(g),
            ..short(id, "u")
        });
    }
    // Four GPUs free, five of the group waiting: two start.
    let starts = c.pass(0.0, &[]);
    assert_eq!(starts.iter().map(|p| p.job).collect::<Vec<_>>(), vec![1, 2]);
    // The others may follow them (a follower replaces a member, never adds one).
    assert_eq!(c.follow_pass(|_| None).len(), 3);
    c.remove(1, 1.0);
    assert!(c.pass(1.0, &[]).is_empty(), "job 3 took job 1's GPU");
    assert_eq!(c.whole_free("a"), 2);
}

#[test]
fn a_job_estimated_over_the_bound_never_follows() {
    let mut c = cluster(vec![node("a", 1)], 10);
    c.add(&short(1, "u"));
    c.pass(0.0, &[]);
    c.add(&LiveJob {
        walltime: Some(1.5),
        ..short(2, "u")
    });
    assert!(c.follow_pass(|_| None).is_empty());
    // At the bound, it does.
    c.remove(2, 0.0);
    c.add(&LiveJob {
        walltime: Some(1.0),
        ..short(3, "u")
    });
    assert_eq!(brief(&c.follow_pass(|_| None)), vec![(3, 1, vec![0])]);
}

#[test]
fn a_job_without_an_estimate_follows_on_a_guess_that_does_not_become_its_estimate() {
    let mut c = cluster(vec![node("a", 1)], 2);
    c.add(&short(1, "u"));
    c.pass(0.0, &[]);
    c.add(&LiveJob {
        walltime: None,
        ..short(2, "u")
    });
    assert!(c.follow_pass(|_| Some(5.0)).is_empty(), "guessed too long");
    assert_eq!(brief(&c.follow_pass(|_| Some(0.5))), vec![(2, 1, vec![0])]);
    assert_eq!(c.remove(1, 1.0).next.map(|p| p.job), Some(2));
    assert_eq!(c.estimate(2), None, "the guess is not its estimate");
}

#[test]
fn nothing_new_follows_onto_a_gpu_out_of_placement() {
    let mut c = cluster(vec![node("a", 1)], 2);
    c.add(&short(1, "u"));
    c.pass(0.0, &[]);
    let mut sick = node("a", 1);
    sick.gpus[0].unhealthy = Some("Xid 79".into());
    c.set_nodes(vec![sick]);
    c.add(&short(2, "u"));
    assert!(c.follow_pass(|_| None).is_empty());
}

#[test]
fn a_follower_sent_back_alone_waits_in_its_place_and_the_next_moves_up() {
    let mut c = cluster(vec![node("a", 1)], 3);
    for id in 1..=4 {
        c.add(&short(id, "u"));
    }
    c.pass(0.0, &[]);
    assert_eq!(c.follow_pass(|_| None).len(), 3);
    assert!(c.send_back(3, 0.5));
    assert!(!c.send_back(3, 0.5), "it follows nobody now");
    assert_eq!(c.followers_of(1), vec![2, 4]);
    assert_eq!(c.waiting_order(), vec![3]);
}

/// A running job of the followers' kind that has run longer than `under` takes no
/// follower: the short job waits in the queue and starts on the next GPU that comes
/// free anywhere (the issue: an echo queued for minutes behind a 90 s job of the same
/// name while a GPU on another node was free).
#[test]
fn no_job_follows_one_that_has_run_longer_than_a_follower_may() {
    let mut c = cluster(vec![node("a", 1), node("b", 1)], 4);
    c.add(&short(1, "u"));
    c.add(&short(2, "u"));
    assert_eq!(c.pass(0.0, &[]).len(), 2);
    // Both have run 5 s (their 10 ms estimate was wrong): job 3 does not follow either.
    c.add(&short(3, "u"));
    assert!(c.pass(5.0, &[]).is_empty());
    assert!(c.follow_pass(|_| None).is_empty());
    assert_eq!(c.waiting_order(), vec![3]);
    // Job 2 is cancelled: job 3 starts on its GPU at the next pass.
    c.remove(2, 6.0);
    let starts = c.pass(6.0, &[]);
    assert_eq!(starts.iter().map(|p| p.job).collect::<Vec<_>>(), vec![3]);
    // Within `under` of its start a job of the kind still takes followers.
    c.add(&short(4, "u"));
    assert!(c.pass(6.5, &[]).is_empty());
    assert_eq!(
        c.follow_pass(|_| None)
            .iter()
            .map(|f| (f.job, f.after))
            .collect::<Vec<_>>(),
        vec![(4, 3)]
    );
}

#[test]
fn a_serving_job_neither_follows_nor_is_followed() {
    let serving = |id| LiveJob {
        serving: true,
        ..short(id, "u")
    };
    // A replica runs until stopped: a short job of its kind does not queue behind it.
    let mut c = cluster(vec![node("a", 1)], 2);
    c.add(&serving(1));
    c.add(&short(2, "u"));
    assert_eq!(c.pass(0.0, &[]).len(), 1);
    assert!(c.follow_pass(|_| None).is_empty());
    // A waiting replica does not queue behind a training job's end.
    let mut c = cluster(vec![node("a", 1)], 2);
    c.add(&short(1, "u"));
    c.add(&serving(2));
    assert_eq!(c.pass(0.0, &[]).len(), 1);
    assert!(c.follow_pass(|_| None).is_empty());
}

/// The follow pass's order of waiting jobs, picked out a chunk at a time, is the full
/// sort's: whole, or cut short anywhere.
#[test]
fn waiting_jobs_come_in_the_order_a_full_sort_gives() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for n in [0usize, 1, 2, 31, 32, 33, 100, 1000, 5000] {
        // Ranks repeat (ties broken by id), ids are distinct.
        let keys: Vec<(u64, u64)> = (0..n as u64).map(|id| (rand() % 50, id)).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(
            super::InOrder::new(keys.clone()).collect::<Vec<_>>(),
            sorted
        );
        let cut = (rand() as usize) % (n + 1);
        let head: Vec<_> = super::InOrder::new(keys).take(cut).collect();
        assert_eq!(head, sorted[..cut], "n {n}, the first {cut}");
    }
}
