//! JSON functions against SQLite (the `rusqlite` bundled library): random JSON and JSON5
//! documents, paths, edits and constructors, and JSON subtype nesting. PARLITE_SEED and
//! PARLITE_CASES as in values_vs_sqlite.rs.
// Test inputs spell out SQLite's boundary values digit for digit.
#![allow(clippy::excessive_precision)]

mod values_support;
use values_support::*;

// ---------------------------------------------------------------------------------------
// JSON

fn random_json_string(rng: &mut StdRng) -> String {
    let pieces = [
        "a",
        "b",
        "key",
        "é",
        " ",
        "\\\"",
        "\\\\",
        "\\n",
        "\\u0041",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\\/",
        "x y",
        "1",
    ];
    let body: String = (0..rng.gen_range(0..4))
        .map(|_| pieces[rng.gen_range(0..pieces.len())])
        .collect();
    format!("\"{body}\"")
}

fn random_json(rng: &mut StdRng, depth: u32) -> String {
    let ws = |rng: &mut StdRng| {
        if rng.gen_bool(0.2) {
            [" ", "\n", "\t ", "  "][rng.gen_range(0..4)]
        } else {
            ""
        }
    };
    match rng.gen_range(0..if depth > 2 { 6 } else { 9 }) {
        0 => "null".into(),
        1 => ["true", "false"][rng.gen_range(0..2)].into(),
        2 => [
            "0",
            "-0",
            "1",
            "-17",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "12345678901234567890",
            "1.5",
            "-0.25",
            "1e3",
            "2.50E-3",
            "1E+2",
            "0.1",
        ][rng.gen_range(0..14)]
        .into(),
        3 | 4 => random_json_string(rng),
        5 => rng.gen_range(-1000..1000).to_string(),
        6 | 7 => {
            let n = rng.gen_range(0..4);
            let items: Vec<String> = (0..n)
                .map(|_| format!("{}{}{}", ws(rng), random_json(rng, depth + 1), ws(rng)))
                .collect();
            format!("[{}]", items.join(","))
        }
        _ => {
            let n = rng.gen_range(0..4);
            let keys = [
                "\"a\"",
                "\"b\"",
                "\"c d\"",
                "\"\"",
                "\"a\"",
                "\"\\u0061\"",
                "\"x.y\"",
                "\"é\"",
            ];
            let items: Vec<String> = (0..n)
                .map(|_| {
                    format!(
                        "{}{}{}:{}{}",
                        ws(rng),
                        keys[rng.gen_range(0..keys.len())],
                        ws(rng),
                        ws(rng),
                        random_json(rng, depth + 1)
                    )
                })
                .collect();
            format!("{{{}}}", items.join(","))
        }
    }
}

fn random_json_path(rng: &mut StdRng) -> String {
    let mut p = String::from("$");
    for _ in 0..rng.gen_range(0..4) {
        p.push_str(match rng.gen_range(0..12) {
            0 => ".a",
            1 => ".b",
            2 => ".\"c d\"",
            3 => "[0]",
            4 => "[1]",
            5 => "[#-1]",
            6 => "[#]",
            7 => ".\"x.y\"",
            8 => ".é",
            9 => ".\"\"",
            10 => ["[", ".", "[x]", "[#-]", ".\"a", "]"][rng.gen_range(0..6)],
            _ => "[2]",
        });
    }
    if rng.gen_bool(0.03) {
        p = ["a", "", "$$", "$.", "$[-1]"][rng.gen_range(0..5)].into();
    }
    p
}

/// JSON5 spellings SQLite accepts (and canonicalizes).
fn random_json5(rng: &mut StdRng) -> String {
    let items = [
        "{a:1, $b_2:2, c3 : [1,2,],}",
        "['a\"b', 'it\\'s', \"x\\/y\"]",
        "/* c */ [1, // x\n2]",
        "[\"\\x41\", \"\\v\", \"\\0\", \"\\'\"]",
        "[-.25, 1., +1, 0x1F, 0XaB, Infinity, -Infinity, NaN, .5e1, +.5, -0x10]",
        "[0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x1FFFFFFFFFFFFFFFF, -0x8000000000000000]",
        "{'k':'v', \"q\":\"a\tb\"}",
        "[1]\u{a0}",
        "\u{feff}[true]",
        "[inf, -inf, +INFINITY, qnan, SNaN]",
        "{a:{b:[1,{c:'d'}]}}",
        "[\"line\\\ncont\"]",
    ];
    items[rng.gen_range(0..items.len())].to_string()
}

