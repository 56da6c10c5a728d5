//! Who is calling.
//!
//! - Over the Unix socket the kernel says who the peer is (SO_PEERCRED): root and the
//!   user the server runs as are admins, everyone else a user under their login name.
//!   Nothing to manage on one box.
//! - Over TCP a bearer token: a user or admin token issued by an admin, or the agents'
//!   join token, which allows the agent protocol and nothing else.
//!
//! Secrets are 32 random bytes; only their SHA-256 is stored, so a stolen database does
//! not hold working tokens. (A slow password hash buys nothing for random secrets.)

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::{Arc, RwLock};

use anyhow::Context;
use gpusched_store::TokenRecord;
use gpusched_wire::Role;
use sha2::{Digest, Sha256};

/// The authenticated caller of one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    Person {
        user: String,
        role: Role,
        via: &'static str,
    },
    /// An agent holding the join token.
    Agent,
}

/// The live token table, read on every TCP request, rebuilt by the state task after it
/// commits a change.
#[derive(Default)]
pub struct TokenTable {
    by_hash: HashMap<String, (String, Role)>,
    join_hash: String,
}

pub type SharedTokens = Arc<RwLock<TokenTable>>;

impl TokenTable {
    pub fn new(join_hash: String) -> Self {
        TokenTable {
            by_hash: HashMap::new(),
            join_hash,
        }
    }

    pub fn replace(&mut self, tokens: &[TokenRecord]) {
        self.by_hash = tokens
            .iter()
            .filter(|t| !t.revoked)
            .map(|t| (t.hash.clone(), (t.user.clone(), t.role)))
            .collect();
    }

    /// The caller a bearer secret stands for, if any.
    pub fn resolve(&self, secret: &str) -> Option<Caller> {
        let h = hash(secret);
        if h == self.join_hash {
            return Some(Caller::Agent);
        }
        self.by_hash.get(&h).map(|(user, role)| Caller::Person {
            user: user.clone(),
            role: *role,
            via: "token",
        })
    }
}

/// Lower-case hex SHA-256. Every authenticated request hashes its bearer token: a
/// `format!` per byte cost 28 k instructions a call, ten times the digest itself
/// (docs/benchmarks-log.md (zb)).
pub fn hash(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A new random secret with a recognisable prefix (`gst_` user/admin tokens, `gsj_` the
/// join token) so a leaked one is easy to find in logs and configs.
pub fn new_secret(prefix: &str) -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| anyhow::anyhow!("the OS random generator failed: {e}"))?;
    Ok(format!("{prefix}{}", hex::encode(bytes)))
}

/// Reads the agents' join token from `path`, creating it (mode 0600) on first start.
pub fn load_or_create_join_token(path: &Path) -> anyhow::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(s) if !s.trim().is_empty() => return Ok(s.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
    let secret = new_secret("gsj_")?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write the join token to {}", path.display()))?;
    writeln!(f, "{secret}")?;
    f.sync_all()?;
    Ok(secret)
}

/// The identity of a local peer by uid: admins are root and the server's own user.
pub fn local_caller(uid: u32) -> Caller {
    let me = nix::unistd::geteuid().as_raw();
    let role = if uid == 0 || uid == me {
        Role::Admin
    } else {
        Role::User
    };
    let user = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| format!("uid{uid}"));
    Caller::Person {
        user,
        role,
        via: "unix-socket",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_resolve_by_hash_and_revoked_ones_do_not() {
        let mut t = TokenTable::new(hash("gsj_join"));
        let rec = |id, secret: &str, revoked| TokenRecord {
            id,
            user: "alice".into(),
            role: Role::User,
            hash: hash(secret),
            created_ms: 0,
            revoked,
        };
        t.replace(&[rec(1, "gst_a", false), rec(2, "gst_b", true)]);
        assert!(
            matches!(t.resolve("gst_a"), Some(Caller::Person { ref user, role: Role::User, .. }) if user == "alice")
        );
        assert_eq!(t.resolve("gst_b"), None);
        assert_eq!(t.resolve("gst_nope"), None);
        assert_eq!(t.resolve("gsj_join"), Some(Caller::Agent));
    }

    #[test]
    fn token_hashes_are_lower_case_hex_sha256_as_stored() {
        // Stored tokens were hashed this way: a change of case or encoding would lock
        // every user out. FIPS 180-2's test vector for "abc".
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn secrets_are_random_and_prefixed() {
        let (a, b) = (new_secret("gst_").unwrap(), new_secret("gst_").unwrap());
        assert!(a.starts_with("gst_") && a.len() == 4 + 64);
        assert_ne!(a, b);
    }

    #[test]
    fn root_is_an_admin_locally() {
        assert!(matches!(
            local_caller(0),
            Caller::Person {
                role: Role::Admin,
                ..
            }
        ));
    }
}
