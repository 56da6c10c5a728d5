//! The long poll of the node's desired state, refused from a deposed leader's epoch,
//! until the server forgets the node.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gpusched_wire::Desired;
use reqwest::StatusCode;

use super::client::{send, Backoff};
use super::lease::heard;
use super::reconcile::reconcile;
use super::Shared;

/// Whether a desired state of `epoch` may steer this agent: not if it is older than an
/// epoch already seen (a deposed leader's). Records the highest seen.
fn accept_epoch(seen: &AtomicU64, epoch: u64) -> bool {
    let before = seen.fetch_max(epoch, Ordering::SeqCst);
    epoch >= before
}

/// Long-polls the desired state and reconciles, until the server forgets the node.
pub(super) async fn poll_loop(sh: &Shared, instance: &str, poll_wait: Duration) {
    let mut gen = u64::MAX; // never equal: the first poll answers at once
    let mut backoff = Backoff::new();
    let mut cancelled_unseen = BTreeSet::new();
    loop {
        // Acknowledged before this request is sent: the answer cannot list them.
        let acked_before = sh.launcher.records().ack_mark();
        let gen_s = gen.to_string();
        let req = |url: String| {
            sh.http
                .get(url)
                .query(&[
                    ("node", sh.cfg.name.as_str()),
                    ("instance", instance),
                    ("gen", &gen_s),
                ])
                .timeout(poll_wait + Duration::from_secs(10))
        };
        // The lease counts from when the request left: the server counts from when it
        // arrived, never earlier (`fence_after`).
        let sent = Instant::now();
        match send(sh, "/api/agent/poll", req).await {
            Ok(r) if r.status() == StatusCode::CONFLICT => return,
            Ok(r) if r.status().is_success() => match r.json::<Desired>().await {
                Ok(d) if !accept_epoch(&sh.max_epoch, d.epoch) => {
                    tracing::warn!(
                        epoch = d.epoch,
                        seen = sh.max_epoch.load(Ordering::SeqCst),
                        server = %sh.servers.current(),
                        "refused a desired state from an older leader epoch than one already \
                         seen (a deposed leader); asking another server"
                    );
                    sh.servers.skip();
                }
                Ok(d) => {
                    backoff.reset();
                    heard(sh, sent);
                    gen = d.gen;
                    reconcile(sh, &d, &mut cancelled_unseen);
                    sh.launcher.records().forget_acked_before(acked_before);
                    sh.followers.forget_acked_before(acked_before);
                    continue;
                }
                Err(e) => tracing::warn!("unreadable poll answer: {e}"),
            },
            Ok(r) => {
                let status = r.status();
                tracing::warn!(
                    "poll refused ({status}): {}",
                    r.text().await.unwrap_or_default()
                );
            }
            Err(e) => backoff.note(&sh.servers.shown(), &e, sh.cfg.ca_cert.as_deref()),
        }
        backoff.sleep().await;
    }
}

#[cfg(test)]
mod epoch_tests {
    use super::*;

    #[test]
    fn desired_state_of_an_older_epoch_is_refused() {
        let seen = AtomicU64::new(0);
        // A server from before leader election says epoch 0: accepted while nothing
        // newer was seen.
        assert!(accept_epoch(&seen, 0));
        assert!(accept_epoch(&seen, 3));
        assert!(accept_epoch(&seen, 3));
        // The deposed leader of epoch 2 (woken up after a takeover) is refused, and
        // refusing it does not lower what was seen.
        assert!(!accept_epoch(&seen, 2));
        assert!(!accept_epoch(&seen, 0));
        assert_eq!(seen.load(Ordering::SeqCst), 3);
        assert!(accept_epoch(&seen, 4));
    }
}
