//! Window frames as SQLite computes them (lang_windowfunc.html 2.2–2.3): ROWS, GROUPS and
//! RANGE frames with every kind of edge, RANGE offsets over integers, reals, NULLs and
//! text in both directions and NULL placements, EXCLUDE NO OTHERS / CURRENT ROW / GROUP /
//! TIES, an aggregate's FILTER, value functions over excluded rows; and the order rows
//! leave a query with windows and no ORDER BY (the first window's, its ties as the later
//! windows left them), which also decides row_number() among peers and what LIMIT keeps.
//! Seeded random queries against SQLite (rows, values, row order and error messages), then
//! the errors SQLite gives for frames it refuses.
//!
//! `PARLITE_SEED=n` replays one seed.

mod common;

use common::Rng;

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len() as u64) as usize]
}

/// Rows with repeated values (peers), NULLs, reals between the integers and a few texts
/// in `x`; text differing only in case in `y`; partitions `g`. No index: both engines
/// read the table in rowid order, the order ties start from.
fn setup(rng: &mut Rng) -> Vec<String> {
    let mut out = vec!["CREATE TABLE t(g, x, y, r)".to_string()];
    let xs = [
        "1", "2", "2", "3", "5", "-7", "2.5", "NULL", "NULL", "'2'", "'abc'", "0", "4.75", "10",
    ];
    let ys = ["'a'", "'A'", "'b'", "'B'", "'ab'", "NULL", "'c'", "'z'"];
    for i in 0..30 {
        out.push(format!(
            "INSERT INTO t VALUES({}, {}, {}, {})",
            rng.below(3),
            pick(rng, &xs),
            pick(rng, &ys),
            if rng.below(6) == 0 {
                "NULL".to_string()
            } else {
                (i * 37 % 11).to_string()
            }
        ));
    }
    out
}

const FUNCS: &[&str] = &[
    "sum(r)",
    "count(*)",
    "count(x)",
    "group_concat(r, '.')",
    "group_concat(y)",
    "max(y)",
    "total(x)",
    "first_value(r)",
    "last_value(y)",
    "nth_value(r, 2)",
    "row_number()",
    "rank()",
    "dense_rank()",
    "lag(r)",
    "ntile(3)",
];

const ORDERS: &[&str] = &[
    "x",
    "x DESC",
    "x NULLS LAST",
    "x DESC NULLS FIRST",
    "r",
    "r DESC",
    "y COLLATE NOCASE",
    "y",
];

const OFFSETS: &[&str] = &["0", "1", "2", "1.5", "'1'", "3"];

/// A frame edge; `start`: the first edge (UNBOUNDED FOLLOWING is not one), else the end.
fn edge(rng: &mut Rng, start: bool) -> String {
    match rng.below(5) {
        0 if start => "UNBOUNDED PRECEDING".into(),
        0 => "UNBOUNDED FOLLOWING".into(),
        1 => "CURRENT ROW".into(),
        2 | 3 => format!("{} PRECEDING", pick(rng, OFFSETS)),
        _ => format!("{} FOLLOWING", pick(rng, OFFSETS)),
    }
}

/// One window: a partition now and then, one ORDER BY term (so RANGE offsets apply) or
/// two, a frame of any type with any edges (SQLite's refusals included), an EXCLUDE.
fn window(rng: &mut Rng) -> String {
    let mut w = String::new();
    match rng.below(4) {
        0 => w.push_str("PARTITION BY g "),
        1 => w.push_str("PARTITION BY y COLLATE NOCASE "),
        _ => {}
    }
    match rng.below(6) {
        0 => {}
        1 => w.push_str(&format!(
            "ORDER BY {}, {} ",
            pick(rng, ORDERS),
            pick(rng, ORDERS)
        )),
        _ => w.push_str(&format!("ORDER BY {} ", pick(rng, ORDERS))),
    }
    if rng.below(6) > 0 {
        let units = pick(rng, &["ROWS", "GROUPS", "RANGE", "RANGE"]);
        let mut frame = if rng.below(3) == 0 {
            format!("{units} {}", edge(rng, true))
        } else {
            format!(
                "{units} BETWEEN {} AND {}",
                edge(rng, true),
                edge(rng, false)
            )
        };
        // Mostly frames that make sense: a start before the end.
        if frame.contains("FOLLOWING AND") && rng.below(4) > 0 {
            frame = format!("{units} BETWEEN CURRENT ROW AND 2 FOLLOWING");
        }
        w.push_str(&frame);
        match rng.below(6) {
            0 => w.push_str(" EXCLUDE CURRENT ROW"),
            1 => w.push_str(" EXCLUDE GROUP"),
            2 => w.push_str(" EXCLUDE TIES"),
            3 => w.push_str(" EXCLUDE NO OTHERS"),
            _ => {}
        }
    }
    w
}

fn call(rng: &mut Rng) -> String {
    let f = pick(rng, FUNCS);
    let filter = if f.starts_with(['s', 'c', 'g', 'm', 't']) && rng.below(4) == 0 {
        " FILTER (WHERE r > 3)"
    } else {
        ""
    };
    format!("{f}{filter} OVER ({})", window(rng))
}

