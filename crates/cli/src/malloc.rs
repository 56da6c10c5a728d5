//! How much freed memory a daemon keeps. glibc's malloc raises its mmap and trim
//! thresholds after a large block is freed (up to 32 MiB each), so after one big request
//! (a 10,000-job batch is a multi-megabyte body) it keeps that much freed memory mapped
//! for good: measured 4 MiB of a server's 44 MiB with 10,000 pending jobs
//! (docs/benchmarks.md). Setting both thresholds explicitly turns the adjustment off
//! (mallopt(3)): large blocks are mapped and unmapped per use, and freed memory at the
//! top of the heap is returned beyond 256 KiB.
//!
//! That covers only the top of the heap. A stall (a slow disk holding a commit for
//! seconds while requests pile up) leaves freed memory scattered inside the heap, which
//! glibc never returns by itself: a rate soak's server went from 41 to 79 MiB after one
//! such stall and stayed there (docs/benchmarks.md). So a daemon also asks glibc every
//! [`TRIM_EVERY`] to give back the free pages inside its heaps (`malloc_trim`, which
//! walks the arenas under their locks: a few milliseconds).

/// How often a daemon returns free pages inside its heaps.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// Fixed thresholds for a long-running process, and a thread that trims its heaps.
/// Call before other threads start.
pub fn bound_retained_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes malloc's parameters; called from main before any
        // other thread allocates.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 256 * 1024);
        }
        let spawned = std::thread::Builder::new()
            .name("malloc-trim".into())
            .spawn(|| loop {
                std::thread::sleep(TRIM_EVERY);
                // SAFETY: malloc_trim is thread-safe; 0 keeps no padding.
                unsafe {
                    libc::malloc_trim(0);
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the heap-trimming thread: {e}");
        }
    }
}
