//! `GET /api/accounts`: the account tree with shares, decayed usage and each user's
//! fair-share factor (docs/accounts.md; Slurm's `sshare -l`).

use axum::extract::State;
use axum::{Extension, Json};
use gpusched_wire::AccountList;

use super::auth::person;
use super::error::ApiErr;
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// The account tree, depth first and best first among siblings, with each user's rank
/// and fair-share factor. Under `--private-jobs` a user sees only their own rows.
#[utoipa::path(get, path = "/api/accounts", operation_id = "list_accounts", tag = "accounts",
    responses((status = 200, body = AccountList), super::responses::Read))]
pub async fn list(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<AccountList>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Accounts(who, r)).await?))
}
