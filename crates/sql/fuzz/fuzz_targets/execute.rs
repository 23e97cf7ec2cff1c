//! Arbitrary bytes as SQL against a small in-memory database (parlite::fuzzing).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    parlite::fuzzing::execute(data);
});
