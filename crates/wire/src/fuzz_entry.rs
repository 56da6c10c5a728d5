//! Entry points of the fuzz targets in `fuzz/` (one per target), kept here so that the
//! replay tests below run the very code the fuzzer ran, on every `cargo test`.
//! Each takes arbitrary bytes and must return without panicking.

use crate::{parse_duration, parse_mib, JobFile};

/// Durations and memory sizes (`-t`, `--mem`, `--gpu-mem`, `walltime`, `--since`).
pub fn durations_and_sizes(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(secs) = parse_duration(text) {
        // What was accepted reads back as plain seconds, the same value.
        assert_eq!(parse_duration(&secs.to_string()), Ok(secs), "{text:?}");
    }
    if let Ok(mib) = parse_mib(text) {
        assert!(mib >= 1, "{text:?} read as {mib} MiB");
    }
}

/// A TOML job file (`gpusched submit --file`).
pub fn job_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = JobFile::parse(text) {
        // The sizes and durations inside are parsed the same way the CLI will.
        if let Some(mem) = &file.gpu_mem {
            let _ = parse_mib(mem);
        }
        if let Some(mem) = &file.mem {
            let _ = parse_mib(mem);
        }
    }
}

/// Every committed seed and regression input of one target (`fuzz/seeds/TARGET/*`,
/// `fuzz/regressions/TARGET/*`), for the replay tests of each crate. Panics when there
/// is none, so a renamed target cannot silently replay nothing.
pub fn replay_inputs(target: &str) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut out = Vec::new();
    for kind in ["seeds", "regressions"] {
        let Ok(dir) = std::fs::read_dir(root.join(kind).join(target)) else {
            continue;
        };
        for e in dir.flatten() {
            let data = std::fs::read(e.path())
                .unwrap_or_else(|err| panic!("{}: {err}", e.path().display()));
            out.push((e.path(), data));
        }
    }
    out.sort();
    assert!(
        !out.is_empty(),
        "no seeds for fuzz target {target} under {}",
        root.display()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::replay_inputs;

    #[test]
    fn replay_durations_and_sizes() {
        for (path, data) in replay_inputs("durations_and_sizes") {
            eprintln!("{}", path.display());
            super::durations_and_sizes(&data);
        }
    }

    #[test]
    fn replay_job_file() {
        for (path, data) in replay_inputs("job_file") {
            eprintln!("{}", path.display());
            super::job_file(&data);
        }
    }
}
