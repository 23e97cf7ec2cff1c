//! Real processes on a real disk (pager D1, lockfile L1):
//! - a child process (this test binary, re-run with `PARLITE_KILL_CHILD` set) commits in a
//!   loop under `Synchronous::Full` and prints each acknowledged commit id; the parent
//!   SIGKILLs it at a random instant, reopens, and checks every acknowledged commit is there;
//! - while the child runs, opening the database from the parent fails with `Locked` naming
//!   the child's pid;
//! - several threads committing under `Full` share fsyncs (group commit).
//!
//! Replay a run's timings with `PARLITE_SEED=N`; more rounds with `PARLITE_LONG=1`.

use parlite_storage::header::init_header;
use parlite_storage::pager::FileBackend;
use parlite_storage::pages::{Backend, WriteView};
use parlite_storage::{OpenOptions, PageNo, StorageError, Synchronous};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SLOTS: u32 = 20;
/// Where page 1 keeps the last commit id: in the free space of its (empty) B-tree page.
const LAST_ID_AT: usize = 4000;
const CHILD_ENV: &str = "PARLITE_KILL_CHILD";

fn opts() -> OpenOptions {
    OpenOptions {
        page_size: 4096,
        cache_pages_max: 64,
        synchronous: Synchronous::Full,
        ..OpenOptions::default()
    }
}

fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

/// The last commit id stored on page 1 (0 for a new database).
fn last_id(b: &FileBackend) -> u64 {
    let r = b.begin_read().unwrap();
    if r.page_count() == 0 {
        return 0;
    }
    get_u64(&r.page(PageNo(1)).unwrap(), LAST_ID_AT)
}

/// Commit `id`: page 1 records it as the last id, slot page `2 + id % SLOTS` records it too.
fn commit_id(w: &mut Box<dyn WriteView>, id: u64) {
    if w.page_count() == 0 {
        let p = w.append_page().unwrap();
        let page = w.page_mut(p).unwrap();
        init_header(page, 4096);
        // An empty table-leaf B-tree (sqlite_schema), so stock SQLite can read the file.
        page[100] = 0x0D;
        page[105..107].copy_from_slice(&4096u16.to_be_bytes());
    }
    while w.page_count() < 1 + SLOTS {
        w.append_page().unwrap();
    }
    w.page_mut(PageNo(1)).unwrap()[LAST_ID_AT..LAST_ID_AT + 8].copy_from_slice(&id.to_be_bytes());
    let slot = 2 + (id % SLOTS as u64) as u32;
    w.page_mut(PageNo(slot)).unwrap()[0..8].copy_from_slice(&id.to_be_bytes());
}

