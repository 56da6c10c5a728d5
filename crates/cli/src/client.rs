//! The CLI's client for the user API, over the server's Unix socket (the caller is known
//! by uid) or over TCP with a bearer token. Errors say which server was tried and how to
//! reach one; a refusal from the server is shown with the server's own message.

mod arrays;
mod reservations;
mod services;
pub use arrays::job_ref;

mod step;
use std::path::PathBuf;
use std::time::Duration;
pub use step::StepIo;

use anyhow::{anyhow, Context};
use gpusched_wire::{
    ApiError, BatchSubmit, CancelMany, CancelManyResult, JobList, JobListQuery, JobSubmit, JobView,
    NodeList, Submitted, TokenCreate, TokenCreated, TokenList, TokenView, WhoAmI,
};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// How to reach the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `unix:/path/to/gpusched.sock`
    Unix(PathBuf),
    /// `http://host:port`, or several comma-separated (see [`Client`]), with a bearer
    /// token.
    Http { base: String, token: Option<String> },
}

impl Target {
    /// `--server` / `$GPUSCHED_SERVER` if given; else the local server's socket if there
    /// is one in the default data directory; else `http://127.0.0.1:6450`. Over TCP the
    /// token is `--token` / `$GPUSCHED_TOKEN`, else the file `~/.config/gpusched/token`.
    /// The token file is read only for TCP: the socket needs none.
    pub fn resolve(server: Option<String>, token: Option<String>) -> Target {
        let token = move || token.or_else(token_file);
        match server {
            Some(s) => match s.strip_prefix("unix:") {
                Some(path) => Target::Unix(PathBuf::from(path)),
                None => Target::Http {
                    base: s.trim_end_matches('/').to_string(),
                    token: token(),
                },
            },
            None => {
                let sock = crate::commands::server::default_data_dir()
                    .ok()
                    .map(|d| d.join(gpusched_server::SOCKET_NAME))
                    .filter(|p| p.exists());
                match sock {
                    Some(p) => Target::Unix(p),
                    None => Target::Http {
                        base: format!("http://127.0.0.1:{}", gpusched_wire::DEFAULT_PORT),
                        token: token(),
                    },
                }
            }
        }
    }

    /// The server as messages name it.
    pub fn shown(&self) -> String {
        match self {
            Target::Unix(p) => format!("unix:{}", p.display()),
            Target::Http { base, .. } => base.clone(),
        }
    }
}

fn token_file() -> Option<String> {
    let path = dirs::config_dir()?.join("gpusched").join("token");
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Over TCP, a target may name several servers: a request goes to the one that
/// answered last; a follower's 307 is followed (method, body and token kept), and a
/// server that cannot be reached, or answers 503, makes the client try the next.
pub struct Client {
    target: Target,
    /// The HTTP client for a TCP target; none for the Unix socket, which is spoken to
    /// with hyper directly, so a socket call never pays for building one.
    http: Option<reqwest::Client>,
    /// The TCP target's servers (None on the socket).
    servers: Option<gpusched_wire::servers::ServerList>,
    /// The `--ca-cert` file trusted besides the system's roots, named in the advice
    /// when the server's certificate is refused anyway.
    ca_cert: Option<std::path::PathBuf>,
}

/// Redirects followed for one request (a follower points at the leader: one hop; more
/// only while a leadership moves).
const MAX_HOPS: u32 = 4;

/// An answer: status, the job-state header (logs), `Retry-After` and the body.
struct Answer {
    status: StatusCode,
    job_state: String,
    /// The attempt a logs answer is of.
    attempt: Option<u32>,
    retry_after: Option<u64>,
    body: Bytes,
    /// No server leads right now, as far as the servers of the target tell (a follower
    /// knows none, or names a leader that cannot be reached): a failover is under way.
    failover: bool,
}

/// The server's refusal of a request, as the user sees it: its message and status (a
/// caller that must tell kinds of refusal apart downcasts to this).
#[derive(Debug)]
pub struct Refused {
    pub status: u16,
    pub message: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (HTTP {})", self.message, self.status)
    }
}

