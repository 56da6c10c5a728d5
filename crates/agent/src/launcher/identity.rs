//! Whose uid a job runs under. An agent running as root runs each job as its submitting
//! Unix user (groups, then gid, then uid, in the child before exec), and refuses root
//! jobs unless told otherwise; an agent running as a normal user runs only that user's
//! jobs, since it cannot become anyone else.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::unistd::{Gid, Uid, User};

/// The credentials a job takes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunAs {
    pub name: String,
    pub uid: Uid,
    pub gid: Gid,
    /// Supplementary groups, looked up before the fork (the lookup reads files and
    /// allocates, which the child must not do).
    pub groups: Vec<Gid>,
    pub home: String,
}

/// How long a looked-up account is reused. The lookup (the passwd entry and every group
/// of the user, through NSS: files, LDAP or SSSD) cost ~4% of the agent's CPU per trivial
/// job, once per job; nscd keeps passwd entries for 10 minutes by default. A change of
/// a user's groups reaches jobs started more than this long after it.
const ACCOUNT_TTL: Duration = Duration::from_secs(10);

/// Accounts looked up recently, by user (refusals are never kept: an account created
/// a moment ago must work at once).
static ACCOUNTS: Mutex<Option<Accounts>> = Mutex::new(None);

/// User -> when it was looked up, and what was found (`None`: no switch).
type Accounts = HashMap<String, (Instant, Option<RunAs>)>;

/// [`resolve`], reusing a lookup of the last [`ACCOUNT_TTL`].
pub fn resolve_cached(user: &str, allow_root: bool) -> Result<Option<RunAs>, String> {
    let now = Instant::now();
    {
        let mut cache = ACCOUNTS.lock().unwrap_or_else(|p| p.into_inner());
        let cache = cache.get_or_insert_with(HashMap::new);
        cache.retain(|_, (at, _)| now.duration_since(*at) < ACCOUNT_TTL);
        if let Some((_, found)) = cache.get(user) {
            // A cached root account still obeys this call's `allow_root`.
            if found
                .as_ref()
                .is_none_or(|r| !r.uid.is_root() || allow_root)
            {
                return Ok(found.clone());
            }
        }
    }
    let found = resolve(user, allow_root)?;
    let mut cache = ACCOUNTS.lock().unwrap_or_else(|p| p.into_inner());
    cache
        .get_or_insert_with(HashMap::new)
        .insert(user.to_string(), (now, found.clone()));
    Ok(found)
}

/// The identity for a job of `user`, or why it must not run. `None`: no switch.
pub fn resolve(user: &str, allow_root: bool) -> Result<Option<RunAs>, String> {
    let me = nix::unistd::geteuid();
    if !me.is_root() {
        // It cannot become anyone else, so it must not run anyone else's job as itself.
        let name = User::from_uid(me)
            .ok()
            .flatten()
            .map(|u| u.name)
            .unwrap_or_else(|| format!("uid{me}"));
        if name != user {
            return Err(format!(
                "this agent runs as {name}, so it runs only {name}'s jobs, not {user}'s; \
                 run the agent as root to run jobs as their submitters"
            ));
        }
        return Ok(None);
    }
    let account = User::from_name(user)
        .map_err(|e| format!("cannot look up the user {user:?} on this node: {e}"))?
        .ok_or_else(|| {
            format!(
                "the user {user:?} does not exist on this node; jobs run as their submitter, \
                 so the account must exist here too (local account, LDAP or SSSD)"
            )
        })?;
    if account.uid.is_root() && !allow_root {
        return Err(
            "refusing to run a job as root: this agent runs jobs as their submitting user \
             and root jobs are off; submit as a normal user, or start the agent with \
             --allow-root-jobs"
                .to_string(),
        );
    }
    let cname = CString::new(account.name.clone())
        .map_err(|_| format!("the user name {user:?} contains a NUL byte"))?;
    let groups = nix::unistd::getgrouplist(&cname, account.gid)
        .map_err(|e| format!("cannot read the groups of {user:?}: {e}"))?;
    Ok(Some(RunAs {
        name: account.name,
        uid: account.uid,
        gid: account.gid,
        groups,
        home: account.dir.display().to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_users_and_root_are_refused_when_the_agent_is_root() {
        if !nix::unistd::geteuid().is_root() {
            let e = resolve("whoever-xyz", false).unwrap_err();
            assert!(e.contains("runs only"), "{e}");
            return;
        }
        let e = resolve("no-such-user-gpusched", false).unwrap_err();
        assert!(e.contains("does not exist on this node"), "{e}");
        let e = resolve("root", false).unwrap_err();
        assert!(e.contains("--allow-root-jobs"), "{e}");
        let root = resolve("root", true).unwrap().unwrap();
        assert!(root.uid.is_root());
        let nobody = resolve("nobody", false).unwrap().unwrap();
        assert!(!nobody.uid.is_root());
    }

    #[test]
    fn the_cache_answers_as_a_lookup_does_and_never_keeps_a_refusal() {
        if !nix::unistd::geteuid().is_root() {
            assert!(resolve_cached("whoever-xyz", false).is_err());
            return;
        }
        assert!(resolve_cached("no-such-user-gpusched", false).is_err());
        assert!(resolve_cached("no-such-user-gpusched", false).is_err());
        let root = resolve_cached("root", true).unwrap().unwrap();
        assert!(root.uid.is_root());
        // Root was looked up with root jobs allowed; this call does not allow them.
        let e = resolve_cached("root", false).unwrap_err();
        assert!(e.contains("--allow-root-jobs"), "{e}");
        assert_eq!(
            resolve_cached("nobody", false).unwrap(),
            resolve("nobody", false).unwrap()
        );
        assert_eq!(
            resolve_cached("nobody", false).unwrap(),
            resolve("nobody", false).unwrap()
        );
    }
}
