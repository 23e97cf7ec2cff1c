"""CPython's sqlite3 module on whichever libsqlite3.so.0 the loader finds (crates/capi/tests/
c_api.rs runs this on the system SQLite and on parlite's library and compares the output
line for line).

Prints only what both libraries must agree on. A line starting "unsupported:" reports an
interface parlite's engine cannot serve yet: there the test wants "ok" from SQLite and the
exact error from parlite (c_api.rs, PYTHON_UNSUPPORTED).

Usage: sqlite3_module.py DIR (an empty directory for the database files).
"""

import os
import sqlite3
import sys

DIR = sys.argv[1]


def show(label, f):
    """Runs f() and prints its value, or the exception's type and message."""
    try:
        print(f"{label}: {f()!r}")
    except Exception as e:  # noqa: BLE001 - the error is the output
        print(f"{label}: {type(e).__name__}: {e}")


def unsupported(label, f):
    try:
        f()
        print(f"unsupported: {label}: ok")
    except Exception as e:  # noqa: BLE001
        print(f"unsupported: {label}: {type(e).__name__}: {e}")


# ---- connect, execute, executemany, fetch ------------------------------------------------
path = os.path.join(DIR, "module.db")
con = sqlite3.connect(path)
show("in_transaction at open", lambda: con.in_transaction)
show("isolation_level", lambda: con.isolation_level)
con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB, n)")
rows = [
    (1, 0, 0.0, "", b"", None),
    (2, -1, -0.5, "héllo wörld", b"\x00\x01\xff", None),
    (3, 2**63 - 1, 1e300, "x" * 1000, bytes(range(256)), 7),
    # Reals whose quote() (iterdump) SQLite 3.40 and 3.50 write alike: 3.50 writes pi with
    # 19 digits where 3.40 wrote 21, and infinity as 9.0e+999 where 3.40 wrote Inf.
    (4, -(2**63), 0.1, "a'b\"c", b"'", 1.5),
    (5, 42, -2.5e-300, "\u2603", b"z", "text"),
]
cur = con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", rows)
show("executemany rowcount", lambda: cur.rowcount)
show("in_transaction after insert", lambda: con.in_transaction)
con.commit()
show("in_transaction after commit", lambda: con.in_transaction)
show("total_changes", lambda: con.total_changes)
for row in con.execute("SELECT * FROM t ORDER BY id"):
    print("row", [(type(v).__name__, v if not isinstance(v, str) or len(v) < 50 else len(v)) for v in row])
cur = con.execute("SELECT id, s FROM t WHERE id > :lo AND id < :hi ORDER BY id", {"lo": 1, "hi": 5})
show("description", lambda: [d[0] for d in cur.description])
show("fetchone", cur.fetchone)
show("fetchmany", lambda: cur.fetchmany(1))
show("fetchall", cur.fetchall)
show("fetch past end", cur.fetchone)
cur = con.execute("INSERT INTO t(i) VALUES (?)", (99,))
show("lastrowid", lambda: cur.lastrowid)
show("rowcount", lambda: cur.rowcount)
con.rollback()
show("count after rollback", lambda: con.execute("SELECT count(*) FROM t").fetchone())
show("typeof", lambda: con.execute("SELECT typeof(?), typeof(?), typeof(?), typeof(?), typeof(?)",
                                   (1, 1.0, "1", b"1", None)).fetchone())
show("big int param", lambda: con.execute("SELECT ? + 0", (2**62,)).fetchone())
show("int too big", lambda: con.execute("SELECT ?", (2**64,)).fetchone())

# ---- errors ------------------------------------------------------------------------------
show("syntax error", lambda: con.execute("SELEC 1"))
show("no such table", lambda: con.execute("SELECT * FROM nope"))
show("unique", lambda: con.execute("INSERT INTO t(id) VALUES (1)"))
show("wrong binding count", lambda: con.execute("SELECT ?, ?", (1,)))
show("two statements", lambda: con.execute("SELECT 1; SELECT 2"))

# ---- isolation levels, context manager ---------------------------------------------------
for level in (None, "DEFERRED", "IMMEDIATE", "EXCLUSIVE"):
    con.isolation_level = level
    con.execute("UPDATE t SET i = i WHERE id = 1")
    print("isolation", level, "in_transaction", con.in_transaction)
    con.commit()
