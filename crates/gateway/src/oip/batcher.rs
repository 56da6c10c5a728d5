//! A batched model's batcher: a task that owns the model's queue, sends each batch
//! (see [`super::queue`]) to the replica of the service with the fewest outstanding
//! requests among those with room for another batch, and gives every request of the
//! batch its share of the answer, or the batch's error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::StatusCode;
use tokio::sync::{mpsc, oneshot};

use super::batch;
use super::message::{self, Message, HEADER_LEN};
use super::queue::{Decision, Entry, Policy, Queue};
use crate::error::Reject;
use crate::load::Waiting;
use crate::state::Gateway;
use crate::table::{Lease, Service};

/// Batches one replica may have from one gateway at a time: one computing and one
/// ready to start, so a replica never idles between batches, while the rest of the
/// queue keeps filling the next batch (what makes batches grow under load).
pub const BATCH_SLOTS: u32 = 2;

/// One request's answer: the body and, when it has binary data, its JSON's length.
pub type Answer = Result<(Bytes, Option<usize>), Reject>;

/// A request in the queue.
pub struct Pending {
    pub msg: Message,
    pub version: Option<String>,
    pub reply: oneshot::Sender<Answer>,
    /// Counts it as queued at its service until it is sent.
    pub waiting: Waiting,
    /// Its priority level, 0 the highest.
    pub level: usize,
    pub key: String,
    pub size: u32,
    pub arrived: Instant,
    pub deadline: Instant,
}

pub struct Batcher {
    tx: mpsc::UnboundedSender<Pending>,
    /// Requests in the queue (Triton's `max_queue_size`).
    len: Arc<AtomicUsize>,
    task: tokio::task::AbortHandle,
}

