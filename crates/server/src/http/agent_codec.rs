//! The agent messages' encoding, chosen per request (issue 39 item 2): MessagePack
//! (`gpusched_wire::agent::MSGPACK`) where the agent asks for it (`Accept` on a poll,
//! `Content-Type` on a report), JSON otherwise, so agents from before it and tools
//! (curl, the OpenAPI clients) keep speaking JSON.

use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use gpusched_wire::agent::{from_msgpack, to_msgpack, MSGPACK};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::error::{parse_json, ApiErr};

fn names_msgpack(v: Option<&HeaderValue>) -> bool {
    v.and_then(|v| v.to_str().ok())
        .is_some_and(gpusched_wire::agent::names_msgpack)
}

/// Whether the request's `Accept` names MessagePack.
pub fn accepts_msgpack(headers: &HeaderMap) -> bool {
    names_msgpack(headers.get(header::ACCEPT))
}

/// The body read as its `Content-Type` says: MessagePack, else JSON.
pub fn parse_body<T: DeserializeOwned>(headers: &HeaderMap, body: &[u8]) -> Result<T, ApiErr> {
    if names_msgpack(headers.get(header::CONTENT_TYPE)) {
        from_msgpack(body).map_err(|e| ApiErr::bad(format!("invalid MessagePack body: {e}")))
    } else {
        parse_json(body)
    }
}

/// `value` as the response body, in MessagePack when `msgpack`, else JSON.
pub fn answer<T: Serialize>(value: &T, msgpack: bool) -> Response {
    if !msgpack {
        return axum::Json(value).into_response();
    }
    match to_msgpack(value) {
        Ok(bytes) => ([(header::CONTENT_TYPE, MSGPACK)], bytes).into_response(),
        // Only a type that cannot be written (none of the agent messages): say so in
        // JSON, which writes everything MessagePack does.
        Err(e) => {
            tracing::error!("could not write an agent answer as MessagePack: {e}");
            axum::Json(value).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encoding_follows_the_headers() {
        let mut h = HeaderMap::new();
        assert!(!accepts_msgpack(&h));
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, application/msgpack"),
        );
        assert!(accepts_msgpack(&h));
        let body = to_msgpack(&gpusched_wire::AttemptRef { job: 3, attempt: 2 }).unwrap();
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(MSGPACK));
        let a: gpusched_wire::AttemptRef = parse_body(&h, &body).unwrap();
        assert_eq!((a.job, a.attempt), (3, 2));
        // A JSON body under a MessagePack type is refused with what was wrong.
        let err = parse_body::<gpusched_wire::AttemptRef>(&h, br#"{"job":3}"#).unwrap_err();
        assert!(err.1.contains("invalid MessagePack body"), "{}", err.1);
        let a: gpusched_wire::AttemptRef =
            parse_body(&HeaderMap::new(), br#"{"job":3,"attempt":2}"#).unwrap();
        assert_eq!(a.job, 3);
    }
}
