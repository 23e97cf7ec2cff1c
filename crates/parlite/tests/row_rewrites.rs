//! UPDATEs that rewrite large rows by key, against SQLite. Two storage shortcuts are under
//! test: a rewritten row whose cell keeps its size and fits on its page is written over the
//! old cell in the page directly (btree `insert::table_insert`, `put_table_leaf_local`),
//! and a CONCURRENT transaction hands the record buffer its operation log kept to the
//! thread's next transaction (txn.rs `TxnBuffers::record`), which must never be one a live
//! log still replays. And a row read for a rewrite decodes its large BLOB into the buffer
//! of the previous such row's when it has the same length and nothing holds it any more
//! (sql txnstore.rs `decode_for_write`): rows here often share a BLOB length and differ in
//! its last bytes, which the checks read.
//!
//! The rows are sized around the page's overflow threshold (4,061 bytes of payload on a
//! 4 KiB page): an UPDATE keeps a row's size, grows or shrinks it a few bytes (an integer's
//! serial type), carries it across the threshold in both directions, or shrinks a spilled
//! row to an all-local one whose cell has the spilled cell's size (a 4,100-byte payload
//! keeps 489 bytes on the page: 493 bytes with its overflow page number).

mod common;

use common::{check_script, run_parlite, run_sqlite, Compare, Rng};

const SETUP: &str = "
CREATE TABLE t(id INTEGER PRIMARY KEY, x INTEGER, pad BLOB, note TEXT);
CREATE INDEX tx ON t(x);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 40)
  INSERT INTO t SELECT i * 3 - 60, i, zeroblob(3900 + i * 5), NULL FROM s;
INSERT INTO t VALUES(-9000000000, 7, zeroblob(4050), 'far');
INSERT INTO t VALUES(9000000000, 8, zeroblob(100), 'far');
";

const CHECK: &str = "
PRAGMA integrity_check;
SELECT id, x, length(pad), hex(substr(pad, -3)), note FROM t ORDER BY id;
SELECT x, id FROM t INDEXED BY tx WHERE x > -1e30 ORDER BY x, id;
SELECT count(*), total(id), total(x), total(length(pad)) FROM t;
";

/// The rowids of the rows the mixes rewrite.
const IDS: [i64; 6] = [-57, -3, 0, 57, -9000000000, 9000000000];

/// An integer whose record field is 0 to 8 bytes: a row rewritten with it keeps its size,
/// or grows or shrinks by a few bytes.
fn int(r: &mut Rng) -> i64 {
    match r.below(6) {
        0 => r.below(2) as i64,
        1 => r.below(100) as i64 - 50,
        2 => 1000 + r.below(20_000) as i64,
        3 => -(1 << 30) - r.below(1000) as i64,
        4 => (1 << 40) + r.below(1000) as i64,
        _ => r.next() as i64,
    }
}

/// A payload length: mostly around the overflow threshold, sometimes small, sometimes a
/// little above the size whose spilled cell an all-local 493-byte one matches.
fn pad_len(r: &mut Rng) -> u64 {
    match r.below(5) {
        0 => r.below(600),
        1 => 470 + r.below(40),
        _ => 4020 + r.below(100),
    }
}

fn key(r: &mut Rng) -> String {
    match r.below(8) {
        0..=5 => IDS[r.below(IDS.len() as u64) as usize].to_string(),
        _ => (3 * (1 + r.below(40)) as i64 - 60).to_string(),
    }
}

/// One rewrite of a row found by key; both engines run the same text.
fn statement(r: &mut Rng) -> String {
    let id = key(r);
    match r.below(12) {
        0..=3 => format!("UPDATE t SET x = {} WHERE id = {id}", int(r)),
        10 => format!(
            "UPDATE t SET pad = zeroblob(2999) || x'{:02x}' WHERE id = {id}",
            r.below(256)
        ),
        11 => format!("DELETE FROM t WHERE id = {id} RETURNING x, hex(substr(pad, -2))"),
        4 => format!(
            "UPDATE t SET pad = zeroblob({}) || x'{:02x}', x = {} WHERE id = {id}",
            pad_len(r),
            r.below(256),
            int(r)
        ),
        5 => format!(
            "UPDATE t SET note = printf('%.*c', {}, 'n') WHERE id = {id}",
            r.below(60)
        ),
        6 => format!("UPDATE t SET x = x + 1, note = NULL WHERE rowid = {id}"),
        7 => format!("UPDATE t SET x = {} WHERE x = {}", int(r), r.below(40)),
        8 => "SAVEPOINT s; UPDATE t SET x = -x WHERE id BETWEEN -10 AND 10; ROLLBACK TO s; \
              RELEASE s"
            .to_string(),
        _ => format!("SELECT x, length(pad) FROM t WHERE id = {id}"),
    }
}