impl Batcher {
    /// Starts the batcher of `model` of `service`; it stops with the gateway.
    pub fn start(gw: &Arc<Gateway>, service: String, model: String) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let len = Arc::new(AtomicUsize::new(0));
        let task =
            tokio::spawn(run(Arc::downgrade(gw), service, model, rx, len.clone())).abort_handle();
        Batcher { tx, len, task }
    }

    /// Queues `p` unless the queue holds `cap` already; false: refused (dropping `p`
    /// uncounts it).
    pub fn push(&self, p: Pending, cap: usize) -> bool {
        if self.len.fetch_add(1, Ordering::AcqRel) >= cap {
            self.len.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        if self.tx.send(p).is_err() {
            self.len.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    pub fn stop(&self) {
        self.task.abort();
    }
}

/// The model's batching policy in the current table, if it is still batched there.
fn policy(svc: &Service, model: &str) -> Option<Policy> {
    let b = svc.model(model)?.batching.as_ref()?;
    let mut preferred = b.preferred_batch_sizes.clone();
    preferred.sort_unstable();
    Some(Policy {
        max_batch_size: b.max_batch_size.max(1),
        preferred,
        delay: Duration::from_micros(b.max_queue_delay_us),
    })
}

async fn run(
    gw: Weak<Gateway>,
    service: String,
    model: String,
    mut rx: mpsc::UnboundedReceiver<Pending>,
    len: Arc<AtomicUsize>,
) {
    let Some(g) = gw.upgrade() else { return };
    let mut changes = g.table.watch();
    let mut room = g.room.subscribe();
    drop(g);
    let mut queue: Queue<Pending> = Queue::new(17);
    let mut last_policy: Option<Policy> = None;
    loop {
        let Some(g) = gw.upgrade() else { return };
        changes.borrow_and_update();
        room.borrow_and_update();
        let now = Instant::now();
        for e in queue.take_if(|e| e.deadline <= now || e.item.reply.is_closed()) {
            len.fetch_sub(1, Ordering::AcqRel);
            let waited = now.saturating_duration_since(e.arrived);
            g.metrics.shed(&service);
            let _ = e.item.reply.send(Err(Reject::busy(
                format!(
                    "the request waited {} ms in model {model}'s batch queue, past its \
                     timeout (the model's default_timeout_us, the request's `timeout` \
                     parameter, or the gateway's --hold-timeout); retry later",
                    waited.as_millis()
                ),
                g.limits.retry_after,
            )));
        }
        let snap = g.table.snapshot();
        let svc = snap.services.get(&service).cloned();
        if let Some(p) = svc.as_deref().and_then(|s| policy(s, &model)) {
            last_policy = Some(p);
        }
        let mut wake = queue.next_deadline();
        if let (Some(svc), Some(p)) = (svc, last_policy.as_ref()) {
            while !queue.is_empty() {
                let Some(lease) = svc.pick(None, Some(BATCH_SLOTS)) else {
                    break; // every replica busy (or none): wait for room or a change
                };
                match queue.decide(now, p) {
                    Decision::Send(v) => {
                        len.fetch_sub(v.len(), Ordering::AcqRel);
                        tokio::spawn(execute(g.clone(), svc.clone(), model.clone(), lease, v));
                    }
                    Decision::Wait(t) => {
                        wake = match (wake, t) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                        break;
                    }
                }
            }
        }
        drop(g);
        let sleep = tokio::time::sleep_until(
            wake.unwrap_or_else(|| now + Duration::from_secs(3600))
                .into(),
        );
        tokio::select! {
            m = rx.recv() => match m {
                Some(p) => {
                    push(&mut queue, p);
                    // Take every request already waiting in the channel, so a burst is
                    // one decision, not one batch per request.
                    while let Ok(p) = rx.try_recv() {
                        push(&mut queue, p);
                    }
                }
                None => return,
            },
            _ = sleep => {}
            _ = changes.changed() => {}
            _ = room.changed() => {}
        }
    }
}

fn push(q: &mut Queue<Pending>, mut p: Pending) {
    let e = Entry {
        key: std::mem::take(&mut p.key),
        size: p.size,
        arrived: p.arrived,
        deadline: p.deadline,
        item: p,
    };
    q.push(e.item.level, e);
}

/// Sends one batch, sent once more to another replica when the first fails before
/// answering (inference has no side effects), and answers its requests.
async fn execute(
    gw: Arc<Gateway>,
    svc: Arc<Service>,
    model: String,
    lease: Lease,
    entries: Vec<Entry<Pending>>,
) {
    let now = Instant::now();
    let mut replies = Vec::with_capacity(entries.len());
    let mut msgs = Vec::with_capacity(entries.len());
    let mut sizes = Vec::with_capacity(entries.len());
    let mut in_flight = Vec::with_capacity(entries.len());
    let mut version = None;
    for e in entries {
        gw.metrics.queued_for(
            &svc.name,
            &model,
            now.saturating_duration_since(e.arrived).as_secs_f64(),
        );
        in_flight.push(svc.load.start());
        drop(e.item.waiting);
        version = e.item.version;
        sizes.push(e.size as u64);
        msgs.push(e.item.msg);
        replies.push(e.item.reply);
    }
    let total: u64 = sizes.iter().sum();
    gw.metrics.batch(&svc.name, &model, total);
    let refs: Vec<&Message> = msgs.iter().collect();
    let answers = match batch::join(&refs, &sizes) {
        Ok((body, hl)) => {
            let path = match &version {
                Some(v) => format!("/v2/models/{model}/versions/{v}/infer"),
                None => format!("/v2/models/{model}/infer"),
            };
            let sent = Instant::now();
            let r = send(&gw, &svc, lease, &path, body, hl).await;
            gw.metrics
                .compute(&svc.name, &model, sent.elapsed().as_secs_f64());
            gw.metrics
                .executed(&model, version.as_deref().unwrap_or(""), total);
            r.and_then(|(at, bytes, hl)| {
                let answer = message::parse(&bytes, hl, "outputs").map_err(|e| {
                    Reject::new(
                        StatusCode::BAD_GATEWAY,
                        format!("replica {at} of service {}: {e}", svc.name),
                    )
                })?;
                batch::split(answer, &refs, &sizes).map_err(|e| {
                    Reject::new(
                        StatusCode::BAD_GATEWAY,
                        format!("replica {at} of service {}: {e}", svc.name),
                    )
                })
            })
        }
        Err(e) => Err(Reject::new(
            StatusCode::BAD_REQUEST,
            format!("the batch could not be formed: {e}"),
        )),
    };
    drop(in_flight);
    gw.room.send_modify(|v| *v += 1);
    match answers {
        Ok(a) => {
            for (r, a) in replies.into_iter().zip(a) {
                let _ = r.send(a.map_err(|e| {
                    Reject::new(
                        StatusCode::BAD_GATEWAY,
                        format!("service {}'s answer to the batch: {e}", svc.name),
                    )
                }));
            }
        }
        Err(e) => {
            for r in replies {
                let _ = r.send(Err(e.clone()));
            }
        }
    }
}

/// POSTs a batch: the replica's URL, the answer's body and its JSON length, or the
/// replica's error (its status and message) for every request of the batch.
async fn send(
    gw: &Gateway,
    svc: &Service,
    lease: Lease,
    path: &str,
    body: Bytes,
    header_len: Option<usize>,
) -> Result<(String, Bytes, Option<usize>), Reject> {
    let mut lease = lease;
    let mut retried = false;
    loop {
        let url = lease.endpoint.url.clone();
        let mut req = gw.http.post(format!("{url}{path}")).body(body.clone());
        req = match header_len {
            Some(n) => req
                .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                .header(HEADER_LEN, n),
            None => req.header(reqwest::header::CONTENT_TYPE, "application/json"),
        };
        let r = req.send().await;
        let resp = match r {
            Ok(resp) => resp,
            Err(e) => {
                lease.endpoint.eject();
                if !retried {
                    if let Some(other) = svc.pick(Some(&url), None) {
                        if other.endpoint.url != url {
                            gw.metrics.retried(&svc.name);
                            retried = true;
                            lease = other;
                            continue;
                        }
                    }
                }
                return Err(Reject::new(
                    StatusCode::BAD_GATEWAY,
                    format!(
                        "replica {url} of service {} failed before answering the batch: {}; \
                         retry the request",
                        svc.name,
                        crate::error::chain(&e)
                    ),
                ));
            }
        };
        let status = resp.status();
        let hl = resp
            .headers()
            .get(HEADER_LEN)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        let bytes = resp.bytes().await.map_err(|e| {
            Reject::new(
                StatusCode::BAD_GATEWAY,
                format!(
                    "replica {url} of service {} broke off its answer to the batch: {}",
                    svc.name,
                    crate::error::chain(&e)
                ),
            )
        })?;
        if !status.is_success() {
            let msg = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
                .unwrap_or_else(|| String::from_utf8_lossy(&bytes).chars().take(500).collect());
            return Err(Reject::new(
                status,
                format!("replica {url} of service {}: {msg}", svc.name),
            ));
        }
        return Ok((url, bytes, hl));
    }
}