impl std::error::Error for Refused {}

/// How long a request to one of several servers goes unanswered before the client asks
/// the others who leads, and how often it asks again while it waits: often through the
/// first `PROBE_FAST_FOR` (a stopped leader's lease runs out and a follower takes over
/// within seconds, and the request should move then, not at the next slow probe), then
/// rarely (a long poll such as `wait` or `logs -f` may rightly go unanswered for minutes,
/// and each probe is a request to every other server).
const PROBE_AFTER: Duration = Duration::from_secs(1);
const PROBE_EVERY: Duration = Duration::from_millis(500);
const PROBE_FAST_FOR: Duration = Duration::from_secs(20);
const PROBE_SLOW_EVERY: Duration = Duration::from_secs(5);
/// The longest a probe of one server's health waits.
const PROBE_WAIT: Duration = Duration::from_secs(1);

/// What became of a request sent while watching who leads.
enum Sent {
    Answer(reqwest::Result<reqwest::Response>),
    /// Another server leads now: the request should go there.
    Elsewhere(String),
}

/// Sends `req` to `at`, one of several servers; while it goes unanswered (a server that
/// is stopped, or cut off from the clients or the database, still accepts connections
/// and answers nothing), asks the other servers who leads: once another server says it
/// leads, the request goes there instead, and the one sent is abandoned. That is safe
/// because a server that no longer leads commits nothing (the store's fence), and a
/// submission's client token makes a repeated one the same job. A slow leader, or a long
/// poll (`wait`, `logs -f`), is waited for as long as it takes, as before.
async fn send_watching(
    http: &reqwest::Client,
    req: reqwest::RequestBuilder,
    servers: &gpusched_wire::servers::ServerList,
    at: &str,
) -> Sent {
    let fut = req.send();
    if servers.all().len() < 2 {
        return Sent::Answer(fut.await);
    }
    tokio::pin!(fut);
    let sent = std::time::Instant::now();
    let mut next_probe = PROBE_AFTER;
    loop {
        match tokio::time::timeout(next_probe, &mut fut).await {
            Ok(r) => return Sent::Answer(r),
            Err(_) => next_probe = probe_interval(sent.elapsed()),
        }
        tokio::select! {
            r = &mut fut => return Sent::Answer(r),
            leader = leader_besides(http, servers, at) => {
                if let Some(l) = leader {
                    return Sent::Elsewhere(l);
                }
            }
        }
    }
}

/// The wait before the next probe of a request unanswered for `waited`.
fn probe_interval(waited: Duration) -> Duration {
    if waited < PROBE_FAST_FOR {
        PROBE_EVERY
    } else {
        PROBE_SLOW_EVERY
    }
}

/// The first server other than `at` whose own health says it leads.
async fn leader_besides(
    http: &reqwest::Client,
    servers: &gpusched_wire::servers::ServerList,
    at: &str,
) -> Option<String> {
    for base in servers.all().iter().filter(|b| b.as_str() != at) {
        let probe = http.get(format!("{base}/api/health")).timeout(PROBE_WAIT);
        let Ok(r) = probe.send().await else { continue };
        if !r.status().is_success() {
            continue;
        }
        let Ok(h) = r.json::<serde_json::Value>().await else {
            continue;
        };
        if h["role"] == "leader" {
            return Some(base.clone());
        }
    }
    None
}

/// How long a client of several servers keeps trying while none leads (a failover).
const FAILOVER_WAIT: Duration = Duration::from_secs(30);

/// Tries of one request the server turns away for now (503, or 429 with Retry-After).
const BUSY_TRIES: u32 = 6;
/// How long a 503 is tried again past those tries: a database restart or failover
/// behind the server takes seconds, more on a loaded machine (a PostgreSQL restart under
/// a saturated test run outlasted six tries a second apart).
const UNAVAILABLE_WINDOW: Duration = Duration::from_secs(15);
/// The wait before trying a 503 again that does not say how long (a proxy's, an older
/// server's): the servers' own `Retry-After`.
const UNAVAILABLE_WAIT: u64 = 1;
/// The longest single wait, whatever Retry-After says.
const BUSY_WAIT_MAX: Duration = Duration::from_secs(30);

