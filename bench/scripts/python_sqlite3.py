"""CPython's sqlite3 module on the libsqlite3.so.0 the loader finds: the system SQLite, or
parlite's with LD_LIBRARY_PATH=<dir with libsqlite3.so.0 -> target/release/libsqlite3.so>.

  python3 bench/scripts/python_sqlite3.py DIR [ROWS]

In a fresh file DIR/py.db (WAL, synchronous=NORMAL, asked of both libraries): one
executemany of ROWS rows (default 100,000) in one transaction; a loop over SELECT * of them
all; ROWS/10 point SELECTs by primary key, each a cursor.execute; a user function over every
row (SELECT sum(twice(v))). Prints one line: the library, then seconds per phase.
"""

import os
import sqlite3
import sys
import time

directory = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
path = os.path.join(directory, "py.db")
for suffix in ("", "-wal", "-shm", "-journal"):
    if os.path.exists(path + suffix):
        os.remove(path + suffix)
for name in os.listdir(directory):
    if name.startswith("py.db"):
        os.remove(os.path.join(directory, name))

con = sqlite3.connect(path)
con.execute("PRAGMA journal_mode=WAL")
con.execute("PRAGMA synchronous=NORMAL")
con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v INTEGER, r REAL)")
con.commit()
lib = con.execute("SELECT sqlite_source_id()").fetchone()[0]
lib = "parlite" if lib.startswith("parlite") else "sqlite " + sqlite3.sqlite_version

times = {}
start = time.perf_counter()
con.executemany(
    "INSERT INTO t VALUES (?, ?, ?, ?)",
    ((i, f"key{i:08d}", i * 7 % 1000, i / 3) for i in range(rows)),
)
con.commit()
times["executemany"] = time.perf_counter() - start

start = time.perf_counter()
total = 0
for _id, k, v, r in con.execute("SELECT * FROM t"):
    total += v
times["select_all"] = time.perf_counter() - start

start = time.perf_counter()
hits = 0
for i in range(0, rows, 10):
    hits += con.execute("SELECT v FROM t WHERE id = ?", (i,)).fetchone()[0] >= 0
times["point_selects"] = time.perf_counter() - start

con.create_function("twice", 1, lambda x: 2 * x, deterministic=True)
start = time.perf_counter()
doubled = con.execute("SELECT sum(twice(v)) FROM t").fetchone()[0]
times["user_function"] = time.perf_counter() - start
assert doubled == 2 * total, (doubled, total)
con.close()

print(
    f"lib={lib} rows={rows} "
    + " ".join(f"{k}_s={v:.3f}" for k, v in times.items())
    + f" total_s={sum(times.values()):.3f}"
)