/// Opens, retrying briefly on `Locked`: a sibling test thread may have forked (to spawn
/// its own child) while the parent held the lock, and the forked copy keeps the lock's open
/// file description until it execs.
fn retry_locked<T>(open: impl Fn() -> parlite_storage::Result<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match open() {
            Ok(v) => return v,
            Err(StorageError::Locked { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => panic!("open failed: {e}"),
        }
    }
}

/// The child: commit forever, printing each acknowledged id.
fn child(path: &str) {
    let b = retry_locked(|| FileBackend::open(path, &opts()));
    let mut id = last_id(&b);
    let mut out = std::io::stdout();
    loop {
        id += 1;
        let mut w = b.begin_write(Duration::from_secs(5)).unwrap();
        commit_id(&mut w, id);
        w.commit().unwrap();
        writeln!(out, "ack {id}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn kill_child_entry() {
    // Only does something when run as the child of one of the SIGKILL tests.
    if let Ok(path) = std::env::var(CHILD_ENV) {
        child(&path);
    }
    if let Ok(path) = std::env::var(CHILD_BTREE_ENV) {
        child_btree(&path);
    }
    if let Ok(path) = std::env::var(CHILD_CONC_ENV) {
        child_concurrent(&path);
    }
    if let Ok(path) = std::env::var(CHILD_SPILL_ENV) {
        child_spill(&path);
    }
}

const CHILD_SPILL_ENV: &str = "PARLITE_KILL_CHILD_SPILL";
/// Pages each spilled commit appends: several times the view's bound (`opts`' 64-page
/// cache), so that most go to its spill file and its commit writes them straight into the
/// database file (pager D6).
const SPILL_PAGES: u32 = 300;

/// Spilled commit `id`: page 1 and the slot pages record it (logged in its frame), and it
/// appends `SPILL_PAGES` pages that hold it too (written to the database file before it).
fn child_spill(path: &str) {
    let b = retry_locked(|| FileBackend::open(path, &opts()));
    let mut id = last_id(&b);
    let mut out = std::io::stdout();
    loop {
        id += 1;
        let mut w = b.begin_write(Duration::from_secs(5)).unwrap();
        for s in 0..SLOTS {
            commit_id(&mut w, id);
            w.page_mut(PageNo(2 + s)).unwrap()[0..8].copy_from_slice(&id.to_be_bytes());
        }
        for _ in 0..SPILL_PAGES {
            let p = w.append_page().unwrap();
            w.page_mut(p).unwrap()[0..8].copy_from_slice(&id.to_be_bytes());
        }
        w.commit().unwrap();
        let direct = b.stats().spilled_direct_pages;
        writeln!(out, "direct {direct}\nack {id}").unwrap();
        out.flush().unwrap();
    }
}

/// D1 and D6 with real processes: SIGKILLed during a loop of transactions larger than
/// their bound, the database reopens with every acknowledged one, whole, and nothing of
/// a later one.
#[test]
fn sigkill_during_spilled_commits_keeps_them_atomic() {
    let seed: u64 = std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED);
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spill.db").display().to_string();
    let exe = std::env::current_exe().unwrap();
    let mut max_acked = 0u64;
    for round in 0..3 {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "kill_child_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_SPILL_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<u64>();
        let direct = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let seen = std::sync::Arc::clone(&direct);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(n) = line.strip_prefix("direct ").and_then(|n| n.parse().ok()) {
                    seen.fetch_max(n, std::sync::atomic::Ordering::SeqCst);
                }
                if let Some(id) = line
                    .find("ack ")
                    .map(|at| &line[at + 4..])
                    .and_then(|s| s.trim().parse().ok())
                {
                    if tx.send(id).is_err() {
                        break;
                    }
                }
            }
        });
        let first = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("child acknowledged nothing");
        max_acked = max_acked.max(first);
        std::thread::sleep(Duration::from_millis(rng.gen_range(20..400)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        max_acked = max_acked.max(rx.try_iter().max().unwrap_or(0));
        // The child's commits took the spilled path (it reported pages written directly).
        assert!(
            direct.load(std::sync::atomic::Ordering::SeqCst) >= u64::from(SPILL_PAGES),
            "round {round}: the child's commits did not spill"
        );

        let b = retry_locked(|| FileBackend::open(&path, &opts()));
        let last = last_id(&b);
        assert!(
            last >= max_acked,
            "round {round}: acknowledged commit {max_acked} lost (last is {last})"
        );
        let r = b.begin_read().unwrap();
        assert_eq!(
            r.page_count(),
            1 + SLOTS + SPILL_PAGES * last as u32,
            "round {round}: page count after {last} commits"
        );
        for s in 0..SLOTS {
            assert_eq!(get_u64(&r.page(PageNo(2 + s)).unwrap(), 0), last);
        }
        for pgno in 2 + SLOTS..=r.page_count() {
            let want = 1 + u64::from((pgno - 2 - SLOTS) / SPILL_PAGES);
            let got = get_u64(&r.page(PageNo(pgno)).unwrap(), 0);
            assert_eq!(got, want, "round {round}: page {pgno}");
        }
        drop(r);
        drop(b);
        println!("round {round}: last id {last}");
        max_acked = last;
    }
}

const CHILD_BTREE_ENV: &str = "PARLITE_KILL_CHILD_BTREE";
const CHILD_THREADS: u64 = 4;
/// Row ids of child thread `t` are `t * THREAD_ID_SPAN + 1, + 2, ...`.
const THREAD_ID_SPAN: i64 = 1 << 32;

/// The table's root, created (with its `sqlite_schema` row) by the first child.
fn kill_table(db: &parlite_storage::Database) -> PageNo {
    use parlite_storage::record::{decode, encode, ValueRef};
    use parlite_storage::BtreeKind;
    let t = db.begin_write(Duration::from_secs(30)).unwrap();
    let mut c = t.cursor(PageNo(1), BtreeKind::Table, None).unwrap();
    if c.first().unwrap() {
        let rec = c.record().unwrap();
        if let ValueRef::Integer(r) = decode(&rec).unwrap()[3] {
            t.rollback();
            return PageNo(r as u32);
        }
        panic!("bad schema row");
    }
    drop(c);
    let root = t.create_btree(BtreeKind::Table).unwrap();
    let rec = encode(&[
        ValueRef::Text(b"table"),
        ValueRef::Text(b"k"),
        ValueRef::Text(b"k"),
        ValueRef::Integer(root.0 as i64),
        ValueRef::Text(b"CREATE TABLE k(v)"),
    ]);
    t.table_insert(PageNo(1), 1, &rec).unwrap();
    t.commit().unwrap();
    root
}

/// The B-tree child: several threads insert rows, each commit its own transaction,
/// printing `ack <rowid>` once `commit` returned.
fn child_btree(path: &str) {
    use parlite_storage::record::{encode, ValueRef};
    use parlite_storage::BtreeKind;
    let db = retry_locked(|| parlite_storage::Database::open(path, opts()));
    let root = kill_table(&db);
    let out = std::sync::Arc::new(std::sync::Mutex::new(std::io::stdout()));
    let threads: Vec<_> = (0..CHILD_THREADS)
        .map(|t| {
            let (db, out) = (db.clone(), out.clone());
            std::thread::spawn(move || {
                let base = t as i64 * THREAD_ID_SPAN;
                // Continue after this thread's rows of earlier rounds.
                let mut next = {
                    let r = db.begin_read().unwrap();
                    let mut c = r.cursor(root, BtreeKind::Table, None).unwrap();
                    if c.seek_rowid(base + THREAD_ID_SPAN - 1, parlite_storage::SeekOp::Le)
                        .unwrap()
                        && c.rowid().unwrap() > base
                    {
                        c.rowid().unwrap() + 1
                    } else {
                        base + 1
                    }
                };
                loop {
                    let value = vec![(next % 251) as u8; (next % 5000) as usize];
                    let w = db.begin_write(Duration::from_secs(30)).unwrap();
                    w.table_insert(root, next, &encode(&[ValueRef::Blob(&value)]))
                        .unwrap();
                    w.commit().unwrap();
                    let mut o = out.lock().unwrap();
                    writeln!(o, "ack {next}").unwrap();
                    o.flush().unwrap();
                    next += 1;
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn sigkill_btree_writers_lose_no_acknowledged_row() {
    use parlite_storage::{BtreeKind, Database};
    let seed: u64 = std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xB7EE);
    let rounds = if std::env::var("PARLITE_LONG").is_ok() {
        20
    } else {
        3
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killb.db").display().to_string();
    let exe = std::env::current_exe().unwrap();
    let mut acked: Vec<i64> = Vec::new();
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "kill_child_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_BTREE_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<i64>();
        let reader = std::thread::spawn(move || {
            // libtest may print `test kill_child_entry ... ` before the first ack, on the
            // same line.
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(id) = line
                    .find("ack ")
                    .map(|at| &line[at + 4..])
                    .and_then(|s| s.trim().parse().ok())
                {
                    if tx.send(id).is_err() {
                        break;
                    }
                }
            }
        });
        acked.push(
            rx.recv_timeout(Duration::from_secs(30))
                .expect("child acknowledged nothing"),
        );
        std::thread::sleep(Duration::from_millis(rng.gen_range(50..400)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        acked.extend(rx.try_iter());

        let db = retry_locked(|| Database::open(&path, opts()));
        let root = kill_table(&db);
        let r = db.begin_read().unwrap();
        let mut present = std::collections::BTreeSet::new();
        let mut c = r.cursor(root, BtreeKind::Table, None).unwrap();
        let mut more = c.first().unwrap();
        while more {
            let id = c.rowid().unwrap();
            let rec = c.record().unwrap();
            let want = parlite_storage::record::encode(&[parlite_storage::record::ValueRef::Blob(
                &vec![(id % 251) as u8; (id % 5000) as usize],
            )]);
            assert_eq!(rec, want, "round {round}: row {id} has the wrong value");
            present.insert(id);
            more = c.next().unwrap();
        }
        for id in &acked {
            assert!(
                present.contains(id),
                "round {round}: acknowledged row {id} lost"
            );
        }
        // Each thread's rows form a prefix: at most its one in-flight commit is extra.
        for t in 0..CHILD_THREADS as i64 {
            let rows: Vec<i64> = present
                .range(t * THREAD_ID_SPAN + 1..(t + 1) * THREAD_ID_SPAN)
                .copied()
                .collect();
            for (i, id) in rows.iter().enumerate() {
                assert_eq!(
                    *id,
                    t * THREAD_ID_SPAN + 1 + i as i64,
                    "round {round}: hole in thread {t}'s rows"
                );
            }
        }
        let problems = r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap();
        assert!(problems.is_empty(), "round {round}: {problems:?}");
        println!(
            "round {round}: {} rows, {} acknowledged so far",
            present.len(),
            acked.len()
        );
    }
}

#[test]
fn sigkill_loses_no_acknowledged_commit() {
    let seed: u64 = std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED);
    let rounds = if std::env::var("PARLITE_LONG").is_ok() {
        20
    } else {
        3
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kill.db").display().to_string();
    let exe = std::env::current_exe().unwrap();
    let mut max_acked = 0u64;
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "kill_child_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<u64>();
        let reader = std::thread::spawn(move || {
            // libtest may print `test kill_child_entry ... ` before the first ack, on the
            // same line.
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(id) = line
                    .find("ack ")
                    .map(|at| &line[at + 4..])
                    .and_then(|s| s.trim().parse().ok())
                {
                    if tx.send(id).is_err() {
                        break;
                    }
                }
            }
        });
        // Wait for the first ack so the child holds the database, then check the lock.
        let first = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("child acknowledged nothing");
        max_acked = max_acked.max(first);
        match FileBackend::open(&path, &opts()) {
            Err(StorageError::Locked { holder_pid, .. }) => {
                assert_eq!(holder_pid, Some(child.id()))
            }
            Err(e) => panic!("round {round}: expected Locked, got {e}"),
            Ok(_) => panic!("round {round}: a second process opened a locked database"),
        }
        std::thread::sleep(Duration::from_millis(rng.gen_range(20..300)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        let acked: Vec<u64> = rx.try_iter().collect();
        max_acked = max_acked.max(acked.iter().copied().max().unwrap_or(0));

        let b = retry_locked(|| FileBackend::open(&path, &opts()));
        let last = last_id(&b);
        assert!(
            last >= max_acked,
            "round {round}: acknowledged commit {max_acked} lost (last is {last})"
        );
        // Atomicity: every slot holds the newest id <= last that maps to it.
        let r = b.begin_read().unwrap();
        for s in 0..SLOTS as u64 {
            let want = (1..=last)
                .rev()
                .find(|id| id % SLOTS as u64 == s)
                .unwrap_or(0);
            let got = get_u64(&r.page(PageNo(2 + s as u32)).unwrap(), 0);
            assert_eq!(got, want, "round {round}: slot {s}");
        }
        println!(
            "round {round}: {} acks this round, last id {last}",
            acked.len() + 1
        );
        max_acked = last;
    }
}

#[test]
fn group_commit_shares_fsyncs_between_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("group.db").display().to_string();
    let b = FileBackend::open(&path, &opts()).unwrap();
    let threads = 8u64;
    let per_thread = 150u64;
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let b = b.clone();
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    let mut w = b.begin_write(Duration::from_secs(30)).unwrap();
                    commit_id(&mut w, t * 1_000_000 + i + 1);
                    w.commit().unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let s = b.stats();
    println!(
        "{} commits, {} commit fsyncs ({:.1} commits per fsync) in {:?}",
        s.commits,
        s.commit_syncs,
        s.commits as f64 / s.commit_syncs.max(1) as f64,
        start.elapsed()
    );
    assert_eq!(s.commits, threads * per_thread);
    assert!(s.commit_syncs < s.commits, "no group commit: {s:?}");
}

#[test]
fn same_process_reopen_shares_the_backend() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("share.db").display().to_string();
    let a = FileBackend::open(&path, &opts()).unwrap();
    let mut w = a.begin_write(Duration::from_secs(1)).unwrap();
    commit_id(&mut w, 7);
    w.commit().unwrap();
    // A second open in this process is not `Locked`: it shares the open backend (L3).
    let b = FileBackend::open(&path, &opts()).unwrap();
    assert_eq!(last_id(&b), 7);
    drop((a, b));
    // After the last handle closes, the log is gone and stock SQLite reads the file.
    assert!(!std::path::Path::new(&format!("{path}-plog")).exists());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1 + SLOTS as i64);
}

/// Side-by-side with stock SQLite (WAL, synchronous=FULL), same disk, same run:
/// `PARLITE_BENCH=1 cargo test -p parlite-storage --test kill_process bench -- --nocapture`.
/// Each transaction updates one row (`BEGIN IMMEDIATE; UPDATE; COMMIT`).
#[test]
fn bench_one_row_updates_vs_sqlite() {
    if std::env::var("PARLITE_BENCH").is_err() {
        return;
    }
    use parlite_storage::record::{encode, ValueRef};
    use parlite_storage::{BtreeKind, Database};
    let dir = tempfile::tempdir().unwrap();
    let per_thread = 400u64;
    for threads in [1u64, 4, 16] {
        // parlite
        let path = dir.path().join(format!("p{threads}.db"));
        let db = Database::open(&path, OpenOptions::default()).unwrap();
        let t = db.begin_write(Duration::from_secs(5)).unwrap();
        let root = t.create_btree(BtreeKind::Table).unwrap();
        for k in 0..1000 {
            t.table_insert(root, k, &encode(&[ValueRef::Integer(0)]))
                .unwrap();
        }
        t.commit().unwrap();
        drop(t);
        let start = Instant::now();
        let hs: Vec<_> = (0..threads)
            .map(|th| {
                let db = db.clone();
                std::thread::spawn(move || {
                    for i in 0..per_thread {
                        let t = db.begin_write(Duration::from_secs(30)).unwrap();
                        let rec = encode(&[ValueRef::Integer(i as i64)]);
                        t.table_insert(root, ((th * 7919 + i * 13) % 1000) as i64, &rec)
                            .unwrap();
                        t.commit().unwrap();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let ours = (threads * per_thread) as f64 / start.elapsed().as_secs_f64();
        // The same process opening the same path shares the backend (its counters).
        let stats = FileBackend::open(path.to_str().unwrap(), &opts())
            .unwrap()
            .stats();
        drop(db);
        // stock SQLite
        let path = dir.path().join(format!("s{threads}.db"));
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE t(k INTEGER PRIMARY KEY, v);
             WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM c WHERE x < 999) INSERT INTO t SELECT x, 0 FROM c;",
        )
        .unwrap();
        drop(conn);
        let start = Instant::now();
        let hs: Vec<_> = (0..threads)
            .map(|th| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let conn = rusqlite::Connection::open(&path).unwrap();
                    conn.busy_timeout(Duration::from_secs(30)).unwrap();
                    conn.execute_batch("PRAGMA synchronous=FULL").unwrap();
                    for i in 0..per_thread {
                        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
                        conn.execute(
                            "UPDATE t SET v = ?1 WHERE k = ?2",
                            (i as i64, ((th * 7919 + i * 13) % 1000) as i64),
                        )
                        .unwrap();
                        conn.execute_batch("COMMIT").unwrap();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let theirs = (threads * per_thread) as f64 / start.elapsed().as_secs_f64();
        println!(
            "{threads:>2} writers: parlite {ours:>8.0} tps ({:.2} fsyncs per commit), \
             SQLite WAL+FULL {theirs:>8.0} tps, ratio {:.2}",
            stats.commit_syncs as f64 / stats.commits.max(1) as f64,
            ours / theirs
        );
    }
}

const CHILD_CONC_ENV: &str = "PARLITE_KILL_CHILD_CONC";
const CONC_THREADS: i64 = 6;

/// Row `-(t + 1)` is thread `t`'s counter: the sequence number of its last commit.
fn counter_row(t: i64) -> i64 {
    -(t + 1)
}

fn int_record(v: i64) -> Vec<u8> {
    parlite_storage::record::encode(&[parlite_storage::record::ValueRef::Integer(v)])
}

fn read_int(c: &parlite_storage::Cursor) -> i64 {
    match parlite_storage::record::decode(&c.record().unwrap()).unwrap()[0] {
        parlite_storage::record::ValueRef::Integer(v) => v,
        ref other => panic!("not an integer: {other:?}"),
    }
}

/// Thread `t`'s counter as `txn` sees it (0 before its first commit).
fn counter_of(txn: &parlite_storage::Txn, root: PageNo, t: i64) -> i64 {
    let mut c = txn
        .cursor(root, parlite_storage::BtreeKind::Table, None)
        .unwrap();
    if c.seek_rowid(counter_row(t), parlite_storage::SeekOp::Eq)
        .unwrap()
    {
        read_int(&c)
    } else {
        0
    }
}

/// The concurrent child: even threads commit with `begin_concurrent` (retrying on
/// `Conflict`/`Busy`), odd threads with `begin_write`. Commit `n` of thread `t` inserts row
/// `t * THREAD_ID_SPAN + n` (value `n`) and sets the thread's counter row to `n`; once
/// `commit` returned, the thread prints `ack t n`.
fn child_concurrent(path: &str) {
    use parlite_storage::StorageError as E;
    let db = retry_locked(|| parlite_storage::Database::open(path, opts()));
    let root = kill_table(&db);
    let out = std::sync::Arc::new(std::sync::Mutex::new(std::io::stdout()));
    let threads: Vec<_> = (0..CONC_THREADS)
        .map(|t| {
            let (db, out) = (db.clone(), out.clone());
            std::thread::spawn(move || {
                let mut n = counter_of(&db.begin_read().unwrap(), root, t);
                loop {
                    n += 1;
                    loop {
                        let txn = if t % 2 == 0 {
                            db.begin_concurrent().unwrap()
                        } else {
                            db.begin_write(Duration::from_secs(30)).unwrap()
                        };
                        let r = txn
                            .table_insert(root, t * THREAD_ID_SPAN + n, &int_record(n))
                            .and_then(|()| txn.table_insert(root, counter_row(t), &int_record(n)))
                            .and_then(|()| txn.commit());
                        match r {
                            Ok(()) => break,
                            Err(E::Conflict { .. } | E::Busy { .. } | E::BusySnapshot { .. }) => {
                                txn.rollback();
                            }
                            Err(e) => panic!("thread {t} commit {n}: {e}"),
                        }
                    }
                    let mut o = out.lock().unwrap();
                    writeln!(o, "ack {t} {n}").unwrap();
                    o.flush().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// A child process commits from several threads, concurrent and lock-holding, under `Full`;
/// SIGKILLed at a random instant. After reopening: every acknowledged commit is there, each
/// thread's rows form a prefix of its sequence (at most the one in-flight commit beyond its
/// last ack), its counter row equals that prefix's length (each commit is atomic), and no
/// counter went backwards across rounds.
#[test]
fn sigkill_concurrent_writers_keep_acknowledged_commits_in_order() {
    use parlite_storage::{BtreeKind, Database};
    let seed: u64 = std::env::var("PARLITE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xC0C0);
    let rounds = if std::env::var("PARLITE_LONG").is_ok() {
        20
    } else {
        3
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killc.db").display().to_string();
    let exe = std::env::current_exe().unwrap();
    let mut acked_max = vec![0i64; CONC_THREADS as usize];
    let mut prev = vec![0i64; CONC_THREADS as usize];
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "kill_child_entry",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_CONC_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<(i64, i64)>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // libtest may print `test kill_child_entry ... ` before the first ack, on
                // the same line.
                let Some(at) = line.find("ack ") else {
                    continue;
                };
                let mut it = line[at + 4..].split_whitespace();
                let t = it.next().and_then(|s| s.parse().ok());
                let n = it.next().and_then(|s| s.parse().ok());
                if let (Some(t), Some(n)) = (t, n) {
                    if tx.send((t, n)).is_err() {
                        break;
                    }
                }
            }
        });
        let first = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("child acknowledged nothing");
        let delay_ms = rng.gen_range(50..400);
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        let all: Vec<(i64, i64)> = std::iter::once(first).chain(rx.try_iter()).collect();
        for &(t, n) in &all {
            let m = &mut acked_max[t as usize];
            assert_eq!(
                n,
                (*m).max(prev[t as usize]) + 1,
                "thread {t} acked out of order: {:?}",
                &all[..all.len().min(20)]
            );
            *m = n;
        }

        let db = retry_locked(|| Database::open(&path, opts()));
        let root = kill_table(&db);
        let r = db.begin_read().unwrap();
        let mut present = 0u64;
        for t in 0..CONC_THREADS {
            let tu = t as usize;
            let counter = counter_of(&r, root, t);
            let mut c = r.cursor(root, BtreeKind::Table, None).unwrap();
            let mut k = 0i64;
            let mut more = c
                .seek_rowid(t * THREAD_ID_SPAN + 1, parlite_storage::SeekOp::Ge)
                .unwrap();
            while more && c.rowid().unwrap() < (t + 1) * THREAD_ID_SPAN {
                k += 1;
                assert_eq!(
                    c.rowid().unwrap(),
                    t * THREAD_ID_SPAN + k,
                    "round {round}: hole in thread {t}'s rows"
                );
                assert_eq!(read_int(&c), k, "round {round}: thread {t} row {k}");
                more = c.next().unwrap();
            }
            present += k as u64;
            assert_eq!(
                counter, k,
                "round {round}: thread {t}'s counter disagrees with its rows"
            );
            assert!(
                k >= acked_max[tu],
                "round {round}: thread {t} acknowledged {} but has {k}",
                acked_max[tu]
            );
            assert!(
                k <= acked_max[tu].max(prev[tu]) + 1,
                "round {round}: thread {t} has {k}, more than one unacknowledged commit"
            );
            assert!(
                k >= prev[tu],
                "round {round}: thread {t}'s counter went back"
            );
            prev[tu] = k;
            acked_max[tu] = k;
        }
        let problems = r.integrity_check(&[(root, BtreeKind::Table)], 10).unwrap();
        assert!(problems.is_empty(), "round {round}: {problems:?}");
        println!("round {round}: killed after {delay_ms} ms, {} acks, {present} rows, per thread {prev:?}",
            all.len()
        );
    }
}
