//! What a server answers while it does not lead: `/api/health` is its own (it says who
//! leads); every other request, agents' included, is sent to the leader with a 307 to
//! the same path on the leader's advertised URL (307 keeps the method and the body), or
//! refused with 503 and `Retry-After` while no leader is known (an election under way).

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use gpusched_wire::ApiError;

use super::{Leadership, Role};

/// Seconds a client waits before retrying when no leader is known.
const RETRY_AFTER_S: u64 = 1;

pub async fn follow_leader(State(lead): State<Leadership>, req: Request, next: Next) -> Response {
    if lead.leading() || req.uri().path() == "/api/health" {
        return next.run(req).await;
    }
    let path = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    match lead.role() {
        Role::Follower {
            leader: Some(known),
        } if known.url != lead.advertise() => redirect(&known.url, &path, known.epoch),
        _ => no_leader(),
    }
}

fn redirect(base: &str, path: &str, epoch: u64) -> Response {
    let to = format!("{}{path}", base.trim_end_matches('/'));
    let Ok(location) = HeaderValue::from_str(&to) else {
        return no_leader();
    };
    let body = ApiError {
        error: format!(
            "this server does not lead; the leader (epoch {epoch}) is at {base}: repeat the \
             request there (clients given several --server URLs do so themselves)"
        ),
    };
    let mut resp = (StatusCode::TEMPORARY_REDIRECT, Json(body)).into_response();
    resp.headers_mut().insert(header::LOCATION, location);
    resp
}

fn no_leader() -> Response {
    let body = ApiError {
        error: format!(
            "no server leads right now (an election is under way, or the store is \
             unreachable); retry in {RETRY_AFTER_S} s, or ask another server"
        ),
    };
    let mut resp = (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_S));
    resp
}
