//! Name resolution against SQLite: a table joined with itself (USING/NATURAL sides, `*`
//! over two items of one name, spelled `main.t.x`), `db.t.x` names, an outer query's
//! result aliases seen from its subqueries (resolve.c lookupName) and from an outer join's
//! ON, a subquery's GROUP BY and ORDER BY that see no enclosing query, a compound's ORDER
//! BY terms resolved in its arms, and the collation names PRAGMA index_xinfo repeats as
//! written.

mod common;

#[test]
fn self_joins_resolve_as_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE a(x)",
        "INSERT INTO a VALUES (1), (2)",
        "CREATE TABLE b(x)",
        "INSERT INTO b VALUES (2), (3)",
        "SELECT * FROM a, a",
        "SELECT * FROM a NATURAL JOIN a",
        "SELECT * FROM a JOIN a USING (x)",
        "SELECT a.x FROM a JOIN a USING (x)",
        "SELECT * FROM a NATURAL JOIN a NATURAL JOIN a",
        "SELECT * FROM a JOIN b USING (x), a",
        "SELECT * FROM a LEFT JOIN a USING (x)",
        "SELECT * FROM a RIGHT JOIN a USING (x)",
        "SELECT * FROM a FULL JOIN a USING (x)",
        "SELECT x FROM a FULL JOIN b USING (x) FULL JOIN a USING (x) ORDER BY 1",
        "SELECT * FROM a FULL JOIN b USING (x) WHERE x > 1 ORDER BY 1",
        "SELECT (SELECT x) FROM a FULL JOIN b USING (x) ORDER BY 1",
        "SELECT a.* FROM a, a",
        "SELECT a.x FROM a, a",
        "SELECT x FROM a, a",
        "SELECT a.rowid FROM a, a",
        "SELECT * FROM a AS X, a AS x",
        "SELECT * FROM a x JOIN a y USING (x), a x",
        "SELECT * FROM (SELECT 1 x) s, (SELECT 2 x) s",
        "WITH c AS (SELECT 1 x) SELECT * FROM c, c",
        "CREATE VIEW v AS SELECT x FROM a",
        "SELECT * FROM v, v",
        "SELECT * FROM v NATURAL JOIN v",
        "SELECT * FROM pragma_table_info('a') p, pragma_table_info('a') p",
        "CREATE TABLE T2(x)",
        "SELECT * FROM t2, T2",
        "CREATE TEMP TABLE a(x)",
        "SELECT * FROM a, a",
        "SELECT * FROM main.a, temp.a",
        "SELECT a.x FROM main.a, temp.a",
    ]));
}

#[test]
fn schema_qualified_column_names_match_sqlite() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1), (2)",
        "SELECT main.t.a FROM t",
        "SELECT MAIN.T.A FROM t",
        "SELECT main.t.rowid FROM t",
        "SELECT temp.t.a FROM t",
        "SELECT nosuch.t.a FROM t",
        "SELECT main.x.a FROM t AS x",
        "SELECT main.t.a FROM (SELECT 1 AS a) AS t",
        "SELECT main.t.a FROM t, t",
        "SELECT main.t.a FROM t JOIN t USING (a)",
        "CREATE TEMP TABLE t(a)",
        "INSERT INTO temp.t VALUES (9)",
        "SELECT main.t.a, temp.t.a FROM main.t, temp.t",
        "SELECT temp.t.a FROM main.t",
    ]));
}

