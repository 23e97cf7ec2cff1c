//! Rows deleted by REPLACE conflict resolution (exec/dml/replace_delete.rs): their DELETE
//! triggers fire if and only if `PRAGMA recursive_triggers` is on, and with
//! `PRAGMA foreign_keys` on each gets a parent row's ON DELETE actions (CASCADE, SET NULL,
//! SET DEFAULT, RESTRICT, NO ACTION checked after the new row is written). Against SQLite
//! (rusqlite, bundled) as the oracle: rows, changes()/total_changes(), the tables the
//! triggers write, and error messages; rowid and WITHOUT ROWID tables, INTEGER PRIMARY KEY
//! and UNIQUE conflicts, several conflicting rows at once, INSERT and UPDATE OR REPLACE,
//! inside explicit transactions.

mod common;

use common::{check_script, Compare};

/// A logging table and BEFORE/AFTER DELETE triggers on `t`, plus an INSERT trigger.
const LOG_TRIGGERS: &str = "
    CREATE TABLE log(seq INTEGER PRIMARY KEY, what, a, b);
    CREATE TRIGGER bd BEFORE DELETE ON t BEGIN
      INSERT INTO log(what, a, b) VALUES('before delete', old.a, old.b);
    END;
    CREATE TRIGGER ad AFTER DELETE ON t BEGIN
      INSERT INTO log(what, a, b) VALUES('after delete', old.a, old.b);
    END;
    CREATE TRIGGER ai AFTER INSERT ON t BEGIN
      INSERT INTO log(what, a, b) VALUES('insert', new.a, new.b);
    END;
";

/// The statements run once with recursive_triggers off and once with it on.
fn both_settings(schema: &str, body: &str) {
    for setting in ["OFF", "ON"] {
        check_script(
            &format!("PRAGMA recursive_triggers = {setting}; PRAGMA recursive_triggers;\n{schema}\n{LOG_TRIGGERS}\n{body}"),
            Compare::default(),
        );
    }
}

const REPLACES: &str = "
    INSERT INTO t VALUES(1, 'x', 10), (2, 'y', 20), (3, 'z', 30);
    REPLACE INTO t VALUES(1, 'xx', 11);
    SELECT changes(), total_changes();
    INSERT OR REPLACE INTO t VALUES(4, 'y', 40);
    SELECT changes(), total_changes();
    -- Two rows clash at once: the rowid / key 3 and the UNIQUE value 'xx' of row 1.
    REPLACE INTO t VALUES(3, 'xx', 33);
    SELECT changes(), total_changes();
    SELECT * FROM t ORDER BY a;
    SELECT * FROM log ORDER BY seq;
    BEGIN;
    INSERT OR REPLACE INTO t VALUES(5, 'y', 50), (6, 'xx', 60);
    SELECT changes();
    UPDATE OR REPLACE t SET b = 'y' WHERE a = 6;
    SELECT changes(), total_changes();
    UPDATE OR REPLACE t SET a = 6 WHERE a = 3;
    COMMIT;
    SELECT * FROM t ORDER BY a;
    SELECT * FROM log ORDER BY seq;
    BEGIN;
    REPLACE INTO t VALUES(6, 'q', 0);
    ROLLBACK;
    SELECT * FROM t ORDER BY a;
    SELECT count(*) FROM log;
    PRAGMA integrity_check;
";

#[test]
fn delete_triggers_on_rowid_table() {
    both_settings(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, c);",
        REPLACES,
    );
}

#[test]
fn delete_triggers_on_rowid_table_with_index() {
    both_settings(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, c); CREATE INDEX tc ON t(c);",
        REPLACES,
    );
}

#[test]
fn delete_triggers_on_without_rowid_table() {
    both_settings(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, c) WITHOUT ROWID;",
        REPLACES,
    );
}

