//! `POST /v2/models/{name}[/versions/{v}]/infer`: passed on as it is for a model
//! without batching (or a request that cannot batch: data in shared memory, inputs
//! whose first dimensions differ); queued in the model's batcher otherwise.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use gpusched_wire::service::{Batching, ServeProtocol};
use serde_json::Value;
use tokio::sync::oneshot;

use super::batch;
use super::batcher::{Batcher, Pending};
use super::message::{self, HEADER_LEN};
use crate::error::{Reject, Style};
use crate::forward::{self, Call};
use crate::hold;
use crate::models::service_for;
use crate::state::Gateway;
use crate::table::Service;

pub async fn infer(
    gw: Arc<Gateway>,
    model: String,
    version: Option<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let arrived = Instant::now();
    let lookup = |s: &crate::table::Snapshot| service_for(s, &model, ServeProtocol::Oip);
    let svc = match hold::ready(&gw, &lookup, arrived, Style::Oip).await {
        Ok(s) => s,
        Err(r) => {
            let v = version.as_deref().unwrap_or("");
            return forward::refused(&gw, &model, Some(v), r, arrived);
        }
    };
    let batching = svc.model(&model).and_then(|m| m.batching.clone());
    let body = match batching {
        Some(b) => match batched(
            &gw,
            &svc,
            &model,
            version.clone(),
            &headers,
            body,
            &b,
            arrived,
        )
        .await
        {
            Ok(r) => return r,
            Err(body) => body,
        },
        None => body,
    };
    let call = Call {
        method: Method::POST,
        path: uri.path_and_query().map_or("/", |p| p.as_str()).to_string(),
        headers: forward::end_to_end(&headers),
        body,
        // Inference has no side effect on the replica: sending it again is safe.
        retry: true,
        style: Style::Oip,
        inference: Some(version.unwrap_or_default()),
        model,
        arrived,
    };
    forward::forward(&gw, svc, call).await
}

/// The request's priority level, 0-based: its `priority` parameter (1 the highest; 0 or
/// none: the model's default, else the lowest), within the model's levels.
fn level(params: &serde_json::Map<String, Value>, b: &Batching) -> usize {
    let levels = b.priority_levels.max(1);
    let default = b.default_priority_level.unwrap_or(levels).clamp(1, levels);
    let p = params
        .get("priority")
        .and_then(Value::as_u64)
        .filter(|&p| p > 0)
        .map_or(default, |p| p.min(levels as u64) as u32);
    (p - 1) as usize
}

