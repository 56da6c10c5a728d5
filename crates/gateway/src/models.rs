//! Which service serves a model, and the refusal naming the known models when none does.

use std::sync::Arc;

use axum::http::StatusCode;
use gpusched_wire::service::ServeProtocol;

use crate::error::Reject;
use crate::table::{Service, Snapshot};

/// The service serving `model` over `protocol`.
pub fn service_for(
    s: &Snapshot,
    model: &str,
    protocol: ServeProtocol,
) -> Result<Arc<Service>, Reject> {
    match s.models.get(model) {
        Some(svc) if svc.protocol == protocol => Ok(svc.clone()),
        Some(svc) => Err(Reject::new(
            StatusCode::NOT_FOUND,
            format!(
                "model {model:?} is served by service {} over {}; call it at {}",
                svc.name,
                name(svc.protocol),
                match svc.protocol {
                    ServeProtocol::Oip => "/v2/models/{name}/infer",
                    ServeProtocol::Openai => "/v1/completions or /v1/chat/completions",
                }
            ),
        )),
        None => Err(Reject::new(
            StatusCode::NOT_FOUND,
            format!(
                "unknown model {model:?}; this gateway serves {} over {}",
                known(s, protocol),
                name(protocol)
            ),
        )),
    }
}

fn name(p: ServeProtocol) -> &'static str {
    match p {
        ServeProtocol::Oip => "the Open Inference Protocol",
        ServeProtocol::Openai => "the OpenAI API",
    }
}

/// The models of one protocol, sorted, as a message lists them (at most 20).
pub fn known(s: &Snapshot, protocol: ServeProtocol) -> String {
    let mut names: Vec<&str> = s
        .models
        .iter()
        .filter(|(_, svc)| svc.protocol == protocol)
        .map(|(m, _)| m.as_str())
        .collect();
    names.sort_unstable();
    match names.len() {
        0 => "no model".into(),
        n if n > 20 => format!("{} and {} more", names[..20].join(", "), n - 20),
        _ => names.join(", "),
    }
}
