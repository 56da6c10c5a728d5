//! Errors: what the gateway cannot start with ([`GatewayError`]) and what it answers a
//! request it cannot serve ([`Reject`]), worded for the caller with what to do, in the
//! error shape of the protocol the caller speaks.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// Why the gateway cannot start or go on.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("{0}")]
    Config(String),
    #[error("cannot listen on {addr}: {source}; choose a free address with --listen")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    #[error("the gateway's HTTP server stopped: {0}")]
    Serve(std::io::Error),
}

/// The error body a caller's client understands: the Open Inference Protocol's
/// `{"error": "..."}` or OpenAI's `{"error": {"message", "type", "code"}}`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Style {
    Oip,
    Openai,
}

/// A request the gateway answers itself with an error.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{message}")]
pub struct Reject {
    pub status: StatusCode,
    pub message: String,
    /// Seconds for `Retry-After` (shedding, holding, a model's full queue).
    pub retry_after: Option<u64>,
    pub style: Style,
}

impl Reject {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Reject {
            status,
            message: message.into(),
            retry_after: None,
            style: Style::Oip,
        }
    }

    /// 503 with `Retry-After`: the caller should come back (the gateway is full, or no
    /// replica came up in time).
    pub fn busy(message: impl Into<String>, retry_after: u64) -> Self {
        Reject {
            retry_after: Some(retry_after),
            ..Reject::new(StatusCode::SERVICE_UNAVAILABLE, message)
        }
    }

    pub fn styled(mut self, style: Style) -> Self {
        self.style = style;
        self
    }
}

impl IntoResponse for Reject {
    fn into_response(self) -> Response {
        let body = match self.style {
            Style::Oip => serde_json::json!({ "error": self.message }),
            Style::Openai => serde_json::json!({
                "error": {
                    "message": self.message,
                    "type": openai_type(self.status),
                    "param": null,
                    "code": self.status.as_u16(),
                }
            }),
        };
        let mut r = (self.status, axum::Json(body)).into_response();
        if let Some(s) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&s.to_string()) {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        r
    }
}

/// OpenAI's error `type` for a status, as its clients branch on it.
fn openai_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 404 | 413 | 422 => "invalid_request_error",
        429 | 503 => "server_overloaded",
        _ => "server_error",
    }
}

/// An error with its causes, `outer: inner: root` (wire's words, as the agent's).
pub use gpusched_wire::text::error_chain as chain;
