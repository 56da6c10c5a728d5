//! A TCP proxy in front of a database that a test can freeze: while frozen it forwards
//! nothing in either direction and closes nothing, as a network partition does (the
//! peers' kernels keep the connections open and report nothing), and it opens no new
//! connection to the database. Bytes read just before a freeze, and bytes the peers
//! send while frozen, stay in the proxy and the kernels' buffers and are delivered
//! after [`TcpProxy::thaw`], as TCP retransmission would deliver them once a partition
//! heals: the harsher case, where a stale statement reaches the database late.
//!
//! Threads only (no async runtime): an accepting thread and two pumping threads per
//! connection, each polling a flag every few milliseconds; everything stops and every
//! socket closes when the proxy is dropped.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a waiting thread looks at the flags.
const TICK: Duration = Duration::from_millis(5);

#[derive(Default)]
struct Flags {
    frozen: AtomicBool,
    stop: AtomicBool,
    /// Bytes forwarded, both directions (a test can wait for traffic).
    bytes: AtomicU64,
}

/// A freezable proxy on a loopback port, forwarding to `upstream`.
pub struct TcpProxy {
    addr: SocketAddr,
    flags: Arc<Flags>,
    accept: Option<JoinHandle<()>>,
}

impl TcpProxy {
    /// Listens on a free loopback port and forwards every connection to `upstream`.
    pub fn start(upstream: SocketAddr) -> std::io::Result<TcpProxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let flags = Arc::new(Flags::default());
        let f = flags.clone();
        let accept = std::thread::Builder::new()
            .name("proxy-accept".into())
            .spawn(move || accept_loop(listener, upstream, f))?;
        Ok(TcpProxy {
            addr,
            flags,
            accept: Some(accept),
        })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Stops forwarding, in both directions and for new connections, closing nothing.
    pub fn freeze(&self) {
        self.flags.frozen.store(true, Ordering::SeqCst);
    }

    /// Forwards again, what was held first.
    pub fn thaw(&self) {
        self.flags.frozen.store(false, Ordering::SeqCst);
    }

    pub fn frozen(&self) -> bool {
        self.flags.frozen.load(Ordering::SeqCst)
    }

    /// Bytes forwarded so far, both directions together.
    pub fn bytes(&self) -> u64 {
        self.flags.bytes.load(Ordering::SeqCst)
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.flags.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

fn stopping(f: &Flags) -> bool {
    f.stop.load(Ordering::SeqCst)
}

/// Waits while frozen; false when the proxy stops meanwhile.
fn wait_thawed(f: &Flags) -> bool {
    while f.frozen.load(Ordering::SeqCst) {
        if stopping(f) {
            return false;
        }
        std::thread::sleep(TICK);
    }
    !stopping(f)
}

fn accept_loop(listener: TcpListener, upstream: SocketAddr, f: Arc<Flags>) {
    let mut pumps: Vec<JoinHandle<()>> = Vec::new();
    while !stopping(&f) {
        match listener.accept() {
            Ok((client, _)) => {
                let f = f.clone();
                // The upstream connection is made only once thawed (a partition lets
                // no new connection through either); on its own thread, so a frozen
                // newcomer holds up nobody.
                if let Ok(t) = std::thread::Builder::new()
                    .name("proxy-conn".into())
                    .spawn(move || connection(client, upstream, f))
                {
                    pumps.push(t);
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(TICK),
            Err(_) => std::thread::sleep(TICK),
        }
        pumps.retain(|t| !t.is_finished());
    }
    for t in pumps {
        let _ = t.join();
    }
}

fn connection(client: TcpStream, upstream: SocketAddr, f: Arc<Flags>) {
    if !wait_thawed(&f) {
        return;
    }
    let Ok(server) = TcpStream::connect_timeout(&upstream, Duration::from_secs(5)) else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let f2 = f.clone();
    let up = std::thread::Builder::new()
        .name("proxy-up".into())
        .spawn(move || pump(client, server, &f2));
    pump(s2, c2, &f);
    if let Ok(t) = up {
        let _ = t.join();
    }
}

/// Copies `from` to `to` until either closes or the proxy stops; holds what it read
/// while frozen.
fn pump(mut from: TcpStream, mut to: TcpStream, f: &Flags) {
    let _ = from.set_read_timeout(Some(Duration::from_millis(20)));
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if !wait_thawed(f) {
            break;
        }
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => break,
        };
        // Read just as the freeze came: held until the thaw.
        if !wait_thawed(f) {
            break;
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
        f.bytes.fetch_add(n as u64, Ordering::SeqCst);
    }
    let _ = to.shutdown(Shutdown::Write);
    if stopping(f) {
        let _ = from.shutdown(Shutdown::Both);
        let _ = to.shutdown(Shutdown::Both);
    }
}
