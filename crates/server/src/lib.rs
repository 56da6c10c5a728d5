//! The gpusched control plane: an HTTP/JSON API over a durable store, and a scheduler
//! loop that runs the shared core (`gpusched-core`) with `now` from the clock.
//!
//! - `config.rs`: how the server runs.
//! - `state/`: jobs, nodes and the core's queue in memory (`jobs.rs` user operations,
//!   `agents.rs` the agent protocol, `validate.rs` submission checks).
//! - `live.rs`: the bridge to the core.
//! - `actor.rs`: the one task that owns state and store; group commit.
//! - `http/`: axum handlers, JSON errors, the OpenAPI document.

mod actor;
pub mod config;
mod http;
mod live;
mod state;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use gpusched_store::SqliteStore;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

pub use config::{check_live_policy, ServerConfig};

/// A server whose store is open and whose listener is bound, ready to serve.
pub struct Bound {
    listener: TcpListener,
    router: axum::Router,
    addr: SocketAddr,
}

impl Bound {
    /// The address it listens on (useful with port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until `shutdown` completes.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(shutdown)
            .await
            .context("the HTTP server failed")
    }
}

/// Opens the store, restores the state, starts the state task and binds the listener.
pub async fn bind(cfg: ServerConfig) -> anyhow::Result<Bound> {
    check_live_policy(cfg.policy).map_err(anyhow::Error::msg)?;
    let cfg = Arc::new(cfg);
    let mut store = SqliteStore::open(&cfg.data_dir).await?;
    let jobs = store.load_jobs().await?;
    let nodes = store.load_nodes().await?;
    tracing::info!(jobs = jobs.len(), nodes = nodes.len(), dir = %cfg.data_dir.display(), "store opened");
    let state = state::State::load(cfg.clone(), jobs, nodes);
    let listener = TcpListener::bind(cfg.listen).await.with_context(|| {
        format!(
            "cannot listen on {}; is another gpusched server running there? pick another with --listen",
            cfg.listen
        )
    })?;
    let addr = listener.local_addr()?;
    let (tx, rx) = mpsc::channel(16384);
    tokio::spawn(actor::run(state, store, rx));
    let tick = cfg.heartbeat_timeout / 4;
    let ticker = tx.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(tick.max(std::time::Duration::from_millis(50)));
        loop {
            every.tick().await;
            if ticker.send(actor::Cmd::Tick).await.is_err() {
                break;
            }
        }
    });
    let app = http::App {
        tx,
        poll_wait: cfg.poll_wait(),
        http: reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .context("cannot build the HTTP client for agent logs")?,
    };
    Ok(Bound {
        listener,
        router: http::router(app),
        addr,
    })
}