fn mutate_json(rng: &mut StdRng, s: String) -> String {
    if !rng.gen_bool(0.15) || s.is_empty() {
        return s;
    }
    let mut b: Vec<char> = s.chars().collect();
    let i = rng.gen_range(0..b.len());
    match rng.gen_range(0..3) {
        0 => {
            b.remove(i);
        }
        1 => b.insert(i, [',', '[', '}', '"', '\\', 'x', ' '][rng.gen_range(0..7)]),
        _ => b.truncate(i),
    }
    b.into_iter().collect()
}

#[test]
fn generated_json() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 11);
    let mut c = Checker::new();
    for _ in 0..cases(8_000) {
        let doc = if rng.gen_bool(0.15) {
            random_json5(&mut rng)
        } else {
            random_json(&mut rng, 0)
        };
        let doc = mutate_json(&mut rng, doc);
        let d = lit(doc);
        let e = match rng.gen_range(0..10) {
            0 => call("json", vec![d]),
            1 => {
                if rng.gen_bool(0.5) {
                    call("json_valid", vec![d])
                } else {
                    call("json_valid", vec![d, lit(rng.gen_range(0..17i64))])
                }
            }
            2 => call("json_type", vec![d, lit(random_json_path(&mut rng))]),
            3 => call(
                "json_array_length",
                vec![d, lit(random_json_path(&mut rng))],
            ),
            4 | 5 => call("json_extract", vec![d, lit(random_json_path(&mut rng))]),
            6 => call(
                "json_extract",
                vec![
                    d,
                    lit(random_json_path(&mut rng)),
                    lit(random_json_path(&mut rng)),
                ],
            ),
            7 => {
                let p = match rng.gen_range(0..4) {
                    0 => lit(rng.gen_range(-3..3i64)),
                    1 => {
                        lit(["a", "b", "c d", "x.y", "[0]", "[1]", "é", "a1"][rng.gen_range(0..8)])
                    }
                    _ => lit(random_json_path(&mut rng)),
                };
                call(if rng.gen_bool(0.5) { "->" } else { "->>" }, vec![d, p])
            }
            8 => call("json_type", vec![d]),
            _ => call("json_array_length", vec![d]),
        };
        c.check(&e);
    }
    // json_valid's flags are checked before its document, a NULL one too.
    for doc in [lit("[1]"), lit("{a:1}"), null()] {
        for flags in [null(), lit(0), lit(16), lit("x"), lit(1.9), lit("3")] {
            c.check(&call("json_valid", vec![doc.clone(), flags]));
        }
    }
    // No blobs here: generated_jsonb covers them.
    let non_blob = |rng: &mut StdRng| loop {
        let v = random_value(rng);
        if !matches!(v, Value::Blob(_)) {
            break v;
        }
    };
    for _ in 0..cases(3_000) {
        let n = rng.gen_range(0..5);
        let vals: Vec<E> = (0..n).map(|_| lit(non_blob(&mut rng))).collect();
        let e = match rng.gen_range(0..3) {
            0 => call("json_quote", vec![lit(non_blob(&mut rng))]),
            1 => call("json_array", vals),
            _ => {
                let mut kv = Vec::new();
                for v in vals {
                    kv.push(if rng.gen_bool(0.9) {
                        lit(random_text(&mut rng))
                    } else {
                        lit(non_blob(&mut rng))
                    });
                    kv.push(v);
                }
                if rng.gen_bool(0.05) {
                    kv.push(lit(1));
                }
                call("json_object", kv)
            }
        };
        c.check(&e);
    }
    for _ in 0..cases(6_000) {
        let doc = if rng.gen_bool(0.1) {
            random_json5(&mut rng)
        } else {
            random_json(&mut rng, 0)
        };
        let f = [
            "json_insert",
            "json_replace",
            "json_set",
            "json_remove",
            "json_patch",
        ][rng.gen_range(0..5)];
        let mut args = vec![lit(doc)];
        if f == "json_patch" {
            args.push(lit(random_json(&mut rng, 0)));
        } else {
            for _ in 0..rng.gen_range(0..3) {
                args.push(if rng.gen_bool(0.03) {
                    null()
                } else {
                    lit(random_json_path(&mut rng))
                });
                if f != "json_remove" {
                    args.push(lit(non_blob(&mut rng)));
                }
            }
            if rng.gen_bool(0.03) {
                args.push(lit(1));
            }
        }
        c.check(&E::Call(f, args));
    }
    c.finish("json");
}

