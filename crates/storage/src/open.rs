//! Opening a database file: `Database::open` and `Database::open_with_vfs`, the file
//! counterparts of `Database::open_in_memory`.
//!
//! They open (or share, within this process) a [`FileBackend`] — which takes the process
//! lock, recovers the log and checkpoints (pager D4) — and wrap it with
//! `Database::with_backend`, which gives an empty file its page 1.
//!
//! Invariants:
//! - O1. One backend per database file per process: a second `open` of the same path returns
//!   a `Database` over the same backend (lockfile L3), so two handles never keep two caches
//!   or two logs of one file.
//! - O2. The synchronous mode of `opts` is the backend's from the start: no commit of this
//!   open runs under a weaker mode than asked for. (A shared backend takes the mode of its
//!   latest open; `Database::set_synchronous` does not reach the backend yet.)

use crate::error::{Result, StorageError};
use crate::options::OpenOptions;
use crate::pager::{FileBackend, PagerConfig};
use crate::txn::Database;
use crate::vfs::{OsVfs, Vfs};
use std::path::Path;
use std::sync::Arc;

impl Database {
    /// Opens (or creates, per `opts.create`) the database file at `path`.
    pub fn open(path: impl AsRef<Path>, opts: OpenOptions) -> Result<Database> {
        let path = path.as_ref();
        let text = path.to_str().ok_or_else(|| StorageError::CantOpen {
            path: path.display().to_string(),
            reason: "the path is not valid UTF-8".into(),
        })?;
        Database::open_with_vfs(Arc::new(OsVfs), text, opts)
    }

    /// Opens the database at `path` through `vfs` (the simulated disk in crash tests).
    pub fn open_with_vfs(vfs: Arc<dyn Vfs>, path: &str, opts: OpenOptions) -> Result<Database> {
        Database::open_with_config(vfs, path, opts, PagerConfig::default())
    }

    /// Like [`Database::open_with_vfs`], with the pager's tunables (checkpoint thresholds).
    pub fn open_with_config(
        vfs: Arc<dyn Vfs>,
        path: &str,
        opts: OpenOptions,
        config: PagerConfig,
    ) -> Result<Database> {
        let backend = FileBackend::open_with(vfs, path, &opts, config)?;
        // O2: a shared backend (O1) runs in the mode of its latest open.
        backend.set_synchronous(opts.synchronous);
        let db = Database::with_backend(Arc::new(backend))?;
        db.set_synchronous(opts.synchronous);
        Ok(db)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Synchronous;
    use crate::record::{encode, ValueRef};
    use crate::txn::BtreeKind;
    use crate::PageNo;
    use std::time::Duration;

    fn sqlite_file(dir: &Path, name: &str, wal: bool) -> String {
        let path = dir.join(name).display().to_string();
        let conn = rusqlite::Connection::open(&path).unwrap();
        if wal {
            let mode: String = conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
                .unwrap();
            assert_eq!(mode, "wal");
        }
        conn.execute_batch(
            "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
             WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500)
             INSERT INTO t SELECT x, printf('row %d %.*c', x, x % 300, 'y') FROM c;",
        )
        .unwrap();
        path
    }

    fn table_root(db: &Database) -> PageNo {
        let t = db.begin_read().unwrap();
        let mut c = t.cursor(PageNo(1), BtreeKind::Table, None).unwrap();
        assert!(c.first().unwrap());
        let rec = c.record().unwrap();
        match crate::record::decode(&rec).unwrap()[3] {
            ValueRef::Integer(r) => PageNo(r as u32),
            ref other => panic!("rootpage is {other:?}"),
        }
    }