#[test]
fn outer_result_aliases_are_seen_from_subqueries() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1), (2), (3)",
        "CREATE TABLE u(a, b)",
        "INSERT INTO u VALUES (5, 1), (6, 2)",
        "SELECT a AS x FROM t WHERE EXISTS (SELECT 1 WHERE x > 1)",
        "SELECT a AS x FROM t ORDER BY (SELECT x) DESC",
        "SELECT a AS x FROM t GROUP BY (SELECT x)",
        "SELECT a AS x FROM t WHERE EXISTS (SELECT 1 FROM u WHERE x > 1)",
        // A column of the subquery comes first; the alias's expression reads the outer row.
        "SELECT a AS b FROM t WHERE EXISTS (SELECT 1 FROM u WHERE b = 1)",
        "SELECT t.a AS x FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = x + 4)",
        "SELECT a AS x FROM t WHERE x IN (SELECT b FROM u WHERE b = x)",
        "SELECT a AS x FROM t WHERE (SELECT (SELECT x)) > 1",
        "SELECT a AS x FROM t WHERE (SELECT count(*) FROM u WHERE b < x) > 0",
        "SELECT a AS x FROM t WHERE EXISTS (SELECT * FROM (SELECT x))",
        "SELECT b AS x FROM u WHERE EXISTS (SELECT 1 FROM t WHERE EXISTS (SELECT 1 WHERE x = 2))",
        "SELECT b AS x FROM u WHERE EXISTS \
         (SELECT a AS y FROM t WHERE EXISTS (SELECT 1 WHERE y + x = 3))",
        "WITH c AS (SELECT a AS x FROM t WHERE EXISTS (SELECT 1 WHERE x > 1)) SELECT * FROM c",
        "SELECT a AS x FROM t WHERE EXISTS (SELECT 1 FROM json_each('[1,2]') WHERE value = x)",
        // Aggregates behind an alias are the outer query's: allowed in its HAVING only.
        "SELECT count(*) AS c FROM t GROUP BY a HAVING EXISTS (SELECT 1 WHERE c > 0)",
        "SELECT sum(a) AS s FROM t GROUP BY a HAVING (SELECT s) > 1",
        "SELECT max(a) AS m FROM t ORDER BY (SELECT m)",
        "SELECT count(*) AS c FROM t WHERE EXISTS (SELECT 1 WHERE c > 0)",
        // Never in the result columns themselves; a window function or row value refused.
        "SELECT a AS x, (SELECT x) FROM t",
        "SELECT row_number() OVER () AS w FROM t WHERE EXISTS (SELECT 1 WHERE w > 1)",
        "SELECT (a, a) AS v FROM t WHERE EXISTS (SELECT 1 WHERE v = 1)",
        "SELECT a AS x FROM t LIMIT (SELECT x)",
    ]));
}

#[test]
fn index_xinfo_repeats_collation_names_as_written() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a TEXT COLLATE NoCase UNIQUE, b COLLATE rtrim, c)",
        "CREATE INDEX i ON t(a, b, c COLLATE Binary, c COLLATE nocase)",
        "PRAGMA index_xinfo(i)",
        "PRAGMA index_xinfo(sqlite_autoindex_t_1)",
        "SELECT coll FROM pragma_index_xinfo('i')",
        "CREATE TABLE w(a TEXT COLLATE NoCase PRIMARY KEY, b) WITHOUT ROWID",
        "CREATE INDEX j ON w(b)",
        "PRAGMA index_xinfo(sqlite_autoindex_w_1)",
        "PRAGMA index_xinfo(j)",
        "CREATE TABLE x(a, b, UNIQUE(a COLLATE NOCASE, b))",
        "PRAGMA index_xinfo(sqlite_autoindex_x_1)",
        "CREATE INDEX k ON x((b) COLLATE RTrim)",
        "PRAGMA index_xinfo(k)",
    ]));
}

#[test]
fn group_by_and_order_by_see_no_enclosing_query() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "INSERT INTO t VALUES (1, 2), (3, 4)",
        "CREATE TABLE u(a, c)",
        "INSERT INTO u VALUES (1, 10), (5, 50)",
        "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u ORDER BY t.a)",
        "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u GROUP BY t.a)",
        "SELECT (SELECT c FROM u ORDER BY t.b - c LIMIT 1) FROM t",
        "SELECT (SELECT c FROM u ORDER BY (SELECT t.b) LIMIT 1) FROM t",
        "SELECT (SELECT c FROM u GROUP BY t.b) FROM t",
        "SELECT a FROM t WHERE a IN (SELECT a FROM u ORDER BY t.b)",
        "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u ORDER BY x)",
        "UPDATE t SET b = (SELECT c FROM u ORDER BY t.a LIMIT 1)",
        // Its own columns and aliases, and its HAVING's view of outer queries, stay.
        "SELECT (SELECT count(*) FROM u GROUP BY c HAVING c > t.a) FROM t",
        "SELECT (SELECT c AS z FROM u ORDER BY z) FROM t",
        "SELECT a AS x FROM t ORDER BY (SELECT c FROM u WHERE u.a = x)",
        // A trigger's NEW and OLD are seen from any query of its program.
        "CREATE TABLE log(x)",
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN \
         INSERT INTO log SELECT new.a FROM u ORDER BY new.b, (SELECT new.a); END",
        "INSERT INTO t VALUES (7, 8)",
        "SELECT * FROM log",
    ]));
}