#[test]
fn large_row_rewrites_match_sqlite() {
    for seed in 1..=6 {
        let mut r = Rng(seed);
        let mut script = SETUP.to_string();
        for t in 0..6 {
            script.push_str(if t % 2 == 0 {
                "BEGIN;\n"
            } else {
                "BEGIN IMMEDIATE;\n"
            });
            for _ in 0..60 {
                script.push_str(&statement(&mut r));
                script.push_str(";\n");
            }
            script.push_str(if t == 3 { "ROLLBACK;\n" } else { "COMMIT;\n" });
            // Outside a transaction each UPDATE is its own.
            script.push_str(&statement(&mut r));
            script.push_str(";\n");
        }
        script.push_str(CHECK);
        check_script(&script, Compare::default());
    }
}

/// A spilled row shrunk to an all-local one with a cell of the same size: the old cell is
/// overwritten in place and its overflow page freed. Every payload length around the match
/// is tried, so one of them lands on it.
#[test]
fn spilled_row_shrunk_to_a_same_size_cell_matches_sqlite() {
    let mut script = String::from(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, x INTEGER, pad BLOB);
         INSERT INTO t VALUES(1, 1, zeroblob(10)), (2, 2, zeroblob(10)), (3, 3, zeroblob(10));\n",
    );
    for n in 470..510 {
        script.push_str(&format!(
            "UPDATE t SET pad = zeroblob(4090) || x'aa' WHERE id = 2;
             UPDATE t SET pad = zeroblob({n}) || x'bb', x = {n} WHERE id = 2;
             PRAGMA integrity_check;
             PRAGMA freelist_count;
             SELECT id, x, length(pad), hex(substr(pad, -1)) FROM t ORDER BY id;\n"
        ));
    }
    check_script(&script, Compare::default());
}

/// CONCURRENT transactions on one connection, each rewriting several large rows, while a
/// second connection commits other rows of the same table first, so that each commit is
/// rebased and replays its logged records (concurrent.rs C5, C7). A record buffer handed on
/// while its log still needs it would replay another row's bytes. Compared with SQLite
/// running the same transactions one after the other, the other connection's first.
#[test]
fn concurrent_rewrites_replayed_after_other_commits_match_sqlite() {
    let dir = common::TempDir::new("row_rewrites");
    let db = parlite::Database::open(dir.join("c.db").to_str().expect("path")).expect("open");
    let c1 = db.connect().expect("c1");
    let c2 = db.connect().expect("c2");
    let s = rusqlite::Connection::open_in_memory().expect("sqlite");
    c1.execute_batch(SETUP).expect("setup");
    s.execute_batch(SETUP).expect("sqlite setup");
    let mut r = Rng(77);
    for round in 0..40 {
        // c1's rows are the even ones of the setup's 40, c2's the odd ones (no conflict).
        let row = |r: &mut Rng, odd: u64| (3 * (1 + 2 * r.below(20) + odd) as i64) - 60;
        let mut mine = String::new();
        for _ in 0..1 + round % 3 {
            mine.push_str(&format!(
                "UPDATE t SET x = {}, pad = zeroblob({}) || x'{:02x}' WHERE id = {};\n",
                int(&mut r),
                pad_len(&mut r),
                r.below(256),
                row(&mut r, 0)
            ));
            mine.push_str(&format!(
                "UPDATE t SET x = {} WHERE id = {};\n",
                int(&mut r),
                row(&mut r, 0)
            ));
        }
        let theirs = format!(
            "UPDATE t SET x = {}, note = 'c2' WHERE id = {};",
            int(&mut r),
            row(&mut r, 1)
        );
        c1.execute_batch("BEGIN CONCURRENT").expect("begin c1");
        c1.execute_batch(&mine).expect("c1 updates");
        c2.execute_batch("BEGIN CONCURRENT").expect("begin c2");
        c2.execute_batch(&theirs).expect("c2 update");
        c2.execute_batch("COMMIT").expect("c2 commit");
        c1.execute_batch("COMMIT").expect("c1 commit");
        s.execute_batch(&theirs).expect("sqlite theirs");
        s.execute_batch(&format!("BEGIN; {mine} COMMIT;"))
            .expect("sqlite mine");
    }
    // Replayed, not only carried over by pages: both rewrite the entries of index tx's one
    // leaf.
    let st = db.stats();
    let replayed = st.concurrent_commits - st.concurrent_fast_commits - st.concurrent_page_rebases;
    assert!(replayed >= 20, "{st:?}");
    for q in CHECK.split(";\n").map(str::trim).filter(|q| !q.is_empty()) {
        assert_eq!(run_parlite(&c1, q), run_sqlite(&s, q), "{q}");
    }
}

