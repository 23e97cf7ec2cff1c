//! `UPDATE ... SET (a, b) = (x, y)` and `SET (a, b) = (SELECT x, y ...)` (lang_update.html)
//! against SQLite (rusqlite, bundled 3.50.2): the rows afterwards, RETURNING, triggers,
//! UPDATE ... FROM, views with INSTEAD OF triggers, and the size-mismatch errors.

mod common;

use common::{check_script, Compare};

#[test]
fn row_value_assignments_match_sqlite() {
    check_script(
        "
        CREATE TABLE t(a INTEGER PRIMARY KEY, b, c, d);
        CREATE INDEX tc ON t(c);
        CREATE TABLE u(x, y, z);
        INSERT INTO t VALUES (1, 10, 100, 'p'), (2, 20, 200, 'q'), (3, 30, 300, 'r');
        INSERT INTO u VALUES (1, 'one', 1.5), (2, 'two', 2.5), (9, 'nine', 9.5);
        UPDATE t SET (b, c) = (c, b) WHERE a = 1;
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (b, c) = (b + 1, c * 2), d = upper(d);
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (c, b) = (SELECT y, z FROM u WHERE x = t.a);
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (b, c) = (SELECT max(x), count(*) FROM u);
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (b, c) = (SELECT * FROM u ORDER BY 3 DESC LIMIT 1 OFFSET 1) WHERE a > 1;
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (c, b) = (SELECT y AS k, x FROM u ORDER BY k) WHERE a = 1;
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (b, c) = (SELECT x, y FROM u UNION ALL SELECT 7, 8 ORDER BY 1 DESC);
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (b, c) = (SELECT x, y FROM u EXCEPT SELECT 9, 'nine' ORDER BY y DESC);
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (c, b) = (SELECT x, y FROM u INTERSECT VALUES (9, 'nine'));
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (b, c) = (SELECT x, count(*) FROM u GROUP BY 1 ORDER BY 1 DESC);
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (b, c) = (SELECT u.*, 0 FROM u WHERE x = 2 LIMIT 1) WHERE a = 3;
        UPDATE t SET (b, c, d) = (SELECT u.* FROM u WHERE x = 2) WHERE a = 3;
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (b, c) = (VALUES (5, 6));
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (b, c) = (SELECT x, y FROM u WHERE x > 100);
        SELECT * FROM t ORDER BY a;
        UPDATE t SET (a, b) = (a + 10, 'moved') WHERE a = 3 RETURNING *;
        UPDATE t SET (b, b) = (1, 2) WHERE a = 1 RETURNING b;
        UPDATE t SET (b, c) = (x, y) FROM u WHERE u.x = t.a RETURNING a, b, c;
        SELECT * FROM t ORDER BY a;
        SELECT * FROM t WHERE c = 'one';
        UPDATE t SET (b, c) = (1, 2, 3);
        UPDATE t SET (b, c) = (1);
        UPDATE t SET (b, c) = 5;
        UPDATE t SET (b, c, d) = (SELECT x, y FROM u);
        UPDATE t SET (b, c) = (SELECT * FROM u);
        UPDATE t SET (b, nosuch) = (1, 2);
        UPDATE t SET b = (1, 2);
        UPDATE t SET (b, c) = (SELECT x, y FROM u), d = (SELECT 5, 6);
        SELECT * FROM t ORDER BY a;
        ",
        Compare::default(),
    );
}

#[test]
fn row_value_assignments_fire_triggers_and_reach_views() {
    check_script(
        "
        CREATE TABLE t(a INTEGER PRIMARY KEY, b, c);
        CREATE TABLE log(what, old_b, new_b, old_c, new_c);
        CREATE TRIGGER tu AFTER UPDATE OF c ON t BEGIN
          INSERT INTO log VALUES ('t', OLD.b, NEW.b, OLD.c, NEW.c);
        END;
        CREATE VIEW v AS SELECT a, b, c FROM t;
        CREATE TRIGGER vu INSTEAD OF UPDATE ON v BEGIN
          INSERT INTO log VALUES ('v', OLD.b, NEW.b, OLD.c, NEW.c);
        END;
        CREATE TABLE src(k, p, q);
        INSERT INTO t VALUES (1, 'x', 1), (2, 'y', 2);
        INSERT INTO src VALUES (1, 'P', 10), (2, 'Q', 20);
        UPDATE t SET (b, c) = (SELECT p, q FROM src WHERE k = t.a);
        UPDATE v SET (c, b) = (b, c) WHERE a = 2;
        CREATE TRIGGER inner_rv AFTER INSERT ON src BEGIN
          UPDATE t SET (b, c) = (NEW.p, NEW.q) WHERE a = NEW.k;
        END;
        INSERT INTO src VALUES (1, 'R', 30);
        SELECT * FROM log ORDER BY rowid;
        SELECT * FROM t ORDER BY a;
        ",
        Compare::default(),
    );
}
