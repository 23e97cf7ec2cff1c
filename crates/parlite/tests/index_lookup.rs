//! Differential tests of the index walks that decode each row straight into the join row
//! (`Store::index_lookup_scan`) and of the cursors a statement keeps for reuse (the
//! `TxnStore` cursor pool): the same SQL through parlite and SQLite (rusqlite, bundled).

mod common;
use common::*;

fn check(script: &str) {
    check_script(script, Compare::default());
}

const SETUP: &str = "
CREATE TABLE p(id INTEGER PRIMARY KEY, k TEXT COLLATE NOCASE, r REAL, n INTEGER, t TEXT);
INSERT INTO p VALUES(1,'a',1,10,'one'),(2,'B',2.5,20,'two'),(3,'c',NULL,30,'three'),
  (4,'A',4,NULL,'four'),(5,'b',5.0,50,NULL),(6,NULL,6,60,'six'),(7,'d',-1,70,'seven');
CREATE INDEX pk ON p(k);
CREATE INDEX pn ON p(n DESC);
CREATE UNIQUE INDEX pu ON p(t);
CREATE TABLE c(x INTEGER, pid INTEGER, tag TEXT);
INSERT INTO c VALUES(1,1,'x'),(2,2,'y'),(3,2,'z'),(4,9,'w'),(5,NULL,'v'),(6,5,'u'),(7,7,'t');
CREATE INDEX cpid ON c(pid);
";

/// Joins and single-table reads through an index: collations, DESC columns, UNIQUE
/// one-key walks, REAL columns stored as integers, NULL keys, ranges and their ends.
#[test]
fn index_walks_match_sqlite() {
    check(&format!(
        "{SETUP}
SELECT c.x, p.id, p.k, p.r, typeof(p.r), p.t FROM c, p WHERE p.id = c.pid ORDER BY c.x;
SELECT c.x, p.id, p.r FROM p, c WHERE c.pid = p.id ORDER BY 1, 2;
SELECT id, k, r FROM p WHERE k = 'a' ORDER BY id;
SELECT id, k FROM p WHERE k BETWEEN 'a' AND 'b' ORDER BY id;
SELECT id, n FROM p WHERE n > 20 ORDER BY n DESC;
SELECT id, n FROM p WHERE n BETWEEN 20 AND 60 ORDER BY id;
SELECT id, r, typeof(r) FROM p WHERE n < 60 ORDER BY id;
SELECT id, t FROM p WHERE t = 'two';
SELECT id, t FROM p WHERE t = 'nothing';
SELECT count(*), sum(r), group_concat(id) FROM p WHERE n BETWEEN 10 AND 50;
SELECT p.id, c.tag FROM p LEFT JOIN c ON c.pid = p.id ORDER BY 1, 2;
SELECT a.id, b.id FROM p AS a, p AS b WHERE b.k = a.k AND a.id < b.id ORDER BY 1, 2;
SELECT x, (SELECT t FROM p WHERE p.id = c.pid) FROM c ORDER BY x;
SELECT x, (SELECT count(*) FROM p WHERE p.k = c.tag) FROM c ORDER BY x;
SELECT id FROM p WHERE n > 10 ORDER BY n LIMIT 2;
SELECT id FROM p WHERE k IN ('a', 'c') ORDER BY id;
"
    ));
}

/// Columns added after rows were written read their defaults; an INTEGER PRIMARY KEY read
/// through an index is the rowid.
#[test]
fn short_records_and_rowid_alias() {
    check(
        "
CREATE TABLE s(id INTEGER PRIMARY KEY, v INTEGER);
INSERT INTO s VALUES(1,10),(2,20),(3,30);
CREATE INDEX sv ON s(v);
ALTER TABLE s ADD COLUMN w TEXT DEFAULT 'dflt';
ALTER TABLE s ADD COLUMN z REAL DEFAULT 2;
INSERT INTO s VALUES(4,40,'given',7);
SELECT id, v, w, z, typeof(z) FROM s WHERE v >= 20 ORDER BY v;
SELECT s1.id, s2.w FROM s AS s1 JOIN s AS s2 ON s2.v = s1.v + 10 ORDER BY 1;
",
    );
}

