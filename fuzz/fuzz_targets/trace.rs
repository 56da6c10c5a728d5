#![no_main]
// The entry function is shared with the crate's replay test (see docs/fuzzing.md).
libfuzzer_sys::fuzz_target!(|data: &[u8]| gpusched_sim::fuzz_entry::trace(data));
