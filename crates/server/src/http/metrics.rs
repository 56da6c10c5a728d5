//! `GET /metrics`: the Prometheus exposition (see `crate::metrics`), for admins and
//! tokens of the metrics role, or anyone under `--metrics-public`.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use gpusched_wire::Role;

use super::error::ApiErr;
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;
use crate::metrics::{render, Format};

pub const PATH: &str = "/metrics";

/// The 401 of a scrape without a token (over TCP).
pub const NO_TOKEN: &str = "GET /metrics needs a token with the metrics role over TCP: an \
    admin makes one with `gpusched token create prometheus --role metrics` and Prometheus \
    sends it as `authorization: {credentials: TOKEN}` in its scrape config; or start the \
    server with --metrics-public to serve metrics to anyone";

pub fn is_metrics(req: &Request) -> bool {
    req.uri().path() == PATH
}

/// Who may read the metrics: admins and metrics tokens (users and agents may not: the
/// series name every job's holder and node).
pub fn may_read(caller: Option<&Caller>) -> Result<(), ApiErr> {
    match caller {
        Some(Caller::Person {
            role: Role::Admin | Role::Metrics,
            ..
        }) => Ok(()),
        Some(Caller::Person { user, role, .. }) => Err(ApiErr(
            StatusCode::FORBIDDEN,
            format!(
                "GET /metrics is for admins and tokens of the metrics role; you are {user} \
                 ({}). An admin makes a metrics token with `gpusched token create \
                 prometheus --role metrics`, or serves metrics to anyone with `gpusched \
                 server --metrics-public`",
                role.name()
            ),
        )),
        Some(Caller::Agent) => Err(ApiErr(
            StatusCode::FORBIDDEN,
            "the join token only lets agents join; scrape /metrics with a token of the \
             metrics role (`gpusched token create prometheus --role metrics`)"
                .into(),
        )),
        None => Err(ApiErr(StatusCode::UNAUTHORIZED, NO_TOKEN.into())),
    }
}

/// The exposition, in OpenMetrics when the scraper asks for it (Prometheus does), else
/// in Prometheus's text format 0.0.4.
pub async fn metrics(
    State(app): State<App>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
) -> Result<Response, ApiErr> {
    if !app.metrics_public {
        may_read(caller.as_ref().map(|Extension(c)| c))?;
    }
    let view = app.ask(Cmd::Metrics).await?;
    let format = Format::from_accept(
        headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or(""),
    );
    // Rendered here, not in the state task: a scrape costs the state one copy of its
    // nodes and queues, and one count of its jobs.
    let body = render(&view, format).map_err(|e| {
        ApiErr(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the metrics could not be written ({e}); this is a bug, please report it"),
        )
    })?;
    Ok(([(header::CONTENT_TYPE, format.content_type())], body).into_response())
}
