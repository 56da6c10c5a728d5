//! The gpusched control plane: an HTTP/JSON API over a durable store, and a scheduler
//! loop that runs the shared core (`gpusched-core`) with `now` from the clock.
//!
//! - `config.rs`: how the server runs.
//! - `state/`: jobs, nodes and the core's queue in memory (`jobs.rs` user operations,
//!   `agents.rs` the agent protocol, `validate.rs` submission checks).
//! - `live_map.rs`: wire types onto the core's live cluster (`gpusched_core::live`).
//! - `actor.rs`: the one task that owns state and store; group commit.
//! - `metrics.rs`: the series of `GET /metrics` (events recorded, levels at scrape).
//! - `http/`: axum handlers, JSON errors, the OpenAPI document.

mod actor;
pub mod auth;
pub mod clock;
pub mod config;
#[doc(hidden)]
pub mod fuzz_entry;
pub mod groups;
mod http;
mod live_map;
pub mod metrics;
pub mod queues;
mod state;
pub mod tls;
mod web;

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::mpsc;

pub use config::{parse_las_limits, parse_topology, Limits, ServerConfig, SOCKET_NAME};
pub use gpusched_store::StoreUrl;
pub use http::{Route, ROUTES};

/// The TCP side, plain or TLS.
enum Tcp {
    Plain(TcpListener),
    Tls(tls::TlsListener),
}

/// A server whose store is open and whose listeners are bound, ready to serve.
pub struct Bound {
    listener: Tcp,
    router: axum::Router,
    addr: SocketAddr,
    unix: UnixListener,
    unix_router: axum::Router,
    socket: PathBuf,
    join_token: String,
}

impl Bound {
    /// The address it listens on (useful with port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` or `https://ADDR`.
    pub fn url(&self) -> String {
        match self.listener {
            Tcp::Plain(_) => format!("http://{}", self.addr),
            Tcp::Tls(_) => format!("https://{}", self.addr),
        }
    }

    /// The Unix socket local clients use.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The secret agents join with.
    pub fn join_token(&self) -> &str {
        &self.join_token
    }

    /// Serves both listeners until `shutdown` completes.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            shutdown.await;
            let _ = stop_tx.send(true);
        });
        let wait = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        let tcp_stop = stop_rx.clone();
        let tcp = async move {
            match self.listener {
                // Each connection's peer address, for agents that advertise none.
                Tcp::Plain(l) => {
                    let app = self
                        .router
                        .into_make_service_with_connect_info::<http::TcpPeer>();
                    axum::serve(l, app)
                        .with_graceful_shutdown(wait(tcp_stop))
                        .await
                }
                Tcp::Tls(l) => {
                    let app = self
                        .router
                        .into_make_service_with_connect_info::<http::TcpPeer>();
                    axum::serve(l, app)
                        .with_graceful_shutdown(wait(tcp_stop))
                        .await
                }
            }
        };
        let uds = axum::serve(
            self.unix,
            self.unix_router
                .into_make_service_with_connect_info::<http::UdsPeer>(),
        )
        .with_graceful_shutdown(wait(stop_rx));
        let (a, b) = tokio::join!(tcp, uds);
        a.context("the HTTP server failed")?;
        b.context("the Unix-socket server failed")
    }
}

