//! Empty checkpoint directories kept for the next job that would get the same one.
//!
//! Every job gets a checkpoint directory (`GPUSCHED_CHECKPOINT_DIR`, see
//! [`crate::retention`]) and most never write into it. Making one at the start and
//! removing it at the acknowledgement was the largest cost the agent had per trivial
//! job besides the process itself: on ext4 an `mkdir` allocates an inode and a block and
//! an `rmdir` frees both (with `discard`, a trim of the disk), and on an ext4 without a
//! journal the inode allocator also looks past every inode freed in the last seconds to
//! minutes, so the cost per job grew with the rate of jobs and with other writers on the
//! disk (docs/benchmarks-log.md (zb)). Renaming an empty directory from the last job's name
//! to the next job's costs neither.
//!
//! A directory is *bare* when it holds no entry and looks exactly like one the agent has
//! just made: no extended attribute (no ACL, no security label), the same mode, size and
//! inode flags (an encryption policy, case folding, no-COW are flags). Only a bare
//! directory is kept, checked through a descriptor opened without following links before
//! it is renamed away from the job's name, so a directory with anything of its job in it
//! never moves. It is handed to a job whose new directory would have the same owner and
//! group, under a name no directory has (`renameat2` with `RENAME_NOREPLACE`, so a
//! directory kept from the job's earlier attempt is never replaced), and checked again
//! there: while kept, any process of its user could reach it by its path (and a stray
//! process of its last job could write into it between the check and the rename), so
//! it must still be bare, or it is removed with what was put in it and a new one made.
//! After the handover the directory is the new job's, which its user's processes may
//! write into like any of that user's job directories.
//!
//! Where a directory the agent makes is not bare itself (a security label on every
//! inode, a default ACL on `checkpoints/`), nothing is kept: each job's is made and
//! removed as before. At most [`KEPT`] are kept, the oldest removed first; the ones left
//! when the agent stops are removed when it starts again.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nix::fcntl::{renameat2, RenameFlags};

/// The most empty directories kept (one per GPU of a large node, with room).
pub const KEPT: usize = 64;

/// The names of kept directories start with this (never a job's: those are numbers).
pub const PREFIX: &str = ".spare-";

/// Tries at a free kept name before giving up on keeping one.
const NAME_TRIES: u32 = 8;

/// What makes two empty directories interchangeable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Look {
    pub uid: u32,
    pub gid: u32,
    /// Permission bits, with set-group-ID and sticky.
    pub mode: u32,
    /// An ext4 directory never shrinks: one that held many entries stays large.
    pub size: i64,
    /// `FS_IOC_GETFLAGS`, where the file system has them.
    pub flags: Option<u32>,
}

impl Look {
    fn owned_by(self, uid: u32, gid: u32) -> Look {
        Look { uid, gid, ..self }
    }
}

/// What the agent has learnt of the directories it makes.
#[derive(Clone, Copy, Debug)]
enum Made {
    Unknown,
    Bare(Look),
    /// They are not bare when new: keep none.
    Off,
}

pub struct SpareDirs {
    /// `<root>/checkpoints`.
    parent: PathBuf,
    inner: Mutex<Inner>,
}

struct Inner {
    /// Oldest first.
    spares: VecDeque<(PathBuf, Look)>,
    next: u64,
    made: Made,
}

