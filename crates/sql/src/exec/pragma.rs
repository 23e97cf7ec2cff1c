//! PRAGMA statements (pragma.html): schema introspection, header fields, connection
//! settings, and integrity checks.
//!
//! Unknown pragmas are ignored without error, as in SQLite. Settings that belong to the
//! connection (busy_timeout, synchronous, foreign_keys) live in `ConnState`; the connection
//! layer applies them to storage, and runs `cache_size`, `page_size`, `data_version` and
//! `cache_spill` itself (`int_arg`). The settings SQLite keeps per connection are in
//! `settings.rs`.

use super::store::Row;
use super::Engine;
use crate::parse::ast::{Expr, Literal, PragmaValue, QualifiedName, UnaryOp};
use crate::schema::key;
use crate::value::{Affinity, Result, SqlError, Value};
use std::ops::Bound;

mod function;
mod integrity;
mod settings;
pub use settings::{safety_level, Settings, MAX_PAGE_COUNT};

/// Pragmas whose assignment changes only this connection (or a database-wide runtime
/// setting such as `synchronous`) and never writes the file, so they run without the
/// writer lock.
pub fn is_connection_setting(name: &str) -> bool {
    matches!(
        key(name).as_str(),
        "busy_timeout"
            | "synchronous"
            | "cache_size"
            | "foreign_keys"
            | "defer_foreign_keys"
            | "case_sensitive_like"
            | "recursive_triggers"
            | "read_uncommitted"
            | "journal_mode"
            | "locking_mode"
            | "isolation_level"
            // Read-only or connection-level in parlite (`page_size` is run by the
            // connection layer: it re-creates a blank database).
            | "data_version"
            | "page_size"
            | "cache_spill"
    ) || settings::NAMES.contains(&key(name).as_str())
}

pub fn column_names(name: &str, has_value: bool) -> Vec<String> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect();
    match key(name).as_str() {
        "table_info" => v(&["cid", "name", "type", "notnull", "dflt_value", "pk"]),
        "table_xinfo" => v(&[
            "cid",
            "name",
            "type",
            "notnull",
            "dflt_value",
            "pk",
            "hidden",
        ]),
        "index_list" => v(&["seq", "name", "unique", "origin", "partial"]),
        "index_info" => v(&["seqno", "cid", "name"]),
        "index_xinfo" => v(&["seqno", "cid", "name", "desc", "coll", "key"]),
        "database_list" => v(&["seq", "name", "file"]),
        "table_list" => v(&["schema", "name", "type", "ncol", "wr", "strict"]),
        "integrity_check" | "quick_check" => v(&[key(name).as_str()]),
        "parlite_stats" => v(&["name", "value"]),
        "wal_checkpoint" => v(&["busy", "log", "checkpointed"]),
        "foreign_key_list" => v(&[
            "id",
            "seq",
            "table",
            "from",
            "to",
            "on_update",
            "on_delete",
            "match",
        ]),
        "foreign_key_check" => v(&["table", "rowid", "parent", "fkid"]),
        "function_list" => v(&["name", "builtin", "type", "enc", "narg", "flags"]),
        "pragma_list" | "module_list" => v(&["name"]),
        "collation_list" => v(&["seq", "name"]),
        "compile_options" => v(&["compile_options"]),
        "isolation_level" if !has_value => v(&["isolation_level"]),
        // Flags and `temp_store` answer only when read; the others answer their value
        // after an assignment too.
        "query_only"
        | "ignore_check_constraints"
        | "automatic_index"
        | "trusted_schema"
        | "cell_size_check"
        | "read_uncommitted"
        | "fullfsync"
        | "checkpoint_fullfsync"
        | "count_changes"
        | "empty_result_callbacks"
        | "full_column_names"
        | "legacy_alter_table"
        | "reverse_unordered_selects"
        | "writable_schema"
        | "short_column_names"
        | "temp_store"
        | "cache_spill"
            if has_value =>
        {
            Vec::new()
        }
        n if settings::NAMES.contains(&n) => v(&[n]),
        // Read-only: an assignment reads.
        n @ ("data_version" | "cache_spill" | "page_count" | "freelist_count") => v(&[n]),
        // Never a row, but SQLite declares the column.
        n @ ("optimize" | "temp_store_directory") => v(&[n]),
        n @ ("user_version" | "schema_version" | "page_size" | "cache_size" | "synchronous"
        | "journal_mode" | "busy_timeout" | "foreign_keys" | "defer_foreign_keys"
        | "encoding" | "application_id" | "recursive_triggers" | "auto_vacuum"
        | "locking_mode") => {
            if has_value && !matches!(n, "journal_mode" | "busy_timeout" | "locking_mode") {
                Vec::new()
            } else if n == "busy_timeout" {
                v(&["timeout"])
            } else {
                v(&[n])
            }
        }
        _ => Vec::new(),
    }
}

/// `PRAGMA wal_checkpoint(MODE)`'s mode, lower-cased: `passive` (also for no argument and,
/// as SQLite, for an unknown word), `full`, `restart` or `truncate`. The connection layer
/// runs it (it needs the storage database, not a transaction: docs/log-and-recovery.md 3c).
pub fn wal_checkpoint_mode(value: Option<&PragmaValue>) -> &'static str {
    let arg = value.map(|v| match v {
        PragmaValue::Assign(e) | PragmaValue::Call(e) => pragma_arg(e),
    });
    match arg
        .map(|v| v.to_text_or_empty().to_ascii_lowercase())
        .as_deref()
    {
        Some("full") => "full",
        Some("restart") => "restart",
        Some("truncate") => "truncate",
        _ => "passive",
    }
}

/// `PRAGMA name = N`'s N as SQLite reads `cache_size`'s and `page_size`'s (an integer
/// prefix, 0 for none); None for the query form. The connection layer runs those pragmas
/// (one cache per database, shared by its connections: `parlite::CacheSetting`; a new
/// page size re-creates the database file).
pub fn int_arg(value: Option<&PragmaValue>) -> Option<i64> {
    value.map(|v| match v {
        PragmaValue::Assign(e) | PragmaValue::Call(e) => pragma_arg(e).to_i64(),
    })
}