fn query(rng: &mut Rng) -> String {
    let calls: Vec<String> = (0..1 + rng.below(3)).map(|_| call(rng)).collect();
    let cols = calls.join(", ");
    // No ORDER BY mostly: the row order is part of what must match.
    match rng.below(5) {
        0 => format!("SELECT x, y, {cols} FROM t ORDER BY r, x, y"),
        1 => format!("SELECT r, {cols} FROM t WHERE g < 2 LIMIT 7"),
        _ => format!("SELECT g, x, y, r, {cols} FROM t"),
    }
}

#[test]
fn window_frames_match_sqlite() {
    common::assert_no_mismatches(common::seeded_mismatches(setup, query, 400));
}

/// Frames SQLite refuses, offsets it does not take, window chaining's overrides, FILTER
/// and DISTINCT where they are not allowed, and the order rows leave in with several
/// windows.
#[test]
fn window_frame_errors_and_row_order_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a INTEGER, b TEXT, c REAL)",
        "INSERT INTO t VALUES(1,'x',1.5),(2,'y',2.5),(2,'x',3.0),(4,'z',NULL),(5,'y',7.25),\
           (NULL,'x',1.0),(7,'z',2.0),(7,'x',9.0)",
        "SELECT a, sum(a) OVER (ORDER BY a, b RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (RANGE 1 PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a RANGE BETWEEN -1 PRECEDING AND 1 FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a RANGE BETWEEN 'a' PRECEDING AND 1 FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a RANGE BETWEEN 1 PRECEDING AND NULL FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a RANGE X'01' PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a RANGE ' 1.5x' PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN 1.5 PRECEDING AND 1 FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND -1 FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a GROUPS BETWEEN 1 PRECEDING AND 2.5 FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN a PRECEDING AND 1 FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS (SELECT 1) PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS abs(1) PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS 1+1 PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS CAST('1' AS INTEGER) PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS '1.0' PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS -1 PRECEDING) FROM t WHERE 0",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN 1 FOLLOWING AND 1 PRECEDING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS 1 FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND UNBOUNDED PRECEDING) \
           FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS UNBOUNDED FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a ROWS BETWEEN 9223372036854775807 PRECEDING AND \
           9223372036854775807 FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a RANGE BETWEEN 9223372036854775807 PRECEDING AND \
           9223372036854775807 FOLLOWING) FROM t",
        "SELECT a, sum(a) OVER (ORDER BY a RANGE BETWEEN 1e308 PRECEDING AND 1e308 FOLLOWING) \
           FROM t",
        "SELECT a, first_value(a) FILTER (WHERE a>1) OVER (ORDER BY a) FROM t",
        "SELECT a, row_number() FILTER (WHERE a>1) OVER (ORDER BY a) FROM t",
        "SELECT a, count(DISTINCT b) OVER (ORDER BY a) FROM t",
        "SELECT a, sum(a) OVER (w PARTITION BY b) FROM t WINDOW w AS (ORDER BY a)",
        "SELECT a, sum(a) OVER (w ORDER BY b) FROM t WINDOW w AS (ORDER BY a)",
        "SELECT a, sum(a) OVER (w ROWS 1 PRECEDING) FROM t WINDOW w AS (ORDER BY a ROWS 2 PRECEDING)",
        "SELECT a, sum(a) OVER (w) FROM t WINDOW w AS (ORDER BY a ROWS 2 PRECEDING)",
        "SELECT a, sum(a) OVER w FROM t WINDOW w AS (ORDER BY a ROWS 2 PRECEDING)",
        "SELECT a, sum(a) OVER (w ROWS 1 PRECEDING) FROM t WINDOW w AS (PARTITION BY b ORDER BY a)",
        "SELECT a, b, c, row_number() OVER (ORDER BY a) FROM t",
        "SELECT a, b, c, row_number() OVER (ORDER BY c), row_number() OVER (ORDER BY a) FROM t",
        "SELECT a, b, c, row_number() OVER (ORDER BY b), sum(a) OVER (PARTITION BY b ORDER BY c), \
           rank() OVER (ORDER BY a DESC) FROM t",
        "SELECT a, b, c, row_number() OVER (ORDER BY b), row_number() OVER (ORDER BY c), \
           row_number() OVER (ORDER BY b) FROM t",
        "SELECT a, b, c, row_number() OVER (ORDER BY b ROWS 1 PRECEDING), \
           row_number() OVER (ORDER BY c), row_number() OVER (ORDER BY b) FROM t",
        "SELECT a, b, row_number() OVER (PARTITION BY b) FROM t",
        "SELECT b, count(*), sum(count(*)) OVER (ORDER BY b DESC) FROM t GROUP BY b",
        "SELECT a, b, row_number() OVER (ORDER BY a) FROM t LIMIT 3",
        "SELECT a, b, row_number() OVER (ORDER BY a) FROM t ORDER BY b",
        "SELECT a, b, count(*) OVER (PARTITION BY b COLLATE NOCASE) FROM \
           (SELECT a, CASE WHEN a > 4 THEN upper(b) ELSE b END b FROM t)",
    ]));
}
