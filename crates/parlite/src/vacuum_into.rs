//! `VACUUM INTO 'file'` at the connection (lang_vacuum.html): opens the output file as a
//! fresh database, has the engine copy main into it (`Engine::vacuum_into`), commits and
//! closes it, so the file is a complete SQLite database with no log beside it.
//!
//! Invariants:
//! - An output file that exists and is not empty is never touched: "output file already
//!   exists", as SQLite says. A copy that fails removes the file it created.
//! - The copy reads one snapshot of main (a read transaction), so it is consistent while
//!   other connections write.
//! - Only main can be copied: an attached database's copy errors; `VACUUM temp INTO` does
//!   nothing, as in SQLite (which generates no code for temp).

use crate::attach::absolute_path;
use parlite_sql::exec::{store::RoutedStore, txnstore::TxnStore, Engine};
use parlite_sql::parse::ast::Expr;
use parlite_sql::value::{codes, Value as SqlValue};
use parlite_storage::OpenOptions;
use std::time::Duration;

impl crate::ConnInner {
    pub(crate) fn vacuum_into(
        &mut self,
        schema: Option<&str>,
        into: &Expr,
        params: &[SqlValue],
    ) -> crate::Result<Vec<Vec<SqlValue>>> {
        // SQLite generates no code for temp: `VACUUM temp INTO 'f'` does nothing.
        if schema.is_some_and(|s| s.eq_ignore_ascii_case("temp")) {
            return Ok(Vec::new());
        }
        if schema.is_some_and(|s| !s.eq_ignore_ascii_case("main")) {
            return Err(crate::error(
                codes::SQLITE_ERROR,
                "VACUUM INTO of a database other than main is not supported",
            ));
        }
        let vals = self.attach_operands(&[into], params)?;
        let file = match vals.first() {
            Some(SqlValue::Text(s)) => s.to_string(),
            _ => return Err(crate::error(codes::SQLITE_ERROR, "non-text filename")),
        };
        let path = absolute_path(&file);
        if std::fs::metadata(&path).is_ok_and(|m| m.len() > 0) {
            return Err(crate::error(
                codes::SQLITE_ERROR,
                "output file already exists",
            ));
        }
        let page_size = self.with_read_txn(|_, t| Ok(t.header()?.page_size))?;
        let opts = OpenOptions {
            page_size,
            ..OpenOptions::default()
        };
        let out_db = parlite_storage::Database::open(&path, opts)?;
        let copied = (|| -> crate::Result<()> {
            let out_txn = out_db.begin_write(Duration::ZERO)?;
            let out = TxnStore::new(out_txn.clone());
            let r = self.with_read_txn(|c, t| {
                c.refresh_schema(t)?;
                let main = TxnStore::new(t.clone());
                let store = RoutedStore {
                    main: &main,
                    temp: None,
                    attached: Vec::new(),
                };
                let mut engine = Engine::new(&store, &mut c.schema, params, &c.state);
                engine.vacuum_into(&out)?;
                Ok(())
            });
            match r {
                Ok(()) => {
                    out_txn.commit()?;
                    out_db.checkpoint()?;
                    Ok(())
                }
                Err(e) => {
                    out_txn.rollback();
                    Err(e)
                }
            }
        })();
        drop(out_db);
        if let Err(e) = copied {
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        Ok(Vec::new())
    }
}