/// `PRAGMA synchronous = X` as SQLite reads it: OFF 0, NORMAL (and any other word) 1,
/// FULL 2, EXTRA 3, a number n its low three bits after adding one, less one. None for
/// the query form.
pub fn synchronous_arg(value: Option<&PragmaValue>) -> Option<i64> {
    let v = value.map(|v| match v {
        PragmaValue::Assign(e) | PragmaValue::Call(e) => pragma_arg(e),
    })?;
    let level = (i64::from(settings::safety_level(&v, false, 1)) + 1) & 7;
    Some(level.max(1) - 1)
}

/// `PRAGMA cache_spill = X` as SQLite reads it: (the spill threshold when X is an integer,
/// pages or -KiB; whether spilling is on: X as a boolean, an integer meaning on unless 0).
/// None for the query form.
pub fn cache_spill_arg(value: Option<&PragmaValue>) -> Option<(Option<i64>, bool)> {
    let v = value.map(|v| match v {
        PragmaValue::Assign(e) | PragmaValue::Call(e) => pragma_arg(e),
    })?;
    let size = match &v {
        Value::Integer(i) => i32::try_from(*i).ok().map(i64::from),
        Value::Text(t) => t.trim().parse::<i32>().ok().map(i64::from),
        _ => None,
    };
    let on = match size {
        Some(n) => settings::safety_level(&v, true, u8::from(n != 0)) != 0,
        None => settings::boolean(&v),
    };
    Some((size, on))
}

fn pragma_arg(e: &Expr) -> Value {
    match e {
        Expr::Literal(Literal::Integer(i)) => Value::Integer(*i),
        Expr::Literal(Literal::Float { value, .. }) => Value::real(*value),
        Expr::Literal(Literal::String(s)) => Value::text(s.as_str()),
        Expr::Column { name, .. } => Value::text(name.as_str()),
        Expr::Unary(UnaryOp::Neg, inner) => match pragma_arg(inner) {
            Value::Integer(i) => Value::Integer(-i),
            Value::Real(r) => Value::real(-r),
            v => v,
        },
        _ => Value::Null,
    }
}

