//! Empty checkpoint directories kept for the next job that would get the same one.
//!
//! Every job gets a checkpoint directory (`GPUSCHED_CHECKPOINT_DIR`, see
//! [`crate::retention`]) and most never write into it. Making one at the start and
//! removing it at the acknowledgement was the largest cost the agent had per trivial
//! job besides the process itself: on ext4 an `mkdir` allocates an inode and a block and
//! an `rmdir` frees both (with `discard`, a trim of the disk), and on an ext4 without a
//! journal the inode allocator also looks past every inode freed in the last seconds to
//! minutes, so the cost per job grew with the rate of jobs and with other writers on the
//! disk (docs/benchmarks.md (zb)). Renaming an empty directory from the last job's name
//! to the next job's costs neither.
//!
//! A directory is kept only when nothing of its last job can show through to the next:
//! it is empty (not even the agent's deadline file), it has no extended attributes (no
//! ACL a user set, no security label), and it has the mode a directory the agent makes
//! gets. It is handed only to a job whose new directory would have the same owner and
//! group, and only under a name no directory has (`renameat2` with `RENAME_NOREPLACE`),
//! so a directory kept from a job's earlier attempt is never replaced. What it does not
//! cover, and cannot: a process of the last job that escaped its process group's SIGKILL
//! (a daemon in a session of its own) and holds the directory open may still write into
//! it under its new name, as it may write anywhere its user can; the next job with the
//! directory is then of the same user. At most [`KEPT`] are kept; the ones left when the
//! agent stops are removed when it starts again.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nix::dir::Dir;
use nix::fcntl::{renameat2, OFlag, RenameFlags};
use nix::sys::stat::{fstat, Mode};

/// The most empty directories kept (one per GPU of a large node, with room).
pub const KEPT: usize = 64;

/// The names of kept directories start with this (never a job's: those are numbers).
const PREFIX: &str = ".spare-";

/// Who owns a directory, and its permission bits (with set-group-ID and sticky).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Look {
    pub uid: u32,
    pub gid: u32,
    pub mode: u32,
}

pub struct SpareDirs {
    /// `<root>/checkpoints`.
    parent: PathBuf,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    spares: Vec<(PathBuf, Look)>,
    next: u64,
    /// How a directory the agent made itself looks: learnt from the first one, as the
    /// umask, the parent's set-group-ID bit and the agent's own ids decide it.
    made: Option<Look>,
}

