//! TLS on the TCP listener (rustls, ring), when a certificate is configured.
//!
//! Handshakes run in their own tasks and finished connections queue for axum, so one
//! slow or silent client cannot hold up everyone else's accept.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// A handshake that takes longer than this is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// At most one warning of failed handshakes per peer address in this time: a client that
/// does not trust the certificate retries every few seconds, and should not fill the log.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// Peer addresses remembered for [`WARN_EVERY`]; past this many, those older than it are
/// forgotten (and, under a flood of new addresses, all of them: a few lines too many
/// rather than memory without bound).
const WARN_PEERS: usize = 4096;

/// When each peer address was last warned of, and how many failures since were not.
#[derive(Debug, Default)]
struct HandshakeWarnings {
    peers: HashMap<IpAddr, (Instant, u64)>,
}

impl HandshakeWarnings {
    /// A failed handshake from `ip` at `now`: Some(failures not logged since the last
    /// line for it) when this one is logged, None when it is held back.
    fn admit(&mut self, ip: IpAddr, now: Instant) -> Option<u64> {
        if let Some((at, held)) = self.peers.get_mut(&ip) {
            if now.duration_since(*at) < WARN_EVERY {
                *held += 1;
                return None;
            }
            let before = *held;
            *at = now;
            *held = 0;
            return Some(before);
        }
        if self.peers.len() >= WARN_PEERS {
            self.peers
                .retain(|_, (at, _)| now.duration_since(*at) < WARN_EVERY);
            if self.peers.len() >= WARN_PEERS {
                self.peers.clear();
            }
        }
        self.peers.insert(ip, (now, 0));
        Some(0)
    }
}

/// The warning of a failed handshake: a client refusing the certificate says so with an
/// alert, which is what an operator most often needs to hear (an agent or CLI without
/// `--ca-cert`, or with the wrong one).
fn handshake_warning(peer: SocketAddr, error: &io::Error, held: u64) -> String {
    let hint = if error.to_string().contains("alert") {
        "; a client that does not trust this server's certificate refuses it so: give it \
         the certificate (or its CA) with --ca-cert"
    } else {
        ""
    };
    let more = match held {
        0 => String::new(),
        n => format!(
            " ({n} more from {} not logged in the last minute)",
            peer.ip()
        ),
    };
    format!("TLS handshake with {peer} failed: {error}{hint}{more}")
}

