//! `/api/agent`: the node agents' side of the protocol (see gpusched_wire::agent).

use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::{Extension, Json};
use gpusched_wire::agent::{
    protocol_refusal, AGENT_PROTOCOL, PROTOCOL_HEADER, PROTOCOL_WITHOUT_HEADER,
};
use gpusched_wire::{Desired, PollQuery, Register, Registered, Report, ReportAck};

use super::agent_codec::{accepts_msgpack, answer, parse_body};
use super::auth::agent;
use super::error::{parse_json, parse_query, ApiErr, RawBody};
use super::peer::TcpPeer;
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;
use crate::state::PollResult;

/// The agent protocol a request names in its header (absent: protocol 1, the agents
/// from before the header).
fn agent_protocol(headers: &HeaderMap) -> Result<u32, ApiErr> {
    match headers.get(PROTOCOL_HEADER) {
        None => Ok(PROTOCOL_WITHOUT_HEADER),
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| {
                ApiErr::bad(format!(
                    "the {PROTOCOL_HEADER} header must be a protocol number (this server \
                     speaks {AGENT_PROTOCOL})"
                ))
            }),
    }
}

/// An agent joins (or re-joins) and reconciles what it runs with what the server knows.
/// An agent of a protocol the server cannot serve is refused (409) with both versions
/// and what to upgrade.
#[utoipa::path(post, path = "/api/agent/register", operation_id = "agent_register", tag = "agent", request_body = Register,
    params(("x-gpusched-agent-protocol" = Option<u32>, Header,
        description = "the agent protocol the agent speaks (absent: 1, agents from before \
            the header); a server accepts its own and the one before")),
    responses((status = 200, body = Registered), super::responses::AgentBody))]
pub async fn register(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    peer: Option<Extension<ConnectInfo<TcpPeer>>>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<Json<Registered>, ApiErr> {
    // Who may speak the protocol is settled before the body is read.
    agent(&caller)?;
    let protocol = agent_protocol(&headers)?;
    let mut reg: Register = parse_json(&body)?;
    if let Some(why) = protocol_refusal(&reg.node, protocol, env!("CARGO_PKG_VERSION")) {
        tracing::warn!(node = %reg.node, protocol, "agent refused: {why}");
        return Err(ApiErr(StatusCode::CONFLICT, why));
    }
    if protocol < AGENT_PROTOCOL {
        tracing::warn!(
            node = %reg.node,
            protocol,
            "an agent of the previous protocol registered; it works with this server: \
             upgrade it to this release"
        );
    }
    // An agent that says nothing of its address is reached where it connected from
    // (MASTER_ADDR, hostfiles); over the Unix socket there is no address to take.
    if reg.advertise_addr.is_none() {
        reg.advertise_addr = peer.map(|Extension(ConnectInfo(TcpPeer(a)))| a.ip().to_string());
    }
    Ok(Json(
        app.ask(|r| Cmd::Register(Box::new(reg), protocol, r))
            .await?,
    ))
}

/// Long-poll for the node's desired state; also the node's heartbeat.
#[utoipa::path(get, path = "/api/agent/poll", operation_id = "agent_poll", tag = "agent", params(PollQuery),
    responses((status = 200, body = Desired), super::responses::AgentPoll))]
pub async fn poll(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiErr> {
    agent(&caller)?;
    let q: PollQuery = parse_query(&uri)?;
    let msgpack = accepts_msgpack(&headers);
    let q2 = q.clone();
    match app.ask(|r| Cmd::Poll(q2, false, r)).await? {
        PollResult::Ready(d) => Ok(answer(&d, msgpack)),
        PollResult::Wait(mut rx) => {
            // Woken by a change of the node's generation, or by the poll timeout.
            let _ = tokio::time::timeout(app.poll_wait, rx.changed()).await;
            match app.ask(|r| Cmd::Poll(q, true, r)).await? {
                PollResult::Ready(d) => Ok(answer(&d, msgpack)),
                PollResult::Wait(_) => Err(ApiErr::gone()),
            }
        }
    }
}

/// What happened on the node: attempts started and ended. Answered once durable.
#[utoipa::path(post, path = "/api/agent/report", operation_id = "agent_report", tag = "agent", request_body = Report,
    responses((status = 200, body = ReportAck), super::responses::AgentBody))]
pub async fn report(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<Json<ReportAck>, ApiErr> {
    agent(&caller)?;
    let rep: Report = parse_body(&headers, &body)?;
    app.ask(|r| Cmd::Report(rep, r)).await?;
    Ok(Json(ReportAck { ok: true }))
}
