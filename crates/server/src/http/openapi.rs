//! The OpenAPI 3.1 document, generated from the handlers' annotations and the wire
//! types, so it cannot drift from the code.

use axum::Json;
use utoipa::OpenApi;

use super::limits::Shedding;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "gpusched",
        description = "GPU cluster scheduler: jobs, nodes, logs and the agent protocol."
    ),
    paths(
        super::health,
        super::jobs::submit,
        super::jobs::submit_batch,
        super::jobs::list,
        super::jobs::get_job,
        super::jobs::cancel,
        super::cancel::cancel_many,
        super::jobs::checkpoint,
        super::jobs::wait,
        super::jobs::logs,
        super::jobs::nodes,
        super::jobs::usage,
        super::jobs::queues,
        super::agent::register,
        super::agent::poll,
        super::agent::report,
        super::tokens::create,
        super::tokens::list,
        super::tokens::revoke,
        super::tokens::whoami,
    ),
    modifiers(&BearerAuth, &Shedding),
    security(("bearer" = []))
)]
pub struct ApiDoc;

/// Declares the bearer-token scheme (the Unix socket needs none).
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

#[utoipa::path(get, path = "/api/openapi.json", responses((status = 200, description = "this document")))]
pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}
