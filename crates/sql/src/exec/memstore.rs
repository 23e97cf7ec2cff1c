//! A model `Store` kept in ordinary collections: the oracle the executor's tests run
//! against, independent of the B-tree code.
//!
//! Invariants: every tree is a sorted `Vec`/`BTreeMap`; savepoints snapshot the whole
//! state (cheap at test sizes), so rollback is exact by construction.

use super::store::{key_in_bounds, KeyIter, KeyOrder, Row, RowIter, Store};
use crate::value::{Result, SqlError, Value};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

#[derive(Clone, Default)]
struct State {
    tables: HashMap<u32, BTreeMap<i64, Row>>,
    indexes: HashMap<u32, Vec<Row>>,
    next_root: u32,
    schema_cookie: u32,
    user_version: u32,
}

pub struct MemStore {
    state: RefCell<State>,
    savepoints: RefCell<Vec<State>>,
}

impl Default for MemStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemStore {
    pub fn new() -> Self {
        let mut st = State {
            next_root: 2,
            ..State::default()
        };
        st.tables.insert(1, BTreeMap::new());
        MemStore {
            state: RefCell::new(st),
            savepoints: RefCell::new(Vec::new()),
        }
    }
}

fn missing(root: u32) -> SqlError {
    SqlError::msg(format!(
        "database disk image is malformed (no tree at page {root})"
    ))
}

impl Store for MemStore {
    fn create_table_btree(&self) -> Result<u32> {
        let mut st = self.state.borrow_mut();
        let r = st.next_root;
        st.next_root += 1;
        st.tables.insert(r, BTreeMap::new());
        Ok(r)
    }
    fn create_index_btree(&self) -> Result<u32> {
        let mut st = self.state.borrow_mut();
        let r = st.next_root;
        st.next_root += 1;
        st.indexes.insert(r, Vec::new());
        Ok(r)
    }
    fn drop_btree(&self, root: u32) -> Result<()> {
        let mut st = self.state.borrow_mut();
        st.tables.remove(&root);
        st.indexes.remove(&root);
        Ok(())
    }
    fn clear_btree(&self, root: u32) -> Result<()> {
        let mut st = self.state.borrow_mut();
        if let Some(t) = st.tables.get_mut(&root) {
            t.clear();
        }
        if let Some(i) = st.indexes.get_mut(&root) {
            i.clear();
        }
        Ok(())
    }
    fn table_range(
        &self,
        root: u32,
        lo: Bound<i64>,
        hi: Bound<i64>,
        reverse: bool,
    ) -> Result<RowIter> {
        let st = self.state.borrow();
        let t = st.tables.get(&root).ok_or_else(|| missing(root))?;
        if let (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) =
            (lo, hi)
        {
            if a > b {
                return Ok(Box::new(std::iter::empty()));
            }
        }
        let mut rows: Vec<Result<(i64, Row)>> = t
            .range((lo, hi))
            .map(|(k, v)| Ok((*k, v.clone())))
            .collect();
        if reverse {
            rows.reverse();
        }
        Ok(Box::new(rows.into_iter()))
    }
    fn table_get(&self, root: u32, rowid: i64) -> Result<Option<Row>> {
        let st = self.state.borrow();
        Ok(st
            .tables
            .get(&root)
            .ok_or_else(|| missing(root))?
            .get(&rowid)
            .cloned())
    }
    fn table_max_rowid(&self, root: u32) -> Result<Option<i64>> {
        let st = self.state.borrow();
        Ok(st
            .tables
            .get(&root)
            .ok_or_else(|| missing(root))?
            .keys()
            .next_back()
            .copied())
    }
    fn table_insert(&self, root: u32, rowid: i64, row: &[Value]) -> Result<()> {
        let mut st = self.state.borrow_mut();
        st.tables
            .get_mut(&root)
            .ok_or_else(|| missing(root))?
            .insert(rowid, row.to_vec());
        Ok(())
    }
    fn table_delete(&self, root: u32, rowid: i64) -> Result<bool> {
        let mut st = self.state.borrow_mut();
        Ok(st
            .tables
            .get_mut(&root)
            .ok_or_else(|| missing(root))?
            .remove(&rowid)
            .is_some())
    }
    fn index_insert(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<()> {
        let mut st = self.state.borrow_mut();
        let idx = st.indexes.get_mut(&root).ok_or_else(|| missing(root))?;
        let full = |a: &Row| full_compare(order, a, key);
        match idx.binary_search_by(full) {
            Ok(p) => idx[p] = key.to_vec(),
            Err(p) => idx.insert(p, key.to_vec()),
        }
        Ok(())
    }
    fn index_delete(&self, root: u32, key: &[Value], order: &KeyOrder) -> Result<bool> {
        let mut st = self.state.borrow_mut();
        let idx = st.indexes.get_mut(&root).ok_or_else(|| missing(root))?;
        // Like storage, the entry comparing equal over the probe's fields: a WITHOUT ROWID
        // row is deleted by its PRIMARY KEY alone.
        match idx.binary_search_by(|a| order.compare(a, key)) {
            Ok(p) => {
                idx.remove(p);
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }
    fn index_range(
        &self,
        root: u32,
        order: &KeyOrder,
        lo: Bound<Row>,
        hi: Bound<Row>,
        reverse: bool,
    ) -> Result<KeyIter> {
        let st = self.state.borrow();
        let idx = st.indexes.get(&root).ok_or_else(|| missing(root))?;
        let mut keys: Vec<Result<Row>> = idx
            .iter()
            .filter(|k| key_in_bounds(order, k, &lo, &hi))
            .map(|k| Ok(k.clone()))
            .collect();
        if reverse {
            keys.reverse();
        }
        Ok(Box::new(keys.into_iter()))
    }
    fn schema_cookie(&self) -> Result<u32> {
        Ok(self.state.borrow().schema_cookie)
    }
    fn set_schema_cookie(&self, v: u32) -> Result<()> {
        self.state.borrow_mut().schema_cookie = v;
        Ok(())
    }
    fn user_version(&self) -> Result<u32> {
        Ok(self.state.borrow().user_version)
    }
    fn set_user_version(&self, v: u32) -> Result<()> {
        self.state.borrow_mut().user_version = v;
        Ok(())
    }
    fn savepoint(&self) -> Result<u32> {
        let snap = self.state.borrow().clone();
        let mut sps = self.savepoints.borrow_mut();
        sps.push(snap);
        Ok(sps.len() as u32)
    }
    fn rollback_to(&self, sp: u32) -> Result<()> {
        let sps = self.savepoints.borrow();
        let snap = sps
            .get(sp as usize - 1)
            .cloned()
            .ok_or_else(|| SqlError::msg("no such savepoint"))?;
        drop(sps);
        *self.state.borrow_mut() = snap;
        Ok(())
    }
    fn release(&self, sp: u32) -> Result<()> {
        self.savepoints.borrow_mut().truncate(sp as usize - 1);
        Ok(())
    }
}

/// Full-key comparison: all fields, including the trailing rowid.
fn full_compare(order: &KeyOrder, a: &[Value], b: &[Value]) -> std::cmp::Ordering {
    order.compare(a, b).then(a.len().cmp(&b.len()))
}
