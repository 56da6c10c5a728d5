//! Hostfiles: the one every job of one node shares, and a gang's own, per attempt.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use gpusched_wire::AttemptRef;

use super::layout::HOSTFILES;
use super::JobDir;

impl JobDir {
    /// The hostfile every job of one node with this `text` shares (named after it).
    pub fn node_hostfile_path(&self, text: &str) -> PathBuf {
        let name: String = text
            .trim()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '=' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.root.join(HOSTFILES).join(format!("node-{name}"))
    }

    /// Writes a shared hostfile unless it is already there: a new file renamed over the
    /// name, so a job never reads half of one. A file this agent wrote (its name says its
    /// text) is only checked to still exist, not read again for every job.
    pub fn write_shared_hostfile(&self, path: &Path, text: &str) -> io::Result<()> {
        let known = || {
            self.hostfiles
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if known().contains(path) && path.exists() {
            return Ok(());
        }
        if !fs::read_to_string(path).is_ok_and(|t| t == text) {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
            // Every job of this node and size reads it, whoever runs it; it holds only
            // the node's address and slot count, nothing of any job.
            let mut f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o644)
                .open(&tmp)?;
            f.set_permissions(fs::Permissions::from_mode(0o644))?;
            f.write_all(text.as_bytes())?;
            drop(f);
            fs::rename(&tmp, path)?;
        }
        known().insert(path.to_path_buf());
        Ok(())
    }

    /// Writes an attempt's own hostfile (a gang's nodes) readable by its job's user
    /// alone (`owner`, uid and gid; the agent's own user when `None`): it names the
    /// other nodes and ports the job uses, which other users have no business reading.
    pub fn write_job_hostfile(
        &self,
        path: &Path,
        text: &str,
        owner: Option<(u32, u32)>,
    ) -> io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        // An earlier file of that name may have had another mode or owner.
        f.set_permissions(fs::Permissions::from_mode(0o600))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::fchown(&f, Some(uid), Some(gid))?;
        }
        f.write_all(text.as_bytes())
    }

    /// Where the attempt's hostfile goes (`GPUSCHED_HOSTFILE`).
    pub fn hostfile_path(&self, a: AttemptRef) -> PathBuf {
        self.root
            .join(HOSTFILES)
            .join(format!("{}.{}", a.job, a.attempt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_of_one_node_share_a_hostfile_named_after_its_text() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        let two = dir.node_hostfile_path("10.0.0.5 slots=2\n");
        let four = dir.node_hostfile_path("10.0.0.5 slots=4\n");
        let v6 = dir.node_hostfile_path("fe80::1 slots=2\n");
        assert_ne!(two, four);
        assert!(two.ends_with("node-10.0.0.5_slots=2"), "{}", two.display());
        assert!(v6.ends_with("node-fe80__1_slots=2"), "{}", v6.display());
        dir.write_shared_hostfile(&two, "10.0.0.5 slots=2\n")
            .unwrap();
        dir.write_shared_hostfile(&two, "10.0.0.5 slots=2\n")
            .unwrap();
        assert_eq!(fs::read_to_string(&two).unwrap(), "10.0.0.5 slots=2\n");
        // Nothing else was left in the directory.
        assert_eq!(fs::read_dir(two.parent().unwrap()).unwrap().count(), 1);
    }
}
