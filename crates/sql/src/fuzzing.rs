//! Fuzz target bodies for the SQL front end, shared by the cargo-fuzz project
//! (`crates/sql/fuzz/`) and the stable smoke test (`tests/fuzz_smoke.rs`), so every
//! `cargo test` runs them too.
//!
//! - [`parse`]: arbitrary bytes (lossily decoded as UTF-8) through the lexer and parser,
//!   statement by statement. Contract: any input yields statements or a `ParseError`, never a
//!   panic or an endless loop; and every statement that parses prints (`Display`) to SQL
//!   that parses back to one statement printing the same text — the display invariant of
//!   `parse::display` (equal trees up to `span`/`schema_sql`, which record source text).
//!   A reprint may nest deeper than its input (operands are parenthesised); one that
//!   exceeds the parser's depth bound is exempt.
//!
//! The target panics only when that invariant breaks. Its loops are bounded by the input:
//! each parsed statement must advance `tail`, which is asserted.

use crate::parse::parse_first;

/// Statements parsed per input at most; inputs are small, this only bounds `;;;;` runs.
pub const STATEMENTS_MAX: usize = 64;

/// The `parse` target: lexer + parser over `data`, and a Display round trip per statement.
/// Returns how many statements parsed (and round-tripped), so tests can see coverage.
pub fn parse(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    let mut rest: &str = &text;
    let mut parsed_n = 0;
    for _ in 0..STATEMENTS_MAX {
        let parsed = match parse_first(rest) {
            Ok(Some(p)) => p,
            Ok(None) | Err(_) => return parsed_n,
        };
        assert!(
            parsed.tail > 0 && parsed.tail <= rest.len(),
            "parse_first made no progress or overran: tail {} of {:?}",
            parsed.tail,
            rest
        );
        round_trip(&parsed.stmt);
        parsed_n += 1;
        rest = match rest.get(parsed.tail..) {
            Some(r) => r,
            None => panic!("tail {} is not a char boundary of {rest:?}", parsed.tail),
        };
    }
    parsed_n
}

/// Asserts that `stmt` prints to SQL that parses back to a statement printing the same.
pub fn round_trip(stmt: &crate::parse::ast::Stmt) {
    let printed = stmt.to_string();
    let again = match parse_first(&printed) {
        Ok(Some(p)) => p,
        Ok(None) => panic!("printed statement is empty: {printed:?} from {stmt:?}"),
        // Display parenthesises every operand that is an operator, so the reprint nests
        // deeper than the input; past the parser's recursion bound that is a resource
        // limit, not a grammar bug.
        Err(e) if e.to_string().starts_with("Expression tree is too large") => return,
        Err(e) => panic!("printed statement does not parse: {printed:?}: {e}"),
    };
    let rest = printed.get(again.tail..).unwrap_or("");
    assert!(
        matches!(parse_first(rest), Ok(None)),
        "printed statement parses as more than one: {printed:?}"
    );
    let reprinted = again.stmt.to_string();
    assert_eq!(
        reprinted, printed,
        "Display round trip changed the statement"
    );
}

