//! Opening a job step's stream: `POST /api/jobs/{id}/steps` upgraded to the step
//! protocol, over the same connections as every other call (the Unix socket with the
//! caller's uid; TCP or TLS with the token, a follower's 307 followed to the leader).

use anyhow::Context;
use gpusched_wire::step::{StepRequest, STEP_UPGRADE};
use gpusched_wire::ApiError;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::StatusCode;
use tokio::io::{AsyncRead, AsyncWrite};

use super::{Client, Refused, Target, MAX_HOPS};

/// A step's open stream.
pub trait StepIo: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> StepIo for T {}

fn refused(status: StatusCode, body: &[u8]) -> anyhow::Error {
    let message = serde_json::from_slice::<ApiError>(body)
        .map(|e| e.error)
        .unwrap_or_else(|_| String::from_utf8_lossy(body).into_owned());
    Refused {
        status: status.as_u16(),
        message,
    }
    .into()
}

impl Client {
    /// Starts a step in job `id` and returns its stream (the server's refusal, before
    /// anything ran, as a [`Refused`]).
    pub async fn open_step(&self, id: u64, req: &StepRequest) -> anyhow::Result<Box<dyn StepIo>> {
        let body = serde_json::to_vec(req)?;
        let path = format!("/api/jobs/{id}/steps");
        match &self.target {
            Target::Unix(sock) => {
                let stream = tokio::net::UnixStream::connect(sock)
                    .await
                    .with_context(|| {
                        format!("cannot reach the server at unix:{}", sock.display())
                    })?;
                let (mut sender, conn) =
                    hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                        .await?;
                tokio::spawn(async move {
                    let _ = conn.with_upgrades().await;
                });
                let req = hyper::Request::builder()
                    .method(hyper::Method::POST)
                    .uri(&path)
                    .header(hyper::header::HOST, "localhost")
                    .header(hyper::header::CONTENT_TYPE, "application/json")
                    .header(hyper::header::CONNECTION, "upgrade")
                    .header(hyper::header::UPGRADE, STEP_UPGRADE)
                    .body(Full::new(Bytes::from(body)))?;
                let resp = sender.send_request(req).await?;
                if resp.status() != StatusCode::SWITCHING_PROTOCOLS {
                    let status = resp.status();
                    let b = resp.into_body().collect().await?.to_bytes();
                    return Err(refused(status, &b));
                }
                let io = hyper::upgrade::on(resp).await?;
                Ok(Box::new(hyper_util::rt::TokioIo::new(io)))
            }
            Target::Http { token, .. } => {
                let http = self
                    .http
                    .as_ref()
                    .expect("Client::new builds an HTTP client for every TCP target");
                let servers = self
                    .servers
                    .as_ref()
                    .expect("Client::new parses the servers of every TCP target");
                let mut last_err = None;
                for base in servers.order() {
                    let mut at = base.clone();
                    for _ in 0..MAX_HOPS {
                        let mut r = http
                            .post(format!("{at}{path}"))
                            .header("content-type", "application/json")
                            .header(reqwest::header::CONNECTION, "upgrade")
                            .header(reqwest::header::UPGRADE, STEP_UPGRADE)
                            .body(body.clone());
                        if let Some(t) = token {
                            r = r.bearer_auth(t);
                        }
                        let resp = match r.send().await {
                            Ok(resp) => resp,
                            Err(e) => {
                                last_err = Some(self.unreachable(&e.into()));
                                break;
                            }
                        };
                        let status = resp.status();
                        if status == StatusCode::TEMPORARY_REDIRECT {
                            let to = resp
                                .headers()
                                .get(reqwest::header::LOCATION)
                                .and_then(|v| v.to_str().ok())
                                .and_then(gpusched_wire::servers::origin_of);
                            if let Some(origin) = to {
                                at = origin;
                                continue;
                            }
                        }
                        if status == StatusCode::SWITCHING_PROTOCOLS {
                            servers.answered(&at);
                            return Ok(Box::new(resp.upgrade().await?));
                        }
                        if status == StatusCode::SERVICE_UNAVAILABLE {
                            let b = resp.bytes().await.unwrap_or_default();
                            last_err = Some(refused(status, &b));
                            break;
                        }
                        let b = resp.bytes().await.unwrap_or_default();
                        return Err(refused(status, &b));
                    }
                }
                Err(last_err.unwrap_or_else(|| anyhow::anyhow!("no server answered")))
            }
        }
    }
}