    #[test]
    fn synchronous_set_on_the_database_reaches_the_file_backend() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db").display().to_string();
        let db = Database::open(&path, OpenOptions::default()).unwrap();
        let commit_one = |rowid: i64| {
            let t = db.begin_write(Duration::from_secs(1)).unwrap();
            let rec = encode(&[ValueRef::Integer(rowid)]);
            t.table_insert(PageNo(1), rowid, &rec).unwrap();
            t.commit().unwrap();
        };
        commit_one(1);
        let full = db.stats();
        assert_eq!(
            full.commit_syncs, full.commits,
            "FULL syncs each lone commit"
        );
        db.set_synchronous(Synchronous::Off);
        commit_one(2);
        commit_one(3);
        let off = db.stats();
        assert_eq!(off.commits, full.commits + 2);
        assert_eq!(
            off.commit_syncs, full.commit_syncs,
            "OFF never syncs a commit"
        );
    }

    #[test]
    fn stock_sqlite_files_open_and_stay_valid_after_parlite_writes() {
        let dir = tempfile::tempdir().unwrap();
        for wal in [false, true] {
            let path = sqlite_file(dir.path(), if wal { "w.db" } else { "r.db" }, wal);
            let db = Database::open(&path, OpenOptions::default()).unwrap();
            let root = table_root(&db);
            let t = db.begin_write(Duration::from_secs(1)).unwrap();
            assert_eq!(t.count(root).unwrap(), 500);
            let rec = encode(&[ValueRef::Null, ValueRef::Text(b"from parlite")]);
            t.table_insert(root, 1000, &rec).unwrap();
            assert!(t.table_delete(root, 7).unwrap());
            t.commit().unwrap();
            drop((t, db));
            assert!(
                !Path::new(&format!("{path}-plog")).exists(),
                "clean close removes the log"
            );
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(
                (bytes[18], bytes[19]),
                (1, 1),
                "rollback-journal mode for stock SQLite"
            );
            let conn = rusqlite::Connection::open(&path).unwrap();
            let ok: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(ok, "ok");
            let n: i64 = conn
                .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 500);
            let b: String = conn
                .query_row("SELECT b FROM t WHERE a = 1000", [], |r| r.get(0))
                .unwrap();
            assert_eq!(b, "from parlite");
        }
    }

    #[test]
    fn unapplied_wal_is_refused_with_advice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.db").display().to_string();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
            .unwrap();
        conn.execute_batch(
            "PRAGMA wal_autocheckpoint=0; CREATE TABLE t(a); INSERT INTO t VALUES (1);",
        )
        .unwrap();
        // The connection stays open: its changes live in the -wal file only.
        match Database::open(&path, OpenOptions::default()) {
            Err(StorageError::CantOpen { reason, .. }) => {
                assert!(reason.contains("checkpoint"), "{reason}")
            }
            Err(e) => panic!("expected CantOpen, got {e}"),
            Ok(_) => panic!("opened a database with an unapplied WAL"),
        }
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
            .unwrap();
        drop(conn);
        let db = Database::open(&path, OpenOptions::default()).unwrap();
        let root = table_root(&db);
        assert_eq!(db.begin_read().unwrap().count(root).unwrap(), 1);
    }

    #[test]
    fn database_larger_than_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.db").display().to_string();
        let opts = OpenOptions {
            cache_pages_max: 32,
            synchronous: Synchronous::Normal,
            ..OpenOptions::default()
        };
        let db = Database::open(&path, opts.clone()).unwrap();
        let t = db.begin_write(Duration::from_secs(1)).unwrap();
        let root = t.create_btree(BtreeKind::Table).unwrap();
        t.commit().unwrap();
        let value = vec![7u8; 700];
        for chunk in 0..40 {
            let t = db.begin_write(Duration::from_secs(1)).unwrap();
            for i in 0..50 {
                t.table_insert(root, chunk * 50 + i, &encode(&[ValueRef::Blob(&value)]))
                    .unwrap();
            }
            t.commit().unwrap();
        }
        let t = db.begin_read().unwrap();
        assert_eq!(t.count(root).unwrap(), 2000);
        assert!(t.header().unwrap().page_count > 300);
        assert!(t
            .integrity_check(&[(root, BtreeKind::Table)], 10)
            .unwrap()
            .is_empty());
        drop(t);
        // Memory stays bounded by the cache, not by the 1.4 MB database.
        let b = FileBackend::open(&path, &opts).unwrap();
        let stats = b.stats();
        assert!(stats.cache_pages <= 32 + 16, "{stats:?}");
        assert!(stats.checkpoints > 0, "{stats:?}");
    }

    #[test]
    fn read_only_open_refuses_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = sqlite_file(dir.path(), "ro.db", false);
        let opts = OpenOptions {
            read_only: true,
            ..OpenOptions::default()
        };
        let db = Database::open(&path, opts).unwrap();
        let root = table_root(&db);
        assert_eq!(db.begin_read().unwrap().count(root).unwrap(), 500);
        assert!(matches!(
            db.begin_write(Duration::from_millis(10)),
            Err(StorageError::ReadOnly { .. })
        ));
        assert!(Database::open(
            dir.path().join("missing.db"),
            OpenOptions {
                create: false,
                ..OpenOptions::default()
            }
        )
        .is_err());
    }
}
