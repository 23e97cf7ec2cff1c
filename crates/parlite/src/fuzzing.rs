//! Fuzz target body for the whole engine, shared by the cargo-fuzz project
//! (`crates/sql/fuzz/`, target `execute`) and the stable smoke test (`tests/fuzz_smoke.rs`).
//!
//! [`execute`]: arbitrary bytes (lossily decoded as UTF-8) run as SQL against a small
//! in-memory database ([`SEED_SCHEMA`]) through the public API. Contract: every input yields
//! rows or SQLite-style errors, never a panic; afterwards the connection still answers a
//! query (a failed statement leaves it usable).
//!
//! Step budget: at most [`STATEMENTS_MAX`] statements per input and [`ROWS_MAX`] rows
//! stepped per statement, so `WITH RECURSIVE` without a bound stays a fast case. A single
//! `step` that materializes an unbounded intermediate (an aggregate over an endless CTE)
//! is not bounded here; libFuzzer's `-timeout` reports it as a hang.

use crate::{Connection, Value};

/// Statements run per input at most.
pub const STATEMENTS_MAX: usize = 32;
/// Rows stepped per statement at most.
pub const ROWS_MAX: usize = 256;

/// The database every input runs against: the types, constraints and index shapes the
/// planner and the DML code branch on.
pub const SEED_SCHEMA: &str = "
CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT UNIQUE, c REAL CHECK (c > -100), d);
CREATE TABLE t2(x INT NOT NULL DEFAULT 0, y TEXT COLLATE NOCASE, z NUMERIC, w BLOB);
CREATE INDEX t2xy ON t2(x, y DESC);
CREATE UNIQUE INDEX t2z ON t2(z) WHERE z > 0;
CREATE VIEW v1 AS SELECT a, b FROM t1 WHERE c IS NOT NULL;
INSERT INTO t1 VALUES(1, 'one', 1.5, NULL), (2, 'Two', 2, x'00ff'), (3, NULL, -3, 'q');
INSERT INTO t2 VALUES(1, 'A', '10', NULL), (1, 'b', 2.5, x'01'), (3, 'C', 'abc', 'z');
";

/// The `execute` target.
pub fn execute(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let conn = match Connection::open(":memory:") {
        Ok(c) => c,
        Err(e) => panic!("opening :memory: failed: {e}"),
    };
    // Inputs must not create files: ATTACH 'anything' would (SQLITE_LIMIT_ATTACHED = 0).
    conn.set_limit_attached(0);
    if let Err(e) = conn.execute_batch(SEED_SCHEMA) {
        panic!("seed schema failed: {e}");
    }
    let mut rest: &str = &text;
    for _ in 0..STATEMENTS_MAX {
        let (mut st, tail) = match conn.prepare(rest) {
            Ok(Some(p)) => p,
            Ok(None) => break,
            // Skip a statement that fails to compile: find its end with the parser's
            // tokenizer-free fallback (the next `;`), as a shell would.
            Err(_) => match rest.find(';') {
                Some(i) => {
                    rest = &rest[i + 1..];
                    continue;
                }
                None => break,
            },
        };
        for _ in 0..ROWS_MAX {
            match st.step() {
                Ok(true) => {
                    for i in 0..st.column_count() {
                        let _ = st.column(i);
                    }
                }
                Ok(false) | Err(_) => break,
            }
        }
        drop(st);
        rest = tail;
    }
    // The connection must still work, whatever state the input left it in.
    let _ = conn.execute_batch("ROLLBACK");
    let mut st = match conn.prepare("SELECT 1") {
        Ok(Some((st, _))) => st,
        Ok(None) => panic!("SELECT 1 prepared to nothing"),
        Err(e) => panic!("connection unusable after the input: {e}"),
    };
    match st.step() {
        Ok(true) => assert_eq!(st.column(0), Value::Integer(1)),
        other => panic!("SELECT 1 after the input: {other:?}"),
    }
}
