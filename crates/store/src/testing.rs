//! A throwaway PostgreSQL for tests: its own cluster in a temporary directory, started on
//! a free loopback port (its socket in that directory too, `fsync=on`, default
//! `synchronous_commit`), stopped (`pg_ctl stop -m immediate`) when dropped.
//!
//! PostgreSQL's binaries come from Debian's packages (`/usr/lib/postgresql/*/bin`) or
//! `PATH`. Where they are missing, [`TempPostgres::start_or_skip`] fails the test under CI
//! (`CI=true`), naming the package to install, and elsewhere prints one skip line naming
//! `scripts/install_test_deps.sh` ([`skip_or_fail`], which every test that runs an outside
//! program shares): a developer without PostgreSQL still runs every other test.
//!
//! initdb refuses to run as root: as root, every PostgreSQL command runs as the
//! `postgres` user (which Debian's package creates) through `runuser`, in a directory
//! given to that user.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, Weak};

mod needs;
mod proxy;
pub use needs::{on_path, require_program, skip_or_fail, under_ci, INSTALL_SCRIPT};
pub use proxy::TcpProxy;

/// The package the tests need, as the messages name it.
pub const PACKAGE: &str = "postgresql-15";

/// A running PostgreSQL cluster of a test's own.
pub struct TempPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    /// Run PostgreSQL's commands as the `postgres` user (we are root).
    as_postgres: bool,
}

/// Where `initdb` and `pg_ctl` are: the newest Debian version, else `PATH`.
fn find_bin() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    if let Some((_, bin)) = found.pop() {
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
}

