//! LIKE and GLOB pattern matching (lang_expr.html "The LIKE, GLOB, REGEXP..." and
//! func.c `patternCompare`).
//!
//! LIKE: `%` any run, `_` one character, an optional ESCAPE character making the next
//! pattern character literal; case-insensitive for ASCII letters only (non-ASCII letters
//! must match exactly), as SQLite does without ICU. GLOB: `*`, `?`, and `[...]` sets with
//! ranges and `^` negation (a `]` right after `[` or `[^` is a member; `-` first or last is
//! literal); case-sensitive. Pattern and text end at their first NUL, as in SQLite.
//!
//! The pattern is compiled into tokens that each match exactly one character, plus
//! "any run" tokens, and matched iteratively with single-star backtracking: O(len(pattern)
//! × len(text)) time, no recursion (SQLite recurses once per `%`; a 50,000-byte pattern of
//! `%a%a...` would need a deep stack here). The result is the same as SQLite's: its
//! NOWILDCARDMATCH early exit only prunes. Inputs are read as bytes with SQLite's lenient
//! UTF-8 decoder, so blobs holding invalid UTF-8 match exactly as in SQLite.

use super::utf8;
use crate::value::{Result, SqlError, Value};

/// SQLITE_MAX_LIKE_PATTERN_LENGTH's default, in bytes.
pub const LIKE_PATTERN_MAX_BYTES: usize = 50_000;

#[derive(Debug, Clone)]
enum Tok {
    /// `%` / `*`: any run of characters.
    AnyRun,
    /// `_` / `?`: any one character.
    AnyOne,
    Lit(u32),
    /// `[...]`: ranges (single members as (c, c)), negated with `^`.
    Set {
        ranges: Vec<(u32, u32)>,
        invert: bool,
    },
    /// A malformed tail (escape at the end, unterminated set): matches nothing.
    Never,
}

const PERCENT: u32 = b'%' as u32;
const UNDERSCORE: u32 = b'_' as u32;

fn compile_like(pattern: &[u8], escape: Option<u32>) -> Vec<Tok> {
    // An escape equal to a wildcard disables that wildcard (func.c likeFunc).
    let match_all = if escape == Some(PERCENT) {
        None
    } else {
        Some(PERCENT)
    };
    let match_one = if escape == Some(UNDERSCORE) {
        None
    } else {
        Some(UNDERSCORE)
    };
    let mut toks = Vec::with_capacity(pattern.len());
    let mut chars = utf8::decode(utf8::until_nul(pattern)).into_iter();
    while let Some(c) = chars.next() {
        if Some(c) == match_all {
            toks.push(Tok::AnyRun);
        } else if Some(c) == escape {
            match chars.next() {
                Some(e) => toks.push(Tok::Lit(e)),
                None => toks.push(Tok::Never),
            }
        } else if Some(c) == match_one {
            toks.push(Tok::AnyOne);
        } else {
            toks.push(Tok::Lit(c));
        }
    }
    toks
}

fn compile_glob(pattern: &[u8]) -> Vec<Tok> {
    let chars: Vec<u32> = utf8::decode(utf8::until_nul(pattern));
    let mut toks = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match char::from_u32(c).unwrap_or('\u{fffd}') {
            '*' => toks.push(Tok::AnyRun),
            '?' => toks.push(Tok::AnyOne),
            '[' => {
                let mut ranges = Vec::new();
                let mut invert = false;
                let next = |i: &mut usize| -> Option<u32> {
                    let c = chars.get(*i).copied();
                    if c.is_some() {
                        *i += 1;
                    }
                    c
                };
                let mut c2 = next(&mut i);
                if c2 == Some(u32::from(b'^')) {
                    invert = true;
                    c2 = next(&mut i);
                }
                let close = u32::from(b']');
                if c2 == Some(close) {
                    ranges.push((close, close));
                    c2 = next(&mut i);
                }
                let mut prior: Option<u32> = None;
                while let Some(m) = c2 {
                    if m == close {
                        break;
                    }
                    let peek = chars.get(i).copied();
                    if m == u32::from(b'-')
                        && peek.is_some()
                        && peek != Some(close)
                        && prior.is_some()
                    {
                        let hi = next(&mut i).unwrap_or(m);
                        if let Some(lo) = prior {
                            ranges.push((lo, hi));
                        }
                        prior = None;
                    } else {
                        ranges.push((m, m));
                        prior = Some(m);
                    }
                    c2 = next(&mut i);
                }
                if c2.is_none() {
                    toks.push(Tok::Never);
                } else {
                    toks.push(Tok::Set { ranges, invert });
                }
            }
            _ => toks.push(Tok::Lit(c)),
        }
    }
    toks
}

fn ascii_lower(c: u32) -> u32 {
    if (u32::from(b'A')..=u32::from(b'Z')).contains(&c) {
        c + 32
    } else {
        c
    }
}

fn tok_matches(tok: &Tok, c: u32, no_case: bool) -> bool {
    match tok {
        Tok::AnyOne => true,
        Tok::Lit(p) => {
            *p == c || (no_case && *p < 0x80 && c < 0x80 && ascii_lower(*p) == ascii_lower(c))
        }
        Tok::Set { ranges, invert } => ranges.iter().any(|&(lo, hi)| c >= lo && c <= hi) != *invert,
        Tok::Never | Tok::AnyRun => false,
    }
}