fn attempt_of(h: Option<&hyper::header::HeaderValue>) -> Option<u32> {
    h.and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok())
}

/// Seconds from a `Retry-After` header (the delay form; the server sends no dates).
fn retry_after(h: Option<&hyper::header::HeaderValue>) -> Option<u64> {
    h.and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// The servers of a TCP target. A URL of another scheme is refused naming every form
/// `--server` takes: the shared parser (also the agent's, which has no socket) knows only
/// http and https, but the CLI also reaches a server by its socket, `unix:PATH`.
fn parse_servers(base: &str) -> anyhow::Result<gpusched_wire::servers::ServerList> {
    let bad = base
        .split(',')
        .map(str::trim)
        .find(|u| !u.is_empty() && !u.starts_with("http://") && !u.starts_with("https://"));
    if let Some(bad) = bad {
        anyhow::bail!(
            "server {bad:?} is not one gpusched can reach: give unix:PATH for a server's \
             socket (DATA_DIR/{}), or http://HOST:PORT or https://HOST:PORT, several \
             comma-separated for servers that fail over",
            gpusched_server::SOCKET_NAME
        );
    }
    gpusched_wire::servers::ServerList::parse(base).map_err(anyhow::Error::msg)
}

impl Client {
    pub fn new(target: Target, ca_cert: Option<&std::path::Path>) -> anyhow::Result<Self> {
        // A named CA file that cannot be used is an error whatever the target, as before.
        let extra_roots = ca_cert.map(read_cert).transpose()?;
        let http = match &target {
            Target::Unix(_) => None,
            Target::Http { base, .. } => {
                // Loading the system's CA store costs milliseconds per invocation; only
                // HTTPS needs it.
                // Redirects are followed here, not by reqwest, which drops the token
                // when the host changes (and a follower always points elsewhere).
                let mut b = reqwest::Client::builder()
                    .timeout(Duration::from_secs(330))
                    // A server host that is down or cut off answers no SYN: move on to
                    // the next server soon, not after the system's minutes.
                    .connect_timeout(Duration::from_secs(3))
                    .redirect(reqwest::redirect::Policy::none())
                    .tls_built_in_root_certs(base.starts_with("https://"));
                for cert in extra_roots.into_iter().flatten() {
                    b = b.add_root_certificate(cert);
                }
                Some(b.build().context("cannot build the HTTP client")?)
            }
        };
        let servers = match &target {
            Target::Unix(_) => None,
            Target::Http { base, .. } => Some(parse_servers(base)?),
        };
        Ok(Client {
            target,
            http,
            servers,
            ca_cert: ca_cert.map(std::path::Path::to_path_buf),
        })
    }

    /// One request; when the server turns it away for now (503: the store could not be
    /// read or written, an election, a server stepping down, overloaded; 429 with
    /// `Retry-After`: this user over the submit rate; nothing was done either way), waits
    /// as told and tries again, a bounded number of times (a 503 for at least
    /// [`UNAVAILABLE_WINDOW`]). A submission carries its
    /// client token, so trying it again never makes a second job.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> anyhow::Result<Answer> {
        let mut tries = 1;
        let started = std::time::Instant::now();
        loop {
            let answer = self.call_once(method.clone(), path, body.clone()).await?;
            let busy = matches!(
                answer.status,
                StatusCode::SERVICE_UNAVAILABLE | StatusCode::TOO_MANY_REQUESTS
            );
            // Through a failover the tries are counted in time: a follower takes over
            // once the old leader's lease has run out (4 s by default); so are a 503's,
            // for a while (the store behind the server restarting).
            let unavailable = answer.status == StatusCode::SERVICE_UNAVAILABLE;
            let again = tries < BUSY_TRIES
                || (answer.failover && started.elapsed() < FAILOVER_WAIT)
                || (unavailable && started.elapsed() < UNAVAILABLE_WINDOW);
            // Every 503 may be tried again (the servers always say when); a 429 only
            // when it says when.
            let retry_after = match answer.status {
                StatusCode::SERVICE_UNAVAILABLE => {
                    Some(answer.retry_after.unwrap_or(UNAVAILABLE_WAIT))
                }
                _ => answer.retry_after,
            };
            match retry_after {
                Some(secs) if busy && again => {
                    let wait = Duration::from_secs(secs.max(1)).min(BUSY_WAIT_MAX);
                    if answer.failover {
                        eprintln!(
                            "no server leads right now (a failover is under way); trying \
                             again in {} s",
                            wait.as_secs()
                        );
                    } else {
                        // The server's reason: a store restarting, an overload, a rate.
                        let reason = serde_json::from_slice::<ApiError>(&answer.body)
                            .map(|e| e.error)
                            .unwrap_or_default();
                        eprintln!(
                            "the server is busy (HTTP {}): {reason}; trying again in {} s",
                            answer.status.as_u16(),
                            wait.as_secs()
                        );
                    }
                    tokio::time::sleep(wait).await;
                    tries += 1;
                }
                _ => return Self::checked(answer),
            }
        }
    }

    async fn call_once(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> anyhow::Result<Answer> {
        let sent = match &self.target {
            Target::Unix(sock) => unix_call(sock, method, path, body).await,
            Target::Http { token, .. } => self.tcp_call(method, path, body, token).await,
        };
        sent.map_err(|e| self.unreachable(&e))
    }

    /// What a request that reached no server says: for a refused certificate what to
    /// trust (`gpusched up` would not help), else where the server should be.
    fn unreachable(&self, e: &anyhow::Error) -> anyhow::Error {
        let (server, error) = (self.target.shown(), e.to_string());
        let advice = certificate_advice(&server, &error).or_else(|| {
            gpusched_agent::ca::certificate_advice(&server, &error, self.ca_cert.as_deref())
        });
        if let Some(advice) = advice {
            return anyhow!(advice);
        }
        anyhow!(
            "cannot reach the gpusched server at {server} ({e}); start one with `gpusched up`, \
             or point --server / GPUSCHED_SERVER at it"
        )
    }

    /// A request over TCP to the servers of the target: the last good one first; a 307
    /// is followed to its `Location`; an unreachable server or a 503 moves on to the
    /// next (the last 503 is the answer if every server gives one).
    async fn tcp_call(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        token: &Option<String>,
    ) -> anyhow::Result<Answer> {
        let http = self
            .http
            .as_ref()
            .expect("Client::new builds an HTTP client for every TCP target");
        let servers = self
            .servers
            .as_ref()
            .expect("Client::new parses the servers of every TCP target");
        let mut last_err = None;
        let mut busy = None;
        // A leader that a follower named and that could not be reached (it crashed, and
        // its lease has not run out yet).
        let mut lost_leader: Option<String> = None;
        for base in servers.order() {
            let mut url = format!("{base}{path}");
            let mut at = base.clone();
            for _ in 0..MAX_HOPS {
                let mut req = http
                    .request(method.clone(), &url)
                    .header("content-type", "application/json");
                if let Some(t) = token {
                    req = req.bearer_auth(t);
                }
                if let Some(b) = &body {
                    req = req.body(b.clone());
                }
                let r = match send_watching(http, req, servers, &at).await {
                    Sent::Answer(Ok(r)) => r,
                    Sent::Answer(Err(e)) => {
                        if at != base {
                            lost_leader = Some(at.clone());
                        }
                        last_err = Some(anyhow!(root_cause(&e)));
                        break;
                    }
                    Sent::Elsewhere(leader) => {
                        // The server asked is stale (stopped, cut off): another leads.
                        eprintln!("{at} does not answer and {leader} leads now; asking {leader}");
                        url = format!("{leader}{path}");
                        at = leader;
                        continue;
                    }
                };
                let status = r.status();
                if status == StatusCode::TEMPORARY_REDIRECT {
                    let to = r
                        .headers()
                        .get("location")
                        .and_then(|v| v.to_str().ok())
                        .map(String::from);
                    match to.as_deref().and_then(gpusched_wire::servers::origin_of) {
                        Some(origin) => {
                            url = to.unwrap_or_default();
                            at = origin;
                            continue;
                        }
                        None => break,
                    }
                }
                // A follower that knows no leader says so: a failover under way.
                let no_leader = r
                    .headers()
                    .get("x-gpusched-leader")
                    .is_some_and(|v| v == "unknown");
                let job_state = header(r.headers());
                let attempt = attempt_of(r.headers().get("x-gpusched-job-attempt"));
                let retry_after = retry_after(r.headers().get("retry-after"));
                let body = r.bytes().await.map_err(|e| anyhow!(root_cause(&e)))?;
                let several = servers.all().len() > 1;
                let answer = Answer {
                    status,
                    job_state,
                    attempt,
                    retry_after,
                    body,
                    failover: status == StatusCode::SERVICE_UNAVAILABLE && (several || no_leader),
                };
                if status == StatusCode::SERVICE_UNAVAILABLE && several {
                    // A follower that knows no leader, or a leader stepping down.
                    busy = Some(answer);
                    break;
                }
                servers.answered(&at);
                return Ok(answer);
            }
        }
        if let (None, Some(leader)) = (&busy, &lost_leader) {
            // Nothing was received anywhere: the same request may go again once
            // another server leads.
            let error = ApiError {
                error: format!(
                    "the leader the other servers name ({leader}) cannot be reached and none \
                     of {} leads yet",
                    servers.shown()
                ),
            };
            return Ok(Answer {
                status: StatusCode::SERVICE_UNAVAILABLE,
                job_state: String::new(),
                attempt: None,
                retry_after: Some(1),
                body: Bytes::from(serde_json::to_vec(&error).unwrap_or_default()),
                failover: true,
            });
        }
        match (busy, last_err) {
            (Some(answer), _) => Ok(answer),
            (None, Some(e)) => Err(e),
            (None, None) => Err(anyhow!(
                "the servers at {} kept redirecting (more than {MAX_HOPS} hops)",
                servers.shown()
            )),
        }
    }

    /// The answer if it is a success, else its error message.
    fn checked(answer: Answer) -> anyhow::Result<Answer> {
        if answer.status.is_success() {
            return Ok(answer);
        }
        let msg = serde_json::from_slice::<ApiError>(&answer.body)
            .map(|e| e.error)
            .unwrap_or_else(|_| String::from_utf8_lossy(&answer.body).into_owned());
        Err(Refused {
            status: answer.status.as_u16(),
            message: msg,
        }
        .into())
    }

    async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> anyhow::Result<T> {
        let bytes = body.map(serde_json::to_vec).transpose()?;
        let answer = self.call(method, path, bytes).await?;
        serde_json::from_slice(&answer.body).with_context(|| {
            format!(
                "the server at {} sent an answer this CLI cannot read; are both the same version?",
                self.target.shown()
            )
        })
    }

    pub async fn submit(&self, jobs: Vec<JobSubmit>) -> anyhow::Result<Submitted> {
        if jobs.len() == 1 {
            self.json(Method::POST, "/api/jobs", Some(&jobs[0])).await
        } else {
            self.json(Method::POST, "/api/jobs/batch", Some(&BatchSubmit { jobs }))
                .await
        }
    }

    pub async fn list(&self, q: &JobListQuery) -> anyhow::Result<JobList> {
        let qs = serde_urlencoded::to_string(q)?;
        self.json(Method::GET, &format!("/api/jobs?{qs}"), None::<&()>)
            .await
    }

    pub async fn get(&self, id: u64) -> anyhow::Result<JobView> {
        self.json(Method::GET, &format!("/api/jobs/{id}"), None::<&()>)
            .await
    }

    /// A job's timeline, oldest first (its owner or an admin).
    pub async fn events(&self, id: u64) -> anyhow::Result<gpusched_wire::history::JobEvents> {
        self.json(Method::GET, &format!("/api/jobs/{id}/events"), None::<&()>)
            .await
    }

    /// One page of the audit log, newest first (admins).
    pub async fn audit(
        &self,
        q: &gpusched_wire::history::AuditQuery,
    ) -> anyhow::Result<gpusched_wire::history::AuditList> {
        let qs = serde_urlencoded::to_string(q)?;
        self.json(Method::GET, &format!("/api/audit?{qs}"), None::<&()>)
            .await
    }

    /// One page of ended jobs as trace rows, newest first (users: their own).
    pub async fn history_jobs(
        &self,
        q: &gpusched_wire::export::HistoryQuery,
    ) -> anyhow::Result<gpusched_wire::export::HistoryPage> {
        let qs = serde_urlencoded::to_string(q)?;
        self.json(Method::GET, &format!("/api/history/jobs?{qs}"), None::<&()>)
            .await
    }

    /// Deletes the jobs that ended before `before_ms` from the history (admins).
    pub async fn purge(
        &self,
        before_ms: u64,
    ) -> anyhow::Result<gpusched_wire::history::PurgeResult> {
        let body = gpusched_wire::history::PurgeRequest { before_ms };
        self.json(Method::POST, "/api/admin/purge", Some(&body))
            .await
    }

    /// Cancels all `ids` in one request (one transaction on the server).
    pub async fn cancel_many(&self, ids: &[u64]) -> anyhow::Result<CancelManyResult> {
        let body = CancelMany { ids: ids.to_vec() };
        self.json(Method::POST, "/api/jobs/cancel", Some(&body))
            .await
    }

    pub async fn checkpoint(&self, id: u64) -> anyhow::Result<JobView> {
        let path = format!("/api/jobs/{id}/checkpoint");
        self.json(Method::POST, &path, None::<&()>).await
    }

    pub async fn hold(&self, id: u64) -> anyhow::Result<JobView> {
        let path = format!("/api/jobs/{id}/hold");
        self.json(Method::POST, &path, None::<&()>).await
    }

    pub async fn release(&self, id: u64) -> anyhow::Result<JobView> {
        let path = format!("/api/jobs/{id}/release");
        self.json(Method::POST, &path, None::<&()>).await
    }

    pub async fn update(&self, id: u64, up: &gpusched_wire::JobUpdate) -> anyhow::Result<JobView> {
        let path = format!("/api/jobs/{id}");
        self.json(Method::PATCH, &path, Some(up)).await
    }

    pub async fn submit_workflow(
        &self,
        wf: &gpusched_wire::workflow::WorkflowSubmit,
    ) -> anyhow::Result<gpusched_wire::workflow::WorkflowSubmitted> {
        self.json(Method::POST, "/api/workflows", Some(wf)).await
    }

    pub async fn wait(&self, id: u64, timeout_s: u64) -> anyhow::Result<JobView> {
        let path = format!("/api/jobs/{id}/wait?timeout_s={timeout_s}");
        self.json(Method::GET, &path, None::<&()>).await
    }

    /// Log bytes from `offset` of one attempt (None: the current one), the job's state
    /// and the attempt the bytes are of. `part` picks the node and/or the process of a
    /// job on several nodes (default: rank 0's first process).
    pub async fn logs(
        &self,
        id: u64,
        stream: &str,
        offset: u64,
        attempt: Option<u32>,
        part: &LogPart,
    ) -> anyhow::Result<(Vec<u8>, String, Option<u32>)> {
        let mut path = format!("/api/jobs/{id}/logs?stream={stream}&offset={offset}");
        if let Some(a) = attempt {
            path.push_str(&format!("&attempt={a}"));
        }
        if let Some(n) = &part.node {
            // Node names are the agent's `--name`: encode whatever it holds.
            path.push_str("&node=");
            path.push_str(&url_component(n));
        }
        if let Some(r) = part.rank {
            path.push_str(&format!("&rank={r}"));
        }
        let a = self.call(Method::GET, &path, None).await?;
        Ok((a.body.to_vec(), a.job_state, a.attempt))
    }

    pub async fn nodes(&self) -> anyhow::Result<NodeList> {
        self.json(Method::GET, "/api/nodes", None::<&()>).await
    }

    /// Drains a node (admins): nothing new starts there.
    pub async fn drain(
        &self,
        node: &str,
        req: &gpusched_wire::DrainRequest,
    ) -> anyhow::Result<gpusched_wire::NodeView> {
        let path = format!("/api/nodes/{}/drain", url_component(node));
        self.json(Method::POST, &path, Some(req)).await
    }

    /// Ends a node's drain and its GPUs' unhealthy marks (admins).
    pub async fn resume(&self, node: &str) -> anyhow::Result<gpusched_wire::NodeView> {
        let path = format!("/api/nodes/{}/resume", url_component(node));
        self.json(Method::POST, &path, None::<&()>).await
    }

    pub async fn usage(
        &self,
        q: &gpusched_wire::UsageQuery,
    ) -> anyhow::Result<gpusched_wire::UsageReport> {
        let qs = serde_urlencoded::to_string(q)?;
        self.json(Method::GET, &format!("/api/usage?{qs}"), None::<&()>)
            .await
    }

    pub async fn queues(&self) -> anyhow::Result<gpusched_wire::QueueList> {
        self.json(Method::GET, "/api/queues", None::<&()>).await
    }

    pub async fn accounts(&self) -> anyhow::Result<gpusched_wire::AccountList> {
        self.json(Method::GET, "/api/accounts", None::<&()>).await
    }

    pub async fn whoami(&self) -> anyhow::Result<WhoAmI> {
        self.json(Method::GET, "/api/whoami", None::<&()>).await
    }

    pub async fn token_create(&self, req: &TokenCreate) -> anyhow::Result<TokenCreated> {
        self.json(Method::POST, "/api/tokens", Some(req)).await
    }

    pub async fn token_list(&self) -> anyhow::Result<TokenList> {
        self.json(Method::GET, "/api/tokens", None::<&()>).await
    }

    pub async fn token_revoke(&self, id: u64) -> anyhow::Result<TokenView> {
        self.json(
            Method::POST,
            &format!("/api/tokens/{id}/revoke"),
            None::<&()>,
        )
        .await
    }
}

/// A PEM certificate to trust, read with a message that names the file.
/// Which part of a job's output `logs` reads: a node of a gang, a process (global
/// `RANK`), or both; neither is the first process of the first node.
#[derive(Clone, Debug, Default)]
pub struct LogPart {
    pub node: Option<String>,
    pub rank: Option<u32>,
}

/// Percent-encodes everything but unreserved characters (RFC 3986), for a query value.
fn url_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The certificates of a `--ca-cert` file; one that holds none is refused, naming it.
pub fn read_cert(path: &std::path::Path) -> anyhow::Result<Vec<reqwest::Certificate>> {
    gpusched_agent::ca::read_ca_certs(path)
}

fn header(h: &reqwest::header::HeaderMap) -> String {
    h.get("x-gpusched-job-state")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

/// One HTTP/1.1 request over the Unix socket.
async fn unix_call(
    sock: &std::path::Path,
    method: Method,
    path: &str,
    body: Option<Vec<u8>>,
) -> anyhow::Result<Answer> {
    let stream = tokio::net::UnixStream::connect(sock).await?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let req = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::HOST, "localhost")
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.unwrap_or_default())))?;
    let resp = sender.send_request(req).await?;
    let status = resp.status();
    let job_state = resp
        .headers()
        .get("x-gpusched-job-state")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let retry_after = retry_after(resp.headers().get(hyper::header::RETRY_AFTER));
    let attempt = attempt_of(resp.headers().get("x-gpusched-job-attempt"));
    let body = resp.into_body().collect().await?.to_bytes();
    Ok(Answer {
        status,
        job_state,
        attempt,
        retry_after,
        body,
        failover: false,
    })
}

