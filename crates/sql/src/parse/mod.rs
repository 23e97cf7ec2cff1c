//! SQL text → AST: `lexer` (tokens with spans), `parser` (recursive descent over SQLite's
//! grammar; statements in `parser.rs`, `parser/ddl.rs` for CREATE/DROP/ALTER,
//! `parser/expr.rs` for expressions), `ast` (the tree), `display` (the tree printed back to SQL).
//!
//! The entry points mirror sqlite3_prepare: `parse_first` compiles the first statement and
//! reports where the rest of the input starts; `parse_all` is for scripts and tests.

pub mod ast;
pub mod display;
pub mod fix;
pub mod lexer;
pub mod parser;

pub use parser::{NameSpan, Params, ParseError, Parser};

/// One parsed statement with its parameters and the byte offset where the next one starts.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub stmt: ast::Stmt,
    pub params: Params,
    /// Offset into the input just past this statement and its `;`.
    pub tail: usize,
}

/// Parses the first statement of `sql`; `Ok(None)` when it holds only spaces, comments and
/// empty statements.
pub fn parse_first(sql: &str) -> Result<Option<Parsed>, ParseError> {
    // The tail after a script's last statement is usually just its newline: answered
    // without setting up a parser (a token window made and dropped per statement).
    if sql.bytes().all(|b| b.is_ascii_whitespace()) {
        return Ok(None);
    }
    let mut p = Parser::new(sql);
    match p.next_statement()? {
        None => Ok(None),
        Some((stmt, tail)) => Ok(Some(Parsed {
            stmt,
            params: std::mem::take(&mut p.params),
            tail,
        })),
    }
}

/// Parses every statement of `sql`.
pub fn parse_all(sql: &str) -> Result<Vec<ast::Stmt>, ParseError> {
    let mut out = Vec::new();
    let mut rest = sql;
    while let Some(p) = parse_first(rest)? {
        out.push(p.stmt);
        rest = rest.get(p.tail..).unwrap_or("");
    }
    Ok(out)
}
