//! The `parlite` binary against the stock `sqlite3` shell (3.40, /usr/bin/sqlite3; CI
//! installs it, `.ci/run`): the same script on copies of the same database file must print
//! the same bytes on standard output and standard error. The databases are written with
//! rusqlite, so both shells read identical values (reals bound as exact doubles). Each
//! test fails, not skips, when sqlite3 is missing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SQLITE3: &str = "/usr/bin/sqlite3";

fn sqlite3() -> Command {
    assert!(
        Path::new(SQLITE3).exists(),
        "this test needs the stock sqlite3 shell at {SQLITE3}: apt-get install sqlite3"
    );
    Command::new(SQLITE3)
}

fn parlite() -> Command {
    Command::new(env!("CARGO_BIN_EXE_parlite"))
}

struct Output {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: Option<i32>,
}

/// Runs `cmd` on `db` with `script` on standard input, in `dir`.
fn run(mut cmd: Command, dir: &Path, db: &Path, script: &[u8]) -> Output {
    let mut child = cmd
        .arg(db)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let script = script.to_vec();
    // Fed from a thread: a large output would otherwise fill the pipe and deadlock.
    let writer = std::thread::spawn(move || stdin.write_all(&script));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    Output {
        stdout: out.stdout,
        stderr: out.stderr,
        code: out.status.code(),
    }
}

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A scratch directory holding `name` copied from `db` (or absent when `db` is None).
fn scratch(db: Option<&Path>, name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    if let Some(db) = db {
        std::fs::copy(db, &path).unwrap();
    }
    (dir, path)
}

/// Runs `script` through both shells, each on its own copy of `db`, and asserts the
/// outputs are byte-identical; returns them. `files` are compared too.
fn assert_same(db: &Path, script: &str, files: &[&str]) -> Output {
    let (sdir, _) = scratch(Some(db), "db.sqlite");
    let (pdir, _) = scratch(Some(db), "db.sqlite");
    // The same relative name in both, for `.show`'s filename.
    let name = Path::new("db.sqlite");
    let want = run(sqlite3(), sdir.path(), name, script.as_bytes());
    let got = run(parlite(), pdir.path(), name, script.as_bytes());
    assert_bytes("stdout", &got.stdout, &want.stdout, script);
    assert_bytes("stderr", &got.stderr, &want.stderr, script);
    assert_eq!(got.code, want.code, "exit status differs for:\n{script}");
    for f in files {
        let w = std::fs::read(sdir.path().join(f)).unwrap();
        let g = std::fs::read(pdir.path().join(f)).unwrap();
        assert_bytes(f, &g, &w, script);
    }
    got
}

/// Asserts parlite's output equals sqlite3's, showing the first line that differs.
fn assert_bytes(what: &str, got: &[u8], want: &[u8], script: &str) {
    if got == want {
        return;
    }
    let (g, w): (Vec<&[u8]>, Vec<&[u8]>) = (
        got.split(|&b| b == b'\n').collect(),
        want.split(|&b| b == b'\n').collect(),
    );
    let at = g
        .iter()
        .zip(&w)
        .position(|(a, b)| a != b)
        .unwrap_or(g.len().min(w.len()));
    let context = |lines: &[&[u8]]| -> String {
        lines[at.saturating_sub(3)..(at + 3).min(lines.len())]
            .iter()
            .map(|l| format!("{:?}\n", show(l)))
            .collect()
    };
    panic!(
        "{what} differs at line {}:\n--- parlite:\n{}--- sqlite3:\n{}--- script:\n{script}",
        at + 1,
        context(&g),
        context(&w)
    );
}

/// xorshift64*: seeded values, replayable from the seed in a failure message.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Doubles that stress the digit generation: fixed edge cases, then random bit patterns
/// (every exponent) and random short decimals.
fn reals(rng: &mut Rng, n: usize) -> Vec<f64> {
    let mut v = vec![
        0.1,
        0.3,
        -0.0,
        1e300,
        -1e-300,
        1e-7,
        2.5,
        100.5,
        123.0,
        1e15,
        1e16,
        1e20,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        2f64.powi(63),
        -(2f64.powi(63)),
        f64::INFINITY,
        f64::NEG_INFINITY,
        std::f64::consts::PI,
    ];
    while v.len() < n {
        let r = match rng.below(3) {
            0 => f64::from_bits(rng.next()),
            1 => (rng.below(2_000_000) as f64 - 1e6) / 10f64.powi(rng.below(12) as i32),
            _ => f64::from_bits(rng.next() >> 2 | 0x3000_0000_0000_0000),
        };
        if !r.is_nan() {
            v.push(r);
        }
    }
    v
}

