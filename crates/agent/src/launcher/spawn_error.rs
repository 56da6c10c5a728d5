//! Explaining why a job's program could not be started, in terms the submitter can act
//! on. The kernel's error alone is ambiguous (`ENOENT` is both "no such program" and "no
//! such working directory"), so the directory and program are looked at again.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::Path;

use nix::errno::Errno;

/// `path_var` is the `PATH` the job would have had.
pub fn explain(err: &io::Error, program: &str, cwd: &str, path_var: Option<&OsStr>) -> String {
    if let Some(problem) = cwd_problem(cwd) {
        return problem;
    }
    if err.raw_os_error() == Some(Errno::ENOEXEC as i32) {
        return format!(
            "{program} is not a program this node can run (exec format error): a script needs a \
             #! line, and a binary must be built for this node's architecture"
        );
    }
    match err.kind() {
        io::ErrorKind::NotFound if program.contains('/') => {
            let full = Path::new(cwd).join(program);
            format!(
                "the program {program} does not exist on this node (looked for {}); check the \
                 path, which is relative to the working directory {cwd}",
                full.display()
            )
        }
        io::ErrorKind::NotFound => {
            let path = path_var.map(|p| p.to_string_lossy().into_owned());
            format!(
                "the program {program} was not found in the PATH of the job on this node \
                 (PATH={}); install it there, give its full path, or set PATH in the job's \
                 environment",
                path.as_deref().unwrap_or("<unset>")
            )
        }
        io::ErrorKind::PermissionDenied => format!(
            "the program {program} cannot be executed by the agent's user (permission denied): \
             make it executable (chmod +x) and its directories searchable, or run it through \
             its interpreter, e.g. [\"python3\", \"{program}\"]"
        ),
        _ => format!("could not start {program} in {cwd}: {err}"),
    }
}

/// What is wrong with the working directory, if anything.
fn cwd_problem(cwd: &str) -> Option<String> {
    if cwd.is_empty() {
        return Some("the job has no working directory".to_string());
    }
    match fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => None,
        Ok(_) => Some(format!(
            "the working directory {cwd} is not a directory on this node; submit the job with \
             a directory that exists here"
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(format!(
            "the working directory {cwd} does not exist on this node; create it (or share it \
             with this node), or submit the job with a directory that exists here"
        )),
        Err(e) => Some(format!(
            "the working directory {cwd} cannot be used by the agent's user on this node: {e}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enoent() -> io::Error {
        io::Error::from_raw_os_error(Errno::ENOENT as i32)
    }

    #[test]
    fn missing_cwd_is_named_before_the_program() {
        let msg = explain(&enoent(), "python3", "/no/such/dir", None);
        assert!(
            msg.contains("/no/such/dir") && msg.contains("does not exist"),
            "{msg}"
        );
        let msg = explain(&enoent(), "x", "", None);
        assert!(msg.contains("no working directory"), "{msg}");
    }

    #[test]
    fn cwd_that_is_a_file_is_named() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let cwd = file.path().to_str().unwrap();
        let msg = explain(&enoent(), "x", cwd, None);
        assert!(msg.contains("is not a directory"), "{msg}");
    }

    #[test]
    fn missing_program_mentions_path_or_location() {
        let msg = explain(&enoent(), "trainer", "/", Some(OsStr::new("/usr/bin:/bin")));
        assert!(
            msg.contains("trainer") && msg.contains("PATH=/usr/bin:/bin"),
            "{msg}"
        );
        let msg = explain(&enoent(), "./run.sh", "/tmp", None);
        assert!(msg.contains("/tmp/./run.sh"), "{msg}");
    }

    #[test]
    fn permission_and_format_errors_say_what_to_do() {
        let eacces = io::Error::from_raw_os_error(Errno::EACCES as i32);
        let msg = explain(&eacces, "./run.sh", "/", None);
        assert!(msg.contains("chmod +x"), "{msg}");
        let enoexec = io::Error::from_raw_os_error(Errno::ENOEXEC as i32);
        let msg = explain(&enoexec, "./run.sh", "/", None);
        assert!(msg.contains("#!"), "{msg}");
    }
}
