//! cargo-fuzz target: see `parlite_storage::fuzzing::page_walk`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    parlite_storage::fuzzing::page_walk(data);
});
