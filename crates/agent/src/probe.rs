//! One probe of a service replica's port (`gpusched_wire::service::Probe`): an HTTP/1.1
//! GET of its path, or a TCP connection when it has none, to `127.0.0.1:PORT` within
//! the probe's timeout. A status 200-399 is a success; anything else is a failure
//! described in words for the replica's events ("GET http://127.0.0.1:41234/ready:
//! status 503").
//!
//! The request is written by hand over a new connection each time, not with reqwest:
//! reqwest would keep connections alive (a replica that stopped accepting new ones
//! would still pass on an old one) and honour `HTTP_PROXY` (sending the node's own
//! probes through a proxy), and a probe needs nothing of HTTP but the status line.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use gpusched_wire::service::Probe;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// The most of an answer read looking for its status line.
const STATUS_LINE_MAX: usize = 1024;

/// Probes `port` on this host once as `p` says: `Err` says what the probe got.
pub async fn probe(port: u16, p: &Probe) -> Result<(), String> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    // A timeout of 0 would fail every probe; the server refuses it, so this is defence.
    let limit = Duration::from_secs(u64::from(p.timeout_s.max(1)));
    let (what, result) = match &p.path {
        None => (
            format!("TCP connection to {addr}"),
            timeout(limit, connect(addr)).await,
        ),
        Some(path) => (
            format!("GET http://{addr}{path}"),
            timeout(limit, get(addr, path)).await,
        ),
    };
    match result {
        Ok(Ok(())) => Ok(()),
        Ok(Err(why)) => Err(format!("{what}: {why}")),
        Err(_) => Err(format!("{what}: no answer within {} s", limit.as_secs())),
    }
}

async fn connect(addr: SocketAddr) -> Result<(), String> {
    // Connected is all a TCP probe asks; the connection closes as it drops.
    TcpStream::connect(addr).await.map(drop).map_err(io_words)
}

