//! Conflict resolution declared in CREATE TABLE (lang_conflict.html) and foreign-key
//! parent-key errors (foreignkeys.html §3), against SQLite (rusqlite, bundled) as the
//! oracle: a `UNIQUE ON CONFLICT FAIL` or `NOT NULL ON CONFLICT FAIL` with no OR clause on
//! the statement keeps the rows changed before the failing one (as `INSERT OR FAIL` does),
//! `ON CONFLICT ROLLBACK` ends the transaction, and the statement's own OR clause still wins.

mod common;

use common::{check_script, Compare};

#[test]
fn table_level_fail_keeps_earlier_rows() {
    check_script(
        "CREATE TABLE t(a UNIQUE ON CONFLICT FAIL, b NOT NULL ON CONFLICT FAIL, c);
         INSERT INTO t VALUES(1, 1, 1);
         INSERT INTO t VALUES(2, 2, 2), (1, 3, 3), (4, 4, 4);
         SELECT * FROM t ORDER BY a;
         SELECT changes(), total_changes();
         INSERT INTO t SELECT 5, 5, 5 UNION ALL SELECT 6, NULL, 6 UNION ALL SELECT 7, 7, 7;
         SELECT * FROM t ORDER BY a;
         UPDATE t SET a = 9 WHERE a >= 4;
         SELECT * FROM t ORDER BY a;
         INSERT OR ABORT INTO t VALUES(20, 20, 20), (1, 1, 1);
         SELECT * FROM t ORDER BY a;
         INSERT OR IGNORE INTO t VALUES(21, 21, 21), (1, 1, 1), (22, NULL, 22);
         SELECT * FROM t ORDER BY a;
         BEGIN;
         INSERT INTO t VALUES(30, 30, 30), (1, 1, 1);
         SELECT * FROM t ORDER BY a;
         ROLLBACK;
         SELECT * FROM t ORDER BY a;
         CREATE TABLE k(a PRIMARY KEY ON CONFLICT FAIL, b);
         INSERT INTO k VALUES(1, 1);
         INSERT INTO k VALUES(2, 2), (1, 1), (3, 3);
         SELECT * FROM k ORDER BY a;
         CREATE TABLE w(a PRIMARY KEY ON CONFLICT FAIL, b UNIQUE ON CONFLICT FAIL) WITHOUT ROWID;
         INSERT INTO w VALUES(1, 1);
         INSERT INTO w VALUES(2, 2), (1, 5), (3, 3);
         INSERT INTO w VALUES(4, 4), (5, 1), (6, 6);
         SELECT * FROM w ORDER BY a;
         CREATE TABLE r(a UNIQUE ON CONFLICT ROLLBACK);
         INSERT INTO r VALUES(1);
         BEGIN;
         INSERT INTO r VALUES(2);
         INSERT INTO r VALUES(3), (1);
         SELECT * FROM r ORDER BY a;
         COMMIT;
         SELECT * FROM r ORDER BY a;",
        Compare::default(),
    );
}

/// A parent key that is neither the INTEGER PRIMARY KEY nor UNIQUE (under the column's own
/// collation, not partial) is SQLite's "foreign key mismatch" when a statement must look it
/// up, even with no row to check; `PRAGMA foreign_key_check` reports it whatever
/// `foreign_keys` says. (The bundled SQLite starts with foreign keys on: the script says.)
#[test]
fn foreign_key_mismatch_errors() {
    check_script(
        "PRAGMA foreign_keys = OFF;
         CREATE TABLE p(x, y UNIQUE, z, w TEXT COLLATE NOCASE, id INTEGER PRIMARY KEY);
         CREATE UNIQUE INDEX pz ON p(z) WHERE z > 0;
         CREATE UNIQUE INDEX pw ON p(w COLLATE BINARY);
         CREATE TABLE c1(a REFERENCES p(x));
         CREATE TABLE c2(a REFERENCES p(y));
         CREATE TABLE c3(a REFERENCES p(z));
         CREATE TABLE c4(a REFERENCES p(w));
         CREATE TABLE c5(a REFERENCES p(id));
         CREATE TABLE c6(a REFERENCES p);
         CREATE TABLE c7(a REFERENCES p(nosuch));
         CREATE TABLE q(m, n, PRIMARY KEY(m, n));
         CREATE TABLE c8(a, b, FOREIGN KEY(b, a) REFERENCES q(n, m));
         CREATE TABLE c9(a, FOREIGN KEY(a) REFERENCES q(m));
         CREATE TABLE nopk(v);
         CREATE TABLE c10(a REFERENCES nopk);
         INSERT INTO c1 VALUES(1);
         PRAGMA foreign_key_check(c1);
         PRAGMA foreign_key_check(c2);
         PRAGMA foreign_key_check(c3);
         PRAGMA foreign_key_check(c4);
         PRAGMA foreign_key_check(c5);
         PRAGMA foreign_key_check(c7);
         PRAGMA foreign_key_check(c8);
         PRAGMA foreign_key_check(c9);
         PRAGMA foreign_key_check(c10);
         PRAGMA foreign_keys = ON;
         INSERT INTO p(x, y, z, w) VALUES(1, 1, 1, 'a');
         INSERT INTO c1 VALUES(1);
         INSERT INTO c2 VALUES(1);
         INSERT INTO c3 VALUES(1);
         INSERT INTO c4 VALUES('a');
         INSERT INTO c5 VALUES(1);
         INSERT INTO c6 VALUES(1);
         INSERT INTO c7 VALUES(1);
         INSERT INTO c8 VALUES(1, 2);
         INSERT INTO c9 VALUES(1);
         INSERT INTO c10 VALUES(1);
         DELETE FROM c1 WHERE 0;
         DELETE FROM c2;
         SELECT count(*) FROM c1;
         SELECT count(*) FROM c2;",
        Compare::default(),
    );
    // Deleting from a parent looks its children up: one whose key is not UNIQUE fails the
    // statement even when no row would be deleted.
    check_script(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE p(x, y UNIQUE);
         CREATE TABLE ok(a REFERENCES p(y));
         INSERT INTO p VALUES(1, 1);
         DELETE FROM p WHERE 0;
         CREATE TABLE bad(a REFERENCES p(x));
         DELETE FROM p WHERE 0;
         UPDATE p SET y = 2;
         SELECT * FROM p;
         PRAGMA foreign_key_check;",
        Compare::default(),
    );
}

/// An UPDATE of a child checks the keys whose child columns it sets; of a parent, every key
/// naming it (SQLite locates them all to know which old values to keep).
#[test]
fn foreign_key_mismatch_on_update() {
    check_script(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE p(x, y UNIQUE);
         CREATE TABLE c(a REFERENCES p(x), b REFERENCES p(y));
         INSERT INTO p VALUES(1, 1);
         INSERT INTO c VALUES(NULL, 1);
         UPDATE c SET b = 1;
         UPDATE c SET a = 1;
         UPDATE p SET x = 2;
         SELECT * FROM p;
         SELECT * FROM c;",
        Compare::default(),
    );
}
