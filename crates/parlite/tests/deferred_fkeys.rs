//! Deferred foreign keys (foreignkeys.html 4.2, exec/fkey.rs): `DEFERRABLE INITIALLY
//! DEFERRED` keys and `PRAGMA defer_foreign_keys` inside explicit transactions are checked
//! at COMMIT (and the outermost RELEASE); a violation left fails COMMIT with
//! SQLITE_CONSTRAINT_FOREIGNKEY and leaves the transaction open; in autocommit they act as
//! immediate. Against SQLite (rusqlite, bundled) as the oracle; foreign_keys is set
//! explicitly on both.

mod common;

use common::{check_script, Compare};

const SCHEMA: &str = "
    PRAGMA foreign_keys = ON;
    CREATE TABLE p(id INTEGER PRIMARY KEY, v);
    CREATE TABLE c(x REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED, y);
";

fn check(body: &str) {
    check_script(&format!("{SCHEMA}\n{body}"), Compare::default());
}

#[test]
fn child_before_parent_commits() {
    check(
        "BEGIN;
         INSERT INTO c VALUES(1, 'a');
         INSERT INTO p VALUES(1, 'one');
         COMMIT;
         SELECT * FROM c;
         SELECT * FROM p;",
    );
}

#[test]
fn violation_at_commit_keeps_transaction_open() {
    check(
        "BEGIN;
         INSERT INTO c VALUES(2, 'a');
         COMMIT;
         SELECT * FROM c;
         COMMIT;
         INSERT INTO p VALUES(2, 'two');
         COMMIT;
         SELECT * FROM c;
         BEGIN;
         INSERT INTO c VALUES(3, 'b');
         COMMIT;
         ROLLBACK;
         SELECT * FROM c;
         BEGIN;
         INSERT INTO c VALUES(4, 'b');
         DELETE FROM c WHERE x = 4;
         COMMIT;
         BEGIN;
         INSERT INTO c VALUES(5, 'b');
         UPDATE c SET x = 2 WHERE x = 5;
         COMMIT;
         SELECT * FROM c ORDER BY rowid;",
    );
}

#[test]
fn autocommit_is_immediate() {
    check(
        "INSERT INTO c VALUES(1, 'a');
         SELECT * FROM c;
         INSERT INTO p VALUES(1, 'x');
         INSERT INTO c VALUES(1, 'a');
         DELETE FROM p;
         UPDATE p SET id = 9;
         SELECT * FROM p;
         PRAGMA defer_foreign_keys = ON;
         PRAGMA defer_foreign_keys;
         INSERT INTO c VALUES(7, 'a');
         SELECT * FROM c;",
    );
}

#[test]
fn parent_deleted_then_reinserted() {
    check(
        "INSERT INTO p VALUES(1, 'x'), (2, 'y');
         INSERT INTO c VALUES(1, 'a'), (2, 'b');
         BEGIN;
         DELETE FROM p WHERE id = 1;
         INSERT INTO p VALUES(1, 'again');
         COMMIT;
         BEGIN;
         DELETE FROM p WHERE id = 2;
         COMMIT;
         UPDATE c SET x = NULL WHERE x = 2;
         COMMIT;
         SELECT * FROM p ORDER BY id;
         SELECT * FROM c ORDER BY rowid;
         BEGIN;
         UPDATE p SET id = 10 WHERE id = 1;
         COMMIT;
         UPDATE p SET id = 1 WHERE id = 10;
         COMMIT;
         SELECT * FROM p ORDER BY id;",
    );
}

#[test]
fn defer_foreign_keys_pragma_defers_immediate_keys() {
    check_script(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE p(id INTEGER PRIMARY KEY);
         CREATE TABLE c(x REFERENCES p(id));
         CREATE TABLE r(x REFERENCES p(id) ON DELETE RESTRICT);
         BEGIN;
         INSERT INTO c VALUES(1);
         PRAGMA defer_foreign_keys = ON;
         PRAGMA defer_foreign_keys;
         INSERT INTO c VALUES(1);
         SELECT count(*) FROM c;
         COMMIT;
         INSERT INTO p VALUES(1);
         COMMIT;
         PRAGMA defer_foreign_keys;
         BEGIN;
         PRAGMA defer_foreign_keys = 1;
         INSERT INTO r VALUES(1);
         DELETE FROM p;
         DELETE FROM r;
         INSERT INTO c VALUES(5);
         ROLLBACK;
         PRAGMA defer_foreign_keys;
         SELECT * FROM c;
         BEGIN;
         INSERT INTO c VALUES(6);
         ROLLBACK;",
        Compare::default(),
    );
}

