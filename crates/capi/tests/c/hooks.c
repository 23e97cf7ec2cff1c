/* The commit and rollback hooks, the 64-bit binds, sqlite3_db_filename, sqlite3_stmt_status's
 * re-prepare and run counts, sqlite3_system_errno, sqlite3_file_control and extension
 * loading: what Go's database/sql driver (mattn/go-sqlite3) calls beyond the core API.
 * Usage: hooks DIR */
#include "common.h"
#include <errno.h>

static int commits, rollbacks, veto;
static int on_commit(void *arg) {
  commits++;
  printf("  commit hook (%s)%s\n", (const char *)arg, veto ? ": veto" : "");
  return veto;
}
static void on_rollback(void *arg) {
  rollbacks++;
  printf("  rollback hook (%s)\n", (const char *)arg);
}

static void on_update(void *arg, int op, const char *db, const char *table, sqlite3_int64 rowid) {
  const char *what = op == SQLITE_INSERT ? "INSERT" : op == SQLITE_DELETE ? "DELETE"
                   : op == SQLITE_UPDATE ? "UPDATE" : "?";
  printf("  update hook (%s): %s %s.%s rowid=%lld\n", (const char *)arg, what, db, table,
         (long long)rowid);
}

/* Inside a hook the connection may not be used: SQLite leaves it undefined, so only a
 * call that both libraries answer the same is made (none); the counts are printed. */
static void counts(const char *when) {
  printf("%s: commits=%d rollbacks=%d\n", when, commits, rollbacks);
}

