//! The executor over two stores: the B-tree store (`TxnStore` over a storage transaction)
//! and the model store (`MemStore`, plain collections). Random statements must leave both
//! with the same rows, and every query must return the same answer; a failure prints the
//! seed and statement to replay.

use parlite_sql::exec::memstore::MemStore;
use parlite_sql::exec::store::Store;
use parlite_sql::exec::txnstore::TxnStore;
use parlite_sql::exec::{load_schema, ConnState, Engine};
use parlite_sql::parse::parse_first;
use parlite_sql::schema::Schema;
use parlite_sql::value::Value;
use rand::{Rng, SeedableRng};
use std::time::Duration;

struct Db<'a> {
    store: &'a dyn Store,
    schema: Schema,
    state: ConnState,
}

impl<'a> Db<'a> {
    fn new(store: &'a dyn Store) -> Self {
        let schema = load_schema(store).expect("schema");
        Db {
            store,
            schema,
            state: ConnState::default(),
        }
    }

    fn run(&mut self, sql: &str) -> Result<Vec<Vec<Value>>, String> {
        let p = parse_first(sql).map_err(|e| e.message)?.ok_or("empty")?;
        let sp = self.store.savepoint().map_err(|e| e.to_string())?;
        let mut e = Engine::new(self.store, &mut self.schema, &[], &self.state);
        let r = e.execute(&p.stmt).map_err(|e| e.to_string());
        if r.is_err() {
            self.store.rollback_to(sp).map_err(|e| e.to_string())?;
            self.schema = load_schema(self.store).map_err(|e| e.to_string())?;
        }
        self.store.release(sp).map_err(|e| e.to_string())?;
        r
    }
}

#[test]
fn btree_store_matches_model_store() {
    let db = parlite_storage::Database::open_in_memory(Default::default()).expect("db");
    let txn = db.begin_write(Duration::from_secs(1)).expect("txn");
    let real = TxnStore::new(txn.clone());
    let model = MemStore::new();
    let mut a = Db::new(&real);
    let mut b = Db::new(&model);
    let setup = [
        "CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT COLLATE NOCASE, v INT, w REAL, UNIQUE(k, v))",
        "CREATE INDEX t_v ON t(v DESC, w)",
        "CREATE INDEX t_w ON t(w) WHERE w > 0",
    ];
    for s in setup {
        assert_eq!(a.run(s), b.run(s), "{s}");
    }
    let seed = 0x5eed_u64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let words = ["a", "B", "c", "A", "b", "zz", "Zz"];
    for i in 0..1500 {
        let k = words[rng.gen_range(0..words.len())];
        let v: i64 = rng.gen_range(-5..20);
        let w: f64 = rng.gen_range(-3.0..3.0);
        let sql = match rng.gen_range(0..10) {
            0..=3 => format!("INSERT INTO t(k, v, w) VALUES('{k}', {v}, {w})"),
            4 => format!("INSERT OR REPLACE INTO t(k, v, w) VALUES('{k}', {v}, {w})"),
            5 => format!(
                "UPDATE t SET v = v + 1, w = {w} WHERE v BETWEEN {v} AND {}",
                v + 2
            ),
            6 => format!("DELETE FROM t WHERE k = '{k}' AND v < {v}"),
            7 => format!("SELECT id, k, v, w FROM t WHERE v = {v} ORDER BY id"),
            8 => format!("SELECT count(*), sum(v), min(k) FROM t WHERE w > {w}"),
            _ => format!("SELECT id FROM t WHERE k = '{k}' AND v >= {v} ORDER BY id"),
        };
        let (ra, rb) = (a.run(&sql), b.run(&sql));
        assert_eq!(ra, rb, "seed {seed:#x}, step {i}: {sql}");
    }
    let all = "SELECT id, k, v, w FROM t ORDER BY id";
    let rows = a.run(all);
    assert!(
        rows.as_ref().map_or(false, |r| r.len() > 10),
        "the workload should leave rows: {rows:?}"
    );
    assert_eq!(rows, b.run(all));
    assert_eq!(
        a.run("PRAGMA integrity_check"),
        Ok(vec![vec![Value::text("ok")]])
    );
    txn.rollback();
}
