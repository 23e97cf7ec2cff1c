//! Immediate foreign keys are checked at the end of the statement, not per row
//! (foreignkeys.html 4.2), against SQLite (rusqlite, bundled 3.50.2): a statement that
//! violates a key for a moment and repairs it before it ends succeeds, one that leaves a
//! violation fails and changes nothing; RESTRICT still fails at once.

mod common;

use common::{check_script, Compare};

#[test]
fn self_referencing_tables_repaired_within_one_statement() {
    check_script(
        "
        PRAGMA foreign_keys = ON;
        CREATE TABLE emp(id INTEGER PRIMARY KEY, boss INTEGER REFERENCES emp(id));
        INSERT INTO emp VALUES (1, NULL), (2, 1), (3, 2), (4, 2);
        UPDATE emp SET id = id + 10, boss = boss + 10;
        SELECT * FROM emp ORDER BY id;
        UPDATE emp SET id = id + 100 WHERE id > 11;
        SELECT * FROM emp ORDER BY id;
        UPDATE emp SET boss = boss + 1000;
        SELECT * FROM emp ORDER BY id;
        INSERT INTO emp VALUES (20, 21), (21, NULL);
        INSERT INTO emp VALUES (30, 31);
        INSERT INTO emp SELECT id + 100, boss + 100 FROM emp WHERE id IN (20, 21);
        SELECT * FROM emp ORDER BY id;
        DELETE FROM emp WHERE id IN (20, 21);
        DELETE FROM emp WHERE id = 21;
        DELETE FROM emp WHERE id >= 120;
        SELECT * FROM emp ORDER BY id;
        DELETE FROM emp WHERE id = 10 OR boss IS NOT NULL;
        SELECT * FROM emp ORDER BY id;
        CREATE TABLE node(name TEXT PRIMARY KEY, up TEXT REFERENCES node(name)) WITHOUT ROWID;
        INSERT INTO node VALUES ('b', 'a'), ('a', NULL), ('c', 'b');
        UPDATE node SET name = name || '2', up = up || '2';
        SELECT * FROM node ORDER BY name;
        UPDATE node SET name = 'z' WHERE name = 'a2';
        SELECT * FROM node ORDER BY name;
        DELETE FROM node;
        SELECT count(*) FROM node;
        ",
        Compare::default(),
    );
}

#[test]
fn parents_and_children_across_tables() {
    check_script(
        "
        PRAGMA foreign_keys = ON;
        CREATE TABLE p(id INTEGER PRIMARY KEY, v);
        CREATE TABLE c(id INTEGER PRIMARY KEY, pid REFERENCES p(id));
        CREATE TABLE r(id INTEGER PRIMARY KEY, pid REFERENCES p(id) ON DELETE RESTRICT);
        CREATE TABLE k(id INTEGER PRIMARY KEY, pid REFERENCES p(id) ON DELETE CASCADE);
        INSERT INTO p VALUES (1, 'a'), (2, 'b'), (3, 'c');
        INSERT INTO c VALUES (10, 1), (20, 2);
        INSERT INTO k VALUES (100, 3);
        CREATE TRIGGER c_parent BEFORE INSERT ON c WHEN NEW.pid NOT IN (SELECT id FROM p)
        BEGIN INSERT INTO p VALUES (NEW.pid, 'made'); END;
        INSERT INTO c VALUES (30, 4);
        DROP TRIGGER c_parent;
        CREATE TRIGGER c_late AFTER INSERT ON c WHEN NEW.pid = 5
        BEGIN INSERT INTO p VALUES (5, 'late'); END;
        INSERT INTO c VALUES (40, 5);
        INSERT INTO c VALUES (50, 6);
        SELECT * FROM p ORDER BY id;
        SELECT * FROM c ORDER BY id;
        CREATE TRIGGER p_gone AFTER DELETE ON p BEGIN DELETE FROM c WHERE pid = OLD.id; END;
        DELETE FROM p WHERE id = 1;
        DROP TRIGGER p_gone;
        DELETE FROM p WHERE id = 2;
        UPDATE p SET id = 22 WHERE id = 2;
        CREATE TRIGGER p_moved AFTER UPDATE ON p BEGIN UPDATE c SET pid = NEW.id WHERE pid = OLD.id; END;
        UPDATE p SET id = 22 WHERE id = 2;
        SELECT * FROM p ORDER BY id;
        SELECT * FROM c ORDER BY id;
        DELETE FROM p WHERE id = 3;
        SELECT * FROM k ORDER BY id;
        INSERT INTO r VALUES (1, 4);
        DELETE FROM p WHERE id = 4;
        CREATE TRIGGER r_first BEFORE DELETE ON p BEGIN DELETE FROM r WHERE pid = OLD.id; END;
        DELETE FROM p WHERE id = 4;
        SELECT * FROM p ORDER BY id;
        SELECT * FROM r ORDER BY id;
        REPLACE INTO p VALUES (5, 'replaced');
        SELECT * FROM p ORDER BY id;
        BEGIN;
        INSERT INTO c VALUES (60, 7);
        INSERT INTO c VALUES (70, 22), (80, 8);
        INSERT INTO p VALUES (7, 'x');
        INSERT INTO c VALUES (60, 7);
        COMMIT;
        SELECT * FROM c ORDER BY id;
        ",
        Compare::default(),
    );
}
