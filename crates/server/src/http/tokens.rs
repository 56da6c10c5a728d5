//! `/api/tokens` (admins) and `/api/whoami` (anyone authenticated).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use gpusched_wire::{TokenCreate, TokenCreated, TokenList, TokenView, WhoAmI};

use super::auth::{admin, person};
use super::error::{ApiErr, JsonBody};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// Issue a token for a user (admins only). The secret is in this answer only.
#[utoipa::path(post, path = "/api/tokens", operation_id = "create_token", tag = "tokens", request_body = TokenCreate,
    responses((status = 201, body = TokenCreated), super::responses::AdminBody))]
pub async fn create(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(req): JsonBody<TokenCreate>,
) -> Result<(StatusCode, Json<TokenCreated>), ApiErr> {
    let who = admin(&caller)?;
    let t = app.ask(|r| Cmd::CreateToken(req, who, r)).await?;
    Ok((StatusCode::CREATED, Json(t)))
}

/// Every token ever issued (without secrets; admins only).
#[utoipa::path(get, path = "/api/tokens", operation_id = "list_tokens", tag = "tokens",
    responses((status = 200, body = TokenList), super::responses::Read))]
pub async fn list(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<TokenList>, ApiErr> {
    admin(&caller)?;
    Ok(Json(app.ask(Cmd::ListTokens).await?))
}

/// Revoke a token at once (admins only).
#[utoipa::path(post, path = "/api/tokens/{id}/revoke", operation_id = "revoke_token", tag = "tokens", params(("id" = u64, Path)),
    responses((status = 200, body = TokenView), super::responses::AdminToken))]
pub async fn revoke(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<TokenView>, ApiErr> {
    let who = admin(&caller)?;
    let id = id
        .parse::<u64>()
        .map_err(|_| ApiErr::bad(format!("token id must be a whole number, got {id:?}")))?;
    Ok(Json(app.ask(|r| Cmd::RevokeToken(id, who, r)).await?))
}

/// How the server sees the caller.
#[utoipa::path(get, path = "/api/whoami", operation_id = "whoami", tag = "tokens",
    responses((status = 200, body = WhoAmI), super::responses::Read))]
pub async fn whoami(Extension(caller): Extension<Caller>) -> Result<Json<WhoAmI>, ApiErr> {
    person(&caller)?;
    match caller {
        Caller::Person { user, role, via } => Ok(Json(WhoAmI {
            user,
            role,
            via: via.to_string(),
        })),
        Caller::Agent => Err(ApiErr::bad("agents have no user")),
    }
}