impl SpareDirs {
    /// The kept directories under `parent`; what an earlier life of the agent left there
    /// is removed (at most a stray process's files: each was bare when kept).
    pub fn open(parent: &Path) -> SpareDirs {
        let mut next = 0;
        for e in fs::read_dir(parent).into_iter().flatten().flatten() {
            let name = e.file_name();
            let Some(n) = name.as_bytes().strip_prefix(PREFIX.as_bytes()) else {
                continue;
            };
            // A leftover that cannot go keeps its name: later ones are numbered past it.
            if let Some(n) = std::str::from_utf8(n)
                .ok()
                .and_then(|n| n.parse::<u64>().ok())
            {
                next = next.max(n.saturating_add(1));
            }
            remove_kept(&e.path());
        }
        SpareDirs {
            parent: parent.to_path_buf(),
            inner: Mutex::new(Inner {
                spares: VecDeque::new(),
                next,
                made: Made::Unknown,
            }),
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

    /// Whether directories are kept here: the agent has made one, it was bare, and the
    /// file system renames without replacing.
    pub fn keeping(&self) -> bool {
        matches!(self.lock().made, Made::Bare(_))
    }

    /// Notes how `dir`, just made by the agent and not yet given to a job's user, looks
    /// (once); if it is not bare, no directory will be kept.
    pub fn learn(&self, dir: &Path) {
        let mut inner = self.lock();
        if !matches!(inner.made, Made::Unknown) {
            return;
        }
        match open_dir(dir).and_then(|d| look_if_bare(&d)) {
            Ok(Some(look)) => inner.made = Made::Bare(look),
            Ok(None) => {
                inner.made = Made::Off;
                tracing::info!(
                    "a new directory under {} has extended attributes (a security label or \
                     a default ACL): each job's checkpoint directory is made and removed, \
                     none is kept for the next job",
                    self.parent.display()
                );
            }
            // Try again with the next one.
            Err(e) => tracing::debug!("cannot look at {}: {e}", dir.display()),
        }
    }

    /// Moves a kept directory to `dir`, for a job run as `owner` (uid, gid; `None`: as
    /// the agent). `Ok(false)` when none fits or `dir` exists: make one then. An error
    /// only when a kept one moved there was no longer bare and could not be removed.
    pub fn reuse(&self, dir: &Path, owner: Option<(u32, u32)>) -> io::Result<bool> {
        let mut inner = self.lock();
        let Made::Bare(made) = inner.made else {
            return Ok(false);
        };
        let want = match owner {
            Some((uid, gid)) => made.owned_by(uid, gid),
            None => made,
        };
        // The newest: the likeliest to be still warm in the caches.
        let Some(i) = inner.spares.iter().rposition(|(_, l)| *l == want) else {
            return Ok(false);
        };
        let Some((spare, _)) = inner.spares.remove(i) else {
            return Ok(false);
        };
        if let Err(e) = rename_new(&spare, dir) {
            if e.kind() == io::ErrorKind::AlreadyExists {
                // The job's own directory is there (an earlier attempt's).
                inner.spares.insert(i, (spare, want));
            } else {
                tracing::warn!("cannot move {} to {}: {e}", spare.display(), dir.display());
                remove_kept(&spare);
            }
            return Ok(false);
        }
        // Its user may have reached it while it was kept, and a stray process of its last
        // job may have written into it as it was moved there: it must still be bare.
        match open_dir(dir).and_then(|d| look_if_bare(&d)) {
            Ok(Some(look)) if look == want => Ok(true),
            // Away from the job's name, removed if it can be, else left under a kept
            // name (the next start of the agent tries again) without being kept.
            _ if remove_kept(dir) || self.rename_aside(&mut inner, dir).is_some() => Ok(false),
            _ => Err(io::Error::other(format!(
                "a kept empty directory moved to {} was changed meanwhile and can be \
                 neither removed nor moved away",
                dir.display()
            ))),
        }
    }

    /// Renames `dir` to a free kept name; `None` if none could be had.
    fn rename_aside(&self, inner: &mut Inner, dir: &Path) -> Option<PathBuf> {
        for _ in 0..NAME_TRIES {
            let name = self.parent.join(format!("{PREFIX}{}", inner.next));
            inner.next += 1;
            match rename_new(dir, &name) {
                Ok(()) => return Some(name),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    if e.raw_os_error() == Some(libc::EINVAL) {
                        // No RENAME_NOREPLACE here (NFS): keep none, check none.
                        inner.made = Made::Off;
                        tracing::info!(
                            "{} cannot rename without replacing: each job's checkpoint \
                             directory is made and removed, none is kept for the next job",
                            self.parent.display()
                        );
                    }
                    return None;
                }
            }
        }
        None
    }

    /// Takes `dir` (an ended job's, with no attempt of the job held here) to keep, if it
    /// is bare. False when it was not taken: `dir` is where it was, as it was.
    pub fn offer(&self, dir: &Path) -> bool {
        let mut inner = self.lock();
        let Made::Bare(made) = inner.made else {
            return false;
        };
        // Checked before it moves: one with anything of its job never leaves its name.
        // (What a stray process writes into it from now on is found at the handover.)
        let look = match open_dir(dir).and_then(|d| look_if_bare(&d)) {
            Ok(Some(l)) if l == made.owned_by(l.uid, l.gid) => l,
            _ => return false,
        };
        let Some(spare) = self.rename_aside(&mut inner, dir) else {
            return false;
        };
        if inner.spares.len() >= KEPT {
            if let Some((oldest, _)) = inner.spares.pop_front() {
                remove_kept(&oldest);
            }
        }
        inner.spares.push_back((spare, look));
        true
    }
}

/// `rename(from, to)` that fails (`AlreadyExists`) rather than replace an empty `to`.
fn rename_new(from: &Path, to: &Path) -> io::Result<()> {
    renameat2(None, from, None, to, RenameFlags::RENAME_NOREPLACE).map_err(io::Error::from)
}

/// The directory itself, never what a link there points to.
fn open_dir(dir: &Path) -> io::Result<File> {
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir)
}

