//! Ports held for `MASTER_PORT`: the agent binds a free TCP port (port 0) on its
//! advertised address and keeps the socket open until just before the attempt's
//! processes start, so no other program on the host can take the number meanwhile.
//! The job then binds the same number (the listener was never `accept`ed on, and
//! closing it frees the port at once: a listening socket leaves no TIME_WAIT).

use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use gpusched_wire::AttemptRef;

/// Held listeners by attempt, with the port each is bound to (kept, not asked of the
/// socket again); clones share them.
#[derive(Clone, Default)]
pub struct PortBook {
    held: Arc<Mutex<BTreeMap<AttemptRef, (u16, TcpListener)>>>,
}

impl PortBook {
    /// The port held for `a`, binding a new one on `addr` the first time. Asking again
    /// for the same attempt answers the same port (the server repeats its order until
    /// it hears the answer).
    pub fn reserve(&self, a: AttemptRef, addr: &str) -> io::Result<u16> {
        let mut held = self.lock();
        if let Some((port, _)) = held.get(&a) {
            return Ok(*port);
        }
        let listener = bind_free(addr)?;
        let port = listener.local_addr()?.port();
        held.insert(a, (port, listener));
        Ok(port)
    }

    /// The port held for `a`, if any.
    pub fn held(&self, a: AttemptRef) -> Option<u16> {
        self.lock().get(&a).map(|(port, _)| *port)
    }

    /// Closes the socket held for `a` (just before its processes start, or when the
    /// attempt is no longer wanted); returns the port it held.
    pub fn release(&self, a: AttemptRef) -> Option<u16> {
        // The listener closes as it drops here.
        self.lock().remove(&a).map(|(port, _)| port)
    }

    /// Releases every port held for an attempt `keep` does not name.
    pub fn retain(&self, keep: impl Fn(AttemptRef) -> bool) -> Vec<AttemptRef> {
        let mut held = self.lock();
        let gone: Vec<AttemptRef> = held.keys().copied().filter(|a| !keep(*a)).collect();
        for a in &gone {
            held.remove(a);
        }
        gone
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<AttemptRef, (u16, TcpListener)>> {
        // Each use is one map operation: a panic elsewhere cannot leave it half-changed.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Binds port 0 on `addr` (an IP address, or a name resolved here). An address this
/// host does not have (an advertised address behind NAT) falls back to every
/// interface, which still keeps the number from other programs.
fn bind_free(addr: &str) -> io::Result<TcpListener> {
    let ip: Option<IpAddr> = addr.parse().ok().or_else(|| {
        use std::net::ToSocketAddrs;
        (addr, 0u16)
            .to_socket_addrs()
            .ok()
            .and_then(|mut it| it.next())
            .map(|s| s.ip())
    });
    if let Some(ip) = ip {
        match TcpListener::bind(SocketAddr::new(ip, 0)) {
            Ok(l) => return Ok(l),
            Err(e) => tracing::debug!("cannot bind a port on {ip} ({e}); binding on 0.0.0.0"),
        }
    }
    TcpListener::bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(job: u64) -> AttemptRef {
        AttemptRef { job, attempt: 1 }
    }

    #[test]
    fn a_reserved_port_is_held_until_released_and_the_same_on_repeat() {
        let book = PortBook::default();
        let port = book.reserve(a(1), "127.0.0.1").unwrap();
        assert_ne!(port, 0);
        assert_eq!(book.reserve(a(1), "127.0.0.1").unwrap(), port);
        assert_eq!(book.held(a(1)), Some(port));
        // Held: nobody else can bind it.
        let taken = TcpListener::bind(("127.0.0.1", port)).unwrap_err();
        assert_eq!(taken.kind(), io::ErrorKind::AddrInUse, "{taken}");
        // Released: the job can bind it at once.
        assert_eq!(book.release(a(1)), Some(port));
        assert_eq!(book.held(a(1)), None);
        TcpListener::bind(("127.0.0.1", port)).expect("the released port is free");
        assert_eq!(book.release(a(1)), None);
    }

    #[test]
    fn different_attempts_get_different_ports_and_retain_drops_the_unwanted() {
        let book = PortBook::default();
        let p1 = book.reserve(a(1), "127.0.0.1").unwrap();
        let p2 = book.reserve(a(2), "127.0.0.1").unwrap();
        assert_ne!(p1, p2);
        let gone = book.retain(|x| x == a(2));
        assert_eq!(gone, vec![a(1)]);
        assert_eq!(book.held(a(1)), None);
        assert_eq!(book.held(a(2)), Some(p2));
        TcpListener::bind(("127.0.0.1", p1)).expect("released");
    }

    #[test]
    fn an_address_not_on_this_host_falls_back_to_every_interface() {
        let book = PortBook::default();
        // TEST-NET-1: never a local address.
        let port = book.reserve(a(3), "192.0.2.1").unwrap();
        assert_ne!(port, 0);
        assert!(TcpListener::bind(("0.0.0.0", port)).is_err());
    }
}