fn is_root() -> bool {
    // The effective uid, without a libc dependency: /proc/self/status's "Uid:" line.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// A loopback port nobody listens on now.
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

impl TempPostgres {
    /// A running cluster, or `None` with a skip line when PostgreSQL is not installed and
    /// the tests do not run under CI ([`under_ci`]). Panics (the test fails) when it is
    /// missing under CI, or when it is installed and does not start.
    pub fn start_or_skip(test: &str) -> Option<TempPostgres> {
        let Some(bin) = find_bin() else {
            skip_or_fail(
                test,
                "PostgreSQL (initdb under /usr/lib/postgresql/*/bin or on PATH)",
                PACKAGE,
            );
            return None;
        };
        match TempPostgres::start_with(bin) {
            Ok(pg) => Some(pg),
            Err(e) => panic!("{test}: cannot start a throwaway PostgreSQL: {e}"),
        }
    }

    fn start_with(bin: PathBuf) -> Result<TempPostgres, String> {
        let dir = tempfile::Builder::new()
            .prefix("gpusched-pg-")
            .tempdir()
            .map_err(|e| format!("temporary directory: {e}"))?;
        let as_postgres = is_root();
        let pg = TempPostgres {
            dir,
            bin,
            port: 0,
            as_postgres,
        };
        if as_postgres {
            let out = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(pg.dir.path())
                .output()
                .map_err(|e| format!("chown: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "cannot give {} to the postgres user (does it exist? Debian's {PACKAGE} \
                     creates it): {}",
                    pg.dir.path().display(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        let data = pg.data();
        pg.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "gpusched",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        )?;
        // A port taken between the probe and the start: try another.
        let mut pg = pg;
        let mut last = String::new();
        for _ in 0..5 {
            pg.port = free_port().map_err(|e| format!("free port: {e}"))?;
            match pg.start() {
                Ok(()) => {
                    pg.run(
                        "createdb",
                        &[
                            "-h",
                            "127.0.0.1",
                            "-p",
                            &pg.port.to_string(),
                            "-U",
                            "gpusched",
                            "gpusched",
                        ],
                    )?;
                    return Ok(pg);
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Runs one of PostgreSQL's programs (as `postgres` when we are root).
    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        self.output(program, args).map(drop)
    }

    /// [`TempPostgres::run`], with what the program printed.
    fn output(&self, program: &str, args: &[&str]) -> Result<String, String> {
        let exe = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = cmd
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "{program} {} failed: {}{}{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                self.log_tail()
            ))
        }
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("postgres.log")
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(10).collect();
        if tail.is_empty() {
            String::new()
        } else {
            let lines: Vec<&str> = tail.into_iter().rev().collect();
            format!("\nserver log:\n{}", lines.join("\n"))
        }
    }

    /// Starts the server (again, after [`TempPostgres::stop`]) and waits until it accepts
    /// connections.
    pub fn start(&self) -> Result<(), String> {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=on",
            self.port,
            self.dir.path().display()
        );
        let log = self.log_path().display().to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "-o",
                &opts,
                "start",
            ],
        )
    }

    /// Stops the server at once, as a crash would (`-m immediate`: no checkpoint; what
    /// was committed is in the WAL).
    pub fn stop(&self) -> Result<(), String> {
        self.run(
            "pg_ctl",
            &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
        )
    }

    /// Stops the server as a crash would and starts it again.
    pub fn restart(&self) -> Result<(), String> {
        self.stop()?;
        self.start()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Where it listens (for a [`TcpProxy`] in front of it).
    pub fn addr(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// The URL of the test's database reached through port `port` of this host (a
    /// [`TcpProxy`]'s), with `application_name` set to `app` (which the database shows in
    /// `pg_stat_activity` and `current_setting('application_name')`).
    pub fn url_via(&self, port: u16, app: &str) -> String {
        format!("postgres://gpusched@127.0.0.1:{port}/gpusched?application_name={app}")
    }

    /// The test's database URL with `application_name` set to `app`.
    pub fn url_as(&self, app: &str) -> String {
        self.url_via(self.port, app)
    }

    /// Runs SQL on the test's database with `psql` (no async runtime needed): what it
    /// printed, one row a line, columns separated by `|`. An error names the statement
    /// and what PostgreSQL said.
    pub fn sql(&self, sql: &str) -> Result<String, String> {
        let port = self.port.to_string();
        self.output(
            "psql",
            &[
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "gpusched",
                "-d",
                "gpusched",
                "-c",
                sql,
            ],
        )
    }

    /// The URL of the database created for the test (`gpusched`).
    pub fn url(&self) -> String {
        self.url_of("gpusched")
    }

    /// The URL of database `db` of this cluster.
    pub fn url_of(&self, db: &str) -> String {
        format!("postgres://gpusched@127.0.0.1:{}/{db}", self.port)
    }

    /// A new, empty database on this cluster; its URL.
    pub async fn new_database(&self, name: &str) -> Result<String, String> {
        use sqlx::Connection;
        sqlx::any::install_default_drivers();
        let mut c = sqlx::AnyConnection::connect(&self.url())
            .await
            .map_err(|e| format!("connect: {e}"))?;
        sqlx::query(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut c)
            .await
            .map_err(|e| format!("CREATE DATABASE {name}: {e}"))?;
        let _ = c.close().await;
        Ok(self.url_of(name))
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("stopping the throwaway PostgreSQL: {e}");
        }
    }
}

/// One cluster shared by the tests of a process that run at the same time (each takes a
/// database of its own with [`TempPostgres::new_database`]); stopped when the last of
/// them drops its handle, started again by the next.
pub fn shared(test: &str) -> Option<Arc<TempPostgres>> {
    static SHARED: Mutex<Weak<TempPostgres>> = Mutex::new(Weak::new());
    let mut slot = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(pg) = slot.upgrade() {
        return Some(pg);
    }
    // Its SQLite half still runs: only the PostgreSQL half is skipped.
    let test = format!("{test} on PostgreSQL");
    let pg = Arc::new(TempPostgres::start_or_skip(&test)?);
    *slot = Arc::downgrade(&pg);
    Some(pg)
}
