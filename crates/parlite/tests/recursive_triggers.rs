//! `PRAGMA recursive_triggers`: a trigger that fires itself (directly, through another
//! table, through DELETE or UPDATE) recurses up to SQLite's SQLITE_MAX_TRIGGER_DEPTH (1000)
//! levels; one more fails with `too many levels of trigger recursion` and the statement
//! changes nothing. Every script runs on a thread with a 256 KiB stack: deep trigger chains
//! continue on heap-grown stack segments (exec/mod.rs, `Engine::fire`), so they must not
//! overflow the caller's stack. SQLite (rusqlite, bundled) is the oracle for rows and
//! messages; recursive_triggers OFF keeps the old behaviour (a trigger never fires itself).

mod common;

use common::{check_script, Compare};

/// Stack size of the threads the scripts run on: far less than 1000 trigger frames need.
const SMALL_STACK: usize = 256 * 1024;

/// Runs `check_script` on a fresh thread with a `SMALL_STACK` stack.
fn check_on_small_stack(script: String) {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(move || check_script(&script, Compare::default()))
        .expect("spawn")
        .join()
        .expect("script thread panicked (see its message above)");
}

/// Runs `f` on a fresh thread with a stack of `size` bytes.
fn on_stack<R: Send + 'static>(size: usize, f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(size)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("thread panicked (see its message above)")
}

/// One statement's outcome in SQLite (on an 8 MiB stack: SQLite's own code generator
/// recurses on expression trees) and in parlite (on a stack of `stack` bytes).
fn outcomes(sql: &str, stack: usize) -> (common::Out, common::Out) {
    let q = sql.to_string();
    let a = on_stack(8 << 20, move || {
        let s = rusqlite::Connection::open_in_memory().expect("sqlite");
        common::run_sqlite(&s, &q)
    });
    let q = sql.to_string();
    let b = on_stack(stack, move || {
        let p = parlite::Connection::open(":memory:").expect("parlite");
        common::run_parlite(&p, &q)
    });
    (a, b)
}

/// A self-inserting chain: inserting n fires the trigger, which inserts n - 1, down to 1.
/// Inserting `n` enters n trigger programs.
const CHAIN: &str = "
    CREATE TABLE t(n INTEGER);
    CREATE TRIGGER tr AFTER INSERT ON t WHEN new.n > 1 BEGIN
      INSERT INTO t VALUES(new.n - 1);
    END;
";

#[test]
fn direct_recursion_to_the_limit() {
    check_on_small_stack(format!(
        "PRAGMA recursive_triggers = ON;
        {CHAIN}
        INSERT INTO t VALUES(1000);
        SELECT count(*), min(n), max(n), sum(n) FROM t;
        INSERT INTO t VALUES(1001);
        SELECT count(*), min(n), max(n), sum(n) FROM t;
        INSERT INTO t VALUES(5);
        SELECT count(*), min(n), max(n), sum(n) FROM t;"
    ));
}

/// Inside an explicit transaction parlite rolls the failed statement back and keeps the
/// earlier ones. SQLite differs here: it opens no statement journal for a statement it does
/// not expect to abort, so the rows the chain wrote before the depth error stay in the
/// transaction (a known difference, README.md); autocommit statements agree.
#[test]
fn failed_recursion_inside_a_transaction_rolls_back_the_statement() {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(|| {
            let c = parlite::Connection::open(":memory:").expect("open");
            c.execute_batch(&format!("PRAGMA recursive_triggers = ON; {CHAIN}"))
                .expect("schema");
            c.execute_batch("BEGIN; INSERT INTO t VALUES(3);")
                .expect("begin");
            let e = c
                .execute_batch("INSERT INTO t VALUES(1500);")
                .expect_err("1500 levels exceed the limit");
            assert_eq!(e.message, "too many levels of trigger recursion");
            c.execute_batch("INSERT INTO t VALUES(2); COMMIT;")
                .expect("commit");
            let out = common::run_parlite(&c, "SELECT n FROM t ORDER BY n");
            let want: Vec<Vec<parlite::Value>> = [1, 1, 2, 2, 3]
                .iter()
                .map(|&n| vec![parlite::Value::Integer(n)])
                .collect();
            match out {
                common::Out::Rows { rows, .. } => assert_eq!(rows, want),
                other => panic!("unexpected {other:?}"),
            }
        })
        .expect("spawn")
        .join()
        .expect("script thread panicked (see its message above)");
}

