//! The local terminal of `gpusched run --pty`: raw mode while the step runs (every key,
//! Ctrl-C and Ctrl-Z included, goes to the remote terminal, whose line discipline
//! turns them into signals), restored whatever happens (the guard's drop, on every
//! return and unwinding path); the window's size for the remote one.

use std::os::fd::AsFd;

use nix::sys::termios::{self, SetArg, Termios};

/// The terminal in raw mode until dropped.
pub struct RawMode {
    saved: Termios,
}

impl RawMode {
    /// Raw mode on stdin, if stdin is a terminal (otherwise nothing to do: bytes
    /// piped in go as they are).
    pub fn enter() -> Option<RawMode> {
        let stdin = std::io::stdin();
        let saved = termios::tcgetattr(stdin.as_fd()).ok()?;
        let mut raw = saved.clone();
        termios::cfmakeraw(&mut raw);
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw).ok()?;
        Some(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let stdin = std::io::stdin();
        let _ = termios::tcsetattr(stdin.as_fd(), SetArg::TCSADRAIN, &self.saved);
    }
}

/// The terminal's size (columns, rows), from stdin or stdout, if either is one.
pub fn window_size() -> Option<(u16, u16)> {
    for fd in [0, 1] {
        let mut ws = libc::winsize {
            ws_row: 0,
            ws_col: 0,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCGWINSZ writes one winsize through the pointer.
        let r = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
        if r == 0 && ws.ws_col > 0 {
            return Some((ws.ws_col, ws.ws_row));
        }
    }
    None
}