fn run(toks: &[Tok], text: &[u8], no_case: bool) -> bool {
    let text: Vec<u32> = utf8::decode(utf8::until_nul(text));
    let (mut p, mut s) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p < toks.len() {
            if let Tok::AnyRun = toks[p] {
                star = Some((p + 1, s));
                p += 1;
                continue;
            }
            if s < text.len() && tok_matches(&toks[p], text[s], no_case) {
                p += 1;
                s += 1;
                continue;
            }
        } else if s == text.len() {
            return true;
        }
        match star {
            Some((sp, ss)) if ss < text.len() => {
                star = Some((sp, ss + 1));
                p = sp;
                s = ss + 1;
            }
            _ => return false,
        }
    }
}

/// `text LIKE pattern [ESCAPE escape]` on already-converted text.
pub fn like_match(pattern: &str, text: &str, escape: Option<char>, case_sensitive: bool) -> bool {
    like_match_bytes(
        pattern.as_bytes(),
        text.as_bytes(),
        escape.map(u32::from),
        case_sensitive,
    )
}

/// LIKE on raw bytes (text or blob content), decoded leniently as SQLite does.
pub fn like_match_bytes(
    pattern: &[u8],
    text: &[u8],
    escape: Option<u32>,
    case_sensitive: bool,
) -> bool {
    run(&compile_like(pattern, escape), text, !case_sensitive)
}

/// `text GLOB pattern`.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    glob_match_bytes(pattern.as_bytes(), text.as_bytes())
}

/// GLOB on raw bytes.
pub fn glob_match_bytes(pattern: &[u8], text: &[u8]) -> bool {
    run(&compile_glob(pattern), text, false)
}

/// The SQL function `like(pattern, text [, escape])` (note the argument order: `X LIKE Y`
/// is `like(Y, X)`): 1 or 0, NULL when any argument is NULL. Errors as SQLite: pattern over
/// 50,000 bytes, escape not exactly one character.
pub fn like_fn(args: &[Value], case_sensitive: bool) -> Result<Value> {
    let (Some(pat), Some(text)) = (args.first(), args.get(1)) else {
        return Ok(Value::Null);
    };
    if pat.byte_len() > LIKE_PATTERN_MAX_BYTES {
        return Err(SqlError::msg("LIKE or GLOB pattern too complex"));
    }
    let escape = match args.get(2) {
        None => None,
        Some(e) => {
            let Some(e) = e.to_bytes() else {
                return Ok(Value::Null);
            };
            // sqlite3Utf8CharLen(zEsc, -1) == 1: exactly one character before any NUL.
            let e = utf8::until_nul(&e);
            let (c, n) = utf8::read(e);
            if e.is_empty() || n != e.len() {
                return Err(SqlError::msg(
                    "ESCAPE expression must be a single character",
                ));
            }
            Some(c)
        }
    };
    let (Some(p), Some(t)) = (pat.to_bytes(), text.to_bytes()) else {
        return Ok(Value::Null);
    };
    Ok(Value::Integer(i64::from(like_match_bytes(
        &p,
        &t,
        escape,
        case_sensitive,
    ))))
}

/// The SQL function `glob(pattern, text)`.
pub fn glob_fn(args: &[Value]) -> Result<Value> {
    let (Some(pat), Some(text)) = (args.first(), args.get(1)) else {
        return Ok(Value::Null);
    };
    if pat.byte_len() > LIKE_PATTERN_MAX_BYTES {
        return Err(SqlError::msg("LIKE or GLOB pattern too complex"));
    }
    let (Some(p), Some(t)) = (pat.to_bytes(), text.to_bytes()) else {
        return Ok(Value::Null);
    };
    Ok(Value::Integer(i64::from(glob_match_bytes(&p, &t))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_cases() {
        assert!(like_match("a%", "ABC", None, false));
        assert!(!like_match("a%", "ABC", None, true));
        assert!(like_match("%b_", "abc", None, false));
        assert!(!like_match("é", "É", None, false));
        assert!(like_match("10\\%", "10%", Some('\\'), false));
        assert!(!like_match("10\\%", "100", Some('\\'), false));
        assert!(!like_match("abc\\", "abc", Some('\\'), false));
        assert!(like_match("a%%b", "a%b", Some('%'), false));
        assert!(like_match("%", "", None, false));
        assert!(!like_match("_", "", None, false));
    }

    #[test]
    fn glob_cases() {
        assert!(glob_match("a*c", "abbbc"));
        assert!(!glob_match("a*c", "Abc"));
        assert!(glob_match("[a-c]x", "bx"));
        assert!(glob_match("[^a-c]x", "dx"));
        assert!(glob_match("[]]", "]"));
        assert!(glob_match("[a-]", "-"));
        assert!(!glob_match("[abc", "a"));
        assert!(glob_match("*[0-9]", "abc5"));
        assert!(glob_match("?", "é"));
    }

    #[test]
    fn deep_pattern_does_not_overflow() {
        let pat = "%a".repeat(20_000);
        let text = "a".repeat(30_000);
        assert!(like_match(&pat, &text, None, false));
        assert!(!like_match(&format!("{pat}b"), &text, None, false));
    }
}
