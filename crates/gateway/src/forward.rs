//! Proxying one request to a replica of its service, as it is: the replica with the
//! fewest outstanding requests; sent once more to another replica when the first fails
//! before any byte of an answer (a refused, reset or closed connection) and the request
//! may be repeated; the answer streamed back chunk by chunk as the replica writes it.

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::{Reject, Style};
use crate::load::InFlight;
use crate::state::Gateway;
use crate::table::{Lease, Service};

/// A request to pass on.
pub struct Call {
    pub method: Method,
    /// Path and query, as the replica gets them.
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// May be sent again after a failure before any answer byte (GET, HEAD, inference).
    pub retry: bool,
    pub style: Style,
    /// The model it is for (metrics), and whether it is an inference (Triton's counters).
    pub model: String,
    pub inference: Option<String>,
    pub arrived: Instant,
}

/// Headers of one hop, not passed on (RFC 9110 7.6.1), and those the client sets anew.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
    )
}

/// The headers to pass on.
pub fn end_to_end(h: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(h.len());
    for (k, v) in h {
        if !hop_by_hop(k) {
            out.append(k.clone(), v.clone());
        }
    }
    out
}

/// Sends `call` to `svc` and streams the answer back.
pub async fn forward(gw: &Arc<Gateway>, svc: Arc<Service>, call: Call) -> Response {
    let mut except: Option<String> = None;
    let queued = call.arrived.elapsed().as_secs_f64();
    gw.metrics.queued_for(&svc.name, &call.model, queued);
    loop {
        let Some(lease) = svc.pick(except.as_deref(), None) else {
            return finish_err(gw, &svc, &call, no_replica(gw, &svc).styled(call.style));
        };
        let url = format!("{}{}", lease.endpoint.url, call.path);
        let in_flight = svc.load.start();
        let sent = Instant::now();
        let r = gw
            .http
            .request(call.method.clone(), &url)
            .headers(call.headers.clone())
            .body(call.body.clone())
            .send()
            .await;
        match r {
            Ok(resp) => {
                gw.metrics
                    .compute(&svc.name, &call.model, sent.elapsed().as_secs_f64());
                if let Some(v) = &call.inference {
                    gw.metrics.executed(&call.model, v, 1);
                }
                return stream_back(gw, &svc, &call, resp, lease, in_flight);
            }
            Err(e) => {
                lease.endpoint.eject();
                let again = call.retry && except.is_none() && svc.endpoints.len() > 1;
                if again {
                    tracing::debug!("replica {url} failed before answering ({e}); retrying");
                    gw.metrics.retried(&svc.name);
                    except = Some(lease.endpoint.url.clone());
                    continue;
                }
                let why = crate::error::chain(&e);
                let reject = Reject::new(
                    StatusCode::BAD_GATEWAY,
                    format!(
                        "replica {} (job {}) of service {} failed before answering: {why}; \
                         retry the request{}",
                        lease.endpoint.url,
                        lease.endpoint.job,
                        svc.name,
                        if call.retry {
                            " (it was tried on another replica too)"
                        } else {
                            ""
                        }
                    ),
                )
                .styled(call.style);
                return finish_err(gw, &svc, &call, reject);
            }
        }
    }
}

/// 503 when a service's replicas all vanished between admission and the send.
pub fn no_replica(gw: &Gateway, svc: &Service) -> Reject {
    Reject::busy(
        format!(
            "service {} has no ready replica right now; retry later",
            svc.name
        ),
        gw.limits.retry_after,
    )
}

/// A request refused before it was sent (unknown model, held too long, shed), counted
/// as an answer of the service serving `model`, if any.
pub fn refused(
    gw: &Gateway,
    model: &str,
    inference: Option<&str>,
    r: Reject,
    arrived: Instant,
) -> Response {
    let snap = gw.table.snapshot();
    let svc = snap.models.get(model);
    let took = arrived.elapsed();
    gw.metrics.answered(
        svc.map_or("", |s| s.name.as_str()),
        model,
        r.status.as_u16(),
        took.as_secs_f64(),
    );
    if let Some(s) = svc {
        s.load.answered(took);
    }
    if let Some(v) = inference {
        gw.metrics.inference(model, v, false);
    }
    r.into_response()
}

/// The gateway's own error for a request, counted as an answer.
fn finish_err(gw: &Gateway, svc: &Service, call: &Call, r: Reject) -> Response {
    let secs = call.arrived.elapsed();
    gw.metrics.answered(
        &svc.name,
        &call.model,
        r.status.as_u16(),
        secs.as_secs_f64(),
    );
    if let Some(v) = &call.inference {
        gw.metrics.inference(&call.model, v, false);
    }
    svc.load.answered(secs);
    r.into_response()
}

/// What is counted when the answer's body ends (or the client goes away).
struct Done {
    gw: Arc<Gateway>,
    service: String,
    model: String,
    code: u16,
    inference: Option<String>,
    arrived: Instant,
    load: Arc<crate::load::Load>,
    _lease: Lease,
    _in_flight: InFlight,
}

impl Drop for Done {
    fn drop(&mut self) {
        let took = self.arrived.elapsed();
        self.load.answered(took);
        self.gw
            .metrics
            .answered(&self.service, &self.model, self.code, took.as_secs_f64());
        if let Some(v) = &self.inference {
            self.gw
                .metrics
                .inference(&self.model, v, (200..300).contains(&self.code));
        }
    }
}

/// The replica's answer, its body passed on chunk by chunk (a Server-Sent Events stream
/// reaches the client as the replica writes it).
fn stream_back(
    gw: &Arc<Gateway>,
    svc: &Service,
    call: &Call,
    resp: reqwest::Response,
    lease: Lease,
    in_flight: InFlight,
) -> Response {
    let status = resp.status();
    let mut headers = HeaderMap::with_capacity(resp.headers().len());
    for (k, v) in resp.headers() {
        // The length is kept: the body is passed on byte for byte.
        if !hop_by_hop(k) || k == axum::http::header::CONTENT_LENGTH {
            headers.append(k.clone(), v.clone());
        }
    }
    let done = Done {
        gw: gw.clone(),
        service: svc.name.clone(),
        model: call.model.clone(),
        code: status.as_u16(),
        inference: call.inference.clone(),
        arrived: call.arrived,
        load: svc.load.clone(),
        _lease: lease,
        _in_flight: in_flight,
    };
    let body = futures_util::stream::unfold(Some((resp, done)), |st| async move {
        let (mut resp, done) = st?;
        match resp.chunk().await {
            Ok(Some(c)) => Some((Ok(c), Some((resp, done)))),
            Ok(None) => None,
            Err(e) => Some((Err(e), None)),
        }
    });
    let mut r = Response::new(Body::from_stream(body));
    *r.status_mut() = status;
    *r.headers_mut() = headers;
    r
}
