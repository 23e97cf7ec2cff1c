//! Recursive-descent parser for SQLite's grammar (parse.y), producing `ast::Stmt`.
//!
//! Invariants:
//! - Errors are worded as SQLite words them: `near "X": syntax error` at the first token that
//!   cannot continue the statement, `incomplete input` when the input ends early, and
//!   `unrecognized token: "X"` when the offending token could not be tokenized.
//! - Recursion is bounded: nesting deeper than `MAX_DEPTH` (expressions, subqueries) and
//!   expression trees higher than `MAX_EXPR_HEIGHT` are errors, never a stack overflow;
//!   each nesting level continues on a heap-grown stack segment when the caller's stack
//!   runs low (`crate::stack`), so the bound holds on small thread stacks too.
//! - Keywords are recognised by context (SQLite's `%fallback ID`): a word is a name unless it
//!   is one of the `RESERVED` keywords that SQLite never lets stand for an identifier.
//! - Parameters are numbered as sqlite3_bind_* expects: `?` takes the next number, `?N`
//!   sets it, a repeated `:name` reuses its first number.

use super::ast::*;
use super::lexer::{Lexer, Tok, Token};

mod ddl;
mod expr;

/// SQLite's SQLITE_MAX_EXPR_DEPTH.
pub const MAX_EXPR_HEIGHT: usize = 1000;
/// Bound on parser recursion (parenthesised expressions, subqueries, prefix operators).
/// Debug builds use large stack frames, so this stays below SQLite's expression limit; it
/// is still far beyond what real SQL nests.
pub const MAX_DEPTH: usize = 250;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

type PResult<T> = Result<T, ParseError>;

fn perr<T>(msg: impl Into<String>) -> PResult<T> {
    Err(ParseError {
        message: msg.into(),
    })
}

/// Keywords SQLite never accepts as identifiers (its keyword list minus the `%fallback ID`
/// set, JOIN_KW and INDEXED).
const RESERVED: &[&str] = &[
    "ADD",
    "ALL",
    "ALTER",
    "AND",
    "AS",
    "AUTOINCREMENT",
    "BETWEEN",
    "CASE",
    "CHECK",
    "COLLATE",
    "COMMIT",
    "CONSTRAINT",
    "CREATE",
    "DEFAULT",
    "DEFERRABLE",
    "DELETE",
    "DISTINCT",
    "DROP",
    "ELSE",
    "ESCAPE",
    "EXCEPT",
    "EXISTS",
    "FOREIGN",
    "FROM",
    "GROUP",
    "HAVING",
    "IN",
    "INDEX",
    "INSERT",
    "INTERSECT",
    "INTO",
    "IS",
    "ISNULL",
    "JOIN",
    "LIMIT",
    "NOT",
    "NOTNULL",
    "NULL",
    "ON",
    "OR",
    "ORDER",
    "PRIMARY",
    "REFERENCES",
    "RETURNING",
    "SELECT",
    "SET",
    "TABLE",
    "THEN",
    "TO",
    "TRANSACTION",
    "UNION",
    "UNIQUE",
    "UPDATE",
    "USING",
    "VALUES",
    "WHEN",
    "WHERE",
];

/// `RESERVED_BY_LETTER[c - 'A']`: the range of `RESERVED` (sorted) starting with letter `c`.
static RESERVED_BY_LETTER: [(u8, u8); 26] = reserved_by_letter();

const fn reserved_by_letter() -> [(u8, u8); 26] {
    let mut r = [(0u8, 0u8); 26];
    let mut i = 0;
    while i < RESERVED.len() {
        let l = (RESERVED[i].as_bytes()[0] - b'A') as usize;
        if r[l].1 == 0 {
            r[l].0 = i as u8;
        }
        r[l].1 = i as u8 + 1;
        i += 1;
    }
    r
}

/// Compares the word only with the reserved words of its first letter (a linear scan of all
/// 58 was ~600 instructions per name, and names are checked at every identifier).
fn is_reserved(w: &str) -> bool {
    let Some(c) = w.as_bytes().first().map(|c| c.to_ascii_uppercase()) else {
        return false;
    };
    if !c.is_ascii_uppercase() {
        return false;
    }
    let (lo, hi) = RESERVED_BY_LETTER[(c - b'A') as usize];
    RESERVED
        .get(lo as usize..hi as usize)
        .is_some_and(|ks| ks.iter().any(|k| k.eq_ignore_ascii_case(w)))
}

fn is_join_kw(w: &str) -> bool {
    matches!(
        Upper::new(w).as_str(),
        "CROSS" | "FULL" | "INNER" | "LEFT" | "NATURAL" | "OUTER" | "RIGHT"
    )
}

/// A word upper-cased on the stack, to match keywords without allocating. A word longer
/// than any keyword reads as "" and so matches no keyword.
pub(crate) struct Upper {
    buf: [u8; 24],
    len: usize,
}

impl Upper {
    pub(crate) fn new(w: &str) -> Upper {
        let mut buf = [0u8; 24];
        let len = if w.len() <= buf.len() {
            buf[..w.len()].copy_from_slice(w.as_bytes());
            buf[..w.len()].make_ascii_uppercase();
            w.len()
        } else {
            0
        };
        Upper { buf, len }
    }

    pub(crate) fn as_str(&self) -> &str {
        // ASCII upper-casing of a whole UTF-8 string leaves it valid UTF-8.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

/// Parameter names by 1-based index (`None` for anonymous `?`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    pub names: Vec<Option<String>>,
}

impl Params {
    pub fn count(&self) -> usize {
        self.names.len()
    }
}

/// Tokens kept around the current one: the parser looks at most 2 tokens ahead and steps
/// back at most 1, so a window of 8 always holds what it reads (no per-statement buffer).
const RING: usize = 8;

pub struct Parser<'a> {
    src: &'a str,
    lx: Lexer<'a>,
    /// Token `i` of the statement (for `lexed - RING <= i < lexed`) is `toks[i % RING]`.
    toks: [Token<'a>; RING],
    /// Tokens taken from the lexer so far (after `Eof`, `Eof` repeats).
    lexed: usize,
    /// Index of the current token.
    pos: usize,
    last_end: usize,
    depth: usize,
    pub params: Params,
    /// Parameter references parsed so far (a repeated `?1` counts each time).
    param_refs: usize,
    /// Set only by [`Parser::with_name_spans`] (ALTER TABLE RENAME re-parsing a schema
    /// object): where each identifier of the tree came from, see [`NameSpan`].
    name_spans: Option<Vec<NameSpan>>,
    /// Parsing a trigger's body: its INSERT/UPDATE/DELETE take SQLite's narrower grammar
    /// (parse.y `trigger_cmd`: no alias, no INDEXED BY, no DEFAULT VALUES, no ORDER BY,
    /// LIMIT or RETURNING).
    in_trigger: bool,
}

/// The source span of one identifier of a parsed tree, keyed by the address of the name's
/// text in the tree (`String::as_ptr`): SQLite's `sqlite3RenameTokenMap`, which maps a tree
/// node's address to its token. Moving a `String` keeps its address, so the key holds for
/// the life of the tree; a copy (`clone`) has another and is simply not found. Kept out of
/// the tree itself so ordinary statements carry no spans (prepare is on the hot path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameSpan {
    pub addr: usize,
    pub start: usize,
    pub end: usize,
}