/// Reads a PEM certificate chain and private key into a rustls server configuration.
pub fn server_config(cert: &Path, key: &Path) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("cannot read the certificate {}", cert.display()))?
        .collect::<Result<_, _>>()
        .with_context(|| format!("{} is not a PEM certificate chain", cert.display()))?;
    anyhow::ensure!(
        !certs.is_empty(),
        "{} holds no certificate (expected PEM `BEGIN CERTIFICATE` blocks)",
        cert.display()
    );
    let key = PrivateKeyDer::from_pem_file(key).with_context(|| {
        format!(
            "cannot read a PEM private key (PKCS#8, PKCS#1 or SEC1) from {}",
            key.display()
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    refuse_a_ca_certificate(&certs[0], cert, &provider)?;
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("the TLS library refused its own default protocol versions")?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .context("the certificate and the private key do not belong together")?;
    Ok(Arc::new(config))
}

/// How to make a certificate rustls accepts as a server's own: a leaf (`CA:FALSE`), with
/// the names and addresses clients use. Shown wherever a CA certificate is refused.
pub const LEAF_CERT_ADVICE: &str = "make a server (leaf) certificate instead, e.g.\n  \
     openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
     -subj /CN=HOST -addext subjectAltName=DNS:HOST,IP:ADDRESS \
     -addext basicConstraints=critical,CA:FALSE -keyout key.pem -out cert.pem\n\
     and give that cert.pem to clients and agents with --ca-cert (or sign a leaf with your \
     CA and give them the CA's certificate)";

/// `openssl req -x509` makes a CA certificate (`basicConstraints CA:TRUE`) unless told
/// otherwise, and every rustls client (the CLI and the agents among them) refuses a CA
/// certificate as a server's own with a bare `CaUsedAsEndEntity`. The server checks its
/// certificate the way such a client will, so the operator hears it at start, with the fix.
fn refuse_a_ca_certificate(
    leaf: &CertificateDer<'static>,
    path: &Path,
    provider: &Arc<rustls::crypto::CryptoProvider>,
) -> anyhow::Result<()> {
    use rustls::client::danger::ServerCertVerifier;
    let mut roots = rustls::RootCertStore::empty();
    if roots.add(leaf.clone()).is_err() {
        return Ok(()); // not readable as an anchor either; the handshake will say more
    }
    let Ok(verifier) =
        rustls::client::WebPkiServerVerifier::builder_with_provider(roots.into(), provider.clone())
            .build()
    else {
        return Ok(());
    };
    let name = rustls_pki_types::ServerName::try_from("localhost").expect("a valid name");
    let now = rustls_pki_types::UnixTime::now();
    match verifier.verify_server_cert(leaf, &[], &name, &[], now) {
        // Only this refusal is certain for every client; a name or date problem depends
        // on how clients reach the server.
        Err(e) if format!("{e:?}").contains("CaUsedAsEndEntity") => anyhow::bail!(
            "{} is a CA certificate (basicConstraints CA:TRUE, what `openssl req -x509` makes \
             by default); TLS clients, gpusched's own included, refuse it as a server's \
             certificate (CaUsedAsEndEntity). {LEAF_CERT_ADVICE}",
            path.display()
        ),
        _ => Ok(()),
    }
}

/// A listener yielding connections that finished their TLS handshake.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    pub fn new(tcp: TcpListener, config: Arc<rustls::ServerConfig>) -> io::Result<Self> {
        let local = tcp.local_addr()?;
        let acceptor = TlsAcceptor::from(config);
        let (tx, ready) = mpsc::channel(256);
        let warnings = Arc::new(Mutex::new(HandshakeWarnings::default()));
        tokio::spawn(async move {
            loop {
                let (stream, peer) = match tcp.accept().await {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of file descriptors and the like: back off, keep serving.
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                let warnings = warnings.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        // A TCP probe (a load balancer's health check, a port scan)
                        // closes before a word of TLS: nothing failed.
                        Ok(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                            tracing::debug!(%peer, "TLS handshake failed: {e}");
                        }
                        Ok(Err(e)) => {
                            let held = warnings
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .admit(peer.ip(), Instant::now());
                            match held {
                                Some(held) => {
                                    tracing::warn!("{}", handshake_warning(peer, &e, held))
                                }
                                None => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                            }
                        }
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(TlsListener { ready, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(conn) => conn,
            // The accept task only ends with the runtime.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_failures_are_warned_of_once_a_minute_per_peer_address() {
        let mut w = HandshakeWarnings::default();
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let t0 = Instant::now();
        assert_eq!(w.admit(a, t0), Some(0));
        // Another port of the same host is the same peer; another host is not.
        assert_eq!(w.admit(a, t0 + Duration::from_secs(2)), None);
        assert_eq!(w.admit(a, t0 + Duration::from_secs(59)), None);
        assert_eq!(w.admit(b, t0 + Duration::from_secs(3)), Some(0));
        // A minute on: logged again, saying how many were held back.
        assert_eq!(w.admit(a, t0 + WARN_EVERY), Some(2));
        assert_eq!(w.admit(a, t0 + WARN_EVERY + Duration::from_secs(1)), None);
        // A flood of addresses forgets the old ones rather than grow without bound.
        for i in 0..(WARN_PEERS as u32 + 10) {
            let ip = IpAddr::from(std::net::Ipv4Addr::from(0x0b00_0000 + i));
            assert_eq!(w.admit(ip, t0 + WARN_EVERY * 3), Some(0));
        }
        assert!(w.peers.len() <= WARN_PEERS);
    }

    #[test]
    fn a_refused_certificate_is_worded_with_its_fix() {
        let peer: SocketAddr = "10.0.0.1:40000".parse().unwrap();
        let alert = io::Error::new(
            io::ErrorKind::InvalidData,
            "received fatal alert: UnknownCA",
        );
        assert_eq!(
            handshake_warning(peer, &alert, 0),
            "TLS handshake with 10.0.0.1:40000 failed: received fatal alert: UnknownCA; a \
             client that does not trust this server's certificate refuses it so: give it the \
             certificate (or its CA) with --ca-cert"
        );
        let other = io::Error::new(io::ErrorKind::InvalidData, "received corrupt message");
        assert_eq!(
            handshake_warning(peer, &other, 3),
            "TLS handshake with 10.0.0.1:40000 failed: received corrupt message (3 more from \
             10.0.0.1 not logged in the last minute)"
        );
    }
}
