//! Table-valued functions against SQLite (rusqlite, bundled): json_each, json_tree and the
//! pragma functions, alone, joined and correlated; rows, column names and errors compared.

mod common;
use common::*;

/// Runs a script in both engines and compares each statement's outcome (common/mod.rs).
fn check(script: &str) {
    check_script(script, Compare::default());
}

#[test]
fn json_each_columns() {
    check(
        r#"
        SELECT * FROM json_each('[1,2.5,"s",null,true,false,[3,4],{"k":"v"}]');
        SELECT key, value, type, atom, id, parent, fullkey, path, json, root FROM json_each('{"a":1,"b c":[1],"d_e":{"f":null},"":0,"x\"y":2}');
        SELECT * FROM json_each('{"a":{"b":[10,20]}}', '$.a');
        SELECT * FROM json_each('{"a":{"b":[10,20]}}', '$.a.b');
        SELECT * FROM json_each('{"a":{"b":[10,20]}}', '$.a.b[1]');
        SELECT *, json, root FROM json_each('{"a":{"b":[10,20]}}', '$.a.b[0]');
        SELECT * FROM json_each('{"a":{"b":[10,20]}}', '$.nope');
        SELECT * FROM json_each('42');
        SELECT * FROM json_each('"text"');
        SELECT * FROM json_each(NULL);
        SELECT * FROM json_each('[1]', NULL);
        SELECT * FROM json_each('[1,2');
        SELECT * FROM json_each('[1]', 'x');
        SELECT * FROM json_each('{"a":"\u0041\n"}');
        SELECT key, id FROM json_each('["' || printf('%.300c', 'x') || '", 1, {"' || printf('%.70000c', 'k') || '": 2}, 3]');
        SELECT count(*), sum(value) FROM json_each('[1,2,3,4]');
        SELECT value FROM json_each('[3,1,2]') ORDER BY value;
        SELECT j.value FROM json_each('[1,2,3]') AS j WHERE j.value > 1;
        "#,
    );
}

#[test]
fn json_tree_columns() {
    check(
        r#"
        SELECT * FROM json_tree('{"a":{"b":1,"x y":[1,2.5,"s"]},"c_d":null}');
        SELECT * FROM json_tree('{"a":{"b":1,"x y":[1,2.5,"s"]},"c_d":null}', '$.a');
        SELECT * FROM json_tree('{"a":{"b":1,"x y":[1,2.5,"s"]}}', '$.a."x y"');
        SELECT * FROM json_tree('{"a":{"b":1,"x y":[1,2.5,"s"]}}', '$.a."x y"[2]');
        SELECT *, json, root FROM json_tree('[[[]],{}]');
        SELECT * FROM json_tree('7');
        SELECT fullkey, type FROM json_tree('{"a":[{"b":[1,{"c":2}]}]}') WHERE atom IS NOT NULL;
        "#,
    );
}

#[test]
fn table_functions_in_joins() {
    check(
        r#"
        CREATE TABLE docs(id INTEGER PRIMARY KEY, doc TEXT);
        INSERT INTO docs VALUES(1,'[1,2]'),(2,'{"a":3,"b":[4,5]}'),(3,NULL),(4,'7');
        SELECT docs.id, j.key, j.value FROM docs, json_each(docs.doc) AS j ORDER BY 1, 2;
        SELECT d.id, t.fullkey, t.type FROM docs d JOIN json_tree(d.doc) t ORDER BY 1, t.id;
        SELECT d.id, count(j.key) FROM docs d LEFT JOIN json_each(d.doc) j GROUP BY d.id ORDER BY 1;
        SELECT id FROM docs WHERE EXISTS (SELECT 1 FROM json_each(docs.doc) WHERE value = 4);
        SELECT (SELECT sum(value) FROM json_each(doc)) FROM docs ORDER BY id;
        SELECT j.value, docs.id FROM json_each('[2,4]') j JOIN docs ON docs.id = j.value;
        CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT NULL DEFAULT 'x', c);
        CREATE INDEX tb ON t(b, c);
        CREATE UNIQUE INDEX tc ON t(c);
        SELECT * FROM pragma_table_info('t');
        SELECT * FROM pragma_table_xinfo('t');
        SELECT * FROM pragma_index_list('t');
        SELECT * FROM pragma_index_info('tb');
        SELECT m.name, p.name, p.type FROM sqlite_schema m, pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY 1, p.cid;
        SELECT m.name, i.name, i."unique" FROM sqlite_schema m JOIN pragma_index_list(m.name) i WHERE m.type = 'table' ORDER BY 1, 2;
        SELECT name FROM pragma_table_info('nosuch');
        "#,
    );
}

