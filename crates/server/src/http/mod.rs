//! The HTTP API: user endpoints under `/api/jobs` and `/api/nodes`, the agent protocol
//! under `/api/agent`, the OpenAPI document at `/api/openapi.json`, and Prometheus's
//! `/metrics`; the web dashboard's page and assets at `/` and `/ui/` (`crate::web`).

mod accounts;
mod agent;
mod agent_codec;
mod arrays;
mod auth;
mod cancel;
mod error;
mod export;
mod history;
mod hold;
mod jobs;
mod limits;
mod metrics;
mod nodes;
mod openapi;
mod peer;
mod reservations;
mod responses;
mod services;
pub mod steps;
mod tokens;
mod workflow;

use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{delete, get, patch, post, put, MethodRouter};
use axum::{Json, Router};
use gpusched_wire::ApiError;
use tokio::sync::{mpsc, oneshot};

use crate::actor::{Cmd, Reply};
use crate::auth::SharedTokens;
pub use auth::UdsPeer;
pub use error::ApiErr;
pub use peer::TcpPeer;

/// What every handler shares: the way to the state task.
#[derive(Clone)]
pub struct App {
    pub tx: mpsc::Sender<Cmd>,
    pub tokens: SharedTokens,
    pub poll_wait: Duration,
    /// The longest a `wait` request is held (`--max-wait`).
    pub max_wait: Duration,
    pub http: reqwest::Client,
    pub limits: std::sync::Arc<crate::config::Limits>,
    /// `--metrics-public`: `GET /metrics` needs no token.
    pub metrics_public: bool,
    pub rates: std::sync::Arc<limits::SubmitRates>,
    /// Unix groups of submitters, looked up before their commands reach the state task.
    pub groups: crate::groups::GroupDirectory,
    /// Who leads: a follower answers only `/api/health` itself.
    pub leadership: crate::leader::Leadership,
    /// The open streams of job steps (`steps/hub.rs`).
    pub steps: std::sync::Arc<steps::hub::Hub>,
}

impl App {
    /// Sends a command and waits for the state task's answer.
    pub async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Cmd) -> Result<T, ApiErr> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(make(tx)).await.map_err(|_| ApiErr::gone())?;
        match rx.await {
            Ok(r) => r.map_err(ApiErr::from),
            Err(_) => Err(ApiErr::gone()),
        }
    }
}

// Outermost in both routers: a server that does not lead sends every request but
// `/api/health` to the leader before anything else looks at it (the leader
// authenticates). Around that, every 503 gets its `Retry-After`, whichever layer or
// handler made it.

/// The API as served over TCP: bearer tokens.
pub fn tcp_router(app: App) -> Router {
    routes(&app)
        .layer(axum::middleware::from_fn_with_state(app.clone(), auth::tcp))
        .layer(axum::middleware::from_fn_with_state(
            app.leadership.clone(),
            crate::leader::follow_leader,
        ))
        .layer(axum::middleware::map_response(error::retry_after_on_503))
        .with_state(app)
}

/// The API as served over the Unix socket: the peer's uid.
pub fn uds_router(app: App) -> Router {
    routes(&app)
        .layer(axum::middleware::from_fn(auth::uds))
        .layer(axum::middleware::from_fn_with_state(
            app.leadership.clone(),
            crate::leader::follow_leader,
        ))
        .layer(axum::middleware::map_response(error::retry_after_on_503))
        .with_state(app)
}

/// One endpoint of the API: the router is built from [`ROUTES`], so this list is the
/// router's own (tests walk it to check every route's authorization).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
}

const fn r(method: &'static str, path: &'static str) -> Route {
    Route { method, path }
}

/// Every route the server serves.
pub const ROUTES: &[Route] = &[
    r("GET", "/api/health"),
    r("GET", "/api/openapi.json"),
    r("POST", "/api/jobs"),
    r("GET", "/api/jobs"),
    r("POST", "/api/jobs/batch"),
    r("POST", "/api/jobs/cancel"),
    r("GET", "/api/jobs/{id}"),
    r("POST", "/api/jobs/{id}/cancel"),
    r("POST", "/api/jobs/{id}/checkpoint"),
    r("GET", "/api/jobs/{id}/wait"),
    r("GET", "/api/jobs/{id}/logs"),
    r("GET", "/api/jobs/{id}/events"),
    r("POST", "/api/jobs/{id}/hold"),
    r("POST", "/api/jobs/{id}/release"),
    r("PATCH", "/api/jobs/{id}"),
    r("POST", "/api/workflows"),
    r("POST", "/api/jobs/{id}/steps"),
    r("GET", "/api/jobs/{id}/tasks"),
    r("GET", "/api/jobs/{id}/tasks/{index}"),
    r("POST", "/api/jobs/{id}/tasks/{index}/cancel"),
    r("GET", "/api/nodes"),
    r("GET", "/api/usage"),
    r("GET", "/api/queues"),
    r("GET", "/api/accounts"),
    r("POST", "/api/agent/register"),
    r("GET", "/api/agent/poll"),
    r("POST", "/api/agent/report"),
    r("GET", "/api/agent/steps/{id}/{step}"),
    r("POST", "/api/tokens"),
    r("GET", "/api/tokens"),
    r("POST", "/api/tokens/{id}/revoke"),
    r("GET", "/api/whoami"),
    r("POST", "/api/nodes/{name}/drain"),
    r("POST", "/api/nodes/{name}/resume"),
    r("GET", "/api/audit"),
    r("POST", "/api/admin/purge"),
    r("GET", "/api/history/jobs"),
    r("POST", "/api/services"),
    r("GET", "/api/services"),
    r("GET", "/api/services/{name}"),
    r("PUT", "/api/services/{name}"),
    r("DELETE", "/api/services/{name}"),
    r("POST", "/api/reservations"),
    r("GET", "/api/reservations"),
    r("GET", "/api/reservations/{name}"),
    r("PUT", "/api/reservations/{name}"),
    r("DELETE", "/api/reservations/{name}"),
    r("POST", "/api/gateway/sync"),
    r("GET", "/metrics"),
    r("GET", "/"),
    r("GET", "/ui/{*path}"),
];