impl Engine<'_> {
    pub fn pragma(
        &mut self,
        name: &QualifiedName,
        value: Option<&PragmaValue>,
    ) -> Result<Vec<Row>> {
        let arg = value.map(|v| match v {
            PragmaValue::Assign(e) | PragmaValue::Call(e) => pragma_arg(e),
        });
        let one = |v: Value| Ok(vec![vec![v]]);
        if name
            .schema
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case("temp"))
        {
            // SQLite opens the TEMP database for a pragma naming it: database_list shows it.
            self.schema.temp_shown.set(true);
        }
        if let Some(s) = &name.schema {
            if !s.eq_ignore_ascii_case("main") && !s.eq_ignore_ascii_case("temp") {
                let Some((slot, _)) = self.schema.attached_db(s) else {
                    return Err(SqlError::msg(format!("unknown database {s}")));
                };
                let bits = super::store::attached_bits(slot);
                match key(&name.name).as_str() {
                    "user_version" => {
                        return match arg {
                            Some(v) => {
                                self.store
                                    .set_user_version_in(bits, header_int(&v) as u32)?;
                                Ok(Vec::new())
                            }
                            None => one(Value::Integer(i64::from(
                                self.store.user_version_in(bits)? as i32,
                            ))),
                        };
                    }
                    "table_list" => {
                        let mut rows = schema_pragma(self.schema, "table_list", arg)?;
                        rows.retain(|r| {
                            r.first()
                                .and_then(|v| v.to_text())
                                .is_some_and(|t| t.eq_ignore_ascii_case(s))
                        });
                        return Ok(rows);
                    }
                    "page_count" | "freelist_count" | "application_id" | "page_size" => {
                        return self.header_pragma(bits, &name.name, arg);
                    }
                    "schema_version" if arg.is_none() => {
                        return one(Value::Integer(i64::from(
                            self.store.schema_cookie_in(bits)?,
                        )));
                    }
                    "table_info" | "table_xinfo" | "index_list" | "index_info" | "index_xinfo"
                    | "integrity_check" | "quick_check" | "foreign_key_list"
                    | "foreign_key_check" => {
                        // Answered from the attached database's own schema.
                        let unqualified = QualifiedName {
                            schema: None,
                            name: name.name.clone(),
                        };
                        return self.in_attached(slot, |e| e.pragma(&unqualified, value));
                    }
                    _ => {}
                }
            }
        }
        let in_memory = self.schema.main_file.is_empty();
        let answer = self.state.settings.answer(
            &key(&name.name),
            arg.as_ref(),
            || Ok(i64::from(self.store.file_header_in(0)?.page_count)),
            in_memory,
        )?;
        match answer {
            settings::Answer::NotASetting => {}
            settings::Answer::Nothing => return Ok(Vec::new()),
            settings::Answer::Int(i) => return one(Value::Integer(i)),
        }
        match key(&name.name).as_str() {
            "table_info" | "table_xinfo" | "index_list" | "index_info" | "index_xinfo"
            | "table_list" | "foreign_key_list" | "function_list" | "pragma_list"
            | "module_list" | "collation_list" | "compile_options" => {
                // `main.x` / `temp.x` of a pragma about an object: that database's.
                let only = match name.schema.as_deref().map(key).as_deref() {
                    Some("main") => Some(schema_of_db(self.schema, false, arg.as_ref())),
                    Some("temp") => Some(schema_of_db(self.schema, true, arg.as_ref())),
                    _ => None,
                };
                let target = only.as_ref().unwrap_or(self.schema);
                let mut rows = match key(&name.name).as_str() {
                    "table_list" => schema_pragma(self.schema, &name.name, arg)?,
                    _ => schema_pragma(target, &name.name, arg)?,
                };
                // `main.table_list` / `temp.table_list`: that database's tables only.
                if let (Some(db), "table_list") = (&name.schema, key(&name.name).as_str()) {
                    rows.retain(|r| {
                        r.first()
                            .and_then(|v| v.to_text())
                            .is_some_and(|t| t.eq_ignore_ascii_case(db))
                    });
                }
                Ok(rows)
            }
            "foreign_key_check" => {
                let table = arg.map(|v| v.to_text_or_empty().into_owned());
                match (
                    self.foreign_key_check(table.as_deref()),
                    &name.schema,
                    &table,
                ) {
                    // `PRAGMA main.foreign_key_check(x)`: SQLite names the database.
                    (Err(_), Some(db), Some(t))
                        if self.schema.table(t).is_none() && !t.contains('.') =>
                    {
                        Err(SqlError::msg(format!("no such table: {}.{t}", key(db))))
                    }
                    (rows, _, _) => rows,
                }
            }
            "database_list" => Ok(database_list(self.schema)),
            "user_version" => match arg {
                Some(v) => {
                    self.store.set_user_version(header_int(&v) as u32)?;
                    Ok(Vec::new())
                }
                None => one(Value::Integer(i64::from(self.store.user_version()? as i32))),
            },
            "schema_version" => match arg {
                Some(_) => Err(SqlError::msg("setting schema_version is not supported")),
                None => one(Value::Integer(i64::from(self.store.schema_cookie()?))),
            },
            "page_count" | "freelist_count" | "application_id" | "page_size" => {
                self.header_pragma(0, &name.name, arg)
            }
            "synchronous" => match synchronous_arg(value) {
                Some(level) => {
                    self.state.synchronous.set(level);
                    Ok(Vec::new())
                }
                None => one(Value::Integer(self.state.synchronous.get())),
            },
            // parlite: serializable (default) | snapshot, for this connection's concurrent
            // transactions (docs/concurrency.md, "SQL").
            "isolation_level" => match arg {
                Some(v) => match v.to_text_or_empty().to_ascii_lowercase().as_str() {
                    "serializable" => {
                        self.state.isolation_snapshot.set(false);
                        Ok(Vec::new())
                    }
                    "snapshot" => {
                        self.state.isolation_snapshot.set(true);
                        Ok(Vec::new())
                    }
                    other => Err(SqlError::msg(format!(
                        "unknown isolation level: {other} (serializable or snapshot)"
                    ))),
                },
                None => one(Value::text(if self.state.isolation_snapshot.get() {
                    "snapshot"
                } else {
                    "serializable"
                })),
            },
            "journal_mode" => one(Value::text("wal")),
            "locking_mode" => one(Value::text("normal")),
            "encoding" => match arg {
                // A new database's encoding cannot be chosen (parlite writes UTF-8): a
                // known name is accepted and ignored, as SQLite ignores it once the
                // database exists.
                Some(v) => {
                    let name = v.to_text_or_empty();
                    let known = ["UTF-8", "UTF8", "UTF-16le", "UTF-16be", "UTF-16", "UTF16"]
                        .iter()
                        .any(|n| n.eq_ignore_ascii_case(&name));
                    match known {
                        true => Ok(Vec::new()),
                        false => Err(SqlError::msg(format!("unsupported encoding: {name}"))),
                    }
                }
                None => one(Value::text("UTF-8")),
            },
            "busy_timeout" => {
                if let Some(v) = arg {
                    self.state.busy_timeout_ms.set(v.to_i64().max(0));
                }
                one(Value::Integer(self.state.busy_timeout_ms.get()))
            }
            "foreign_keys" => match arg {
                Some(v) => {
                    self.state.foreign_keys.set(settings::boolean(&v));
                    Ok(Vec::new())
                }
                None => one(Value::Integer(i64::from(self.state.foreign_keys.get()))),
            },
            "defer_foreign_keys" => match arg {
                Some(v) => {
                    self.state.defer_foreign_keys.set(settings::boolean(&v));
                    Ok(Vec::new())
                }
                None => one(Value::Integer(i64::from(
                    self.state.defer_foreign_keys.get(),
                ))),
            },
            "case_sensitive_like" => {
                if let Some(v) = arg {
                    self.state.case_sensitive_like.set(settings::boolean(&v));
                }
                Ok(Vec::new())
            }
            "recursive_triggers" => match arg {
                Some(v) => {
                    self.state.recursive_triggers.set(settings::boolean(&v));
                    Ok(Vec::new())
                }
                None => one(Value::Integer(i64::from(
                    self.state.recursive_triggers.get(),
                ))),
            },
            "auto_vacuum" => match arg {
                Some(_) => Ok(Vec::new()),
                None => one(Value::Integer(0)),
            },
            "integrity_check" | "quick_check" => {
                let (max_errors, only) = self.integrity_arg(name.schema.as_deref(), arg)?;
                let probe = key(&name.name) == "integrity_check";
                let mut problems = self.integrity_problems(only.as_deref(), probe)?;
                problems.truncate(max_errors);
                if problems.is_empty() {
                    one(Value::text("ok"))
                } else {
                    Ok(problems.into_iter().map(|p| vec![Value::text(p)]).collect())
                }
            }
            _ => Ok(Vec::new()),
        }
    }

    /// `page_count`, `freelist_count`, `application_id` and `page_size` of the database whose
    /// root bits are `bits`, read from its file header as SQLite reports them. Setting
    /// `application_id` writes the header; setting `page_size` is accepted and ignored (a
    /// database keeps the page size it was created with, as SQLite's WAL mode does).
    fn header_pragma(&mut self, bits: u32, name: &str, arg: Option<Value>) -> Result<Vec<Row>> {
        let pragma = key(name);
        if let Some(v) = arg {
            match pragma.as_str() {
                "application_id" => {
                    self.store
                        .set_application_id_in(bits, header_int(&v) as u32)?;
                }
                // Read-only: the assignment reads.
                "page_count" | "freelist_count" => return self.header_pragma(bits, name, None),
                _ => {}
            }
            return Ok(Vec::new());
        }
        let h = self.store.file_header_in(bits)?;
        let value = match pragma.as_str() {
            "page_count" => i64::from(h.page_count),
            "freelist_count" => i64::from(h.freelist_count),
            // SQLite reads the id as a signed 32-bit integer.
            "application_id" => i64::from(h.application_id as i32),
            _ => i64::from(h.page_size),
        };
        Ok(vec![vec![Value::Integer(value)]])
    }

    /// `integrity_check(N)` / `integrity_check(TABLE)` as SQLite reads the argument: an
    /// unquoted 32-bit integer is the most errors reported (100 when absent or not
    /// positive), anything else names the one table to check ("no such table: [db.]x" when there is none).
    fn integrity_arg(
        &self,
        db: Option<&str>,
        arg: Option<Value>,
    ) -> Result<(usize, Option<String>)> {
        const ERROR_MAX: usize = 100;
        let Some(arg) = arg else {
            return Ok((ERROR_MAX, None));
        };
        // An unquoted integer only: SQLite reads the token, quotes included.
        if let Value::Integer(n) = arg {
            if let Ok(n) = i32::try_from(n) {
                return Ok((
                    usize::try_from(n)
                        .ok()
                        .filter(|n| *n > 0)
                        .unwrap_or(ERROR_MAX),
                    None,
                ));
            }
        }
        let text = arg.to_text_or_empty();
        let k = key(&text);
        if self.schema.tables.contains_key(&k) || self.schema.views.contains_key(&k) {
            return Ok((ERROR_MAX, Some(k)));
        }
        Err(SqlError::msg(match db {
            Some(db) => format!("no such table: {}.{text}", key(db)),
            None => format!("no such table: {text}"),
        }))
    }

    /// Cross-checks every table (or the table `only`) against its indexes (SQLite's
    /// wording for the findings).
    /// `probe` false is quick_check's: each index's entries are counted, but not looked
    /// up row by row.
    fn integrity_problems(&self, only: Option<&str>, probe: bool) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let exec = self.exec();
        let mut tables: Vec<_> = self
            .schema
            .tables
            .values()
            .filter(|t| only.is_none_or(|k| key(&t.name) == k))
            .cloned()
            .collect();
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        for t in tables {
            if t.without_rowid {
                self.integrity_problems_wr(&t, probe, &mut out)?;
                continue;
            }
            let defaults = exec.column_defaults(&t);
            let ixs = self.schema.table_indexes(&t);
            let mut ix_exprs = std::collections::HashMap::new();
            // A partial index's predicate, bound against the table's row (rowid last).
            let mut preds = Vec::with_capacity(ixs.len());
            for ix in &ixs {
                let mut b = crate::plan::Binder::new(self.schema);
                ix_exprs.insert(
                    ix.name.clone(),
                    super::dml::bind_index_exprs(&mut b, &t, ix)?,
                );
                preds.push(match &ix.partial {
                    Some(p) => Some(b.bind_for_table(&t, None, p)?),
                    None => None,
                });
            }
            // The merge checks full indexes only; a table with a partial index takes the
            // per-row probes, which check it too.
            if probe && preds.iter().all(Option::is_none) {
                if let Some(problems) = self.merged_index_check(&t, &ixs, &ix_exprs, &defaults)? {
                    out.extend(problems);
                    continue;
                }
            }
            let mut probes = Vec::with_capacity(ixs.len());
            for ix in &ixs {
                let order = super::eval::Exec::key_order(ix);
                probes.push(self.store.index_probe(ix.root, &order)?);
            }
            let mut nrows = 0usize;
            for r in self
                .store
                .table_range(t.root, Bound::Unbounded, Bound::Unbounded, false)?
            {
                let (rowid, vals) = r?;
                nrows += 1;
                let full = exec.table_row(&t, rowid, vals, &defaults)?;
                for (i, c) in t.columns.iter().enumerate() {
                    if c.not_null.is_some() && full[i].is_null() && Some(i) != t.rowid_alias {
                        out.push(format!("NULL value in {}.{}", t.name, c.name));
                    }
                }
                for (i, (ix, index_probe)) in ixs.iter().zip(probes.iter_mut()).enumerate() {
                    if !probe {
                        break;
                    }
                    if let Some(p) = &preds[i] {
                        if !exec.index_where_is_true(p, &super::eval::Frame::new(&full, None))? {
                            continue;
                        }
                    }
                    let exprs = &ix_exprs[&ix.name];
                    let k =
                        super::dml::index_key(&exec, ix, exprs, &full[..t.columns.len()], rowid)?;
                    if !index_probe.contains(&k)? {
                        out.push(format!("row {nrows} missing from index {}", ix.name));
                    }
                }
            }
            // SQLite (3.50) counts the entries of full indexes only: an entry a partial
            // index holds for a row its predicate no longer admits is not reported.
            for ix in ixs.iter().filter(|ix| ix.partial.is_none()) {
                let order = super::eval::Exec::key_order(ix);
                let n = self.store.index_entry_count(ix.root, &order)?;
                if n != nrows {
                    out.push(format!("wrong # of entries in index {}", ix.name));
                }
            }
        }
        Ok(out)
    }
}

