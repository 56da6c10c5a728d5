//! Errors as JSON bodies with the right status, and extractors that turn malformed
//! requests into 400s that say what to fix (instead of axum's plain-text rejections).

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use gpusched_wire::ApiError;
use serde::de::DeserializeOwned;

use crate::state::Fail;

/// An error response.
#[derive(Debug)]
pub struct ApiErr(pub StatusCode, pub String);

impl ApiErr {
    pub fn bad(msg: impl Into<String>) -> Self {
        ApiErr(StatusCode::BAD_REQUEST, msg.into())
    }
    pub fn gone() -> Self {
        ApiErr(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down; try again when it is back".into(),
        )
    }
}

impl From<Fail> for ApiErr {
    fn from(f: Fail) -> Self {
        match f {
            Fail::BadRequest(m) => ApiErr(StatusCode::BAD_REQUEST, m),
            Fail::NotFound(m) => ApiErr(StatusCode::NOT_FOUND, m),
            Fail::Conflict(m) => ApiErr(StatusCode::CONFLICT, m),
            Fail::Unavailable(m) => ApiErr(StatusCode::SERVICE_UNAVAILABLE, m),
            Fail::Forbidden(m) => ApiErr(StatusCode::FORBIDDEN, m),
        }
    }
}

impl IntoResponse for ApiErr {
    fn into_response(self) -> Response {
        (self.0, Json(ApiError { error: self.1 })).into_response()
    }
}

/// A JSON body parsed by serde_json, whose errors (syntax, unknown field, wrong type)
/// come back as 400 with serde's line/column message.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned> FromRequest<super::App> for JsonBody<T> {
    type Rejection = ApiErr;

    async fn from_request(req: Request, app: &super::App) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, app).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                return ApiErr(
                    e.status(),
                    format!(
                        "the request body is over this server's limit of {} bytes \
                         (--max-body): split the batch",
                        app.limits.max_body_bytes
                    ),
                );
            }
            ApiErr(
                e.status(),
                format!("could not read the request body: {}", e.body_text()),
            )
        })?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| ApiErr::bad(format!("invalid JSON body: {e}")))
    }
}

/// Query parameters, refused with a 400 that names the bad parameter.
pub struct QueryArgs<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for QueryArgs<T> {
    type Rejection = ApiErr;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| QueryArgs(q.0))
            .map_err(|e| ApiErr::bad(format!("bad query parameters: {}", e.body_text())))
    }
}

/// A job id from the path.
pub fn job_id(raw: &str) -> Result<u64, ApiErr> {
    raw.parse::<u64>()
        .map_err(|_| ApiErr::bad(format!("job id must be a whole number, got {raw:?}")))
}