/// A statement that writes the tree its lookups read: the kept cursors re-seek after each
/// change instead of reusing stale pages.
#[test]
fn lookups_in_statements_that_write() {
    check(&format!(
        "{SETUP}
UPDATE c SET tag = (SELECT t FROM p WHERE p.id = c.pid) WHERE pid IS NOT NULL;
SELECT * FROM c ORDER BY x;
UPDATE p SET n = (SELECT count(*) FROM p AS q WHERE q.n < p.n) WHERE n IS NOT NULL;
SELECT id, n FROM p ORDER BY id;
INSERT INTO c SELECT x + 100, pid, tag FROM c WHERE pid IN (SELECT id FROM p WHERE n >= 0);
SELECT count(*), sum(x) FROM c;
DELETE FROM c WHERE pid IN (SELECT id FROM p WHERE k = 'b');
SELECT x, pid FROM c ORDER BY x;
INSERT INTO p(id, k, n) SELECT id + 10, k, n FROM p WHERE k = 'a';
SELECT id, k, n FROM p WHERE k = 'A' ORDER BY id;
BEGIN;
DELETE FROM p WHERE n = 0;
SELECT c.x, p.id FROM c JOIN p ON p.id = c.pid ORDER BY 1;
UPDATE p SET k = 'zz' WHERE k = 'a';
SELECT id FROM p WHERE k = 'ZZ' ORDER BY id;
COMMIT;
"
    ));
}

/// A concurrent transaction's reads through kept cursors are recorded like those through
/// new ones: a row read by a later lookup of a join, changed by another commit, aborts it.
#[test]
fn concurrent_reads_through_kept_cursors_are_validated() {
    use parlite::Database;
    let db = Database::open(":memory:").expect("open");
    let c1 = db.connect().expect("c1");
    let c2 = db.connect().expect("c2");
    c1.execute_batch(
        "CREATE TABLE p(id INTEGER PRIMARY KEY, k INTEGER, v INTEGER);
         CREATE INDEX pk ON p(k);
         CREATE TABLE c(pk INTEGER);
         CREATE TABLE log(x);
         INSERT INTO p VALUES(1,10,1),(2,20,2),(3,30,3),(4,40,4);
         INSERT INTO c VALUES(10),(20),(30),(40);",
    )
    .expect("setup");
    for c in [&c1, &c2] {
        c.execute_batch("PRAGMA isolation_level = serializable")
            .expect("isolation");
    }
    c2.execute_batch("BEGIN CONCURRENT").expect("begin");
    let (mut st, _) = c2
        .prepare("SELECT sum(p.v) FROM c JOIN p ON p.k = c.pk")
        .expect("prepare")
        .expect("a statement");
    assert!(st.step().expect("step"));
    assert_eq!(st.column(0), parlite::Value::Integer(10));
    drop(st);
    c2.execute_batch("INSERT INTO log VALUES(1)")
        .expect("write");
    c1.execute_batch("UPDATE p SET v = 100 WHERE id = 3")
        .expect("update");
    let e = c2
        .execute_batch("COMMIT")
        .expect_err("read row changed: must abort");
    assert_eq!(e.extended_code, 517, "{e}");
}