/// Queues the request in the model's batcher and answers it; gives the body back when
/// the request cannot batch (it is then passed on as it is).
#[allow(clippy::too_many_arguments)]
async fn batched(
    gw: &Arc<Gateway>,
    svc: &Arc<Service>,
    model: &str,
    version: Option<String>,
    headers: &HeaderMap,
    body: Bytes,
    b: &Batching,
    arrived: Instant,
) -> Result<Response, Bytes> {
    let answer = |r: Result<Response, Reject>| -> Response {
        let r = r.unwrap_or_else(|e| e.into_response());
        let took = arrived.elapsed();
        svc.load.answered(took);
        gw.metrics
            .answered(&svc.name, model, r.status().as_u16(), took.as_secs_f64());
        gw.metrics.inference(
            model,
            version.as_deref().unwrap_or(""),
            r.status().is_success(),
        );
        r
    };
    // A compressed body is not parsed here: it goes on alone, as it is.
    let encoded = headers
        .get(header::CONTENT_ENCODING)
        .is_some_and(|v| v.as_bytes() != b"identity");
    if encoded {
        return Err(body);
    }
    let header_len = match headers
        .get(HEADER_LEN)
        .map(|v| v.to_str().ok().and_then(|v| v.trim().parse().ok()))
    {
        None => None,
        Some(Some(n)) => Some(n),
        Some(None) => {
            return Ok(answer(Err(Reject::new(
                StatusCode::BAD_REQUEST,
                "the Inference-Header-Content-Length header must be a byte count",
            ))))
        }
    };
    let msg = match message::parse(&body, header_len, "inputs") {
        Ok(m) => m,
        Err(e) => return Ok(answer(Err(Reject::new(StatusCode::BAD_REQUEST, e)))),
    };
    let Some(size) = msg.batch_size() else {
        return Err(body);
    };
    if let Err(e) = batch::check(&msg) {
        return Ok(answer(Err(Reject::new(StatusCode::BAD_REQUEST, e))));
    }
    if size > b.max_batch_size as u64 {
        return Ok(answer(Err(Reject::new(
            StatusCode::BAD_REQUEST,
            format!(
                "the request's batch size {size} is above model {model}'s max_batch_size {}; \
                 split it into smaller requests",
                b.max_batch_size
            ),
        ))));
    }
    let timeout_us = match msg.parameters.get("timeout").and_then(Value::as_u64) {
        Some(t) if b.allow_timeout_override => t,
        _ => b.default_timeout_us,
    };
    let mut deadline = arrived + gw.limits.hold_timeout;
    if timeout_us > 0 {
        deadline = deadline.min(arrived + Duration::from_micros(timeout_us));
    }
    let shed = |what: String| {
        gw.metrics.shed(&svc.name);
        Ok(answer(Err(Reject::busy(what, gw.limits.retry_after))))
    };
    let Some(waiting) = svc.load.try_queue(gw.limits.max_queue) else {
        return shed(format!(
            "service {} has {} requests waiting at this gateway (--max-queue); retry later",
            svc.name, gw.limits.max_queue
        ));
    };
    let (tx, rx) = oneshot::channel();
    let pending = Pending {
        key: batch::key(&msg, version.as_deref()),
        level: level(&msg.parameters, b),
        size: size as u32,
        msg,
        version: version.clone(),
        reply: tx,
        waiting,
        arrived,
        deadline,
    };
    let batcher = batcher_of(gw, &svc.name, model);
    if !batcher.push(pending, b.max_queue_size as usize) {
        return shed(format!(
            "model {model}'s batch queue holds its max_queue_size of {} requests; retry later",
            b.max_queue_size
        ));
    }
    let r = match rx.await {
        Ok(Ok((body, hl))) => {
            let mut r = body.into_response();
            let ct = if hl.is_some() {
                "application/octet-stream"
            } else {
                "application/json"
            };
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
            if let Some(n) = hl {
                r.headers_mut().insert(HEADER_LEN, HeaderValue::from(n));
            }
            Ok(r)
        }
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Reject::busy(
            format!("model {model}'s batcher stopped (the gateway is stopping); retry"),
            gw.limits.retry_after,
        )),
    };
    Ok(answer(r))
}

/// The batcher of `model` of `service`, started at its first request.
fn batcher_of(gw: &Arc<Gateway>, service: &str, model: &str) -> Arc<Batcher> {
    let mut all = gw.batchers.lock().unwrap_or_else(|p| p.into_inner());
    all.entry(format!("{service}/{model}"))
        .or_insert_with(|| Arc::new(Batcher::start(gw, service.to_string(), model.to_string())))
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn batching(levels: u32, default: Option<u32>) -> Batching {
        Batching {
            max_batch_size: 4,
            preferred_batch_sizes: vec![],
            max_queue_delay_us: 0,
            priority_levels: levels,
            default_priority_level: default,
            max_queue_size: 10,
            default_timeout_us: 0,
            allow_timeout_override: false,
        }
    }

    fn params(v: serde_json::Value) -> serde_json::Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_priority_maps_to_a_level_within_the_models() {
        let b = batching(3, None);
        assert_eq!(level(&params(json!({"priority": 1})), &b), 0);
        assert_eq!(level(&params(json!({})), &b), 2, "none: the lowest");
        assert_eq!(level(&params(json!({"priority": 0})), &b), 2);
        assert_eq!(
            level(&params(json!({"priority": 9})), &b),
            2,
            "past the last: the last"
        );
        assert_eq!(level(&params(json!({})), &batching(3, Some(2))), 1);
        assert_eq!(
            level(&params(json!({"priority": 5})), &batching(0, None)),
            0
        );
    }
}