#[test]
fn delete_triggers_on_declared_replace() {
    both_settings(
        "CREATE TABLE t(a INTEGER PRIMARY KEY ON CONFLICT REPLACE, b UNIQUE ON CONFLICT REPLACE, c);",
        "INSERT INTO t VALUES(1, 'x', 10), (2, 'y', 20);
         INSERT INTO t VALUES(1, 'y', 11);
         SELECT changes(), total_changes();
         UPDATE t SET b = 'y' WHERE a = 1;
         INSERT INTO t VALUES(7, 'y', 70);
         UPDATE t SET a = 7 WHERE a = 1;
         SELECT * FROM t ORDER BY a;
         SELECT * FROM log ORDER BY seq;",
    );
}

#[test]
fn trigger_side_effects_and_ignore() {
    // A BEFORE DELETE trigger that writes to the replaced table itself, and one that
    // RAISEs: the REPLACE fails with the trigger's message when recursive_triggers is on.
    check_script(
        "PRAGMA recursive_triggers = 1;
         CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE);
         CREATE TABLE gone(a, b);
         CREATE TRIGGER keep AFTER DELETE ON t BEGIN INSERT INTO gone VALUES(old.a, old.b); END;
         INSERT INTO t VALUES(1, 'x'), (2, 'y');
         REPLACE INTO t VALUES(3, 'x');
         SELECT * FROM t ORDER BY a;
         SELECT * FROM gone;
         CREATE TRIGGER no BEFORE DELETE ON t WHEN old.b = 'y' BEGIN SELECT RAISE(ABORT, 'kept y'); END;
         REPLACE INTO t VALUES(2, 'z');
         SELECT * FROM t ORDER BY a;
         PRAGMA recursive_triggers = 0;
         REPLACE INTO t VALUES(2, 'z');
         SELECT * FROM t ORDER BY a;
         SELECT * FROM gone;",
        Compare::default(),
    );
}

#[test]
fn foreign_key_actions_on_replaced_parent() {
    for parent in [
        "CREATE TABLE p(id INTEGER PRIMARY KEY, u UNIQUE, v)",
        "CREATE TABLE p(id INTEGER PRIMARY KEY, u UNIQUE, v) WITHOUT ROWID",
        "CREATE TABLE p(id INT PRIMARY KEY, u UNIQUE, v)",
    ] {
        check_script(
            &format!(
                "PRAGMA foreign_keys = ON;
                 {parent};
                 CREATE TABLE cc(x INTEGER PRIMARY KEY, pid REFERENCES p(id) ON DELETE CASCADE);
                 CREATE TABLE cn(x INTEGER PRIMARY KEY, pid REFERENCES p(id) ON DELETE SET NULL);
                 CREATE TABLE cd(x INTEGER PRIMARY KEY, pid DEFAULT 9 REFERENCES p(id) ON DELETE SET DEFAULT);
                 CREATE TABLE cu(x INTEGER PRIMARY KEY, pu REFERENCES p(u) ON DELETE CASCADE);
                 INSERT INTO p VALUES(1, 'a', 0), (2, 'b', 0), (3, 'c', 0), (9, 'i', 0);
                 INSERT INTO cc VALUES(1, 1), (2, 2), (3, 3);
                 INSERT INTO cn VALUES(1, 1), (2, 2);
                 INSERT INTO cd VALUES(1, 1), (2, 3);
                 INSERT INTO cu VALUES(1, 'a'), (2, 'c');
                 -- Same key: SQLite still deletes the old row, so CASCADE takes the children.
                 REPLACE INTO p VALUES(1, 'a', 1);
                 SELECT changes(), total_changes();
                 SELECT * FROM cc ORDER BY x;
                 SELECT * FROM cn ORDER BY x;
                 SELECT * FROM cd ORDER BY x;
                 SELECT * FROM cu ORDER BY x;
                 -- Two parents replaced by one row (key 2, UNIQUE 'c' of row 3).
                 BEGIN;
                 INSERT OR REPLACE INTO p VALUES(2, 'c', 2);
                 SELECT changes(), total_changes();
                 COMMIT;
                 SELECT * FROM p ORDER BY id;
                 SELECT * FROM cc ORDER BY x;
                 SELECT * FROM cn ORDER BY x;
                 SELECT * FROM cd ORDER BY x;
                 SELECT * FROM cu ORDER BY x;
                 INSERT INTO cc VALUES(5, 2);
                 UPDATE OR REPLACE p SET id = 2 WHERE id = 9;
                 SELECT * FROM p ORDER BY id;
                 SELECT * FROM cc ORDER BY x;
                 SELECT * FROM cd ORDER BY x;
                 PRAGMA foreign_key_check;"
            ),
            Compare::default(),
        );
    }
}