/// Opens the store, restores the state, starts the state task and binds the listener.
pub async fn bind(cfg: ServerConfig) -> anyhow::Result<Bound> {
    let cfg = Arc::new(cfg);
    // Live jobs only: ended ones stay in the store and are read on request.
    let actor::Loaded {
        store,
        jobs,
        nodes,
        tokens,
        max_id,
        ended,
        learnt,
    } = actor::load(&cfg.store_url()).await?;
    let join_token = auth::load_or_create_join_token(&cfg.join_token_path())?;
    let mut table = auth::TokenTable::new(auth::hash(&join_token));
    table.replace(&tokens);
    let shared_tokens: auth::SharedTokens = Arc::new(std::sync::RwLock::new(table));
    tracing::info!(jobs = jobs.len(), nodes = nodes.len(), store = %cfg.store_url(), "store opened");
    let queue_conf = match &cfg.queues_file {
        Some(path) => read_queues(path)?,
        None => queues::Queues::default(),
    };
    let mut state = state::State::load(
        cfg.clone(),
        jobs,
        nodes,
        tokens,
        queue_conf,
        clock::Now::read(),
    );
    state.ids_after(max_id);
    state.set_ended_counts(ended);
    state.restore_learnt(learnt.0.as_deref(), learnt.1.as_deref());
    let listener = TcpListener::bind(cfg.listen).await.with_context(|| {
        format!(
            "cannot listen on {}; is another gpusched server running there? pick another with --listen",
            cfg.listen
        )
    })?;
    let addr = listener.local_addr()?;
    let listener = match &cfg.tls {
        None => Tcp::Plain(listener),
        Some((cert, key)) => Tcp::Tls(tls::TlsListener::new(
            listener,
            tls::server_config(cert, key)?,
        )?),
    };
    let socket = cfg.socket_path();
    let unix = bind_socket(&socket).await?;
    let (tx, rx) = mpsc::channel(16384);
    let actor = tokio::spawn(actor::run(state, store, rx, shared_tokens.clone()));
    tokio::spawn(async move {
        // A server whose state task died would answer 503 forever without exiting;
        // stop instead, so a supervisor restarts it (the store has every answer given).
        if let Err(e) = actor.await {
            tracing::error!("the state task failed: {e}; stopping the server");
            eprintln!("error: the server's state task failed: {e}");
            std::process::exit(70);
        }
    });
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
    // SIGHUP must never stop the server (its default action would, exit 129).
    let groups = groups::GroupDirectory::default();
    match cfg.queues_file.clone() {
        Some(path) => spawn_reload_on_sighup(path, tx.clone(), groups.clone())?,
        None => spawn_ignore_sighup()?,
    }
    let app = http::App {
        tx,
        tokens: shared_tokens,
        poll_wait: cfg.poll_wait(),
        // Agents serve logs to whoever presents their log secret (see LogTarget).
        http: reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .context("cannot build the HTTP client for agent logs")?,
        limits: Arc::new(cfg.limits.clone()),
        metrics_public: cfg.metrics_public,
        rates: Default::default(),
        groups,
    };
    Ok(Bound {
        listener,
        router: http::tcp_router(app.clone()),
        addr,
        unix,
        unix_router: http::uds_router(app),
        socket,
        join_token,
    })
}

/// Binds the local socket, replacing a stale one but never a live server's, and lets
/// every local user connect (each is then known by uid).
async fn bind_socket(path: &Path) -> anyhow::Result<UnixListener> {
    if path.exists() {
        if tokio::net::UnixStream::connect(path).await.is_ok() {
            anyhow::bail!(
                "another gpusched server is using {}; stop it or use another --data-dir",
                path.display()
            );
        }
        std::fs::remove_file(path)
            .with_context(|| format!("cannot remove the stale socket {}", path.display()))?;
    }
    let unix = UnixListener::bind(path).with_context(|| {
        format!(
            "cannot create the socket {} (a path must be under 108 bytes)",
            path.display()
        )
    })?;
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .with_context(|| format!("cannot open up {}", path.display()))?;
    Ok(unix)
}

fn read_queues(path: &Path) -> anyhow::Result<queues::Queues> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the queue file {}", path.display()))?;
    queues::Queues::parse(&text, &path.display().to_string()).map_err(anyhow::Error::msg)
}

/// Without a queue file there is nothing to reload: SIGHUP (a closed terminal, a
/// habitual `kill -HUP`) is logged and ignored.
fn spawn_ignore_sighup() -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hup = signal(SignalKind::hangup()).context("cannot listen for SIGHUP")?;
    tokio::spawn(async move {
        while hup.recv().await.is_some() {
            tracing::warn!(
                "SIGHUP received: nothing to reload (no --queues file); ignored, the server goes on"
            );
        }
    });
    Ok(())
}

/// SIGHUP re-reads the queue file (the Unix habit for "reconfigure"); a file with an
/// error, or one that would strand live jobs, is refused and the old one stays.
/// A reload also forgets the cached Unix groups, so changed memberships count from then.
fn spawn_reload_on_sighup(
    path: PathBuf,
    tx: mpsc::Sender<actor::Cmd>,
    groups: groups::GroupDirectory,
) -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hup = signal(SignalKind::hangup()).context("cannot listen for SIGHUP")?;
    tokio::spawn(async move {
        while hup.recv().await.is_some() {
            let parsed = read_queues(&path).map_err(|e| format!("{e:#}"));
            let (reply, done) = tokio::sync::oneshot::channel();
            let Ok(queues) = parsed else {
                tracing::error!(
                    "queue file not reloaded: {}",
                    parsed.err().unwrap_or_default()
                );
                continue;
            };
            if tx.send(actor::Cmd::Reload(queues, reply)).await.is_err() {
                break;
            }
            match done.await {
                Ok(Ok(())) => {
                    groups.forget();
                    tracing::info!(file = %path.display(), "queue file reloaded")
                }
                Ok(Err(e)) => tracing::error!("queue file not reloaded: {e:?}"),
                Err(_) => break,
            }
        }
    });
    Ok(())
}
