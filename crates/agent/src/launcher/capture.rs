//! Copies a job's stdout or stderr from its pipe to its log file, creating the file on
//! the first byte, so a job that prints nothing leaves no files behind.

use std::io::Write;

use gpusched_wire::AttemptRef;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::jobdir::{JobDir, Stream};

/// `rank`: the process's global RANK in a part with `tasks_per_node` (its own files),
/// `None` for the attempt's one process.
pub async fn copy(
    mut pipe: impl AsyncRead + Unpin,
    dir: JobDir,
    a: AttemptRef,
    rank: Option<u32>,
    stream: Stream,
) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut file: Option<std::fs::File> = None;
    // Output dropped since the last write failed (a full disk): the job keeps running
    // and its pipe keeps draining; writing resumes, with a note of the gap, once space
    // is back.
    let mut dropped: u64 = 0;
    let mut open_failed = false;
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::warn!(
                    job = a.job,
                    "reading the job's {} failed: {e}",
                    stream.file_name()
                );
                return;
            }
        };
        if open_failed {
            continue; // keep draining so the job never blocks on a full pipe
        }
        if file.is_none() {
            match dir.open_rank_log(a, rank, stream) {
                Ok(f) => file = Some(f),
                Err(e) if is_full(&e) => {
                    note_full(a, stream, dropped, &e);
                    dropped += n as u64;
                    continue;
                }
                Err(e) => {
                    tracing::warn!(job = a.job, "{e}; its output is dropped");
                    open_failed = true;
                    continue;
                }
            }
        }
        let Some(f) = file.as_mut() else { continue };
        // Appends to the page cache take microseconds; no need to leave the worker.
        if dropped > 0 {
            let gap = format!(
                "\n[gpusched: {dropped} bytes of this job's output were dropped: the disk was full]\n"
            );
            if f.write_all(gap.as_bytes()).is_err() {
                dropped += n as u64;
                continue;
            }
            tracing::warn!(
                job = a.job,
                "the job's {} is written again after {dropped} bytes were dropped (disk full)",
                stream.file_name()
            );
            dropped = 0;
        }
        if let Err(e) = f.write_all(&buf[..n]) {
            note_full(a, stream, dropped, &e);
            dropped += n as u64;
        }
    }
}

fn is_full(e: &impl std::fmt::Display) -> bool {
    e.to_string().contains("No space left") || e.to_string().contains("quota exceeded")
}

/// Says once per outage that output is being dropped and that the job goes on.
fn note_full(a: AttemptRef, stream: Stream, dropped: u64, e: &impl std::fmt::Display) {
    if dropped == 0 {
        tracing::warn!(
            job = a.job,
            "cannot write the job's {} ({e}): its output is dropped until there is space \
             again; the job keeps running",
            stream.file_name()
        );
    }
}