#[test]
fn foreign_key_restrict_and_no_action_on_replaced_parent() {
    for parent in [
        "CREATE TABLE p(id INTEGER PRIMARY KEY, u UNIQUE)",
        "CREATE TABLE p(id TEXT PRIMARY KEY, u UNIQUE) WITHOUT ROWID",
    ] {
        check_script(
            &format!(
                "PRAGMA foreign_keys = ON;
                 {parent};
                 CREATE TABLE cr(x INTEGER PRIMARY KEY, pid REFERENCES p(id) ON DELETE RESTRICT);
                 CREATE TABLE cn(x INTEGER PRIMARY KEY, pid REFERENCES p(id));
                 INSERT INTO p VALUES(1, 'a'), (2, 'b'), (3, 'c');
                 INSERT INTO cr VALUES(1, 1);
                 INSERT INTO cn VALUES(1, 2);
                 -- RESTRICT fails even when the new row keeps the key.
                 REPLACE INTO p VALUES(1, 'a');
                 SELECT * FROM p ORDER BY id;
                 -- NO ACTION: the new row brings the key back, no violation.
                 REPLACE INTO p VALUES(2, 'bb');
                 SELECT changes();
                 SELECT * FROM p ORDER BY id;
                 -- NO ACTION: the key is gone (row 2 deleted for its UNIQUE value).
                 REPLACE INTO p VALUES(4, 'bb');
                 SELECT * FROM p ORDER BY id;
                 BEGIN;
                 REPLACE INTO p VALUES(5, 'bb');
                 REPLACE INTO p VALUES(3, 'z');
                 COMMIT;
                 SELECT * FROM p ORDER BY id;
                 UPDATE OR REPLACE p SET u = 'bb' WHERE id = 3;
                 SELECT * FROM p ORDER BY id;"
            ),
            Compare::default(),
        );
    }
}

#[test]
fn deferred_foreign_key_kept_by_replace() {
    // A deferred key whose parent is replaced by a row with the same key: no violation
    // at COMMIT; a CASCADE child of a deferred key is deleted at once.
    check_script(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE p(id INTEGER PRIMARY KEY, u UNIQUE);
         CREATE TABLE c(x INTEGER PRIMARY KEY, pid REFERENCES p DEFERRABLE INITIALLY DEFERRED);
         CREATE TABLE cc(x INTEGER PRIMARY KEY, pid REFERENCES p ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED);
         INSERT INTO p VALUES(1, 'a'), (2, 'b');
         INSERT INTO c VALUES(1, 1);
         INSERT INTO cc VALUES(1, 1), (2, 2);
         BEGIN;
         REPLACE INTO p VALUES(1, 'aa');
         REPLACE INTO p VALUES(3, 'b');
         COMMIT;
         SELECT * FROM p ORDER BY id;
         SELECT * FROM c ORDER BY x;
         SELECT * FROM cc ORDER BY x;",
        Compare::default(),
    );
}

#[test]
fn foreign_keys_off_replace_touches_no_child() {
    // rusqlite's bundled SQLite turns foreign keys on by default: off is said explicitly.
    check_script(
        "PRAGMA foreign_keys = OFF;
         CREATE TABLE p(id INTEGER PRIMARY KEY, u UNIQUE);
         CREATE TABLE c(x INTEGER PRIMARY KEY, pid REFERENCES p ON DELETE CASCADE);
         INSERT INTO p VALUES(1, 'a');
         INSERT INTO c VALUES(1, 1);
         REPLACE INTO p VALUES(2, 'a');
         SELECT * FROM p;
         SELECT * FROM c;
         PRAGMA recursive_triggers;",
        Compare::default(),
    );
}

