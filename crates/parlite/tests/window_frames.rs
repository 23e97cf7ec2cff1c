//! Window frames as SQLite computes them (lang_windowfunc.html 2.2–2.3): ROWS, GROUPS and
//! RANGE frames with every kind of edge, RANGE offsets over integers, reals, NULLs and
//! text in both directions and NULL placements, EXCLUDE NO OTHERS / CURRENT ROW / GROUP /
//! TIES, an aggregate's FILTER, value functions over excluded rows; and the order rows
//! leave a query with windows and no ORDER BY (the first window's, its ties as the later
//! windows left them), which also decides row_number() among peers and what LIMIT keeps.
//! Seeded random queries against SQLite (rows, values, row order and error messages), then
//! the errors SQLite gives for frames it refuses. Aggregates over sliding frames step rows
//! in and invert them out in SQLite's order: a second generator compares them bit for bit
//! over reals of every magnitude, ±0.0, integers near overflow, empty strings and
//! separators of several lengths, in partitions of 0 to 200 rows.
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

/// Partitions `g` of 0 to 200 rows; `o`, a window order with ties and NULLs; `v`, reals
/// of large and small magnitudes, ±0.0, integers near the 64-bit limits, numeric text and
/// NULLs; `t`, short texts, empty strings among them, with separators `sep` of several
/// lengths.
fn sliding_setup(rng: &mut Rng) -> Vec<String> {
    let mut out = vec!["CREATE TABLE s(id INTEGER PRIMARY KEY, g, o, v, t, sep)".to_string()];
    let vs = [
        "0.1",
        "0.2",
        "0.3",
        "-0.7",
        "1e16",
        "-1e16",
        "1e308",
        "-1e308",
        "1e-100",
        "3.0",
        "0.0",
        "0.0 * -1.0",
        "5",
        "-3",
        "'2.5'",
        "'7'",
        "NULL",
        "1.5e15",
        "123456789.123",
    ];
    let near_limits = [
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775000",
        "-4611686018427387904",
    ];
    let ts = ["''", "''", "'a'", "'bb'", "'ccc'", "NULL", "'A'", "'[1]'"];
    let seps = ["','", "''", "'--'", "'+'", "NULL"];
    let sizes = [0, 1, 2, 3, 17, 60, 200];
    let mut rows = Vec::new();
    for g in 0..4 {
        for _ in 0..sizes[rng.below(sizes.len() as u64) as usize] {
            // Integers near the limits are rare: most frames stay clear of overflow.
            let v = match rng.below(40) {
                0 => pick(rng, &near_limits),
                _ => pick(rng, &vs),
            };
            let o = match rng.below(12) {
                0 => "NULL".to_string(),
                1 => format!("{}.5", rng.below(20)),
                _ => rng.below(40).to_string(),
            };
            rows.push(format!(
                "({g}, {o}, {v}, {}, {})",
                pick(rng, &ts),
                pick(rng, &seps)
            ));
        }
    }
    // Rows arrive in a shuffled order: peers meet the window in rowid order.
    for i in (1..rows.len()).rev() {
        rows.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for chunk in rows.chunks(50) {
        out.push(format!(
            "INSERT INTO s(g, o, v, t, sep) VALUES{}",
            chunk.join(",")
        ));
    }
    out
}

const SLIDING_FUNCS: &[&str] = &[
    "sum(v)",
    "total(v)",
    "avg(v)",
    "count(v)",
    "count(*)",
    "min(v)",
    "max(v)",
    "max(t COLLATE NOCASE)",
    "min(o)",
    "group_concat(t)",
    "group_concat(t, sep)",
    "string_agg(v, sep)",
    "hex(group_concat(t, ''))",
    "json_group_array(v)",
    "json_group_array(json_array(t, o))",
    "json_group_object(t, v)",
    "hex(jsonb_group_array(t))",
];

fn sliding_edge(rng: &mut Rng, start: bool) -> String {
    match rng.below(8) {
        0 if start => "UNBOUNDED PRECEDING".into(),
        0 => "UNBOUNDED FOLLOWING".into(),
        1 => "CURRENT ROW".into(),
        2..=4 => format!("{} PRECEDING", rng.below(6)),
        _ => format!("{} FOLLOWING", rng.below(6)),
    }
}

/// An aggregate over a sliding ROWS, GROUPS or RANGE frame (RANGE offsets also reals),
/// now and then with a FILTER, over a window ordered by `o` or `id`.
fn sliding_query(rng: &mut Rng) -> String {
    let f = pick(rng, SLIDING_FUNCS);
    let filter = match rng.below(5) {
        0 => " FILTER (WHERE o % 3 <> 1)",
        _ => "",
    };
    let units = pick(rng, &["ROWS", "ROWS", "GROUPS", "RANGE"]);
    let mut start = sliding_edge(rng, true);
    let mut end = sliding_edge(rng, false);
    if units == "RANGE" && rng.below(3) == 0 {
        start = start.replace(" PRECEDING", ".5 PRECEDING");
        end = end.replace(" FOLLOWING", ".25 FOLLOWING");
    }
    let order = pick(
        rng,
        &["o", "o DESC", "o NULLS LAST", "o DESC NULLS FIRST", "id"],
    );
    let exclude = match rng.below(12) {
        0 => " EXCLUDE NO OTHERS",
        1 => " EXCLUDE CURRENT ROW",
        _ => "",
    };
    let partition = match rng.below(4) {
        0 => "",
        _ => "PARTITION BY g ",
    };
    let filter_rows = match rng.below(6) {
        0 => " WHERE g = 9",
        1 => " WHERE g < 2",
        _ => "",
    };
    format!(
        "SELECT id, {f}{filter} OVER ({partition}ORDER BY {order} {units} BETWEEN {start} AND \
         {end}{exclude}) FROM s{filter_rows} ORDER BY id"
    )
}

#[test]
fn sliding_aggregates_match_sqlite_bit_for_bit() {
    let mut failures = Vec::new();
    for seed in common::seeds() {
        let mut rng = Rng(seed);
        let s = rusqlite::Connection::open_in_memory().expect("sqlite");
        let p = parlite::Connection::open(":memory:").expect("parlite");
        let mut stmts = sliding_setup(&mut rng);
        for _ in 0..300 {
            stmts.push(sliding_query(&mut rng));
        }
        for sql in &stmts {
            let (a, b) = (common::run_sqlite(&s, sql), common::run_parlite(&p, sql));
            // Debug prints reals exactly (shortest round trip), -0.0 apart from 0.0.
            if format!("{a:?}") != format!("{b:?}") {
                failures.push(format!(
                    "seed {seed}: {sql}\n  sqlite:  {a:?}\n  parlite: {b:?}"
                ));
            }
        }
    }
    common::assert_no_mismatches(failures);
}

/// The results that show the order of steps and inverses, on fixed rows: group_concat's
/// separator bookkeeping after inverses (a value that adds no text, a NUL byte for a frame
/// of empty strings, separators of other lengths), compensated sums that keep a residue
/// once every row left, the latest of equal values as min()/max() over a moving frame,
/// json_group_object's inverse removing an element for a NULL label, and an explicit
/// EXCLUDE NO OTHERS, which SQLite computes afresh per row and finalizes.
#[test]
fn inverse_quirks_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(id INTEGER PRIMARY KEY, x, s, sep)",
        "INSERT INTO t VALUES(1, 0.1, '', ','),(2, 0.2, '', '--'),(3, 0.3, 'x', ''),\
           (4, 1e16, '', '+'),(5, 1, 'e', ','),(6, -1e16, '', NULL),(7, 0.7, '', ','),\
           (8, 9223372036854775807, 'yy', '::'),(9, 5, 'z', ','),(10, -9223372036854775808, '', ',')",
        "SELECT id, hex(group_concat(s) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)) FROM t",
        "SELECT id, hex(group_concat(s, sep) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)) FROM t",
        "SELECT id, hex(group_concat(s) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW \
           EXCLUDE NO OTHERS)) FROM t",
        "SELECT id, hex(group_concat(s) OVER (ORDER BY id RANGE BETWEEN UNBOUNDED PRECEDING AND \
           CURRENT ROW EXCLUDE NO OTHERS)) FROM t",
        "SELECT id, total(x) OVER (ORDER BY id ROWS BETWEEN 2 FOLLOWING AND UNBOUNDED FOLLOWING), \
           avg(x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t WHERE id < 8",
        "SELECT id, sum(x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
        "SELECT id, total(x) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) FROM t",
        "SELECT id, max(v) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), \
           min(v) OVER (ORDER BY id GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING), \
           max(v) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) \
           FROM (SELECT id, CASE WHEN id % 2 THEN 1 ELSE 1.0 END v FROM t)",
        "SELECT id, json_group_object(CASE WHEN id % 3 THEN 'k' END, id) OVER (ORDER BY id ROWS \
           BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
        "SELECT hex(jsonb_group_object(NULL, 1)), typeof(jsonb_group_object(NULL, 1)) FROM t",
    ]));
}