fn texts(rng: &mut Rng, n: usize) -> Vec<String> {
    let pieces = [
        "", "a", "it's", "''", "\"q\"", "\n", "\r", "\r\n", "\t", "ü", "日本", "\\n", "\\012",
        "(\\n0)", "|", ",", " ", "<&>", "x\u{1}y", "\u{7f}", "NULL", "--", "/*", "é",
    ];
    (0..n)
        .map(|_| {
            (0..rng.below(5))
                .map(|_| pieces[rng.below(pieces.len() as u64) as usize])
                .collect()
        })
        .collect()
}

/// A database with one table of every value kind: t(i, r, s, b, m) with integers at the
/// i64 limits, the `reals`, the `texts`, blobs (empty, with NUL) and mixed values.
fn edge_database(dir: &Path, seed: u64, rows: usize) -> PathBuf {
    let path = dir.join("edge.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE t(i INTEGER, r REAL, s TEXT, b BLOB, m);\
         CREATE TABLE \"odd name\"(\"select\" INTEGER PRIMARY KEY AUTOINCREMENT, \"we\"\"ird\" TEXT, [a b] ANY);\
         CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;\
         CREATE TABLE g(a INTEGER, b AS (a * 2), c AS (a + 1) STORED);\
         CREATE TABLE empty(x);\
         CREATE INDEX ti ON t(i);\
         CREATE VIEW v AS SELECT i, s FROM t; -- a view\n\
         CREATE TRIGGER tr AFTER INSERT ON g BEGIN SELECT 1; END;",
    )
    .unwrap();
    let mut rng = Rng(seed);
    let reals = reals(&mut rng, rows);
    let texts = texts(&mut rng, rows);
    let ints = [0i64, 1, -1, i64::MAX, i64::MIN, 9_007_199_254_740_993];
    for k in 0..rows {
        let i: Option<i64> = match k % 8 {
            0 => None,
            _ => Some(ints[k % ints.len()] ^ (rng.below(1000) as i64)),
        };
        let r = (k % 7 != 3).then_some(reals[k]);
        let blob: Vec<u8> = (0..rng.below(6)).map(|_| rng.next() as u8).collect();
        let m: rusqlite::types::Value = match k % 5 {
            0 => rusqlite::types::Value::Null,
            1 => rusqlite::types::Value::Integer(rng.next() as i64),
            2 => rusqlite::types::Value::Real(reals[rows - 1 - k]),
            3 => rusqlite::types::Value::Text(texts[rows - 1 - k].clone()),
            _ => rusqlite::types::Value::Blob(vec![0, b'\'', 0xff]),
        };
        conn.execute(
            "INSERT INTO t VALUES(?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![i, r, texts[k], blob, m],
        )
        .unwrap();
    }
    for k in 0..5 {
        conn.execute(
            "INSERT INTO \"odd name\"(\"we\"\"ird\", [a b]) VALUES(?1, ?2)",
            rusqlite::params![texts[k], k as f64 / 3.0],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO w VALUES(?1, ?2)",
            rusqlite::params![format!("k{k}"), reals[k]],
        )
        .unwrap();
        conn.execute("INSERT INTO g(a) VALUES(?1)", [k]).unwrap();
    }
    drop(conn);
    path
}

#[test]
fn dump_matches_sqlite3_byte_for_byte() {
    for seed in [1u64, 0x5eed, 0xdead_beef] {
        let dir = tempfile::tempdir().unwrap();
        let db = edge_database(dir.path(), seed, 200);
        let out = assert_same(
            &db,
            ".dump\n.dump t%\n.dump 'odd name' w\n.dump --data-only g\n.dump --nosys\n\
             .dump --newlines t\n.dump nosuch\n.dump --bogus\n",
            &[],
        );
        assert!(out
            .stdout
            .starts_with(b"PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n"));
    }
}

