//! Entry point of the `journal` fuzz target in `fuzz/`, kept here so that the replay
//! test below runs the very code the fuzzer ran, on every `cargo test`.

use crate::jobdir;

/// A torn or corrupted journal (`attempts.jsonl`): recovery either reads it or says
/// which line is damaged; it never panics. Whatever is recovered is ordered and unique.
pub fn journal(data: &[u8]) {
    match jobdir::recoverable(data) {
        Ok(held) => {
            assert!(held.windows(2).all(|w| w[0].0 < w[1].0));
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains("line"), "{msg}");
        }
    }
}

#[cfg(test)]
mod tests {
    use gpusched_wire::fuzz_entry::replay_inputs;

    #[test]
    fn replay_journal() {
        for (path, data) in replay_inputs("journal") {
            eprintln!("{}", path.display());
            super::journal(&data);
        }
    }
}
