//! What a test does where an outside program it runs (PostgreSQL, Prometheus, Node.js,
//! openssl, python3) is missing: outside CI it writes one `SKIPPED` line to stderr, naming
//! what is missing and the script that installs it, and passes; under CI (`CI` set, as CI
//! services set it, to anything but empty, `0` or `false`) it fails, so CI never skips a
//! test silently.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The script that installs every program the tests run (Debian/Ubuntu, apt).
pub const INSTALL_SCRIPT: &str = "scripts/install_test_deps.sh";

/// Whether the tests run under CI: `CI` set to anything but empty, `0` or `false`.
pub fn under_ci() -> bool {
    ci_value_means_ci(std::env::var("CI").ok().as_deref())
}

fn ci_value_means_ci(value: Option<&str>) -> bool {
    value.is_some_and(|v| !matches!(v.trim().to_ascii_lowercase().as_str(), "" | "0" | "false"))
}

/// The verdict for test `test` that cannot run because `what` is missing (Debian's
/// package `package` has it): `Ok(line)` is the skip line to print outside CI, `Err(msg)`
/// the failure under CI.
pub fn missing_verdict(ci: bool, test: &str, what: &str, package: &str) -> Result<String, String> {
    let fix = format!("run {INSTALL_SCRIPT} (or apt-get install -y {package})");
    if ci {
        Err(format!(
            "{test}: {what} is missing and CI runs every test: {fix} before the tests"
        ))
    } else {
        Ok(format!(
            "SKIPPED {test}: {what} is missing; {fix} to run it (under CI=true this fails)"
        ))
    }
}

/// For a test whose outside program is missing: panics under CI (the test fails); else
/// writes the skip line to stderr and returns, and the test should return (pass as
/// skipped). The line goes straight to the process's stderr, past the test harness's
/// capture, so a plain `cargo test` shows it.
pub fn skip_or_fail(test: &str, what: &str, package: &str) {
    match missing_verdict(under_ci(), test, what, package) {
        Ok(line) => {
            // One write of the whole line: tests running beside it do not split it.
            let _ = std::io::stderr().write_all(format!("\n{line}\n").as_bytes());
        }
        Err(msg) => panic!("{msg}"),
    }
}

/// Program `name` on `PATH` (the first executable file of that name).
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Program `name` (on `PATH`, or the path given) for test `test`, or `None` after
/// [`skip_or_fail`] when it is missing (Debian's package `package` has it).
pub fn require_program(test: &str, name: &str, package: &str) -> Option<PathBuf> {
    let found = if name.contains('/') {
        Some(PathBuf::from(name)).filter(|p| is_executable(p))
    } else {
        on_path(name)
    };
    if found.is_none() {
        let what = if name.contains('/') {
            format!("`{name}`")
        } else {
            format!("`{name}` (not on PATH)")
        };
        skip_or_fail(test, &what, package);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_means_set_and_not_false() {
        assert!(!ci_value_means_ci(None));
        for off in ["", "0", "false", "FALSE", " false "] {
            assert!(!ci_value_means_ci(Some(off)), "{off:?}");
        }
        for on in ["true", "1", "yes", "TRUE"] {
            assert!(ci_value_means_ci(Some(on)), "{on:?}");
        }
    }

    #[test]
    fn a_missing_program_skips_outside_ci_and_fails_under_it() {
        let skip = missing_verdict(false, "t1", "`prometheus`", "prometheus").unwrap();
        assert!(
            skip.starts_with("SKIPPED t1: `prometheus` is missing"),
            "{skip}"
        );
        assert!(skip.contains(INSTALL_SCRIPT), "{skip}");
        assert!(skip.contains("apt-get install -y prometheus"), "{skip}");
        assert!(!skip.contains('\n'), "one line: {skip}");
        let fail = missing_verdict(true, "t1", "`prometheus`", "prometheus").unwrap_err();
        assert!(fail.starts_with("t1: `prometheus` is missing"), "{fail}");
        assert!(fail.contains(INSTALL_SCRIPT), "{fail}");
    }

    /// Run by [`the_skip_path_in_a_test_process_with_ci_unset_and_set`] only (ignored
    /// otherwise): a test whose program is missing.
    #[test]
    #[ignore = "run by the_skip_path_in_a_test_process_with_ci_unset_and_set"]
    fn child_needs_a_missing_program() {
        // Not on its own (`--include-ignored` under CI would fail it): only as the child.
        if std::env::var_os("GPUSCHED_NEEDS_CHILD").is_none() {
            return;
        }
        let Some(_bin) = require_program("child", "gpusched-no-such-program", "nothing") else {
            return;
        };
        unreachable!("gpusched-no-such-program exists");
    }

    /// The whole path in a test process of its own (this binary, running the ignored
    /// test above): with `CI` unset it passes and its skip line reaches stderr although
    /// the harness captures the test's output; with `CI=true` it fails, naming the script.
    #[test]
    fn the_skip_path_in_a_test_process_with_ci_unset_and_set() {
        let run = |ci: Option<&str>| {
            let mut c = std::process::Command::new(std::env::current_exe().unwrap());
            c.args([
                "--ignored",
                "--exact",
                "testing::needs::tests::child_needs_a_missing_program",
            ])
            .args(["--test-threads", "1"])
            .env("GPUSCHED_NEEDS_CHILD", "1");
            match ci {
                Some(v) => c.env("CI", v),
                None => c.env_remove("CI"),
            };
            let o = c.output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(
                text.contains("1 passed") || text.contains("1 failed"),
                "ran nothing: {text}"
            );
            (
                o.status.success(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
                text,
            )
        };
        let (ok, stderr, text) = run(None);
        assert!(ok, "outside CI a missing program skips: {text}");
        let skipped: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("SKIPPED child:"))
            .collect();
        assert_eq!(skipped.len(), 1, "one skip line on stderr: {stderr}");
        assert!(
            skipped[0].contains("`gpusched-no-such-program` (not on PATH) is missing"),
            "{stderr}"
        );
        assert!(skipped[0].contains(INSTALL_SCRIPT), "{stderr}");
        for off in ["false", "0", ""] {
            let (ok, _, text) = run(Some(off));
            assert!(ok, "CI={off:?} is not CI: {text}");
        }
        let (ok, _, text) = run(Some("true"));
        assert!(
            !ok,
            "under CI=true a missing program fails the test: {text}"
        );
        assert!(
            text.contains("CI runs every test") && text.contains(INSTALL_SCRIPT),
            "{text}"
        );
    }

    #[test]
    fn programs_are_found_on_path_or_by_path() {
        assert!(on_path("sh").is_some());
        assert!(on_path("gpusched-no-such-program").is_none());
        assert!(require_program("t", "sh", "dash").is_some());
        assert!(require_program("t", "/bin/sh", "dash").is_some());
    }
}