/// The dump of parlite's shell, read by stock sqlite3 and by parlite, rebuilds a database
/// whose dump is the original's.
#[test]
fn dump_rebuilds_the_database_in_sqlite3_and_parlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = edge_database(dir.path(), 0x0ddba11, 300);
    // sqlite3 3.40 reads the text of a subnormal double (4.9406564584124654428e-324, which
    // its own .dump writes) back as 0.0, and SQLite 3.50's reader (sqlite3AtoF, which
    // parlite follows for literals) gives another last bit for some texts with exponents
    // beyond about ±100 (the 20-digit `-1.93984807339336227e-125` that 3.40's .dump
    // writes): keep the round trip to reals between 1e-100 and 1e100 in magnitude.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "UPDATE t SET r = 0.5 WHERE r != 0 AND abs(r) NOT BETWEEN 1e-100 AND 1e100;\
             UPDATE t SET m = 0.5 WHERE typeof(m) = 'real' AND m != 0 \
               AND abs(m) NOT BETWEEN 1e-100 AND 1e100;",
        )
        .unwrap();
    let original = run(parlite(), dir.path(), &db, b".dump\n");
    assert_eq!(show(&original.stderr), "");
    for (name, shell) in [
        ("sqlite3", sqlite3 as fn() -> Command),
        ("parlite", parlite),
    ] {
        let (rdir, rebuilt) = scratch(None, "rebuilt.db");
        let load = run(shell(), rdir.path(), &rebuilt, &original.stdout);
        assert_eq!(show(&load.stderr), "", "{name} loading the dump");
        let again = run(sqlite3(), rdir.path(), &rebuilt, b".dump\n");
        assert_bytes(
            &format!("the dump of the database {name} rebuilt"),
            &again.stdout,
            &original.stdout,
            "",
        );
        let check = run(
            sqlite3(),
            rdir.path(),
            &rebuilt,
            b"PRAGMA integrity_check;\n",
        );
        assert_eq!(show(&check.stdout), "ok\n");
    }
}

#[test]
fn output_modes_match_sqlite3() {
    let dir = tempfile::tempdir().unwrap();
    let db = edge_database(dir.path(), 42, 40);
    let query = "SELECT i, r, s, b, m FROM t;\nSELECT 1 AS x WHERE 0;\n\
                 SELECT * FROM \"odd name\";\nSELECT s AS \"a\"\"b\", i FROM t LIMIT 5;\n";
    let mut script = String::new();
    for mode in [
        "list",
        "csv",
        "tabs",
        "line",
        "column",
        "table",
        "markdown",
        "box",
        "qbox",
        "json",
        "quote",
        "insert",
        "insert \"odd name\"",
        "insert select",
        "html",
        "ascii",
        "tcl",
    ] {
        for headers in ["on", "off"] {
            script.push_str(&format!(".mode {mode}\n.headers {headers}\n.mode\n{query}"));
        }
    }
    assert_same(&db, &script, &[]);
}

#[test]
fn columnar_wrapping_widths_and_options_match_sqlite3() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE p(a, b, c);\
         INSERT INTO p VALUES('short', 'The quick brown fox jumps over the lazy dog, again and again, until it tires of jumping', 1);\
         INSERT INTO p VALUES('tab\there', 'line one\nline two\r\nline three', 22.5);\
         INSERT INTO p VALUES('ünïcödé ünïcödé ünïcödé', 'averyveryverylongwordwithoutanyspacesatallthatgoesonandonandonforeverandever', NULL);\
         INSERT INTO p VALUES('', 'x' || char(1) || 'y', -3);",
    )
    .unwrap();
    drop(conn);
    let mut script = String::from(".nullvalue NIL\n");
    for mode in ["column", "table", "box", "markdown", "qbox"] {
        for opts in [
            "",
            " --wrap 10",
            " --wrap 20 --wordwrap on",
            " --ww --wrap 15",
            " --wrap 0",
            " --quote",
            " --noquote --wrap 30",
        ] {
            // `.mode` alone resets the options, so it comes after the queries.
            script.push_str(&format!(
                ".mode {mode}{opts}\nSELECT * FROM p;\nSELECT 1 AS x UNION ALL SELECT 22;\n.mode\n"
            ));
        }
        script.push_str(&format!(
            ".mode {mode}\n.width 4 -12 8\nSELECT * FROM p;\n.width -3\nSELECT a, c FROM p;\n.width\n"
        ));
    }
    script
        .push_str(".mode column\n.headers off\nSELECT * FROM p;\n.headers on\nSELECT * FROM p;\n");
    assert_same(&db, &script, &[]);
}