impl Engine<'_> {
    /// `integrity_problems` for a WITHOUT ROWID table: NOT NULL columns, and each secondary
    /// index holding exactly one entry (terms, then the PRIMARY KEY suffix) per row.
    fn integrity_problems_wr(
        &self,
        t: &std::sync::Arc<crate::schema::Table>,
        probe: bool,
        out: &mut Vec<String>,
    ) -> Result<()> {
        let exec = self.exec();
        let ixs: Vec<_> = self
            .schema
            .table_indexes(t)
            .into_iter()
            .filter(|ix| ix.root != t.root && ix.root != 0)
            .collect();
        let mut ix_exprs = Vec::new();
        let mut preds = Vec::with_capacity(ixs.len());
        for ix in &ixs {
            let mut b = crate::plan::Binder::new(self.schema);
            ix_exprs.push(super::dml::bind_index_exprs(&mut b, t, ix)?);
            preds.push(match &ix.partial {
                Some(p) => Some(b.bind_for_table(t, None, p)?),
                None => None,
            });
        }
        let mut nrows = 0usize;
        for r in exec.table_rows(t, exec.column_defaults(t))? {
            let full = r?;
            nrows += 1;
            for (i, c) in t.columns.iter().enumerate() {
                if c.not_null.is_some() && full[i].is_null() {
                    out.push(format!("NULL value in {}.{}", t.name, c.name));
                }
            }
            for (i, (ix, exprs)) in ixs.iter().zip(&ix_exprs).enumerate() {
                if !probe {
                    break;
                }
                if let Some(p) = &preds[i] {
                    if !exec.index_where_is_true(p, &super::eval::Frame::new(&full, None))? {
                        continue;
                    }
                }
                let vals = &full[..t.columns.len()];
                let k = super::without_rowid::index_key_wr(&exec, t, ix, exprs, vals)?;
                let order = super::without_rowid::key_order_for(t, ix);
                let found = self
                    .store
                    .index_range(
                        ix.root,
                        &order,
                        Bound::Included(k.clone()),
                        Bound::Included(k),
                        false,
                    )?
                    .next()
                    .is_some();
                if !found {
                    out.push(format!("row {nrows} missing from index {}", ix.name));
                }
            }
        }
        // Full indexes only, as for rowid tables.
        for ix in ixs.iter().filter(|ix| ix.partial.is_none()) {
            let order = super::without_rowid::key_order_for(t, ix);
            let n = self
                .store
                .index_range(ix.root, &order, Bound::Unbounded, Bound::Unbounded, false)?
                .count();
            if n != nrows {
                out.push(format!("wrong # of entries in index {}", ix.name));
            }
        }
        Ok(())
    }
}