#[test]
fn outer_join_on_sees_result_aliases() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "INSERT INTO t VALUES (1, 2), (3, 4)",
        "CREATE TABLE u(a, c)",
        "INSERT INTO u VALUES (1, 10), (5, 50)",
        "SELECT t.a AS x, c FROM t LEFT JOIN u ON x = u.a",
        "SELECT t.a AS x, c FROM t JOIN u ON x = u.a",
        "SELECT t.a AS x, c FROM t FULL JOIN u ON x = u.a ORDER BY 1, 2",
        "SELECT b AS x, value FROM t, json_each('[2, 4]') WHERE value = x",
        "SELECT b AS x, value FROM t, json_each(json_array(x, 9))",
    ]));
}

#[test]
fn compound_order_by_terms_resolve_in_the_arms() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a, b)",
        "INSERT INTO t VALUES (1, 2), (3, 4), (3, 5)",
        "CREATE TABLE u(a, c)",
        "INSERT INTO u VALUES (1, 10), (5, 50)",
        "SELECT a FROM t UNION SELECT a FROM u ORDER BY t.a",
        "SELECT a FROM t UNION SELECT a FROM u ORDER BY u.a DESC",
        "SELECT a FROM t UNION SELECT c FROM u ORDER BY u.c",
        "SELECT a FROM t UNION SELECT c FROM u ORDER BY T.A",
        "SELECT a FROM t UNION SELECT c FROM u ORDER BY main.t.a",
        "SELECT a FROM t EXCEPT SELECT a FROM u ORDER BY t.a DESC",
        "SELECT a AS x FROM t UNION ALL SELECT a FROM u ORDER BY t.a",
        "SELECT a, b FROM t UNION SELECT * FROM u ORDER BY c",
        "SELECT a, b FROM t UNION SELECT a, c FROM u ORDER BY u.c, t.a",
        "SELECT a + 1 FROM t UNION SELECT c FROM u ORDER BY t.a + 1",
        "SELECT abs(a) FROM t UNION SELECT abs(c) FROM u ORDER BY abs(u.c)",
        "SELECT cast(a AS TEXT) FROM t UNION SELECT c FROM u ORDER BY cast(t.a AS TEXT)",
        "SELECT x.a FROM t AS x UNION SELECT c FROM u ORDER BY x.a",
        "VALUES (7) UNION SELECT a FROM t ORDER BY t.a",
        "SELECT * FROM (SELECT a FROM t UNION SELECT a FROM u ORDER BY t.a)",
        "SELECT (SELECT a FROM t UNION SELECT a FROM u ORDER BY t.a LIMIT 1)",
        // Terms that are none of the arms' result expressions.
        "SELECT a FROM t UNION SELECT c FROM u ORDER BY t.b",
        "SELECT a FROM t UNION SELECT c FROM u ORDER BY -t.a",
        "SELECT a FROM t UNION SELECT c FROM u ORDER BY x.a",
        "SELECT count(*) FROM t UNION SELECT c FROM u ORDER BY count(t.a)",
    ]));
}

#[test]
fn schema_tables_answer_to_either_name() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "CREATE TEMP TABLE tt(b)",
        "SELECT sqlite_schema.name FROM sqlite_master",
        "SELECT sqlite_master.name FROM sqlite_schema",
        "SELECT main.sqlite_schema.name FROM sqlite_master",
        "SELECT sqlite_schema.rowid FROM sqlite_master",
        "SELECT sqlite_temp_master.name FROM sqlite_temp_schema",
        "SELECT sqlite_temp_schema.name FROM temp.sqlite_master",
        "SELECT temp.sqlite_schema.name FROM temp.sqlite_master",
        "SELECT sqlite_master.name FROM temp.sqlite_master",
        "SELECT sqlite_schema.name FROM sqlite_temp_master",
        "SELECT sqlite_schema.name FROM sqlite_master AS s",
        "SELECT sqlite_master.name FROM sqlite_master, sqlite_schema",
        "SELECT * FROM sqlite_schema, sqlite_master",
        "SELECT sqlite_schema.* FROM sqlite_schema",
        "SELECT sqlite_master.* FROM sqlite_schema",
        "SELECT sqlite_foo.name FROM sqlite_master",
    ]));
}

#[test]
fn a_string_before_a_dot_is_a_name() {
    common::assert_no_mismatches(common::statement_mismatches(&[
        "CREATE TABLE t(a)",
        "INSERT INTO t VALUES (1)",
        "SELECT 't'.a, 'lit' FROM t WHERE 't'.a = 1",
        "SELECT 'main'.'t'.'a' FROM t",
        "SELECT 't'.* FROM t",
        "SELECT 'x'.a FROM t",
        "SELECT 'x' || 'y' FROM t",
    ]));
}
