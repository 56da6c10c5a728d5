//! Identity: who calls, with which role, and the tokens that prove it over TCP.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What a caller may do. Anyone may read the queue; users submit and change their own
/// jobs; admins change anyone's and manage tokens. A metrics token only reads
/// `/metrics` (what a Prometheus server holds, so a leaked one reveals no job's output
/// and submits nothing). A gateway token only syncs with the server
/// (`POST /api/gateway/sync`: the services' endpoints for their load).
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Admin,
    Metrics,
    Gateway,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Admin => "admin",
            Role::Metrics => "metrics",
            Role::Gateway => "gateway",
        }
    }
}

/// `POST /api/tokens` (admins only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenCreate {
    /// 1-64 letters, digits, `.`, `_`, `-` or `@`.
    #[schema(pattern = r"^[A-Za-z0-9._@-]{1,64}$")]
    pub user: String,
    #[serde(default = "user_role")]
    pub role: Role,
}

fn user_role() -> Role {
    Role::User
}

/// A new token. The secret is shown here once; the server keeps only its hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TokenCreated {
    pub id: u64,
    pub user: String,
    pub role: Role,
    pub token: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TokenView {
    pub id: u64,
    pub user: String,
    pub role: Role,
    pub created_ms: u64,
    pub revoked: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TokenList {
    pub tokens: Vec<TokenView>,
}

/// `GET /api/whoami`: how the server sees the caller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WhoAmI {
    pub user: String,
    pub role: Role,
    /// `unix-socket` (peer credentials) or `token`.
    pub via: String,
}
