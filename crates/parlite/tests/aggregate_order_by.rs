//! `agg(args ORDER BY terms)` (SQLite 3.44+, lang_aggfunc.html): the rows reach the
//! aggregate in the ORDER BY's order (ties in arrival order), DISTINCT drops repeats in
//! arrival order before that, FILTER picks the rows first, min()/max() ignore the clause
//! (their bare-column row is the one holding the result), and the clause is refused on
//! non-aggregate and window calls. Seeded random queries over a table of mixed types,
//! against SQLite: rows, values and error messages must be equal.
//!
//! `PARLITE_SEED=n` replays one seed.

mod common;

use common::Rng;

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len() as u64) as usize]
}

/// Rows with repeated values of every type, text differing only in case, NULLs, and
/// groups `g` of several rows each.
fn setup(rng: &mut Rng) -> Vec<String> {
    let mut out = vec!["CREATE TABLE t(g, x, y, r)".to_string()];
    // No BLOB: SQLite 3.45+ reads a BLOB given to a JSON function as JSONB, which parlite
    // does not implement yet (README).
    let xs = [
        "1",
        "2",
        "2",
        "3",
        "-7",
        "2.5",
        "NULL",
        "'2'",
        "'2.0'",
        "9223372036854775807",
    ];
    let ys = [
        "'a'", "'A'", "'b'", "'B'", "'ab'", "NULL", "''", "'z'", "1", "0.5",
    ];
    for i in 0..40 {
        out.push(format!(
            "INSERT INTO t VALUES({}, {}, {}, {})",
            rng.below(4),
            pick(rng, &xs),
            pick(rng, &ys),
            if rng.below(5) == 0 {
                "NULL".to_string()
            } else {
                (i * 37 % 11).to_string()
            }
        ));
    }
    // No index: which of several equal rows DISTINCT keeps depends on the order rows
    // arrive in, i.e. on the plan, so both engines scan the table in rowid order.
    out
}

const CALLS: &[&str] = &[
    "group_concat({d}x{o})",
    "group_concat({d}y{o})",
    "group_concat(y, '-'{o})",
    "string_agg(x, ';'{o})",
    "json_group_array({d}y{o})",
    "json_group_object(coalesce(y, 'null'), x{o})",
    "sum({d}x{o})",
    "total(x{o})",
    "avg({d}r{o})",
    "count({d}y{o})",
    "min(y{o})",
    "max({d}x{o})",
];

const TERMS: &[&str] = &[
    "x",
    "y",
    "r",
    "y COLLATE NOCASE",
    "x DESC",
    "y DESC NULLS FIRST",
    "r NULLS LAST",
    "x NULLS FIRST",
    "-r",
    "1",
    "length(y)",
    "rowid DESC",
];

/// One aggregate call: DISTINCT now and then (one argument only), an ORDER BY of one to
/// three terms, sometimes none, sometimes a FILTER.
fn call(rng: &mut Rng) -> String {
    let shape = pick(rng, CALLS);
    let one_arg = !shape.contains(',');
    let d = if one_arg && rng.below(4) == 0 {
        "DISTINCT "
    } else {
        ""
    };
    let o = match rng.below(5) {
        0 => String::new(),
        n => {
            let terms: Vec<&str> = (0..1 + n % 3).map(|_| pick(rng, TERMS)).collect();
            format!(" ORDER BY {}", terms.join(", "))
        }
    };
    let mut c = shape.replace("{d}", d).replace("{o}", &o);
    if rng.below(5) == 0 {
        c.push_str(" FILTER (WHERE r > 3)");
    }
    c
}

fn query(rng: &mut Rng) -> String {
    let calls: Vec<String> = (0..1 + rng.below(3)).map(|_| call(rng)).collect();
    let cols = calls.join(", ");
    match rng.below(4) {
        0 => format!("SELECT {cols} FROM t"),
        1 => format!("SELECT g, {cols} FROM t GROUP BY g ORDER BY g"),
        // A bare column beside them (SQLite's row: the min()/max() one, else the first).
        2 => format!("SELECT {cols}, y FROM t WHERE g < 3"),
        _ => format!("SELECT {cols} FROM t WHERE g = 9"),
    }
}

#[test]
fn ordered_aggregates_match_sqlite() {
    common::assert_no_mismatches(common::seeded_mismatches(setup, query, 300));
}

/// The clause's errors and its placement in subqueries, HAVING and ORDER BY.
#[test]
fn ordered_aggregate_errors_and_placements_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(x, y, z)",
        "INSERT INTO t VALUES(2,'b',1),(1,'a',2),(3,'C',1),(NULL,'d',2),(2,'B',1)",
        "SELECT group_concat(x ORDER BY x) OVER () FROM t",
        "SELECT abs(x ORDER BY x) FROM t",
        "SELECT max(x, y ORDER BY z) FROM t",
        "SELECT count(* ORDER BY x) FROM t",
        "SELECT group_concat(y ORDER BY count(*)) FROM t",
        "SELECT min(x ORDER BY nosuch) FROM t",
        "SELECT group_concat(x ORDER BY x, y ORDER BY y) FROM t",
        "SELECT max(x ORDER BY y), y FROM t WHERE x = 2",
        "SELECT group_concat(DISTINCT x ORDER BY y) FROM t",
        "SELECT group_concat(y ORDER BY x) FROM t GROUP BY z \
           HAVING group_concat(y ORDER BY y) LIKE 'B%'",
        "SELECT z, group_concat(y ORDER BY x) FROM t GROUP BY z \
           ORDER BY group_concat(y ORDER BY x DESC)",
        "SELECT x, (SELECT group_concat(u.y, '' ORDER BY u.y DESC) FROM t AS u \
           WHERE u.x >= t.x) FROM t ORDER BY x",
        "SELECT (SELECT group_concat(u.x ORDER BY t.y) FROM t AS u WHERE u.z = 1) FROM t",
        "SELECT group_concat(y ORDER BY (SELECT max(x) FROM t)) FROM t",
        "SELECT group_concat(y ORDER BY x) FROM t WHERE 0",
    ]));
}