#[test]
fn before_trigger_recursion_to_the_limit() {
    check_on_small_stack(
        "PRAGMA recursive_triggers = ON;
        CREATE TABLE t(n INTEGER);
        CREATE TRIGGER tb BEFORE INSERT ON t WHEN new.n > 1 BEGIN
          INSERT INTO t VALUES(new.n - 1);
        END;
        INSERT INTO t VALUES(1000);
        SELECT count(*), sum(n) FROM t;
        INSERT INTO t VALUES(1001);
        SELECT count(*), sum(n) FROM t;"
            .to_string(),
    );
}

#[test]
fn mutual_recursion_between_two_tables() {
    check_on_small_stack(
        "PRAGMA recursive_triggers = ON;
        CREATE TABLE a(n INTEGER);
        CREATE TABLE b(n INTEGER);
        CREATE TRIGGER ta AFTER INSERT ON a WHEN new.n > 0 BEGIN
          INSERT INTO b VALUES(new.n - 1);
        END;
        CREATE TRIGGER tb AFTER INSERT ON b WHEN new.n > 0 BEGIN
          INSERT INTO a VALUES(new.n - 1);
        END;
        INSERT INTO a VALUES(999);
        SELECT count(*), sum(n) FROM a;
        SELECT count(*), sum(n) FROM b;
        INSERT INTO a VALUES(1000);
        SELECT count(*), sum(n) FROM a;
        SELECT count(*), sum(n) FROM b;
        INSERT INTO b VALUES(10);
        SELECT count(*), sum(n) FROM a;
        SELECT count(*), sum(n) FROM b;"
            .to_string(),
    );
}

/// Each deleted row's trigger deletes the next one down.
#[test]
fn recursion_through_delete() {
    for rows in [1000, 1001] {
        check_on_small_stack(format!(
            "PRAGMA recursive_triggers = ON;
            CREATE TABLE t(n INTEGER PRIMARY KEY);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows})
              INSERT INTO t SELECT x FROM c;
            CREATE TRIGGER td AFTER DELETE ON t BEGIN
              DELETE FROM t WHERE n = old.n - 1;
            END;
            DELETE FROM t WHERE n = {rows};
            SELECT count(*), min(n), max(n) FROM t;
            DELETE FROM t WHERE n = 500;
            SELECT count(*), min(n), max(n) FROM t;"
        ));
    }
}

#[test]
fn recursion_through_update() {
    check_on_small_stack(
        "PRAGMA recursive_triggers = ON;
        CREATE TABLE c(id INTEGER PRIMARY KEY, n INTEGER);
        INSERT INTO c VALUES(1, 0), (2, 0);
        CREATE TRIGGER tu AFTER UPDATE OF n ON c WHEN new.n < 1000 BEGIN
          UPDATE c SET n = n + 1 WHERE id = new.id;
        END;
        UPDATE c SET n = 1 WHERE id = 1;
        SELECT * FROM c ORDER BY id;
        CREATE TRIGGER tu2 AFTER UPDATE OF n ON c WHEN new.n >= 1000 AND new.n < 2001 BEGIN
          UPDATE c SET n = n + 1 WHERE id = new.id;
        END;
        UPDATE c SET n = 1000 WHERE id = 2;
        SELECT * FROM c ORDER BY id;"
            .to_string(),
    );
}