#[test]
fn settings_echo_changes_print_and_output_files_match_sqlite3() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    std::fs::write(&db, b"").unwrap();
    let script = ".show\n\
        .print one two\n.print 'a\\tb' \"c\\td\" e\\tf\n\
        .echo on\nCREATE TABLE t(a, b);\nSELECT 1,\n  2;\n.headers on\n.echo off\n\
        .changes on\nINSERT INTO t VALUES(1, 2), (3, 4);\nUPDATE t SET a = a + 1;\nSELECT * FROM t;\nDELETE FROM t WHERE a = 2;\n.changes off\n\
        .separator ; \\r\\n\n.nullvalue \"<\\\"nil\\\">\"\n.mode box --wrap 33 --ww\n.width 5 -7\n.show\n\
        .mode list\n.once once.txt\nSELECT 'to the file';\nSELECT 'back';\n\
        .output out.txt\nSELECT * FROM t;\n.print printed\n.mode\n.output\nSELECT 'stdout again';\n\
        .output out2.txt\n.show\n.output stdout\n.mode tabs\n.mode\n.mode insert\n.show\n.mode bogus\n.width 1 x 3\n.show\n";
    assert_same(&db, script, &["once.txt", "out.txt", "out2.txt"]);
}

#[test]
fn import_matches_sqlite3() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE existing(x, y, z);")
        .unwrap();
    let files: &[(&str, &[u8])] = &[
        ("a.csv", b"name,\"b c\",\"q\"\"x\"\n1,,\"multi\nline\"\r\n2,3\n4,5,6,7\n\"\",x,y\n\"tail\",\"a\"\"b\",end"),
        ("dup.csv", b"a,a,,A\n1,2,3,4\n"),
        ("bom.csv", b"\xef\xbb\xbfk,v\r\n1,2\r\n"),
        ("pipe.txt", b"p|q\n1|2\n\"3|x\"|4\n"),
        ("ascii.txt", b"u\x1fv\x1e1\x1f2\x1e\x1e3\x1f4\x1e"),
        ("empty.csv", b""),
    ];
    let script = ".import --csv a.csv t1\n.import --csv --skip 1 a.csv existing\n\
        .import --csv dup.csv t2\n.import --csv bom.csv t3\n.import pipe.txt t4\n\
        .import --ascii ascii.txt t5\n.mode csv\n.import a.csv t6\n.import empty.csv t7\n\
        .import nosuch.csv t8\n.import --csv a.csv existing\n\
        .mode quote\n.headers on\nSELECT * FROM t1;\nSELECT * FROM existing;\nSELECT * FROM t2;\n\
        SELECT * FROM t3;\nSELECT * FROM t4;\nSELECT * FROM t5;\nSELECT * FROM t6;\n.schema\n";
    let (sdir, sdb) = scratch(Some(&db), "db.sqlite");
    let (pdir, pdb) = scratch(Some(&db), "db.sqlite");
    for (name, data) in files {
        std::fs::write(sdir.path().join(name), data).unwrap();
        std::fs::write(pdir.path().join(name), data).unwrap();
    }
    let want = run(sqlite3(), sdir.path(), &sdb, script.as_bytes());
    let got = run(parlite(), pdir.path(), &pdb, script.as_bytes());
    assert_bytes("stdout", &got.stdout, &want.stdout, script);
    assert_bytes("stderr", &got.stderr, &want.stderr, script);
    assert_eq!(got.code, want.code);
}