// Binding powers, lowest first (lang_expr.html "Operators", parse.y %left lines).
const P_OR: u8 = 1;
const P_AND: u8 = 2;
const P_NOT: u8 = 3;
const P_EQ: u8 = 4;
const P_CMP: u8 = 5;
const P_BIT: u8 = 7;
const P_ADD: u8 = 8;
const P_MUL: u8 = 9;
const P_CONCAT: u8 = 10;
const P_COLLATE: u8 = 11;
const P_UNARY: u8 = 12;

impl<'a> Parser<'a> {
    pub fn new(src: &'a str) -> Self {
        Parser {
            src,
            lx: Lexer::new(src),
            toks: std::array::from_fn(|_| Token {
                tok: Tok::Eof,
                start: 0,
                end: 0,
            }),
            lexed: 0,
            pos: 0,
            last_end: 0,
            depth: 0,
            params: Params::default(),
            param_refs: 0,
            name_spans: None,
            in_trigger: false,
        }
    }

    /// A parser that records the span of every identifier it puts in the tree
    /// ([`Parser::take_name_spans`]).
    pub fn with_name_spans(src: &'a str) -> Self {
        let mut p = Parser::new(src);
        p.name_spans = Some(Vec::new());
        p
    }

    pub fn take_name_spans(&mut self) -> Vec<NameSpan> {
        self.name_spans.take().unwrap_or_default()
    }

    /// Records the current token as the source of `name` (called before stepping past it).
    /// An empty name has no heap address of its own: it is not recorded.
    #[inline(never)]
    fn note_name(&mut self, name: &str) {
        let t = &self.toks[self.pos % RING];
        if let Some(spans) = &mut self.name_spans {
            if !name.is_empty() {
                spans.push(NameSpan {
                    addr: name.as_ptr() as usize,
                    start: t.start,
                    end: t.end,
                });
            }
        }
    }

    // ---- token access -----------------------------------------------------------------
    // The small steps below are `#[inline]`: a point SELECT makes ~60 of these calls, and
    // inlining them took its parse from 8.6k to 7.9k instructions (callgrind, speedtest1
    // test 510); `lex_to`, taken once per token, stays out of line.

    #[inline]
    fn fill(&mut self, n: usize) {
        debug_assert!(n + 2 < RING, "lookahead past the token window");
        if self.lexed <= self.pos + n {
            self.lex_to(n);
        }
    }

    // Out of line: inlined into every `peek`/`is_kw_at`, it made each of those calls save
    // and restore six registers for a path taken once per token (a point SELECT makes 27
    // `is_kw_at` calls; parsing it fell from 9.36k to 8.76k instructions, callgrind,
    // speedtest1 test 510).
    #[inline(never)]
    fn lex_to(&mut self, n: usize) {
        while self.lexed <= self.pos + n {
            let t = if self.lexed > 0 && matches!(self.toks[(self.lexed - 1) % RING].tok, Tok::Eof)
            {
                self.toks[(self.lexed - 1) % RING].clone()
            } else {
                self.lx.next_token()
            };
            self.toks[self.lexed % RING] = t;
            self.lexed += 1;
        }
    }