/// Evaluates literals and nested calls carrying SQLite's JSON subtype from call to call,
/// as an executor that tracks subtypes would.
fn eval_sub(e: &E) -> Result<(Value, bool), String> {
    match e {
        E::Lit(v) => Ok((v.clone(), false)),
        E::Call(name, args) => {
            let mut vals = Vec::new();
            let mut subs = Vec::new();
            for a in args {
                let (v, s) = eval_sub(a)?;
                vals.push(v);
                subs.push(s);
            }
            let def = func::lookup(name, vals.len()).map_err(|e| e.to_string())?;
            func::json::call_with_subtypes(def, &Ctx::new(&NoConnection), &vals, &subs)
                .map_err(|e| e.to_string())
        }
        other => eval(other).map(|v| (v, false)),
    }
}

#[test]
fn json_subtypes_nest_like_sqlite() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 12);
    let conn = Connection::open_in_memory().expect("open");
    let mut failures = Vec::new();
    fn gen(rng: &mut StdRng, depth: u32) -> E {
        if depth > 2 || rng.gen_bool(0.35) {
            return match rng.gen_range(0..5) {
                0 => lit(rng.gen_range(-5..5i64)),
                1 => lit("[1,2]"),
                2 => lit("{\"a\":[3]}"),
                3 => lit("x\"y"),
                _ => null(),
            };
        }
        let n = rng.gen_range(0..3);
        match rng.gen_range(0..7) {
            0 => call(
                "json",
                vec![lit(
                    ["[1, 2]", "{\"k\" : null}", "\"s\"", "3"][rng.gen_range(0..4)]
                )],
            ),
            1 => call("json_array", (0..n).map(|_| gen(rng, depth + 1)).collect()),
            2 => {
                let mut kv = Vec::new();
                for k in 0..n {
                    kv.push(lit(format!("k{k}")));
                    kv.push(gen(rng, depth + 1));
                }
                call("json_object", kv)
            }
            3 => call("json_quote", vec![gen(rng, depth + 1)]),
            4 => call(
                "json_extract",
                vec![
                    lit("{\"a\":[3,{\"b\":1}],\"s\":\"t\"}"),
                    lit(["$.a", "$.a[1]", "$.s", "$.a[0]"][rng.gen_range(0..4)]),
                ],
            ),
            5 => call(
                "->",
                vec![
                    lit("{\"a\":[3,{\"b\":1}],\"s\":\"t\"}"),
                    lit(["a", "s", "$.a[1]"][rng.gen_range(0..3)]),
                ],
            ),
            _ => call(
                "->>",
                vec![
                    lit("{\"a\":[3,{\"b\":1}],\"s\":\"t\"}"),
                    lit(["a", "s"][rng.gen_range(0..2)]),
                ],
            ),
        }
    }
    for _ in 0..cases(1_500) {
        let e = match rng.gen_range(0..2) {
            0 => call("json_array", vec![gen(&mut rng, 0), gen(&mut rng, 0)]),
            _ => call("json_object", vec![lit("a"), gen(&mut rng, 0)]),
        };
        let (sql, params, want) = oracle(&conn, &e);
        let got = eval_sub(&e).map(|(v, _)| v);
        let ok = match (&want, &got) {
            (Ok(w), Ok(g)) => same(w, g),
            (Err(w), Err(g)) => w == g,
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{sql} {params:?}: sqlite {want:?}, parlite {got:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// SQLite's JSONB for a JSON text (None when the text is malformed).
fn sqlite_jsonb(conn: &Connection, doc: &str) -> Option<Vec<u8>> {
    conn.query_row("SELECT jsonb(?1)", [doc], |r| r.get::<_, Vec<u8>>(0))
        .ok()
}

/// A value for the jsonb_/json_ constructors and editors: any SQL value but blobs that
/// are not JSONB (which SQLite refuses: "JSON cannot hold BLOB values", checked below),
/// or SQLite's JSONB of a random document.
fn json_value(rng: &mut StdRng, conn: &Connection) -> Value {
    if rng.gen_bool(0.2) {
        if let Some(b) = sqlite_jsonb(conn, &random_json(rng, 1)) {
            return Value::blob(b);
        }
    }
    loop {
        let v = random_value(rng);
        if !matches!(v, Value::Blob(_)) {
            break v;
        }
    }
}

/// jsonb_replace, jsonb_set and jsonb_patch compared through json(): where they replace
/// an element by one 1 to 8 bytes shorter, SQLite widens the new element's header to
/// fill the old space (`jsonBlobOverwrite`) and parlite writes the smallest header, so
/// the bytes can differ while the JSON is the same (a documented difference).
fn padded(e: E) -> E {
    match e {
        E::Call(f, _) if ["jsonb_replace", "jsonb_set", "jsonb_patch"].contains(&f) => {
            call("json", vec![e])
        }
        e => e,
    }
}

#[test]
fn generated_jsonb() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 13);
    let mut c = Checker::new();
    let paths = |rng: &mut StdRng, n: usize| -> Vec<E> {
        (0..n).map(|_| lit(random_json_path(rng))).collect()
    };
    for _ in 0..cases(8_000) {
        // Large documents too, for JSONB's 1-, 2- and 4-byte payload sizes.
        let doc = match rng.gen_range(0..20) {
            0..=3 => random_json5(&mut rng),
            4 | 5 => {
                let items: Vec<String> = (0..rng.gen_range(4..80))
                    .map(|_| random_json(&mut rng, 0))
                    .collect();
                format!("[{}]", items.join(","))
            }
            6 if rng.gen_bool(0.1) => format!("{{\"a\":\"{}\"}}", "x".repeat(70_000)),
            _ => random_json(&mut rng, 0),
        };
        let doc = mutate_json(&mut rng, doc);
        // Every function reads the document as text and as JSONB (SQLite's own bytes,
        // so that decoding is checked independently of parlite's encoder).
        let d = match sqlite_jsonb(&c.conn, &doc) {
            Some(b) if rng.gen_bool(0.6) => lit(Value::blob(b)),
            _ => lit(doc),
        };
        let e = match rng.gen_range(0..16) {
            0 | 1 => call("jsonb", vec![d]),
            2 => call("json", vec![d]),
            3 => call("json_valid", vec![d, lit(rng.gen_range(1..16i64))]),
            4 => call("json_type", vec![d, lit(random_json_path(&mut rng))]),
            5 => call("json_array_length", vec![d]),
            6 => {
                let n = rng.gen_range(1..3);
                let f = ["json_extract", "jsonb_extract"][rng.gen_range(0..2)];
                call(f, [vec![d], paths(&mut rng, n)].concat())
            }
            7 => {
                let p = match rng.gen_range(0..3) {
                    0 => lit(rng.gen_range(-3..3i64)),
                    1 => lit(["a", "b", "c d", "x.y", "[0]", "é"][rng.gen_range(0..6)]),
                    _ => lit(random_json_path(&mut rng)),
                };
                call(if rng.gen_bool(0.5) { "->" } else { "->>" }, vec![d, p])
            }
            8 => match rng.gen_range(0..4) {
                0 => call("json_pretty", vec![d]),
                1 => call("json_pretty", vec![d, null()]),
                _ => call(
                    "json_pretty",
                    vec![d, lit(["", "\t", " ", "--"][rng.gen_range(0..4)])],
                ),
            },
            9 => padded(call(
                ["jsonb_patch", "json_patch"][rng.gen_range(0..2)],
                vec![d, lit(random_json(&mut rng, 0))],
            )),
            _ => {
                let f = [
                    "jsonb_insert",
                    "jsonb_replace",
                    "jsonb_set",
                    "jsonb_remove",
                    "json_set",
                    "json_insert",
                ][rng.gen_range(0..6)];
                let mut args = vec![d];
                for _ in 0..rng.gen_range(1..3) {
                    args.push(lit(random_json_path(&mut rng)));
                    if f != "jsonb_remove" {
                        args.push(lit(json_value(&mut rng, &c.conn)));
                    }
                }
                padded(call(f, args))
            }
        };
        c.check(&e);
    }
    for _ in 0..cases(3_000) {
        let n = rng.gen_range(0..5);
        let vals: Vec<E> = (0..n).map(|_| lit(json_value(&mut rng, &c.conn))).collect();
        let e = match rng.gen_range(0..5) {
            0 => call("jsonb_array", vals),
            1 => call("json_array", vals),
            2 => call("json_quote", vec![lit(json_value(&mut rng, &c.conn))]),
            _ => {
                let mut kv = Vec::new();
                for v in vals {
                    kv.push(lit(random_text(&mut rng)));
                    kv.push(v);
                }
                call(["jsonb_object", "json_object"][rng.gen_range(0..2)], kv)
            }
        };
        c.check(&e);
    }
    c.finish("jsonb");
}

/// Blobs that are not (quite) JSONB: SQLite's JSONB of a document with a byte changed,
/// inserted or cut off, and arbitrary short blobs. SQLite reads a blob whose outer
/// header fits as JSONB and any other blob as JSON text. A blob whose outer header fits
/// but whose inside is broken is "malformed JSON" to every parlite function, while each
/// SQLite function reads only what it visits (json_type looks at the header alone): for
/// those blobs only json_valid is compared (a documented difference).
#[test]
fn malformed_jsonb() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 14);
    let mut c = Checker::new();
    for _ in 0..cases(4_000) {
        let mut b = sqlite_jsonb(&c.conn, &random_json(&mut rng, 0)).unwrap_or_default();
        match rng.gen_range(0..5) {
            0 if !b.is_empty() => {
                let i = rng.gen_range(0..b.len());
                b[i] = rng.gen();
            }
            1 => {
                let i = rng.gen_range(0..=b.len());
                b.insert(i, rng.gen());
            }
            2 if !b.is_empty() => b.truncate(rng.gen_range(0..b.len())),
            3 => b = (0..rng.gen_range(0..4)).map(|_| rng.gen()).collect(),
            _ => b = br#"[1,{"a":2}]"#[..rng.gen_range(0..12)].to_vec(),
        }
        let outer_only: bool = c
            .conn
            .query_row(
                "SELECT json_valid(?1, 4) AND NOT json_valid(?1, 8)",
                [&b],
                |r| r.get(0),
            )
            .expect("json_valid");
        let d = lit(Value::blob(b));
        let e = match if outer_only { 2 } else { rng.gen_range(0..6) } {
            0 => call("json", vec![d]),
            1 => call("jsonb", vec![d]),
            2 => call(
                "json_valid",
                vec![d, lit([4i64, 8, 5, 1, 2][rng.gen_range(0..5)])],
            ),
            3 => call("json_array", vec![d]),
            4 => call("json_extract", vec![d, lit("$[0]")]),
            _ => call("json_type", vec![d]),
        };
        c.check(&e);
    }
    c.finish("malformed jsonb");
}

