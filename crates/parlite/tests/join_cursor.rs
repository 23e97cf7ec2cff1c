//! Differential tests of join levels that keep their index walk across outer rows
//! (`Exec::kept_walks`, `RowScan::restart`): the walk of one level, restarted over each
//! outer row's bounds on the same cursors, must return what a new walk would, also when
//! the statement (or its trigger) wrote the walked trees between two outer rows
//! (invariant T2: a cursor's frames are reused only while its transaction changed
//! nothing). Same SQL through parlite and SQLite (rusqlite, bundled).

mod common;
use common::*;

fn check(script: &str) {
    check_script(script, Compare::default());
}

/// Tables for the joins: a rowid-alias key, unique and non-unique indexes, a NOCASE
/// index, a covering index, NULL and duplicate keys, keys stored as TEXT that an INTEGER
/// column's affinity meets, and a DESC index.
fn setup() -> String {
    let mut s = String::from(
        "CREATE TABLE a(id INTEGER PRIMARY KEY, x INTEGER, s TEXT, n TEXT COLLATE NOCASE);
         CREATE TABLE b(id INTEGER PRIMARY KEY, k INTEGER UNIQUE, v TEXT, w);
         CREATE TABLE c(id INTEGER PRIMARY KEY, t TEXT, u INTEGER);
         CREATE TABLE d(id INTEGER PRIMARY KEY, m TEXT COLLATE NOCASE, r REAL);
         CREATE INDEX as_ ON a(s);
         CREATE INDEX an ON a(n);
         CREATE INDEX ct ON c(t, u);
         CREATE INDEX cu ON c(u DESC);
         CREATE INDEX dm ON d(m);
         CREATE INDEX bw ON b(w);\n",
    );
    for i in 0..300 {
        let x = if i % 11 == 0 {
            "NULL".to_string()
        } else {
            format!("{}", (i * 37) % 301)
        };
        let st = if i % 13 == 0 {
            "NULL".to_string()
        } else {
            format!("'s{}'", (i * 7) % 50)
        };
        let n = match i % 4 {
            0 => format!("'Name{}'", i % 20),
            1 => format!("'NAME{}'", i % 20),
            2 => format!("'name{}'", (i + 3) % 20),
            _ => "NULL".to_string(),
        };
        // b.k as TEXT for some rows: INTEGER affinity turns '12' into 12, not 'x12'.
        let k = match i % 17 {
            0 => "NULL".to_string(),
            5 => format!("'x{i}'"),
            _ => format!("'{}'", (i * 5) % 307),
        };
        let w = match i % 5 {
            0 => format!("{}", i % 30),
            1 => format!("'{}'", i % 30),
            2 => format!("{}.0", i % 30),
            3 => "NULL".to_string(),
            _ => format!("x'{:02x}'", i % 30),
        };
        s.push_str(&format!(
            "INSERT INTO a VALUES({i}, {x}, {st}, {n});
             INSERT INTO b VALUES({i}, {k}, 'v{}', {w});
             INSERT INTO c VALUES({i}, {st}, {});
             INSERT INTO d VALUES({i}, {n}, {});\n",
            i % 9,
            (i * 3) % 41,
            (i % 6) as f64 / 2.0
        ));
    }
    s
}

/// Two-, three- and four-way joins whose inner levels walk indexes (unique, non-unique,
/// covering, DESC, NOCASE) and rowid tables once per outer row.
#[test]
fn joins_over_kept_walks_match_sqlite() {
    let mut s = setup();
    for (lo, hi) in [(0, 40), (100, 130), (250, 400), (-5, 2), (77, 77)] {
        s.push_str(&format!(
            "SELECT a.id, b.id, b.v FROM a, b WHERE a.id BETWEEN {lo} AND {hi} AND b.k = a.x;
             SELECT a.id, b.id FROM a JOIN b ON b.k = a.x JOIN c ON c.t = a.s
               WHERE a.id BETWEEN {lo} AND {hi} ORDER BY 1, 2;
             SELECT a.id, c.id, d.id FROM a, c, d WHERE a.id BETWEEN {lo} AND {hi}
               AND c.t = a.s AND d.m = a.n ORDER BY 1, 2, 3;
             SELECT a.id, b.v, c.u, d.r FROM a, b, c, d WHERE a.id BETWEEN {lo} AND {hi}
               AND b.k = a.x AND c.u = b.id % 41 AND d.id = c.id ORDER BY 1, 2, 3, 4;
             SELECT a.id, c.u FROM a, c WHERE a.id BETWEEN {lo} AND {hi}
               AND c.t = a.s AND c.u > a.id % 20 ORDER BY 1, 2;
             SELECT a.id, count(*) FROM a, c WHERE a.id BETWEEN {lo} AND {hi}
               AND c.u BETWEEN a.id % 41 AND a.id % 41 + 3 GROUP BY a.id;
             SELECT a.id, d.id FROM a, d WHERE a.id BETWEEN {lo} AND {hi}
               AND d.m = a.n COLLATE BINARY ORDER BY 1, 2;
             SELECT a.id, b.id FROM a, b WHERE a.id BETWEEN {lo} AND {hi}
               AND b.w = a.id % 30 ORDER BY 1, 2;
             SELECT a.id, b.id FROM a, b WHERE a.id BETWEEN {lo} AND {hi}
               AND b.k = a.s ORDER BY 1, 2;
             SELECT a.id, b.id FROM a, b WHERE a.id BETWEEN {lo} AND {hi}
               AND b.k = CAST(a.x AS TEXT) ORDER BY 1, 2;\n"
        ));
    }
    check(&s);
}

