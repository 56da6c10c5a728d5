//! `POST /api/jobs/{id}/steps` (a person starts a step in a running job and streams it)
//! and `GET /api/agent/steps/{id}/{step}` (an agent opens the stream of a step its
//! node runs). Both answer `101 Switching Protocols` to an `Upgrade: gpusched-step`
//! request, and the connection then carries step frames (`gpusched_wire::step`)
//! spliced by `hub.rs`. Every refusal comes before the upgrade, as a JSON error.

pub mod hub;

use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use gpusched_wire::step::{StepRequest, STEP_UPGRADE};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;

use super::auth::{agent, person};
use super::error::{job_id, parse_json, parse_query, ApiErr, RawBody};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// The way to the switched connection, when the request asks to switch to the step
/// protocol (checked by the handlers after the caller's authorization, so a caller
/// without the right gets 403 whatever it sent).
pub struct Upgrading(Option<OnUpgrade>);

impl<S: Send + Sync> FromRequestParts<S> for Upgrading {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        _: &S,
    ) -> Result<Self, std::convert::Infallible> {
        let asks = parts
            .headers
            .get(header::UPGRADE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case(STEP_UPGRADE));
        Ok(Upgrading(
            asks.then(|| parts.extensions.remove::<OnUpgrade>())
                .flatten(),
        ))
    }
}

impl Upgrading {
    fn required(self) -> Result<OnUpgrade, ApiErr> {
        self.0.ok_or_else(|| {
            ApiErr::bad(format!(
                "this route streams a step: send it as an HTTP/1.1 request with `Connection: \
                 upgrade` and `Upgrade: {STEP_UPGRADE}` (gpusched run does)"
            ))
        })
    }
}

fn switching() -> Response {
    (
        StatusCode::SWITCHING_PROTOCOLS,
        [
            (header::CONNECTION, "upgrade"),
            (header::UPGRADE, STEP_UPGRADE),
        ],
    )
        .into_response()
}

/// Runs a step in a running job of the caller's (an admin: anyone's), on its nodes
/// (the first `nodes`), and streams it: the answer is `101`, then step frames both
/// ways (docs/interactive.md).
#[utoipa::path(post, path = "/api/jobs/{id}/steps", operation_id = "run_step", tag = "jobs",
    params(("id" = u64, Path),
        ("Upgrade" = String, Header, description = "`gpusched-step`")),
    request_body = StepRequest,
    responses((status = 101, description = "the stream of the step's frames follows"),
        super::responses::UpdateJob))]
pub async fn start(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    upgrading: Upgrading,
    RawBody(body): RawBody,
) -> Result<Response, ApiErr> {
    let who = person(&caller)?;
    let id = job_id(&id)?;
    let req: StepRequest = parse_json(&body)?;
    let on = upgrading.required()?;
    let started = app.ask(|r| Cmd::StartStep(id, req, who, r)).await?;
    let key = (id, started.step);
    let up = app.steps.open(key);
    let app2 = app.clone();
    tokio::spawn(async move {
        match on.await {
            Ok(io) => hub::serve_client(app2, key, started, up, TokioIo::new(io)).await,
            Err(e) => {
                app2.steps.close(key);
                let end = crate::state::steps::StepEnd {
                    state: gpusched_wire::step::StepState::Cancelled,
                    exit_code: None,
                    reason: Some(format!("the client's connection did not switch ({e})")),
                };
                let _ = app2.ask(|r| Cmd::EndStep(key.0, key.1, end, r)).await;
            }
        }
    });
    Ok(switching())
}

#[derive(serde::Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AttachQuery {
    /// The agent's node.
    pub node: String,
}

/// An agent opens the stream of a step its node runs (`Desired::steps`); the answer is
/// `101`, then step frames both ways.
#[utoipa::path(get, path = "/api/agent/steps/{id}/{step}", operation_id = "agent_step_stream", tag = "agent",
    params(("id" = u64, Path), ("step" = u32, Path), AttachQuery,
        ("Upgrade" = String, Header, description = "`gpusched-step`")),
    responses((status = 101, description = "the stream of the step's frames follows"),
        super::responses::AgentStep))]
pub async fn attach(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path((id, step)): Path<(String, String)>,
    uri: Uri,
    upgrading: Upgrading,
) -> Result<Response, ApiErr> {
    agent(&caller)?;
    let on = upgrading.required()?;
    let id = job_id(&id)?;
    let step: u32 = step
        .parse()
        .map_err(|_| ApiErr::bad(format!("step {step:?} is not a step number")))?;
    let q: AttachQuery = parse_query(&uri)?;
    let node = q.node;
    let n2 = node.clone();
    app.ask(|r| Cmd::StepAttach(id, step, n2, r)).await?;
    let app2 = app.clone();
    tokio::spawn(async move {
        if let Ok(io) = on.await {
            hub::serve_agent(app2, (id, step), node, TokioIo::new(io)).await;
        }
    });
    Ok(switching())
}
