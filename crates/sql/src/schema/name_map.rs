//! The hash map that keys schema objects by lower-case name (`NameMap`), with a multiply-
//! rotate hasher in the style of rustc's FxHasher instead of std's SipHash.
//!
//! Why: every statement resolves its tables, indexes and triggers by name, and SipHash cost
//! ~440 instructions per statement in speedtest1's single-row UPDATE profile (test 240).
//! Schema names come from the database's own schema, not from an adversary, so HashDoS
//! resistance buys nothing here.
//!
//! Invariant: the hasher only changes how keys are hashed; keys stay the lower-case names
//! (`schema::key`), so lookups remain case-insensitive exactly as before.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map from lower-case object name to object.
pub type NameMap<V> = HashMap<String, V, BuildHasherDefault<NameHasher>>;

/// FxHasher's multiplier (from Firefox, also rustc's `rustc-hash`).
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Folds 8-byte words with rotate-xor-multiply; `finish` rotates so that the well-mixed high
/// bits reach the low bits that pick a bucket.
#[derive(Default, Clone, Copy)]
pub struct NameHasher {
    hash: u64,
}

impl NameHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            // The length keeps "a" and "a\0" apart.
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, BuildHasherDefault};

    fn h(s: &str) -> u64 {
        BuildHasherDefault::<NameHasher>::default().hash_one(s)
    }

    #[test]
    fn distinct_names_hash_apart() {
        let names = [
            "",
            "a",
            "b",
            "t1",
            "t2",
            "z2",
            "sqlite_autoindex_t1_1",
            "abcdefgh",
            "abcdefghi",
        ];
        for (i, x) in names.iter().enumerate() {
            for y in &names[i + 1..] {
                assert_ne!(h(x), h(y), "{x} vs {y}");
            }
        }
        assert_eq!(h("t1"), h("t1"));
    }

    #[test]
    fn lookups_stay_by_lower_case_key() {
        let mut m: NameMap<u32> = NameMap::default();
        m.insert(crate::schema::key("MyTable"), 7);
        assert_eq!(m.get("mytable"), Some(&7));
        assert_eq!(m.get(crate::schema::key("MYTABLE").as_str()), Some(&7));
        assert_eq!(m.get("MyTable"), None);
    }
}
