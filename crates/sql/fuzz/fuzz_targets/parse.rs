//! Arbitrary bytes → lexer + parser, with the Display round trip (parlite_sql::fuzzing).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parlite_sql::fuzzing::parse(data);
});
