//! The gpusched inference gateway (`gpusched gateway`): serves the Open Inference
//! Protocol (KServe v2, Triton's HTTP/REST, with Triton's binary tensor data) and the
//! OpenAI API in front of the replicas of gpusched services. It learns the ready
//! replicas from the server (`POST /api/gateway/sync`, which also carries its load, what
//! the server autoscales on), routes each request to the replica with the fewest
//! outstanding requests, batches the models configured for it (Triton's dynamic
//! batcher), holds requests while a service has no ready replica (scale from zero), and
//! sheds past its limits. It keeps no state of its own: several may run side by side.

pub mod error;
mod forward;
mod hold;
pub mod load;
pub mod metrics;
mod models;
pub mod oip;
mod openai;
pub mod state;
pub mod sync;
pub mod table;
pub mod upstream;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

pub use error::{GatewayError, Reject};
pub use state::Limits;

/// The largest request body the gateway takes (a batch of images fits; past it, 413).
pub const MAX_BODY: usize = 256 << 20;

/// What `gpusched gateway` is given.
pub struct Config {
    pub listen: SocketAddr,
    /// `http(s)://HOST:PORT`, several comma-separated, or `unix:PATH`.
    pub servers: String,
    /// A token with the gateway role (not needed on the Unix socket as root).
    pub token: Option<String>,
    /// Certificates trusted for an https server besides the system's.
    pub ca_certs: Vec<reqwest::Certificate>,
    /// The gateway's identity in its load reports (default `HOSTNAME:PORT`).
    pub id: String,
    pub limits: Limits,
}

impl Config {
    /// Default limits: 1024 waiting per service, a 60 s hold, `Retry-After: 1`.
    pub fn default_limits() -> Limits {
        Limits {
            max_queue: 1024,
            hold_timeout: Duration::from_secs(60),
            retry_after: 1,
        }
    }
}

/// A running gateway (tests and embedders); [`run`] is the command's loop.
pub struct Running {
    pub addr: SocketAddr,
    pub gateway: Arc<state::Gateway>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serve: tokio::task::JoinHandle<Result<(), GatewayError>>,
    sync: tokio::task::JoinHandle<()>,
}

impl Running {
    /// Stops serving (requests under way finish) and syncing; returns when it has.
    pub async fn stop(mut self) -> Result<(), GatewayError> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.sync.abort();
        let r = (&mut self.serve).await;
        let _ = (&mut self.sync).await;
        for b in self
            .gateway
            .batchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            b.stop();
        }
        r.unwrap_or(Ok(()))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.serve.abort();
        self.sync.abort();
    }
}

/// Starts the gateway on `listener` (already bound, so a test can use port 0).
pub async fn start(
    config: Config,
    listener: tokio::net::TcpListener,
) -> Result<Running, GatewayError> {
    let addr = listener
        .local_addr()
        .map_err(|e| GatewayError::Config(format!("the listener has no address: {e}")))?;
    let upstream = Arc::new(upstream::Upstream::new(
        &config.servers,
        config.token,
        config.ca_certs,
    )?);
    let table = Arc::new(table::Table::default());
    let gw = Arc::new(state::Gateway::new(table.clone(), config.limits)?);
    let sync = tokio::spawn(sync::run(table, upstream, config.id));
    let app = router(gw.clone());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    // No Nagle on the clients' connections: an answer streamed back is its headers and
    // then its body, and the body's segment must not wait for the client's delayed ACK
    // of the headers' (40 ms on Linux per request, measured before this).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY on a client's connection: {e}");
        }
    });
    let serve = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await
            .map_err(GatewayError::Serve)
    });
    Ok(Running {
        addr,
        gateway: gw,
        stop: Some(tx),
        serve,
        sync,
    })
}

/// Serves until `shutdown` resolves.
pub async fn run(
    config: Config,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), GatewayError> {
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|source| GatewayError::Listen {
            addr: config.listen.to_string(),
            source,
        })?;
    let servers = config.servers.clone();
    let running = start(config, listener).await?;
    tracing::info!(
        "gateway listening on http://{} (servers {servers})",
        running.addr
    );
    shutdown.await;
    tracing::info!("gateway stopping: requests under way finish");
    running.stop().await
}

fn router(gw: Arc<state::Gateway>) -> Router {
    Router::new()
        .merge(oip::routes::router())
        .merge(openai::router())
        .route("/metrics", get(metrics_text))
        .fallback(|| async {
            Reject::new(
                StatusCode::NOT_FOUND,
                "no such route; the gateway serves /v2/... (Open Inference Protocol), \
                 /v1/models, /v1/completions, /v1/chat/completions (OpenAI) and /metrics",
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(gw)
}

async fn metrics_text(State(gw): State<Arc<state::Gateway>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
        gw.metrics.render(&gw.table),
    )
}
