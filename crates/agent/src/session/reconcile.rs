//! Making the node run what the server wants: starts, cancels, preemptions, attempts
//! queued behind others, and what is no longer wanted.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gpusched_wire::{AttemptRef, Desired, Outcome, RunEvent, RunEventKind};
use tokio::sync::mpsc;

use super::ports::reserve_ports;
use super::Shared;
use crate::clock::now_ms;

/// Makes the node run what the server wants: starts new attempts, stops cancelled or
/// no longer wanted ones. Attempts seen before are never started again.
pub(super) fn reconcile(sh: &Shared, d: &Desired, cancelled_unseen: &mut BTreeSet<AttemptRef>) {
    crate::power::apply(
        sh.cfg.control.0.clone(),
        sh.power_caps.changes(&d.power_caps),
    );
    // A queued attempt is wanted too: it may have started here the moment the one ahead
    // of it ended, before the server heard.
    let wanted: BTreeSet<AttemptRef> = d
        .run
        .iter()
        .chain(d.queued.iter().map(|q| &q.launch))
        .map(|l| l.attempt_ref())
        .collect();
    let cancel: BTreeSet<AttemptRef> = d.cancel.iter().copied().collect();
    // Only what the server still lists needs remembering (the set grew with every
    // cancelled job before); an older answer listing one again at worst repeats an end
    // the server ignores.
    cancelled_unseen.retain(|a| {
        wanted.contains(a)
            || cancel.contains(a)
            || d.preempt
                .iter()
                .any(|p| p.job == a.job && p.attempt == a.attempt)
    });
    for launch in &d.run {
        if sh.launcher.seen(launch.attempt_ref()) {
            continue;
        }
        // Spawn latency counts the slice's preparation (a MIG instance may be created).
        let began = Instant::now();
        let launch = match sh.slices.prepare(launch) {
            Ok(l) => l,
            Err(message) => {
                tracing::error!(
                    job = launch.job,
                    attempt = launch.attempt,
                    "cannot start: {message}"
                );
                // Lost, not failed: the node could not give the slice; the server requeues.
                if cancelled_unseen.insert(launch.attempt_ref()) {
                    sh.outbox.push(RunEvent {
                        job: launch.job,
                        attempt: launch.attempt,
                        at_ms: now_ms(),
                        event: RunEventKind::Ended {
                            outcome: Outcome::Lost { message },
                            usage: None,
                        },
                    });
                }
                continue;
            }
        };
        start(sh, &launch, began);
    }
    // What is queued behind attempts here; those whose attempt ahead already ended by
    // itself start now.
    for launch in sh.followers.set(&d.queued, |a| sh.launcher.seen(a)) {
        start(sh, &launch, Instant::now());
    }
    reserve_ports(sh, d);
    sh.steps.reconcile(&d.steps, |s| crate::steps::StepContext {
        http: sh.http.clone(),
        base: sh.servers.current(),
        node: sh.cfg.name.clone(),
        gpus: sh.cfg.gpus.clone(),
        allow_root: sh.launcher.allow_root(),
        cgroup: sh.launcher.step_cgroup(s.launch.attempt_ref()),
    });
    let running: BTreeSet<AttemptRef> = sh.launcher.running().into_iter().collect();
    for a in &cancel {
        if running.contains(a) {
            sh.launcher.cancel(*a);
        } else if !sh.launcher.seen(*a) && cancelled_unseen.insert(*a) {
            // Cancelled before it reached us: it never runs; say so.
            sh.outbox.push(RunEvent {
                job: a.job,
                attempt: a.attempt,
                at_ms: now_ms(),
                event: RunEventKind::Ended {
                    outcome: Outcome::Cancelled,
                    usage: None,
                },
            });
        }
    }
    let mut preempting = BTreeSet::new();
    for p in &d.preempt {
        let a = AttemptRef {
            job: p.job,
            attempt: p.attempt,
        };
        preempting.insert(a);
        if running.contains(&a) {
            sh.launcher
                .preempt(a, p.signal, Duration::from_secs(p.grace_s));
        } else if !sh.launcher.seen(a) && cancelled_unseen.insert(a) {
            // Preempted before it reached us: it never ran; the server requeues it.
            sh.outbox.push(RunEvent {
                job: a.job,
                attempt: a.attempt,
                at_ms: now_ms(),
                event: RunEventKind::Ended {
                    outcome: Outcome::Preempted,
                    usage: None,
                },
            });
        }
    }
    for a in running.difference(&wanted) {
        if !cancel.contains(a) && !preempting.contains(a) {
            tracing::info!(
                job = a.job,
                attempt = a.attempt,
                "no longer wanted by the server; stopping it"
            );
            sh.launcher.cancel(*a);
        }
    }
}

/// Starts one attempt (`began`: when its start began, for the spawn latency).
fn start(sh: &Shared, launch: &gpusched_wire::Launch, began: Instant) {
    match sh.launcher.start(launch, &sh.cfg.gpus) {
        Ok(()) if sh.launcher.running().contains(&launch.attempt_ref()) => {
            sh.metrics.spawned(began.elapsed().as_secs_f64());
            sh.launched_gpus
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(launch.attempt_ref(), launch.gpus.clone());
        }
        Ok(()) => {}
        Err(e) => tracing::error!(
            job = launch.job,
            attempt = launch.attempt,
            "cannot start: {e}"
        ),
    }
}

/// Starts the attempts queued behind others as those end (`follow.rs`), in the order
/// they come. On the task that runs the session (the main thread for `gpusched agent`),
/// like every start.
pub(super) async fn follow_loop(
    sh: Arc<Shared>,
    mut next: mpsc::UnboundedReceiver<gpusched_wire::Launch>,
) {
    while let Some(launch) = next.recv().await {
        if sh.followers.stopped() || sh.launcher.seen(launch.attempt_ref()) {
            continue;
        }
        start(&sh, &launch, Instant::now());
    }
}
