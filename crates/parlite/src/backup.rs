//! The online backup (sqlite.org backup.html, c3ref/backup_finish.html): one database of
//! a connection (`main`, `temp` or an attached name) copied page by page over a database
//! of another connection, in steps of as many pages as the caller asks.
//!
//! ```text
//!   new ──first step──▶ copying ──step that copies the last page: commit──▶ done
//!    │                     │  (source snapshot and destination writer lock held)
//!    └─────────────────────┴──▶ finish (or drop): whatever is still open is rolled back
//! ```
//! Invariants:
//! 1. The copy reads ONE snapshot of the source, taken by the first step and held until
//!    the copy ends: writers of the source are never blocked by it (readers never block
//!    writers), and the destination receives exactly that snapshot. SQLite restarts the
//!    copy when another connection writes the source; parlite's never restarts (README,
//!    known differences). A `temp` source is the connection's private database, which
//!    only its own statements change: it is read as it is at each step.
//! 2. The destination is written in one write transaction, begun by the first step and
//!    holding its writer lock until the step that copies the last page commits it: a crash
//!    before that commit leaves the destination as it was, after it complete (storage
//!    pages.rs P3). Its concurrent transactions fail validation (storage txn/copy.rs B2).
//! 3. Only SQLITE_BUSY and SQLITE_LOCKED let the caller step again: any other error is
//!    kept and every later step and `finish` return it, as SQLite's `sqlite3_backup.rc`.
//! 4. At the end the destination's schema cookie is its own earlier value + 1 (SQLite's
//!    `iDestSchema+1`), so every connection of it reloads its schema; the destination
//!    connection drops its cached schema at once.
//! 5. Page sizes must match. A blank destination `main` held by its connection alone is
//!    re-created with the source's page size first (`PRAGMA page_size`'s rule, as SQLite
//!    sets a fresh destination's page size); any other mismatch is SQLITE_READONLY, as
//!    SQLite's for a WAL or in-memory destination.

use crate::{error, lock, sync_mode, ConnInner, Connection, Error, Result};
use parlite_sql::exec::txnstore::IdleCursors;
use parlite_sql::value::codes;
use parlite_storage::{HeaderField, PageNo, Txn};
use std::sync::{Arc, Mutex};

/// Which database of a connection (SQLite's schema names, case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Which {
    Main,
    Temp,
    Attached(String),
}

impl Which {
    /// The database `name` names on `conn`, or SQLite's "unknown database NAME".
    fn find(conn: &ConnInner, name: &str) -> Result<Which> {
        if name.eq_ignore_ascii_case("main") {
            return Ok(Which::Main);
        }
        if name.eq_ignore_ascii_case("temp") {
            return Ok(Which::Temp);
        }
        match conn
            .attached
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case(name))
        {
            Some(a) => Ok(Which::Attached(a.name.clone())),
            None => Err(error(
                codes::SQLITE_ERROR,
                format!("unknown database {name}"),
            )),
        }
    }
}

/// What `Backup::step` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackupStep {
    /// Pages remain to be copied (SQLITE_OK).
    More,
    /// Every page was copied and the destination committed (SQLITE_DONE).
    Done,
}

/// The destination's write transaction (invariant 2).
enum DestTxn {
    /// A storage write transaction of its own on `main` or an attached database.
    Own(Txn),
    /// The connection's `temp` transaction, under a savepoint of the copy's own.
    Temp { txn: Txn, savepoint: u32 },
}

impl DestTxn {
    fn txn(&self) -> &Txn {
        match self {
            DestTxn::Own(t) | DestTxn::Temp { txn: t, .. } => t,
        }
    }

    fn commit(self) -> Result<()> {
        match self {
            DestTxn::Own(t) => Ok(t.commit()?),
            DestTxn::Temp { txn, savepoint } => Ok(txn.release(savepoint)?),
        }
    }

    fn rollback(self) {
        match self {
            DestTxn::Own(t) => t.rollback(),
            DestTxn::Temp { txn, savepoint } => {
                let _ = txn.rollback_to(savepoint);
                let _ = txn.release(savepoint);
            }
        }
    }
}

/// The source's view (invariant 1).
enum SourceTxn {
    Snapshot(Txn),
    Temp(Txn),
}

impl SourceTxn {
    fn txn(&self) -> &Txn {
        match self {
            SourceTxn::Snapshot(t) | SourceTxn::Temp(t) => t,
        }
    }

    fn end(self) {
        if let SourceTxn::Snapshot(t) = self {
            t.rollback();
        }
    }
}

/// What the first step opened.
struct Copying {
    source: SourceTxn,
    dest: DestTxn,
    /// The destination's schema cookie before the copy (invariant 4).
    dest_cookie: u32,
    /// Pages of the source snapshot.
    pages: u32,
}

