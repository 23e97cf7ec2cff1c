//! The shell's behaviour end to end, over SQLite (rusqlite) as the backend: the same
//! scripts run through /usr/bin/sqlite3 3.40 give the outputs and error lines expected here.

use parlite_cli::app::{run, Io};
use parlite_cli::args::parse_args;
use parlite_cli::backend::{Backend, Cell, Event, ExecError, Phase};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::ValueRef;
use rusqlite::{Batch, Connection};
use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

struct SqliteBackend(Connection);

fn message(e: rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(m)) => m,
        rusqlite::Error::SqlInputError { msg, .. } => msg,
        other => other.to_string(),
    }
}

/// The primary result code of a SQLite error (1 for anything else).
fn code(e: &rusqlite::Error) -> i32 {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => f.extended_code & 0xff,
        _ => 1,
    }
}

impl Backend for SqliteBackend {
    fn execute(&mut self, sql: &str, sink: &mut dyn FnMut(Event<'_>)) -> Result<(), ExecError> {
        let prepare_error = |e| ExecError {
            phase: Phase::Prepare,
            code: code(&e),
            message: message(e),
        };
        let mut batch = Batch::new(&self.0, sql);
        while let Some(mut stmt) = batch.next().map_err(prepare_error)? {
            let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
            sink(Event::Columns(&names));
            let mut rows = stmt.raw_query();
            loop {
                match rows.next() {
                    Ok(Some(row)) => {
                        let cells: Vec<Cell> = (0..names.len())
                            .map(|i| match row.get_ref(i).unwrap() {
                                ValueRef::Null => Cell::Null,
                                ValueRef::Integer(v) => Cell::Integer(v),
                                ValueRef::Real(v) => Cell::Real(v),
                                ValueRef::Text(v) => Cell::Text(v.to_vec()),
                                ValueRef::Blob(v) => Cell::Blob(v.to_vec()),
                            })
                            .collect();
                        sink(Event::Row(&cells));
                    }
                    Ok(None) => break,
                    Err(e) => {
                        sink(Event::Done);
                        return Err(ExecError {
                            phase: Phase::Step,
                            code: code(&e),
                            message: message(e),
                        });
                    }
                }
            }
            sink(Event::Done);
        }
        Ok(())
    }
}

#[derive(Clone, Default)]
struct Buf(Rc<RefCell<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buf {
    fn text(&self) -> String {
        String::from_utf8(self.0.borrow().clone()).unwrap()
    }
}

/// Runs the shell with `args` and `stdin`; returns (exit status, stdout, stderr).
fn shell(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut all = vec!["parlite"];
    all.extend_from_slice(args);
    let opts = parse_args(all).unwrap();
    let mut backend = SqliteBackend(Connection::open_in_memory().unwrap());
    let (out, err) = (Buf::default(), Buf::default());
    let io = Io {
        stdin: Box::new(std::io::Cursor::new(stdin.as_bytes().to_vec())),
        stdin_is_terminal: false,
        stdout: Box::new(out.clone()),
        stderr: Box::new(err.clone()),
    };
    let code = run(&opts, &mut backend, io);
    (code, out.text(), err.text())
}

#[test]
fn script_prints_list_mode_and_reports_errors_by_line() {
    let (code, out, err) = shell(
        &[],
        "SELECT 1;\nSELEC 2;\nSELECT 3;\nSELECT abs(-9223372036854775807-1);\nCREATE TABLE t(a);\nINSERT INTO t VALUES(1);\nSELECT * FROM nosuch;\nSELECT 1,\n2;\n",
    );
    assert_eq!(code, 1);
    assert_eq!(out, "1\n3\n1|2\n");
    assert_eq!(
        err,
        "Parse error near line 2: near \"SELEC\": syntax error\n\
         Runtime error near line 4: integer overflow\n\
         Parse error near line 7: no such table: nosuch\n"
    );
}

#[test]
fn values_print_as_sqlite_prints_them() {
    let (code, out, err) = shell(
        &[
            ":memory:",
            "SELECT 1, 2.5, NULL, 'x', 1e20, 1.0, -0.0, x'41'",
        ],
        "",
    );
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, "1|2.5||x|1.0e+20|1.0|0.0|A\n");
}

#[test]
fn unterminated_last_statement_still_runs() {
    let (code, out, _) = shell(&[], "SELECT 1;\nSELECT 2");
    assert_eq!((code, out.as_str()), (0, "1\n2\n"));
}

#[test]
fn argument_errors_stop_and_use_argument_wording() {
    let (code, out, err) = shell(
        &[
            ":memory:",
            "SELECT 1; SELECT abs(-9223372036854775807-1); SELECT 3",
        ],
        "",
    );
    assert_eq!((code, out.as_str()), (1, "1\n"));
    assert_eq!(err, "Error: stepping, integer overflow\n");
    let (code, _, err) = shell(&[":memory:", "SELEC"], "");
    assert_eq!(code, 1);
    assert_eq!(err, "Error: in prepare, near \"SELEC\": syntax error\n");
}

#[test]
fn headers_and_modes() {
    let script = "CREATE TABLE t(a INTEGER, b TEXT);\nINSERT INTO t VALUES(1,'a,b'),(22,NULL),(3,'q\"x'),(4, 'long text value here');\n.headers on\nSELECT * FROM t;\n.mode csv\nSELECT * FROM t;\n.mode column\nSELECT a, b, 1.5 AS r FROM t;\n.headers off\nSELECT a,b FROM t;\n.mode list\n.headers on\nSELECT 1 WHERE 0;\n";
    let (code, out, err) = shell(&[], script);
    assert_eq!((code, err.as_str()), (0, ""));
    let expected = "a|b\n1|a,b\n22|\n3|q\"x\n4|long text value here\n\
a,b\r\n1,\"a,b\"\r\n22,\r\n3,\"q\"\"x\"\r\n4,\"long text value here\"\r\n\
a   b                     r  \n\
--  --------------------  ---\n\
1   a,b                   1.5\n\
22                        1.5\n\
3   q\"x                   1.5\n\
4   long text value here  1.5\n\
1   a,b                 \n\
22                      \n\
3   q\"x                 \n\
4   long text value here\n";
    assert_eq!(out, expected);
}

#[test]
fn one_dash_options_like_sqlite3() {
    let (_, out, _) = shell(
        &[
            "-csv",
            "-header",
            ":memory:",
            "SELECT 'it''s' AS \"a b\", '', NULL",
        ],
        "",
    );
    assert_eq!(out, "\"a b\",\"''\",NULL\n\"it's\",\"\",\n");
    let (_, out, _) = shell(
        &[
            "-separator",
            ";",
            "-nullvalue",
            "NIL",
            ":memory:",
            "SELECT 1, NULL",
        ],
        "",
    );
    assert_eq!(out, "1;NIL\n");
}

#[test]
fn tables_and_schema() {
    let script = "CREATE TABLE t(a INTEGER, b TEXT); CREATE TABLE \"s p\"(x); CREATE INDEX ti ON t(a); CREATE TABLE a(x INTEGER PRIMARY KEY AUTOINCREMENT);\n.tables\n.schema t\n.schema\n";
    let (code, out, err) = shell(&[], script);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        "a    s p  t  \n\
CREATE TABLE t(a INTEGER, b TEXT);\n\
CREATE INDEX ti ON t(a);\n\
CREATE TABLE t(a INTEGER, b TEXT);\n\
CREATE TABLE IF NOT EXISTS \"s p\"(x);\n\
CREATE INDEX ti ON t(a);\n\
CREATE TABLE a(x INTEGER PRIMARY KEY AUTOINCREMENT);\n\
CREATE TABLE sqlite_sequence(name,seq);\n"
    );
}

