//! The gpusched control plane: an HTTP/JSON API over a durable store, and a scheduler
//! loop that runs the shared core (`gpusched-core`) with `now` from the clock.
//!
//! - `config.rs`: how the server runs.
//! - `state/`: jobs, nodes and the core's queue in memory (one file per user operation:
//!   `submit.rs`, `view.rs`, `list.rs`, `cancel.rs`, ...; `agents.rs` the agent protocol,
//!   `validate.rs` submission checks).
//! - `record.rs`: the job in memory (`JobRecord`) and, in `record/row.rs`, its mapping to
//!   and from the store's row (`gpusched_store::StoredJob`).
//! - `live_map.rs`: wire types onto the core's live cluster (`gpusched_core::live`).
//! - `actor.rs`: the one task that owns state and store; group commit.
//! - `metrics.rs`: the series of `GET /metrics` (events recorded, levels at scrape).
//! - `http/`: axum handlers, JSON errors, the OpenAPI document.

pub mod accounts;
mod actor;
pub mod auth;
mod bounded;
pub mod clock;
pub mod config;
#[doc(hidden)]
pub mod fuzz_entry;
pub mod groups;
mod http;
pub mod leader;
mod live_map;
pub mod metrics;
pub mod partitions;
pub mod power;
pub mod queues;
mod record;
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

pub use bounded::raise_open_files_limit;

/// A server whose store is open and whose listeners are bound, ready to serve.
pub struct Bound {
    listener: Tcp,
    /// The most connections the TCP listener and the Unix socket hold open at once, and
    /// how long one may stay idle (`bounded.rs`).
    limits: (usize, usize, std::time::Duration),
    router: axum::Router,
    addr: SocketAddr,
    unix: UnixListener,
    unix_router: axum::Router,
    socket: PathBuf,
    join_token: String,
    resign: Option<leader::Resign>,
    leadership: leader::Leadership,
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

    /// Who leads, as this server sees it.
    pub fn leadership(&self) -> leader::Leadership {
        self.leadership.clone()
    }

    /// The handle that, once serving is over, stops leading and releases the lease
    /// (a clean shutdown: a follower takes over at once). Taken once.
    pub fn take_resign(&mut self) -> Option<leader::Resign> {
        self.resign.take()
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
        let (tcp_max, unix_max, idle) = self.limits;
        let tcp = async move {
            match self.listener {
                // Each connection's peer address, for agents that advertise none.
                Tcp::Plain(l) => {
                    let app = self
                        .router
                        .into_make_service_with_connect_info::<http::TcpPeer>();
                    let l = bounded::Bounded::new(l, tcp_max, idle, "the TCP listener");
                    axum::serve(l, app)
                        .with_graceful_shutdown(wait(tcp_stop))
                        .await
                }
                Tcp::Tls(l) => {
                    let app = self
                        .router
                        .into_make_service_with_connect_info::<http::TcpPeer>();
                    let l = bounded::Bounded::new(l, tcp_max, idle, "the TLS listener");
                    axum::serve(l, app)
                        .with_graceful_shutdown(wait(tcp_stop))
                        .await
                }
            }
        };
        let unix = bounded::Bounded::new(self.unix, unix_max, idle, "the Unix socket");
        let uds = axum::serve(
            unix,
            self.unix_router
                .into_make_service_with_connect_info::<http::UdsPeer>(),
        )
        .with_graceful_shutdown(wait(stop_rx));
        let (a, b) = tokio::join!(tcp, uds);
        a.context("the HTTP server failed")?;
        b.context("the Unix-socket server failed")
    }
}

