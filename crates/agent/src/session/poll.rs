//! The long poll of the node's desired state, refused from a deposed leader's epoch,
//! until the server forgets the node.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gpusched_wire::agent::{from_msgpack, names_msgpack, MSGPACK};
use gpusched_wire::compact::Held;
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
/// With a server that takes compact messages, each poll names the generation last
/// applied (`have`) and asks for MessagePack; the launches it holds come back named only,
/// and are put back from what it kept (`gpusched_wire::compact::Held`) before reconciling.
pub(super) async fn poll_loop(sh: &Shared, instance: &str, poll_wait: Duration) {
    let mut gen = u64::MAX; // never equal: the first poll answers at once
    let mut have: Option<u64> = None;
    let mut held = Held::default();
    let mut backoff = Backoff::new();
    let mut cancelled_unseen = BTreeSet::new();
    let compact = sh.compact.load(Ordering::SeqCst);
    loop {
        // Acknowledged before this request is sent: the answer cannot list them.
        let acked_before = sh.launcher.records().ack_mark();
        let gen_s = gen.to_string();
        let have_s = have.map(|h| h.to_string());
        let req = |url: String| {
            let mut query = vec![
                ("node", sh.cfg.name.as_str()),
                ("instance", instance),
                ("gen", &gen_s),
            ];
            if let Some(h) = &have_s {
                query.push(("have", h));
            }
            let r = sh
                .http
                .get(url)
                .query(&query)
                .timeout(poll_wait + Duration::from_secs(10));
            if compact {
                r.header(reqwest::header::ACCEPT, MSGPACK)
            } else {
                r
            }
        };
        // The lease counts from when the request left: the server counts from when it
        // arrived, never earlier (`fence_after`).
        let sent = Instant::now();
        match send(sh, "/api/agent/poll", req).await {
            Ok(r) if r.status() == StatusCode::CONFLICT => return,
            Ok(r) if r.status().is_success() => match read_desired(r).await {
                Ok(d) if !accept_epoch(&sh.max_epoch, d.epoch) => {
                    tracing::warn!(
                        epoch = d.epoch,
                        seen = sh.max_epoch.load(Ordering::SeqCst),
                        server = %sh.servers.current(),
                        "refused a desired state from an older leader epoch than one already \
                         seen (a deposed leader); asking another server"
                    );
                    sh.servers.skip();
                    // Another server holds none of what this one sent.
                    (have, gen) = (None, u64::MAX);
                    held.clear();
                }
                Ok(mut d) => {
                    backoff.reset();
                    heard(sh, sent);
                    if let Err(e) = held.expand(&mut d) {
                        tracing::warn!("{e}");
                        (have, gen) = (None, u64::MAX);
                        continue;
                    }
                    gen = d.gen;
                    reconcile(sh, &d, &mut cancelled_unseen);
                    sh.launcher.records().forget_acked_before(acked_before);
                    sh.followers.forget_acked_before(acked_before);
                    if compact {
                        held.keep(&mut d);
                        have = Some(d.gen);
                    }
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

/// The desired state in the encoding the answer says (MessagePack or JSON).
async fn read_desired(r: reqwest::Response) -> anyhow::Result<Desired> {
    let msgpack = r
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(names_msgpack);
    let bytes = r.bytes().await?;
    Ok(if msgpack {
        from_msgpack(&bytes)?
    } else {
        serde_json::from_slice(&bytes)?
    })
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