#[test]
fn dot_command_errors_and_quit() {
    let (code, out, err) = shell(
        &[],
        ".foo\n.headers\n.mode bogus\nSELECT 1;\n.quit\nSELECT 2;\n",
    );
    assert_eq!(code, 1);
    assert_eq!(out, "1\n");
    assert_eq!(
        err,
        "Error: unknown command or invalid arguments:  \"foo\". Enter \".help\" for help\n\
Usage: .headers on|off\n\
Error: mode should be one of: ascii box column csv html insert json line list markdown qbox quote table tabs tcl\n"
    );
    let (code, out, _) = shell(&[], ".mode\n.exit 3\nSELECT 1;\n");
    assert_eq!((code, out.as_str()), (3, "current output mode: list\n"));
}

#[test]
fn bail_stops_at_first_error() {
    let (code, out, _) = shell(&["-bail"], "SELECT 1;\nSELEC;\nSELECT 2;\n");
    assert_eq!((code, out.as_str()), (1, "1\n"));
}

#[test]
fn trigger_body_is_one_statement() {
    let (code, out, err) = shell(
        &[],
        "CREATE TABLE t(a); CREATE TABLE log(a);\nCREATE TRIGGER tr AFTER INSERT ON t BEGIN\n  INSERT INTO log VALUES (new.a);\n  INSERT INTO log VALUES (new.a + 1);\nEND;\nINSERT INTO t VALUES (7);\nSELECT * FROM log;\n",
    );
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, "7\n8\n");
}