/// The far end of an index walk is checked on the encoded entry by the index's comparator
/// (`IndexIter::step_rowid`): inclusive and exclusive ends, both directions, DESC and NOCASE
/// columns, keys of mixed types, multi-column prefixes, and expression indexes with their
/// ORDER BY satisfied by the walk (the sort values are then not computed).
#[test]
fn walk_ends_checked_on_encoded_keys() {
    check(&format!(
        "{SETUP}
SELECT id FROM p WHERE k > 'a' AND k < 'c' ORDER BY k, id;
SELECT id FROM p WHERE k >= 'a' AND k <= 'c' ORDER BY k DESC, id DESC;
SELECT id FROM p WHERE k < 'b' ORDER BY k DESC;
SELECT id FROM p WHERE k <= 'B' ORDER BY k;
SELECT id FROM p WHERE n > 20 AND n < 60 ORDER BY n;
SELECT id FROM p WHERE n >= 20 AND n <= 60 ORDER BY n DESC;
SELECT id FROM p WHERE n < 50 ORDER BY n DESC;
SELECT id FROM p WHERE n <= 50.0 ORDER BY n;
SELECT id FROM p WHERE n < 50.5 ORDER BY n;
SELECT id FROM p WHERE n > '20' ORDER BY id;
CREATE TABLE m(a INTEGER, b TEXT, c REAL, d);
INSERT INTO m VALUES(1,'x',1.5,NULL),(1,'y',2,'s'),(1,'Y',2.5,x'00'),(2,'x',3,4),
  (2,NULL,NULL,5.5),(3,'z',-1,'t'),(1,'x',0,'u'),(2,'y',7,NULL);
CREATE INDEX mab ON m(a, b COLLATE NOCASE DESC);
CREATE INDEX md ON m(d);
CREATE INDEX mexpr ON m(c * 2, substr(b, 1, 1));
SELECT rowid FROM m WHERE a = 1 AND b > 'x' ORDER BY rowid;
SELECT rowid FROM m WHERE a = 1 AND b >= 'x' AND b < 'z' ORDER BY rowid;
SELECT rowid FROM m WHERE a = 2 AND b <= 'Y' ORDER BY rowid;
SELECT rowid, a, b FROM m WHERE a BETWEEN 1 AND 2 ORDER BY a DESC, b, rowid;
SELECT rowid, d FROM m WHERE d < 'a' ORDER BY d;
SELECT rowid, d FROM m WHERE d > 4 ORDER BY d;
SELECT rowid, d FROM m WHERE d >= 4 AND d < x'01' ORDER BY d DESC;
SELECT rowid, c FROM m WHERE c * 2 > 1 AND c * 2 <= 6 ORDER BY c * 2;
SELECT rowid, c FROM m WHERE c * 2 >= 0 ORDER BY c * 2 DESC LIMIT 3;
SELECT rowid, c * 2, b FROM m WHERE c * 2 >= 3 ORDER BY c * 2, substr(b, 1, 1) LIMIT 4;
SELECT * FROM m WHERE c * 2 > 0 ORDER BY c * 2 LIMIT 2;
"
    ));
}

/// Rowid lookups through an index read each probed cell's rowid in place
/// (`btree::cursor::TableCells`): rowids of every varint length, negative ones (nine
/// bytes) included, on leaves and interior pages of a table several levels deep.
#[test]
fn rowid_lookups_of_every_varint_length() {
    let mut script = String::from(
        "CREATE TABLE w(k INTEGER, pad TEXT);
CREATE INDEX wk ON w(k);
BEGIN;
",
    );
    let mut rowids: Vec<i64> = vec![
        i64::MIN,
        -1,
        0,
        1,
        127,
        128,
        16_383,
        16_384,
        2_097_151,
        2_097_152,
        268_435_455,
        268_435_456,
        1 << 35,
        1 << 42,
        1 << 49,
        1 << 56,
        i64::MAX,
    ];
    // Enough neighbours for interior pages whose keys are long varints.
    for base in [127_i64, 16_383, 2_097_151, 1 << 42, i64::MAX - 600] {
        for d in 0..600 {
            rowids.push(base + d);
        }
    }
    rowids.sort_unstable();
    rowids.dedup();
    for (i, r) in rowids.iter().enumerate() {
        script.push_str(&format!(
            "INSERT INTO w(rowid, k, pad) VALUES({r}, {}, '{}');\n",
            (i * 7919) % 2003,
            "p".repeat(i % 50)
        ));
    }
    script.push_str(
        "COMMIT;
SELECT count(*), sum(rowid = (SELECT rowid FROM w AS x WHERE x.rowid = w.rowid)) FROM w;
SELECT k, rowid FROM w WHERE k BETWEEN 100 AND 140 ORDER BY k, rowid;
SELECT k, rowid FROM w WHERE k > 1990 ORDER BY k DESC, rowid DESC;
SELECT rowid, k FROM w WHERE rowid IN (-9223372036854775808, -1, 0, 127, 128, 16384, 2097152, 9223372036854775807, 5) ORDER BY rowid;
SELECT a.rowid, b.k FROM w AS a, w AS b WHERE a.k = 7 AND b.rowid = a.rowid ORDER BY 1;
",
    );
    check(&script);
}