con.isolation_level = ""
try:
    with con:
        con.execute("INSERT INTO t(id, i) VALUES (10, 10)")
        con.execute("INSERT INTO t(id, i) VALUES (10, 11)")
except sqlite3.IntegrityError as e:
    print("with: rolled back:", e)
show("row 10 after failed with", lambda: con.execute("SELECT * FROM t WHERE id = 10").fetchall())
with con:
    con.execute("INSERT INTO t(id, i) VALUES (10, 10)")
show("row 10 after with", lambda: con.execute("SELECT id, i FROM t WHERE id = 10").fetchall())

# ---- Row factory -------------------------------------------------------------------------
con.row_factory = sqlite3.Row
r = con.execute("SELECT id AS ident, s FROM t WHERE id = 2").fetchone()
print("Row keys", r.keys(), "by name", r["ident"], r["S"], "tuple", tuple(r))
con.row_factory = None

# ---- user functions ----------------------------------------------------------------------
calls = []


def describe(*args):
    calls.append(len(args))
    return "|".join(f"{type(a).__name__}:{a!r}" for a in args)


con.create_function("describe", -1, describe)
show("describe()", lambda: con.execute("SELECT describe()").fetchone())
show("describe(all types)", lambda: con.execute(
    "SELECT describe(1, 2.5, 'x', x'00ff', NULL, 9223372036854775807)").fetchone())
show("describe(columns)", lambda: con.execute(
    "SELECT describe(i, r, s, b, n) FROM t WHERE id IN (2, 4) ORDER BY id").fetchall())
con.create_function("twice", 1, lambda x: None if x is None else x * 2, deterministic=True)
show("twice", lambda: con.execute("SELECT twice(21), twice('ab'), twice(x'01'), twice(NULL), twice(0.25)").fetchone())
show("twice in WHERE", lambda: con.execute("SELECT id FROM t WHERE twice(id) = 6").fetchall())
show("twice wrong count", lambda: con.execute("SELECT twice(1, 2)"))
con.create_function("boom", 0, lambda: 1 / 0)
show("raising function", lambda: con.execute("SELECT boom()").fetchone())
con.create_function("big", 0, lambda: 2**70)
show("unrepresentable result", lambda: con.execute("SELECT big()").fetchone())
con.create_function("lower", 1, lambda s: "custom:" + s)
show("overrides built-in", lambda: con.execute("SELECT lower('ABC')").fetchone())
con.create_function("lower", 1, None)
show("deleted override", lambda: con.execute("SELECT lower('ABC')").fetchone())
con.create_function("twice", 1, lambda x: x * 3)
show("replaced", lambda: con.execute("SELECT twice(2)").fetchone())
show("function in index expression", lambda: con.execute("CREATE INDEX tx ON t(twice(i))"))


class Collect:
    def __init__(self):
        self.items = []

    def step(self, *args):
        self.items.append(args[0] if len(args) == 1 else args)

    def finalize(self):
        return repr(self.items)


class BadStep:
    def step(self, x):
        raise ValueError("no")

    def finalize(self):
        return 1


class BadFinal:
    def step(self, x):
        pass

    def finalize(self):
        raise ValueError("no")


con.create_aggregate("collect", 1, Collect)
con.create_aggregate("collect2", 2, Collect)
con.create_aggregate("badstep", 1, BadStep)
con.create_aggregate("badfinal", 1, BadFinal)
show("aggregate", lambda: con.execute("SELECT collect(id) FROM t").fetchone())
show("aggregate no rows", lambda: con.execute("SELECT collect(id) FROM t WHERE 0").fetchone())
show("aggregate group by", lambda: con.execute(
    "SELECT id % 2, collect(id), count(*) FROM t GROUP BY id % 2 ORDER BY 1").fetchall())
show("aggregate two args", lambda: con.execute("SELECT collect2(id, i) FROM t WHERE id < 3").fetchone())
show("aggregate distinct", lambda: con.execute("SELECT collect(DISTINCT id % 2) FROM t").fetchone())
show("aggregate step raises", lambda: con.execute("SELECT badstep(id) FROM t").fetchone())
show("aggregate finalize raises", lambda: con.execute("SELECT badfinal(id) FROM t").fetchone())
show("aggregate as window", lambda: con.execute("SELECT collect(id) OVER () FROM t").fetchall())