/// An online backup in progress: `Backup::new`, `step` until `Done`, then `finish`.
pub struct Backup {
    dest: Arc<Mutex<ConnInner>>,
    dest_db: Which,
    source: Arc<Mutex<ConnInner>>,
    source_db: Which,
    copying: Option<Copying>,
    /// The next source page to copy (from 1).
    next_page: u32,
    /// `page_count()` and `remaining()` as the last step left them (0 before the first).
    page_count: u32,
    remaining: u32,
    /// The last step's outcome: `Ok(Done)` at the end, or its error (invariant 3).
    last: Result<BackupStep>,
}

impl Backup {
    /// Prepares a copy of `source`'s database `source_db` over `dest`'s `dest_db`
    /// (`sqlite3_backup_init`); nothing is read or locked until the first step. Errors as
    /// SQLite's: the same connection twice, an unknown database name, or a destination in
    /// a transaction ("destination database is in use").
    pub fn new(
        dest: &Connection,
        dest_db: &str,
        source: &Connection,
        source_db: &str,
    ) -> Result<Backup> {
        if Arc::ptr_eq(&dest.inner, &source.inner) {
            return Err(error(
                codes::SQLITE_ERROR,
                "source and destination must be distinct",
            ));
        }
        let source_which = Which::find(&lock(&source.inner), source_db)?;
        let dest_which = {
            let d = lock(&dest.inner);
            let which = Which::find(&d, dest_db)?;
            if dest_in_transaction(&d, &which) {
                return Err(error(codes::SQLITE_ERROR, "destination database is in use"));
            }
            which
        };
        Ok(Backup {
            dest: dest.inner.clone(),
            dest_db: dest_which,
            source: source.inner.clone(),
            source_db: source_which,
            copying: None,
            next_page: 1,
            page_count: 0,
            remaining: 0,
            last: Ok(BackupStep::More),
        })
    }

    /// Copies up to `pages` more pages (all of them when negative), committing the
    /// destination at the step that copies the last (`sqlite3_backup_step`). SQLITE_BUSY
    /// (the destination's writer lock is held elsewhere, or the source connection is in a
    /// write transaction) may be retried; any other error ends the copy (invariant 3).
    pub fn step(&mut self, pages: i32) -> Result<BackupStep> {
        if let Err(e) = &self.last {
            if !retryable(e) {
                return Err(e.clone());
            }
        }
        if matches!(self.last, Ok(BackupStep::Done)) {
            return Ok(BackupStep::Done);
        }
        let r = self.step_pages(pages);
        if r.as_ref().is_err_and(|e| !retryable(e)) {
            self.abandon();
        }
        self.last = r.clone();
        r
    }

    /// Pages still to copy after the last step (`sqlite3_backup_remaining`).
    pub fn remaining(&self) -> u32 {
        self.remaining
    }

    /// Pages of the source as the last step saw it (`sqlite3_backup_pagecount`).
    pub fn page_count(&self) -> u32 {
        self.page_count
    }

    /// Ends the copy, rolling back a destination not yet committed
    /// (`sqlite3_backup_finish`): Ok after `Done` or when no step failed, else the last
    /// step's error.
    pub fn finish(mut self) -> Result<()> {
        self.abandon();
        match &self.last {
            Ok(_) => Ok(()),
            Err(e) => Err(e.clone()),
        }
    }

    fn step_pages(&mut self, pages: i32) -> Result<BackupStep> {
        if self.copying.is_none() {
            self.copying = Some(self.begin()?);
        }
        let Some(c) = self.copying.as_ref() else {
            return Err(error(codes::SQLITE_MISUSE, "backup has ended"));
        };
        let mut copied: i64 = 0;
        while self.next_page <= c.pages && (pages < 0 || copied < i64::from(pages)) {
            let pgno = PageNo(self.next_page);
            let image = c.source.txn().page_image(pgno)?;
            c.dest.txn().copy_page_in(pgno, &image)?;
            self.next_page += 1;
            copied += 1;
        }
        self.page_count = c.pages;
        self.remaining = c.pages + 1 - self.next_page;
        if self.next_page <= c.pages {
            return Ok(BackupStep::More);
        }
        let d = c.dest.txn();
        d.set_page_count(c.pages)?;
        d.set_header_field(HeaderField::SchemaCookie, c.dest_cookie.wrapping_add(1))?;
        self.commit()?;
        Ok(BackupStep::Done)
    }

    /// The first step: the source snapshot and the destination's write transaction.
    fn begin(&self) -> Result<Copying> {
        let source = {
            let s = lock(&self.source);
            if source_writing(&s, &self.source_db) {
                return Err(error(codes::SQLITE_BUSY, "database is locked"));
            }
            source_txn(&s, &self.source_db)?
        };
        let r = (|| {
            let page_size = source.txn().header()?.page_size;
            let usable = source.txn().usable_size()?;
            let pages = source.txn().page_count()?;
            let dest = self.begin_dest(page_size, usable)?;
            let dest_cookie = match dest.txn().schema_cookie() {
                Ok(c) => c,
                Err(e) => {
                    dest.rollback();
                    return Err(e.into());
                }
            };
            Ok((dest, dest_cookie, pages))
        })();
        match r {
            Ok((dest, dest_cookie, pages)) => Ok(Copying {
                source,
                dest,
                dest_cookie,
                pages,
            }),
            Err(e) => {
                source.end();
                Err(e)
            }
        }
    }