/// Rowid lookups that decode each row into the previous row's slots
/// (`Cursor::seek_rowid_entry`, a BLOB buffer of the same length overwritten in place):
/// BLOBs of equal and of different lengths, empty BLOBs, other storage classes in the same
/// column, rows kept by an aggregate or a sorter while the walk goes on, an index over a
/// table with overflow rows, and correlated lookups by rowid.
#[test]
fn rowid_lookups_reuse_row_slots() {
    check(
        "
CREATE TABLE b(id INTEGER PRIMARY KEY, k INTEGER, v BLOB, w TEXT);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<300)
  INSERT INTO b SELECT i, i % 17,
    CASE WHEN i % 11 = 0 THEN zeroblob(i % 3) WHEN i % 13 = 0 THEN i
         WHEN i % 29 = 0 THEN x'00'
         WHEN i % 31 = 0 THEN zeroblob(5000 + i)
         ELSE substr(x'000102030405060708090a0b0c0d0e0f', 1 + i % 5, 8) END,
    CASE WHEN i % 7 = 0 THEN NULL ELSE printf('%08d', i) END FROM s;
CREATE INDEX bk ON b(k);
SELECT id, hex(v), length(v), typeof(v), w FROM b WHERE k = 3 ORDER BY id;
SELECT k, group_concat(hex(v), ','), sum(length(v)) FROM b WHERE k BETWEEN 2 AND 5 GROUP BY k;
SELECT id, hex(v) FROM b WHERE k > 12 ORDER BY v, id;
SELECT id, v = x'0102030405060708', hex(max(v)) FROM b WHERE k < 4;
SELECT b1.id, b2.id, b1.v = b2.v FROM b AS b1, b AS b2
  WHERE b2.id = b1.id + 1 AND b1.k = 9 ORDER BY 1;
SELECT id, (SELECT hex(v) FROM b AS x WHERE x.id = b.id * 2) FROM b WHERE k = 1 ORDER BY id;
SELECT count(DISTINCT v), count(v), count(*) FROM b WHERE k >= 0;
",
    );
}