/// Valid statements covering the grammar: the seed corpus for both targets and for
/// [`mutate`].
pub const SEED_SQL: &[&str] = &[
    "CREATE TABLE t3(a INTEGER PRIMARY KEY AUTOINCREMENT, b TEXT NOT NULL UNIQUE ON CONFLICT REPLACE, c REAL DEFAULT (1.5e3) CHECK (c <> 0), d BLOB COLLATE RTRIM, FOREIGN KEY (b) REFERENCES t1(b) ON DELETE CASCADE) WITHOUT ROWID",
    "CREATE TEMP TABLE IF NOT EXISTS \"q t\"([x y], `z`, PRIMARY KEY ([x y] DESC, z))",
    "CREATE UNIQUE INDEX IF NOT EXISTS i9 ON t2(x COLLATE NOCASE DESC, y) WHERE x IS NOT NULL AND y LIKE 'a%' ESCAPE '\\'",
    "CREATE VIEW v2(p, q) AS SELECT a, count(*) FROM t1 GROUP BY 1",
    "CREATE TRIGGER tr2 BEFORE UPDATE OF b ON t1 FOR EACH ROW WHEN new.b IS NULL BEGIN SELECT RAISE(ABORT, 'no'); INSERT INTO t2(x) VALUES(old.a); END",
    "INSERT OR REPLACE INTO t1(a, b) VALUES(1, 'x'), (2, ?), (:n, @m) ON CONFLICT (b) DO UPDATE SET c = excluded.c WHERE c > 0 RETURNING *",
    "INSERT INTO t2 DEFAULT VALUES",
    "REPLACE INTO t2 SELECT * FROM t2 WHERE rowid IN (SELECT max(rowid) FROM t2)",
    "UPDATE OR IGNORE t1 SET (b, c) = ('y', c * 2), d = NULL FROM t2 WHERE t2.x = t1.a RETURNING a AS k",
    "DELETE FROM t2 WHERE x BETWEEN 1 AND 3 AND y NOT GLOB '[a-c]*' OR z IS NOT DISTINCT FROM NULL",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 50 LIMIT 40) SELECT n, n % 7 FROM r ORDER BY n DESC NULLS LAST LIMIT 5 OFFSET 2",
    "SELECT DISTINCT t1.a, t2.* FROM t1 LEFT OUTER JOIN t2 ON t1.a = t2.x NATURAL JOIN v1 CROSS JOIN (SELECT 1 AS o) AS s WHERE EXISTS (SELECT 1 FROM t2 AS u WHERE u.x = t1.a)",
    "SELECT a, sum(c) FILTER (WHERE c > 0) OVER (PARTITION BY d ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES) FROM t1 WINDOW w AS (ORDER BY a)",
    "SELECT CASE a WHEN 1 THEN 'one' WHEN 2 THEN -2.5e-3 ELSE x'ABCD' END, CAST(b AS NUMERIC), b COLLATE NOCASE, ~a, -+a, NOT a, a IS NOT b, a -> '$.x', a ->> 0 FROM t1",
    "SELECT count(DISTINCT y), group_concat(y, ',' ORDER BY y), min(z), max(z), total(x), avg(x) FROM t2 GROUP BY x HAVING count(*) > 0 UNION ALL SELECT 1, 2, 3, 4, 5, 6 EXCEPT SELECT * FROM (VALUES (1, 2, 3, 4, 5, 6)) INTERSECT SELECT 1, 2, 3, 4, 5, 6",
    "SELECT a FROM t1 WHERE a IN (1, 2, 3) AND b NOT IN (SELECT y FROM t2) AND c IN t2 AND d REGEXP 'x' AND a ISNULL AND b NOTNULL",
    "SELECT 9223372036854775807 + 1, -9223372036854775808, 0x7fffffffffffffff, 1e999, .5, 5., 'it''s', X'', NULL, TRUE, FALSE, CURRENT_TIMESTAMP",
    "PRAGMA table_info = t1",
    "PRAGMA main.user_version = 7",
    "BEGIN IMMEDIATE; SAVEPOINT s1; RELEASE SAVEPOINT s1; ROLLBACK TO s1; COMMIT",
    "ALTER TABLE t1 RENAME COLUMN b TO bb",
    "ALTER TABLE t1 ADD COLUMN e INT DEFAULT -1 NOT NULL",
    "DROP INDEX IF EXISTS main.i9; DROP VIEW v2; DROP TRIGGER IF EXISTS tr2; DROP TABLE t3",
    "EXPLAIN QUERY PLAN SELECT * FROM t1 INDEXED BY sqlite_autoindex_t1_1 WHERE b = 'x'",
    "VACUUM; ANALYZE; REINDEX t1; ATTACH ':memory:' AS aux; DETACH aux",
    "SELECT printf('%5.2f|%-3d|%q', 3.14159, 7, 'a''b'), substr('hello', -3, 2), replace('aaa', 'a', 'bb'), instr('abc', 'c'), hex(randomblob(0)), quote(x'00'), iif(1, 2, 3), unicode('é'), char(65, 66)",
];

/// A deterministic mutation of `input` driven by `seed` (xorshift), in the shapes that find
/// parser bugs: byte flips, deletions, duplications of a slice, splices of SQL tokens.
/// Returns raw bytes: invalid UTF-8 is part of the input space.
pub fn mutate(input: &[u8], seed: u64) -> Vec<u8> {
    const TOKENS: &[&str] = &[
        "(",
        ")",
        ",",
        "'",
        "\"",
        "`",
        "[",
        "]",
        ";",
        "NULL",
        "SELECT",
        "*",
        " AND ",
        " OR ",
        "-",
        "--",
        "/*",
        "*/",
        "x'",
        "?",
        "?999999999999",
        ":a",
        "$",
        "1e",
        "0x",
        "9223372036854775808",
        " COLLATE ",
        " ESCAPE ",
        " OVER ",
        " FILTER ",
        " WITH ",
        " RECURSIVE ",
        " CASE ",
        " END ",
        " IN ",
        " IS ",
        " NOT ",
        " BETWEEN ",
        " ON CONFLICT ",
        " RETURNING ",
        "\u{e9}",
        "\0",
    ];
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move |n: usize| -> usize {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if n == 0 {
            0
        } else {
            (state % n as u64) as usize
        }
    };
    let mut out = input.to_vec();
    for _ in 0..1 + next(4) {
        let at = next(out.len() + 1);
        match next(5) {
            0 if at < out.len() => out[at] ^= 1 << next(8),
            1 if at < out.len() => {
                let end = (at + 1 + next(12)).min(out.len());
                out.drain(at..end);
            }
            2 if at < out.len() => {
                let end = (at + 1 + next(24)).min(out.len());
                let slice = out[at..end].to_vec();
                let to = next(out.len() + 1);
                out.splice(to..to, slice);
            }
            _ => {
                let t = TOKENS[next(TOKENS.len())].as_bytes();
                out.splice(at..at, t.iter().copied());
            }
        }
    }
    out
}