    /// Opens the destination's write transaction on pages of the source's geometry
    /// (invariant 5).
    fn begin_dest(&self, page_size: u32, usable: usize) -> Result<DestTxn> {
        let mut d = lock(&self.dest);
        if self.dest_db == Which::Main
            && d.with_read_txn(|_, t| Ok(t.header()?.page_size))? != page_size
        {
            d.set_page_size(i64::from(page_size))?;
        }
        let dest = match &self.dest_db {
            Which::Main => {
                if d.read_only {
                    return Err(error(
                        codes::SQLITE_READONLY,
                        "attempt to write a readonly database",
                    ));
                }
                let t = d.db.begin_write(d.busy_timeout())?;
                t.set_synchronous(sync_mode(d.state.synchronous.get()));
                DestTxn::Own(t)
            }
            Which::Attached(name) => {
                let Some(a) = d.attached.iter().find(|a| &a.name == name) else {
                    return Err(error(
                        codes::SQLITE_ERROR,
                        format!("unknown database {name}"),
                    ));
                };
                let t = a.file.db.begin_write(d.busy_timeout())?;
                t.set_synchronous(sync_mode(a.synchronous.get()));
                DestTxn::Own(t)
            }
            Which::Temp => {
                let savepoint = d.temp_txn.savepoint()?;
                DestTxn::Temp {
                    txn: d.temp_txn.clone(),
                    savepoint,
                }
            }
        };
        let geometry = (|| -> Result<(u32, usize)> {
            let t = dest.txn();
            Ok((t.header()?.page_size, t.usable_size()?))
        })();
        match geometry {
            Ok(g) if g == (page_size, usable) => Ok(dest),
            Ok(_) => {
                dest.rollback();
                Err(error(
                    codes::SQLITE_READONLY,
                    "attempt to write a readonly database",
                ))
            }
            Err(e) => {
                dest.rollback();
                Err(e)
            }
        }
    }

    /// Rolls back what the first step opened, if anything is still open.
    fn abandon(&mut self) {
        if let Some(c) = self.copying.take() {
            c.source.end();
            c.dest.rollback();
        }
    }

    /// Commits the destination and ends the source snapshot; the destination connection
    /// then reloads its schema (invariant 4).
    fn commit(&mut self) -> Result<()> {
        let Some(c) = self.copying.take() else {
            return Err(error(codes::SQLITE_MISUSE, "backup has ended"));
        };
        c.source.end();
        c.dest.commit()?;
        let mut d = lock(&self.dest);
        d.schema_loaded = false;
        d.schema_gen += 1;
        d.plan = None;
        d.idle_cursors = IdleCursors::default();
        Ok(())
    }
}

impl Drop for Backup {
    fn drop(&mut self) {
        self.abandon();
    }
}

/// SQLite's non-fatal step results: the caller may step again.
fn retryable(e: &Error) -> bool {
    // SQLITE_LOCKED (6): parlite reports none from a copy; kept as SQLite defines it.
    e.code == codes::SQLITE_BUSY || e.code == 6
}

/// SQLite's `checkReadTransaction`: the destination database has a transaction open.
fn dest_in_transaction(conn: &ConnInner, which: &Which) -> bool {
    match which {
        Which::Main | Which::Temp => conn.txn.is_some(),
        Which::Attached(name) => conn
            .attached
            .iter()
            .any(|a| &a.name == name && a.in_transaction()),
    }
}

/// The source connection holds a write transaction on the source database: SQLite's
/// step answers SQLITE_BUSY then (its copy would miss the uncommitted changes).
fn source_writing(conn: &ConnInner, which: &Which) -> bool {
    match which {
        Which::Main | Which::Temp => conn.txn.as_ref().is_some_and(|t| t.is_write()),
        Which::Attached(name) => conn
            .attached
            .iter()
            .any(|a| &a.name == name && a.txn.borrow().as_ref().is_some_and(|t| t.is_write())),
    }
}

/// The source's view (invariant 1).
fn source_txn(conn: &ConnInner, which: &Which) -> Result<SourceTxn> {
    match which {
        Which::Main => Ok(SourceTxn::Snapshot(conn.db.begin_read()?)),
        Which::Temp => Ok(SourceTxn::Temp(conn.temp_txn.clone())),
        Which::Attached(name) => match conn.attached.iter().find(|a| &a.name == name) {
            Some(a) => Ok(SourceTxn::Snapshot(a.file.db.begin_read()?)),
            None => Err(error(
                codes::SQLITE_ERROR,
                format!("unknown database {name}"),
            )),
        },
    }
}