/// Self-joins: two levels walking the same index (each keeps its own walk), and LEFT
/// JOINs whose inner walk finds nothing for some outer rows (the NULL row), then
/// something again.
#[test]
fn self_joins_and_left_joins_match_sqlite() {
    let mut s = setup();
    for (lo, hi) in [(0, 60), (200, 299), (13, 13)] {
        s.push_str(&format!(
            "SELECT a1.id, a2.id, a3.id FROM a a1, a a2, a a3 WHERE a1.id BETWEEN {lo} AND {hi}
               AND a2.s = a1.s AND a3.n = a2.n AND a3.id < a1.id ORDER BY 1, 2, 3;
             SELECT c1.id, c2.id FROM c c1, c c2 WHERE c1.id BETWEEN {lo} AND {hi}
               AND c2.t = c1.t AND c2.u = c1.u ORDER BY 1, 2;
             SELECT a.id, b.id, c.id FROM a LEFT JOIN b ON b.k = a.x
               LEFT JOIN c ON c.t = a.s AND c.u = b.id % 41
               WHERE a.id BETWEEN {lo} AND {hi} ORDER BY 1, 2, 3;
             SELECT a.id, d.r FROM a LEFT JOIN d ON d.m = a.n AND d.r > 1
               WHERE a.id BETWEEN {lo} AND {hi} ORDER BY 1, 2;
             SELECT a.id, (SELECT count(*) FROM b, c WHERE b.k = a.x AND c.u = b.id % 41)
               FROM a WHERE a.id BETWEEN {lo} AND {hi};
             SELECT a.id FROM a WHERE a.id BETWEEN {lo} AND {hi}
               AND EXISTS (SELECT 1 FROM c, d WHERE c.t = a.s AND d.id = c.u);\n"
        ));
    }
    check(&s);
}

/// Joins inside statements that write one of the joined tables, so the trees a kept
/// walk reads change between its outer rows: correlated subqueries with joins in UPDATE
/// and DELETE, UPDATE ... FROM, INSERT ... SELECT into a joined table, and triggers whose
/// joins read what the statement writes.
#[test]
fn joins_in_statements_that_write_the_joined_tables_match_sqlite() {
    let mut s = setup();
    s.push_str(
        "CREATE TABLE log(id INTEGER PRIMARY KEY, a_id, n);
         CREATE TRIGGER tb AFTER UPDATE ON b BEGIN
           INSERT INTO log(a_id, n) SELECT a.id, count(*) FROM a, c
             WHERE a.x = new.k AND c.t = a.s GROUP BY a.id;
           DELETE FROM c WHERE u = new.id % 41 AND t IS NULL;
         END;
         BEGIN;
         UPDATE b SET k = k + 1000 WHERE id IN (SELECT b2.id FROM a, b b2
           WHERE a.id BETWEEN 10 AND 60 AND b2.k = a.x);
         SELECT id, k FROM b ORDER BY id;
         SELECT * FROM log ORDER BY id;
         UPDATE c SET u = (SELECT count(*) FROM a, b WHERE a.s = c.t AND b.k = a.x)
           WHERE id < 120;
         SELECT id, t, u FROM c ORDER BY id;
         UPDATE c SET t = 'moved' || c.id FROM a, d WHERE a.s = c.t AND d.m = a.n
           AND a.id < 90;
         SELECT id, t, u FROM c ORDER BY id;
         INSERT INTO c(t, u) SELECT c.t, c.u + 1 FROM a, c WHERE a.id BETWEEN 0 AND 80
           AND c.t = a.s;
         SELECT count(*), sum(u) FROM c;
         DELETE FROM d WHERE EXISTS (SELECT 1 FROM a, c WHERE a.n = d.m AND c.t = a.s
           AND c.u > 3);
         SELECT id, m FROM d ORDER BY id;
         UPDATE b SET w = (SELECT count(*) FROM a, b AS b2 WHERE a.x = b.k - 1000
           AND b2.w = a.id % 30) WHERE id % 3 = 0;
         SELECT id, k, w FROM b ORDER BY id;
         SELECT * FROM log ORDER BY id;
         COMMIT;
         SELECT a.id, b.id, c.id FROM a, b, c WHERE a.id BETWEEN 0 AND 299 AND b.k = a.x
           AND c.t = a.s ORDER BY 1, 2, 3;\n",
    );
    check(&s);
}

