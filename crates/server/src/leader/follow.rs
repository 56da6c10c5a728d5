//! What a server answers while it does not lead: `/api/health` is its own (it says who
//! leads); every other request, agents' included, is sent to the leader with a 307 to
//! the same path on the leader's advertised URL (307 keeps the method and the body). While
//! no leader is known (an election under way) a request waits up to the hold (the lease)
//! for one: it is then served here or redirected; still none, it is refused with 503 and
//! `Retry-After`.

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
    // An election under way (a crashed leader's lease running out, or this server
    // taking its own back after a stall): the request waits for it, a while, rather
    // than failing at once.
    if lead.settled().await && lead.leading() {
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
    // Tells a client (through a load balancer, say, with one URL) that this is a
    // failover, not a busy leader: worth retrying for longer.
    resp.headers_mut()
        .insert(NO_LEADER_HEADER, HeaderValue::from_static("unknown"));
    resp
}

/// The header of a follower's 503 while no leader is known (`x-gpusched-leader: unknown`).
pub const NO_LEADER_HEADER: &str = "x-gpusched-leader";

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use axum::routing::get;
    use axum::Router;

    use super::*;
    use crate::leader::Known;

    async fn serve(lead: Leadership) -> String {
        let app = Router::new()
            .route("/api/health", get(|| async { "health" }))
            .route(
                "/api/jobs",
                get(|| async { "jobs" }).post(|| async { "posted" }),
            )
            .layer(axum::middleware::from_fn_with_state(lead, follow_leader));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    /// While no leader is known, a request waits for the election: here, for this
    /// server to lead again (a lone server taking its lease back after a stall).
    #[tokio::test]
    async fn a_request_during_an_election_waits_for_its_leader() {
        let lead = Leadership::new("http://me:1".into(), Duration::from_secs(30));
        let url = serve(lead.clone()).await;
        let asked = tokio::spawn(async move {
            reqwest::Client::new()
                .post(format!("{url}/api/jobs"))
                .send()
                .await
                .unwrap()
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!asked.is_finished(), "answered before any server led");
        lead.lead(2, Instant::now() + Duration::from_secs(60));
        let r = tokio::time::timeout(Duration::from_secs(20), asked)
            .await
            .expect("answered once this server leads")
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.text().await.unwrap(), "posted");
    }

    #[tokio::test]
    async fn a_follower_redirects_to_the_leader_or_says_when_to_retry() {
        let lead = Leadership::new("http://me:1".into(), Duration::from_millis(200));
        let url = serve(lead.clone()).await;
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        // No leader known: 503 with Retry-After; health is answered here.
        let r = http.get(format!("{url}/api/jobs")).send().await.unwrap();
        assert_eq!(r.status(), 503);
        assert_eq!(r.headers()["retry-after"], "1");
        assert_eq!(r.headers()[NO_LEADER_HEADER], "unknown");
        assert!(r
            .text()
            .await
            .unwrap()
            .contains("no server leads right now"));
        let r = http.get(format!("{url}/api/health")).send().await.unwrap();
        assert_eq!(r.text().await.unwrap(), "health");
        // A known leader: 307 to the same path and query there, for any method.
        lead.follow(Some(Known {
            url: "http://leader:2".into(),
            epoch: 3,
        }));
        let r = http
            .post(format!("{url}/api/jobs?x=1"))
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 307);
        assert_eq!(r.headers()["location"], "http://leader:2/api/jobs?x=1");
        assert!(r
            .text()
            .await
            .unwrap()
            .contains("(epoch 3) is at http://leader:2"));
        // Never to itself (a lease row still naming this server): 503.
        lead.follow(Some(Known {
            url: "http://me:1".into(),
            epoch: 4,
        }));
        let r = http.get(format!("{url}/api/jobs")).send().await.unwrap();
        assert_eq!(r.status(), 503);
        // Leading: every route is served here.
        lead.lead(5, Instant::now() + Duration::from_secs(60));
        let r = http.post(format!("{url}/api/jobs")).send().await.unwrap();
        assert_eq!(r.text().await.unwrap(), "posted");
    }
}
