//! cargo-fuzz target: see `parlite_storage::fuzzing::record_decode`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    parlite_storage::fuzzing::record_decode(data);
});
