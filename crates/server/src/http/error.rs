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
        let RawBody(bytes) = RawBody::from_request(req, app).await?;
        parse_json(&bytes).map(JsonBody)
    }
}

/// The body's bytes, read whole; a body over the limit is a JSON 413 like every error,
/// naming the limit and the flag that sets it.
pub struct RawBody(pub Bytes);

impl FromRequest<super::App> for RawBody {
    type Rejection = ApiErr;

    async fn from_request(req: Request, app: &super::App) -> Result<Self, Self::Rejection> {
        Bytes::from_request(req, app)
            .await
            .map(RawBody)
            .map_err(|e| {
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
            })
    }
}

/// A JSON body as `T`, or a 400 with serde's message. A number written with a zero
/// fraction (`2.0`) is an integer to JSON Schema, so it is read as one where the
/// plain parse wanted an integer.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiErr> {
    let first = match serde_json::from_slice(bytes) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let bad = |e: serde_json::Error| ApiErr::bad(format!("invalid JSON body: {e}"));
    if !first.is_data() {
        return Err(bad(first));
    }
    let mut value: serde_json::Value = serde_json::from_slice(bytes).map_err(bad)?;
    if !integral_floats_to_integers(&mut value) {
        return Err(bad(first));
    }
    // The first error keeps its line and column; the retry's would have none.
    serde_json::from_value(value).map_err(|_| bad(first))
}

/// Rewrites `2.0` as `2` throughout; whether anything changed.
fn integral_floats_to_integers(v: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            let whole = f.fract() == 0.0;
            if whole && (0.0..18_446_744_073_709_551_616.0).contains(&f) {
                *v = Value::from(f as u64);
                true
            } else if whole && f < 0.0 && f >= i64::MIN as f64 {
                *v = Value::from(f as i64);
                true
            } else {
                false
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |c, x| integral_floats_to_integers(x) | c),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |c, x| integral_floats_to_integers(x) | c),
        _ => false,
    }
}

/// Query parameters, refused with a 400 that names the bad parameter.
pub struct QueryArgs<T>(pub T);

/// Query parameters as `T` (the same as [`QueryArgs`], for a handler that checks the
/// caller first).
pub fn parse_query<T: DeserializeOwned>(uri: &axum::http::Uri) -> Result<T, ApiErr> {
    axum::extract::Query::<T>::try_from_uri(uri)
        .map(|q| q.0)
        .map_err(|e| ApiErr::bad(format!("bad query parameters: {}", e.body_text())))
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for QueryArgs<T> {
    type Rejection = ApiErr;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parse_query(&parts.uri).map(QueryArgs)
    }
}

/// A job id from the path.
pub fn job_id(raw: &str) -> Result<u64, ApiErr> {
    raw.parse::<u64>()
        .map_err(|_| ApiErr::bad(format!("job id must be a whole number, got {raw:?}")))
}

#[cfg(test)]
mod tests {
    use gpusched_wire::JobSubmit;

    use super::parse_json;

    #[test]
    fn a_whole_number_with_a_zero_fraction_is_an_integer() {
        let j: JobSubmit = parse_json(br#"{"command": ["x"], "gpus": 2.0, "after": [3.0]}"#)
            .unwrap_or_else(|e| panic!("{}", e.1));
        assert_eq!((j.gpus, j.after), (Some(2), vec![3]));
        let e = parse_json::<JobSubmit>(br#"{"command": ["x"], "gpus": 2.5}"#).unwrap_err();
        assert!(e.1.contains("line 1 column"), "{}", e.1);
        let e = parse_json::<JobSubmit>(br#"{"command": ["x"], "gpus": -1.0}"#).unwrap_err();
        assert!(e.1.contains("-1"), "{}", e.1);
    }
}