impl SpareDirs {
    /// The kept directories under `parent`; what an earlier life of the agent left there
    /// is removed (it may have been written into since).
    pub fn open(parent: &Path) -> SpareDirs {
        for e in fs::read_dir(parent).into_iter().flatten().flatten() {
            if e.file_name().as_bytes().starts_with(PREFIX.as_bytes()) {
                if let Err(err) = fs::remove_dir_all(e.path()) {
                    tracing::warn!("cannot remove {}: {err}", e.path().display());
                }
            }
        }
        SpareDirs {
            parent: parent.to_path_buf(),
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every method leaves the list whole between statements.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many are kept now.
    pub fn len(&self) -> usize {
        self.lock().spares.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Notes how `dir`, just made by the agent and not yet given to a job's user, looks:
    /// once.
    pub fn learn(&self, dir: &Path) {
        let mut inner = self.lock();
        if inner.made.is_some() {
            return;
        }
        if let Ok(m) = fs::metadata(dir) {
            use std::os::unix::fs::MetadataExt;
            inner.made = Some(Look {
                uid: m.uid(),
                gid: m.gid(),
                mode: m.mode() & 0o7777,
            });
        }
    }

    /// Moves a kept directory to `dir`, for a job run as `owner` (uid, gid; `None`: as
    /// the agent). False when none fits or `dir` exists: make one then.
    pub fn reuse(&self, dir: &Path, owner: Option<(u32, u32)>) -> bool {
        let mut inner = self.lock();
        let Some(made) = inner.made else {
            return false;
        };
        let (uid, gid) = owner.unwrap_or((made.uid, made.gid));
        let want = Look {
            uid,
            gid,
            mode: made.mode,
        };
        let Some(i) = inner.spares.iter().position(|(_, l)| *l == want) else {
            return false;
        };
        let (spare, _) = inner.spares.swap_remove(i);
        match rename_new(&spare, dir) {
            Ok(()) => true,
            Err(e) => {
                if e.kind() != io::ErrorKind::AlreadyExists {
                    tracing::warn!("cannot move {} to {}: {e}", spare.display(), dir.display());
                }
                // Keep it for another job unless it is gone.
                if spare.exists() {
                    inner.spares.push((spare, want));
                }
                false
            }
        }
    }

    /// Takes `dir` (an ended job's, nothing of that job can start again) to keep, if it
    /// fits (see the module notes). False when it was not taken: `dir` is where it was.
    pub fn offer(&self, dir: &Path) -> bool {
        let mut inner = self.lock();
        let Some(made) = inner.made else {
            return false;
        };
        if inner.spares.len() >= KEPT {
            return false;
        }
        let spare = self.parent.join(format!("{PREFIX}{}", inner.next));
        // Renamed first, looked at after: what a stray writes into it from now on is in
        // the kept directory, where this check sees it.
        if rename_new(dir, &spare).is_err() {
            return false;
        }
        inner.next += 1;
        match look_if_bare(&spare) {
            Ok(Some(look)) if look.mode == made.mode => {
                inner.spares.push((spare, look));
                true
            }
            other => {
                if let Err(e) = other {
                    tracing::warn!("cannot read {}: {e}", spare.display());
                }
                if let Err(e) = rename_new(&spare, dir) {
                    // Its job's files stay, under the kept name; the next start of the
                    // agent removes it.
                    tracing::error!(
                        "cannot move {} back to {}: {e}",
                        spare.display(),
                        dir.display()
                    );
                }
                false
            }
        }
    }
}

/// `rename(from, to)` that fails (`AlreadyExists`) rather than replace an empty `to`.
fn rename_new(from: &Path, to: &Path) -> io::Result<()> {
    renameat2(None, from, None, to, RenameFlags::RENAME_NOREPLACE).map_err(io::Error::from)
}

/// How `dir` looks, if it holds no entry and has no extended attribute.
fn look_if_bare(dir: &Path) -> io::Result<Option<Look>> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mut d = Dir::open(dir, flags, Mode::empty()).map_err(io::Error::from)?;
    let fd = d.as_raw_fd();
    let st = fstat(fd).map_err(io::Error::from)?;
    // SAFETY: a null buffer of size 0 asks only for the size of the name list.
    let names = unsafe { libc::flistxattr(fd, std::ptr::null_mut(), 0) };
    if names > 0 {
        return Ok(None);
    }
    if names < 0 {
        let e = io::Error::last_os_error();
        // A file system without extended attributes has none to carry over.
        if e.raw_os_error() != Some(libc::ENOTSUP) {
            return Err(e);
        }
    }
    for e in d.iter() {
        let e = e.map_err(io::Error::from)?;
        let name = OsStr::from_bytes(e.file_name().to_bytes());
        if name != "." && name != ".." {
            return Ok(None);
        }
    }
    Ok(Some(Look {
        uid: st.st_uid,
        gid: st.st_gid,
        mode: st.st_mode & 0o7777,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn made(parent: &Path, name: &str, spares: &SpareDirs) -> PathBuf {
        let d = parent.join(name);
        fs::create_dir(&d).unwrap();
        spares.learn(&d);
        d
    }

    fn ino(p: &Path) -> u64 {
        fs::metadata(p).unwrap().ino()
    }

    #[test]
    fn an_empty_directory_goes_to_the_next_job_under_its_name() {
        let tmp = tempfile::tempdir().unwrap();
        let spares = SpareDirs::open(tmp.path());
        let one = made(tmp.path(), "1", &spares);
        let was = ino(&one);
        assert!(spares.offer(&one));
        assert!(!one.exists());
        assert_eq!(spares.len(), 1);
        let two = tmp.path().join("2");
        assert!(spares.reuse(&two, None));
        assert_eq!(ino(&two), was, "the same directory, renamed");
        assert!(spares.is_empty());
        // None left: the next job makes its own.
        assert!(!spares.reuse(&tmp.path().join("3"), None));
    }

    #[test]
    fn a_directory_with_anything_of_its_job_stays_where_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let spares = SpareDirs::open(tmp.path());
        made(tmp.path(), "0", &spares);
        // A checkpoint, or only the agent's deadline file: not kept, left as it was.
        for (name, file) in [("1", "checkpoint"), ("2", crate::launcher::DEADLINE_FILE)] {
            let d = tmp.path().join(name);
            fs::create_dir(&d).unwrap();
            fs::write(d.join(file), "x").unwrap();
            assert!(!spares.offer(&d));
            assert_eq!(fs::read_to_string(d.join(file)).unwrap(), "x");
        }
        // Another mode than the agent's (the user changed it).
        let d = tmp.path().join("3");
        fs::create_dir(&d).unwrap();
        let mode = fs::metadata(&d).unwrap().mode() & 0o7777;
        fs::set_permissions(
            &d,
            std::os::unix::fs::PermissionsExt::from_mode(mode ^ 0o005),
        )
        .unwrap();
        assert!(!spares.offer(&d));
        assert!(d.exists());
        // An extended attribute (an ACL is one), where the file system has them.
        let d = tmp.path().join("4");
        fs::create_dir(&d).unwrap();
        let path = std::ffi::CString::new(d.as_os_str().as_bytes()).unwrap();
        // SAFETY: valid C strings and a buffer of the length given.
        let set = unsafe {
            libc::setxattr(
                path.as_ptr(),
                c"user.gpusched-test".as_ptr(),
                b"1".as_ptr().cast(),
                1,
                0,
            )
        };
        if set == 0 {
            assert!(!spares.offer(&d));
            assert!(d.exists());
        }
        assert!(spares.is_empty());
        // Nothing was left under a kept name either.
        let kept: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().as_bytes().starts_with(PREFIX.as_bytes()))
            .collect();
        assert!(kept.is_empty());
    }

    #[test]
    fn only_a_job_with_the_same_owner_gets_one_and_never_over_an_existing_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let spares = SpareDirs::open(tmp.path());
        let one = made(tmp.path(), "1", &spares);
        assert!(spares.offer(&one));
        let me = fs::metadata(tmp.path()).unwrap();
        let other = Some((me.uid() + 1, me.gid()));
        assert!(!spares.reuse(&tmp.path().join("2"), other));
        // A directory kept from the job's earlier attempt (here with a checkpoint) is
        // neither replaced nor changed.
        let kept = tmp.path().join("3");
        fs::create_dir(&kept).unwrap();
        fs::write(kept.join("checkpoint"), "x").unwrap();
        let was = ino(&kept);
        assert!(!spares.reuse(&kept, None));
        assert_eq!(ino(&kept), was);
        // Even an empty one (RENAME_NOREPLACE): the spare stays kept.
        let empty = made(tmp.path(), "4", &spares);
        let was = ino(&empty);
        assert!(!spares.reuse(&empty, None));
        assert_eq!(ino(&empty), was);
        assert_eq!(spares.len(), 1);
        assert!(spares.reuse(&tmp.path().join("5"), None));
    }

    #[test]
    fn at_most_kept_are_kept_and_a_new_life_removes_what_the_last_left() {
        let tmp = tempfile::tempdir().unwrap();
        let spares = SpareDirs::open(tmp.path());
        for i in 0..=KEPT {
            let d = made(tmp.path(), &i.to_string(), &spares);
            assert_eq!(spares.offer(&d), i < KEPT, "offer {i}");
        }
        assert_eq!(spares.len(), KEPT);
        // One written into after it was kept (a stray process): removed all the same.
        let any = fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .find(|e| e.file_name().as_bytes().starts_with(PREFIX.as_bytes()))
            .unwrap();
        fs::write(any.path().join("late"), "x").unwrap();
        drop(spares);
        let again = SpareDirs::open(tmp.path());
        assert!(again.is_empty());
        let left: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, vec![KEPT.to_string()], "only the job's own directory");
    }

    #[test]
    fn nothing_is_kept_before_the_agent_has_made_a_directory_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let spares = SpareDirs::open(tmp.path());
        let d = tmp.path().join("1");
        fs::create_dir(&d).unwrap();
        assert!(!spares.offer(&d));
        assert!(d.exists());
        assert!(!spares.reuse(&tmp.path().join("2"), None));
    }
}
