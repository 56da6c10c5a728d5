//! Shared helpers of the simulator's integration tests.

use std::path::PathBuf;

/// `../shared/traces/<rel>` beside the repository, where CI lays the real traces.
pub fn shared_trace(rel: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    let path = root.join(rel);
    assert!(
        path.exists(),
        "{} is missing: the tests read the real traces from ../shared/traces beside the repository",
        path.display()
    );
    path
}
