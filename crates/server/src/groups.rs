//! Unix group lookups for queues open to groups. They happen in the HTTP layer, on
//! tokio's blocking threads, before a submission reaches the state task: a directory
//! lookup (NSS: LDAP, sssd, NIS) can take seconds, and the state task serves everyone.
//! The state gets the answers with the command (`UserGroups`) and never looks up itself.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

/// The Unix groups of the users one request names (its caller; the owners an admin
/// submits for).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserGroups(BTreeMap<String, Vec<String>>);

impl UserGroups {
    /// A user's groups; none for a user the lookup did not cover (or who has none).
    pub fn of(&self, user: &str) -> &[String] {
        self.0.get(user).map_or(&[], Vec::as_slice)
    }

    /// Records a user's groups (the directory; tests).
    pub fn insert(&mut self, user: impl Into<String>, groups: Vec<String>) {
        self.0.insert(user.into(), groups);
    }
}

/// The groups lookup with a cache per user, shared by every handler. The cache is
/// dropped when the queue file is reloaded (SIGHUP), which is when an admin who changed
/// group memberships expects them to count.
#[derive(Clone)]
pub struct GroupDirectory {
    cache: Arc<Mutex<HashMap<String, Vec<String>>>>,
    lookup: fn(&str) -> Vec<String>,
}

impl Default for GroupDirectory {
    fn default() -> Self {
        GroupDirectory::with_lookup(crate::queues::unix_groups)
    }
}

impl GroupDirectory {
    /// A directory answering with `lookup` (the system's groups, or a test's table).
    pub fn with_lookup(lookup: fn(&str) -> Vec<String>) -> Self {
        GroupDirectory {
            cache: Arc::default(),
            lookup,
        }
    }

    /// The groups of `users`: cached ones at once, the others looked up on a blocking
    /// thread (all of one request's in one go).
    pub async fn resolve(&self, users: BTreeSet<String>) -> UserGroups {
        let mut out = UserGroups::default();
        let mut missing = Vec::new();
        {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            for user in users {
                match cache.get(&user) {
                    Some(g) => out.insert(user, g.clone()),
                    None => missing.push(user),
                }
            }
        }
        if missing.is_empty() {
            return out;
        }
        let lookup = self.lookup;
        let found = tokio::task::spawn_blocking(move || {
            missing
                .into_iter()
                .map(|u| {
                    let g = lookup(&u);
                    (u, g)
                })
                .collect::<Vec<_>>()
        })
        .await
        // A lookup that panicked knows no groups: queues open to everyone still work,
        // and a queue open only to groups refuses with a message naming the queue.
        .unwrap_or_default();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        for (user, groups) in found {
            cache.insert(user.clone(), groups.clone());
            out.insert(user, groups);
        }
        out
    }

    /// Forgets every cached answer (the queue file was reloaded).
    pub fn forget(&self) {
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(user: &str) -> Vec<String> {
        match user {
            "alice" => vec!["ml".into(), "staff".into()],
            _ => Vec::new(),
        }
    }

    #[tokio::test]
    async fn resolves_each_named_user_and_forgets_on_reload() {
        let dir = GroupDirectory::with_lookup(table);
        let users = ["alice", "bob"].map(String::from).into_iter().collect();
        let g = dir.resolve(users).await;
        assert_eq!(g.of("alice"), ["ml", "staff"]);
        assert!(g.of("bob").is_empty());
        assert!(g.of("carol").is_empty(), "a user not asked for has none");
        assert_eq!(dir.cache.lock().unwrap().len(), 2);
        dir.forget();
        assert!(dir.cache.lock().unwrap().is_empty());
    }
}
