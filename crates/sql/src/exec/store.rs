//! The executor's view of storage: tables of rows keyed by rowid and indexes of keys, in
//! terms of `Value`s rather than record bytes.
//!
//! Invariants:
//! - An index key is the indexed column values followed by the rowid; keys are ordered by
//!   `KeyOrder` (per-column collation and direction, rowid last, ascending, BINARY).
//! - Range bounds on an index are key *prefixes*: a bound with k fields compares only the
//!   first k fields of each stored key (storage-api.md's seek semantics), so `Included(p)`
//!   on both ends selects every key that starts with `p`.
//! - Iterators returned here own what they need (a transaction handle or a copy), so the
//!   executor can hold several at once; callers never modify a tree while iterating it
//!   (DML collects rowids first).

use crate::collation::Collation;
use crate::value::{Result, Value};
use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

pub type Row = Vec<Value>;

/// How an index orders its keys: one entry per indexed column (the rowid follows, BINARY
/// ascending).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyOrder {
    pub columns: Vec<(Collation, bool)>,
}

impl KeyOrder {
    /// Compares two keys over the shorter one's fields (prefix semantics).
    pub fn compare(&self, a: &[Value], b: &[Value]) -> Ordering {
        for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
            let (coll, desc) = self
                .columns
                .get(i)
                .copied()
                .unwrap_or((Collation::Binary, false));
            let o = x.compare(y, coll);
            if o != Ordering::Equal {
                return if desc { o.reverse() } else { o };
            }
        }
        Ordering::Equal
    }
}

pub type RowIter = Box<dyn Iterator<Item = Result<(i64, Row)>>>;
pub type KeyIter = Box<dyn Iterator<Item = Result<Row>>>;

/// One database's B-trees as the executor uses them, inside one transaction.
pub trait Store {
    fn create_table_btree(&self) -> Result<u32>;
    fn create_index_btree(&self) -> Result<u32>;
    fn drop_btree(&self, root: u32) -> Result<()>;
    fn clear_btree(&self, root: u32) -> Result<()>;

    /// Rows with rowid in `lo..hi`, ascending (descending when `reverse`).
    fn table_range(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
    ) -> Result<RowIter>;
    fn table_get(&self, root: u32, rowid: i64) -> Result<Option<Row>>;
    /// Like `table_range`, but only the columns flagged in `needed` must hold their stored
    /// values: the others may read as NULL, and a row may end after its last needed column
    /// (callers pad short rows). Columns past the end of `needed` are not needed.
    fn table_range_cols(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
        needed: Arc<[bool]>,
    ) -> Result<RowIter> {
        let _ = needed;
        self.table_range(root, lo, hi, reverse)
    }
    /// Like `table_get`, decoding only the `needed` columns (as `table_range_cols`).
    fn table_get_cols(&self, root: u32, rowid: i64, needed: &[bool]) -> Result<Option<Row>> {
        let _ = needed;
        self.table_get(root, rowid)
    }
    fn table_max_rowid(&self, root: u32) -> Result<Option<i64>>;
    /// Inserts or replaces the row with this rowid.
    fn table_insert(&self, root: u32, rowid: i64, row: &[Value]) -> Result<()>;
    fn table_delete(&self, root: u32, rowid: i64) -> Result<bool>;

    fn index_insert(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<()>;
    fn index_delete(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<bool>;
    /// Keys between the prefix bounds, ascending (descending when `reverse`).
    fn index_range(
        &self,
        root: u32,
        order: &KeyOrder,
        lo: Bound<Row>,
        hi: Bound<Row>,
        reverse: bool,
    ) -> Result<KeyIter>;

    fn schema_cookie(&self) -> Result<u32>;
    fn set_schema_cookie(&self, v: u32) -> Result<()>;
    fn user_version(&self) -> Result<u32>;
    fn set_user_version(&self, v: u32) -> Result<()>;

    fn savepoint(&self) -> Result<u32>;
    fn rollback_to(&self, sp: u32) -> Result<()>;
    fn release(&self, sp: u32) -> Result<()>;

    /// Whether TEMP objects can be created (a connection-private temp database is attached).
    fn has_temp(&self) -> bool {
        false
    }
    /// B-trees in the temp database; their roots carry `TEMP_ROOT_BIT`.
    fn create_temp_table_btree(&self) -> Result<u32> {
        Err(crate::value::SqlError::msg(
            "TEMP objects are not available on this connection",
        ))
    }
    fn create_temp_index_btree(&self) -> Result<u32> {
        Err(crate::value::SqlError::msg(
            "TEMP objects are not available on this connection",
        ))
    }
}

/// Marks a root page as belonging to the temp database. SQLite page numbers stay far below
/// 2^31 for any database this engine can address, so the bit is free.
pub const TEMP_ROOT_BIT: u32 = 0x8000_0000;

/// Routes each tree operation to the main or the temp database by the root's temp bit;
/// header fields and savepoints are the main database's (the connection coordinates the
/// temp database's own savepoints).
pub struct RoutedStore<'a> {
    pub main: &'a dyn Store,
    pub temp: Option<&'a dyn Store>,
}

impl RoutedStore<'_> {
    fn pick(&self, root: u32) -> Result<(&dyn Store, u32)> {
        if root & TEMP_ROOT_BIT != 0 {
            match self.temp {
                Some(t) => Ok((t, root & !TEMP_ROOT_BIT)),
                None => Err(crate::value::SqlError::msg(
                    "TEMP objects are not available on this connection",
                )),
            }
        } else {
            Ok((self.main, root))
        }
    }
}