/// REPLACE's deletes fire DELETE triggers under recursive_triggers; those triggers can
/// REPLACE again.
#[test]
fn recursion_through_replace_deletes() {
    check_on_small_stack(
        "PRAGMA recursive_triggers = ON;
        CREATE TABLE t(k INTEGER PRIMARY KEY, v);
        CREATE TABLE log(x);
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1200)
          INSERT INTO t SELECT x, 'old' FROM c;
        CREATE TRIGGER td AFTER DELETE ON t WHEN old.k > 1 AND old.v = 'old' BEGIN
          INSERT INTO log VALUES(old.k);
          REPLACE INTO t VALUES(old.k - 1, 'new');
        END;
        REPLACE INTO t VALUES(999, 'new');
        SELECT count(*), sum(v = 'new') FROM t;
        SELECT count(*), min(x), max(x) FROM log;
        REPLACE INTO t VALUES(1200, 'new');
        SELECT count(*), sum(v = 'new') FROM t;
        SELECT count(*), min(x), max(x) FROM log;"
            .to_string(),
    );
}

/// Without recursive_triggers a trigger never fires itself, whatever the depth.
#[test]
fn recursive_triggers_off_unchanged() {
    check_on_small_stack(format!(
        "PRAGMA recursive_triggers = OFF;
        {CHAIN}
        INSERT INTO t VALUES(1001);
        SELECT n FROM t ORDER BY n;
        CREATE TABLE u(n INTEGER);
        CREATE TRIGGER tu AFTER INSERT ON u WHEN new.n > 0 BEGIN
          INSERT INTO t VALUES(new.n);
        END;
        CREATE TRIGGER tt AFTER INSERT ON t WHEN new.n > 0 BEGIN
          INSERT INTO u VALUES(new.n - 1);
        END;
        INSERT INTO u VALUES(50);
        SELECT count(*), sum(n) FROM t;
        SELECT count(*), sum(n) FROM u;
        PRAGMA recursive_triggers = ON;
        PRAGMA recursive_triggers;
        PRAGMA recursive_triggers = OFF;
        PRAGMA recursive_triggers;"
    ));
}

/// `depth` levels of `open` ... `close` around `inner`.
fn nest(open: &str, inner: &str, close: &str, depth: usize) -> String {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
}

const TOO_HIGH: &str = "Expression tree is too large (maximum depth 1000)";

/// Expression trees up to SQLite's height limit (1000) bind and run; higher ones fail with
/// SQLite's message, before any deep tree is built. Parsing and binding are safe on a small
/// stack at any height; evaluation (exec/eval.rs, unguarded: it is the hot path) of a tree
/// near the limit needs about 1 MiB, so those run on Rust's default 2 MiB thread stack.
#[test]
fn deep_expressions_on_a_small_stack() {
    for depth in [200, 998, 999, 1000, 1001, 5000] {
        let stack = if depth > 200 && depth <= 1000 {
            2 << 20
        } else {
            SMALL_STACK
        };
        let shapes = [
            format!("SELECT 1{};", "+1".repeat(depth)),
            format!("SELECT 'x'{};", "||'x'".repeat(depth)),
            format!("SELECT 1{};", " AND 1".repeat(depth)),
        ];
        for s in shapes {
            let (a, b) = outcomes(&s, stack);
            assert_eq!(a, b, "depth {depth}: {}", &s[..30]);
        }
    }
}

/// Nesting through recursion in the parser (parentheses, prefix operators, calls,
/// subqueries) agrees with SQLite to 200 levels at least (parlite's bound is 250); deeper, parlite reports SQLite's
/// expression-depth message where SQLite may still accept it (a known difference), but it
/// never overflows the stack.
#[test]
fn deep_nesting_on_a_small_stack() {
    for depth in [200, 5000] {
        let shapes = [
            format!("SELECT {};", nest("(", "1", ")", depth)),
            format!("SELECT {}1;", "- ".repeat(depth)),
            format!("SELECT {}1;", "NOT ".repeat(depth)),
            format!("SELECT {};", nest("abs(", "1", ")", depth)),
            format!("SELECT {};", nest("(SELECT ", "1", ")", depth)),
        ];
        for s in shapes {
            let (a, b) = outcomes(&s, SMALL_STACK);
            if depth <= 200 {
                assert_eq!(a, b, "depth {depth}: {}", &s[..30]);
            } else {
                assert_eq!(b, common::Out::Err(TOO_HIGH.to_string()), "depth {depth}");
            }
        }
    }
}
