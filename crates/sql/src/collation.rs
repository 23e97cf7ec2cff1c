//! Collating sequences: BINARY, NOCASE and RTRIM (datatype3.html §7).
//!
//! A collation orders two texts. BINARY compares bytes (memcmp, then length); NOCASE folds
//! the 26 ASCII upper-case letters to lower case and compares bytes (non-ASCII letters are
//! not folded, as in SQLite); RTRIM ignores trailing spaces (U+0020 only), then compares
//! as BINARY. Lookup by name is case-insensitive; an unknown name is SQLite's
//! `no such collation sequence: X` error.

use crate::value::{Result, SqlError};
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Collation {
    #[default]
    Binary,
    NoCase,
    RTrim,
}

impl Collation {
    /// Finds a built-in collation by name (case-insensitive).
    pub fn from_name(name: &str) -> Result<Collation> {
        if name.eq_ignore_ascii_case("BINARY") {
            Ok(Collation::Binary)
        } else if name.eq_ignore_ascii_case("NOCASE") {
            Ok(Collation::NoCase)
        } else if name.eq_ignore_ascii_case("RTRIM") {
            Ok(Collation::RTrim)
        } else {
            Err(SqlError::NoSuchCollation {
                name: name.to_string(),
            })
        }
    }

    /// The canonical name, as SQLite reports it.
    pub fn name(self) -> &'static str {
        match self {
            Collation::Binary => "BINARY",
            Collation::NoCase => "NOCASE",
            Collation::RTrim => "RTRIM",
        }
    }

    /// Orders two texts under this collation.
    pub fn compare(self, a: &str, b: &str) -> Ordering {
        self.compare_bytes(a.as_bytes(), b.as_bytes())
    }

    /// Orders two byte strings under this collation (index keys arrive as bytes).
    pub fn compare_bytes(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Collation::Binary => a.cmp(b),
            Collation::NoCase => {
                let n = a.len().min(b.len());
                for i in 0..n {
                    let (x, y) = (a[i].to_ascii_lowercase(), b[i].to_ascii_lowercase());
                    if x != y {
                        return x.cmp(&y);
                    }
                }
                a.len().cmp(&b.len())
            }
            Collation::RTrim => trim_spaces(a).cmp(trim_spaces(b)),
        }
    }
}

fn trim_spaces(s: &[u8]) -> &[u8] {
    let mut n = s.len();
    while n > 0 && s[n - 1] == b' ' {
        n -= 1;
    }
    &s[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins() {
        assert_eq!(Collation::from_name("nocase"), Ok(Collation::NoCase));
        assert_eq!(
            Collation::from_name("foo").map_err(|e| e.to_string()),
            Err("no such collation sequence: foo".to_string())
        );
        assert_eq!(Collation::NoCase.compare("ABC", "abc"), Ordering::Equal);
        assert_eq!(Collation::NoCase.compare("É", "é"), Ordering::Less);
        assert_eq!(Collation::RTrim.compare("a  ", "a"), Ordering::Equal);
        assert_eq!(Collation::RTrim.compare("a\t", "a"), Ordering::Greater);
        assert_eq!(Collation::Binary.compare("a", "ab"), Ordering::Less);
        assert_eq!(Collation::Binary.compare("B", "a"), Ordering::Less);
    }
}