/// `PRAGMA database_list` (seq, name, file): main, temp once SQLite would have opened it
/// (`Schema::temp_shown`), then the
/// attached databases numbered from 2 in attach order, as SQLite numbers them.
pub fn database_list(schema: &crate::schema::Schema) -> Vec<Row> {
    let mut out = vec![vec![
        Value::Integer(0),
        Value::text("main"),
        Value::text(schema.main_file.as_str()),
    ]];
    let bit = crate::exec::store::TEMP_ROOT_BIT;
    if schema.temp_shown.get()
        || !schema.temp_views.is_empty()
        || schema.tables.values().any(|t| t.root & bit != 0)
    {
        out.push(vec![
            Value::Integer(1),
            Value::text("temp"),
            Value::text(""),
        ]);
    }
    for (i, a) in schema.attached.iter().enumerate() {
        out.push(vec![
            Value::Integer(i as i64 + 2),
            Value::text(a.name.as_str()),
            Value::text(a.file.as_str()),
        ]);
    }
    out
}

/// `PRAGMA pragma_list`: SQLite's list (3.50, without its debugging pragmas). parlite
/// accepts each one; what each means for parlite is in docs/pragmas.md.
pub const PRAGMA_LIST: &[&str] = &[
    "analysis_limit",
    "application_id",
    "auto_vacuum",
    "automatic_index",
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "case_sensitive_like",
    "cell_size_check",
    "checkpoint_fullfsync",
    "collation_list",
    "compile_options",
    "count_changes",
    "data_version",
    "database_list",
    "default_cache_size",
    "defer_foreign_keys",
    "empty_result_callbacks",
    "encoding",
    "foreign_key_check",
    "foreign_key_list",
    "foreign_keys",
    "freelist_count",
    "full_column_names",
    "fullfsync",
    "function_list",
    "hard_heap_limit",
    "ignore_check_constraints",
    "incremental_vacuum",
    "index_info",
    "index_list",
    "index_xinfo",
    "integrity_check",
    "journal_mode",
    "journal_size_limit",
    "legacy_alter_table",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "module_list",
    "optimize",
    "page_count",
    "page_size",
    "pragma_list",
    "query_only",
    "quick_check",
    "read_uncommitted",
    "recursive_triggers",
    "reverse_unordered_selects",
    "schema_version",
    "secure_delete",
    "short_column_names",
    "shrink_memory",
    "soft_heap_limit",
    "synchronous",
    "table_info",
    "table_list",
    "table_xinfo",
    "temp_store",
    "temp_store_directory",
    "threads",
    "trusted_schema",
    "user_version",
    "wal_autocheckpoint",
    "wal_checkpoint",
    "writable_schema",
];

/// SQLite's pragma virtual tables (`pragma_x`): the pragmas with result rows
/// (PragFlg_Result0 or Result1 in 3.50's list, less the debugging ones), each with whether
/// it declares the HIDDEN `arg` column (Result1) and the HIDDEN `schema` column (SchemaOpt
/// or SchemaReq).
const TABLE_FUNCTIONS: &[(&str, bool, bool)] = &[
    ("analysis_limit", false, false),
    ("application_id", false, false),
    ("auto_vacuum", false, true),
    ("automatic_index", false, false),
    ("busy_timeout", false, false),
    ("cache_size", false, true),
    ("cache_spill", false, true),
    ("cell_size_check", false, false),
    ("checkpoint_fullfsync", false, false),
    ("collation_list", false, false),
    ("compile_options", false, false),
    ("count_changes", false, false),
    ("data_version", false, false),
    ("database_list", false, false),
    ("defer_foreign_keys", false, false),
    ("empty_result_callbacks", false, false),
    ("encoding", false, false),
    ("foreign_key_check", true, true),
    ("foreign_key_list", true, true),
    ("foreign_keys", false, false),
    ("freelist_count", false, false),
    ("full_column_names", false, false),
    ("fullfsync", false, false),
    ("function_list", false, false),
    ("hard_heap_limit", false, false),
    ("ignore_check_constraints", false, false),
    ("index_info", true, true),
    ("index_list", true, true),
    ("index_xinfo", true, true),
    ("integrity_check", true, true),
    ("journal_mode", false, true),
    ("journal_size_limit", false, true),
    ("legacy_alter_table", false, false),
    ("locking_mode", false, true),
    ("max_page_count", false, true),
    ("module_list", false, false),
    ("optimize", true, false),
    ("page_count", false, true),
    ("page_size", false, true),
    ("pragma_list", false, false),
    ("query_only", false, false),
    ("quick_check", true, true),
    ("read_uncommitted", false, false),
    ("recursive_triggers", false, false),
    ("reverse_unordered_selects", false, false),
    ("schema_version", false, false),
    ("secure_delete", false, false),
    ("short_column_names", false, false),
    ("soft_heap_limit", false, false),
    ("synchronous", false, true),
    ("table_info", true, true),
    ("table_list", true, false),
    ("table_xinfo", true, true),
    ("temp_store", false, false),
    ("threads", false, false),
    ("trusted_schema", false, false),
    ("user_version", false, false),
    ("writable_schema", false, false),
];

/// The pragmas usable as table-valued functions (`pragma_x(...)`), as SQLite's pragma
/// virtual tables (those with result columns).
pub fn is_table_function(pragma: &str) -> bool {
    TABLE_FUNCTIONS.iter().any(|(n, _, _)| *n == pragma)
}