/// The advice for a TLS refusal a user cannot read as it is: rustls says only
/// `CaUsedAsEndEntity` when the server presents a CA certificate as its own (what
/// `openssl req -x509` makes by default).
fn certificate_advice(server: &str, error: &str) -> Option<String> {
    error.contains("CaUsedAsEndEntity").then(|| {
        format!(
            "the server at {server} presents a CA certificate (basicConstraints CA:TRUE) as \
             its own, which TLS clients refuse (CaUsedAsEndEntity); its operator should {}",
            gpusched_server::tls::LEAF_CERT_ADVICE
        )
    })
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(url_component("gpu-node_1.a~"), "gpu-node_1.a~");
        assert_eq!(url_component("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
    }

    #[test]
    fn only_a_tcp_target_builds_an_http_client() {
        let unix = Client::new(Target::Unix(PathBuf::from("/nonexistent.sock")), None).unwrap();
        assert!(unix.http.is_none());
        let tcp = Target::Http {
            base: "http://127.0.0.1:1".into(),
            token: None,
        };
        assert!(Client::new(tcp, None).unwrap().http.is_some());
    }

    #[test]
    fn a_server_of_another_scheme_is_refused_naming_every_form() {
        for base in ["ftp://x", "http://a:1,ftp://x"] {
            let target = Target::Http {
                base: base.into(),
                token: None,
            };
            let e = Client::new(target, None).err().unwrap().to_string();
            assert!(e.contains("\"ftp://x\""), "{e}");
            for form in ["unix:PATH", "http://", "https://"] {
                assert!(e.contains(form), "{base}: {e} does not name {form}");
            }
        }
    }

    #[test]
    fn a_missing_ca_file_is_an_error_even_on_the_socket() {
        let target = Target::Unix(PathBuf::from("/nonexistent.sock"));
        let e = Client::new(target, Some(std::path::Path::new("/nonexistent/ca.pem")))
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("cannot read the CA certificate /nonexistent/ca.pem"),
            "{e:#}"
        );
    }

    #[test]
    fn a_ca_file_without_a_certificate_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("key.pem");
        std::fs::write(
            &key,
            "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIB8XsLKb3wJkC2qU4Ww3xYf6n8u0Jb2iWQyGQ1p5fW3T\n-----END PRIVATE KEY-----\n",
        )
        .unwrap();
        let target = Target::Http {
            base: "https://gpu1:6450".into(),
            token: None,
        };
        let e = Client::new(target, Some(&key)).err().unwrap().to_string();
        assert!(
            e.starts_with(&format!("{} holds no PEM certificate", key.display())),
            "{e}"
        );
    }

    #[test]
    fn an_untrusted_certificate_asks_for_ca_cert_not_for_up() {
        let target = Target::Http {
            base: "https://gpu1:6450".into(),
            token: None,
        };
        let client = Client::new(target, None).unwrap();
        // What `tcp_call` keeps of rustls's refusal: the root cause.
        let refused = anyhow!("invalid peer certificate: UnknownIssuer");
        let said = client.unreachable(&refused).to_string();
        assert!(
            said.starts_with("the server at https://gpu1:6450 presents a certificate"),
            "{said}"
        );
        assert!(
            said.contains("--ca-cert FILE (or GPUSCHED_CA_CERT=FILE)"),
            "{said}"
        );
        assert!(!said.contains("gpusched up"), "{said}");
        // Anything else is a server that is not there.
        let said = client
            .unreachable(&anyhow!("connection refused"))
            .to_string();
        assert!(said.contains("start one with `gpusched up`"), "{said}");
    }

    #[test]
    fn a_ca_certificate_refusal_says_how_to_make_a_leaf() {
        let msg = certificate_advice(
            "https://gpu1:6450",
            "invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))",
        )
        .unwrap();
        assert!(msg.starts_with("the server at https://gpu1:6450 presents a CA certificate"));
        assert!(
            msg.contains("-addext basicConstraints=critical,CA:FALSE"),
            "{msg}"
        );
        assert!(msg.contains("--ca-cert"), "{msg}");
        assert_eq!(certificate_advice("x", "connection refused"), None);
    }
}
