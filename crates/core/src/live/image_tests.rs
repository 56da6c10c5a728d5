//! Jobs in container images go only to nodes whose agent runs images, in every form of
//! placement, and wait with a reason of their own while no node does.

use super::tests::{node, whole};
use super::*;
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind};

fn cluster(image_node: bool) -> LiveCluster {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    let mut images = node("images", 2, false);
    images.set_runs_images(image_node);
    // The plain node comes first, so a job that may go anywhere goes there.
    c.set_nodes(vec![node("plain", 2, false), images]);
    c
}

fn in_image(mut job: LiveJob) -> LiveJob {
    job.set_in_image(true);
    job
}

fn nodes_of(starts: &[LivePlacement], job: u64) -> Vec<String> {
    starts
        .iter()
        .filter(|p| p.job == job)
        .flat_map(|p| p.parts.iter().map(|part| part.node.clone()))
        .collect()
}

#[test]
fn an_image_job_starts_only_where_images_run() {
    let mut c = cluster(true);
    c.add(&whole(1, 1));
    c.add(&in_image(whole(2, 1)));
    c.add(&in_image(whole(3, 0)));
    let share = LiveJob {
        slice: Some(SliceAsk::Share { milli: 250 }),
        ..in_image(whole(4, 0))
    };
    c.add(&share);
    let starts = c.pass(1.0, &[]);
    assert_eq!(nodes_of(&starts, 1), ["plain"]);
    assert_eq!(nodes_of(&starts, 2), ["images"], "{starts:?}");
    assert_eq!(nodes_of(&starts, 3), ["images"], "a GPU-less image job too");
    assert_eq!(nodes_of(&starts, 4), ["images"], "a share too");
}

#[test]
fn without_a_node_that_runs_images_an_image_job_waits_and_says_why() {
    let mut c = cluster(false);
    let job = in_image(whole(1, 1));
    c.add(&job);
    assert!(c.pass(1.0, &[]).is_empty());
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&job, &Blocked::default(), &ctx),
        WaitReason::NoImageRuntime
    );
    // A host job is not held back by it.
    assert!(!whole(2, 1).in_image());
    assert_ne!(
        c.wait_reason(&whole(2, 1), &Blocked::default(), &ctx),
        WaitReason::NoImageRuntime
    );
    // The node's agent comes back with a runtime: the job starts there.
    let mut images = node("images", 2, false);
    images.set_runs_images(true);
    c.set_nodes(vec![node("plain", 2, false), images]);
    assert_eq!(nodes_of(&c.pass(2.0, &[]), 1), ["images"]);
}