/// The pragma functions whose rows depend on the schema alone (computed when the statement
/// is prepared, when their arguments are constants); the others read the database or the
/// connection and run when the statement does.
pub fn is_schema_function(pragma: &str) -> bool {
    matches!(
        pragma,
        "table_info"
            | "table_xinfo"
            | "index_list"
            | "index_info"
            | "index_xinfo"
            | "table_list"
            | "database_list"
            | "foreign_key_list"
            | "function_list"
            | "pragma_list"
            | "module_list"
            | "collation_list"
            | "compile_options"
    )
}

/// The HIDDEN columns of a pragma used as a table-valued function: its argument and its
/// schema, as SQLite's pragma virtual table declares them (PragFlg_Result1, SchemaOpt).
pub fn function_hidden_columns(pragma: &str) -> &'static [&'static str] {
    match TABLE_FUNCTIONS.iter().find(|(n, _, _)| *n == pragma) {
        Some((_, true, true)) => &["arg", "schema"],
        Some((_, true, false)) => &["arg"],
        Some((_, false, true)) => &["schema"],
        _ => &[],
    }
}

/// The result columns of `pragma_x`: the pragma's own, or (SQLite's pragma vtab for a
/// pragma without declared columns) one named after it.
pub fn function_columns(pragma: &str) -> Vec<String> {
    match column_names(pragma, false) {
        names if names.is_empty() => vec![pragma.to_string()],
        names => names,
    }
}

/// `pragma_x(arg, schema)` rows: the pragma over the named database (the whole search
/// order when no schema is given), each row followed by its hidden arg and schema values.
pub fn function_rows(
    schema: &crate::schema::Schema,
    pragma: &str,
    args: &[Value],
) -> Result<Vec<Row>> {
    let arg = args.first().cloned();
    let db = function::text_arg(args.get(1));
    let only;
    let target = match &db {
        Value::Null => schema,
        v => {
            let name = v.to_text_or_empty();
            if pragma != "table_list"
                && (name.eq_ignore_ascii_case("main") || name.eq_ignore_ascii_case("temp"))
            {
                only = schema_of_db(schema, name.eq_ignore_ascii_case("temp"), arg.as_ref());
                &only
            } else if name.eq_ignore_ascii_case("main") || name.eq_ignore_ascii_case("temp") {
                schema
            } else {
                match schema.attached_db(&name) {
                    Some((_, a)) => &a.schema,
                    None => return Err(SqlError::msg(format!("unknown database '{name}'"))),
                }
            }
        }
    };
    let mut rows = if pragma == "database_list" {
        database_list(schema)
    } else {
        schema_pragma(target, pragma, arg.clone())?
    };
    let n = function_hidden_columns(pragma).len();
    function::push_hidden(&mut rows, n, &function::text_arg(arg.as_ref()), &db);
    Ok(rows)
}

/// The schema a pragma about object `arg` of database main (`temp` false) or temp reads:
/// that database's objects alone (`Schema::only_db`), except that a view found there is
/// answered from the whole schema, which its body binds against (with that view put in
/// place of one of its name that hides it).
fn schema_of_db(
    schema: &crate::schema::Schema,
    temp: bool,
    arg: Option<&Value>,
) -> crate::schema::Schema {
    let only = schema.only_db(temp);
    let k = arg.map(|a| key(&a.to_text_or_empty()));
    match k.as_ref().and_then(|k| only.views.get(k).map(|v| (k, v))) {
        Some((k, v)) if !only.tables.contains_key(k) => {
            let mut whole = schema.clone();
            whole.views.insert(k.clone(), v.clone());
            whole
        }
        _ => only,
    }
}

/// A view column's type as SQLite's sqlite3SubqueryColumnTypes gives it: the declared type
/// of the table column it reads (through subqueries, CTEs and views; "INTEGER" for a rowid)
/// when that column's affinity is the view column's, else the name of the view column's
/// affinity ("NUM" for NUMERIC), or "" for none. A table column without a type has no
/// declared type (columnType gives none), one typed `""` has "" (and NUMERIC affinity).
fn view_column_type(schema: &crate::schema::Schema, c: &crate::plan::OutCol) -> String {
    let Some(aff) = c.sub_aff else {
        return String::new();
    };
    let declared = c.origin.as_deref().and_then(|t| {
        let i = match c.origin_col {
            None => return Some(("INTEGER".to_string(), Affinity::Integer)),
            Some(i) => i as usize,
        };
        let typed = |col: &crate::schema::Column| {
            (!col.decl_type.is_empty() || col.affinity != Affinity::Blob)
                .then(|| (col.decl_type.clone(), col.affinity))
        };
        match schema.table(t) {
            Some(t) => t.columns.get(i).and_then(typed),
            // The schema table is no entry of the schema (its origin is its name as written).
            None => crate::schema::schema_table().columns.get(i).and_then(typed),
        }
    });
    match declared {
        Some((d, daff)) if daff == aff => d,
        _ => match aff {
            Affinity::Blob => "BLOB",
            Affinity::Text => "TEXT",
            Affinity::Numeric => "NUM",
            Affinity::Integer => "INT",
            Affinity::Real => "REAL",
        }
        .to_string(),
    }
}

