//! A multi-row UPDATE or DELETE reads each matched row again at its turn when triggers or
//! foreign-key actions run (exec/dml/update.rs, delete.rs): a trigger fired for one row may
//! change or delete a later matched row, and SQLite then hands that row's triggers its
//! current values, computes its SET expressions from them, and skips a row already gone.
//! SQLite (rusqlite, bundled) is the oracle; `changes()` and the trigger logs are compared.

mod common;

use common::{check_script, Compare};

/// Table kinds every script runs on: the row found again by rowid or by PRIMARY KEY.
const KINDS: [&str; 2] = ["", " WITHOUT ROWID"];

/// The table and log every script starts from: rows 1..=n with b = 10*a.
fn setup(n: usize, kind: &str) -> String {
    let mut s = format!(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c TEXT){kind};\n\
         CREATE TABLE log(x);\n"
    );
    for a in 1..=n {
        s.push_str(&format!("INSERT INTO t VALUES({a}, {}, 'r{a}');\n", a * 10));
    }
    s
}

const CHECK: &str =
    "SELECT changes();\nSELECT * FROM log ORDER BY rowid;\nSELECT * FROM t ORDER BY a;\n";

#[test]
fn update_sees_a_later_row_changed_by_a_before_trigger() {
    for (n, kind) in [2, 5, 40].into_iter().flat_map(|n| KINDS.map(|k| (n, k))) {
        let script = format!(
            "{}CREATE TRIGGER bu BEFORE UPDATE ON t BEGIN \
               UPDATE t SET b = b + 1000 WHERE a = old.a + 1; END;\n\
             CREATE TRIGGER au AFTER UPDATE ON t BEGIN \
               INSERT INTO log VALUES(old.a || ':' || old.b || '->' || new.b); END;\n\
             UPDATE t SET b = b + 1 WHERE a BETWEEN 1 AND {n};\n{CHECK}",
            setup(n, kind)
        );
        check_script(&script, Compare::default());
    }
}

#[test]
fn update_skips_a_later_row_deleted_by_a_trigger() {
    for (timing, kind) in [
        ("BEFORE", ""),
        ("AFTER", ""),
        ("BEFORE", KINDS[1]),
        ("AFTER", KINDS[1]),
    ] {
        let script = format!(
            "{}CREATE TRIGGER tu {timing} UPDATE ON t WHEN old.a % 3 = 1 BEGIN \
               DELETE FROM t WHERE a = old.a + 1; END;\n\
             CREATE TRIGGER au AFTER UPDATE ON t BEGIN \
               INSERT INTO log VALUES(old.a || '->' || new.b); END;\n\
             UPDATE t SET b = -b WHERE b > 0;\n{CHECK}",
            setup(12, kind)
        );
        check_script(&script, Compare::default());
    }
}

#[test]
fn delete_hands_triggers_the_row_as_it_is_at_its_turn() {
    for kind in KINDS {
        let script = format!(
            "{}CREATE TRIGGER bd BEFORE DELETE ON t BEGIN \
           UPDATE t SET b = 99, c = 'changed' WHERE a = old.a + 1; END;\n\
         CREATE TRIGGER ad AFTER DELETE ON t BEGIN \
           INSERT INTO log VALUES(old.a || ':' || old.b || ':' || old.c); END;\n\
         DELETE FROM t WHERE a BETWEEN 1 AND 6;\n{CHECK}",
            setup(8, kind)
        );
        check_script(&script, Compare::default());
    }
}

#[test]
fn delete_skips_rows_a_trigger_already_deleted() {
    for (timing, kind) in [
        ("BEFORE", ""),
        ("AFTER", ""),
        ("BEFORE", KINDS[1]),
        ("AFTER", KINDS[1]),
    ] {
        let script = format!(
            "{}CREATE TRIGGER td {timing} DELETE ON t BEGIN \
               DELETE FROM t WHERE a = old.a + 2; END;\n\
             CREATE TRIGGER ad AFTER DELETE ON t BEGIN INSERT INTO log VALUES(old.a); END;\n\
             DELETE FROM t WHERE b >= 20;\n{CHECK}",
            setup(15, kind)
        );
        check_script(&script, Compare::default());
    }
}

#[test]
fn delete_skips_rows_a_foreign_key_cascade_deleted() {
    let mut script = String::from(
        "PRAGMA foreign_keys = ON;\n\
         CREATE TABLE tree(id INTEGER PRIMARY KEY, parent REFERENCES tree(id) ON DELETE CASCADE, v);\n\
         CREATE TABLE log(x);\n\
         CREATE TRIGGER ad AFTER DELETE ON tree BEGIN INSERT INTO log VALUES(old.id); END;\n",
    );
    script.push_str("INSERT INTO tree VALUES(1, NULL, 0);\n");
    for id in 2..=30 {
        script.push_str(&format!(
            "INSERT INTO tree VALUES({id}, {}, {id});\n",
            id / 2
        ));
    }
    script.push_str(
        "DELETE FROM tree WHERE v BETWEEN 2 AND 9;\nSELECT changes();\n\
         SELECT * FROM log ORDER BY rowid;\nSELECT * FROM tree ORDER BY id;\n",
    );
    check_script(&script, Compare::default());
}

#[test]
fn update_keeps_a_before_triggers_change_to_its_own_row() {
    for kind in KINDS {
        // The trigger writes a column SET leaves alone (kept), a column SET assigns (SET wins),
        // or deletes the row (the UPDATE skips it); `g` is generated from both.
        let script = format!("CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, g AS (a * 1000 + b)){kind};\n\
         CREATE TABLE log(x);\n\
         INSERT INTO t(id, a, b) VALUES(1, 10, 20), (2, 30, 40), (3, 50, 60), (4, 70, 80);\n\
         CREATE TRIGGER bu BEFORE UPDATE ON t BEGIN \
           UPDATE t SET b = b + 1, a = -1 WHERE id = old.id AND old.id % 2 = 0; \
           DELETE FROM t WHERE id = old.id AND old.id = 3; END;\n\
         CREATE TRIGGER au AFTER UPDATE ON t BEGIN \
           INSERT INTO log VALUES(old.id || ':' || old.a || '/' || old.b || '->' || new.a || '/' || new.b || '/' || new.g); END;\n\
         UPDATE t SET a = a + 1;\nSELECT changes();\nSELECT * FROM log ORDER BY rowid;\nSELECT * FROM t ORDER BY id;\n");
        check_script(&script, Compare::default());
    }
}