/// The handler of one route of [`ROUTES`]; `None` for a route without one, which
/// `routes()` refuses (a startup bug, caught by every test that starts a server).
fn handler(route: Route) -> Option<MethodRouter<App>> {
    Some(match (route.method, route.path) {
        ("GET", "/api/health") => get(health),
        ("GET", "/api/openapi.json") => get(openapi::document),
        ("POST", "/api/jobs") => post(jobs::submit),
        ("GET", "/api/jobs") => get(jobs::list),
        ("POST", "/api/jobs/batch") => post(jobs::submit_batch),
        ("POST", "/api/jobs/cancel") => post(cancel::cancel_many),
        ("GET", "/api/jobs/{id}") => get(jobs::get_job),
        ("POST", "/api/jobs/{id}/cancel") => post(jobs::cancel),
        ("POST", "/api/jobs/{id}/checkpoint") => post(jobs::checkpoint),
        ("GET", "/api/jobs/{id}/wait") => get(jobs::wait),
        ("GET", "/api/jobs/{id}/logs") => get(jobs::logs),
        ("GET", "/api/jobs/{id}/events") => get(history::events),
        ("POST", "/api/jobs/{id}/hold") => post(hold::hold),
        ("POST", "/api/jobs/{id}/release") => post(hold::release),
        ("PATCH", "/api/jobs/{id}") => patch(hold::update),
        ("POST", "/api/workflows") => post(workflow::submit_workflow),
        ("POST", "/api/jobs/{id}/steps") => post(steps::start),
        ("GET", "/api/jobs/{id}/tasks") => get(arrays::list),
        ("GET", "/api/jobs/{id}/tasks/{index}") => get(arrays::get),
        ("POST", "/api/jobs/{id}/tasks/{index}/cancel") => post(arrays::cancel),
        ("GET", "/api/nodes") => get(jobs::nodes),
        ("GET", "/api/usage") => get(jobs::usage),
        ("GET", "/api/queues") => get(jobs::queues),
        ("GET", "/api/accounts") => get(accounts::list),
        ("POST", "/api/agent/register") => post(agent::register),
        ("GET", "/api/agent/poll") => get(agent::poll),
        ("POST", "/api/agent/report") => post(agent::report),
        ("GET", "/api/agent/steps/{id}/{step}") => get(steps::attach),
        ("POST", "/api/tokens") => post(tokens::create),
        ("GET", "/api/tokens") => get(tokens::list),
        ("POST", "/api/tokens/{id}/revoke") => post(tokens::revoke),
        ("GET", "/api/whoami") => get(tokens::whoami),
        ("POST", "/api/nodes/{name}/drain") => post(nodes::drain),
        ("POST", "/api/nodes/{name}/resume") => post(nodes::resume),
        ("GET", "/api/audit") => get(history::audit),
        ("POST", "/api/admin/purge") => post(history::purge),
        ("GET", "/api/history/jobs") => get(export::jobs),
        ("POST", "/api/services") => post(services::create),
        ("GET", "/api/services") => get(services::list),
        ("GET", "/api/services/{name}") => get(services::get),
        ("PUT", "/api/services/{name}") => put(services::update),
        ("DELETE", "/api/services/{name}") => delete(services::delete),
        ("POST", "/api/reservations") => post(reservations::create),
        ("GET", "/api/reservations") => get(reservations::list),
        ("GET", "/api/reservations/{name}") => get(reservations::get),
        ("PUT", "/api/reservations/{name}") => put(reservations::update),
        ("DELETE", "/api/reservations/{name}") => delete(reservations::delete),
        ("POST", "/api/gateway/sync") => post(services::sync),
        ("GET", "/metrics") => get(metrics::metrics),
        ("GET", "/") => get(crate::web::index),
        ("GET", "/ui/{*path}") => get(crate::web::asset),
        _ => return None,
    })
}

