//! Several server URLs (`--server a,b,c`): the order to try them in and where a 307
//! from a follower points. Shared by the CLI and the agent; no I/O.

use std::sync::Mutex;

/// The servers a client may talk to, and the one that answered last (the leader, as
/// far as this client knows), tried first.
#[derive(Debug)]
pub struct ServerList {
    list: Vec<String>,
    good: Mutex<Option<String>>,
}

impl ServerList {
    /// A comma-separated list of base URLs (`http://a:6450,http://b:6450`); each
    /// trimmed, without a trailing `/`. Errors say what to write.
    pub fn parse(s: &str) -> Result<Self, String> {
        let list: Vec<String> = s
            .split(',')
            .map(|p| p.trim().trim_end_matches('/').to_string())
            .filter(|p| !p.is_empty())
            .collect();
        if list.is_empty() {
            return Err(format!(
                "no server URL in {s:?}; give one or several, comma-separated, e.g. \
                 http://sched1:6450,http://sched2:6450"
            ));
        }
        for u in &list {
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Err(format!(
                    "server URL {u:?} must start with http:// or https://; several are \
                     separated by commas"
                ));
            }
        }
        Ok(ServerList {
            list,
            good: Mutex::new(None),
        })
    }

    /// The URLs as given.
    pub fn all(&self) -> &[String] {
        &self.list
    }

    /// The list as messages name it.
    pub fn shown(&self) -> String {
        self.list.join(",")
    }

    /// The server to try first: the last that answered, else the first given.
    pub fn current(&self) -> String {
        self.good
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_else(|| self.list[0].clone())
    }

    /// Every server once, the current one first, then the others in the given order.
    pub fn order(&self) -> Vec<String> {
        let first = self.current();
        let mut out = vec![first.clone()];
        out.extend(self.list.iter().filter(|u| **u != first).cloned());
        out
    }

    /// Remembers `base` as the one that answers (a leader found by a redirect may be
    /// outside the list: it is the leader's advertised URL).
    pub fn answered(&self, base: &str) {
        *self.good.lock().unwrap_or_else(|p| p.into_inner()) = Some(base.to_string());
    }

    /// Moves on from the current server (it failed): the next one in the list.
    pub fn skip(&self) {
        let cur = self.current();
        let next = match self.list.iter().position(|u| *u == cur) {
            Some(i) => self.list[(i + 1) % self.list.len()].clone(),
            None => self.list[0].clone(),
        };
        self.answered(&next);
    }
}

/// The base URL (`scheme://host:port`) of a `Location` such as a follower's 307 sends;
/// None for a relative or malformed one.
pub fn origin_of(location: &str) -> Option<String> {
    let (scheme, rest) = location.split_once("://")?;
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let host = rest.split(['/', '?', '#']).next()?;
    (!host.is_empty()).then(|| format!("{scheme}://{host}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_tried_from_the_last_good_server_and_moves_on_when_one_fails() {
        let s = ServerList::parse(" http://a:1/, http://b:2 ,http://c:3").unwrap();
        assert_eq!(s.order(), ["http://a:1", "http://b:2", "http://c:3"]);
        s.skip();
        assert_eq!(s.current(), "http://b:2");
        assert_eq!(s.order(), ["http://b:2", "http://a:1", "http://c:3"]);
        s.skip();
        s.skip();
        assert_eq!(s.current(), "http://a:1");
        // A leader outside the list (its advertised URL) is tried first, then the list.
        s.answered("http://d:4");
        assert_eq!(s.order()[0], "http://d:4");
        assert_eq!(s.order().len(), 4);
        s.skip();
        assert_eq!(s.current(), "http://a:1");
    }

    #[test]
    fn bad_lists_say_what_to_write() {
        assert!(ServerList::parse(" , ")
            .unwrap_err()
            .contains("comma-separated"));
        assert!(ServerList::parse("http://a:1,b:2")
            .unwrap_err()
            .contains("\"b:2\" must start with http://"));
    }

    #[test]
    fn a_redirect_names_its_origin() {
        assert_eq!(
            origin_of("http://127.0.0.1:9/api/jobs?x=1").as_deref(),
            Some("http://127.0.0.1:9")
        );
        assert_eq!(
            origin_of("https://s2.example").as_deref(),
            Some("https://s2.example")
        );
        assert_eq!(origin_of("/api/jobs"), None);
        assert_eq!(origin_of("ftp://x/y"), None);
    }
}
