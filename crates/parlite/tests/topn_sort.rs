//! Differential test of ORDER BY with LIMIT/OFFSET against SQLite (rusqlite, bundled): the
//! top-N selection must give exactly the rows a full stable sort would, ties in scan order.
//! Tables with many ties, NULLs, mixed storage classes, NOCASE/RTRIM collations; DESC,
//! NULLS FIRST/LAST, expressions, LIMIT 0/-1/NULL, OFFSET past the end, subqueries, joins,
//! compound selects and aggregates under LIMIT.

mod common;

use common::{check_script, Compare};

#[test]
fn order_by_limit_agrees_with_sqlite() {
    let mut script = String::from(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, a, b TEXT COLLATE NOCASE, c REAL, d TEXT);\n",
    );
    // Deterministic data with heavy ties: a in 0..7 or NULL, b in a few case variants.
    for id in 1..=300i64 {
        let a = if id % 11 == 0 {
            "NULL".to_string()
        } else if id % 13 == 0 {
            format!("'{}'", id % 5)
        } else {
            ((id * 7919) % 7).to_string()
        };
        let b = ["'on'", "'ON'", "'On'", "'two'", "NULL", "'Two '", "'three'"][(id % 7) as usize];
        let c = if id % 17 == 0 {
            "NULL".to_string()
        } else {
            format!("{}.5", (id * 31) % 9)
        };
        let d = ["'x'", "'x '", "'y'", "NULL", "'X'"][(id % 5) as usize];
        script.push_str(&format!(
            "INSERT INTO t VALUES({id}, {a}, {b}, {c}, {d});\n"
        ));
    }
    script.push_str("CREATE TABLE u(k INTEGER PRIMARY KEY, v);\n");
    for k in 1..=20 {
        script.push_str(&format!("INSERT INTO u VALUES({k}, {});\n", k % 4));
    }
    for q in [
        // Ties resolved by scan order (id): only the ORDER BY key is total in id for a check.
        "SELECT id, a FROM t ORDER BY a LIMIT 10",
        "SELECT id, a FROM t ORDER BY a LIMIT 10 OFFSET 5",
        "SELECT id, a FROM t ORDER BY a DESC LIMIT 25",
        "SELECT id, a FROM t ORDER BY a NULLS LAST LIMIT 30",
        "SELECT id, a FROM t ORDER BY a DESC NULLS FIRST LIMIT 40 OFFSET 3",
        "SELECT id, b FROM t ORDER BY b LIMIT 12",
        "SELECT id, b FROM t ORDER BY b COLLATE BINARY DESC LIMIT 12",
        "SELECT id, d FROM t ORDER BY d COLLATE RTRIM LIMIT 20",
        "SELECT id, d FROM t ORDER BY d COLLATE NOCASE, c DESC LIMIT 20",
        "SELECT id, c FROM t ORDER BY c, a LIMIT 15",
        "SELECT id, a, c FROM t ORDER BY a * 2 + c LIMIT 15",
        "SELECT id, a FROM t ORDER BY a LIMIT 0",
        "SELECT id, a FROM t ORDER BY a LIMIT -1 OFFSET 290",
        "SELECT id, a FROM t ORDER BY a LIMIT NULL OFFSET 295",
        "SELECT id, a FROM t ORDER BY a LIMIT 3 OFFSET NULL",
        "SELECT id FROM t LIMIT NULL",
        "SELECT a FROM t UNION SELECT v FROM u LIMIT NULL",
        "SELECT id, a FROM t ORDER BY a LIMIT 5 OFFSET 1000",
        "SELECT id, a FROM t ORDER BY a LIMIT 299",
        "SELECT id, a FROM t ORDER BY a LIMIT 300",
        "SELECT id, a FROM t ORDER BY a LIMIT 301",
        "SELECT id, a FROM t ORDER BY a LIMIT '7'",
        "SELECT id, a FROM t ORDER BY a LIMIT 2+3 OFFSET (SELECT 4)",
        "SELECT id, a FROM t WHERE b LIKE '%o%' ORDER BY a LIMIT 10",
        "SELECT id FROM (SELECT id, a FROM t ORDER BY a LIMIT 50) ORDER BY id DESC LIMIT 7",
        "SELECT id, (SELECT v FROM u ORDER BY v DESC, k LIMIT 1 OFFSET 2) FROM t ORDER BY id LIMIT 9",
        "SELECT id FROM t WHERE id IN (SELECT k FROM u ORDER BY v LIMIT 6) ORDER BY id",
        "SELECT t.id, u.k FROM t JOIN u ON u.v = t.a ORDER BY u.v, t.c LIMIT 20",
        "SELECT a, count(*) FROM t GROUP BY a ORDER BY count(*) DESC, a LIMIT 3",
        "SELECT a FROM t UNION ALL SELECT v FROM u ORDER BY 1 LIMIT 12 OFFSET 2",
        "SELECT b FROM t UNION SELECT 'ON' ORDER BY 1 DESC LIMIT 3",
        "SELECT id, a FROM t ORDER BY a LIMIT 1.5",
    ] {
        script.push_str(q);
        script.push_str(";\n");
    }
    check_script(&script, Compare::default());
}
