//! Collating sequences: BINARY, NOCASE and RTRIM (datatype3.html §7), and those the
//! application defines (`Collation::User`, [`user`]).
//!
//! A collation orders two texts. BINARY compares bytes (memcmp, then length); NOCASE folds
//! the 26 ASCII upper-case letters to lower case and compares bytes (non-ASCII letters are
//! not folded, as in SQLite) up to the first NUL, then the lengths (sqlite3StrNICmp is a C
//! string compare: `'x'||char(0)||'a'` and `'X'||char(0)||'b'` are equal); RTRIM ignores trailing spaces (U+0020 only), then compares
//! as BINARY. Lookup by name is case-insensitive; an unknown name is SQLite's
//! `no such collation sequence: X` error.
//!
//! Name resolution (SQLite's sqlite3GetCollSeq): a name the in-scope connection's registry
//! holds a slot for (one it defined, even over NOCASE or RTRIM, or one its schema names)
//! resolves to that slot, then the built-ins; a statement naming a collation whose slot is
//! empty fails with `no such collation sequence: X` when it is bound ([`Collation::from_name`])
//! or, for one its schema names (an index key order), when a comparison needs it
//! ([`user::take_missing`]), never with a wrong answer.

pub mod user;

use crate::value::{Result, SqlError};
use std::cmp::Ordering;
pub use user::UserCollationRef;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Collation {
    #[default]
    Binary,
    NoCase,
    RTrim,
    /// One the application defined (`user`): its slot in a connection's registry.
    User(UserCollationRef),
}

impl Collation {
    /// Finds a collation by name (case-insensitive) for a statement being bound: the
    /// in-scope registry's definition first (the application's wins over a built-in of the
    /// same name, as in SQLite), then the built-ins. A name with no live definition asks the
    /// registry's `collation_needed` hook once, then is `no such collation sequence: X`.
    pub fn from_name(name: &str) -> Result<Collation> {
        match user::resolve_in_scope(name, true) {
            Some(Collation::User(u)) if !u.is_live() => Err(SqlError::NoSuchCollation {
                name: name.to_string(),
            }),
            Some(c) => Ok(c),
            None => Collation::builtin(name),
        }
    }

    /// Finds a collation named by the schema (a column's or an index's COLLATE): as
    /// `from_name`, but a name nothing defines resolves to an empty slot of the in-scope
    /// registry instead of failing, so a database whose schema names a collation this
    /// connection lacks still opens (SQLite fails only the statements that need it).
    pub fn for_schema(name: &str) -> Collation {
        match user::resolve_in_scope(name, false) {
            Some(c) => c,
            None => Collation::builtin(name).unwrap_or_else(|_| user::detached(name)),
        }
    }

    /// `no such collation sequence: X` unless the collation can compare now (asking the
    /// `collation_needed` hook first): what CREATE TABLE and CREATE INDEX check of the
    /// collations they name, as SQLite does when it parses them.
    pub fn require(self) -> Result<Collation> {
        match self {
            Collation::User(u) if !u.is_live() => Collation::from_name(u.name()),
            c => Ok(c),
        }
    }

    /// Can compare now: a built-in, or an application's that is defined.
    pub fn is_live(self) -> bool {
        match self {
            Collation::User(u) => u.is_live(),
            _ => true,
        }
    }

    /// A built-in: compares without the application, and hashes (`hash_key`) so that
    /// values it calls equal hash alike.
    pub fn is_builtin(self) -> bool {
        !matches!(self, Collation::User(_))
    }

    /// Finds a built-in collation by name (case-insensitive).
    pub fn builtin(name: &str) -> Result<Collation> {
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

    /// The canonical name, as SQLite reports it (an application's: as first defined).
    pub fn name(self) -> &'static str {
        match self {
            Collation::Binary => "BINARY",
            Collation::NoCase => "NOCASE",
            Collation::RTrim => "RTRIM",
            Collation::User(u) => u.name(),
        }
    }

    /// Orders two texts under this collation.
    pub fn compare(self, a: &str, b: &str) -> Ordering {
        match self {
            Collation::User(u) => u.compare_str(a, b),
            _ => self.compare_bytes(a.as_bytes(), b.as_bytes()),
        }
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
                    // sqlite3StrNICmp stops at a NUL: the bytes after it never count, only
                    // the lengths do.
                    if x == 0 {
                        break;
                    }
                }
                a.len().cmp(&b.len())
            }
            Collation::RTrim => trim_spaces(a).cmp(trim_spaces(b)),
            Collation::User(u) => u.compare(a, b),
        }
    }
}

/// What NOCASE equality sees of a text, for hashing values NOCASE calls equal alike: the
/// bytes up to and including the first NUL (all of them when there is none); the caller
/// also hashes the length, which NOCASE compares after a NUL.
pub fn nocase_prefix(s: &[u8]) -> &[u8] {
    match s.iter().position(|&c| c == 0) {
        Some(i) => &s[..=i],
        None => s,
    }
}

/// The collation SQLite's `sqlite3ExprCollSeq` finds in an expression that is neither a
/// column nor a COLLATE: that of a COLLATE operator inside it. SQLite's EP_Collate flag
/// propagates up through operators, CASE and function arguments (not out of subqueries);
/// the search descends into the leftmost operand holding one, in SQLite's operand order
/// (LIKE's pattern before its left side; BETWEEN's bounds do not count). None: the
/// expression has no collation.
pub fn collate_inside(e: &crate::parse::ast::Expr) -> Option<&str> {
    use crate::parse::ast::Expr;
    fn has_collate(e: &Expr) -> bool {
        match e {
            Expr::Collate { .. } => true,
            Expr::Exists(_) | Expr::Subquery(_) => false,
            // SQLite's parser attaches BETWEEN's bounds after computing the node's flags,
            // so only its left side propagates EP_Collate.
            Expr::Between { expr, .. } => has_collate(expr),
            _ => {
                let mut found = false;
                e.for_each_child(&mut |c| found = found || has_collate(c));
                found
            }
        }
    }
    let mut p = e;
    loop {
        if let Expr::Collate { collation, .. } = p {
            return Some(collation);
        }
        if !has_collate(p) {
            return None;
        }
        let mut operands: Vec<&Expr> = Vec::new();
        match p {
            Expr::Like {
                lhs, rhs, escape, ..
            } => {
                operands.push(rhs);
                operands.push(lhs);
                operands.extend(escape.as_deref());
            }
            Expr::Between { expr, .. } => operands.push(expr),
            _ => p.for_each_child(&mut |c| operands.push(c)),
        }
        p = operands.into_iter().find(|c| has_collate(c))?;
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
        assert_eq!(Collation::NoCase.compare("x\0a", "X\0b"), Ordering::Equal);
        assert_eq!(Collation::NoCase.compare("\0a", "\0"), Ordering::Greater);
        assert_eq!(Collation::NoCase.compare("\0", "a"), Ordering::Less);
        assert_eq!(Collation::NoCase.compare("a", "\0"), Ordering::Greater);
    }
}