int main(int argc, char **argv) {
  if (argc < 2) return 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/hooks.db", argv[1]);
  sqlite3 *db = open_or_die(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  run(db, "PRAGMA journal_mode=WAL");

  /* The hooks return the previous argument. */
  printf("first commit hook: %p\n", sqlite3_commit_hook(db, on_commit, "c1"));
  printf("replaced: %s\n", (const char *)sqlite3_commit_hook(db, on_commit, "c2"));
  printf("first rollback hook: %p\n", sqlite3_rollback_hook(db, on_rollback, "r1"));

  run(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, u UNIQUE, v)");
  counts("after CREATE (autocommit)");
  run(db, "INSERT INTO t(u, v) VALUES (1, 'a')");
  run(db, "SELECT count(*) FROM t");
  counts("after an autocommit INSERT and a SELECT");
  run(db, "INSERT INTO t(u, v) VALUES (1, 'dup')");
  counts("after a failing autocommit INSERT");
  run(db, "BEGIN; INSERT INTO t(u, v) VALUES (2, 'b'); COMMIT");
  run(db, "BEGIN; INSERT INTO t(u, v) VALUES (3, 'c'); ROLLBACK");
  run(db, "BEGIN; SELECT count(*) FROM t; COMMIT");
  run(db, "BEGIN; SELECT count(*) FROM t; ROLLBACK");
  run(db, "BEGIN IMMEDIATE; COMMIT");
  run(db, "SAVEPOINT s; INSERT INTO t(u, v) VALUES (4, 'd'); RELEASE s");
  run(db, "SAVEPOINT s; INSERT INTO t(u, v) VALUES (5, 'e'); ROLLBACK TO s; RELEASE s");
  run(db, "BEGIN; INSERT INTO t(u, v) VALUES (6, 'f'); INSERT INTO t(u, v) VALUES (6, 'g'); COMMIT");
  run(db, "BEGIN; INSERT OR ROLLBACK INTO t(u, v) VALUES (2, 'x')");
  printf("autocommit after OR ROLLBACK: %d\n", sqlite3_get_autocommit(db));
  counts("after explicit transactions");

  /* A commit hook that refuses: the COMMIT fails and the transaction is rolled back. */
  veto = 1;
  run(db, "BEGIN; INSERT INTO t(u, v) VALUES (7, 'vetoed'); COMMIT");
  printf("autocommit after a refused COMMIT: %d\n", sqlite3_get_autocommit(db));
  run(db, "INSERT INTO t(u, v) VALUES (8, 'vetoed autocommit')");
  veto = 0;
  run(db, "SELECT u, v FROM t ORDER BY u");
  counts("after refused commits");

  /* Removing the hooks returns their arguments; nothing is called after. */
  printf("removed commit hook: %s\n", (const char *)sqlite3_commit_hook(db, 0, 0));
  printf("removed rollback hook: %s\n", (const char *)sqlite3_rollback_hook(db, 0, 0));
  printf("removed again: %p %p\n", sqlite3_commit_hook(db, 0, 0), sqlite3_rollback_hook(db, 0, 0));
  run(db, "BEGIN; INSERT INTO t(u, v) VALUES (9, 'i'); ROLLBACK; INSERT INTO t(u, v) VALUES (10, 'j')");
  counts("after removing the hooks");

  /* The update hook: every row of a rowid table as it is written, by statements, their
   * triggers and foreign-key actions; not WITHOUT ROWID tables, sqlite_ tables, rows a
   * REPLACE deletes or a DELETE that empties a table whole. */
  printf("first update hook: %p\n", sqlite3_update_hook(db, on_update, "u1"));
  run(db, "PRAGMA foreign_keys = ON");
  run(db, "CREATE TABLE p(id INTEGER PRIMARY KEY, k UNIQUE)");
  run(db, "CREATE TABLE c(id INTEGER PRIMARY KEY AUTOINCREMENT, "
          "pid REFERENCES p(id) ON DELETE CASCADE ON UPDATE CASCADE, note)");
  run(db, "CREATE TABLE w(a PRIMARY KEY, b) WITHOUT ROWID");
  run(db, "CREATE TABLE log(id INTEGER PRIMARY KEY, msg)");
  run(db, "CREATE TRIGGER tr AFTER INSERT ON p BEGIN INSERT INTO log(msg) VALUES ('p ' || new.id); END");
  run(db, "INSERT INTO p VALUES (1, 'a'), (2, 'b'), (3, 'c')");
  run(db, "INSERT INTO c(pid, note) VALUES (1, 'x'), (1, 'y'), (2, 'z')");
  run(db, "INSERT INTO w VALUES (1, 2)");
  run(db, "UPDATE w SET b = 3");
  run(db, "UPDATE c SET note = note || '!' WHERE pid = 1");
  run(db, "UPDATE p SET id = 10 WHERE id = 1");
  run(db, "UPDATE p SET k = 'bb' WHERE id = 2");
  run(db, "REPLACE INTO p VALUES (20, 'bb')");
  run(db, "INSERT INTO p VALUES (30, 'c') ON CONFLICT(k) DO UPDATE SET id = 31");
  run(db, "INSERT OR IGNORE INTO p VALUES (40, 'c')");
  run(db, "DELETE FROM p WHERE id = 10");
  run(db, "BEGIN; INSERT INTO log(msg) VALUES ('rolled back'); ROLLBACK");
  run(db, "INSERT INTO log(msg) SELECT 'copy ' || msg FROM log WHERE id <= 2");
  run(db, "DELETE FROM log WHERE id > 3");
  run(db, "DELETE FROM log");
  run(db, "CREATE TEMP TABLE tt(x)");
  run(db, "INSERT INTO tt VALUES (1)");
  run(db, "ATTACH ':memory:' AS aux");
  run(db, "CREATE TABLE aux.at(x)");
  run(db, "INSERT INTO aux.at VALUES (7); UPDATE aux.at SET x = 8; DELETE FROM aux.at WHERE x = 8");
  printf("removed update hook: %s\n", (const char *)sqlite3_update_hook(db, 0, 0));
  run(db, "INSERT INTO log(msg) VALUES ('unseen')");

  /* 64-bit binds: UTF-8 with a length or to the NUL, UTF-16 both orders, blobs. */
  sqlite3_stmt *st = 0;
  sqlite3_prepare_v2(db, "SELECT ?1, typeof(?1), length(?1), ?2, typeof(?2), ?3, ?4, ?5", -1, &st, 0);
  show(db, "bind_text64 utf8 n=3",
       sqlite3_bind_text64(st, 1, "héllo", 3, SQLITE_TRANSIENT, SQLITE_UTF8));
  show(db, "bind_blob64", sqlite3_bind_blob64(st, 2, "\x01\x00\x02", 3, SQLITE_STATIC));
  show(db, "bind_text64 utf8 to NUL",
       sqlite3_bind_text64(st, 3, "to the nul", (sqlite3_uint64)-1, SQLITE_STATIC, SQLITE_UTF8));
  const unsigned char le[] = {'h', 0, 0xe9, 0, '!', 0, 0, 0};
  const unsigned char be[] = {0, 'h', 0, 0xe9, 0, '?'};
  show(db, "bind_text64 utf16le", sqlite3_bind_text64(st, 4, (const char *)le, 6, SQLITE_STATIC, SQLITE_UTF16LE));
  show(db, "bind_text64 utf16be", sqlite3_bind_text64(st, 5, (const char *)be, 6, SQLITE_STATIC, SQLITE_UTF16BE));
  print_rows(st);
  show(db, "bind_text64 on a statement not reset",
       sqlite3_bind_text64(st, 1, "x", 1, SQLITE_STATIC, SQLITE_UTF8));
  sqlite3_reset(st);
  show(db, "bind_blob64 too big", sqlite3_bind_blob64(st, 2, "x", 2000000001ULL, SQLITE_STATIC));
  show(db, "bind_text64 too big",
       sqlite3_bind_text64(st, 1, "x", 2000000001ULL, SQLITE_STATIC, SQLITE_UTF8));
  show(db, "bind_blob64 too big, bad index", sqlite3_bind_blob64(st, 9, "x", 2000000001ULL, SQLITE_STATIC));
  print_rows(st);
  sqlite3_finalize(st);

  /* sqlite3_stmt_status: runs, and re-prepares after another connection changes the
   * schema. */
  sqlite3_prepare_v2(db, "SELECT * FROM t WHERE u = 2", -1, &st, 0);
  printf("runs before: %d reprepares: %d\n", sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0),
         sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0));
  print_rows(st);
  sqlite3_reset(st);
  print_rows(st);
  printf("runs: %d reprepares: %d\n", sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0),
         sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0));
  sqlite3 *other = open_or_die(path, SQLITE_OPEN_READWRITE);
  run(other, "ALTER TABLE t ADD COLUMN w DEFAULT 'new'");
  sqlite3_reset(st);
  print_rows(st);
  printf("columns: %d runs: %d reprepares: %d\n", sqlite3_column_count(st),
         sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 1),
         sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 1));
  printf("after reset flag: runs %d reprepares %d\n", sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0),
         sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0));
  sqlite3_finalize(st);
  sqlite3_close(other);

  /* sqlite3_db_filename: the main file's full path, "" for TEMP and memory, NULL for a
   * name with no database. */
  const char *file = sqlite3_db_filename(db, "main");
  printf("main file ends with /hooks.db: %d\n",
         file && strlen(file) >= 9 && strcmp(file + strlen(file) - 9, "/hooks.db") == 0 && file[0] == '/');
  printf("NULL name is main: %d\n", sqlite3_db_filename(db, 0) == file || strcmp(sqlite3_db_filename(db, 0), file) == 0);
  printf("temp: [%s]\n", sqlite3_db_filename(db, "temp"));
  printf("nosuch: %s\n", sqlite3_db_filename(db, "nosuch") ? "not NULL" : "NULL");
  run(db, "ATTACH ':memory:' AS mem");
  printf("attached in memory: [%s]\n", sqlite3_db_filename(db, "mem"));

  /* sqlite3_system_errno after a failed open. */
  sqlite3 *bad = 0;
  snprintf(path, sizeof path, "%s/no/such/dir/x.db", argv[1]);
  int rc = sqlite3_open_v2(path, &bad, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 0);
  printf("open in a missing directory: rc=%d system_errno is ENOENT: %d\n", rc,
         sqlite3_system_errno(bad) == ENOENT);
  sqlite3_close(bad);
  snprintf(path, sizeof path, "%s/missing.db", argv[1]);
  rc = sqlite3_open_v2(path, &bad, SQLITE_OPEN_READWRITE, 0);
  printf("open a missing file without CREATE: rc=%d system_errno is ENOENT: %d\n", rc,
         sqlite3_system_errno(bad) == ENOENT);
  sqlite3_close(bad);

  /* sqlite3_file_control: an unknown opcode, a missing database. */
  int arg = 0;
  printf("file_control unknown op: %d\n", sqlite3_file_control(db, "main", 9999, &arg));
  printf("file_control no such db: %d\n", sqlite3_file_control(db, "nosuch", 9999, &arg));

  /* Extension loading: a library that is not there fails either way (the messages are
   * each library's own). */
  char *err = 0;
  rc = sqlite3_load_extension(db, "nosuch_extension", 0, &err);
  printf("load_extension: rc=%d message: %d\n", rc, err != 0);
  sqlite3_free(err);
  printf("enable_load_extension: %d\n", sqlite3_enable_load_extension(db, 1));
  printf("disable: %d\n", sqlite3_enable_load_extension(db, 0));

  sqlite3_close(db);
  return 0;
}