/// `.backup`/`.save` and `.restore` run the online backup with sqlite3's arguments,
/// messages and exit status (byte for byte); every copy is the source database as stock
/// SQLite dumps it, and passes its integrity check.
#[test]
fn backup_save_and_restore_match_sqlite3() {
    let dir = tempfile::tempdir().unwrap();
    let db = edge_database(dir.path(), 7, 50);
    let original = run(sqlite3(), dir.path(), &db, b".dump\n");
    let script = ".backup copy.db\n.save old.db\n.backup main copy2.db\n.backup aux x.db\n\
        .backup\n.backup a b c\n.backup --bogus f.db\n.backup --async copy3.db\n\
        CREATE TABLE extra(x);\n.restore copy.db\n\
        SELECT count(*) FROM sqlite_schema WHERE name = 'extra';\n\
        .restore\n.restore a b c\n.restore aux copy.db\n\
        ATTACH 'att.db' AS att;\n.restore att copy.db\n.backup att attcopy.db\n\
        BEGIN;\nSELECT count(*) FROM sqlite_schema;\n.restore copy.db\n.backup copy4.db\n\
        COMMIT;\n";
    let name = Path::new("db.sqlite");
    let (sdir, _) = scratch(Some(&db), "db.sqlite");
    let (pdir, _) = scratch(Some(&db), "db.sqlite");
    for d in [&sdir, &pdir] {
        // A database FILE already holds is replaced.
        let old = run(
            sqlite3(),
            d.path(),
            &d.path().join("old.db"),
            b"CREATE TABLE o(x);\n",
        );
        assert_eq!(old.code, Some(0));
    }
    let want = run(sqlite3(), sdir.path(), name, script.as_bytes());
    let got = run(parlite(), pdir.path(), name, script.as_bytes());
    assert_bytes("stdout", &got.stdout, &want.stdout, script);
    assert_bytes("stderr", &got.stderr, &want.stderr, script);
    assert_eq!(got.code, want.code, "exit status differs for:\n{script}");
    assert!(
        show(&want.stderr).contains("Error: unknown database aux\n"),
        "{}",
        show(&want.stderr)
    );
    for copy in [
        "copy.db",
        "old.db",
        "copy2.db",
        "copy3.db",
        "attcopy.db",
        "copy4.db",
        "db.sqlite",
    ] {
        let path = pdir.path().join(copy);
        let check = run(sqlite3(), pdir.path(), &path, b"PRAGMA integrity_check;\n");
        assert_eq!(show(&check.stdout), "ok\n", "{copy}");
        let dump = run(sqlite3(), pdir.path(), &path, b".dump\n");
        assert_eq!(show(&dump.stdout), show(&original.stdout), "{copy}");
    }
}

#[test]
fn timer_prints_sqlite3s_run_time_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let out = run(
        parlite(),
        dir.path(),
        &db,
        b".timer on\nSELECT 1;\n.timer off\nSELECT 2;\n",
    );
    let text = show(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!((lines[0], lines[2]), ("1", "2"));
    let words: Vec<&str> = lines[1].split(' ').collect();
    assert_eq!(words.len(), 8, "{text}");
    assert_eq!(
        (words[0], words[1], words[2], words[4], words[6]),
        ("Run", "Time:", "real", "user", "sys")
    );
    for (w, decimals) in [(words[3], 3), (words[5], 6), (words[7], 6)] {
        let (whole, frac) = w.split_once('.').unwrap();
        assert!(
            whole.parse::<u64>().is_ok() && frac.len() == decimals,
            "{text}"
        );
    }
    // Under `.output FILE` the results go to the file, the timer line to standard output.
    let out = run(
        parlite(),
        dir.path(),
        &db,
        b".output t.txt\n.timer on\nSELECT 3;\n.output\n",
    );
    let text = show(&out.stdout);
    assert!(
        text.starts_with("Run Time: real ") && text.lines().count() == 1,
        "{text}"
    );
    assert_eq!(std::fs::read(dir.path().join("t.txt")).unwrap(), b"3\n");
}

