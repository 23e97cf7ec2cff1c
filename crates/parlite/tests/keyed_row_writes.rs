//! UPDATE and DELETE of rows found by key start their write at the leaf the lookup or
//! the previous write found (storage `LeafHint`: `Cursor::hint_write`, `Txn::table_delete`)
//! instead of descending again. These mixes check the shortcut against SQLite where a
//! stale leaf would show: rows that grow until their leaf splits, shrink or vanish until
//! it merges, rows moved to another rowid, deletes walking a rowid range, and triggers
//! that write the same table between a row's lookup and its write. Long texts keep few
//! rows per leaf, so splits and merges are frequent. Everything runs inside one
//! transaction per mix, where the hints live, and is then read back through the table
//! and each index and checked with `PRAGMA integrity_check`.

mod common;

use common::{check_script, Compare, Rng};

/// The draws this file's seeded mixes use, beside `common::Rng`'s.
impl Rng {
    /// A text length: mostly a few hundred bytes, so a 4 KiB leaf holds a handful of rows.
    fn len(&mut self) -> u64 {
        match self.below(10) {
            0 => 0,
            1 => 1200 + self.below(800),
            _ => self.below(500),
        }
    }
}

const SETUP: &str = "
CREATE TABLE t(a INTEGER PRIMARY KEY, u INT UNIQUE, b INT, c TEXT);
CREATE INDEX tb ON t(b);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 300)
  INSERT INTO t SELECT i * 2, 10000 - i * 3, i % 13, printf('%.*c', (i * 37) % 400, 'r') FROM s;
";

const CHECK: &str = "
PRAGMA integrity_check;
SELECT a, u, b, length(c), substr(c, 1, 3) FROM t ORDER BY a;
SELECT u, a FROM t INDEXED BY sqlite_autoindex_t_1 WHERE u > -1000000 ORDER BY u;
SELECT b, a FROM t INDEXED BY tb WHERE b > -1000000 ORDER BY b, a;
SELECT count(*), total(a), total(u), total(b), total(length(c)) FROM t;
";

/// One keyed (or, when `ranges`, sometimes ranged) write; both engines run the same text.
fn statement(r: &mut Rng, ranges: bool) -> String {
    let a = 2 * (1 + r.below(330));
    let u = 10000 - 3 * (1 + r.below(330));
    let (len, ch) = (r.len(), ["x", "y", "z"][r.below(3) as usize]);
    match r.below(11) {
        0 | 1 => format!("UPDATE t SET c = printf('%.*c', {len}, '{ch}') WHERE a = {a}"),
        2 => format!("UPDATE t SET c = printf('%.*c', {len}, '{ch}'), b = b + 1 WHERE u = {u}"),
        // A rewrite of the same size.
        3 => format!("UPDATE t SET b = b WHERE rowid = {a}"),
        4 => format!("DELETE FROM t WHERE a = {a}"),
        5 => format!("DELETE FROM t WHERE u = {u} RETURNING a"),
        6 if ranges => format!(
            "DELETE FROM t WHERE a BETWEEN {a} AND {}",
            a + 2 * r.below(6)
        ),
        6 => format!("DELETE FROM t WHERE rowid = {a}"),
        7 => format!(
            "INSERT OR IGNORE INTO t VALUES({}, {}, {}, printf('%.*c', {len}, 'i'))",
            a + 1,
            u + 1,
            r.below(13)
        ),
        // The row moves to another rowid: deleted here, inserted there.
        8 => format!("UPDATE OR IGNORE t SET a = a + 1 WHERE a = {a}"),
        9 => format!("UPDATE OR REPLACE t SET u = {} WHERE a = {a}", u - 3),
        _ => "SELECT changes(), total_changes()".to_string(),
    }
}

fn run(seed: u64, triggers: &str) {
    // A trigger changing a row that the same multi-row DELETE visits later is left out:
    // parlite then hands the trigger the row as the statement first read it, SQLite as
    // it is when its turn comes (a difference of the DELETE's row collection, not of the
    // write position).
    let ranges = triggers.is_empty();
    let mut r = Rng(seed);
    let mut script = format!("{SETUP}{triggers}BEGIN;\n");
    for _ in 0..400 {
        script.push_str(&statement(&mut r, ranges));
        script.push_str(";\n");
    }
    script.push_str("COMMIT;\n");
    script.push_str(CHECK);
    check_script(&script, Compare::default());
}

#[test]
fn keyed_updates_and_deletes_match_sqlite() {
    for seed in 1..=4 {
        run(seed, "");
    }
}

/// The triggers change the table after the UPDATE or DELETE looked its row up and before
/// it writes it: neighbours grow (splitting the leaf), vanish (merging it) or appear.
#[test]
fn keyed_writes_after_triggers_changed_the_table_match_sqlite() {
    let triggers = "
CREATE TRIGGER grow BEFORE UPDATE ON t WHEN new.b % 3 = 0 BEGIN
  UPDATE t SET c = c || printf('%.*c', 700, 'g') WHERE a = old.a + 2;
  DELETE FROM t WHERE a = old.a - 2;
END;
CREATE TRIGGER fill BEFORE DELETE ON t WHEN old.b % 4 = 1 BEGIN
  INSERT OR REPLACE INTO t VALUES(old.a + 1, NULL, 99, printf('%.*c', 900, 'f'));
  UPDATE t SET c = '' WHERE a = old.a + 4;
END;
";
    for seed in 11..=14 {
        run(seed, triggers);
    }
}
