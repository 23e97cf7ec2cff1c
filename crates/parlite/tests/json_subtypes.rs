//! SQLite's JSON subtype (json1.html, "value arguments"): a text value that comes straight
//! from a JSON function is JSON to the JSON function it is passed to, so
//! `json_object('a', json('[1]'))` is `{"a":[1]}` while `json_object('a', '[1]')` is
//! `{"a":"[1]"}`. The subtype passes through coalesce/ifnull, iif, likely and a CAST to
//! TEXT, and is lost through columns, operators and other functions; json_group_array and
//! json_group_object read it too, also with DISTINCT, ORDER BY and as window functions;
//! a scalar subquery passes on its aggregate's or JSON constructor's subtype (not a
//! json_extract's: README, known differences).
//! Seeded random compositions and the usual application shapes, against SQLite.
//!
//! `PARLITE_SEED=n` replays one seed.

mod common;

use common::{assert_no_mismatches as assert_none, mismatches as compare, Rng};

const SETUP: &[&str] = &[
    "CREATE TABLE u(id INTEGER PRIMARY KEY, name TEXT, tags TEXT, doc TEXT)",
    "INSERT INTO u VALUES(1, 'ann', '[\"a\",\"b\"]', '{\"k\":[1,2],\"s\":\"x\",\"n\":null}'), \
       (2, 'bob', NULL, '{\"k\":{\"z\":true},\"s\":\"[1]\",\"n\":3}'), \
       (3, 'cy', '[]', '{\"k\":[],\"s\":\"\",\"n\":1.5}'), \
       (4, 'ann', '{\"q\":1}', '[1,[2,3]]')",
];

/// An expression whose value may or may not carry the subtype, `depth` levels deep.
fn expr(rng: &mut Rng, depth: u32) -> String {
    let leaf = depth == 0 || rng.below(4) == 0;
    if leaf {
        return match rng.below(12) {
            0 => "json('[1,{\"a\":2}]')".into(),
            1 => "'[1,2]'".into(),
            2 => "tags".into(),
            3 => "json(tags)".into(),
            4 => "json_extract(doc, '$.k')".into(),
            5 => "json_extract(doc, '$.s')".into(),
            6 => "doc -> '$.k'".into(),
            7 => "doc ->> '$.k'".into(),
            8 => "json_quote(name)".into(),
            9 => "name".into(),
            10 => "json_extract(doc, '$.k', '$.n')".into(),
            _ => "NULL".into(),
        };
    }
    let a = expr(rng, depth - 1);
    match rng.below(14) {
        0 => format!("json_array({a}, {})", expr(rng, depth - 1)),
        1 => format!("json_object('x', {a}, 'y', {})", expr(rng, depth - 1)),
        2 => format!("coalesce({a}, {})", expr(rng, depth - 1)),
        3 => format!("ifnull({a}, json('null'))"),
        4 => format!("iif(id > 2, {a}, {})", expr(rng, depth - 1)),
        5 => format!("CAST({a} AS TEXT)"),
        6 => format!("({a} || '')"),
        7 => format!("upper({a})"),
        8 => format!("json_set('{{}}', '$.v', {a})"),
        9 => format!("json_insert('[0]', '$[#]', {a})"),
        10 => format!("json_replace('{{\"v\":0}}', '$.v', {a})"),
        11 => format!("json_quote({a})"),
        12 => format!("likely({a})"),
        _ => format!("json({a})"),
    }
}

#[test]
fn random_compositions_nest_as_in_sqlite() {
    let mut failures = Vec::new();
    for seed in common::seeds() {
        let mut rng = Rng(seed);
        let s = rusqlite::Connection::open_in_memory().expect("sqlite");
        let p = parlite::Connection::open(":memory:").expect("parlite");
        let mut stmts: Vec<String> = SETUP.iter().map(|s| s.to_string()).collect();
        for _ in 0..250 {
            let e = expr(&mut rng, 3);
            stmts.push(match rng.below(6) {
                0 => format!("SELECT id, json_array({e}) FROM u ORDER BY id"),
                1 => format!("SELECT id, json_object('v', {e}) FROM u ORDER BY id"),
                2 => format!("SELECT json_group_array({e}) FROM u"),
                3 => format!("SELECT json_group_object(name || id, {e}) FROM u"),
                4 => format!("SELECT json_group_array({e} ORDER BY id DESC) FROM u"),
                _ => format!(
                    "SELECT id, json_group_array({e}) OVER (ORDER BY id) FROM u ORDER BY id"
                ),
            });
        }
        failures.extend(
            compare(&s, &p, &stmts)
                .into_iter()
                .map(|f| format!("seed {seed}: {f}")),
        );
    }
    assert_none(failures);
}

/// The shapes applications write to build JSON documents from rows.
#[test]
fn application_shapes_match_sqlite() {
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    let p = parlite::Connection::open(":memory:").expect("parlite");
    let mut stmts: Vec<String> = SETUP.iter().map(|s| s.to_string()).collect();
    stmts.extend(
        [
            "SELECT json_group_array(json_object('id', id, 'name', name, 'tags', json(tags))) FROM u",
            "SELECT name, json_group_array(json_object('id', id)) FROM u GROUP BY name ORDER BY name",
            "SELECT json_object('users', (SELECT json_group_array(name) FROM u))",
            "SELECT json_object('n', count(*), 'names', json_group_array(name)) FROM u",
            "SELECT name, json_array(json_group_object(id, json(doc))) FROM u GROUP BY name ORDER BY name",
            "SELECT json_group_object(name || id, json_array(id, json(doc))) FROM u",
            "SELECT json_group_array(DISTINCT json_object('n', name)) FROM u",
            "SELECT json_array(json_array(), json_object(), json('{}'), json_quote(json('[1]')))",
            "SELECT json_array(json_extract('{\"a\":[1]}', '$.a'), json_extract('{\"a\":\"s\"}', '$.a'))",
            "SELECT json_object('a', json('[1]') ->> '$[0]', 'b', json('[[2]]') -> '$[0]')",
            "SELECT json_patch(json_object('a', 1), json_object('b', json('[2]')))",
            "SELECT json_array(json_remove(json('[1,[2]]'), '$[0]'))",
            "SELECT json_array(id, json('[1]')) FROM u WHERE json_array(json('[2]')) = '[[2]]' ORDER BY id",
        ]
        .map(String::from),
    );
    assert_none(compare(&s, &p, &stmts));
}
