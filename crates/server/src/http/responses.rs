//! The error answers each operation can give, for the OpenAPI document. Every error is
//! an `ApiError` body; these sets are listed in the operations' `responses(...)` so the
//! document names every status a client can meet (schemathesis checks it does).

use std::collections::BTreeMap;

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::IntoResponses;

fn describe(code: u16) -> &'static str {
    match code {
        400 => "The request is malformed (body, path or query): the message names the field and what is allowed.",
        401 => "Over TCP: no bearer token, or a revoked or mistyped one. The `WWW-Authenticate` header says `Bearer`.",
        403 => "The caller may not do this: the role (admins only), the owner (another user's job), or the kind of credential (the agents' join token only allows the agent protocol, and people may not use it).",
        404 => "No such job, token, node or attempt (a job's logs of an attempt it has not had).",
        409 => "Well-formed, but the cluster as it is now cannot take it: no node could ever hold the job, the queue or a job named in `after`, `after_any` or `after_notok` does not exist or already ended so that the job could never start, the job is not pending (hold, release, update) or already held (hold) or not held (release), the priority is above the queue's maximum, a usage window that starts in the future, a service spec whose fields conflict with each other or with what a replica may be (the message names them), a service name taken or not matching the URL, or (agents) the server restarted and the node must register again.",
        413 => "The body is over the server's `--max-body` limit (64 MiB unless the operator set another).",
        503 => "Nothing was done; send the request again after `Retry-After` seconds: the server is shutting down or stopped leading, no server leads right now (a follower), it could not read or write its store (a database restarting), or (logs) the node that holds the job's output cannot be reached.",
        _ => "An error.",
    }
}

fn error_response(code: u16) -> Response {
    let mut b = ResponseBuilder::new().description(describe(code)).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ApiError")))
            .build(),
    );
    if code == 401 {
        b = b.header(
            "www-authenticate",
            HeaderBuilder::new()
                .schema(ObjectBuilder::new().schema_type(Type::String))
                .description(Some("`Bearer`"))
                .build(),
        );
    }
    if code == 503 {
        // Every 503 carries it (`error::retry_after_on_503`).
        b = b.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .minimum(Some(1)),
                )
                .description(Some("seconds to wait before sending the request again"))
                .build(),
        );
    }
    b.build()
}

fn errors(codes: &[u16]) -> BTreeMap<String, RefOr<Response>> {
    codes
        .iter()
        .map(|&c| (c.to_string(), RefOr::T(error_response(c))))
        .collect()
}

macro_rules! error_set {
    ($($(#[$doc:meta])* $name:ident = [$($code:literal),*];)*) => {$(
        $(#[$doc])*
        pub struct $name;
        impl IntoResponses for $name {
            fn responses() -> BTreeMap<String, RefOr<Response>> {
                errors(&[$($code),*])
            }
        }
    )*};
}

error_set! {
    /// A read that needs a caller and nothing else (401 unauthenticated, 403 for agents).
    Read = [401, 403, 503];
    /// A read with query parameters.
    ReadQuery = [400, 401, 403, 503];
    /// Usage: a window that starts in the future is well-formed but has nothing yet (409).
    ReadUsage = [400, 401, 403, 409, 503];
    /// A read of one job by id.
    ReadJob = [400, 401, 403, 404, 503];
    /// A job's logs: the node may be unreachable.
    ReadLogs = [400, 401, 403, 404, 503];
    /// A submission: a bad body, or a job the cluster cannot take.
    Submit = [400, 401, 403, 409, 413, 503];
    /// A change to several jobs named in the body (each id's own refusal is in the answer).
    ChangeJobs = [400, 401, 403, 413, 503];
    /// A change to one job by id.
    ChangeJob = [400, 401, 403, 404, 503];
    /// A change to one job by id that also depends on the job's state.
    ChangeJobState = [400, 401, 403, 404, 409, 503];
    /// A change to one job by id with a body, that depends on the job's state.
    UpdateJob = [400, 401, 403, 404, 409, 413, 503];
    /// An admin's change with a body.
    AdminBody = [400, 401, 403, 413, 503];
    /// An admin's change with a body that also depends on the server's state (a purge
    /// time in the future is 409).
    AdminBodyState = [400, 401, 403, 409, 413, 503];
    /// An admin's change to one token by id.
    AdminToken = [400, 401, 403, 404, 503];
    /// An admin's change to one node by name, with a body.
    AdminNodeBody = [400, 401, 403, 404, 413, 503];
    /// An admin's change to one node by name.
    AdminNode = [400, 401, 403, 404, 503];
    /// The agent protocol with a body.
    AgentBody = [400, 401, 403, 409, 413, 503];
    /// The agent protocol's poll.
    AgentPoll = [400, 401, 403, 409, 503];
    /// An agent opens a step's stream: no such step (404), one that ended (409).
    AgentStep = [400, 401, 403, 404, 409, 503];
    /// A read of one service by name.
    ReadService = [400, 401, 403, 404, 503];
    /// A change to one service by name.
    ChangeService = [400, 401, 403, 404, 503];
    /// A gateway's sync: a bad body.
    Sync = [400, 401, 403, 413, 503];
    /// An update of one service: a bad body, a service being deleted or a replica the
    /// cluster cannot take (409).
    UpdateService = [400, 401, 403, 404, 409, 413, 503];
}