/// Rows whose BLOBs share a length, rewritten by key one after another: each row's BLOB is
/// decoded into the buffer the previous row's had (`decode_for_write`), so a buffer kept
/// with the previous row's bytes would write them back into this row. A DELETE, a
/// RETURNING and an index lookup by `x` read rows in between.
#[test]
fn rows_sharing_a_blob_length_rewritten_in_turn_match_sqlite() {
    let mut script = String::from(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, x INTEGER UNIQUE, pad BLOB);
         WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 30)
           INSERT INTO t SELECT i, i, CAST(printf('%.*c', 2000, char(64 + i)) AS BLOB) FROM s;
         CREATE TABLE snap AS SELECT id, pad FROM t;\n",
    );
    let mut r = Rng(5);
    for round in 0..120 {
        let id = 1 + r.below(30);
        script.push_str(&match round % 10 {
            7 => format!("DELETE FROM t WHERE id = {id} RETURNING id, length(pad);\n"),
            8 => {
                format!("UPDATE t SET x = -x WHERE x = {id} RETURNING id, hex(substr(pad, -2));\n")
            }
            _ => format!("UPDATE t SET x = x + 100 WHERE id = {id};\n"),
        });
    }
    script.push_str(
        "SELECT t.id, x, length(t.pad), t.pad = snap.pad FROM t JOIN snap USING(id) ORDER BY id;
         PRAGMA integrity_check;\n",
    );
    check_script(&script, Compare::default());
}

/// Rows rewritten with values of every storage class, encoded straight into the old cell
/// when the new record keeps the cell's size (btree `insert::Payload::Values`, txn.rs
/// `Txn::table_insert_values`) and into a buffer otherwise: a value swapped for another of
/// the same encoded size (an integer of the same byte width, a text for a blob of its
/// length, one real for another), or of another size. One table has 130 columns, so its
/// records' headers take 131 bytes and their length a two-byte varint, and rows are
/// viewed as more values than the 16 kept on the stack (sql txnstore.rs `with_refs`).
#[test]
fn rows_rewritten_with_every_value_type_match_sqlite() {
    let wide_cols: Vec<String> = (0..128).map(|i| format!("c{i}")).collect();
    let mut script = format!(
        "CREATE TABLE n(id INTEGER PRIMARY KEY, a, b INTEGER, c REAL, d TEXT, e BLOB, pad BLOB);
         CREATE TABLE w(id INTEGER PRIMARY KEY, {});
         WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 12)
           INSERT INTO n SELECT i, i, i * 1000, i / 4.0, printf('t%03d', i), x'00ff', zeroblob(i * 300) FROM s;
         WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 6)
           INSERT INTO w(id, c0, c1, c127) SELECT i, i, 'x', zeroblob(i * 100) FROM s;\n",
        wide_cols.join(", ")
    );
    let mut r = Rng(11);
    let value = |r: &mut Rng| -> String {
        match r.below(12) {
            0 => "NULL".into(),
            1 => r.below(2).to_string(),
            2 => (r.below(200) as i64 - 100).to_string(),
            3 => (1000 + r.below(30_000)).to_string(),
            4 => ((1i64 << 40) + r.below(1000) as i64).to_string(),
            5 => (r.next() as i64).to_string(),
            6 => format!("{}.5", r.below(1000) as i64 - 500),
            7 => format!("'t{:03}'", r.below(1000)),
            8 => format!("x'{:04x}'", r.below(65536)),
            9 => format!("'{}'", "y".repeat(60 + r.below(10) as usize)),
            10 => format!("zeroblob({})", r.below(5000)),
            _ => format!("printf('%.*c', {}, 'z')", 3000 + r.below(1200)),
        }
    };
    for round in 0..400 {
        let stmt = match round % 5 {
            0..=2 => {
                let col = ["a", "b", "c", "d", "e", "pad"][r.below(6) as usize];
                let v = value(&mut r);
                format!("UPDATE n SET {col} = {v} WHERE id = {}", 1 + r.below(12))
            }
            3 => {
                let col = &wide_cols[r.below(128) as usize];
                let v = value(&mut r);
                format!("UPDATE w SET {col} = {v} WHERE id = {}", 1 + r.below(6))
            }
            _ => format!(
                "UPDATE n SET b = {}, d = {} WHERE id = {}",
                value(&mut r),
                value(&mut r),
                1 + r.below(12)
            ),
        };
        script.push_str(&stmt);
        script.push_str(";\n");
        if round % 40 == 39 {
            script.push_str(
                "SELECT id, a, typeof(a), b, typeof(b), c, typeof(c), d, typeof(d), hex(e),
                   length(pad), hex(substr(pad, -2)) FROM n ORDER BY id;
                 SELECT * FROM w ORDER BY id;
                 PRAGMA integrity_check;\n",
            );
        }
    }
    check_script(&script, Compare::default());
}