#[test]
fn query_plans_draw_as_sqlite3_draws_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    std::fs::write(&db, b"").unwrap();
    let script = "CREATE TABLE t(a, b);\nCREATE INDEX ta ON t(a);\nCREATE TABLE u(c);\n\
        EXPLAIN QUERY PLAN SELECT * FROM t;\n\
        EXPLAIN QUERY PLAN SELECT * FROM t WHERE a = 1;\n\
        .mode csv\n\
        EXPLAIN QUERY PLAN SELECT a FROM t UNION SELECT c FROM u;\n\
        EXPLAIN QUERY PLAN SELECT * FROM t WHERE a > 1 ORDER BY b;\n\
        EXPLAIN QUERY PLAN SELECT (SELECT max(c) FROM u), a FROM t;\n\
        .explain off\nEXPLAIN QUERY PLAN SELECT * FROM t;\n.explain auto\n\
        .mode list\n.eqp on\n.show\nSELECT * FROM t WHERE a = 1;\nINSERT INTO t VALUES (1, 2);\n\
        SELECT a, b FROM t;\nCREATE TABLE w(x);\nEXPLAIN QUERY PLAN SELECT * FROM u;\n\
        .mode csv\nSELECT count(*) FROM u;\n.eqp off\nSELECT 2;\n.eqp\n.eqp maybe\n.show\n";
    assert_same(&db, script, &[]);
}

#[test]
fn parameters_bind_as_in_sqlite3() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    std::fs::write(&db, b"").unwrap();
    let script = "SELECT :a, $b;\n.parameter list\n\
        .parameter set :a 5\n.parameter set $b hello\n.parameter set @c 2+3\n\
        .parameter set ?1 'x'\n.parameter set :long_parameter_name x'0a0b'\n\
        .parameter set :r 0.5\n.parameter set :n NULL\n.parameter set :bad abs(-9223372036854775808)\n\
        .parameter list\nSELECT :a, $b, @c, ?1, :zz, typeof(:a), typeof($b), :r, :n;\n\
        SELECT ?, ?2;\n.parameter set :a 'it''s'\nSELECT :a;\n\
        .parameter unset :a\n.parameter list\nSELECT :a, $b;\n\
        .parameter clear\n.parameter list\nSELECT $b;\n.parameter init\n.parameter list\n\
        .parameter\n.parameter bogus\n.parameter set :x\n.param set :y 7\nSELECT :y;\n";
    assert_same(&db, script, &[]);
}

#[test]
fn open_timeout_cd_system_and_fullschema_match_sqlite3() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.db");
    std::fs::write(&db, b"").unwrap();
    let script = ".timeout 250\nPRAGMA busy_timeout;\n.timeout\nPRAGMA busy_timeout;\n\
        CREATE TABLE t(a, b);\nCREATE INDEX i ON t(a);\n.fullschema\n\
        INSERT INTO t VALUES (1, 2), (1, 3);\nANALYZE;\n.fullschema\n\
        .open other.db\nCREATE TABLE x(y);\nINSERT INTO x VALUES (42);\n.show\n\
        .open\nSELECT count(*) FROM sqlite_schema;\n\
        .open --readonly other.db\nSELECT * FROM x;\nINSERT INTO x VALUES (1);\n\
        .open --new other.db\nSELECT count(*) FROM sqlite_schema;\n\
        .open --bogus other.db\n.open db.sqlite\nSELECT count(*) FROM t;\n\
        .shell echo one two\n.system echo 'a b' c\n.system exit 3\n.system\n\
        .cd sub\nCREATE TABLE z(q);\n.print after\n.cd\n\
        CREATE TABLE k(a UNIQUE);\nINSERT INTO k VALUES (1);\nINSERT INTO k VALUES (1);\n\
        SELECT abs(-9223372036854775808);\nSELECT * FROM nosuch;\n";
    let out = assert_same(&db, script, &[]);
    assert!(
        show(&out.stdout).contains("one two\n"),
        ".shell output is missing: {}",
        show(&out.stdout)
    );
}

/// `.cd` changes the directory files are opened in: `.open` and `.once` after it use it.
#[test]
fn cd_moves_where_relative_files_go() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let db = dir.path().join("c.db");
    let script = ".cd sub\n.open inner.db\nCREATE TABLE t(a);\nINSERT INTO t VALUES (7);\n\
        .once out.txt\nSELECT a FROM t;\n";
    let out = run(parlite(), dir.path(), &db, script.as_bytes());
    assert_eq!(show(&out.stderr), "");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/out.txt")).unwrap(),
        "7\n"
    );
    let check = run(
        sqlite3(),
        dir.path(),
        &dir.path().join("sub/inner.db"),
        b"SELECT a FROM t;\n",
    );
    assert_eq!(show(&check.stdout), "7\n");
}
