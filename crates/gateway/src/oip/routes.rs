//! The OIP routes: health, metadata and readiness answered by the gateway or its
//! replicas, inference batched or passed on.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{body::Bytes, Json, Router};
use gpusched_wire::service::ServeProtocol;

use super::infer;
use crate::error::Style;
use crate::forward::{self, Call};
use crate::hold;
use crate::models::service_for;
use crate::state::Gateway;

pub fn router() -> Router<Arc<Gateway>> {
    Router::new()
        .route("/v2/health/live", get(|| async { StatusCode::OK }))
        .route("/v2/health/ready", get(ready))
        .route("/v2", get(server_metadata))
        .route("/v2/models/{name}", get(metadata))
        .route("/v2/models/{name}/versions/{version}", get(metadata_v))
        .route("/v2/models/{name}/ready", get(model_ready))
        .route(
            "/v2/models/{name}/versions/{version}/ready",
            get(model_ready_v),
        )
        .route("/v2/models/{name}/infer", post(infer_plain))
        .route("/v2/models/{name}/versions/{version}/infer", post(infer_v))
}

/// Ready once the gateway has its first endpoint set (it can route); 400 before, as
/// Triton answers a server that is not ready.
async fn ready(State(gw): State<Arc<Gateway>>) -> StatusCode {
    if gw.table.synced() {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    }
}

async fn server_metadata() -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "name": "gpusched-gateway",
        "version": env!("CARGO_PKG_VERSION"),
        "extensions": ["binary_tensor_data"],
    }))
}

async fn metadata(
    State(gw): State<Arc<Gateway>>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    pass_get(gw, name, uri, headers).await
}

async fn metadata_v(
    State(gw): State<Arc<Gateway>>,
    Path((name, _v)): Path<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    pass_get(gw, name, uri, headers).await
}

/// A model's metadata comes from one of its replicas.
async fn pass_get(gw: Arc<Gateway>, model: String, uri: Uri, headers: HeaderMap) -> Response {
    let arrived = Instant::now();
    let lookup = |s: &crate::table::Snapshot| service_for(s, &model, ServeProtocol::Oip);
    let svc = match hold::ready(&gw, &lookup, arrived, Style::Oip).await {
        Ok(s) => s,
        Err(r) => return forward::refused(&gw, &model, None, r, arrived),
    };
    let call = Call {
        method: Method::GET,
        path: uri.path_and_query().map_or("/", |p| p.as_str()).to_string(),
        headers: forward::end_to_end(&headers),
        body: Bytes::new(),
        retry: true,
        style: Style::Oip,
        model,
        inference: None,
        arrived,
    };
    forward::forward(&gw, svc, call).await
}

async fn model_ready(State(gw): State<Arc<Gateway>>, Path(name): Path<String>) -> Response {
    ready_of(&gw, &name)
}

async fn model_ready_v(
    State(gw): State<Arc<Gateway>>,
    Path((name, _v)): Path<(String, String)>,
) -> Response {
    ready_of(&gw, &name)
}

/// Ready iff a replica of its service is (the gateway's table, not a call).
fn ready_of(gw: &Gateway, model: &str) -> Response {
    match service_for(&gw.table.snapshot(), model, ServeProtocol::Oip) {
        Ok(svc) if !svc.endpoints.is_empty() => StatusCode::OK.into_response(),
        Ok(_) => StatusCode::BAD_REQUEST.into_response(),
        Err(r) => r.into_response(),
    }
}

async fn infer_plain(
    State(gw): State<Arc<Gateway>>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    infer::infer(gw, name, None, uri, headers, body).await
}

async fn infer_v(
    State(gw): State<Arc<Gateway>>,
    Path((name, version)): Path<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    infer::infer(gw, name, Some(version), uri, headers, body).await
}