#[test]
fn line_and_tabs_modes() {
    let (_, out, _) = shell(
        &[],
        ".mode line\nselect 1 as a, 'x' as bbb union all select 2, NULL;\n.mode tabs\n.headers on\nselect 1 as a, 2 as b;\n",
    );
    assert_eq!(
        out,
        "    a = 1\n  bbb = x\n\n    a = 2\n  bbb = \na\tb\n1\t2\n"
    );
}

#[test]
fn indexes_and_read() {
    let dir = std::env::temp_dir().join(format!("parlite-cli-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.sql");
    std::fs::write(&file, "select 7;\nselec;\n").unwrap();
    let script = format!(
        "create table t(a); create index i1 on t(a); create table u(b unique); create index i2 on u(b);\n.indexes\n.indexes t\n.read {}\n",
        file.display()
    );
    let (code, out, err) = shell(&[], &script);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "i1                    i2                    sqlite_autoindex_u_1\ni1\n7\n"
    );
    assert_eq!(
        err,
        "Parse error near line 2: near \"selec\": syntax error\n"
    );
}

#[test]
fn dot_databases_lists_attached_databases() {
    let (code, out, err) = shell(&[], "ATTACH ':memory:' AS m;\n.databases\n");
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, "main: \"\" r/w\nm: \"\" r/w\n");
}

#[test]
fn explain_prints_as_sqlite3_in_every_mode_unless_explain_off() {
    // sqlite3 3.40 prints these bytes for `EXPLAIN SELECT 1` in list, csv and line mode.
    let table = "addr  opcode         p1    p2    p3    p4             p5  comment      \n\
                 ----  -------------  ----  ----  ----  -------------  --  -------------\n\
                 0     Init           0     4     0                    0                \n\
                 1     Integer        1     1     0                    0                \n\
                 2     ResultRow      1     1     0                    0                \n\
                 3     Halt           0     0     0                    0                \n\
                 4     Goto           0     1     0                    0                \n";
    for mode in ["list", "csv", "line", "column"] {
        let (code, out, err) = shell(&[], &format!(".mode {mode}\nEXPLAIN SELECT 1;\n"));
        assert_eq!((code, err.as_str()), (0, ""));
        assert_eq!(out, table, "mode {mode}");
    }
    let (code, out, _) = shell(&[], ".explain off\nEXPLAIN SELECT 1;\n.explain auto\n");
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "0|Init|0|4|0||0|\n1|Integer|1|1|0||0|\n2|ResultRow|1|1|0||0|\n3|Halt|0|0|0||0|\n4|Goto|0|1|0||0|\n"
    );
}
