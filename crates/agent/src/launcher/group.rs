//! Signalling a job's process group, and deciding whether a recorded group id still
//! names the job's processes before recovery kills it.

use std::fs;

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::{getpgrp, Pid};

use crate::jobdir::PidRecord;

/// Sends `signal` to every process in group `pgid`. An empty group (`ESRCH`) is not an
/// error: the processes are already gone. Ids that would reach the agent itself (0, 1,
/// its own group) are refused, since a corrupt record must never turn into killing the
/// agent or init.
pub fn signal_group(pgid: u32, signal: Signal) -> Result<(), Errno> {
    let Ok(raw) = i32::try_from(pgid) else {
        return Err(Errno::EINVAL);
    };
    if raw <= 1 || Pid::from_raw(raw) == getpgrp() {
        return Err(Errno::EINVAL);
    }
    match killpg(Pid::from_raw(raw), signal) {
        Ok(()) | Err(Errno::ESRCH) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Like [`signal_group`], logging instead of returning the error: used where nothing
/// better can be done than to say it failed.
pub fn signal_group_logged(pgid: u32, signal: Signal) {
    if let Err(e) = signal_group(pgid, signal) {
        tracing::warn!("could not send {signal} to process group {pgid}: {e}");
    }
}

/// The start time of process `pid` in clock ticks since boot, `/proc/<pid>/stat` field
/// 22; `None` if there is no such process.
pub fn start_ticks(pid: u32) -> Option<u64> {
    use std::io::Read;
    let file = fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    // Read through `Take`, into room for the whole line (a few hundred bytes; it grows
    // if ever needed): one read and one to see its end. `fs::read_to_string` (like
    // `File`'s own `read_to_end`) first asks the file's size (a statx and an lseek, for
    // a size that reads 0 here) and then read it in six growing pieces: nine system
    // calls a job where four do.
    let mut stat = Vec::with_capacity(1024);
    file.take(u64::MAX).read_to_end(&mut stat).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces, `)` or bytes
    // that are not UTF-8, so count fields from the last `)`: what follows starts at
    // field 3 and is ASCII.
    let after_name =
        std::str::from_utf8(&stat[stat.iter().rposition(|&b| b == b')')? + 1..]).ok()?;
    after_name.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// This boot's id; it changes at every boot. Read once: a process never outlives the
/// boot it started in, and every job's pid record carries it (six system calls a job).
pub fn boot_id() -> Option<String> {
    static BOOT_ID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BOOT_ID
        .get_or_init(|| {
            fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .ok()
                .map(|s| s.trim().to_string())
        })
        .clone()
}

/// Whether recovery may kill the recorded group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupVerdict {
    /// Any process in the group is the job's.
    Ours,
    /// Killing the group could hit unrelated processes; the reason says why.
    NotOurs(&'static str),
}

/// Decides from the record, this boot's id and the current start time of process
/// `pgid` (`None`: no such process). The kernel does not hand out a number while it
/// still names a live process group, so:
/// - no process with that number: any group by that id is what is left of the job's;
/// - a process whose start time matches the record: the job's leader, still there;
/// - a process with another start time: the number was reused after the job's group
///   emptied, so the group is someone else's.
pub fn verdict(
    record: &PidRecord,
    current_boot: Option<&str>,
    leader_start_now: Option<u64>,
) -> GroupVerdict {
    if let (Some(then), Some(now)) = (record.boot_id.as_deref(), current_boot) {
        if then != now {
            return GroupVerdict::NotOurs("the machine rebooted since, which ended the job");
        }
    }
    match (leader_start_now, record.leader_start_ticks) {
        (None, _) => GroupVerdict::Ours,
        (Some(now), Some(then)) if now == then => GroupVerdict::Ours,
        (Some(_), Some(_)) => GroupVerdict::NotOurs("its process id now belongs to another process"),
        (Some(_), None) => GroupVerdict::NotOurs(
            "a process with its id exists but the job's start time was not recorded to tell them apart",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(boot: Option<&str>, start: Option<u64>) -> PidRecord {
        PidRecord {
            pgid: 4321,
            leader_start_ticks: start,
            boot_id: boot.map(str::to_string),
        }
    }

    #[test]
    fn reads_this_process_start_time_and_boot_id() {
        // Field 22, counted after the name: the same as splitting the whole line.
        let line = fs::read_to_string(format!("/proc/{}/stat", std::process::id())).unwrap();
        let fields: Vec<&str> = line[line.rfind(')').unwrap() + 2..].split(' ').collect();
        assert_eq!(start_ticks(std::process::id()), fields[19].parse().ok());
        assert!(start_ticks(std::process::id()).is_some());
        assert_eq!(start_ticks(u32::MAX), None);
        // A name with spaces, a `)` and a byte that is not UTF-8 (threads have a
        // `/proc/<tid>/stat` too; the kernel keeps 15 bytes of a name).
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let named = std::thread::spawn(move || {
            let name = std::ffi::CString::new(b"x) (y \xff".to_vec()).unwrap();
            // SAFETY: PR_SET_NAME reads a NUL-terminated string that outlives the call.
            let set = unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
            tx.send((set, nix::unistd::gettid().as_raw() as u32))
                .unwrap();
            done_rx.recv().unwrap();
        });
        let (set, tid) = rx.recv().unwrap();
        assert_eq!(set, 0);
        let comm = fs::read(format!("/proc/{tid}/comm")).unwrap();
        assert_eq!(comm, b"x) (y \xff\n");
        assert!(start_ticks(tid).is_some());
        done_tx.send(()).unwrap();
        named.join().unwrap();
        assert!(
            boot_id().is_some_and(|id| id.len() == 36),
            "{:?}",
            boot_id()
        );
    }

    #[test]
    fn verdicts() {
        let r = record(Some("boot-a"), Some(100));
        assert_eq!(verdict(&r, Some("boot-a"), None), GroupVerdict::Ours);
        assert_eq!(verdict(&r, Some("boot-a"), Some(100)), GroupVerdict::Ours);
        assert!(matches!(
            verdict(&r, Some("boot-a"), Some(101)),
            GroupVerdict::NotOurs(_)
        ));
        assert!(matches!(
            verdict(&r, Some("boot-b"), None),
            GroupVerdict::NotOurs(_)
        ));
        let unknown_start = record(Some("boot-a"), None);
        assert_eq!(
            verdict(&unknown_start, Some("boot-a"), None),
            GroupVerdict::Ours
        );
        assert!(matches!(
            verdict(&unknown_start, Some("boot-a"), Some(5)),
            GroupVerdict::NotOurs(_)
        ));
        // Without boot ids, the start time still decides.
        assert_eq!(
            verdict(&record(None, Some(7)), None, Some(7)),
            GroupVerdict::Ours
        );
    }

    #[test]
    fn refuses_to_signal_init_or_the_agents_own_group() {
        assert_eq!(signal_group(0, Signal::SIGKILL), Err(Errno::EINVAL));
        assert_eq!(signal_group(1, Signal::SIGKILL), Err(Errno::EINVAL));
        let own = getpgrp().as_raw() as u32;
        assert_eq!(signal_group(own, Signal::SIGKILL), Err(Errno::EINVAL));
        assert_eq!(signal_group(u32::MAX, Signal::SIGKILL), Err(Errno::EINVAL));
    }
}
