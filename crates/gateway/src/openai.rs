//! The OpenAI-compatible side: the models of every `openai` service, and completions
//! routed by the body's `model`, passed on unbatched (such servers batch themselves),
//! a `stream: true` answer (Server-Sent Events) passed on chunk by chunk.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use gpusched_wire::service::ServeProtocol;

use crate::error::{Reject, Style};
use crate::forward::{self, Call};
use crate::hold;
use crate::models::service_for;
use crate::state::Gateway;

pub fn router() -> Router<Arc<Gateway>> {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/completions", post(complete))
        .route("/v1/chat/completions", post(complete))
}

/// OpenAI's list shape; `owned_by` is the serving service.
async fn models(State(gw): State<Arc<Gateway>>) -> Json<serde_json::Value> {
    let snap = gw.table.snapshot();
    let mut data: Vec<(String, String)> = snap
        .models
        .iter()
        .filter(|(_, s)| s.protocol == ServeProtocol::Openai)
        .map(|(m, s)| (m.clone(), s.name.clone()))
        .collect();
    data.sort();
    let data: Vec<_> = data
        .into_iter()
        .map(|(id, owner)| {
            serde_json::json!({"id": id, "object": "model", "created": 0, "owned_by": owner})
        })
        .collect();
    Json(serde_json::json!({"object": "list", "data": data}))
}

#[derive(serde::Deserialize)]
struct Routed {
    model: Option<String>,
}

async fn complete(
    State(gw): State<Arc<Gateway>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let arrived = Instant::now();
    let model = match serde_json::from_slice::<Routed>(&body) {
        Ok(Routed { model: Some(m) }) => m,
        Ok(_) => {
            return Reject::new(
                StatusCode::BAD_REQUEST,
                "the request has no \"model\"; name one of GET /v1/models",
            )
            .styled(Style::Openai)
            .into_response()
        }
        Err(e) => {
            return Reject::new(
                StatusCode::BAD_REQUEST,
                format!("the request body is not a JSON object with a \"model\": {e}"),
            )
            .styled(Style::Openai)
            .into_response()
        }
    };
    let lookup = |s: &crate::table::Snapshot| service_for(s, &model, ServeProtocol::Openai);
    let svc = match hold::ready(&gw, &lookup, arrived, Style::Openai).await {
        Ok(s) => s,
        Err(r) => return forward::refused(&gw, &model, None, r, arrived),
    };
    let call = Call {
        method: Method::POST,
        path: uri.path_and_query().map_or("/", |p| p.as_str()).to_string(),
        headers: forward::end_to_end(&headers),
        body,
        // Sent again only when the replica failed before any byte of an answer: the
        // client has seen nothing, and a completion changes nothing at the replica.
        retry: true,
        style: Style::Openai,
        model,
        inference: None,
        arrived,
    };
    forward::forward(&gw, svc, call).await
}
