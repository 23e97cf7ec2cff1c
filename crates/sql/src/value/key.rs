//! Values as keys of sets and maps with SQL equality (DISTINCT, GROUP BY, IN lists,
//! UNION): `1`, `1.0` and `'1'`? — no: 1 and 1.0 are one key, '1' is another (no
//! affinity applies between keys), and texts are equal under the key's collation.
//!
//! Invariant: `a == b` ⇒ `hash(a) == hash(b)`. Integral reals that equal an i64 exactly
//! hash as that integer; NOCASE hashes ASCII-lowercased bytes; RTRIM hashes the bytes
//! without trailing spaces. Ordering is SQLite's sort order ([`Value::compare`]).

use super::Value;
use crate::collation::Collation;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

#[derive(Clone, Debug)]
pub struct CollatedKey {
    pub value: Value,
    pub collation: Collation,
}

impl CollatedKey {
    pub fn new(value: Value, collation: Collation) -> Self {
        CollatedKey { value, collation }
    }
}

impl PartialEq for CollatedKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for CollatedKey {}

impl PartialOrd for CollatedKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CollatedKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.value.compare(&other.value, self.collation)
    }
}

impl Hash for CollatedKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.value {
            Value::Null => state.write_u8(0),
            Value::Integer(i) => {
                state.write_u8(1);
                state.write_i64(*i);
            }
            Value::Real(r) => {
                let i = *r as i64;
                // Exactly an i64 (and not the saturated 2^63): hash as that integer.
                if i as f64 == *r && *r < 9223372036854775808.0 {
                    state.write_u8(1);
                    state.write_i64(i);
                } else {
                    state.write_u8(2);
                    state.write_u64(r.to_bits());
                }
            }
            Value::Text(s) => {
                state.write_u8(3);
                let b = s.as_bytes();
                match self.collation {
                    Collation::Binary => state.write(b),
                    Collation::NoCase => {
                        for c in crate::collation::nocase_prefix(b) {
                            state.write_u8(c.to_ascii_lowercase());
                        }
                        state.write_usize(b.len());
                    }
                    Collation::RTrim => {
                        let n = b.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
                        state.write(&b[..n]);
                    }
                    // Texts an application's collation calls equal may differ in every
                    // byte: all hash alike, and equality (`Ord`) tells them apart.
                    Collation::User(_) => {}
                }
                state.write_u8(0xff);
            }
            Value::Blob(b) => {
                state.write_u8(4);
                state.write(b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn equal_keys_collide() {
        let mut set = HashSet::new();
        assert!(set.insert(CollatedKey::new(Value::Integer(1), Collation::Binary)));
        assert!(!set.insert(CollatedKey::new(Value::Real(1.0), Collation::Binary)));
        assert!(set.insert(CollatedKey::new(Value::text("1"), Collation::Binary)));
        assert!(set.insert(CollatedKey::new(Value::Real(-0.0), Collation::Binary)));
        assert!(!set.insert(CollatedKey::new(Value::Integer(0), Collation::Binary)));
        let mut nc = HashSet::new();
        assert!(nc.insert(CollatedKey::new(Value::text("Abc"), Collation::NoCase)));
        assert!(!nc.insert(CollatedKey::new(Value::text("aBC"), Collation::NoCase)));
        let mut rt = HashSet::new();
        assert!(rt.insert(CollatedKey::new(Value::text("a  "), Collation::RTrim)));
        assert!(!rt.insert(CollatedKey::new(Value::text("a"), Collation::RTrim)));
        let big = CollatedKey::new(Value::Integer(i64::MAX), Collation::Binary);
        let r63 = CollatedKey::new(Value::Real(9223372036854775808.0), Collation::Binary);
        assert_ne!(big, r63);
    }
}
