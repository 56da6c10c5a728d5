//! `gpusched top --once` against a real cluster: a running job shows in the GPU panel
//! (its GPU, held by its id and user) and in the job panel (its node and GPU), and a
//! server that is down makes `--once` fail with a message, not a frame.

use crate::support::*;

#[test]
fn top_once_shows_a_running_job_on_its_node_and_gpu() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent_with(
        &url,
        "top-node",
        &dir.join("agent"),
        Gpus::Fake(2),
        &["--telemetry-interval", "300ms"],
    );
    let id = submit(&url, &["--gpus", "1", "--", "sleep", "60"]);
    wait_until(SLOW, || job(&url, id)["state"] == "running");
    let view = job(&url, id);
    let user = view["user"].as_str().unwrap().to_string();
    let gpu = view["gpu_indices"][0].as_u64().unwrap();

    // The GPU row: `top-node  <gpu>  <model>  job <id> <user>`; wait for it, as the
    // node list may lag the job's state by a report.
    let holder = format!("job {id} {user}");
    let mut frame = String::new();
    wait_until(SLOW, || {
        let o = cli(&url, &["top", "--once", "--width", "160"]);
        assert!(o.status.success(), "top --once: {}", stderr(&o));
        frame = stdout(&o);
        frame.contains(&holder)
    });
    assert!(!frame.contains('\u{1b}'), "escape codes in {frame}");
    let row = frame
        .lines()
        .find(|l| l.contains(&holder))
        .unwrap()
        .trim_matches(|c: char| c.is_whitespace() || c == '│');
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[0], "top-node", "{frame}");
    assert_eq!(cells[1], gpu.to_string(), "{frame}");
    let job_row = frame
        .lines()
        .find(|l| l.contains(&format!("top-node:{gpu}")))
        .unwrap_or_else(|| panic!("no job row on top-node:{gpu} in {frame}"));
    let cells: Vec<&str> = job_row
        .trim_matches(|c: char| c.is_whitespace() || c == '│')
        .split_whitespace()
        .collect();
    assert_eq!(
        cells[..2],
        [id.to_string().as_str(), user.as_str()],
        "{frame}"
    );
    assert!(cells.contains(&"running"), "{frame}");
    assert!(
        frame.contains("nodes 1 up, 0 drained, 0 offline"),
        "{frame}"
    );
    assert!(frame.contains("GPUs 1 busy, 1 free"), "{frame}");
    assert!(frame.contains("jobs 1 running, 0 pending"), "{frame}");

    // A fixed size is honoured exactly.
    let o = cli(&url, &["top", "--once", "--width", "80", "--height", "12"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let small = stdout(&o);
    assert_eq!(small.lines().count(), 12, "{small}");
    assert!(small.lines().all(|l| l.chars().count() <= 80), "{small}");

    // Without a terminal, the live view refuses and says what to use instead.
    let o = cli(&url, &["top"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("gpusched top --once"), "{}", stderr(&o));

    let o = cli(&url, &["cancel", &id.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn top_once_against_no_server_says_how_to_reach_one() {
    let port = free_port();
    let o = cli_as(
        &format!("http://127.0.0.1:{port}"),
        None,
        &["top", "--once"],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("cannot reach the gpusched server"), "{err}");
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
}

/// `gpusched top` in a pseudo-terminal: its output so far, and the master side to type on.
struct Tty {
    child: std::process::Child,
    master: std::fs::File,
    out: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl Tty {
    fn start(server: &str) -> Tty {
        use std::io::Read;
        let size = nix::pty::Winsize {
            ws_row: 30,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = nix::pty::openpty(&size, None).expect("a pseudo-terminal");
        let slave = pty.slave;
        let child = std::process::Command::new(BIN)
            .args(["top", "--interval", "300ms"])
            .env("GPUSCHED_SERVER", server)
            .env_remove("GPUSCHED_TOKEN")
            .env("TERM", "xterm-256color")
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave)
            .spawn()
            .expect("spawn gpusched top");
        let master = std::fs::File::from(pty.master);
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (mut reader, sink) = (master.try_clone().unwrap(), out.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // Ends with EIO once the child (the last holder of the slave) exits.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Tty { child, master, out }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned()
    }

    /// Waits (bounded) until every word shows (the screen is drawn by cell changes, so
    /// words, not lines, are what can be found in the raw output).
    fn wait_for(&self, words: &[&str]) {
        let start = std::time::Instant::now();
        while !words.iter().all(|w| self.text().contains(w)) {
            assert!(
                start.elapsed() < SLOW,
                "{words:?} not shown within {SLOW:?}: {:?}",
                self.text()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    fn keys(&mut self, keys: &[u8]) {
        use std::io::Write;
        for k in keys {
            self.master.write_all(&[*k]).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// Waits (bounded) for the exit; asserts it was clean and left the terminal as it
    /// found it: the normal screen back, line editing and echo on again.
    fn ended_cleanly(mut self) {
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > SLOW {
                let _ = self.child.kill();
                panic!("gpusched top did not exit: {:?}", self.text());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert!(status.success(), "{status}: {:?}", self.text());
        let out = self.text();
        let (entered, left) = (out.find("\x1b[?1049h"), out.rfind("\x1b[?1049l"));
        assert!(
            matches!((entered, left), (Some(a), Some(b)) if a < b),
            "alternate screen not entered then left: {out:?}"
        );
        let t = nix::sys::termios::tcgetattr(&self.master).unwrap();
        use nix::sys::termios::LocalFlags;
        assert!(
            t.local_flags
                .contains(LocalFlags::ICANON | LocalFlags::ECHO),
            "the terminal stayed in raw mode: {:?}",
            t.local_flags
        );
    }
}

#[test]
fn top_runs_in_a_terminal_takes_keys_and_restores_it_on_every_exit() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "tty-node", &dir.join("agent"), Gpus::Fake(1));
    let id = submit(&url, &["--gpus", "1", "--", "sleep", "60"]);
    wait_until(SLOW, || job(&url, id)["state"] == "running");
    let sock = socket(&url);

    // Keys: scroll, focus, sort (the jobs panel's title then says so), quit with q.
    let mut tty = Tty::start(&sock);
    tty.wait_for(&["GPUs:", "tty-node:0", "running"]);
    tty.keys(b"j\tjs");
    tty.wait_for(&["newest"]);
    tty.keys(b"q");
    tty.ended_cleanly();

    // Ctrl-C is a key in raw mode: it quits too.
    let mut tty = Tty::start(&sock);
    tty.wait_for(&["tty-node:0"]);
    tty.keys(b"\x03");
    tty.ended_cleanly();

    // A server that is down: the error shows, the view stays, SIGTERM ends it cleanly.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let tty = Tty::start(&dead);
    tty.wait_for(&["refused", "retrying"]);
    std::thread::sleep(std::time::Duration::from_millis(700));
    assert!(tty_alive(&tty), "top gave up on a server that is down");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(tty.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    tty.ended_cleanly();

    let o = cli(&url, &["cancel", &id.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

fn tty_alive(tty: &Tty) -> bool {
    pid_alive(tty.child.id() as i32)
}
