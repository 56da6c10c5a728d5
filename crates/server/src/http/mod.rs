//! The HTTP API: user endpoints under `/api/jobs` and `/api/nodes`, the agent protocol
//! under `/api/agent`, and the OpenAPI document at `/api/openapi.json`.

mod agent;
mod auth;
mod error;
mod jobs;
mod openapi;
mod responses;
mod tokens;

use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use gpusched_wire::ApiError;
use tokio::sync::{mpsc, oneshot};

use crate::actor::{Cmd, Reply};
use crate::auth::SharedTokens;
pub use auth::UdsPeer;
pub use error::ApiErr;

/// What every handler shares: the way to the state task.
#[derive(Clone)]
pub struct App {
    pub tx: mpsc::Sender<Cmd>,
    pub tokens: SharedTokens,
    pub poll_wait: Duration,
    pub http: reqwest::Client,
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

/// Bodies up to 64 MiB: a batch of 100,000 jobs fits.
const BODY_LIMIT: usize = 64 << 20;

/// The API as served over TCP: bearer tokens.
pub fn tcp_router(app: App) -> Router {
    routes()
        .layer(axum::middleware::from_fn_with_state(app.clone(), auth::tcp))
        .with_state(app)
}

/// The API as served over the Unix socket: the peer's uid.
pub fn uds_router(app: App) -> Router {
    routes()
        .layer(axum::middleware::from_fn(auth::uds))
        .with_state(app)
}

fn routes() -> Router<App> {
    Router::new()
        .route("/api/health", get(health))
        .route("/api/openapi.json", get(openapi::document))
        .route("/api/jobs", post(jobs::submit).get(jobs::list))
        .route("/api/jobs/batch", post(jobs::submit_batch))
        .route("/api/jobs/{id}", get(jobs::get_job))
        .route("/api/jobs/{id}/cancel", post(jobs::cancel))
        .route("/api/jobs/{id}/checkpoint", post(jobs::checkpoint))
        .route("/api/jobs/{id}/wait", get(jobs::wait))
        .route("/api/jobs/{id}/logs", get(jobs::logs))
        .route("/api/nodes", get(jobs::nodes))
        .route("/api/usage", get(jobs::usage))
        .route("/api/queues", get(jobs::queues))
        .route("/api/agent/register", post(agent::register))
        .route("/api/agent/poll", get(agent::poll))
        .route("/api/agent/report", post(agent::report))
        .route("/api/tokens", post(tokens::create).get(tokens::list))
        .route("/api/tokens/{id}/revoke", post(tokens::revoke))
        .route("/api/whoami", get(tokens::whoami))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
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
    pub status: &'static str,
    pub version: &'static str,
}

/// Liveness: answers when the server's state task does.
#[utoipa::path(get, path = "/api/health", security(()),
    responses((status = 200, body = Health), (status = 503, body = ApiError,
        description = "the server is shutting down")))]
pub async fn health(
    axum::extract::State(app): axum::extract::State<App>,
) -> Result<Json<Health>, ApiErr> {
    app.ask(Cmd::Nodes).await?;
    Ok(Json(Health {
        status: "ok",
        version: env!("CARGO_PKG_VERSION"),
    }))
}