impl Store for RoutedStore<'_> {
    fn create_table_btree(&self) -> Result<u32> {
        self.main.create_table_btree()
    }
    fn create_index_btree(&self) -> Result<u32> {
        self.main.create_index_btree()
    }
    fn drop_btree(&self, root: u32) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.drop_btree(r)
    }
    fn clear_btree(&self, root: u32) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.clear_btree(r)
    }
    fn table_range(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
    ) -> Result<RowIter> {
        let (s, r) = self.pick(root)?;
        s.table_range(r, lo, hi, reverse)
    }
    fn table_get(&self, root: u32, rowid: i64) -> Result<Option<Row>> {
        let (s, r) = self.pick(root)?;
        s.table_get(r, rowid)
    }
    fn table_range_cols(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
        needed: Arc<[bool]>,
    ) -> Result<RowIter> {
        let (s, r) = self.pick(root)?;
        s.table_range_cols(r, lo, hi, reverse, needed)
    }
    fn table_get_cols(&self, root: u32, rowid: i64, needed: &[bool]) -> Result<Option<Row>> {
        let (s, r) = self.pick(root)?;
        s.table_get_cols(r, rowid, needed)
    }
    fn table_max_rowid(&self, root: u32) -> Result<Option<i64>> {
        let (s, r) = self.pick(root)?;
        s.table_max_rowid(r)
    }
    fn table_insert(&self, root: u32, rowid: i64, row: &[Value]) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.table_insert(r, rowid, row)
    }
    fn table_delete(&self, root: u32, rowid: i64) -> Result<bool> {
        let (s, r) = self.pick(root)?;
        s.table_delete(r, rowid)
    }
    fn index_insert(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<()> {
        let (s, r) = self.pick(root)?;
        s.index_insert(r, key, order)
    }
    fn index_delete(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<bool> {
        let (s, r) = self.pick(root)?;
        s.index_delete(r, key, order)
    }
    fn index_range(
        &self,
        root: u32,
        order: &KeyOrder,
        lo: Bound<Row>,
        hi: Bound<Row>,
        reverse: bool,
    ) -> Result<KeyIter> {
        let (s, r) = self.pick(root)?;
        s.index_range(r, order, lo, hi, reverse)
    }
    fn schema_cookie(&self) -> Result<u32> {
        self.main.schema_cookie()
    }
    fn set_schema_cookie(&self, v: u32) -> Result<()> {
        self.main.set_schema_cookie(v)
    }
    fn user_version(&self) -> Result<u32> {
        self.main.user_version()
    }
    fn set_user_version(&self, v: u32) -> Result<()> {
        self.main.set_user_version(v)
    }
    fn savepoint(&self) -> Result<u32> {
        self.main.savepoint()
    }
    fn rollback_to(&self, sp: u32) -> Result<()> {
        self.main.rollback_to(sp)
    }
    fn release(&self, sp: u32) -> Result<()> {
        self.main.release(sp)
    }
    fn has_temp(&self) -> bool {
        self.temp.is_some()
    }
    fn create_temp_table_btree(&self) -> Result<u32> {
        match self.temp {
            Some(t) => Ok(t.create_table_btree()? | TEMP_ROOT_BIT),
            None => Err(crate::value::SqlError::msg(
                "TEMP objects are not available on this connection",
            )),
        }
    }
    fn create_temp_index_btree(&self) -> Result<u32> {
        match self.temp {
            Some(t) => Ok(t.create_index_btree()? | TEMP_ROOT_BIT),
            None => Err(crate::value::SqlError::msg(
                "TEMP objects are not available on this connection",
            )),
        }
    }
}

/// True when `key` lies within the prefix bounds.
pub fn key_in_bounds(order: &KeyOrder, key: &[Value], lo: &Bound<Row>, hi: &Bound<Row>) -> bool {
    let lo_ok = match lo {
        Bound::Unbounded => true,
        Bound::Included(p) => order.compare(key, p) != Ordering::Less,
        Bound::Excluded(p) => order.compare(key, p) == Ordering::Greater,
    };
    let hi_ok = match hi {
        Bound::Unbounded => true,
        Bound::Included(p) => order.compare(key, p) != Ordering::Greater,
        Bound::Excluded(p) => order.compare(key, p) == Ordering::Less,
    };
    lo_ok && hi_ok
}
