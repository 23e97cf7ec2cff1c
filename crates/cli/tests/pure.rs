//! The shell's pure parts: statement completeness, input chunking, argument parsing and
//! output layout.

use parlite_cli::args::parse_args;
use parlite_cli::backend::Cell;
use parlite_cli::complete::is_complete;
use parlite_cli::output::{Format, Mode, ResultWriter};
use parlite_cli::shell::{split_dot_args, table_list_layout, Chunk, ChunkReader};

#[test]
fn completeness_matches_sqlite3_complete() {
    let complete = [
        "SELECT 1;",
        "SELECT 1;  ",
        "SELECT 1; -- trailing comment",
        "SELECT 1; /* c */",
        "SELECT ';';",
        "SELECT \"a;b\";",
        "SELECT [x;y] FROM t;",
        "SELECT `a;` ;",
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END;",
        "create temp trigger tr after insert on t begin select 1; select 2; end ;",
        "EXPLAIN CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END;",
        "CREATE TABLE end(x);",
        ";",
    ];
    let incomplete = [
        "",
        "SELECT 1",
        "SELECT ';'",
        "SELECT 'abc;",
        "SELECT 1 /* ; */",
        "SELECT 1; /* unterminated",
        "SELECT 1 -- ;",
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1;",
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
        "SELECT [x;",
    ];
    for s in complete {
        assert!(is_complete(s), "should be complete: {s:?}");
    }
    for s in incomplete {
        assert!(!is_complete(s), "should be incomplete: {s:?}");
    }
}

#[test]
fn chunks_follow_the_shell() {
    let mut r = ChunkReader::new();
    assert_eq!(r.push(""), None);
    assert_eq!(r.push("# a comment"), None);
    assert_eq!(
        r.push(".tables"),
        Some(Chunk::Dot {
            line: ".tables".into(),
            line_no: 3
        })
    );
    assert_eq!(r.push("SELECT 1,"), None);
    assert!(r.is_pending());
    // A `.` line inside a statement is part of it.
    assert_eq!(
        r.push(".5;"),
        Some(Chunk::Sql {
            text: "SELECT 1,\n.5;\n".into(),
            start_line: 4
        })
    );
    assert_eq!(r.push("SELECT 2"), None);
    assert_eq!(
        r.finish(),
        Some(Chunk::Sql {
            text: "SELECT 2\n".into(),
            start_line: 6
        })
    );
    assert_eq!(r.finish(), None);
}

#[test]
fn arguments_accept_sqlite3_spellings() {
    let o = parse_args([
        "parlite",
        "-header",
        "-csv",
        "db.sqlite",
        "SELECT 1",
        ".tables",
    ])
    .unwrap();
    assert!(o.header && o.csv);
    assert_eq!(o.database.as_deref(), Some("db.sqlite"));
    assert_eq!(o.sql, vec!["SELECT 1", ".tables"]);
    let o = parse_args(["parlite", "--separator", ";", "-nullvalue", "NIL"]).unwrap();
    assert_eq!(o.separator.as_deref(), Some(";"));
    assert_eq!(o.nullvalue.as_deref(), Some("NIL"));
    assert_eq!(o.database_path(), ":memory:");
    let o = parse_args(["parlite", "-header", "-noheader", "-csv", "-list"]).unwrap();
    assert!(!o.header && o.noheader && !o.csv && o.list);
    assert!(parse_args(["parlite", "--no-such-option"]).is_err());
    assert_eq!(split_dot_args("mode  csv"), vec!["mode", "csv"]);
    assert_eq!(
        split_dot_args("separator ' | ' x"),
        vec!["separator", " | ", "x"]
    );
}

#[test]
fn list_rendering() {
    let format = Format::default();
    let mut w = ResultWriter::new(&format, &["a".into(), "b".into()]);
    let mut out = Vec::new();
    w.row(&mut out, &[Cell::Integer(-3), Cell::Null]).unwrap();
    w.row(&mut out, &[Cell::Real(0.1), Cell::Text(b"x y".to_vec())])
        .unwrap();
    w.row(&mut out, &[Cell::Real(100.0), Cell::Blob(b"zz".to_vec())])
        .unwrap();
    w.finish(&mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "-3|\n0.1|x y\n100.0|zz\n");

    let mut format = Format::default();
    format.set_mode(Mode::Column);
    format.headers = true;
    let mut w = ResultWriter::new(&format, &["long_name".into(), "b".into()]);
    let mut out = Vec::new();
    w.row(&mut out, &[Cell::Integer(1), Cell::Text("héllo".into())])
        .unwrap();
    w.finish(&mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "long_name  b    \n---------  -----\n1          héllo\n"
    );
}

#[test]
fn tables_layout_fills_columns_down_first() {
    let names: Vec<String> = (0..30).map(|i| format!("table_{i:02}")).collect();
    let text = table_list_layout(&names);
    let lines: Vec<&str> = text.lines().collect();
    // 8-character names: 80 / 10 = 8 columns, so 4 rows.
    assert_eq!(lines.len(), 4);
    assert!(lines[0].starts_with("table_00  table_04  "));
    assert_eq!(table_list_layout(&[]), "");
}
