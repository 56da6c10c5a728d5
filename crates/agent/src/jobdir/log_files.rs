//! Where an attempt's output goes: one pair of log files per process, and which ranks
//! have their own.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use gpusched_wire::AttemptRef;

use super::layout::LOGS;
use super::{io_err, JobDir, JobDirError};

/// One of a job's two output streams.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    pub fn file_name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

impl JobDir {
    /// Whether the attempt wrote any output here (logs are kept after it is
    /// acknowledged; they are created on the first byte).
    pub fn has_logs(&self, a: AttemptRef) -> bool {
        [Stream::Stdout, Stream::Stderr]
            .iter()
            .any(|s| self.log_path(a, *s).exists())
            || !self.log_ranks(a).is_empty()
    }

    /// The global ranks with their own log files here (a part started with
    /// `tasks_per_node`: each process's stdout is created when it starts), ascending.
    pub fn log_ranks(&self, a: AttemptRef) -> Vec<u32> {
        // While the journal holds the launch (running, or its end not yet acknowledged:
        // when `logs -f` asks most), its ranks follow from it without listing the logs.
        if let Some(launch) = self.lock().index.get(&a).and_then(|r| r.launch.as_ref()) {
            return match &launch.dist {
                Some(d) => match d.tasks_per_node {
                    Some(k) => (0..k).map(|l| d.node_rank * k + l).collect(),
                    None => Vec::new(),
                },
                None => Vec::new(),
            };
        }
        // Ended and indexed for retention: the index knows (the journal's lock is let go
        // above; the index's is taken alone).
        if let Some(ranks) = self.log_index().ranks_of(a) {
            return ranks;
        }
        let prefix = format!("{}.{}.rank", a.job, a.attempt);
        let mut ranks: Vec<u32> = fs::read_dir(self.root.join(LOGS))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let rest = name.strip_prefix(&prefix)?;
                let (rank, stream) = rest.split_once('.')?;
                (stream == "stdout" || stream == "stderr")
                    .then(|| rank.parse().ok())
                    .flatten()
            })
            .collect();
        ranks.sort_unstable();
        ranks.dedup();
        ranks
    }

    /// Where the logs are.
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join(LOGS)
    }

    pub fn log_path(&self, a: AttemptRef, stream: Stream) -> PathBuf {
        self.rank_log_path(a, None, stream)
    }

    /// The log of the process with global `rank` (a part with `tasks_per_node`), or of
    /// the attempt's one process (`None`).
    pub fn rank_log_path(&self, a: AttemptRef, rank: Option<u32>, stream: Stream) -> PathBuf {
        let name = match rank {
            None => format!("{}.{}.{}", a.job, a.attempt, stream.file_name()),
            Some(r) => format!("{}.{}.rank{r}.{}", a.job, a.attempt, stream.file_name()),
        };
        self.root.join(LOGS).join(name)
    }

    /// Opens a log for appending, as the job's stdout or stderr.
    pub fn open_log(&self, a: AttemptRef, stream: Stream) -> Result<File, JobDirError> {
        self.open_rank_log(a, None, stream)
    }

    /// [`JobDir::open_log`] for one process of a part (see [`JobDir::rank_log_path`]).
    pub fn open_rank_log(
        &self,
        a: AttemptRef,
        rank: Option<u32>,
        stream: Stream,
    ) -> Result<File, JobDirError> {
        let path = self.rank_log_path(a, rank, stream);
        // Its directory already shuts everyone but root out; the file too, so a log
        // moved or copied elsewhere by an admin stays private.
        OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&path)
            .map_err(io_err("open", &path))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::jobdir::fixtures::{a, launch};

    #[test]
    fn logs_open_for_appending() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = JobDir::open(tmp.path()).unwrap();
        dir.create(&launch(5, 1)).unwrap();
        for text in ["a", "b"] {
            let mut f = dir.open_log(a(5, 1), Stream::Stdout).unwrap();
            f.write_all(text.as_bytes()).unwrap();
        }
        assert_eq!(
            fs::read(dir.log_path(a(5, 1), Stream::Stdout)).unwrap(),
            b"ab"
        );
    }
}
