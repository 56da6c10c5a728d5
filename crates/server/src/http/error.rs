//! Errors as JSON bodies with the right status, and extractors that turn malformed
//! requests into 400s that say what to fix (instead of axum's plain-text rejections).

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
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
            "the server is shutting down or stopped leading; try again (a client given \
             several --server URLs finds the leader)"
                .into(),
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

/// Seconds a 503 asks a client to wait before trying again. Every cause of one passes
/// within seconds or is not helped by waiting longer: a store that restarts or fails over
/// (the round is refused and the state reloaded once it answers), an election, a server
/// stepping down or shutting down (another takes over), an overloaded inbox.
pub const RETRY_AFTER_S: u64 = 1;

/// Adds `Retry-After` to a 503 that has none: clients (the CLI, scripts, proxies) retry
/// what says when to, and nothing was done by a request answered 503.
pub async fn retry_after_on_503(mut r: Response) -> Response {
    if r.status() == StatusCode::SERVICE_UNAVAILABLE
        && !r.headers().contains_key(header::RETRY_AFTER)
    {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_S));
    }
    r
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
/// fraction or an exponent that leaves an integer (`2.0`, `15e2`) is an integer to JSON
/// Schema, so it is read as one where the plain parse wanted an integer.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiErr> {
    let first = match serde_json::from_slice(bytes) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let bad = |e: serde_json::Error| ApiErr::bad(format!("invalid JSON body: {e}"));
    if !first.is_data() {
        return Err(bad(first));
    }
    // Rewritten in the text, not after parsing: a float parse may round an integer
    // above 2^53, or even below it (serde_json's fast parser read 2242751653411077.0
    // as 2242751653411076.8).
    let Some(text) = integral_numbers_as_integers(bytes) else {
        return Err(bad(first));
    };
    // The first error keeps its line and column; the retry's would refer to new text.
    serde_json::from_slice(&text).map_err(|_| bad(first))
}

/// The JSON text with every number that is an integer written as one (`2.0` -> `2`,
/// `1.5e3` -> `1500`); `None` when there was none to rewrite. Strings are left alone.
fn integral_numbers_as_integers(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    let (mut i, mut changed) = (0, false);
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' {
            // Copy the string through its closing quote, escapes included.
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
            out.extend_from_slice(&bytes[start..i]);
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < bytes.len()
                && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            let token = &bytes[start..i];
            match as_integer(token) {
                Some(int) => {
                    out.extend_from_slice(int.as_bytes());
                    changed = true;
                }
                None => out.extend_from_slice(token),
            }
        } else {
            out.push(b);
            i += 1;
        }
    }
    changed.then_some(out)
}

/// A JSON number token with a fraction or exponent whose value is a whole number of at
/// most 20 digits, written as an integer; `None` for anything else (already an integer,
/// a real fraction, not a number).
fn as_integer(token: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(token).ok()?;
    let (neg, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(k) => (&rest[..k], rest[k + 1..].parse::<i32>().ok()?),
        None => (rest, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (frac.is_empty() && exp == 0) || int.is_empty() || !int.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // The digits, and where the decimal point falls in them after the exponent.
    let digits = format!("{int}{frac}");
    let point = int.len() as i64 + i64::from(exp);
    if point < 0 {
        return digits.bytes().all(|c| c == b'0').then(|| "0".to_string());
    }
    let point = point as usize;
    let (whole, rest) = if point >= digits.len() {
        (format!("{digits}{}", "0".repeat(point - digits.len())), "")
    } else {
        (digits[..point].to_string(), &digits[point..])
    };
    if !rest.bytes().all(|c| c == b'0') {
        return None;
    }
    let whole = whole.trim_start_matches('0');
    let whole = if whole.is_empty() { "0" } else { whole };
    if whole.len() > 20 {
        return None;
    }
    Some(if neg && whole != "0" {
        format!("-{whole}")
    } else {
        whole.to_string()
    })
}

#[cfg(test)]
mod integral_tests {
    use super::*;

    #[test]
    fn integral_numbers_become_integers_and_nothing_else_changes() {
        for (token, want) in [
            ("2.0", Some("2")),
            ("-3.00", Some("-3")),
            ("2242751653411077.0", Some("2242751653411077")),
            ("1.5e3", Some("1500")),
            ("15E+2", Some("1500")),
            ("150e-1", Some("15")),
            ("0.0", Some("0")),
            ("-0.0", Some("0")),
            ("2.5", None),
            ("1e-3", None),
            ("7", None),
            ("1e30", None),
        ] {
            assert_eq!(as_integer(token.as_bytes()).as_deref(), want, "{token}");
        }
        let text = br#"{"a":"2.0 \" 3.0","b":[1577.0,2.5],"c":1e3}"#;
        let out = integral_numbers_as_integers(text).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":"2.0 \" 3.0","b":[1577,2.5],"c":1000}"#
        );
        assert!(integral_numbers_as_integers(br#"{"a":[1,2]}"#).is_none());
    }

    #[test]
    fn a_submission_with_integral_floats_parses() {
        let v: gpusched_wire::JobSubmit = parse_json(
            br#"{"command":["x"],"priority":1577.0,"after":[2242751653411077.0],"walltime_s":6e1}"#,
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(v.priority, Some(1577));
        assert_eq!(v.after, vec![2242751653411077]);
        assert_eq!(v.walltime_s, Some(60));
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