#[test]
fn virtual_table_modules_are_missing() {
    let p = parlite::Connection::open(":memory:").expect("parlite");
    for (sql, module) in [
        ("CREATE VIRTUAL TABLE x USING fts5(a)", "fts5"),
        ("CREATE VIRTUAL TABLE x USING fts4(a)", "fts4"),
        ("CREATE VIRTUAL TABLE x USING rtree(id, a, b)", "rtree"),
    ] {
        let e = p.execute_batch(sql).expect_err(sql);
        assert_eq!(e.message, format!("no such module: {module}"), "{sql}");
    }
}

#[test]
fn pragma_functions_hidden_columns_and_schemas() {
    check(
        r#"
        CREATE TABLE t(a INTEGER PRIMARY KEY, b);
        CREATE INDEX tb ON t(b);
        ATTACH ':memory:' AS aux;
        CREATE TABLE aux.t(x TEXT, y, z);
        CREATE TABLE aux.only_aux(q);
        CREATE UNIQUE INDEX aux.txy ON t(x, y);
        SELECT * FROM pragma_table_info('t');
        SELECT *, arg, schema FROM pragma_table_info('t');
        SELECT *, arg, schema FROM pragma_table_info('t', 'aux');
        SELECT * FROM pragma_table_info('t', 'main');
        SELECT name FROM pragma_table_info('only_aux');
        SELECT * FROM pragma_index_list('t', 'aux');
        SELECT * FROM pragma_index_info('txy', 'aux');
        SELECT * FROM pragma_table_info('t', 'nosuch');
        SELECT seq, name, file FROM pragma_database_list;
        SELECT * FROM pragma_database_list();
        SELECT d.name, m.name FROM pragma_database_list d, pragma_table_info('t', d.name) m ORDER BY 1, m.cid;
        CREATE VIEW aux.av AS SELECT x FROM t;
        SELECT * FROM pragma_table_list WHERE schema <> 'temp' ORDER BY schema, name;
        SELECT * FROM pragma_table_list('only_aux');
        PRAGMA aux.table_list('t');
        "#,
    );
}

/// JSONB (SQLite 3.45+) through SQL: documents stored as JSONB blobs read by json_each,
/// json_tree, `->`/`->>` and the aggregates; the jsonb_ aggregates' bytes compared.
#[test]
fn jsonb_documents() {
    check(
        r#"
        CREATE TABLE docs(id INTEGER PRIMARY KEY, doc BLOB);
        INSERT INTO docs VALUES(1, jsonb('[1,2.5,"s",null,true,{"k":[0x1F,.5]}]')),
          (2, jsonb('{"a":3,"b":[4,5],"c d":{"e":"\u0041"}}')), (3, NULL), (4, jsonb('7'));
        SELECT id, hex(doc), json(doc), doc -> '$.b', doc ->> 'a', doc -> 0 FROM docs ORDER BY id;
        SELECT d.id, j.* FROM docs d, json_each(d.doc) AS j ORDER BY 1, j.id;
        SELECT d.id, t.* FROM docs d JOIN json_tree(d.doc) t ORDER BY 1, t.id;
        SELECT * FROM json_each(jsonb('{"a":{"b":[10,20]}}'), '$.a.b');
        SELECT json_group_array(doc), hex(jsonb_group_array(doc)) FROM docs;
        SELECT hex(jsonb_group_array(id)), hex(jsonb_group_object(id, doc)) FROM docs WHERE id < 3;
        SELECT json_group_object(id, doc) FROM docs;
        SELECT hex(jsonb_group_array(x)) FROM (SELECT 1 AS x WHERE 0);
        SELECT json_group_array(x'01'), json_group_array(x'00');
        SELECT json_group_array(x'ff');
        SELECT id, hex(jsonb_set(doc, '$.new', jsonb('[1]'))), json_pretty(doc) FROM docs ORDER BY id;
        SELECT json_valid(doc, 4), json_valid(doc, 8), json_valid(doc, 1), json_valid(doc) FROM docs;
        "#,
    );
}