/// The pragmas answered from the schema alone (also usable as table-valued functions,
/// `SELECT * FROM pragma_table_info('t')`): table_info, table_xinfo, index_list, index_info,
/// foreign_key_list, and the catalogs that need no schema at all (function_list, ...).
pub fn schema_pragma(
    schema: &crate::schema::Schema,
    name: &str,
    arg: Option<Value>,
) -> Result<Vec<Row>> {
    let names =
        |list: &[&str]| -> Vec<Row> { list.iter().map(|n| vec![Value::text(*n)]).collect() };
    match key(name).as_str() {
        "function_list" => Ok(crate::func::function_list::function_list_rows()),
        "pragma_list" => Ok(names(PRAGMA_LIST)),
        // SQLite's order (its hash order); the pragma_x functions are not modules here.
        "module_list" => Ok(names(&["json_tree", "json_each"])),
        "compile_options" => Ok(names(crate::func::scalar::COMPILE_OPTIONS)),
        // The application's, most recently defined first, then the built-ins (SQLite's
        // hash order).
        "collation_list" => Ok(crate::func::user::with_collations_in_scope(|c| c.names())
            .unwrap_or_default()
            .into_iter()
            .filter(|n| crate::collation::Collation::builtin(n).is_err())
            .chain(["RTRIM", "NOCASE", "BINARY"])
            .enumerate()
            .map(|(i, n)| vec![Value::Integer(i as i64), Value::text(n)])
            .collect()),
        "foreign_key_list" => {
            let Some(tn) = arg else { return Ok(Vec::new()) };
            let Some(t) = schema.table(&tn.to_text_or_empty()).cloned() else {
                return Ok(Vec::new());
            };
            let action = |a: crate::schema::FkAction| {
                use crate::schema::FkAction::*;
                Value::text(match a {
                    NoAction => "NO ACTION",
                    Restrict => "RESTRICT",
                    SetNull => "SET NULL",
                    SetDefault => "SET DEFAULT",
                    Cascade => "CASCADE",
                })
            };
            // SQLite numbers the keys from the last declared (its list is built by
            // prepending each key as it is parsed).
            let mut out = Vec::new();
            for (id, fk) in t.fkeys.iter().rev().enumerate() {
                for (seq, &c) in fk.columns.iter().enumerate() {
                    out.push(vec![
                        Value::Integer(id as i64),
                        Value::Integer(seq as i64),
                        Value::text(fk.parent.as_str()),
                        t.columns
                            .get(c)
                            .map_or(Value::Null, |col| Value::text(col.name.as_str())),
                        fk.parent_columns
                            .get(seq)
                            .map_or(Value::Null, |n| Value::text(n.as_str())),
                        action(fk.on_update),
                        action(fk.on_delete),
                        Value::text("NONE"),
                    ]);
                }
            }
            Ok(out)
        }
        "table_info" | "table_xinfo" => {
            let Some(tn) = arg else { return Ok(Vec::new()) };
            let tn = tn.to_text_or_empty().into_owned();
            let xinfo = key(name) == "table_xinfo";
            let schema_table = matches!(
                key(&tn).as_str(),
                "sqlite_schema" | "sqlite_master" | "sqlite_temp_schema" | "sqlite_temp_master"
            )
            .then(|| std::sync::Arc::new(crate::schema::schema_table()));
            if let Some(t) = schema.table(&tn).or(schema_table.as_ref()) {
                // table_info leaves generated columns out (and numbers the rest without
                // them); table_xinfo shows them with hidden = 2 (VIRTUAL) or 3 (STORED).
                let mut hidden_before = 0;
                return Ok(t
                    .columns
                    .iter()
                    .enumerate()
                    .filter_map(|(i, c)| {
                        let hidden = match &c.generated {
                            None => 0,
                            Some(g) if g.stored => 3,
                            Some(_) => 2,
                        };
                        if hidden != 0 && !xinfo {
                            hidden_before += 1;
                            return None;
                        }
                        let mut r = vec![
                            Value::Integer((i - hidden_before) as i64),
                            Value::text(c.name.as_str()),
                            Value::text(c.decl_type.as_str()),
                            Value::Integer(i64::from(c.not_null.is_some())),
                            c.default_text
                                .as_deref()
                                .map(Value::text)
                                .unwrap_or(Value::Null),
                            Value::Integer(c.pk as i64),
                        ];
                        if xinfo {
                            r.push(Value::Integer(hidden));
                        }
                        Some(r)
                    })
                    .collect());
            }
            if let Some(v) = schema.views.get(&key(&tn)).cloned() {
                let mut columns = crate::plan::Binder::new(schema)
                    .bind_select(&v.select)?
                    .columns;
                crate::plan::bind::dedup_subquery_names(&mut columns);
                return Ok(columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let n = v.columns.get(i).cloned().unwrap_or_else(|| c.name.clone());
                        let mut r = vec![
                            Value::Integer(i as i64),
                            Value::text(n),
                            Value::text(view_column_type(schema, c)),
                            Value::Integer(0),
                            Value::Null,
                            Value::Integer(0),
                        ];
                        if xinfo {
                            r.push(Value::Integer(0));
                        }
                        r
                    })
                    .collect());
            }
            Ok(Vec::new())
        }
        "index_list" => {
            let Some(tn) = arg else { return Ok(Vec::new()) };
            let Some(t) = schema.table(&tn.to_text_or_empty()).cloned() else {
                return Ok(Vec::new());
            };
            let mut ixs = schema.table_indexes(&t);
            ixs.reverse();
            Ok(ixs
                .iter()
                .enumerate()
                .map(|(i, ix)| {
                    vec![
                        Value::Integer(i as i64),
                        Value::text(ix.name.as_str()),
                        Value::Integer(i64::from(ix.unique)),
                        Value::text(ix.origin),
                        Value::Integer(i64::from(ix.partial.is_some())),
                    ]
                })
                .collect())
        }
        "index_info" => {
            let Some(iname) = arg else {
                return Ok(Vec::new());
            };
            let Some(ix) = schema.indexes.get(&key(&iname.to_text_or_empty())).cloned() else {
                return Ok(Vec::new());
            };
            let t = schema.table(&ix.table).cloned();
            Ok(ix
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let (cid, n) = match (c.column, &t) {
                        (Some(ci), Some(t)) => {
                            (ci as i64, Value::text(t.columns[ci].name.as_str()))
                        }
                        _ if c.expr.is_some() => (-2, Value::Null),
                        _ => (-1, Value::Null),
                    };
                    vec![Value::Integer(i as i64), Value::Integer(cid), n]
                })
                .collect())
        }
        "index_xinfo" => {
            let Some(iname) = arg else {
                return Ok(Vec::new());
            };
            let Some(ix) = schema.indexes.get(&key(&iname.to_text_or_empty())).cloned() else {
                return Ok(Vec::new());
            };
            let Some(t) = schema.table(&ix.table).cloned() else {
                return Ok(Vec::new());
            };
            // The name as the index spells it (`IndexColumn::collation_name`).
            let coll_name = |c: &crate::schema::IndexColumn| match &c.collation_name {
                Some(n) => Value::text(n.as_str()),
                None => Value::text(c.collation.name()),
            };
            let col_name = |c: Option<usize>| match c {
                Some(ci) => Value::text(t.columns[ci].name.as_str()),
                None => Value::Null,
            };
            let mut out = Vec::new();
            for c in &ix.columns {
                let cid = match c.column {
                    Some(ci) => ci as i64,
                    None if c.expr.is_some() => -2,
                    None => -1,
                };
                out.push((cid, col_name(c.column), c.desc, coll_name(c), 1));
            }
            // The auxiliary columns: the rowid, or for a WITHOUT ROWID table the rest of
            // its record (the PRIMARY KEY's own tree) or the PRIMARY KEY suffix.
            if !t.without_rowid {
                out.push((-1, Value::Null, false, Value::text("BINARY"), 0));
            } else if ix.root == t.root {
                let layout = super::without_rowid::WrLayout::of(&t);
                // SQLite lists them with BINARY, whatever their declared collation.
                for &ci in &layout.record[layout.pk.len()..] {
                    out.push((
                        ci as i64,
                        col_name(Some(ci)),
                        false,
                        Value::text("BINARY"),
                        0,
                    ));
                }
            } else {
                for c in super::without_rowid::index_suffix(&t, &ix) {
                    let cid = c.column.map_or(-1, |ci| ci as i64);
                    out.push((cid, col_name(c.column), c.desc, coll_name(&c), 0));
                }
            }
            Ok(out
                .into_iter()
                .enumerate()
                .map(|(i, (cid, name, desc, coll, k))| {
                    vec![
                        Value::Integer(i as i64),
                        Value::Integer(cid),
                        name,
                        Value::Integer(i64::from(desc)),
                        coll,
                        Value::Integer(k),
                    ]
                })
                .collect())
        }
        "table_list" => {
            let bit = crate::exec::store::TEMP_ROOT_BIT;
            let mut out = Vec::new();
            let mut tables: Vec<_> = schema
                .tables
                .values()
                .chain(schema.shadowed.values())
                .collect();
            tables.sort_by(|a, b| a.name.cmp(&b.name));
            for t in tables {
                let db = if t.root & bit != 0 { "temp" } else { "main" };
                if arg
                    .as_ref()
                    .is_some_and(|n| !t.name.eq_ignore_ascii_case(&n.to_text_or_empty()))
                {
                    continue;
                }
                out.push(vec![
                    Value::text(db),
                    Value::text(t.name.as_str()),
                    Value::text("table"),
                    Value::Integer(t.columns.len() as i64),
                    Value::Integer(i64::from(t.without_rowid)),
                    Value::Integer(i64::from(t.strict)),
                ]);
            }
            let mut views: Vec<_> = schema.views.values().collect();
            views.sort_by(|a, b| a.name.cmp(&b.name));
            for v in views {
                if arg
                    .as_ref()
                    .is_some_and(|n| !v.name.eq_ignore_ascii_case(&n.to_text_or_empty()))
                {
                    continue;
                }
                let db = if schema.temp_views.contains_key(&key(&v.name)) {
                    "temp"
                } else {
                    "main"
                };
                let ncol = crate::plan::Binder::new(schema)
                    .bind_select(&v.select)
                    .map(|p| p.columns.len())
                    .unwrap_or(0);
                out.push(vec![
                    Value::text(db),
                    Value::text(v.name.as_str()),
                    Value::text("view"),
                    Value::Integer(ncol as i64),
                    Value::Integer(0),
                    Value::Integer(0),
                ]);
            }
            if arg.is_none() {
                out.push(vec![
                    Value::text("main"),
                    Value::text("sqlite_schema"),
                    Value::text("table"),
                    Value::Integer(5),
                    Value::Integer(0),
                    Value::Integer(0),
                ]);
                out.push(vec![
                    Value::text("temp"),
                    Value::text("sqlite_temp_schema"),
                    Value::text("table"),
                    Value::Integer(5),
                    Value::Integer(0),
                    Value::Integer(0),
                ]);
            }
            // Database by database, as SQLite lists them: main's objects, then temp's, each
            // database's schema table last.
            out.sort_by_key(|r| {
                let schema_table = matches!(
                    r[1].to_text_or_empty().as_ref(),
                    "sqlite_schema" | "sqlite_temp_schema"
                );
                (r[0] != Value::text("main"), schema_table)
            });
            // Then each attached database's objects, under its schema name.
            for a in &schema.attached {
                let mut rows = schema_pragma(&a.schema, name, arg.clone())?;
                rows.retain(|r| r.get(1) != Some(&Value::text("sqlite_temp_schema")));
                for r in &mut rows {
                    r[0] = Value::text(a.name.as_str());
                }
                out.extend(rows);
            }
            Ok(out)
        }
        _ => Ok(Vec::new()),
    }
}