    #[inline]
    fn peek_n(&mut self, n: usize) -> &Tok<'a> {
        self.fill(n);
        &self.toks[(self.pos + n) % RING].tok
    }

    fn peek(&mut self) -> &Tok<'a> {
        self.peek_n(0)
    }

    fn cur_start(&mut self) -> usize {
        self.fill(0);
        self.toks[self.pos % RING].start
    }

    /// Steps past the current token (never past `Eof`).
    #[inline]
    fn advance(&mut self) {
        self.fill(0);
        let t = &self.toks[self.pos % RING];
        if !matches!(t.tok, Tok::Eof) {
            self.last_end = t.end;
            self.pos += 1;
        }
    }

    /// The current token, stepped past (a copy: most callers only step, see `advance`).
    fn next_tok(&mut self) -> Token<'a> {
        self.fill(0);
        let t = self.toks[self.pos % RING].clone();
        self.advance();
        t
    }

    #[inline]
    fn is_kw_at(&mut self, n: usize, kw: &str) -> bool {
        matches!(self.peek_n(n), Tok::Word(w) if w.eq_ignore_ascii_case(kw))
    }

    fn is_kw(&mut self, kw: &str) -> bool {
        self.is_kw_at(0, kw)
    }

    #[inline]
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect_kw(&mut self, kw: &str) -> PResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            self.syntax_error()
        }
    }

    #[inline]
    fn is(&mut self, t: &Tok<'_>) -> bool {
        // The kinds compared first: most checks fail, and the derived `==` is a call.
        let p = self.peek();
        std::mem::discriminant(p) == std::mem::discriminant(t) && p == t
    }

    #[inline]
    fn eat(&mut self, t: &Tok<'_>) -> bool {
        if self.is(t) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &Tok<'_>) -> PResult<()> {
        if self.eat(t) {
            Ok(())
        } else {
            self.syntax_error()
        }
    }

    /// The error SQLite reports at the current token.
    fn syntax_error<T>(&mut self) -> PResult<T> {
        self.fill(0);
        let t = &self.toks[self.pos % RING];
        match &t.tok {
            Tok::Eof => perr("incomplete input"),
            Tok::Illegal(s) => perr(format!("unrecognized token: \"{s}\"")),
            _ => perr(format!(
                "near \"{}\": syntax error",
                &self.src[t.start..t.end]
            )),
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return perr(format!(
                "Expression tree is too large (maximum depth {MAX_EXPR_HEIGHT})"
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn text(&self, start: usize, end: usize) -> String {
        self.src.get(start..end).unwrap_or("").to_string()
    }

    // ---- names ----------------------------------------------------------------------

    /// `nm`: an identifier, a quoted identifier, a string, or a join keyword.
    fn name(&mut self) -> PResult<String> {
        // Copied from the token in place: cloning the token first cost ~30 instructions
        // per name.
        let name = match self.peek() {
            Tok::Word(w) if !is_reserved(w) => w.to_string(),
            Tok::QuotedId { name, .. } | Tok::Str(name) => name.to_string(),
            _ => return self.syntax_error(),
        };
        if self.name_spans.is_some() {
            self.note_name(&name);
        }
        self.advance();
        Ok(name)
    }

    fn is_name_start(&mut self) -> bool {
        match self.peek() {
            Tok::Word(w) => !is_reserved(w),
            Tok::QuotedId { .. } | Tok::Str(_) => true,
            _ => false,
        }
    }

    /// `nm [. nm]`, returning the start offset of the unqualified name.
    fn qualified_name(&mut self) -> PResult<(QualifiedName, usize)> {
        let mut start = self.cur_start();
        let first = self.name()?;
        if self.eat(&Tok::Dot) {
            start = self.cur_start();
            let second = self.name()?;
            Ok((
                QualifiedName {
                    schema: Some(first),
                    name: second,
                },
                start,
            ))
        } else {
            Ok((
                QualifiedName {
                    schema: None,
                    name: first,
                },
                start,
            ))
        }
    }

    /// An optional alias: `AS nm` or a bare identifier/string that cannot continue the
    /// surrounding clause.
    fn alias(&mut self) -> PResult<Option<String>> {
        if self.eat_kw("AS") {
            return Ok(Some(self.name()?));
        }
        let name = match self.peek() {
            Tok::Word(w)
                if !is_reserved(w)
                    && !is_join_kw(w)
                    && !matches!(
                        Upper::new(w).as_str(),
                        "INDEXED" | "LIKE" | "GLOB" | "REGEXP" | "MATCH" | "WINDOW"
                    ) =>
            {
                w.to_string()
            }
            Tok::QuotedId { name, .. } | Tok::Str(name) => name.to_string(),
            _ => return Ok(None),
        };
        self.advance();
        Ok(Some(name))
    }

    fn name_list_paren(&mut self) -> PResult<Vec<String>> {
        self.expect(&Tok::LParen)?;
        let mut v = vec![self.name()?];
        while self.eat(&Tok::Comma) {
            v.push(self.name()?);
        }
        self.expect(&Tok::RParen)?;
        Ok(v)
    }

    // ---- statements -----------------------------------------------------------------

    /// Parses the next statement. Skips empty statements (`;`). Returns `None` at the end of
    /// input, else the statement and the byte offset just past it (and its `;`).
    pub fn next_statement(&mut self) -> PResult<Option<(Stmt, usize)>> {
        while self.eat(&Tok::Semi) {}
        if self.is(&Tok::Eof) {
            return Ok(None);
        }
        let stmt = self.statement()?;
        match self.peek() {
            Tok::Semi => {
                self.advance();
            }
            Tok::Eof => {}
            _ => return self.syntax_error(),
        }
        Ok(Some((stmt, self.last_end)))
    }

    fn statement(&mut self) -> PResult<Stmt> {
        if self.eat_kw("EXPLAIN") {
            let query_plan = if self.eat_kw("QUERY") {
                self.expect_kw("PLAN")?;
                true
            } else {
                false
            };
            let stmt = self.statement_inner()?;
            return Ok(Stmt::Explain {
                query_plan,
                stmt: Box::new(stmt),
            });
        }
        self.statement_inner()
    }

    fn statement_inner(&mut self) -> PResult<Stmt> {
        let w = match self.peek() {
            Tok::Word(w) => Upper::new(w),
            _ => return self.syntax_error(),
        };
        match w.as_str() {
            "SELECT" | "VALUES" => Ok(Stmt::Select(Box::new(self.select()?))),
            "WITH" => {
                let with = self.with_clause()?;
                self.dml_after_with(Some(with))
            }
            "INSERT" | "REPLACE" => Ok(Stmt::Insert(Box::new(self.insert(None)?))),
            "UPDATE" => Ok(Stmt::Update(Box::new(self.update(None)?))),
            "DELETE" => Ok(Stmt::Delete(Box::new(self.delete(None)?))),
            "CREATE" => self.create(),
            "DROP" => self.drop(),
            "ALTER" => self.alter(),
            "BEGIN" => {
                self.advance();
                let mode = if self.eat_kw("DEFERRED") {
                    Some(TxnMode::Deferred)
                } else if self.eat_kw("IMMEDIATE") {
                    Some(TxnMode::Immediate)
                } else if self.eat_kw("EXCLUSIVE") {
                    Some(TxnMode::Exclusive)
                } else if self.eat_kw("CONCURRENT") {
                    Some(TxnMode::Concurrent)
                } else {
                    None
                };
                self.opt_transaction_name()?;
                Ok(Stmt::Begin { mode })
            }
            "COMMIT" | "END" => {
                self.advance();
                self.opt_transaction_name()?;
                Ok(Stmt::Commit)
            }
            "ROLLBACK" => {
                self.advance();
                self.opt_transaction_name()?;
                let savepoint = if self.eat_kw("TO") {
                    self.eat_kw("SAVEPOINT");
                    Some(self.name()?)
                } else {
                    None
                };
                Ok(Stmt::Rollback { savepoint })
            }
            "SAVEPOINT" => {
                self.advance();
                Ok(Stmt::Savepoint(self.name()?))
            }
            "RELEASE" => {
                self.advance();
                self.eat_kw("SAVEPOINT");
                Ok(Stmt::Release(self.name()?))
            }
            "PRAGMA" => self.pragma(),
            "REINDEX" => {
                self.advance();
                let target = if self.is_name_start() {
                    Some(self.qualified_name()?.0)
                } else {
                    None
                };
                Ok(Stmt::Reindex(target))
            }
            "ANALYZE" => {
                self.advance();
                let target = if self.is_name_start() {
                    Some(self.qualified_name()?.0)
                } else {
                    None
                };
                Ok(Stmt::Analyze(target))
            }
            "VACUUM" => {
                self.advance();
                let schema = if self.is_name_start() && !self.is_kw("INTO") {
                    Some(self.name()?)
                } else {
                    None
                };
                let into = if self.eat_kw("INTO") {
                    Some(self.expr()?)
                } else {
                    None
                };
                Ok(Stmt::Vacuum { schema, into })
            }
            "ATTACH" => {
                self.advance();
                self.eat_kw("DATABASE");
                let file = self.expr()?;
                self.expect_kw("AS")?;
                let schema = self.expr()?;
                let key = if self.eat_kw("KEY") {
                    Some(self.expr()?)
                } else {
                    None
                };
                Ok(Stmt::Attach { file, schema, key })
            }
            "DETACH" => {
                self.advance();
                self.eat_kw("DATABASE");
                Ok(Stmt::Detach(self.expr()?))
            }
            _ => self.syntax_error(),
        }
    }

    fn opt_transaction_name(&mut self) -> PResult<()> {
        if self.eat_kw("TRANSACTION") && self.is_name_start() && !self.is_kw("TO") {
            self.name()?;
        }
        Ok(())
    }

    fn dml_after_with(&mut self, with: Option<With>) -> PResult<Stmt> {
        if self.is_kw("SELECT") || self.is_kw("VALUES") {
            let mut s = self.select_no_with()?;
            s.with = with;
            Ok(Stmt::Select(Box::new(s)))
        } else if self.is_kw("INSERT") || self.is_kw("REPLACE") {
            Ok(Stmt::Insert(Box::new(self.insert(with)?)))
        } else if self.is_kw("UPDATE") {
            Ok(Stmt::Update(Box::new(self.update(with)?)))
        } else if self.is_kw("DELETE") {
            Ok(Stmt::Delete(Box::new(self.delete(with)?)))
        } else {
            self.syntax_error()
        }
    }

    fn pragma(&mut self) -> PResult<Stmt> {
        self.expect_kw("PRAGMA")?;
        let (name, _) = self.qualified_name()?;
        let value = if self.eat(&Tok::Eq) {
            Some(PragmaValue::Assign(self.pragma_value()?))
        } else if self.eat(&Tok::LParen) {
            let v = self.pragma_value()?;
            self.expect(&Tok::RParen)?;
            Some(PragmaValue::Call(v))
        } else {
            None
        };
        Ok(Stmt::Pragma { name, value })
    }

    /// `nmnum`: a signed number, a name, a string, or ON/DELETE/DEFAULT/...
    fn pragma_value(&mut self) -> PResult<Expr> {
        match self.peek().clone() {
            Tok::Plus | Tok::Minus | Tok::Number(_) => self.signed_number(),
            Tok::Str(s) => {
                self.advance();
                Ok(Expr::Literal(Literal::String(s.into_owned())))
            }
            Tok::Word(w) => {
                self.advance();
                Ok(Expr::Column {
                    schema: None,
                    table: None,
                    name: w.to_string(),
                    dq: false,
                })
            }
            Tok::QuotedId { name, .. } => {
                self.advance();
                Ok(Expr::Column {
                    schema: None,
                    table: None,
                    name: name.into_owned(),
                    dq: false,
                })
            }
            _ => self.syntax_error(),
        }
    }

    fn signed_number(&mut self) -> PResult<Expr> {
        let neg = if self.eat(&Tok::Minus) {
            true
        } else {
            self.eat(&Tok::Plus);
            false
        };
        match self.peek().clone() {
            // SQLite's grammar takes a number with digit separators only as a term.
            Tok::Number(n) if !n.contains('_') => {
                self.advance();
                let lit = number_literal(n, neg)?;
                Ok(Expr::Literal(lit))
            }
            _ => self.syntax_error(),
        }
    }

    // ---- SELECT ---------------------------------------------------------------------

    fn with_clause(&mut self) -> PResult<With> {
        self.expect_kw("WITH")?;
        let recursive = self.eat_kw("RECURSIVE");
        let mut ctes = Vec::new();
        loop {
            let name = self.name()?;
            if ctes
                .iter()
                .any(|c: &Cte| c.name.eq_ignore_ascii_case(&name))
            {
                return perr(format!("duplicate WITH table name: {name}"));
            }
            let columns = if self.is(&Tok::LParen) {
                self.name_list_paren()?
            } else {
                Vec::new()
            };
            self.expect_kw("AS")?;
            let materialized = if self.eat_kw("MATERIALIZED") {
                Some(true)
            } else if self.is_kw("NOT") && self.is_kw_at(1, "MATERIALIZED") {
                self.advance();
                self.advance();
                Some(false)
            } else {
                None
            };
            self.expect(&Tok::LParen)?;
            let select = self.select()?;
            self.expect(&Tok::RParen)?;
            ctes.push(Cte {
                name,
                columns,
                materialized,
                select: Box::new(select),
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(With { recursive, ctes })
    }

    pub fn select(&mut self) -> PResult<Select> {
        self.enter()?;
        let r = self.select_inner();
        self.leave();
        r
    }

    fn select_inner(&mut self) -> PResult<Select> {
        let with = if self.is_kw("WITH") {
            Some(self.with_clause()?)
        } else {
            None
        };
        let mut s = self.select_no_with()?;
        s.with = with;
        Ok(s)
    }

    fn select_no_with(&mut self) -> PResult<Select> {
        let first = self.select_core()?;
        let mut compounds = Vec::new();
        // SQLite's grammar lets every arm of a compound carry ORDER BY and LIMIT
        // (`oneselect`) and refuses them on an arm that is not the last once the whole
        // compound has parsed (parserDoubleLinkSelect, naming the latest such arm and the
        // operator after it). After a VALUES core they cannot continue the statement.
        let mut misplaced: Option<(&str, &str)> = None;
        loop {
            let last = compounds.last().map_or(&first, |(_, c)| c);
            let (order_by, limit) = if matches!(last, SelectCore::Values(_)) {
                (Vec::new(), None)
            } else {
                (self.opt_order_by()?, self.opt_limit()?)
            };
            let op = if self.eat_kw("UNION") {
                if self.eat_kw("ALL") {
                    CompoundOp::UnionAll
                } else {
                    CompoundOp::Union
                }
            } else if self.eat_kw("INTERSECT") {
                CompoundOp::Intersect
            } else if self.eat_kw("EXCEPT") {
                CompoundOp::Except
            } else {
                if let Some((clause, op)) = misplaced {
                    return perr(format!("{clause} clause should come after {op} not before"));
                }
                return Ok(Select {
                    with: None,
                    body: SelectBody { first, compounds },
                    order_by,
                    limit,
                });
            };
            if !order_by.is_empty() {
                misplaced = Some(("ORDER BY", op.name()));
            } else if limit.is_some() {
                misplaced = Some(("LIMIT", op.name()));
            }
            compounds.push((op, self.select_core()?));
        }
    }

    fn opt_order_by(&mut self) -> PResult<Vec<OrderingTerm>> {
        if self.is_kw("ORDER") && self.is_kw_at(1, "BY") {
            self.advance();
            self.advance();
            self.ordering_terms()
        } else {
            Ok(Vec::new())
        }
    }

    fn ordering_terms(&mut self) -> PResult<Vec<OrderingTerm>> {
        let mut v = Vec::new();
        loop {
            let expr = self.expr()?;
            let desc = if self.eat_kw("DESC") {
                true
            } else {
                self.eat_kw("ASC");
                false
            };
            let nulls_first = if self.eat_kw("NULLS") {
                if self.eat_kw("FIRST") {
                    Some(true)
                } else {
                    self.expect_kw("LAST")?;
                    Some(false)
                }
            } else {
                None
            };
            v.push(OrderingTerm {
                expr,
                desc,
                nulls_first,
            });
            if !self.eat(&Tok::Comma) {
                return Ok(v);
            }
        }
    }

    fn opt_limit(&mut self) -> PResult<Option<Limit>> {
        if !self.eat_kw("LIMIT") {
            return Ok(None);
        }
        let first = self.expr()?;
        if self.eat_kw("OFFSET") {
            let offset = self.expr()?;
            Ok(Some(Limit {
                limit: first,
                offset: Some(offset),
            }))
        } else if self.eat(&Tok::Comma) {
            // `LIMIT off, n`: the first number is the offset.
            let n = self.expr()?;
            Ok(Some(Limit {
                limit: n,
                offset: Some(first),
            }))
        } else {
            Ok(Some(Limit {
                limit: first,
                offset: None,
            }))
        }
    }

    fn select_core(&mut self) -> PResult<SelectCore> {
        if self.eat_kw("VALUES") {
            let mut rows: Vec<Vec<Expr>> = Vec::new();
            loop {
                self.expect(&Tok::LParen)?;
                let row = self.expr_list()?;
                self.expect(&Tok::RParen)?;
                if let Some(first) = rows.first() {
                    if first.len() != row.len() {
                        return perr("all VALUES must have the same number of terms");
                    }
                }
                rows.push(row);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            return Ok(SelectCore::Values(rows));
        }
        self.expect_kw("SELECT")?;
        let distinct = if self.eat_kw("DISTINCT") {
            true
        } else {
            self.eat_kw("ALL");
            false
        };
        let columns = self.result_columns()?;
        let from = if self.eat_kw("FROM") {
            Some(self.from_clause()?)
        } else {
            None
        };
        let where_ = if self.eat_kw("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        let mut group_by = Vec::new();
        let mut having = None;
        if self.is_kw("GROUP") {
            self.advance();
            self.expect_kw("BY")?;
            group_by = self.expr_list()?;
            if self.eat_kw("HAVING") {
                having = Some(self.expr()?);
            }
        } else if self.eat_kw("HAVING") {
            // SQLite accepts HAVING without GROUP BY (3.39+).
            having = Some(self.expr()?);
        }
        let mut windows = Vec::new();
        if self.is_kw("WINDOW") {
            self.advance();
            loop {
                let name = self.name()?;
                self.expect_kw("AS")?;
                windows.push((name, self.window_def()?));
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        Ok(SelectCore::Select(Box::new(SelectCoreSelect {
            distinct,
            columns,
            from,
            where_,
            group_by,
            having,
            windows,
        })))
    }

    fn result_columns(&mut self) -> PResult<Vec<ResultColumn>> {
        let mut v = Vec::new();
        loop {
            v.push(self.result_column()?);
            if !self.eat(&Tok::Comma) {
                return Ok(v);
            }
        }
    }

    fn result_column(&mut self) -> PResult<ResultColumn> {
        if self.eat(&Tok::Star) {
            return Ok(ResultColumn::Star);
        }
        let is_table_star = matches!(
            self.peek(),
            Tok::Word(_) | Tok::QuotedId { .. } | Tok::Str(_)
        ) && *self.peek_n(1) == Tok::Dot
            && *self.peek_n(2) == Tok::Star;
        if is_table_star {
            let t = self.name()?;
            self.advance();
            self.advance();
            return Ok(ResultColumn::TableStar(t));
        }
        let start = self.cur_start();
        let expr = self.expr()?;
        let span = self.text(start, self.last_end);
        let alias = self.alias()?;
        Ok(ResultColumn::Expr { expr, alias, span })
    }

    fn from_clause(&mut self) -> PResult<FromClause> {
        let first = self.table_or_subquery()?;
        // SQLite's grammar takes ON/USING after any FROM item and then refuses them on the
        // first (sqlite3SrcListAppendFromTerm), once the constraint has parsed: so
        // `INSERT ... SELECT ... FROM t ON CONFLICT ...` fails as SQLite's does, at DO.
        for kw in ["ON", "USING"] {
            if self.eat_kw(kw) {
                if kw == "ON" {
                    self.expr()?;
                } else {
                    self.name_list_paren()?;
                }
                // SQLite reduces the item (and reports this) only on a token that may
                // follow one; any other is a syntax error there.
                const FOLLOW: [&str; 17] = [
                    "JOIN",
                    "NATURAL",
                    "LEFT",
                    "RIGHT",
                    "FULL",
                    "INNER",
                    "CROSS",
                    "WHERE",
                    "GROUP",
                    "HAVING",
                    "WINDOW",
                    "ORDER",
                    "LIMIT",
                    "UNION",
                    "INTERSECT",
                    "EXCEPT",
                    "RETURNING",
                ];
                let follows =
                    matches!(self.peek(), Tok::Comma | Tok::RParen | Tok::Semi | Tok::Eof)
                        || FOLLOW.iter().any(|f| self.is_kw(f));
                if !follows {
                    return self.syntax_error();
                }
                return perr(format!("a JOIN clause is required before {kw}"));
            }
        }
        let mut joins = Vec::new();
        loop {
            let op = if self.eat(&Tok::Comma) {
                JoinOp {
                    comma: true,
                    natural: false,
                    kind: JoinKind::Inner,
                }
            } else if let Some(op) = self.join_op()? {
                op
            } else {
                break;
            };
            let table = self.table_or_subquery()?;
            let constraint = if self.eat_kw("ON") {
                Some(JoinConstraint::On(self.expr()?))
            } else if self.eat_kw("USING") {
                Some(JoinConstraint::Using(self.name_list_paren()?))
            } else {
                None
            };
            joins.push(Join {
                op,
                table,
                constraint,
            });
        }
        Ok(FromClause { first, joins })
    }

    fn join_op(&mut self) -> PResult<Option<JoinOp>> {
        let natural = self.eat_kw("NATURAL");
        let kind = if self.eat_kw("LEFT") {
            self.eat_kw("OUTER");
            JoinKind::Left
        } else if self.eat_kw("RIGHT") {
            self.eat_kw("OUTER");
            JoinKind::Right
        } else if self.eat_kw("FULL") {
            self.eat_kw("OUTER");
            JoinKind::Full
        } else if self.eat_kw("INNER") {
            JoinKind::Inner
        } else if self.eat_kw("CROSS") {
            JoinKind::Cross
        } else if self.is_kw("JOIN") {
            JoinKind::Plain
        } else if natural {
            return self.syntax_error();
        } else {
            return Ok(None);
        };
        if !self.eat_kw("JOIN") {
            return match self.peek().clone() {
                Tok::Word(w) => perr(format!("unknown join type: {w}")),
                _ => self.syntax_error(),
            };
        }
        Ok(Some(JoinOp {
            comma: false,
            natural,
            kind,
        }))
    }

    fn table_or_subquery(&mut self) -> PResult<TableOrSubquery> {
        if self.eat(&Tok::LParen) {
            if self.is_kw("SELECT") || self.is_kw("VALUES") || self.is_kw("WITH") {
                let select = self.select()?;
                self.expect(&Tok::RParen)?;
                let alias = self.alias()?;
                return Ok(TableOrSubquery::Subquery {
                    select: Box::new(select),
                    alias,
                });
            }
            self.enter()?;
            let from = self.from_clause();
            self.leave();
            let from = from?;
            self.expect(&Tok::RParen)?;
            let alias = self.alias()?;
            return Ok(TableOrSubquery::Nested {
                from: Box::new(from),
                alias,
            });
        }
        let (name, _) = self.qualified_name()?;
        if self.eat(&Tok::LParen) {
            let args = if self.is(&Tok::RParen) {
                Vec::new()
            } else {
                self.expr_list()?
            };
            self.expect(&Tok::RParen)?;
            let alias = self.alias()?;
            return Ok(TableOrSubquery::TableFunction { name, args, alias });
        }
        let alias = self.alias()?;
        let indexed = if self.is_kw("INDEXED") {
            self.advance();
            self.expect_kw("BY")?;
            Some(Indexed::By(self.name()?))
        } else if self.is_kw("NOT") && self.is_kw_at(1, "INDEXED") {
            self.advance();
            self.advance();
            Some(Indexed::NotIndexed)
        } else {
            None
        };
        Ok(TableOrSubquery::Table {
            name,
            alias,
            indexed,
        })
    }

    fn window_def(&mut self) -> PResult<WindowDef> {
        self.expect(&Tok::LParen)?;
        let base = if self.is_name_start()
            && !self.is_kw("PARTITION")
            && !self.is_kw("ORDER")
            && !self.is_kw("RANGE")
            && !self.is_kw("ROWS")
            && !self.is_kw("GROUPS")
        {
            Some(self.name()?)
        } else {
            None
        };
        let partition_by = if self.eat_kw("PARTITION") {
            self.expect_kw("BY")?;
            self.expr_list()?
        } else {
            Vec::new()
        };
        let order_by = self.opt_order_by()?;
        let frame = if self.is_kw("RANGE") || self.is_kw("ROWS") || self.is_kw("GROUPS") {
            let units = match self.next_tok().tok {
                Tok::Word(w) => w.to_ascii_uppercase(),
                _ => String::new(),
            };
            let (start, end) = if self.eat_kw("BETWEEN") {
                let s = self.frame_bound(true)?;
                self.expect_kw("AND")?;
                (s, Some(self.frame_bound(false)?))
            } else {
                (self.frame_bound(true)?, None)
            };
            // sqlite3WindowAlloc: an end above the start in the list of edges.
            if matches!(
                (&start, &end),
                (FrameBound::CurrentRow, Some(FrameBound::Preceding(_)))
                    | (FrameBound::Following(_), None)
                    | (
                        FrameBound::Following(_),
                        Some(FrameBound::Preceding(_) | FrameBound::CurrentRow)
                    )
            ) {
                return perr("unsupported frame specification");
            }
            let exclude = if self.eat_kw("EXCLUDE") {
                if self.eat_kw("NO") {
                    self.expect_kw("OTHERS")?;
                    Some("NO OTHERS".to_string())
                } else if self.eat_kw("CURRENT") {
                    self.expect_kw("ROW")?;
                    Some("CURRENT ROW".to_string())
                } else if self.eat_kw("GROUP") {
                    Some("GROUP".to_string())
                } else {
                    self.expect_kw("TIES")?;
                    Some("TIES".to_string())
                }
            } else {
                None
            };
            Some(FrameSpec {
                units,
                start,
                end,
                exclude,
            })
        } else {
            None
        };
        self.expect(&Tok::RParen)?;
        Ok(WindowDef {
            base,
            partition_by,
            order_by,
            frame,
        })
    }

    /// One edge of a frame; `start`: the first (or only) one, which may be UNBOUNDED
    /// PRECEDING but not UNBOUNDED FOLLOWING — and the other way round for the end, as
    /// SQLite's grammar has it (`frame_bound_s`, `frame_bound_e`).
    fn frame_bound(&mut self, start: bool) -> PResult<FrameBound> {
        if self.is_kw("UNBOUNDED") {
            self.advance();
            return if start {
                self.expect_kw("PRECEDING")
                    .map(|_| FrameBound::UnboundedPreceding)
            } else {
                self.expect_kw("FOLLOWING")
                    .map(|_| FrameBound::UnboundedFollowing)
            };
        }
        if self.is_kw("CURRENT") && self.is_kw_at(1, "ROW") {
            self.advance();
            self.advance();
            return Ok(FrameBound::CurrentRow);
        }
        let e = self.expr()?;
        if self.eat_kw("PRECEDING") {
            Ok(FrameBound::Preceding(Box::new(e)))
        } else {
            self.expect_kw("FOLLOWING")?;
            Ok(FrameBound::Following(Box::new(e)))
        }
    }

    // ---- INSERT / UPDATE / DELETE -------------------------------------------------------

    fn conflict_action(&mut self) -> PResult<ConflictAction> {
        if self.eat_kw("ROLLBACK") {
            Ok(ConflictAction::Rollback)
        } else if self.eat_kw("ABORT") {
            Ok(ConflictAction::Abort)
        } else if self.eat_kw("FAIL") {
            Ok(ConflictAction::Fail)
        } else if self.eat_kw("IGNORE") {
            Ok(ConflictAction::Ignore)
        } else if self.eat_kw("REPLACE") {
            Ok(ConflictAction::Replace)
        } else {
            self.syntax_error()
        }
    }

    fn opt_or_conflict(&mut self) -> PResult<Option<ConflictAction>> {
        if self.eat_kw("OR") {
            Ok(Some(self.conflict_action()?))
        } else {
            Ok(None)
        }
    }

    fn insert(&mut self, with: Option<With>) -> PResult<Insert> {
        let (or_conflict, replace_keyword) = if self.eat_kw("REPLACE") {
            (Some(ConflictAction::Replace), true)
        } else {
            self.expect_kw("INSERT")?;
            (self.opt_or_conflict()?, false)
        };
        self.expect_kw("INTO")?;
        let (table, _) = self.qualified_name()?;
        let alias = if !self.in_trigger && self.eat_kw("AS") {
            Some(self.name()?)
        } else {
            None
        };
        let columns = if self.is(&Tok::LParen) {
            self.name_list_paren()?
        } else {
            Vec::new()
        };
        let source = if self.is_kw("DEFAULT") && !self.in_trigger {
            self.advance();
            self.expect_kw("VALUES")?;
            InsertSource::DefaultValues
        } else if self.is_kw("SELECT") || self.is_kw("VALUES") || self.is_kw("WITH") {
            InsertSource::Select(Box::new(self.select()?))
        } else {
            return self.syntax_error();
        };
        let mut upsert = Vec::new();
        while self.is_kw("ON") && self.is_kw_at(1, "CONFLICT") {
            self.advance();
            self.advance();
            let target = if self.eat(&Tok::LParen) {
                let columns = self.indexed_columns_tail()?;
                let where_ = if self.eat_kw("WHERE") {
                    Some(self.expr()?)
                } else {
                    None
                };
                Some(UpsertTarget { columns, where_ })
            } else {
                None
            };
            self.expect_kw("DO")?;
            let action = if self.eat_kw("NOTHING") {
                UpsertAction::Nothing
            } else {
                self.expect_kw("UPDATE")?;
                self.expect_kw("SET")?;
                let sets = self.assignments()?;
                let where_ = if self.eat_kw("WHERE") {
                    Some(self.expr()?)
                } else {
                    None
                };
                UpsertAction::Update { sets, where_ }
            };
            // Only the last ON CONFLICT clause may omit its target (parse.y `upsert`).
            let last = target.is_none();
            upsert.push(Upsert { target, action });
            if last {
                break;
            }
        }
        let returning = self.opt_returning()?;
        if self.in_trigger && !returning.is_empty() {
            return perr("cannot use RETURNING in a trigger");
        }
        Ok(Insert {
            with,
            or_conflict,
            replace_keyword,
            table,
            alias,
            columns,
            source,
            upsert,
            returning,
        })
    }

    fn opt_returning(&mut self) -> PResult<Vec<ResultColumn>> {
        if self.eat_kw("RETURNING") {
            self.result_columns()
        } else {
            Ok(Vec::new())
        }
    }

    fn assignments(&mut self) -> PResult<Vec<Assignment>> {
        let mut v = Vec::new();
        loop {
            let columns = if self.is(&Tok::LParen) {
                self.name_list_paren()?
            } else {
                vec![self.name()?]
            };
            self.expect(&Tok::Eq)?;
            let expr = self.expr()?;
            v.push(Assignment { columns, expr });
            if !self.eat(&Tok::Comma) {
                return Ok(v);
            }
        }
    }

    fn opt_indexed(&mut self) -> PResult<Option<Indexed>> {
        if self.is_kw("INDEXED") {
            self.advance();
            self.expect_kw("BY")?;
            let name = self.name()?;
            if self.in_trigger {
                return perr(
                    "the INDEXED BY clause is not allowed on UPDATE or DELETE statements \
                     within triggers",
                );
            }
            Ok(Some(Indexed::By(name)))
        } else if self.is_kw("NOT") && self.is_kw_at(1, "INDEXED") {
            self.advance();
            self.advance();
            if self.in_trigger {
                return perr(
                    "the NOT INDEXED clause is not allowed on UPDATE or DELETE statements \
                     within triggers",
                );
            }
            Ok(Some(Indexed::NotIndexed))
        } else {
            Ok(None)
        }
    }

    fn update(&mut self, with: Option<With>) -> PResult<Update> {
        self.expect_kw("UPDATE")?;
        let or_conflict = self.opt_or_conflict()?;
        let (table, _) = self.qualified_name()?;
        let alias = self.dml_alias()?;
        let indexed = self.opt_indexed()?;
        self.expect_kw("SET")?;
        let sets = self.assignments()?;
        let from = if self.eat_kw("FROM") {
            Some(self.from_clause()?)
        } else {
            None
        };
        let where_ = if self.eat_kw("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        let (returning, order_by, limit) = self.dml_tail()?;
        Ok(Update {
            with,
            or_conflict,
            table,
            alias,
            indexed,
            sets,
            from,
            where_,
            returning,
            order_by,
            limit,
        })
    }

    /// An UPDATE/DELETE target's alias: only with AS (parse.y `xfullname`: `UPDATE t x SET`
    /// is a syntax error), and none in a trigger.
    fn dml_alias(&mut self) -> PResult<Option<String>> {
        if !self.in_trigger && self.eat_kw("AS") {
            Ok(Some(self.name()?))
        } else {
            Ok(None)
        }
    }

    /// An UPDATE/DELETE's RETURNING, ORDER BY and LIMIT (none in a trigger, whose grammar
    /// ends the statement before them).
    fn dml_tail(&mut self) -> PResult<(Vec<ResultColumn>, Vec<OrderingTerm>, Option<Limit>)> {
        if self.in_trigger {
            return Ok((Vec::new(), Vec::new(), None));
        }
        Ok((
            self.opt_returning()?,
            self.opt_order_by()?,
            self.opt_limit()?,
        ))
    }

    fn delete(&mut self, with: Option<With>) -> PResult<Delete> {
        self.expect_kw("DELETE")?;
        self.expect_kw("FROM")?;
        let (table, _) = self.qualified_name()?;
        let alias = self.dml_alias()?;
        let indexed = self.opt_indexed()?;
        let where_ = if self.eat_kw("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        let (returning, order_by, limit) = self.dml_tail()?;
        Ok(Delete {
            with,
            table,
            alias,
            indexed,
            where_,
            returning,
            order_by,
            limit,
        })
    }
}

/// Converts a numeric token to a literal: decimal integers that fit i64 stay integers, larger
/// ones become reals (as SQLite does); hex literals are 64-bit two's complement.
fn number_literal(text: &str, negate: bool) -> PResult<Literal> {
    if text.contains('_') {
        // Digit separators (sqlite3DequoteNumber): each `_` between two digits (hex digits
        // in a hex literal), dropped before the value is read.
        let hex = text.starts_with("0x") || text.starts_with("0X");
        let b = text.as_bytes();
        let separates = |i: usize| {
            let d = |c: u8| {
                if hex {
                    c.is_ascii_hexdigit()
                } else {
                    c.is_ascii_digit()
                }
            };
            i > 0 && i + 1 < b.len() && d(b[i - 1]) && d(b[i + 1])
        };
        if (0..b.len()).any(|i| b[i] == b'_' && !separates(i)) {
            return perr(format!("unrecognized token: \"{text}\""));
        }
        return number_literal(&text.replace('_', ""), negate);
    }
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        let digits = hex.trim_start_matches('0');
        if digits.len() > 16 {
            return perr(format!(
                "hex literal too big: {}{}",
                if negate { "-" } else { "" },
                text
            ));
        }
        let v = u64::from_str_radix(if digits.is_empty() { "0" } else { digits }, 16).map_err(
            |_| ParseError {
                message: format!("hex literal too big: {text}"),
            },
        )?;
        let i = v as i64;
        return Ok(Literal::Integer(if negate { i.wrapping_neg() } else { i }));
    }
    let is_int = text.bytes().all(|b| b.is_ascii_digit());
    if is_int {
        // Parsed as unsigned without copying the text: the magnitude fits when it is at most
        // i64::MAX, or 2^63 negated (i64::MIN).
        match text.parse::<u64>() {
            Ok(v) if v <= i64::MAX as u64 => {
                let i = v as i64;
                return Ok(Literal::Integer(if negate { -i } else { i }));
            }
            Ok(v) if negate && v == i64::MIN.unsigned_abs() => {
                return Ok(Literal::Integer(i64::MIN));
            }
            _ => {}
        }
    }
    // SQLite reads a literal with sqlite3AtoF, whose last bit differs from a correctly
    // rounded parse for some long or far-exponent literals (`1e-300`): the same reader
    // as text-to-number conversions.
    let value = crate::value::num::atof(text.as_bytes()).0;
    let value = if negate { -value } else { value };
    Ok(Literal::Float {
        value,
        text: if negate {
            format!("-{text}")
        } else {
            text.to_string()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse1(s: &str) -> Stmt {
        match Parser::new(s).next_statement() {
            Ok(Some((st, _))) => st,
            other => panic!("{s}: {other:?}"),
        }
    }

    fn err(s: &str) -> String {
        let mut p = Parser::new(s);
        loop {
            match p.next_statement() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("no error for {s}"),
                Err(e) => return e.message,
            }
        }
    }

    #[test]
    fn error_messages() {
        assert_eq!(err("SELEC 1"), "near \"SELEC\": syntax error");
        assert_eq!(err("SELECT 1 +"), "incomplete input");
        assert_eq!(err("SELECT 1 +;"), "near \";\": syntax error");
        assert_eq!(err("SELECT 'abc"), "unrecognized token: \"'abc\"");
        assert_eq!(err("SELECT 1 FROM"), "incomplete input");
        assert_eq!(err("SELECT * FROM t WHERE"), "incomplete input");
        assert_eq!(err("SELECT !1"), "unrecognized token: \"!\"");
        assert_eq!(
            err("CREATE TABLE t(a) garbage"),
            "unknown table option: garbage"
        );
    }

    #[test]
    fn precedence() {
        match parse1("SELECT 1 + 2 * 3 = 7 AND NOT 0 OR 1") {
            Stmt::Select(s) => match &s.body.first {
                SelectCore::Select(c) => match &c.columns[0] {
                    ResultColumn::Expr {
                        expr: Expr::Binary(l, BinaryOp::Or, _),
                        span,
                        ..
                    } => {
                        assert_eq!(span, "1 + 2 * 3 = 7 AND NOT 0 OR 1");
                        assert!(matches!(**l, Expr::Binary(_, BinaryOp::And, _)));
                    }
                    other => panic!("{other:?}"),
                },
                _ => panic!(),
            },
            _ => panic!(),
        }
    }

    #[test]
    fn reserved_words_are_sorted_and_found_by_letter() {
        assert!(RESERVED.windows(2).all(|w| w[0] < w[1]));
        for k in RESERVED {
            assert!(
                is_reserved(k) && is_reserved(&k.to_ascii_lowercase()),
                "{k}"
            );
        }
        assert!(
            !is_reserved("") && !is_reserved("_x") && !is_reserved("ADDX") && !is_reserved("é")
        );
        assert!(is_reserved("select") && is_reserved("Where") && !is_reserved("rowid"));
        assert!(!is_reserved("a_very_long_identifier_name_past_any_keyword"));
    }

    #[test]
    fn keywords_as_names() {
        parse1("CREATE TABLE t(key, replace, abort, action TEXT, left INTEGER)");
        parse1("SELECT key, replace FROM t WHERE abort = 1");
        parse1("SELECT a FROM t1 LEFT JOIN t2 ON t1.a = t2.b");
    }

    #[test]
    fn schema_sql_text() {
        match parse1("create table IF NOT EXISTS main.t1(a INTEGER PRIMARY KEY, b)") {
            Stmt::CreateTable(c) => {
                assert_eq!(c.schema_sql, "CREATE TABLE t1(a INTEGER PRIMARY KEY, b)")
            }
            _ => panic!(),
        }
        match parse1("create unique index i1 on t1(b desc) where b > 0;") {
            Stmt::CreateIndex(c) => assert_eq!(
                c.schema_sql,
                "CREATE UNIQUE INDEX i1 on t1(b desc) where b > 0"
            ),
            _ => panic!(),
        }
    }

    #[test]
    fn params_numbering() {
        let mut p = Parser::new("SELECT ?, :a, ?5, :a, ?");
        assert!(p.next_statement().is_ok());
        assert_eq!(p.params.count(), 6);
        assert_eq!(p.params.names[1].as_deref(), Some(":a"));
    }

    #[test]
    fn integer_literal_bounds() {
        let int = |t: &str, neg: bool| match number_literal(t, neg) {
            Ok(Literal::Integer(i)) => Some(i),
            _ => None,
        };
        assert_eq!(int("0", false), Some(0));
        assert_eq!(int("0", true), Some(0));
        assert_eq!(int("9223372036854775807", false), Some(i64::MAX));
        assert_eq!(int("9223372036854775807", true), Some(-i64::MAX));
        assert_eq!(int("9223372036854775808", true), Some(i64::MIN));
        assert_eq!(int("00009223372036854775808", true), Some(i64::MIN));
        // Past the range: a REAL, keeping the text as written.
        assert_eq!(int("9223372036854775808", false), None);
        assert_eq!(int("9223372036854775809", true), None);
        assert_eq!(int("99999999999999999999999", false), None);
        assert!(matches!(
            number_literal("9223372036854775808", false),
            Ok(Literal::Float { text, .. }) if text == "9223372036854775808"
        ));
        assert!(matches!(
            number_literal("18446744073709551616", true),
            Ok(Literal::Float { text, .. }) if text == "-18446744073709551616"
        ));
    }

    #[test]
    fn min_int_literal() {
        match parse1("SELECT -9223372036854775808") {
            Stmt::Select(s) => match &s.body.first {
                SelectCore::Select(c) => {
                    assert!(matches!(
                        &c.columns[0],
                        ResultColumn::Expr {
                            expr: Expr::Literal(Literal::Integer(i64::MIN)),
                            ..
                        }
                    ))
                }
                _ => panic!(),
            },
            _ => panic!(),
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("SELECT {}1{}", "(".repeat(5000), ")".repeat(5000));
        assert!(err(&deep).contains("too large"));
        let long = format!("SELECT 1{}", "+1".repeat(2000));
        assert!(err(&long).contains("too large"));
        let nots = format!("SELECT {}1", "NOT ".repeat(5000));
        assert!(err(&nots).contains("too large"));
        // The height limit is exact: 1000 levels parse, 1001 do not (the walk that checks it
        // is skipped only for expressions too short to reach it).
        let at_limit = format!("SELECT 1{}", "+1".repeat(MAX_EXPR_HEIGHT - 1));
        assert!(crate::parse::parse_all(&at_limit).is_ok());
        let past = format!("SELECT 1{}", "+1".repeat(MAX_EXPR_HEIGHT));
        assert!(err(&past).contains("too large"));
        // Nested in a function call and a subquery, the check still sees the whole tree.
        let nested = format!("SELECT abs((SELECT 1{}))", "+1".repeat(MAX_EXPR_HEIGHT));
        assert!(err(&nested).contains("too large"));
    }

    #[test]
    fn lookahead_window_and_put_back() {
        // `NOT` then an operator keyword puts the keyword back (the token window keeps it).
        parse1("SELECT a NOT LIKE 'x%' ESCAPE '!', b NOT IN (1, 2), c NOT BETWEEN 1 AND 2");
        parse1("SELECT t.* FROM t WHERE x IS NOT NULL AND y NOTNULL");
    }
}