#[test]
fn allocated_rowid_survives_the_replace_delete() {
    // The new row's rowid is allocated before the clashing (largest) row is deleted, as in
    // SQLite; AUTOINCREMENT records it once.
    for table in [
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE)",
        "CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b UNIQUE)",
        "CREATE TABLE t(a, b UNIQUE)",
    ] {
        check_script(
            &format!(
                "PRAGMA recursive_triggers = ON;
                 {table};
                 CREATE TABLE log(what, r, b);
                 CREATE TRIGGER ad AFTER DELETE ON t BEGIN
                   INSERT INTO log VALUES('deleted', old.rowid, old.b);
                 END;
                 INSERT INTO t(b) VALUES('x'), ('y'), ('z');
                 REPLACE INTO t(b) VALUES('z');
                 SELECT last_insert_rowid(), changes();
                 SELECT rowid, * FROM t ORDER BY rowid;
                 SELECT * FROM log;
                 INSERT INTO t(b) VALUES('w');
                 SELECT rowid, * FROM t ORDER BY rowid;"
            ),
            Compare::default(),
        );
    }
}

#[test]
fn cascade_through_replace_with_child_triggers() {
    // A CASCADE delete of the child fires the child's own DELETE triggers (not a REPLACE
    // delete: recursive_triggers does not matter for them), and counts in total_changes().
    check_script(
        "PRAGMA foreign_keys = ON;
         CREATE TABLE p(id INTEGER PRIMARY KEY, u UNIQUE);
         CREATE TABLE c(x INTEGER PRIMARY KEY, pid REFERENCES p ON DELETE CASCADE);
         CREATE TABLE log(x, pid);
         CREATE TRIGGER cd AFTER DELETE ON c BEGIN INSERT INTO log VALUES(old.x, old.pid); END;
         INSERT INTO p VALUES(1, 'a'), (2, 'b');
         INSERT INTO c VALUES(1, 1), (2, 1), (3, 2);
         INSERT OR REPLACE INTO p VALUES(1, 'b');
         SELECT changes(), total_changes();
         SELECT * FROM p;
         SELECT * FROM c;
         SELECT * FROM log ORDER BY x;",
        Compare::default(),
    );
}

#[test]
fn self_referencing_parent_replaced() {
    // The table is its own parent: the replaced row's children (in the same table) go by
    // CASCADE, and the new row is then checked as a child.
    check_script(
        "PRAGMA foreign_keys = ON;
         PRAGMA recursive_triggers = ON;
         CREATE TABLE t(id INTEGER PRIMARY KEY, up REFERENCES t ON DELETE CASCADE, u UNIQUE);
         CREATE TABLE log(id);
         CREATE TRIGGER d AFTER DELETE ON t BEGIN INSERT INTO log VALUES(old.id); END;
         INSERT INTO t VALUES(1, NULL, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, NULL, 'd');
         REPLACE INTO t VALUES(5, 4, 'b');
         SELECT * FROM t ORDER BY id;
         SELECT * FROM log;
         REPLACE INTO t VALUES(6, NULL, 'd');
         SELECT * FROM t ORDER BY id;
         SELECT * FROM log;
         UPDATE OR REPLACE t SET u = 'a' WHERE id = 6;
         SELECT * FROM t ORDER BY id;
         SELECT changes(), total_changes();
         -- The new row references the row it replaces, which the REPLACE deleted. (Not
         -- followed by total_changes(): SQLite counts the changes of a statement that fails
         -- its foreign-key check at the end, parlite does not.)
         REPLACE INTO t VALUES(7, 6, 'a');
         SELECT * FROM t ORDER BY id;
         SELECT * FROM log;",
        Compare::default(),
    );
}
