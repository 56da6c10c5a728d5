//! Load shedding before a request reaches the state task: 503 with `Retry-After` when
//! the task's inbox is too deep, and 429 with `Retry-After` for a user submitting faster
//! than the server's rate. The agent protocol and the public endpoints are never shed:
//! shedding heartbeats would turn an overload into lost nodes.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiErr;
use super::App;
use crate::auth::Caller;

/// One user's submissions: a token bucket refilled at the sustained rate.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Every user's bucket.
#[derive(Default)]
pub struct SubmitRates {
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl SubmitRates {
    /// Takes one submission for `user` at `now`; `Err(seconds)` to wait when the user is
    /// over the rate.
    pub fn take(&self, user: &str, now: Instant, rate: f64, burst: f64) -> Result<(), u64> {
        if rate <= 0.0 {
            return Ok(());
        }
        let burst = burst.max(1.0);
        let mut all = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let b = all.entry(user.to_string()).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * rate).min(burst);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            return Ok(());
        }
        Err(((1.0 - b.tokens) / rate).ceil().max(1.0) as u64)
    }
}

fn busy(code: StatusCode, msg: String, retry_after_s: u64) -> Response {
    let mut r = ApiErr(code, msg).into_response();
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_s));
    r
}

fn is_submit(req: &Request) -> bool {
    req.method() == Method::POST
        && matches!(
            req.uri().path(),
            "/api/jobs" | "/api/jobs/batch" | "/api/workflows"
        )
}

/// Runs after authentication (the caller is known).
pub async fn guard(State(app): State<App>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path.starts_with("/api/agent/") || super::auth::public(path) {
        return next.run(req).await;
    }
    let l = &app.limits;
    let waiting = app.tx.max_capacity() - app.tx.capacity();
    if waiting > l.max_inbox {
        return busy(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the server is overloaded: {waiting} requests wait for its state task, more \
                 than its limit of {} (--max-inbox); retry in a second",
                l.max_inbox
            ),
            1,
        );
    }
    if is_submit(&req) {
        if let Some(Caller::Person { user, .. }) = req.extensions().get::<Caller>() {
            if let Err(wait) = app
                .rates
                .take(user, Instant::now(), l.submit_rate, l.submit_burst)
            {
                return busy(
                    StatusCode::TOO_MANY_REQUESTS,
                    format!(
                        "{user} submits faster than this server's limit of {} submissions \
                         per second (--submit-rate, bursts of {} with --submit-burst); \
                         retry in {wait} s, or submit many jobs in one batch",
                        l.submit_rate, l.submit_burst
                    ),
                    wait,
                );
            }
        }
    }
    next.run(req).await
}

/// Documents this module's answers in the OpenAPI document: 503 (overload) on every
/// operation it guards and 429 on submissions, each with `Retry-After`.
pub struct Shedding;

impl utoipa::Modify for Shedding {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::content::ContentBuilder;
        use utoipa::openapi::header::HeaderBuilder;
        use utoipa::openapi::response::ResponseBuilder;
        use utoipa::openapi::schema::{ObjectBuilder, Ref, Type};
        let busy = |what: &str| {
            ResponseBuilder::new()
                .description(what)
                .header(
                    "Retry-After",
                    HeaderBuilder::new()
                        .schema(ObjectBuilder::new().schema_type(Type::Integer))
                        .description(Some("seconds to wait before trying again"))
                        .build(),
                )
                .content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name("ApiError")))
                        .build(),
                )
                .build()
        };
        for (path, item) in doc.paths.paths.iter_mut() {
            if path.starts_with("/api/agent/") || super::auth::public(path) {
                continue;
            }
            let submit = matches!(
                path.as_str(),
                "/api/jobs" | "/api/jobs/batch" | "/api/workflows"
            );
            let ops = [
                (false, &mut item.get),
                (true, &mut item.post),
                (false, &mut item.patch),
            ];
            for (post, op) in ops {
                let Some(op) = op.as_mut() else { continue };
                // Replaces the plain 503 of `responses.rs`: the same answer, now also for
                // overload, with the header that says when to come back.
                op.responses.responses.insert(
                    "503".into(),
                    busy(
                        "Nothing was done; send the request again after Retry-After \
                         seconds: the server is overloaded (--max-inbox), shutting down or \
                         stepping down, could not read or write its store (a database \
                         restarting, a full disk), or (logs) the node that holds the job's \
                         output cannot be reached.",
                    )
                    .into(),
                );
                if post && submit {
                    op.responses.responses.insert(
                        "429".into(),
                        busy("this user submits faster than --submit-rate allows; retry after Retry-After").into(),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_user_over_the_rate_waits_and_others_do_not() {
        let r = SubmitRates::default();
        let t0 = Instant::now();
        // A burst of 2 at 1/s: two at once, the third waits a second.
        assert_eq!(r.take("alice", t0, 1.0, 2.0), Ok(()));
        assert_eq!(r.take("alice", t0, 1.0, 2.0), Ok(()));
        assert_eq!(r.take("alice", t0, 1.0, 2.0), Err(1));
        assert_eq!(r.take("bob", t0, 1.0, 2.0), Ok(()));
        // Refilled after a second.
        let t1 = t0 + Duration::from_millis(1000);
        assert_eq!(r.take("alice", t1, 1.0, 2.0), Ok(()));
        assert_eq!(r.take("alice", t1, 1.0, 2.0), Err(1));
        // A slow rate asks for a longer wait.
        assert_eq!(r.take("carol", t0, 0.1, 1.0), Ok(()));
        assert_eq!(r.take("carol", t0, 0.1, 1.0), Err(10));
        // Rate 0: no limit.
        for _ in 0..100 {
            assert_eq!(r.take("dave", t0, 0.0, 1.0), Ok(()));
        }
    }
}
