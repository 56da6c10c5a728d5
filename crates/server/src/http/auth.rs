//! Authentication middleware (who is calling) and the authorization checks handlers use
//! (may they do this). See `crate::auth` for the model.

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::IncomingStream;
use tokio::net::UnixListener;

use super::error::ApiErr;
use super::App;
use crate::auth::{local_caller, Caller};
use crate::bounded::Bounded;
use crate::state::Who;

/// Endpoints anyone may call: liveness, the API description, and the dashboard's page
/// and assets (they hold no data; the page asks the API with the user's token).
pub fn public(path: &str) -> bool {
    path == "/api/health" || path == "/api/openapi.json" || crate::web::is_dashboard(path)
}

/// The peer of a Unix-socket connection, as the kernel reports it.
#[derive(Clone, Copy, Debug)]
pub struct UdsPeer {
    pub uid: Option<u32>,
}

impl axum::extract::connect_info::Connected<IncomingStream<'_, Bounded<UnixListener>>> for UdsPeer {
    fn connect_info(stream: IncomingStream<'_, Bounded<UnixListener>>) -> Self {
        UdsPeer {
            uid: stream.io().get_ref().peer_cred().ok().map(|c| c.uid()),
        }
    }
}

fn unauthorized(msg: String) -> Response {
    let mut r = ApiErr(StatusCode::UNAUTHORIZED, msg).into_response();
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    r
}

/// TCP: a bearer token is required (a user/admin token, or the agents' join token).
pub async fn tcp(State(app): State<App>, mut req: Request, next: Next) -> Response {
    if public(req.uri().path()) || (app.metrics_public && super::metrics::is_metrics(&req)) {
        return next.run(req).await;
    }
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let Some(secret) = bearer else {
        if super::metrics::is_metrics(&req) {
            return unauthorized(super::metrics::NO_TOKEN.into());
        }
        return unauthorized(
            "this server needs a token over TCP: pass --token or set GPUSCHED_TOKEN (an admin \
             makes one with `gpusched token create USER`), or use the Unix socket on the \
             server's host"
                .into(),
        );
    };
    let caller = app
        .tokens
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .resolve(secret);
    match caller {
        Some(c) => {
            req.extensions_mut().insert(c);
            next.run(req).await
        }
        None => unauthorized(
            "the token is not valid: it was revoked or mistyped; ask an admin for a new one \
             (`gpusched token create USER`)"
                .into(),
        ),
    }
}

/// Unix socket: the peer's uid is the identity.
pub async fn uds(
    ConnectInfo(peer): ConnectInfo<UdsPeer>,
    mut req: Request,
    next: Next,
) -> Response {
    if public(req.uri().path()) {
        return next.run(req).await;
    }
    match peer.uid {
        Some(uid) => {
            req.extensions_mut().insert(local_caller(uid));
            next.run(req).await
        }
        None => unauthorized("the kernel did not say who is on the other end of the socket".into()),
    }
}

/// A person (user or admin), not an agent nor a metrics token.
pub fn person(c: &Caller) -> Result<Who, ApiErr> {
    match c {
        Caller::Person {
            role: gpusched_wire::Role::Metrics,
            user,
            ..
        } => Err(ApiErr(
            StatusCode::FORBIDDEN,
            format!(
                "{user}'s token has the metrics role: it reads GET /metrics and nothing \
                 else; use a user token for this"
            ),
        )),
        Caller::Person {
            role: gpusched_wire::Role::Gateway,
            user,
            ..
        } => Err(ApiErr(
            StatusCode::FORBIDDEN,
            format!(
                "{user}'s token has the gateway role: it syncs a gateway (POST \
                 /api/gateway/sync) and nothing else; use a user token for this"
            ),
        )),
        Caller::Person { user, role, .. } => Ok(Who {
            user: user.clone(),
            admin: *role == gpusched_wire::Role::Admin,
        }),
        Caller::Agent => Err(ApiErr(
            StatusCode::FORBIDDEN,
            "the join token only lets agents join; use a user token for this".into(),
        )),
    }
}

pub fn admin(c: &Caller) -> Result<Who, ApiErr> {
    let who = person(c)?;
    if !who.admin {
        return Err(ApiErr(
            StatusCode::FORBIDDEN,
            format!("only admins may do this; you are {} (user)", who.user),
        ));
    }
    Ok(who)
}

/// A gateway: a token of the gateway role, or an admin (root on the Unix socket runs
/// a gateway beside the server without a token).
pub fn gateway(c: &Caller) -> Result<String, ApiErr> {
    match c {
        Caller::Person {
            role: gpusched_wire::Role::Gateway | gpusched_wire::Role::Admin,
            user,
            ..
        } => Ok(user.clone()),
        _ => Err(ApiErr(
            StatusCode::FORBIDDEN,
            "only gateways sync: use a token of the gateway role (`gpusched token create \
             --role gateway NAME`) or an admin's"
                .into(),
        )),
    }
}

pub fn agent(c: &Caller) -> Result<(), ApiErr> {
    match c {
        Caller::Agent => Ok(()),
        Caller::Person { .. } => Err(ApiErr(
            StatusCode::FORBIDDEN,
            "only agents holding the join token may use the agent protocol".into(),
        )),
    }
}