/// json_error_position (SQLite 3.42+): the 1-based character of the first error in JSON
/// text — documents broken by one to three edits (so errors land everywhere: in strings,
/// numbers, literals, between members, after the value, on multi-byte characters) and
/// strings of JSON's own bytes — and the byte position `jsonbValidityCheck` reports in a
/// broken JSONB blob; 0 for what parses.
#[test]
fn json_error_positions() {
    let mut rng = StdRng::seed_from_u64(seed() ^ 15);
    let mut c = Checker::new();
    for _ in 0..cases(6_000) {
        let mut doc = if rng.gen_bool(0.2) {
            random_json5(&mut rng)
        } else {
            random_json(&mut rng, 0)
        };
        if rng.gen_bool(0.2) {
            doc = format!("[\"é€\", {doc}]");
        }
        for _ in 0..rng.gen_range(0..4) {
            let mut b: Vec<char> = doc.chars().collect();
            let i = rng.gen_range(0..=b.len());
            let pick = [
                '"', ',', ':', '[', ']', '{', '}', '\\', 'x', '.', 'e', '-', '0', ' ', 'é',
            ];
            match rng.gen_range(0..4) {
                0 if i < b.len() => {
                    b.remove(i);
                }
                1 => b.insert(i, pick[rng.gen_range(0..pick.len())]),
                2 if i < b.len() => b[i] = pick[rng.gen_range(0..pick.len())],
                _ => b.truncate(i),
            }
            doc = b.into_iter().collect();
        }
        c.check(&call("json_error_position", vec![lit(doc)]));
    }
    let bytes = b"[]{}\",:0123456789.eE+-tfnul \\/xX'";
    for _ in 0..cases(3_000) {
        let doc: String = (0..rng.gen_range(0..12))
            .map(|_| bytes[rng.gen_range(0..bytes.len())] as char)
            .collect();
        c.check(&call("json_error_position", vec![lit(doc)]));
    }
    for v in [
        Value::Null,
        Value::Integer(12),
        Value::real(1.5),
        Value::text(""),
    ] {
        c.check(&call("json_error_position", vec![lit(v)]));
    }
    for _ in 0..cases(4_000) {
        let mut b = sqlite_jsonb(&c.conn, &random_json(&mut rng, 0)).unwrap_or_default();
        for _ in 0..rng.gen_range(0..3) {
            match rng.gen_range(0..3) {
                0 if !b.is_empty() => {
                    let i = rng.gen_range(0..b.len());
                    b[i] = rng.gen();
                }
                1 if !b.is_empty() => {
                    // A byte of the payload swapped for one of the text alphabet.
                    let i = rng.gen_range(0..b.len());
                    b[i] = bytes[rng.gen_range(0..bytes.len())];
                }
                _ => {
                    let i = rng.gen_range(0..=b.len());
                    b.insert(i, rng.gen());
                }
            }
        }
        c.check(&call("json_error_position", vec![lit(Value::blob(b))]));
    }
    c.finish("json_error_position");
}
