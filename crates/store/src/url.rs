//! Where the store lives: `--store URL`. SQLite (a file, the embedded default) or
//! PostgreSQL (a server the operator runs, for several gpusched servers).

use std::fmt;
use std::path::PathBuf;

/// A parsed `--store` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreUrl {
    /// `sqlite:PATH` (or `sqlite://PATH`): the database file.
    Sqlite(PathBuf),
    /// `postgres://...` or `postgresql://...`, passed to the driver as written.
    Postgres(String),
}

/// Why a `--store` value was refused.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown store `{0}`: use sqlite:PATH (a database file, created if missing) or \
     postgres://USER:PASSWORD@HOST:PORT/DATABASE"
)]
pub struct BadStoreUrl(pub String);

impl StoreUrl {
    pub fn parse(s: &str) -> Result<StoreUrl, BadStoreUrl> {
        let t = s.trim();
        if t.starts_with("postgres://") || t.starts_with("postgresql://") {
            return Ok(StoreUrl::Postgres(t.to_string()));
        }
        let path = t
            .strip_prefix("sqlite://")
            .or_else(|| t.strip_prefix("sqlite:"))
            .filter(|p| !p.is_empty())
            .ok_or_else(|| BadStoreUrl(s.to_string()))?;
        Ok(StoreUrl::Sqlite(PathBuf::from(path)))
    }
}

/// For logs and messages: a PostgreSQL password is never shown.
impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Sqlite(p) => write!(f, "sqlite:{}", p.display()),
            StoreUrl::Postgres(u) => f.write_str(&redact_password(u)),
        }
    }
}

/// `postgres://user:secret@host/db` as `postgres://user:***@host/db`.
fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some(parts) => parts,
        None => return url.to_string(),
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_backends_parse_and_anything_else_is_named_in_the_error() {
        assert_eq!(
            StoreUrl::parse("sqlite:/var/lib/g/db").unwrap(),
            StoreUrl::Sqlite("/var/lib/g/db".into())
        );
        assert_eq!(
            StoreUrl::parse("sqlite://rel/db").unwrap(),
            StoreUrl::Sqlite("rel/db".into())
        );
        assert!(matches!(
            StoreUrl::parse("postgresql://u@h/d").unwrap(),
            StoreUrl::Postgres(_)
        ));
        for bad in ["mysql://x", "sqlite:", "/tmp/db", ""] {
            let e = StoreUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains("sqlite:PATH") && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn a_postgres_password_is_never_displayed() {
        let u = StoreUrl::parse("postgres://gs:hunter2@db:5432/gs").unwrap();
        assert_eq!(u.to_string(), "postgres://gs:***@db:5432/gs");
        let u = StoreUrl::parse("postgres://gs@db/gs").unwrap();
        assert_eq!(u.to_string(), "postgres://gs@db/gs");
    }
}
