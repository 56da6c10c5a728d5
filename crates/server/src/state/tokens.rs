//! Issuing, listing and revoking API tokens (admins only; checked by the caller).

use gpusched_store::TokenRecord;
use gpusched_wire::{TokenCreate, TokenCreated, TokenList, TokenView};

use gpusched_wire::history::AuditAction;

use super::{Fail, State, Who};
use crate::auth;

impl State {
    pub fn create_token(&mut self, req: TokenCreate, who: &Who) -> Result<TokenCreated, Fail> {
        super::validate::check_user_name(&req.user).map_err(Fail::BadRequest)?;
        let secret = auth::new_secret("gst_")
            .map_err(|e| Fail::Unavailable(format!("cannot make a token now: {e:#}")))?;
        let id = self.tokens.keys().next_back().map_or(1, |k| k + 1);
        self.tokens.insert(
            id,
            TokenRecord {
                id,
                user: req.user.clone(),
                role: req.role,
                hash: auth::hash(&secret),
                created_ms: self.now.ms,
                revoked: false,
            },
        );
        self.audit(
            &who.user,
            AuditAction::TokenCreate,
            req.user.clone(),
            format!("token {id}, role {}", req.role.name()),
        );
        Ok(TokenCreated {
            id,
            user: req.user,
            role: req.role,
            token: secret,
        })
    }

    pub fn list_tokens(&self) -> TokenList {
        TokenList {
            tokens: self
                .tokens
                .values()
                .map(|t| TokenView {
                    id: t.id,
                    user: t.user.clone(),
                    role: t.role,
                    created_ms: t.created_ms,
                    revoked: t.revoked,
                })
                .collect(),
        }
    }

    pub fn revoke_token(&mut self, id: u64, who: &Who) -> Result<TokenView, Fail> {
        let revoked = self.tokens.get(&id).map(|t| t.revoked).ok_or_else(|| {
            Fail::NotFound(format!(
                "no token with id {id}; `gpusched token list` shows them"
            ))
        })?;
        // Revoking a revoked token changes nothing, so writes nothing.
        if !revoked {
            let t = self.tokens.get_mut(&id).expect("looked up above");
            t.revoked = true;
            let detail = format!("of {}, role {}", t.user, t.role.name());
            self.audit(
                &who.user,
                AuditAction::TokenRevoke,
                format!("token {id}"),
                detail,
            );
        }
        let t = &self.tokens[&id];
        Ok(TokenView {
            id,
            user: t.user.clone(),
            role: t.role,
            created_ms: t.created_ms,
            revoked: true,
        })
    }
}