/// Index walks over keys of every size, hc_mixed's scan among them: each step keeps the
/// entry's key for the cursor's re-seek (`txn::Cursor::save`, read in place for a key under
/// 128 bytes, through the cell otherwise, from overflow pages past `max_local`) and reads
/// the entry's rowid in place (`record::field` in `IndexIter::step_rowid`). Statements that
/// write the index they walk, in one transaction, re-seek from those kept keys.
#[test]
fn index_walks_over_keys_of_every_size() {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let lens = [
        0usize, 1, 15, 16, 60, 100, 118, 119, 120, 126, 127, 128, 200, 990, 1000, 1010, 3000,
    ];
    let mut script = String::from(
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB, c TEXT);
CREATE INDEX tc ON t(c);
CREATE INDEX ts ON t(substr(c,1,16));
BEGIN;
",
    );
    for a in 1..=600u64 {
        let r = next();
        let hex = format!("{:016x}", r);
        let len = lens[(r % lens.len() as u64) as usize];
        let c: String = hex.chars().cycle().take(len).collect();
        script.push_str(&format!(
            "INSERT INTO t VALUES({a}, X'{:016x}', '{c}');\n",
            next()
        ));
    }
    script.push_str("COMMIT;\n");
    for _ in 0..12 {
        let k = format!("{:016x}", next());
        let k4 = &k[..4];
        script.push_str(&format!(
            "SELECT * FROM t WHERE substr(c,1,16)>='{k}' ORDER BY substr(c,1,16) LIMIT 10;
SELECT a, length(c), substr(c,1,20) FROM t WHERE c >= '{k4}' ORDER BY c LIMIT 9;
SELECT a, length(c) FROM t WHERE c < '{k4}' ORDER BY c DESC LIMIT 5;
"
        ));
    }
    script.push_str(
        "SELECT count(*), sum(length(c)), sum(a) FROM t WHERE c >= '4' AND c < 'b';
BEGIN;
UPDATE t SET b = X'00' WHERE c >= '8' AND c < 'a';
DELETE FROM t WHERE c BETWEEN '3' AND '4';
UPDATE t SET c = c || 'y' WHERE c >= 'c';
DELETE FROM t WHERE substr(c,1,16) BETWEEN '6' AND '7';
SELECT a, hex(b), length(c) FROM t WHERE c >= '7' ORDER BY c LIMIT 20;
SELECT * FROM t WHERE substr(c,1,16) >= 'c' ORDER BY substr(c,1,16) LIMIT 10;
COMMIT;
SELECT count(*), sum(a), sum(length(c)) FROM t;
SELECT a FROM t WHERE c >= '' ORDER BY c;
PRAGMA integrity_check;
",
    );
    check(&script);
}

/// Rows read in place from their table leaf (`btree::cursor::Frame::local_table_row`):
/// payload-size varints of one, two and three bytes, payloads just under, at and over the
/// largest local payload of a 4,096-byte page (4,061 bytes: over it the row spills onto
/// overflow pages and goes the parsed way), reached by rowid lookups through an index, by
/// point lookups, by full scans and by a scan that writes the rows it walks.
#[test]
fn table_rows_read_in_place_of_every_size() {
    let mut script = String::from(
        "CREATE TABLE r(id INTEGER PRIMARY KEY, k INTEGER, v BLOB);
CREATE INDEX rk ON r(k);
BEGIN;
",
    );
    // The record is a 3-byte header, `k` (one byte) and `v`: payload = len(v) + 4 or 5.
    let lens = [
        0usize, 1, 120, 122, 123, 124, 125, 126, 127, 200, 4050, 4055, 4056, 4057, 4058, 4060,
        4070, 9000, 16370, 16378, 16379, 16380, 16381, 16390, 40000,
    ];
    for (i, len) in lens.iter().enumerate() {
        for j in 0..3 {
            let id = [1i64, 20_000, 3_000_000][j] + i as i64;
            script.push_str(&format!(
                "INSERT INTO r VALUES({id}, {}, zeroblob({len}) || X'{:02x}');\n",
                (i * 7 + j) % 11,
                i
            ));
        }
    }
    script.push_str(
        "COMMIT;
SELECT id, k, length(v), hex(substr(v, -1)) FROM r WHERE k BETWEEN 2 AND 6 ORDER BY k, id;
SELECT id, length(v) FROM r WHERE id IN (5, 20004, 3000010, 24, 3000024) ORDER BY id;
SELECT count(*), sum(length(v)), sum(k) FROM r;
SELECT id, length(v), hex(substr(v, -1)) FROM r ORDER BY id DESC;
SELECT a.id, b.id FROM r AS a, r AS b WHERE b.id = a.id + 19999 ORDER BY 1;
BEGIN;
UPDATE r SET v = v || X'ff' WHERE k >= 5;
DELETE FROM r WHERE length(v) BETWEEN 4050 AND 4060;
SELECT id, k, length(v), hex(substr(v, -1)) FROM r WHERE k >= 3 ORDER BY k DESC, id;
COMMIT;
SELECT id, length(v) FROM r ORDER BY id;
PRAGMA integrity_check;
",
    );
    check(&script);
}