/// GETs `path` and judges the status.
async fn get(addr: SocketAddr, path: &str) -> Result<(), String> {
    let mut conn = TcpStream::connect(addr).await.map_err(io_words)?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: gpusched-agent-probe\r\n\
         Accept: */*\r\nConnection: close\r\n\r\n"
    );
    conn.write_all(request.as_bytes()).await.map_err(io_words)?;
    let status = read_status(&mut conn).await?;
    if (200..400).contains(&status) {
        Ok(())
    } else {
        Err(format!("status {status}"))
    }
}

/// Reads up to the end of the status line and returns its code. The rest of the answer
/// is left unread: the connection is closed anyway (`Connection: close`).
async fn read_status(conn: &mut TcpStream) -> Result<u16, String> {
    let mut buf = Vec::with_capacity(128);
    let mut chunk = [0u8; 256];
    loop {
        if let Some(end) = buf.windows(2).position(|w| w == b"\r\n") {
            return status_code(&buf[..end]);
        }
        if buf.len() >= STATUS_LINE_MAX {
            return status_code(&buf);
        }
        let n = conn.read(&mut chunk).await.map_err(io_words)?;
        if n == 0 {
            return if buf.is_empty() {
                Err("the connection closed without an answer".to_string())
            } else {
                status_code(&buf)
            };
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The code of an HTTP/1.x status line (`HTTP/1.1 200 OK`).
fn status_code(line: &[u8]) -> Result<u16, String> {
    let text = String::from_utf8_lossy(line);
    let mut words = text.split(' ');
    let version = words.next().unwrap_or("");
    let code = words.next().unwrap_or("");
    let three_digits = code.len() == 3 && code.bytes().all(|b| b.is_ascii_digit());
    match code.parse::<u16>() {
        Ok(code) if version.starts_with("HTTP/") && three_digits => Ok(code),
        _ => {
            let shown: String = text.chars().take(80).collect();
            Err(format!("not an HTTP answer: {shown:?}"))
        }
    }
}

/// The usual connection errors in plain words (without "os error 111").
fn io_words(e: io::Error) -> String {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
        io::ErrorKind::ConnectionReset => "connection reset".to_string(),
        io::ErrorKind::ConnectionAborted => "connection aborted".to_string(),
        io::ErrorKind::UnexpectedEof => "the connection closed without an answer".to_string(),
        _ => e.to_string(),
    }
}

/// Which probe failed (the label of `gpusched_agent_probe_failures_total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Readiness,
    Liveness,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Readiness => "readiness",
            Kind::Liveness => "liveness",
        }
    }
}

/// Failed probes on this node by kind; clones share the counts (the launcher counts,
/// the metrics endpoint shows them).
#[derive(Clone, Debug)]
pub struct Failures(Family<Vec<(String, String)>, Counter>);

impl Default for Failures {
    fn default() -> Self {
        let family = Family::default();
        // Both series exist from the start, at 0, so a rate over them is defined before
        // the first failure.
        for kind in [Kind::Readiness, Kind::Liveness] {
            let _ = family.get_or_create(&labels(kind));
        }
        Failures(family)
    }
}

fn labels(kind: Kind) -> Vec<(String, String)> {
    vec![("kind".to_string(), kind.as_str().to_string())]
}

impl Failures {
    pub fn inc(&self, kind: Kind) {
        self.0.get_or_create(&labels(kind)).inc();
    }

    pub fn get(&self, kind: Kind) -> u64 {
        self.0.get_or_create(&labels(kind)).get()
    }

    /// The family to register (shares the counts).
    pub fn family(&self) -> Family<Vec<(String, String)>, Counter> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    fn http(path: &str, timeout_s: u32) -> Probe {
        Probe {
            path: Some(path.to_string()),
            timeout_s,
            ..Probe::default()
        }
    }

    /// A server on a free port that answers each connection with `answer` (after
    /// reading the request's first bytes), or says nothing when `answer` is `None`.
    async fn server(answer: Option<&'static str>) -> (u16, tokio::task::JoinHandle<()>) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut c, _)) = l.accept().await {
                let mut req = [0u8; 512];
                let _ = c.read(&mut req).await;
                match answer {
                    Some(a) => {
                        let _ = c.write_all(a.as_bytes()).await;
                    }
                    // Silent: keep it open so only the timeout ends the probe.
                    None => held.push(c),
                }
            }
        });
        (port, task)
    }

    /// A port nobody listens on: bound then closed (a listening socket leaves no
    /// TIME_WAIT, and nothing else binds in between on a test machine's loopback).
    fn closed_port() -> u16 {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    }

    #[tokio::test]
    async fn statuses_200_to_399_pass_and_others_fail_naming_the_status() {
        for (answer, ok) in [
            ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true),
            ("HTTP/1.0 302 Found\r\n\r\n", true),
            ("HTTP/1.1 399 X\r\n\r\n", true),
            ("HTTP/1.1 503 Service Unavailable\r\n\r\n", false),
            ("HTTP/1.1 404 Not Found\r\n\r\n", false),
        ] {
            let (port, task) = server(Some(answer)).await;
            let got = probe(port, &http("/v2/health/ready", 5)).await;
            task.abort();
            if ok {
                assert_eq!(got, Ok(()), "{answer}");
            } else {
                let code = &answer[9..12];
                assert_eq!(
                    got,
                    Err(format!(
                        "GET http://127.0.0.1:{port}/v2/health/ready: status {code}"
                    ))
                );
            }
        }
    }

    #[tokio::test]
    async fn garbage_a_closed_connection_and_silence_fail_in_words() {
        let (port, task) = server(Some("SSH-2.0-OpenSSH\r\n")).await;
        let got = probe(port, &http("/", 5)).await.unwrap_err();
        task.abort();
        assert!(
            got.ends_with(": not an HTTP answer: \"SSH-2.0-OpenSSH\""),
            "{got}"
        );

        let (port, task) = server(Some("")).await;
        let got = probe(port, &http("/", 5)).await.unwrap_err();
        task.abort();
        assert!(
            got.ends_with(": the connection closed without an answer")
                || got.ends_with(": connection reset"),
            "{got}"
        );

        let (port, task) = server(None).await;
        let got = probe(port, &http("/h", 1)).await.unwrap_err();
        task.abort();
        assert_eq!(
            got,
            format!("GET http://127.0.0.1:{port}/h: no answer within 1 s")
        );
    }

    #[tokio::test]
    async fn a_tcp_probe_passes_when_the_port_accepts_and_fails_when_refused() {
        let (port, task) = server(None).await;
        assert_eq!(probe(port, &Probe::default()).await, Ok(()));
        task.abort();
        let port = closed_port();
        assert_eq!(
            probe(port, &Probe::default()).await,
            Err(format!(
                "TCP connection to 127.0.0.1:{port}: connection refused"
            ))
        );
        assert_eq!(
            probe(port, &http("/ready", 1)).await,
            Err(format!(
                "GET http://127.0.0.1:{port}/ready: connection refused"
            ))
        );
    }

    #[test]
    fn status_lines_are_read_strictly() {
        assert_eq!(status_code(b"HTTP/1.1 204 No Content"), Ok(204));
        assert_eq!(status_code(b"HTTP/1.1 200"), Ok(200));
        assert!(status_code(b"HTTP/1.1 20 OK").is_err());
        assert!(status_code(b"HTTP/1.1 0200 OK").is_err());
        assert!(status_code(b"ICY 200 OK").is_err());
        assert!(status_code(b"").is_err());
    }

    #[test]
    fn failures_are_counted_by_kind_from_zero() {
        let f = Failures::default();
        assert_eq!((f.get(Kind::Readiness), f.get(Kind::Liveness)), (0, 0));
        f.clone().inc(Kind::Liveness);
        assert_eq!((f.get(Kind::Readiness), f.get(Kind::Liveness)), (0, 1));
    }
}