#[test]
fn rollback_to_savepoint() {
    check(
        "BEGIN;
         SAVEPOINT s1;
         INSERT INTO c VALUES(1, 'a');
         ROLLBACK TO s1;
         COMMIT;
         SELECT count(*) FROM c;
         BEGIN;
         INSERT INTO c VALUES(2, 'a');
         SAVEPOINT s2;
         INSERT INTO p VALUES(2, 'p');
         ROLLBACK TO s2;
         COMMIT;
         INSERT INTO p VALUES(2, 'p');
         RELEASE s2;
         COMMIT;
         SELECT * FROM c;
         SAVEPOINT outer1;
         INSERT INTO c VALUES(3, 'b');
         RELEASE outer1;
         INSERT INTO p VALUES(3, 'q');
         RELEASE outer1;
         SELECT * FROM c ORDER BY rowid;",
    );
}

#[test]
fn not_deferrable_forms_stay_immediate() {
    check_script(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE p(id INTEGER PRIMARY KEY);
         CREATE TABLE a(x REFERENCES p NOT DEFERRABLE INITIALLY DEFERRED);
         CREATE TABLE b(x REFERENCES p DEFERRABLE INITIALLY IMMEDIATE);
         CREATE TABLE d(x REFERENCES p DEFERRABLE);
         CREATE TABLE e(x, FOREIGN KEY(x) REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED);
         BEGIN;
         INSERT INTO a VALUES(1);
         INSERT INTO b VALUES(1);
         INSERT INTO d VALUES(1);
         INSERT INTO e VALUES(1);
         COMMIT;
         ROLLBACK;",
        Compare::default(),
    );
}

#[test]
fn commit_error_code_and_open_transaction() {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let setup = format!("{SCHEMA} BEGIN; INSERT INTO c VALUES(1, 'a');");
    s.execute_batch(&setup).expect("sqlite setup");
    p.execute_batch(&setup).expect("parlite setup");
    let se = s.execute_batch("COMMIT").expect_err("sqlite commit fails");
    let pe = p.execute_batch("COMMIT").expect_err("parlite commit fails");
    let rusqlite::Error::SqliteFailure(f, Some(m)) = se else {
        panic!("unexpected sqlite error {se:?}");
    };
    assert_eq!(f.extended_code, 787);
    assert_eq!((pe.code, pe.extended_code), (19, 787));
    assert_eq!(pe.message, m);
    assert_eq!(pe.message, "FOREIGN KEY constraint failed");
    assert!(!s.is_autocommit());
    assert!(!p.is_autocommit());
    s.execute_batch("INSERT INTO p VALUES(1, 'x'); COMMIT")
        .expect("sqlite fixed");
    p.execute_batch("INSERT INTO p VALUES(1, 'x'); COMMIT")
        .expect("parlite fixed");
    assert!(s.is_autocommit());
    assert!(p.is_autocommit());
}

#[test]
fn restrict_under_deferrable_is_immediate() {
    check_script(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE p(id INTEGER PRIMARY KEY);
         CREATE TABLE r(x REFERENCES p(id) ON DELETE RESTRICT DEFERRABLE INITIALLY DEFERRED);
         INSERT INTO p VALUES(1);
         INSERT INTO r VALUES(1);
         BEGIN;
         DELETE FROM p;
         INSERT INTO r VALUES(2);
         INSERT INTO p VALUES(2);
         COMMIT;
         SELECT * FROM r ORDER BY x;",
        Compare::default(),
    );
}

#[test]
fn replace_and_cascade_with_deferred_keys() {
    check_script(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE p(id INTEGER PRIMARY KEY, u UNIQUE);
         CREATE TABLE c(x REFERENCES p(u) DEFERRABLE INITIALLY DEFERRED);
         CREATE TABLE k(x REFERENCES p(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED);
         INSERT INTO p VALUES(1, 'a'), (2, 'b');
         INSERT INTO c VALUES('a'), ('b');
         INSERT INTO k VALUES(1), (2);
         BEGIN;
         REPLACE INTO p VALUES(3, 'a');
         SELECT * FROM k ORDER BY x;
         REPLACE INTO p VALUES(2, 'z');
         COMMIT;
         UPDATE p SET u = 'b' WHERE id = 2;
         COMMIT;
         SELECT * FROM p ORDER BY id;
         SELECT * FROM k ORDER BY x;
         PRAGMA foreign_key_check;",
        Compare::default(),
    );
}
