//! Storage-level index and cursor cost: inserts N random `(text, rowid)` keys into an index
//! in one write transaction, then scans the index from first to last, on a memory database.
//! Meant for instruction counts (`valgrind --tool=callgrind`, or `perf stat -e
//! instructions` where the machine has the counter): compare two runs with different N to
//! get the cost per insert and per cursor step without the setup.
//!
//! `cargo run --release -p parlite-storage --example index_ops -- [N]`

use parlite_storage::record::{encode, ValueRef};
use parlite_storage::{BtreeKind, Database, OpenOptions, RecordCompare};
use std::sync::Arc;
use std::time::Duration;

fn main() -> parlite_storage::Result<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let db = Database::open_in_memory(OpenOptions::default())?;
    let w = db.begin_write(Duration::from_secs(5))?;
    let root = w.create_btree(BtreeKind::Index)?;
    let cmp = RecordCompare::default();
    // A fixed pseudo-random sequence (xorshift): the same keys on every run.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for rowid in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let text = format!("user{:016x}", x);
        let key = encode(&[
            ValueRef::Text(text.as_bytes()),
            ValueRef::Integer(rowid as i64),
        ]);
        w.index_insert(root, &key, &cmp)?;
    }
    let mut c = w.cursor(root, BtreeKind::Index, Some(Arc::new(cmp)))?;
    let mut steps = 0u64;
    let mut ok = c.first()?;
    let mut buf = Vec::new();
    while ok {
        c.record_into(&mut buf)?;
        steps += 1;
        ok = c.next()?;
    }
    drop(c);
    w.commit()?;
    println!("inserted={n} steps={steps}");
    Ok(())
}