/// Removes a kept directory (never a job's: each was bare when kept, so what is in it
/// came from a stray process). False if it is still there.
fn remove_kept(path: &Path) -> bool {
    let gone = match fs::remove_dir(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(_) => fs::remove_dir_all(path),
    };
    match gone {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!("cannot remove {}: {e}", path.display());
            false
        }
    }
}

/// How the directory open as `d` looks, if it is bare but for its owner (no entry, no
/// extended attribute). Five system calls, two of them `getdents64`: this runs twice a
/// job.
fn look_if_bare(d: &File) -> io::Result<Option<Look>> {
    let fd = d.as_raw_fd();
    let st = d.metadata()?;
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
    let mut flags: libc::c_int = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one int to the pointer given.
    let got = unsafe { libc::ioctl(fd, libc::FS_IOC_GETFLAGS, &mut flags as *mut libc::c_int) };
    if !is_empty(fd)? {
        return Ok(None);
    }
    Ok(Some(Look {
        uid: st.uid(),
        gid: st.gid(),
        mode: st.mode() & 0o7777,
        size: st.size() as i64,
        flags: (got == 0).then_some(flags as u32),
    }))
}

/// Whether the directory open as `fd` (at its start) has no entry but `.` and `..`:
/// `getdents64` read straight (`readdir` through `fdopendir` costs three more calls).
fn is_empty(fd: libc::c_int) -> io::Result<bool> {
    // linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name[].
    const NAME_AT: usize = 19;
    let mut buf = [0u64; 128];
    loop {
        // SAFETY: the buffer is valid for its length in bytes, and 8-byte aligned.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                fd,
                buf.as_mut_ptr().cast::<u8>(),
                std::mem::size_of_val(&buf),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(true);
        }
        // SAFETY: the kernel wrote `n` bytes, within the buffer.
        let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize) };
        let mut at = 0;
        while at + NAME_AT < bytes.len() {
            let len = usize::from(u16::from_ne_bytes([bytes[at + 16], bytes[at + 17]]));
            if len <= NAME_AT || at + len > bytes.len() {
                return Err(io::Error::other(
                    "a directory entry of an impossible length",
                ));
            }
            let name = &bytes[at + NAME_AT..at + len];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if name != b"." && name != b".." {
                return Ok(false);
            }
            at += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn made(parent: &Path, name: &str, spares: &SpareDirs) -> PathBuf {
        let d = parent.join(name);
        fs::create_dir(&d).unwrap();
        spares.learn(&d);
        d
    }

    /// A list over `parent` where keeping works (the agent has made a bare directory);
    /// `None` where new directories are not bare (a security label on every inode):
    /// there the tests of keeping have nothing to test.
    fn keeping_in(parent: &Path) -> Option<SpareDirs> {
        let spares = SpareDirs::open(parent);
        let probe = parent.join("probe");
        fs::create_dir(&probe).unwrap();
        spares.learn(&probe);
        fs::remove_dir(&probe).unwrap();
        if spares.keeping() {
            return Some(spares);
        }
        eprintln!(
            "skipped: new directories under {} are not bare",
            parent.display()
        );
        None
    }

    fn ino(p: &Path) -> u64 {
        fs::metadata(p).unwrap().ino()
    }

    fn kept_names(parent: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(parent)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(PREFIX))
            .collect();
        v.sort();
        v
    }

    /// Sets a file's inode flags (`FS_IOC_SETFLAGS`); false where the file system or
    /// the caller's capabilities do not allow them.
    fn set_flags(p: &Path, flags: libc::c_int) -> bool {
        let f = File::open(p).unwrap();
        // SAFETY: FS_IOC_SETFLAGS reads one int from the pointer given.
        unsafe { libc::ioctl(f.as_raw_fd(), libc::FS_IOC_SETFLAGS, &flags) == 0 }
    }

    /// Sets (or clears) a file's immutable flag; false without the capability.
    fn immutable(p: &Path, on: bool) -> bool {
        set_flags(p, if on { 0x10 } else { 0 })
    }

    /// Offers a directory the agent made as `name` and returns its kept path.
    fn kept_one(parent: &Path, name: &str, spares: &SpareDirs) -> PathBuf {
        let d = made(parent, name, spares);
        assert!(spares.offer(&d));
        parent.join(&kept_names(parent)[0])
    }

    /// Sets a user extended attribute; false where the file system has none.
    fn set_xattr(p: &Path) -> bool {
        let path = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: valid C strings and a buffer of the length given.
        let r = unsafe {
            libc::setxattr(
                path.as_ptr(),
                c"user.gpusched-test".as_ptr(),
                b"1".as_ptr().cast(),
                1,
                0,
            )
        };
        if r == 0 {
            return true;
        }
        let e = io::Error::last_os_error();
        assert_eq!(e.raw_os_error(), Some(libc::ENOTSUP), "setxattr: {e}");
        false
    }

    #[test]
    fn an_empty_directory_goes_to_the_next_job_under_its_name() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(spares) = keeping_in(tmp.path()) else {
            return;
        };
        let one = made(tmp.path(), "1", &spares);
        let was = ino(&one);
        assert!(spares.offer(&one));
        assert!(!one.exists());
        assert_eq!(kept_names(tmp.path()).len(), 1);
        let two = tmp.path().join("2");
        assert!(spares.reuse(&two, None).unwrap());
        assert_eq!(ino(&two), was, "the same directory, renamed");
        assert!(spares.is_empty() && kept_names(tmp.path()).is_empty());
        // None left: the next job makes its own.
        assert!(!spares.reuse(&tmp.path().join("3"), None).unwrap());
    }

    #[test]
    fn a_directory_with_anything_of_its_job_never_leaves_its_name() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(spares) = keeping_in(tmp.path()) else {
            return;
        };
        made(tmp.path(), "0", &spares);
        // A checkpoint, or only the agent's deadline file.
        for (name, file) in [("1", "checkpoint"), ("2", crate::launcher::DEADLINE_FILE)] {
            let d = tmp.path().join(name);
            fs::create_dir(&d).unwrap();
            fs::write(d.join(file), "x").unwrap();
            let changed = |d: &Path| {
                let m = fs::metadata(d).unwrap();
                (m.ino(), m.ctime(), m.ctime_nsec())
            };
            let was = changed(&d);
            assert!(!spares.offer(&d));
            assert_eq!(fs::read_to_string(d.join(file)).unwrap(), "x");
            assert_eq!(changed(&d), was, "never renamed");
        }
        // Another mode than the agent's (its user changed it).
        let d = tmp.path().join("3");
        fs::create_dir(&d).unwrap();
        let mode = fs::metadata(&d).unwrap().mode() & 0o7777;
        fs::set_permissions(&d, fs::Permissions::from_mode(mode ^ 0o005)).unwrap();
        assert!(!spares.offer(&d) && d.exists());
        // An extended attribute (an ACL is one), where the file system has them.
        let d = tmp.path().join("4");
        fs::create_dir(&d).unwrap();
        if set_xattr(&d) {
            assert!(!spares.offer(&d) && d.exists());
        }
        // Grown by many entries, then emptied: larger than a new one.
        let d = tmp.path().join("5");
        fs::create_dir(&d).unwrap();
        let names: Vec<_> = (0..400).map(|i| d.join(format!("{i:0>60}"))).collect();
        for n in &names {
            fs::write(n, "").unwrap();
        }
        for n in &names {
            fs::remove_file(n).unwrap();
        }
        if fs::metadata(&d).unwrap().size() != fs::metadata(tmp.path().join("0")).unwrap().size() {
            assert!(!spares.offer(&d) && d.exists());
        }
        // An inode flag (no access times; an encryption policy or case folding are
        // flags too), where the file system lets its owner set one.
        let d = tmp.path().join("9");
        fs::create_dir(&d).unwrap();
        if set_flags(&d, 0x80) {
            assert!(!spares.offer(&d) && d.exists());
        }
        // A link to an empty directory: neither it nor what it points to moves.
        let target = made(tmp.path(), "6", &spares);
        let link = tmp.path().join("7");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(!spares.offer(&link));
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(target.is_dir());
        // A file where the directory was.
        let file = tmp.path().join("8");
        fs::write(&file, "").unwrap();
        assert!(!spares.offer(&file) && file.is_file());
        assert!(spares.is_empty());
        assert!(kept_names(tmp.path()).is_empty());
    }

    #[test]
    fn only_a_job_with_the_same_owner_and_group_gets_one_never_over_a_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(spares) = keeping_in(tmp.path()) else {
            return;
        };
        let one = made(tmp.path(), "1", &spares);
        assert!(spares.offer(&one));
        let me = fs::metadata(tmp.path()).unwrap();
        for other in [(me.uid() + 1, me.gid()), (me.uid(), me.gid() + 1)] {
            assert!(!spares.reuse(&tmp.path().join("2"), Some(other)).unwrap());
        }
        assert!(!tmp.path().join("2").exists());
        // A directory kept from the job's earlier attempt is neither replaced nor
        // changed, with a checkpoint in it or empty (RENAME_NOREPLACE).
        let kept = tmp.path().join("3");
        fs::create_dir(&kept).unwrap();
        fs::write(kept.join("checkpoint"), "x").unwrap();
        let empty = tmp.path().join("4");
        fs::create_dir(&empty).unwrap();
        for d in [&kept, &empty] {
            let was = ino(d);
            assert!(!spares.reuse(d, None).unwrap());
            assert_eq!(ino(d), was);
        }
        assert!(kept.join("checkpoint").exists());
        assert_eq!(spares.len(), 1);
        assert!(spares
            .reuse(&tmp.path().join("5"), Some((me.uid(), me.gid())))
            .unwrap());
    }

    #[test]
    fn one_changed_while_kept_is_removed_at_the_handover_and_a_new_one_made() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(spares) = keeping_in(tmp.path()) else {
            return;
        };
        // Its user writes into it by its kept name.
        let kept = kept_one(tmp.path(), "1", &spares);
        fs::write(kept.join("planted"), "x").unwrap();
        let two = tmp.path().join("2");
        assert!(!spares.reuse(&two, None).unwrap());
        assert!(!two.exists(), "removed: the caller makes a new one");
        assert!(!kept.exists() && spares.is_empty());
        // Or gives it an extended attribute, or changes its mode.
        let kept = kept_one(tmp.path(), "3", &spares);
        if !set_xattr(&kept) {
            let mode = fs::metadata(&kept).unwrap().mode() & 0o7777;
            fs::set_permissions(&kept, fs::Permissions::from_mode(mode | 0o007)).unwrap();
        }
        assert!(!spares.reuse(&two, None).unwrap());
        assert!(!two.exists());
    }

    #[test]
    fn one_changed_while_kept_that_cannot_be_removed_is_moved_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(spares) = keeping_in(tmp.path()) else {
            return;
        };
        let kept = kept_one(tmp.path(), "1", &spares);
        let planted = kept.join("planted");
        fs::write(&planted, "x").unwrap();
        // An immutable file in it (root only) makes it impossible to remove.
        if !immutable(&planted, true) {
            return;
        }
        let two = tmp.path().join("2");
        let reused = spares.reuse(&two, None);
        let aside: Vec<String> = kept_names(tmp.path());
        for n in &aside {
            let p = tmp.path().join(n).join("planted");
            if p.exists() {
                immutable(&p, false);
            }
        }
        assert!(!reused.unwrap(), "not handed over");
        assert!(!two.exists(), "not left under the job's name");
        assert_eq!(aside.len(), 1, "{aside:?}");
        assert!(spares.is_empty(), "and not kept");
    }

    #[test]
    fn at_most_kept_are_kept_and_a_new_life_removes_what_the_last_left() {
        let tmp = tempfile::tempdir().unwrap();
        let Some(spares) = keeping_in(tmp.path()) else {
            return;
        };
        let first = made(tmp.path(), "0", &spares);
        let first_ino = ino(&first);
        assert!(spares.offer(&first));
        for i in 1..=KEPT {
            let d = made(tmp.path(), &i.to_string(), &spares);
            assert!(spares.offer(&d), "offer {i}");
        }
        // Full: the oldest made room for the newest.
        assert_eq!(spares.len(), KEPT);
        assert_eq!(kept_names(tmp.path()).len(), KEPT);
        let inos: Vec<u64> = kept_names(tmp.path())
            .iter()
            .map(|n| ino(&tmp.path().join(n)))
            .collect();
        assert!(!inos.contains(&first_ino));
        // One written into after it was kept (a stray process): removed all the same.
        let any = tmp.path().join(&kept_names(tmp.path())[0]);
        fs::write(any.join("late"), "x").unwrap();
        drop(spares);
        let again = SpareDirs::open(tmp.path());
        assert!(again.is_empty());
        assert!(kept_names(tmp.path()).is_empty());
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_leftover_that_cannot_be_removed_does_not_stop_keeping() {
        let tmp = tempfile::tempdir().unwrap();
        // A file under a kept name (nothing the agent makes; removing a directory
        // fails on it).
        fs::write(tmp.path().join(format!("{PREFIX}0")), "").unwrap();
        let Some(spares) = keeping_in(tmp.path()) else {
            return;
        };
        let one = made(tmp.path(), "1", &spares);
        assert!(spares.offer(&one));
        assert_eq!(spares.len(), 1);
        assert!(spares.reuse(&tmp.path().join("2"), None).unwrap());
    }

    #[test]
    fn nothing_is_kept_before_the_agent_made_one_or_where_new_ones_are_not_bare() {
        let tmp = tempfile::tempdir().unwrap();
        let spares = SpareDirs::open(tmp.path());
        let d = tmp.path().join("1");
        fs::create_dir(&d).unwrap();
        assert!(!spares.offer(&d) && d.exists());
        assert!(!spares.reuse(&tmp.path().join("2"), None).unwrap());
        // The agent's first new directory has an attribute (as under a security label
        // on every inode): it keeps none, ever.
        let labelled = tmp.path().join("3");
        fs::create_dir(&labelled).unwrap();
        if set_xattr(&labelled) {
            spares.learn(&labelled);
            let plain = made(tmp.path(), "4", &spares);
            assert!(!spares.offer(&plain) && plain.exists());
        }
    }
}
