//! The gateway's calls to the gpusched server (`POST /api/gateway/sync`): over TCP to
//! one of several servers with a bearer token, a follower's 307 followed to the leader
//! by hand (reqwest would drop the token on the way), the next server tried when one
//! cannot be reached; or over the server's Unix socket as root (`unix:PATH`).

use std::path::PathBuf;
use std::time::Duration;

use axum::body::Bytes;
use gpusched_wire::servers::{origin_of, ServerList};
use gpusched_wire::service::{EndpointSet, GatewaySync};
use http_body_util::{BodyExt, Full};
use reqwest::StatusCode;

use crate::error::GatewayError;

const SYNC_PATH: &str = "/api/gateway/sync";
/// Redirects followed for one sync (a follower points at the leader: one hop; more
/// only while leadership moves).
const MAX_HOPS: u32 = 4;
/// A sync unanswered this long is given up (the server answers in milliseconds).
const SYNC_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a sync got no endpoint set.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("cannot reach the server at {server} ({why})")]
    Unreachable { server: String, why: String },
    #[error(
        "the server at {server} refused the gateway's sync (HTTP {status}): {message}{advice}"
    )]
    Refused {
        server: String,
        status: u16,
        message: String,
        advice: &'static str,
    },
    #[error("the server at {server} answered the sync with something else than endpoints: {why}")]
    BadAnswer { server: String, why: String },
}

pub enum Upstream {
    Http {
        http: reqwest::Client,
        servers: ServerList,
        token: Option<String>,
    },
    Unix(PathBuf),
}

impl Upstream {
    /// `servers`: `unix:PATH`, or http(s) URLs comma-separated; `ca_certs` trusted for
    /// https besides the system's roots.
    pub fn new(
        servers: &str,
        token: Option<String>,
        ca_certs: Vec<reqwest::Certificate>,
    ) -> Result<Self, GatewayError> {
        if let Some(path) = servers.trim().strip_prefix("unix:") {
            return Ok(Upstream::Unix(PathBuf::from(path)));
        }
        let list = ServerList::parse(servers).map_err(|e| {
            GatewayError::Config(format!(
                "{e} (or unix:PATH for the server's socket, as root)"
            ))
        })?;
        let mut b = reqwest::Client::builder()
            .timeout(SYNC_TIMEOUT)
            .connect_timeout(Duration::from_secs(3))
            .redirect(reqwest::redirect::Policy::none())
            .tls_built_in_root_certs(list.all().iter().any(|u| u.starts_with("https://")));
        for c in ca_certs {
            b = b.add_root_certificate(c);
        }
        let http = b.build().map_err(|e| GatewayError::Client(e.to_string()))?;
        Ok(Upstream::Http {
            http,
            servers: list,
            token,
        })
    }

    /// The servers as messages name them.
    pub fn shown(&self) -> String {
        match self {
            Upstream::Http { servers, .. } => servers.shown(),
            Upstream::Unix(p) => format!("unix:{}", p.display()),
        }
    }

    /// One sync: every server once, the last that answered first, until one answers.
    pub async fn sync(&self, body: &GatewaySync) -> Result<(String, EndpointSet), SyncError> {
        let json = serde_json::to_vec(body).unwrap_or_default();
        match self {
            Upstream::Unix(p) => {
                let server = format!("unix:{}", p.display());
                let (status, bytes) =
                    unix_post(p, &json)
                        .await
                        .map_err(|e| SyncError::Unreachable {
                            server: server.clone(),
                            why: e,
                        })?;
                decode(&server, status, &bytes).map(|s| (server, s))
            }
            Upstream::Http {
                http,
                servers,
                token,
            } => {
                let mut last = None;
                for base in servers.order() {
                    match post(http, &base, token.as_deref(), &json).await {
                        Ok((at, status, bytes)) => {
                            if status == StatusCode::SERVICE_UNAVAILABLE {
                                last = Some(decode(&at, status.as_u16(), &bytes).err());
                                servers.skip();
                                continue;
                            }
                            servers.answered(&at);
                            return decode(&at, status.as_u16(), &bytes).map(|s| (at, s));
                        }
                        Err(e) => {
                            servers.skip();
                            last = Some(Some(e));
                        }
                    }
                }
                Err(last.flatten().unwrap_or_else(|| SyncError::Unreachable {
                    server: servers.shown(),
                    why: "no server answered".into(),
                }))
            }
        }
    }
}

/// A POST to `base`, a follower's 307 followed with the token kept; the origin that
/// answered, its status and body.
async fn post(
    http: &reqwest::Client,
    base: &str,
    token: Option<&str>,
    json: &[u8],
) -> Result<(String, StatusCode, Bytes), SyncError> {
    let mut at = base.to_string();
    for _ in 0..=MAX_HOPS {
        let mut req = http
            .post(format!("{at}{SYNC_PATH}"))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(json.to_vec());
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.map_err(|e| SyncError::Unreachable {
            server: at.clone(),
            why: crate::error::chain(&e),
        })?;
        let status = r.status();
        if status == StatusCode::TEMPORARY_REDIRECT {
            let to = r
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(origin_of);
            if let Some(o) = to {
                at = o;
                continue;
            }
        }
        let bytes = r.bytes().await.map_err(|e| SyncError::Unreachable {
            server: at.clone(),
            why: crate::error::chain(&e),
        })?;
        return Ok((at, status, bytes));
    }
    Err(SyncError::Unreachable {
        server: base.to_string(),
        why: format!("more than {MAX_HOPS} redirects: leadership keeps moving"),
    })
}

/// The endpoint set of a 2xx answer, or the server's refusal in its own words.
fn decode(server: &str, status: u16, bytes: &[u8]) -> Result<EndpointSet, SyncError> {
    if (200..300).contains(&status) {
        return serde_json::from_slice(bytes).map_err(|e| SyncError::BadAnswer {
            server: server.to_string(),
            why: e.to_string(),
        });
    }
    let message = serde_json::from_slice::<gpusched_wire::ApiError>(bytes)
        .map(|e| e.error)
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).chars().take(300).collect());
    let advice = match status {
        401 => {
            "; give the gateway a token (--token-file or GPUSCHED_TOKEN) made with \
                `gpusched token create --role gateway USER`"
        }
        403 => {
            "; the token needs the gateway role: make one with \
                `gpusched token create --role gateway USER`"
        }
        404 => "; the server is older than the gateway (no /api/gateway/sync): upgrade it",
        _ => "",
    };
    Err(SyncError::Refused {
        server: server.to_string(),
        status,
        message,
        advice,
    })
}

/// One HTTP/1.1 POST over the server's Unix socket (the caller is known by its uid).
async fn unix_post(sock: &std::path::Path, json: &[u8]) -> Result<(u16, Bytes), String> {
    let call = async {
        let stream = tokio::net::UnixStream::connect(sock)
            .await
            .map_err(|e| e.to_string())?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let req = hyper::Request::builder()
            .method(hyper::Method::POST)
            .uri(SYNC_PATH)
            .header(hyper::header::HOST, "localhost")
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(json.to_vec())))
            .map_err(|e| e.to_string())?;
        let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, body))
    };
    tokio::time::timeout(SYNC_TIMEOUT, call)
        .await
        .unwrap_or_else(|_| Err("no answer within 10 s".into()))
}
