//! How much freed memory a daemon keeps. glibc's malloc raises its mmap and trim
//! thresholds after a large block is freed (up to 32 MiB each), so after one big request
//! (a 10,000-job batch is a multi-megabyte body) it keeps that much freed memory mapped
//! for good: measured 4 MiB of a server's 44 MiB with 10,000 pending jobs
//! (docs/benchmarks.md). Setting both thresholds explicitly turns the adjustment off
//! (mallopt(3)): large blocks are mapped and unmapped per use, and freed memory at the
//! top of the heap is returned beyond 256 KiB.

/// Fixed thresholds for a long-running process. Call before other threads start.
pub fn bound_retained_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes malloc's parameters; called from main before any
    // other thread allocates.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 * 1024);
    }
}
