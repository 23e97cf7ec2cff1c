//! Parser tests over real SQL: every statement of the sqllogictest corpus parses (unless the
//! record expects an error), its printed form parses back to the same printed form, and
//! random bytes or mutations of valid SQL never panic.

use parlite_sql::parse::{parse_all, parse_first};
use rand::{Rng, SeedableRng};
use std::path::PathBuf;

fn corpus_dir() -> Option<PathBuf> {
    let base = std::env::var("PARLITE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("/work/shared/corpus"));
    let d = base.join("sqllogictest");
    d.is_dir().then_some(d)
}

/// (sql, expect_error) for each record of a .test file, up to `max` records.
fn records(path: &std::path::Path, max: usize) -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out = Vec::new();
    let mut blocks: Vec<Vec<&str>> = vec![Vec::new()];
    for l in text.lines() {
        if l.trim().is_empty() {
            blocks.push(Vec::new());
        } else if let Some(b) = blocks.last_mut() {
            b.push(l.trim_end_matches('\r'));
        }
    }
    for block in blocks {
        let lines: Vec<&str> = block.into_iter().filter(|l| !l.starts_with('#')).collect();
        let Some(pos) = lines
            .iter()
            .position(|l| l.starts_with("statement") || l.starts_with("query"))
        else {
            continue;
        };
        if lines[..pos]
            .iter()
            .any(|l| l.starts_with("onlyif") && !l.contains("sqlite"))
            || lines[..pos].iter().any(|l| l.starts_with("skipif sqlite"))
        {
            continue;
        }
        let head = lines[pos];
        let expect_error = head.starts_with("statement error");
        let sql: Vec<&str> = lines[pos + 1..]
            .iter()
            .take_while(|l| **l != "----")
            .copied()
            .collect();
        out.push((sql.join("\n"), expect_error));
        if out.len() >= max {
            break;
        }
    }
    out
}

#[test]
fn corpus_statements_parse_and_round_trip() {
    let Some(dir) = corpus_dir() else {
        eprintln!("skipping: sqllogictest corpus not found (set PARLITE_CORPUS)");
        return;
    };
    let mut files = vec![
        dir.join("select1.test"),
        dir.join("select4.test"),
        dir.join("random/expr/slt_good_0.test"),
    ];
    if let Ok(rd) = std::fs::read_dir(dir.join("evidence")) {
        files.extend(rd.flatten().map(|e| e.path()));
    }
    let mut n = 0;
    for f in files {
        for (sql, expect_error) in records(&f, 3000) {
            match parse_all(&sql) {
                Ok(stmts) => {
                    for s in stmts {
                        let printed = s.to_string();
                        let reparsed = parse_all(&printed).unwrap_or_else(|e| {
                            panic!("{f:?}: reprint of {sql:?} = {printed:?} fails: {e}")
                        });
                        assert_eq!(reparsed.len(), 1);
                        assert_eq!(reparsed[0].to_string(), printed, "round trip of {sql:?}");
                        n += 1;
                    }
                }
                Err(e) => assert!(expect_error, "{f:?}: {sql:?} failed to parse: {e}"),
            }
        }
    }
    assert!(n > 1000, "parsed only {n} statements");
}

#[test]
fn random_input_never_panics() {
    let seeds = [
        "SELECT a, b+1 AS c FROM t1 LEFT JOIN t2 USING (x) WHERE a BETWEEN 1 AND 2 GROUP BY 1 HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 3 OFFSET 1",
        "CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b TEXT NOT NULL DEFAULT 'x' CHECK (b <> ''), UNIQUE (b) ON CONFLICT REPLACE)",
        "INSERT OR REPLACE INTO t(a,b) VALUES (1,'x'),(2,?) ON CONFLICT(a) DO UPDATE SET b=excluded.b RETURNING *",
        "CREATE TRIGGER tr AFTER UPDATE OF a ON t FOR EACH ROW WHEN new.a > 0 BEGIN DELETE FROM u WHERE x = old.a; END",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 9) SELECT CASE WHEN x IN (SELECT 1) THEN CAST(x AS TEXT) ELSE x COLLATE nocase END FROM c",
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed);
    let alphabet: &[u8] = b"SELECT FROM WHERE()'\",.;*+-/|<>=!?:@$x0123456789[]` \n\t/*--";
    for i in 0..20_000 {
        let s: String = if i % 2 == 0 {
            let len = rng.gen_range(0..60);
            (0..len)
                .map(|_| alphabet[rng.gen_range(0..alphabet.len())] as char)
                .collect()
        } else {
            let mut b: Vec<char> = seeds[rng.gen_range(0..seeds.len())].chars().collect();
            for _ in 0..rng.gen_range(1..6) {
                let p = rng.gen_range(0..b.len().max(1));
                match rng.gen_range(0..3) {
                    0 if !b.is_empty() => {
                        b.remove(p.min(b.len() - 1));
                    }
                    1 => b.insert(
                        p.min(b.len()),
                        alphabet[rng.gen_range(0..alphabet.len())] as char,
                    ),
                    _ => {
                        let q = rng.gen_range(0..b.len().max(1));
                        if p < b.len() && q < b.len() {
                            b.swap(p, q);
                        }
                    }
                }
            }
            b.into_iter().collect()
        };
        let _ = parse_all(&s);
        let _ = parse_first(&s);
    }
    // Arbitrary bytes, lossily made UTF-8 (the API takes &str).
    for _ in 0..5_000 {
        let len = rng.gen_range(0..40);
        let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let _ = parse_all(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn tail_and_empty_input() {
    assert!(parse_first("  -- only a comment\n /* and this */ ;; ")
        .unwrap()
        .is_none());
    let sql = "SELECT 1; SELECT 2";
    let p = parse_first(sql).unwrap().unwrap();
    assert_eq!(&sql[p.tail..], " SELECT 2");
}
