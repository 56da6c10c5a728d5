//! Listeners that bound what connections may hold: at most so many open at once per
//! listener (the Unix socket has its own share, so the CLI gets in while the TCP port is
//! full), and a connection whose peer has sent and been sent nothing for a while is
//! closed. Without them, a thousand idle or half-sent connections used every file
//! descriptor and the server stopped answering anyone, the CLI included.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// A listener of at most `max` open connections, each closed after `idle` without a
/// byte either way while the server waits to read (a request being handled, a long poll
/// or `wait` included, is not cut: `idle` is longer than the longest of those).
pub struct Bounded<L> {
    inner: L,
    slots: Arc<Semaphore>,
    max: usize,
    idle: Duration,
    what: &'static str,
    /// The cap was reached and said so (once until it is free again).
    full: Arc<AtomicBool>,
}

impl<L> Bounded<L> {
    pub fn new(inner: L, max: usize, idle: Duration, what: &'static str) -> Self {
        Bounded {
            inner,
            slots: Arc::new(Semaphore::new(max.max(1))),
            max: max.max(1),
            idle,
            what,
            full: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl<L: axum::serve::Listener> axum::serve::Listener for Bounded<L> {
    type Io = Guarded<L::Io>;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // At the cap a new connection waits in the kernel's backlog, holding no
        // descriptor of ours, until one closes.
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                if !self.full.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "{} has {} connections open, its most (--max-connections); new ones \
                         wait until one closes",
                        self.what,
                        self.max
                    );
                }
                let p = self.slots.clone().acquire_owned().await;
                p.expect("the semaphore is never closed")
            }
        };
        if self.slots.available_permits() > self.max / 10 {
            self.full.store(false, Ordering::Relaxed);
        }
        let (io, addr) = self.inner.accept().await;
        (Guarded::new(io, permit, self.idle), addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// A connection of a [`Bounded`] listener: holds its slot until dropped.
pub struct Guarded<T> {
    io: T,
    _slot: OwnedSemaphorePermit,
    idle: Duration,
    timer: Pin<Box<Sleep>>,
}

impl<T> Guarded<T> {
    fn new(io: T, slot: OwnedSemaphorePermit, idle: Duration) -> Self {
        Guarded {
            io,
            _slot: slot,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
        }
    }

    /// The connection itself (its peer's credentials, say).
    pub fn get_ref(&self) -> &T {
        &self.io
    }

    fn touch(&mut self) {
        let at = Instant::now() + self.idle;
        self.timer.as_mut().reset(at);
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.touch();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => match this.timer.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the connection was idle too long",
                ))),
                Poll::Pending => Poll::Pending,
            },
            other => other,
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        r
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// Raises this process's soft limit of open files to its hard limit (a server holds a
/// descriptor per connection, an agent several per job) and returns the soft limit now.
pub fn raise_open_files_limit() -> u64 {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return 1024;
    };
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return hard;
    }
    soft
}

/// The connection caps of the TCP listener and the Unix socket that fit `open_files`
/// descriptors, leaving room for the store, logs and the agents' log streams: the Unix
/// socket keeps its share whatever the TCP port holds.
pub fn caps(open_files: u64, tcp_wanted: usize) -> (usize, usize) {
    let budget = open_files.saturating_sub(256).max(64) as usize;
    let unix = (budget / 4).clamp(16, 1024);
    let tcp = tcp_wanted.min(budget - unix.min(budget / 2)).max(16);
    (tcp, unix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// The Unix socket keeps a share whatever is asked of TCP, and both fit the limit.
    #[test]
    fn caps_fit_the_descriptor_limit_and_keep_room_for_the_socket() {
        assert_eq!(caps(1_048_576, 4096), (4096, 1024));
        let (tcp, unix) = caps(1024, 4096);
        assert!(tcp + unix < 1024, "{tcp} + {unix}");
        assert!(unix >= 16 && tcp >= 16);
        assert_eq!(caps(20_000, 100), (100, 1024));
    }

    /// A connection that says nothing is closed after the idle time; one that talks is
    /// not; the cap holds the next connection until one closes.
    #[tokio::test]
    async fn idle_connections_close_and_the_cap_holds_the_next() {
        use axum::serve::Listener;
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = tcp.local_addr().unwrap();
        let mut l = Bounded::new(tcp, 1, Duration::from_millis(300), "test");
        let mut quiet = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut conn, _) = l.accept().await;
        // The cap is 1: a second connection is not accepted while the first is open.
        let _second = tokio::net::TcpStream::connect(addr).await.unwrap();
        let held = tokio::time::timeout(Duration::from_millis(200), l.accept()).await;
        assert!(held.is_err(), "accepted past the cap");
        // Talking keeps it open past the idle time.
        for _ in 0..3 {
            quiet.write_all(b"x").await.unwrap();
            let mut b = [0u8; 1];
            conn.read_exact(&mut b).await.unwrap();
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        // Silence closes it, and frees the slot for the waiting connection.
        let mut b = [0u8; 1];
        let err = conn.read(&mut b).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(conn);
        let next = tokio::time::timeout(Duration::from_secs(5), l.accept()).await;
        assert!(next.is_ok(), "the freed slot was not taken");
    }
}