/// The 32-bit value a header pragma (`user_version`, `application_id`) stores, read from
/// the assigned value's text as SQLite's sqlite3Atoi: a sign, then decimal digits up to the
/// first other character, or `0x` and up to eight hex digits; 0 when it does not fit a
/// signed 32-bit integer or has no digits.
fn header_int(v: &Value) -> i32 {
    let text = v.to_text_or_empty();
    let (neg, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, &text[..]),
    };
    if !neg && text.len() > 2 && (text.starts_with("0x") || text.starts_with("0X")) {
        let hex = text[2..].trim_start_matches('0');
        let digits = hex.bytes().take_while(u8::is_ascii_hexdigit).count();
        if text.as_bytes()[2].is_ascii_hexdigit() {
            return match u32::from_str_radix(&hex[..digits.min(8)], 16) {
                Ok(u) if digits <= 8 && u & 0x8000_0000 == 0 => u as i32,
                _ => 0,
            };
        }
    }
    let digits: String = rest
        .trim_start_matches('0')
        .chars()
        .take_while(char::is_ascii_digit)
        .take(11)
        .collect();
    if !rest.starts_with(|c: char| c.is_ascii_digit()) || digits.len() > 10 {
        return 0;
    }
    let v = digits.parse::<i64>().unwrap_or(0);
    if v - i64::from(neg) > i64::from(i32::MAX) {
        return 0;
    }
    (if neg { -v } else { v }) as i32
}