/// The routes, with the limits that hold before a handler runs (the authentication
/// layer goes around them, so they know the caller).
fn routes(app: &App) -> Router<App> {
    let mut router = Router::new();
    for &route in ROUTES {
        let Some(h) = handler(route) else {
            // Only a programming error gets here: a row of ROUTES without a handler.
            panic!("route {} {} has no handler", route.method, route.path);
        };
        // Routes on one path with different methods merge into one method router.
        router = router.route(route.path, h);
    }
    router
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(app.limits.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            limits::guard,
        ))
}

async fn not_found(uri: axum::http::Uri) -> ApiErr {
    ApiErr(
        StatusCode::NOT_FOUND,
        format!(
            "no such endpoint {}; the API is described at /api/openapi.json",
            uri.path()
        ),
    )
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok` on the leader (its state task answered), `follower` on a server that does
    /// not lead.
    pub status: &'static str,
    pub version: &'static str,
    /// `leader` or `follower`.
    pub role: &'static str,
    /// The leader's epoch (this server's own when it leads); none while no leader is
    /// known.
    pub epoch: Option<u64>,
    /// The leader's advertised URL (this server's own when it leads).
    pub leader_url: Option<String>,
}

/// Liveness, and who leads: the leader answers when its state task does; a follower
/// answers itself (it is the one route a follower does not redirect).
#[utoipa::path(get, path = "/api/health", operation_id = "health", tag = "server", security(()),
    responses((status = 200, body = Health,
        description = "the leader (`status` ok) or a follower (`status` follower, with the leader's URL and epoch when known)"),
        (status = 503, body = ApiError,
        description = "the server is shutting down or stepping down",
        headers(("Retry-After" = u64, description = "seconds to wait before asking again")))))]
pub async fn health(
    axum::extract::State(app): axum::extract::State<App>,
) -> Result<Json<Health>, ApiErr> {
    let version = env!("CARGO_PKG_VERSION");
    match app.leadership.role() {
        crate::leader::Role::Leader { epoch } => {
            app.ask(Cmd::Ping).await?;
            Ok(Json(Health {
                status: "ok",
                version,
                role: "leader",
                epoch: Some(epoch),
                leader_url: Some(app.leadership.advertise().to_string()),
            }))
        }
        crate::leader::Role::Follower { leader } => Ok(Json(Health {
            status: "follower",
            version,
            role: "follower",
            epoch: leader.as_ref().map(|k| k.epoch),
            leader_url: leader.map(|k| k.url),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A leading server whose state task answers `Ping` with `ping`, or is gone (shutting
    /// down) when `ping` is None; its TCP API's URL.
    async fn serve(ping: Option<crate::state::Fail>) -> String {
        let (tx, mut rx) = mpsc::channel(8);
        match ping {
            Some(fail) => {
                tokio::spawn(async move {
                    while let Some(cmd) = rx.recv().await {
                        if let Cmd::Ping(r) = cmd {
                            let _ = r.send(Err(fail.clone()));
                        }
                    }
                });
            }
            None => drop(rx),
        }
        let app = App {
            tx,
            tokens: std::sync::Arc::new(std::sync::RwLock::new(crate::auth::TokenTable::new(
                String::new(),
            ))),
            poll_wait: Duration::from_secs(1),
            max_wait: Duration::from_secs(1),
            http: reqwest::Client::new(),
            limits: Default::default(),
            metrics_public: false,
            rates: Default::default(),
            groups: Default::default(),
            leadership: crate::leader::Leadership::leading_for_tests(1),
            steps: Default::default(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let router = tcp_router(app).into_make_service_with_connect_info::<std::net::SocketAddr>();
        tokio::spawn(async move { axum::serve(listener, router).await });
        url
    }

    /// A 503 from the state task (the store could not be read or written) and one from a
    /// server shutting down both say when to retry: clients retry only what says so.
    #[tokio::test]
    async fn every_503_carries_retry_after() {
        let unavailable = crate::state::Fail::Unavailable("the store is away".into());
        for (what, ping) in [
            ("a store failure", Some(unavailable)),
            ("shutting down", None),
        ] {
            let url = serve(ping).await;
            let r = reqwest::get(format!("{url}/api/health")).await.unwrap();
            assert_eq!(r.status(), 503, "{what}");
            assert_eq!(
                r.headers().get("retry-after").map(|v| v.to_str().unwrap()),
                Some("1"),
                "{what}"
            );
        }
    }

    #[test]
    fn every_route_has_a_handler_and_appears_once() {
        for (i, &route) in ROUTES.iter().enumerate() {
            assert!(handler(route).is_some(), "{route:?} has no handler");
            assert!(
                !ROUTES[..i].contains(&route),
                "{route:?} is listed twice in ROUTES"
            );
        }
    }
}
