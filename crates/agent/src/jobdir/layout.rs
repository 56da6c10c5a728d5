//! The state directory's layout: its subdirectories and their modes, and where a job's
//! checkpoint directory is.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{io_err, JobDir, JobDirError};

pub(super) const LOGS: &str = "logs";
pub(super) const HOSTFILES: &str = "hostfiles";
pub(super) const CHECKPOINTS: &str = "checkpoints";

/// Makes the state directory's subdirectories and sets every mode (see below).
pub(super) fn prepare(root: &Path) -> Result<(), JobDirError> {
    for sub in [LOGS, HOSTFILES, CHECKPOINTS] {
        let d = root.join(sub);
        fs::create_dir_all(&d).map_err(io_err("create", &d))?;
    }
    // Jobs' files are their owners' alone. Jobs' output: the agent (root) reads it
    // and serves it to whoever may read it (the server checks), so nobody else
    // enters `logs/`. A job must reach its own checkpoint directory and hostfile,
    // which are its user's (0700, 0600), so the directories on the way are 0711:
    // anyone may pass through, nobody but root may list them, so nobody learns
    // another job's names. Set on every start, so a state directory of an earlier
    // release (0755, or 0700, where no non-root job could use its checkpoint
    // directory) is set right too.
    for (dir, mode) in [
        (root.to_path_buf(), 0o711),
        (root.join(LOGS), 0o700),
        (root.join(HOSTFILES), 0o711),
        (root.join(CHECKPOINTS), 0o711),
    ] {
        fs::set_permissions(&dir, fs::Permissions::from_mode(mode))
            .map_err(io_err("set the mode of", &dir))?;
    }
    warn_if_unreachable(root);
    Ok(())
}

impl JobDir {
    /// The job's checkpoint directory on this node (`GPUSCHED_CHECKPOINT_DIR`), kept
    /// across its attempts here.
    pub fn checkpoint_dir(&self, job: u64) -> PathBuf {
        checkpoint_dir_under(&self.root, job)
    }

    /// The empty checkpoint directories kept for the next jobs.
    pub fn spares(&self) -> &crate::spare_dirs::SpareDirs {
        &self.spares
    }
}

/// Says, once at open, when a directory above the state directory lets no other user
/// through: a job that runs as its submitter could then not reach its checkpoint
/// directory or hostfile (it would fail at its first use of them).
fn warn_if_unreachable(root: &Path) {
    if !nix::unistd::geteuid().is_root() {
        return; // its jobs run as the agent's own user
    }
    let Ok(root) = fs::canonicalize(root) else {
        return;
    };
    for dir in root.ancestors().skip(1) {
        if let Ok(meta) = fs::metadata(dir) {
            if meta.permissions().mode() & 0o001 == 0 {
                tracing::warn!(
                    "{} is mode {:o}: jobs that run as their submitters cannot pass through \
                     it to their checkpoint directories and hostfiles under {}; make it \
                     0711 (chmod o+x) or choose another --state-dir",
                    dir.display(),
                    meta.permissions().mode() & 0o7777,
                    root.display()
                );
                return;
            }
        }
    }
}

/// Where the job's checkpoint directory is under the records' root (for tests that
/// reach into a running job's directory without opening its records).
pub(crate) fn checkpoint_dir_under(root: &Path, job: u64) -> PathBuf {
    root.join(CHECKPOINTS).join(job.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobdir::journal::JOURNAL;

    /// Jobs' output and the journal (commands, environments) are the agent's alone, and
    /// a job's checkpoint directory its owner's: another user on the node reads none of
    /// them (a state directory of an earlier release is closed at the next start).
    #[test]
    fn logs_and_the_journal_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        drop(JobDir::open(tmp.path()).unwrap());
        let logs = tmp.path().join(LOGS);
        fs::set_permissions(&logs, fs::Permissions::from_mode(0o755)).unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        assert_eq!(mode(&logs), 0o700);
        assert_eq!(mode(&tmp.path().join(JOURNAL)), 0o600);
        drop(dir);
    }
}
