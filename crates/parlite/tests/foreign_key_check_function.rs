//! `pragma_foreign_key_check` as a table-valued function (bare, with a table, with a
//! schema, joined per outer row, after the data changes) and `DELETE … INDEXED BY` on the
//! truncate path: the same scripts through parlite and SQLite (rusqlite, bundled, which
//! starts with foreign_keys ON), outcomes compared statement by statement.

mod common;
use common::{check_script, Compare};

/// Rows of statements without ORDER BY are compared as multisets: SQLite walks its
/// tables in hash order for `foreign_key_check`.
const UNORDERED: Compare = Compare {
    unordered_without_order_by: true,
    ignore_alter_names: false,
};

#[test]
fn table_valued_foreign_key_check() {
    check_script(
        "PRAGMA foreign_keys=OFF;
        CREATE TABLE p(id INTEGER PRIMARY KEY, x);
        CREATE TABLE p2(u, v, UNIQUE(u, v));
        CREATE TABLE c(a REFERENCES p(id), b, c2, FOREIGN KEY(b, c2) REFERENCES p2(u, v));
        CREATE TABLE wc(k PRIMARY KEY, r REFERENCES p) WITHOUT ROWID;
        CREATE TABLE orphan(x REFERENCES nothere);
        CREATE TABLE plain(q);
        SELECT * FROM pragma_foreign_key_check;
        INSERT INTO p VALUES(1, 'a'), (2, 'b');
        INSERT INTO p2 VALUES(1, 1);
        INSERT INTO c VALUES(1, 1, 1), (3, 1, 1), (2, 5, 5), (NULL, 1, 2), (9, NULL, 7);
        INSERT INTO wc VALUES(1, 9), (2, 1), (3, NULL);
        INSERT INTO orphan VALUES(1), (NULL);
        INSERT INTO plain VALUES(1);
        PRAGMA foreign_key_check;
        SELECT * FROM pragma_foreign_key_check;
        SELECT * FROM pragma_foreign_key_check() ORDER BY 1, 2, 4;
        SELECT * FROM pragma_foreign_key_check('c');
        SELECT \"table\", rowid, parent, fkid, arg, schema FROM pragma_foreign_key_check('c');
        SELECT * FROM pragma_foreign_key_check('wc');
        SELECT * FROM pragma_foreign_key_check('orphan', 'main');
        SELECT * FROM pragma_foreign_key_check(NULL, 'main') ORDER BY 1, 2, 4;
        SELECT * FROM pragma_foreign_key_check('plain');
        SELECT * FROM pragma_foreign_key_check('sqlite_schema');
        SELECT * FROM pragma_foreign_key_check('nosuch');
        SELECT * FROM pragma_foreign_key_check('c', 'nosuchdb');
        SELECT * FROM pragma_foreign_key_check('c', 'main', 1);
        SELECT count(*), max(fkid) FROM pragma_foreign_key_check WHERE parent = 'p';
        SELECT f.\"table\", f.parent FROM pragma_foreign_key_check AS f ORDER BY 1, 2;
        SELECT m.name, f.rowid, f.parent, f.fkid FROM sqlite_schema AS m,
          pragma_foreign_key_check(m.name) AS f WHERE m.type = 'table' ORDER BY 1, 2, 4;
        DELETE FROM c WHERE a = 3;
        INSERT INTO p VALUES(9, 'z');
        SELECT * FROM pragma_foreign_key_check('c');
        SELECT * FROM pragma_foreign_key_check('wc');",
        UNORDERED,
    );
}

#[test]
fn foreign_key_check_function_on_attached_database() {
    check_script(
        "PRAGMA foreign_keys=OFF;
        ATTACH ':memory:' AS aux;
        CREATE TABLE aux.p(id INTEGER PRIMARY KEY);
        CREATE TABLE aux.c(a REFERENCES p);
        CREATE TABLE c(a REFERENCES p);
        INSERT INTO aux.p VALUES(1);
        INSERT INTO aux.c VALUES(1), (2);
        SELECT * FROM pragma_foreign_key_check(NULL, 'aux');
        SELECT *, arg, schema FROM pragma_foreign_key_check('c', 'aux');
        SELECT * FROM pragma_foreign_key_check('p', 'aux');
        SELECT * FROM pragma_foreign_key_check('nosuch', 'aux');
        PRAGMA aux.foreign_key_check;",
        UNORDERED,
    );
}

#[test]
fn delete_indexed_by_without_where() {
    check_script(
        "CREATE TABLE t(a, b);
        CREATE INDEX ta ON t(a);
        CREATE INDEX tb ON t(b) WHERE b > 0;
        CREATE TABLE u(x);
        CREATE INDEX ux ON u(x);
        INSERT INTO t VALUES(1, 1), (2, -1);
        DELETE FROM t INDEXED BY nosuch;
        DELETE FROM t INDEXED BY ux;
        SELECT count(*) FROM t;
        DELETE FROM t INDEXED BY ta;
        SELECT count(*) FROM t;
        INSERT INTO t VALUES(1, 1), (2, -1);
        DELETE FROM t INDEXED BY tb;
        SELECT count(*) FROM t;
        INSERT INTO t VALUES(1, 1), (2, -1);
        DELETE FROM t INDEXED BY tb WHERE a = 1;
        DELETE FROM t INDEXED BY nosuch WHERE a = 1;
        DELETE FROM t NOT INDEXED;
        SELECT count(*) FROM t;
        PRAGMA foreign_keys=ON;
        CREATE TABLE p(id INTEGER PRIMARY KEY, k);
        CREATE INDEX pk ON p(k) WHERE k > 0;
        CREATE TABLE ch(r REFERENCES p);
        INSERT INTO p VALUES(1, 1), (2, -1);
        DELETE FROM p INDEXED BY nosuch;
        DELETE FROM p INDEXED BY pk;
        INSERT INTO t VALUES(1, 1);
        DELETE FROM t INDEXED BY tb;
        SELECT count(*) FROM t;
        SELECT count(*) FROM p;
        PRAGMA foreign_keys=OFF;
        DELETE FROM p INDEXED BY pk;
        SELECT count(*) FROM p;",
        Compare::default(),
    );
}
