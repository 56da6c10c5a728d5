//! Copies a job's stdout or stderr from its pipe to its log file, creating the file on
//! the first byte, so a job that prints nothing leaves no files behind.

use std::io::Write;

use gpusched_wire::AttemptRef;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::jobdir::{JobDir, Stream};

pub async fn copy(mut pipe: impl AsyncRead + Unpin, dir: JobDir, a: AttemptRef, stream: Stream) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut file: Option<std::fs::File> = None;
    let mut failed = false;
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
        if failed {
            continue; // keep draining so the job never blocks on a full pipe
        }
        if file.is_none() {
            match dir.open_log(a, stream) {
                Ok(f) => file = Some(f),
                Err(e) => {
                    tracing::warn!(job = a.job, "{e}; its output is dropped");
                    failed = true;
                    continue;
                }
            }
        }
        // Appends to the page cache take microseconds; no need to leave the worker.
        if let Some(Err(e)) = file.as_mut().map(|f| f.write_all(&buf[..n])) {
            tracing::warn!(
                job = a.job,
                "writing the job's {} failed: {e}",
                stream.file_name()
            );
            failed = true;
        }
    }
}