/// Opens the store, binds the listeners and takes part in the leader election: a
/// server that wins the lease (a lone one does, at once) restores the state and starts
/// the state task before this returns; one that does not follows (`leader/`).
pub async fn bind(cfg: ServerConfig) -> anyhow::Result<Bound> {
    anyhow::ensure!(
        cfg.lease >= std::time::Duration::from_secs(1),
        "--lease must be at least 1 s"
    );
    let cfg = Arc::new(cfg);
    private_data_dir(&cfg.data_dir)?;
    let join_token = auth::load_or_create_join_token(&cfg.join_token_path())?;
    // The stored tokens join the table when a term loads the state.
    let table = auth::TokenTable::new(auth::hash(&join_token));
    let shared_tokens: auth::SharedTokens = Arc::new(std::sync::RwLock::new(table));
    let (tx, rx) = mpsc::channel(16384);
    // The store first: a database it cannot use stops the start before any port opens.
    let pending_lead = leader::Leadership::new(String::new(), cfg.lease);
    let mut elector =
        leader::Elector::open(cfg.clone(), pending_lead, tx.clone(), shared_tokens.clone()).await?;
    elector
        .agree_on_join_token(&auth::hash(&join_token))
        .await?;
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
    // Also proves that no server of this data directory lives (its lease, if any, is
    // then taken back at once).
    let unix = bind_socket(&socket).await?;
    let own_url = match &listener {
        Tcp::Plain(_) => format!("http://{addr}"),
        Tcp::Tls(_) => format!("https://{addr}"),
    };
    let advertise = cfg
        .advertise_url
        .clone()
        .unwrap_or(own_url)
        .trim_end_matches('/')
        .to_string();
    if cfg.advertise_url.is_none() && cfg.listen.ip().is_unspecified() {
        tracing::warn!(
            url = %advertise,
            "--listen is a wildcard address and no --advertise-url was given: other servers \
             would redirect clients to this URL while this one leads, which no other machine \
             can reach; pass --advertise-url with this server's name"
        );
    }
    let leadership = leader::Leadership::new(advertise, cfg.lease);
    let mut elector = elector.with_leadership(leadership.clone());
    let phase = elector.start(rx).await?;
    match leadership.role() {
        leader::Role::Leader { epoch } => tracing::info!(epoch, "this server leads"),
        leader::Role::Follower { leader } => tracing::info!(
            leader = ?leader.map(|k| k.url),
            "this server follows; it leads when the leader's lease runs out"
        ),
    }
    let resign = elector.spawn(phase);
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
        max_wait: cfg.max_wait,
        // Agents serve logs to whoever presents their log secret (see LogTarget).
        http: reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .context("cannot build the HTTP client for agent logs")?,
        limits: Arc::new(cfg.limits.clone()),
        metrics_public: cfg.metrics_public,
        rates: Default::default(),
        groups,
        leadership: leadership.clone(),
        steps: Default::default(),
    };
    // Idle connections close after the longest a request may be held (a `wait`), and a
    // minute more; the caps fit the descriptors this process may open.
    let idle =
        cfg.max_wait.max(std::time::Duration::from_secs(60)) + std::time::Duration::from_secs(60);
    let open_files = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft);
    let (tcp_max, unix_max) = bounded::caps(open_files, cfg.max_connections);
    if tcp_max < cfg.max_connections {
        tracing::warn!(
            "this process may open {open_files} files: at most {tcp_max} TCP connections \
             (--max-connections {}); raise the limit (LimitNOFILE= in the systemd unit, \
             ulimit -n) for more",
            cfg.max_connections
        );
    }
    Ok(Bound {
        limits: (tcp_max, unix_max, idle),
        listener,
        router: http::tcp_router(app.clone()),
        addr,
        unix,
        unix_router: http::uds_router(app),
        socket,
        join_token,
        resign: Some(resign),
        leadership,
    })
}

/// Creates the data directory 0711: local users reach the socket in it by its name,
/// nobody else lists it (the database, the join token and their names are the
/// server's).
fn private_data_dir(dir: &Path) -> anyhow::Result<()> {
    unlistable_dir(dir, "the data directory", "--data-dir")
}

/// Creates `dir` (`what`, chosen with `flag`) mode 0711: others may pass through to
/// what they are given the name of, never list it. One made by an earlier release, or
/// by hand, that others may list and this process owns is closed the same way; a
/// shared directory (sticky, as /tmp) or another user's is left as it is.
pub fn unlistable_dir(dir: &Path, what: &str, flag: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o711)
        .create(dir)
        .with_context(|| {
            format!(
                "cannot create {what} {}; pass a writable {flag}",
                dir.display()
            )
        })?;
    let meta =
        std::fs::metadata(dir).with_context(|| format!("cannot read {what} {}", dir.display()))?;
    let mode = meta.permissions().mode();
    if meta.uid() == nix::unistd::geteuid().as_raw() && mode & 0o1000 == 0 && mode & 0o044 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & 0o7711))
            .with_context(|| {
                format!(
                    "cannot make {what} {} unlistable by other users (chmod go-r it)",
                    dir.display()
                )
            })?;
    }
    Ok(())
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

pub(crate) fn read_queues(path: &Path) -> anyhow::Result<queues::Queues> {
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
                // No state task took it: this server follows; it reads the file when it
                // starts leading.
                Err(_) => tracing::info!("queue file not reloaded: this server does not lead"),
            }
        }
    });
    Ok(())
}