# ---- trace, progress, interrupt ----------------------------------------------------------
traced = []
con.set_trace_callback(traced.append)
con.execute("SELECT :x || :y", {"x": 1.5, "y": None})
con.execute("SELECT ? + 1, ? || 'x', ?", (1, "it's", b"\x01\xab"))
con.execute("UPDATE t SET i = i WHERE id = ?", (1,))
con.commit()
con.set_trace_callback(None)
con.execute("SELECT 1")
for t in traced:
    print("trace", t)

progress_calls = []


def progress():
    progress_calls.append(1)
    return 0


con.set_progress_handler(progress, 1)
show("with progress handler", lambda: con.execute("SELECT count(*) FROM t").fetchone())
print("progress handler called", len(progress_calls) > 0)
con.set_progress_handler(lambda: 1, 1)
show("progress handler stops", lambda: con.execute("SELECT count(*) FROM t").fetchone())
con.set_progress_handler(None, 1)
show("after removing handler", lambda: con.execute("SELECT count(*) FROM t").fetchone())
con.interrupt()
show("interrupt while idle does not stick", lambda: con.execute("SELECT 1").fetchone())


def interrupt_from_handler():
    con.interrupt()
    return 0


con.set_progress_handler(interrupt_from_handler, 1)
show("interrupt from progress handler", lambda: con.execute("SELECT id FROM t").fetchall())
con.set_progress_handler(None, 1)
show("in_transaction after interrupt", lambda: con.in_transaction)

# ---- limits, declared types, iterdump, executescript --------------------------------------
show("getlimit LENGTH", lambda: con.getlimit(sqlite3.SQLITE_LIMIT_LENGTH))
show("setlimit ATTACHED", lambda: con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 1))
show("getlimit ATTACHED", lambda: con.getlimit(sqlite3.SQLITE_LIMIT_ATTACHED))
show("attach past limit", lambda: (con.execute(f"ATTACH '{os.path.join(DIR, 'a.db')}' AS a"),
                                   con.execute(f"ATTACH '{os.path.join(DIR, 'b.db')}' AS b")))

sqlite3.register_converter("POINT", lambda b: tuple(int(x) for x in b.split(b";")))
dcon = sqlite3.connect(":memory:", detect_types=sqlite3.PARSE_DECLTYPES)
dcon.execute("CREATE TABLE p(id INTEGER PRIMARY KEY, pt POINT, d DATE, plain)")
dcon.execute("INSERT INTO p VALUES (1, '3;4', '2024-02-29', '5;6')")
show("decltypes", lambda: dcon.execute("SELECT pt, d, plain, pt || '', id FROM p").fetchone())
show("decltypes through subquery", lambda: dcon.execute("SELECT pt FROM (SELECT pt FROM p)").fetchone())
dcon.close()

con.executescript("""
    CREATE TABLE u(a TEXT NOT NULL, b INT DEFAULT 3);
    CREATE INDEX u_a ON u(a);
    CREATE VIEW v AS SELECT a, b * 2 AS b2 FROM u;
    INSERT INTO u(a) VALUES ('one'), ('two''s');
""")
show("executescript", lambda: con.execute("SELECT * FROM v ORDER BY a").fetchall())
show("executescript error", lambda: con.executescript("SELECT 1; SELEC 2;"))
for line in con.iterdump():
    print("dump", line if len(line) < 200 else line[:200])

