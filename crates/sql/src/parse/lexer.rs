//! Lexer: SQL text → tokens, following SQLite's `tokenize.c`.
//!
//! Invariants:
//! - Every token carries its byte span in the source, so the parser can recover the text as
//!   written (result-column names, the CREATE text stored in `sqlite_schema`).
//! - The lexer never fails: bytes SQLite would reject become `Tok::Illegal`, and the parser
//!   turns that into `unrecognized token: "X"` when (and only if) it reaches it, exactly as
//!   SQLite does.
//! - Keywords are not distinguished here: every bare word is `Tok::Word`; the parser decides
//!   from context whether a word is a keyword or a name, which is how SQLite's `%fallback ID`
//!   lets most keywords serve as identifiers.
//! - Tokens borrow their text from the source: only a quoted token with a doubled quote
//!   (`'it''s'`) and a blob literal own a decoded copy. A short statement is lexed without
//!   allocating (measured: per-token `String`s were ~40% of parsing a point SELECT).

use std::borrow::Cow;

/// One token kind. Text-bearing kinds hold the decoded text (quotes removed, escapes undone).
#[derive(Debug, Clone, PartialEq)]
pub enum Tok<'a> {
    /// A bare word: keyword or identifier.
    Word(&'a str),
    /// `"x"`, `[x]` or `` `x` ``; `dq` is true for the double-quoted form, which SQLite
    /// falls back to treating as a string literal when it names no column.
    QuotedId {
        name: Cow<'a, str>,
        dq: bool,
    },
    Str(Cow<'a, str>),
    Blob(Vec<u8>),
    /// Integer or real literal, as written (the parser converts).
    Number(&'a str),
    /// `?`, `?NNN`, `:name`, `@name`, `$name`, `#name` as written.
    Variable(&'a str),
    LParen,
    RParen,
    Comma,
    Semi,
    Dot,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Eq,
    EqEq,
    Ne,
    LtGt,
    Lt,
    Le,
    Gt,
    Ge,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitNot,
    Concat,
    Arrow,
    Arrow2,
    /// Bytes SQLite cannot tokenize; the text is the offending token.
    Illegal(&'a str),
    Eof,
}

#[derive(Debug, Clone)]
pub struct Token<'a> {
    pub tok: Tok<'a>,
    /// Byte offsets `start..end` in the source.
    pub start: usize,
    pub end: usize,
}

fn is_id_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_id_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0c' | b'\r')
}

/// Tokenizes all of `src`, skipping whitespace and comments; the last token is `Eof`.
pub fn tokenize(src: &str) -> Vec<Token<'_>> {
    let mut lx = Lexer::new(src);
    let mut out = Vec::new();
    loop {
        let t = lx.next_token();
        let eof = t.tok == Tok::Eof;
        out.push(t);
        if eof {
            return out;
        }
    }
}

/// A lazy tokenizer: the parser pulls tokens one at a time, so preparing the first statement
/// of a long script costs only that statement.
pub struct Lexer<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        Lexer {
            src,
            b: src.as_bytes(),
            pos: 0,
        }
    }

    fn peek(&self, off: usize) -> u8 {
        self.b.get(self.pos + off).copied().unwrap_or(0)
    }

    /// Text of `start..end`, widened to char boundaries so slicing never panics.
    fn text(&self, start: usize, end: usize) -> &'a str {
        let src: &'a str = self.src;
        // Bounds already on char boundaries (every token but some illegal ones) need no
        // widening: one checked slice instead of the loops (~20 instructions a token).
        if let Some(t) = src.get(start..end) {
            return t;
        }
        let mut s = start.min(self.b.len());
        while s > 0 && !self.src.is_char_boundary(s) {
            s -= 1;
        }
        let mut e = end.min(self.b.len());
        while e < self.b.len() && !self.src.is_char_boundary(e) {
            e += 1;
        }
        &src[s..e]
    }

    fn skip_space_and_comments(&mut self) {
        loop {
            let c = self.peek(0);
            if is_space(c) {
                self.pos += 1;
            } else if c == b'-' && self.peek(1) == b'-' {
                while self.pos < self.b.len() && self.b[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else if c == b'/' && self.peek(1) == b'*' {
                // An unterminated block comment runs to the end of input (SQLite accepts it).
                self.pos += 2;
                while self.pos < self.b.len() && !(self.b[self.pos] == b'*' && self.peek(1) == b'/')
                {
                    self.pos += 1;
                }
                self.pos = (self.pos + 2).min(self.b.len());
            } else {
                return;
            }
        }
    }

    pub fn next_token(&mut self) -> Token<'a> {
        self.skip_space_and_comments();
        let start = self.pos;
        let tok = self.scan();
        // The end of a token always falls on a char boundary because multi-byte chars are only
        // consumed whole (ids) or inside quoted strings.
        let mut end = self.pos.min(self.b.len());
        while end < self.b.len() && !self.src.is_char_boundary(end) {
            end += 1;
        }
        self.pos = end;
        Token { tok, start, end }
    }

    fn scan(&mut self) -> Tok<'a> {
        let start = self.pos;
        if self.pos >= self.b.len() {
            return Tok::Eof;
        }
        let c = self.b[self.pos];
        let c1 = self.peek(1);
        let one = |lx: &mut Self, t: Tok<'a>, n: usize| -> Tok<'a> {
            lx.pos += n;
            t
        };
        match c {
            b'(' => one(self, Tok::LParen, 1),
            b')' => one(self, Tok::RParen, 1),
            b',' => one(self, Tok::Comma, 1),
            b';' => one(self, Tok::Semi, 1),
            b'+' => one(self, Tok::Plus, 1),
            b'*' => one(self, Tok::Star, 1),
            b'/' => one(self, Tok::Slash, 1),
            b'%' => one(self, Tok::Percent, 1),
            b'~' => one(self, Tok::BitNot, 1),
            b'&' => one(self, Tok::BitAnd, 1),
            b'-' => {
                if c1 == b'>' {
                    if self.peek(2) == b'>' {
                        one(self, Tok::Arrow2, 3)
                    } else {
                        one(self, Tok::Arrow, 2)
                    }
                } else {
                    one(self, Tok::Minus, 1)
                }
            }
            b'=' => {
                if c1 == b'=' {
                    one(self, Tok::EqEq, 2)
                } else {
                    one(self, Tok::Eq, 1)
                }
            }
            b'<' => match c1 {
                b'=' => one(self, Tok::Le, 2),
                b'>' => one(self, Tok::LtGt, 2),
                b'<' => one(self, Tok::Shl, 2),
                _ => one(self, Tok::Lt, 1),
            },
            b'>' => match c1 {
                b'=' => one(self, Tok::Ge, 2),
                b'>' => one(self, Tok::Shr, 2),
                _ => one(self, Tok::Gt, 1),
            },
            b'!' => {
                if c1 == b'=' {
                    one(self, Tok::Ne, 2)
                } else {
                    self.pos += 1;
                    Tok::Illegal(self.text(start, self.pos))
                }
            }
            b'|' => {
                if c1 == b'|' {
                    one(self, Tok::Concat, 2)
                } else {
                    one(self, Tok::BitOr, 1)
                }
            }
            b'\'' | b'"' | b'`' => self.scan_quoted(c),
            b'[' => {
                let mut p = self.pos + 1;
                while p < self.b.len() && self.b[p] != b']' {
                    p += 1;
                }
                if p >= self.b.len() {
                    self.pos = self.b.len();
                    return Tok::Illegal(self.text(start, self.pos));
                }
                let name = Cow::Borrowed(self.text(start + 1, p));
                self.pos = p + 1;
                Tok::QuotedId { name, dq: false }
            }
            b'.' if !c1.is_ascii_digit() => one(self, Tok::Dot, 1),
            b'0'..=b'9' | b'.' => self.scan_number(),
            b'?' => {
                self.pos += 1;
                while self.peek(0).is_ascii_digit() {
                    self.pos += 1;
                }
                Tok::Variable(self.text(start, self.pos))
            }
            b':' | b'@' | b'$' | b'#' => {
                self.pos += 1;
                let mut n = 0;
                while is_id_char(self.peek(0)) {
                    self.pos += 1;
                    n += 1;
                }
                if n == 0 {
                    Tok::Illegal(self.text(start, self.pos))
                } else {
                    Tok::Variable(self.text(start, self.pos))
                }
            }
            b'x' | b'X' if c1 == b'\'' => {
                let mut p = self.pos + 2;
                while p < self.b.len() && self.b[p].is_ascii_hexdigit() {
                    p += 1;
                }
                let digits = p - (self.pos + 2);
                if p < self.b.len() && self.b[p] == b'\'' && digits % 2 == 0 {
                    let hex = &self.b[self.pos + 2..p];
                    let bytes = hex
                        .chunks(2)
                        .map(|pair| (hex_val(pair[0]) << 4) | hex_val(pair[1]))
                        .collect();
                    self.pos = p + 1;
                    Tok::Blob(bytes)
                } else {
                    // SQLite swallows to the closing quote (or end) for the error text.
                    while p < self.b.len() && self.b[p] != b'\'' {
                        p += 1;
                    }
                    self.pos = (p + 1).min(self.b.len());
                    Tok::Illegal(self.text(start, self.pos))
                }
            }
            _ if is_id_start(c) => {
                while is_id_char(self.peek(0)) {
                    self.pos += 1;
                }
                Tok::Word(self.text(start, self.pos))
            }
            _ => {
                self.pos += 1;
                Tok::Illegal(self.text(start, self.pos))
            }
        }
    }

    fn scan_quoted(&mut self, q: u8) -> Tok<'a> {
        let start = self.pos;
        let mut p = self.pos + 1;
        let mut doubled = false;
        loop {
            if p >= self.b.len() {
                self.pos = self.b.len();
                return Tok::Illegal(self.text(start, self.pos));
            }
            if self.b[p] == q {
                if p + 1 < self.b.len() && self.b[p + 1] == q {
                    doubled = true;
                    p += 2;
                    continue;
                }
                p += 1;
                break;
            }
            p += 1;
        }
        self.pos = p;
        // The source is valid UTF-8 and quotes are ASCII, so the content is too, and its
        // ends fall on char boundaries.
        let inner = self.text(start + 1, p - 1);
        let s = if doubled {
            let (two, one) = match q {
                b'\'' => ("''", "'"),
                b'"' => ("\"\"", "\""),
                _ => ("``", "`"),
            };
            Cow::Owned(inner.replace(two, one))
        } else {
            Cow::Borrowed(inner)
        };
        match q {
            b'\'' => Tok::Str(s),
            b'"' => Tok::QuotedId { name: s, dq: true },
            _ => Tok::QuotedId { name: s, dq: false },
        }
    }

    /// A numeric literal. Its runs of digits may hold `_` digit separators (SQLite 3.46+);
    /// the parser checks that each stands between two digits (`number_literal`).
    fn scan_number(&mut self) -> Tok<'a> {
        let start = self.pos;
        let digit = |c: u8| c.is_ascii_digit() || c == b'_';
        if self.peek(0) == b'0'
            && matches!(self.peek(1), b'x' | b'X')
            && self.peek(2).is_ascii_hexdigit()
        {
            self.pos += 2;
            while self.peek(0).is_ascii_hexdigit() || self.peek(0) == b'_' {
                self.pos += 1;
            }
        } else {
            while digit(self.peek(0)) {
                self.pos += 1;
            }
            if self.peek(0) == b'.' {
                self.pos += 1;
                while digit(self.peek(0)) {
                    self.pos += 1;
                }
            }
            if matches!(self.peek(0), b'e' | b'E')
                && (self.peek(1).is_ascii_digit()
                    || (matches!(self.peek(1), b'+' | b'-') && self.peek(2).is_ascii_digit()))
            {
                self.pos += 2;
                while digit(self.peek(0)) {
                    self.pos += 1;
                }
            }
        }
        // `123abc` is one illegal token in SQLite, not a number followed by a name.
        if is_id_char(self.peek(0)) {
            while is_id_char(self.peek(0)) {
                self.pos += 1;
            }
            return Tok::Illegal(self.text(start, self.pos));
        }
        Tok::Number(self.text(start, self.pos))
    }
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok<'_>> {
        tokenize(s).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn basic_tokens() {
        let t = kinds("SELECT a, 'it''s', x'0aFF', 0x1F, 1.5e3, ?2, :n -- c\n /* d */ ->> || !=");
        assert_eq!(t[0], Tok::Word("SELECT".into()));
        assert_eq!(t[3], Tok::Str("it's".into()));
        assert_eq!(t[5], Tok::Blob(vec![0x0a, 0xff]));
        assert_eq!(t[7], Tok::Number("0x1F".into()));
        assert_eq!(t[9], Tok::Number("1.5e3".into()));
        assert_eq!(t[11], Tok::Variable("?2".into()));
        assert_eq!(t[13], Tok::Variable(":n".into()));
        assert_eq!(t[14], Tok::Arrow2);
        assert_eq!(t[15], Tok::Concat);
        assert_eq!(t[16], Tok::Ne);
        assert_eq!(t[17], Tok::Eof);
    }

    #[test]
    fn quoted_identifiers_and_illegal() {
        let t = kinds("\"a\"\"b\" [c d] `e` 'open");
        assert_eq!(
            t[0],
            Tok::QuotedId {
                name: "a\"b".into(),
                dq: true
            }
        );
        assert_eq!(
            t[1],
            Tok::QuotedId {
                name: "c d".into(),
                dq: false
            }
        );
        assert_eq!(
            t[2],
            Tok::QuotedId {
                name: "e".into(),
                dq: false
            }
        );
        assert_eq!(t[3], Tok::Illegal("'open".into()));
        assert_eq!(kinds("12ab")[0], Tok::Illegal("12ab".into()));
        assert_eq!(kinds("x'abc'")[0], Tok::Illegal("x'abc'".into()));
        assert_eq!(kinds(".5")[0], Tok::Number(".5"));
    }

    #[test]
    fn text_is_borrowed_unless_decoded() {
        let t = kinds("'plain' 'it''s' \"q\" \"a\"\"b\" [x y] ``");
        assert!(matches!(&t[0], Tok::Str(Cow::Borrowed("plain"))));
        assert!(matches!(&t[1], Tok::Str(Cow::Owned(s)) if s == "it's"));
        assert!(matches!(
            &t[2],
            Tok::QuotedId {
                name: Cow::Borrowed("q"),
                dq: true
            }
        ));
        assert!(matches!(&t[3], Tok::QuotedId { name: Cow::Owned(s), .. } if s == "a\"b"));
        assert!(matches!(
            &t[4],
            Tok::QuotedId {
                name: Cow::Borrowed("x y"),
                dq: false
            }
        ));
        assert!(matches!(
            &t[5],
            Tok::QuotedId {
                name: Cow::Borrowed(""),
                dq: false
            }
        ));
        // Multi-byte text stays whole.
        assert!(matches!(
            &kinds("'héllo'")[0],
            Tok::Str(Cow::Borrowed("héllo"))
        ));
    }
}
