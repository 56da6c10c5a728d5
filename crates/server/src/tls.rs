//! TLS on the TCP listener (rustls, ring), when a certificate is configured.
//!
//! Handshakes run in their own tasks and finished connections queue for axum, so one
//! slow or silent client cannot hold up everyone else's accept.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// A handshake that takes longer than this is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

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
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
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