/// Kept walks keep their table's defaults and REAL columns (`KeptWalk`): inner tables
/// with columns added by ALTER TABLE (DEFAULTs read from rows written before, several
/// defaults, expressions of defaults), REAL columns holding integers, walked by unique and
/// non-unique (covering and non-covering) indexes over integer and NOCASE text keys, in 3-
/// and 4-way joins like speedtest1 310's, with LEFT JOINs, NULL keys and an empty table.
#[test]
fn kept_walks_over_defaults_and_reals_match_sqlite() {
    let mut s = String::from(
        "CREATE TABLE p(a INTEGER UNIQUE, b INTEGER, c TEXT);
         CREATE TABLE q(a INTEGER UNIQUE, b INTEGER, c TEXT COLLATE NOCASE, r REAL);
         CREATE TABLE e(a INTEGER UNIQUE, b INTEGER);
         CREATE INDEX qc ON q(c);
         CREATE INDEX pb ON p(b);\n",
    );
    for i in 0..120 {
        let b = if i % 10 == 0 {
            "NULL".to_string()
        } else {
            format!("{}", (i * 7) % 120)
        };
        s.push_str(&format!(
            "INSERT INTO p VALUES({i}, {b}, 'k{}');
             INSERT INTO q VALUES({}, {i}, '{}{}', {});\n",
            i % 17,
            (i * 11) % 127,
            if i % 2 == 0 { "K" } else { "k" },
            i % 23,
            i % 5
        ));
    }
    s.push_str(
        "ALTER TABLE q ADD COLUMN d INT DEFAULT 123;
         ALTER TABLE q ADD COLUMN f REAL DEFAULT 2;
         ALTER TABLE p ADD COLUMN g TEXT DEFAULT 'gd';
         UPDATE q SET d = a, f = 0.5 WHERE a % 3 = 0;
         INSERT INTO q(a, b, c, r, d) VALUES (500, 7, 'k7', 1, NULL);
         INSERT INTO p(a, b, c, g) VALUES (500, 500, 'k3', NULL);\n",
    );
    for (lo, hi) in [(0, 30), (40, 119), (7, 7), (200, 300)] {
        s.push_str(&format!(
            "SELECT p1.a, q.a, q.d, q.f, q.r, p2.g FROM p p1, q, p p2
               WHERE p1.a BETWEEN {lo} AND {hi} AND q.a = p1.b AND p2.c = q.c
               ORDER BY 1, 2, 6;
             SELECT p1.a, q.d + q.f, p2.a, p3.g FROM p p1, q, p p2, p p3
               WHERE p1.a BETWEEN {lo} AND {hi} AND q.b = p1.b AND p2.a = q.d
                 AND p3.b = p2.a ORDER BY 1, 2, 3, 4;
             SELECT p.a, q.a, q.d, q.f FROM p LEFT JOIN q ON q.a = p.b AND q.f > 1
               WHERE p.a BETWEEN {lo} AND {hi} ORDER BY 1, 2;
             SELECT p.a, e.b, q.d FROM p LEFT JOIN e ON e.a = p.b LEFT JOIN q ON q.a = p.b
               WHERE p.a BETWEEN {lo} AND {hi} ORDER BY 1, 2, 3;
             SELECT p.a, e.b FROM p, e WHERE p.a BETWEEN {lo} AND {hi} AND e.a = p.b;
             SELECT p.a, (SELECT q.d FROM q WHERE q.a = p.b),
                    (SELECT count(*) FROM q WHERE q.c = p.c AND q.f < 2),
                    (SELECT group_concat(q.a) FROM q WHERE q.c = p.c)
               FROM p WHERE p.a BETWEEN {lo} AND {hi} ORDER BY 1;\n"
        ));
    }
    check(&s);
}