# ---- the online backup (Connection.backup) -----------------------------------------------
con.commit()
con.execute("CREATE TABLE big(x)")
con.executemany("INSERT INTO big VALUES (?)", [(b"x" * 3000,) for _ in range(40)])
con.commit()
steps = []
mem = sqlite3.connect(":memory:")
show("backup, 3 pages a step", lambda: con.backup(mem, pages=3, progress=lambda *a: steps.append(a)))
show("backup copied", lambda: mem.execute("SELECT count(*), sum(length(x)) FROM big").fetchall())
show("backup schema", lambda: mem.execute("SELECT name FROM sqlite_schema ORDER BY name").fetchall())
show("progress called per step", lambda: len(steps) > 5)
show("progress statuses", lambda: sorted({s for s, _, _ in steps}))
show("progress ends at 0 remaining", lambda: steps[-1][1])
show("progress remaining falls by 3", lambda: all(a[1] - b[1] == 3 for a, b in zip(steps, steps[1:])))
show("progress total fixed", lambda: len({t for _, _, t in steps}) == 1)
copy_path = os.path.join(DIR, "copy.db")
show("backup to a file", lambda: con.backup(sqlite3.connect(copy_path)))
show("copy reopened", lambda: sqlite3.connect(copy_path).execute("SELECT count(*) FROM big").fetchall())
show("backup from memory", lambda: mem.backup(sqlite3.connect(copy_path), name="main"))
show("backup to itself", lambda: con.backup(con))
show("backup of an unknown database", lambda: con.backup(mem, name="nosuch"))
busy_target = sqlite3.connect(":memory:")
busy_target.execute("CREATE TABLE z(x)")
busy_target.execute("INSERT INTO z VALUES (1)")
show("backup to a target in a transaction", lambda: con.backup(busy_target))
busy_target.commit()
show("backup of temp", lambda: con.backup(mem, name="temp"))
show("temp copy", lambda: mem.execute("SELECT name FROM sqlite_schema").fetchall())

# ---- what parlite's engine does not offer yet --------------------------------------------
show("remove a collation", lambda: con.create_collation("rev", None))
unsupported("set_authorizer", lambda: con.set_authorizer(lambda *a: sqlite3.SQLITE_OK))
show("remove the authorizer", lambda: con.set_authorizer(None))
unsupported("blobopen", lambda: con.blobopen("t", "b", 2).close())
unsupported("serialize", lambda: con.serialize())
unsupported("deserialize", lambda: sqlite3.connect(":memory:").deserialize(bytes(512)))


# ---- application collations and window functions ----------------------------------------
con.create_collation("rev", lambda a, b: (a < b) - (a > b))
con.create_collation("Fold", lambda a, b: (a.lower() > b.lower()) - (a.lower() < b.lower()))
con.executescript("""
    CREATE TABLE c(x TEXT COLLATE rev, y TEXT COLLATE fold UNIQUE);
    CREATE INDEX c_x ON c(x);
    INSERT INTO c VALUES ('a', 'x'), ('c', 'Y'), ('b', 'z'), ('B', 'Zz');
""")
show("collation order by", lambda: con.execute("SELECT x FROM c ORDER BY x").fetchall())
show("collation index range", lambda: con.execute("SELECT x FROM c WHERE x > 'b'").fetchall())
show("collation compare", lambda: con.execute("SELECT y FROM c WHERE y = 'ZZ'").fetchall())
show("collation group by", lambda: con.execute(
    "SELECT count(*) FROM c GROUP BY x COLLATE fold ORDER BY 1").fetchall())
show("collation unique", lambda: con.execute("INSERT INTO c VALUES ('d', 'X')"))
show("collation callback raises", lambda: (con.create_collation("bad", lambda a, b: 1 / 0),
                                           con.execute("SELECT x FROM c ORDER BY x COLLATE bad").fetchall()))
con.create_collation("rev", None)
show("collation removed", lambda: con.execute("SELECT x FROM c ORDER BY x").fetchall())
show("collation missing", lambda: con.execute("SELECT x FROM c ORDER BY x COLLATE nope").fetchall())


class Win:
    def __init__(self):
        self.items = []

    def step(self, x):
        self.items.append(x)

    def inverse(self, x):
        self.items.remove(x)

    def value(self):
        return ",".join(map(str, self.items)) or None

    def finalize(self):
        return self.value()


con.create_window_function("w", 1, Win)
show("window function", lambda: con.execute(
    "SELECT id, w(id) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM t").fetchall())
show("window function range", lambda: con.execute(
    "SELECT id, w(id) OVER (ORDER BY id % 3 RANGE CURRENT ROW) FROM t ORDER BY id").fetchall())
show("window function as aggregate", lambda: con.execute("SELECT w(id) FROM t").fetchall())
show("remove a window function", lambda: con.create_window_function("w", 1, None))
show("window function removed", lambda: con.execute("SELECT w(id) OVER () FROM t").fetchall())

con.close()
show("use after close", lambda: con.execute("SELECT 1"))
print("done")
