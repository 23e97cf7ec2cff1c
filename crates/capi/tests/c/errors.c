/* Errors and their codes, prepare tails, exec, the library-wide functions and misuse.
 * Usage: errors DIR */
#include "common.h"

static int rows_seen;
static int exec_cb(void *arg, int n, char **values, char **names) {
  printf("  cb(%s): n=%d", (const char *)arg, n);
  for (int i = 0; i < n; i++) printf(" %s=%s", names[i], values[i] ? values[i] : "NULL");
  printf("\n");
  return ++rows_seen >= 3; /* abort on the third row */
}

/* Walks the statements of `sql` as an application does, printing each tail. */
static void tails(sqlite3 *db, const char *sql, int nbyte) {
  const char *p = sql;
  printf("tails of [%s] nbyte=%d\n", sql, nbyte);
  const char *end = nbyte < 0 ? sql + strlen(sql) : sql + nbyte;
  while (p < end) {
    sqlite3_stmt *st = 0;
    const char *tail = 0;
    int rc = sqlite3_prepare_v2(db, p, (int)(end - p), &st, &tail);
    if (rc != SQLITE_OK) { show(db, "  prepare", rc); break; }
    printf("  stmt=%s tail=+%d sql=[%s]\n", st ? "yes" : "NULL", (int)(tail - p),
           st ? sqlite3_sql(st) : "");
    if (st) {
      rc = print_rows(st);
      if (rc != SQLITE_DONE) show(db, "  step", rc);
      sqlite3_finalize(st);
    }
    if (tail == p) break;
    p = tail;
  }
}

int main(int argc, char **argv) {
  if (argc < 2) return 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/errors.db", argv[1]);
  sqlite3 *db = open_or_die(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  show(db, "fresh handle", 0);
  run(db, "PRAGMA journal_mode=WAL");
  run(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, u UNIQUE, n NOT NULL DEFAULT 0, CHECK(n >= 0))");

  /* Prepare: several statements in one string, whitespace and comments, nByte. */
  tails(db, "SELECT 1; SELECT 2 ;  SELECT 'a;b';", -1);
  tails(db, "  /* c */ SELECT 3 -- trailing\n; -- only a comment\n  ", -1);
  tails(db, "SELECT 4; SELECT 5", 9);
  tails(db, "SELECT 6; SELECT 7", 8);
  tails(db, "", -1);
  tails(db, "   ", -1);
  tails(db, ";;SELECT 8;;", -1);
  tails(db, "SELECT 9  -- trailing, no semicolon\n ", -1);
  tails(db, "BEGIN ", -1);
  tails(db, "COMMIT  ;  ", -1);

  /* Prepare errors leave *ppStmt NULL and set the connection's error. */
  sqlite3_stmt *st = (sqlite3_stmt *)1;
  int rc = sqlite3_prepare_v2(db, "SELEC 1", -1, &st, 0);
  show(db, "syntax error", rc);
  printf("stmt after error=%p\n", (void *)st);
  rc = sqlite3_prepare_v2(db, "SELECT * FROM nope", -1, &st, 0);
  show(db, "no such table", rc);
  rc = sqlite3_prepare_v2(db, "SELECT nope FROM t", -1, &st, 0);
  show(db, "no such column", rc);
  rc = sqlite3_prepare_v2(db, "SELECT 1", -1, &st, 0);
  show(db, "prepare ok clears the error", rc);
  rc = sqlite3_step(st);
  show(db, "step row", rc);
  rc = sqlite3_step(st);
  show(db, "step done", rc);
  rc = sqlite3_reset(st);
  show(db, "reset after done", rc);
  rc = sqlite3_reset(st);
  show(db, "reset again", rc);
  sqlite3_finalize(st);

  /* Step errors: primary codes by default, extended ones when asked; reset and finalize
   * return the error again. */
  run(db, "INSERT INTO t(id, u) VALUES(1, 'a')");
  rc = sqlite3_prepare_v2(db, "INSERT INTO t(id, u, n) VALUES(?, ?, ?)", -1, &st, 0);
  sqlite3_bind_int(st, 1, 2);
  sqlite3_bind_text(st, 2, "a", -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 3, 0);
  rc = sqlite3_step(st);
  show(db, "unique violation", rc);
  printf("changes=%d\n", sqlite3_changes(db));
  rc = sqlite3_reset(st);
  show(db, "reset after error", rc);
  rc = sqlite3_reset(st);
  show(db, "second reset", rc);
  sqlite3_extended_result_codes(db, 1);
  rc = sqlite3_step(st);
  show(db, "unique violation, extended", rc);
  rc = sqlite3_reset(st);
  show(db, "reset, extended", rc);
  sqlite3_bind_int(st, 1, 1);
  sqlite3_bind_text(st, 2, "b", -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  show(db, "primary key violation", rc);
  rc = sqlite3_step(st);
  show(db, "step again after error", rc);
  sqlite3_reset(st);
  sqlite3_bind_int(st, 1, 3);
  sqlite3_bind_null(st, 3);
  rc = sqlite3_step(st);
  show(db, "not null violation", rc);
  sqlite3_reset(st);
  sqlite3_bind_int(st, 3, -1);
  rc = sqlite3_step(st);
  show(db, "check violation", rc);
  rc = sqlite3_finalize(st);
  show(db, "finalize after error", rc);
  sqlite3_extended_result_codes(db, 0);

  /* Errors inside a transaction undo the statement only. */
  run(db, "BEGIN; INSERT INTO t(id, u) VALUES(10, 'x'); INSERT INTO t(id, u) VALUES(11, 'x')");
  printf("autocommit=%d\n", sqlite3_get_autocommit(db));
  run(db, "COMMIT; SELECT id, u FROM t ORDER BY id");
  run(db, "COMMIT");
  run(db, "ROLLBACK");

  /* exec: callback rows, abort from the callback, errmsg from sqlite3_malloc. */
  char *err = (char *)1;
  rows_seen = 0;
  rc = sqlite3_exec(db, "SELECT id, u, NULL AS z FROM t ORDER BY id; SELECT 'second'", exec_cb, "a", &err);
  printf("exec=%d err=%s\n", rc, err ? err : "NULL");
  show(db, "after exec", rc);
  sqlite3_free(err);
  rows_seen = 0;
  rc = sqlite3_exec(db, "SELECT 1 AS one; SELECT 2 AS two; SELECT 3 AS three; SELECT 4", exec_cb, "b", &err);
  printf("exec abort=%d err=%s\n", rc, err ? err : "NULL");
  show(db, "after exec abort", rc);
  sqlite3_free(err);
  rc = sqlite3_exec(db, "INSERT INTO t(id, u) VALUES(20, 'y'); SELEC oops; INSERT INTO t(id, u) VALUES(21, 'z')", 0, 0, &err);
  printf("exec error=%d err=%s\n", rc, err ? err : "NULL");
  show(db, "after exec error", rc);
  sqlite3_free(err);
  rc = sqlite3_exec(db, "SELECT count(*) FROM t", exec_cb, "c", 0);
  printf("exec no errmsg pointer=%d\n", rc);
  rc = sqlite3_exec(db, "  ", 0, 0, &err);
  printf("exec blank=%d err=%s\n", rc, err ? err : "NULL");

  /* Result-code texts, completeness, sleep, memory. */
  int codes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                 22, 23, 24, 25, 26, 27, 28, 29, 99, 100, 101, 261, 516, 517, 2067, -1};
  for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
    printf("errstr(%d)=%s\n", codes[i], sqlite3_errstr(codes[i]));
  const char *texts[] = {"SELECT 1", "SELECT 1;", "SELECT 'a;", "SELECT 1; -- x", "/* ; */",
                         "CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT 1; END",
                         "CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT 1; END;", ";", "",
                         "SELECT \"a;\" ;", "SELECT [x;] ;"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
    printf("complete(%s)=%d\n", texts[i], sqlite3_complete(texts[i]));
  printf("sleep=%d threadsafe=%d\n", sqlite3_sleep(1), sqlite3_threadsafe() != 0);
  char *m = sqlite3_malloc(10);
  m = sqlite3_realloc(m, 100);
  strcpy(m, "grown");
  printf("malloc=%s malloc0=%p\n", m, sqlite3_malloc(0));
  sqlite3_free(m);
  sqlite3_free(sqlite3_malloc64(7));
  sqlite3_free(0);
  printf("version number consistent=%d\n",
         sqlite3_libversion_number() / 1000000 == 3 && sqlite3_libversion()[0] == '3');

  /* NULL handles (API armor) and misuse. */
  printf("errcode(NULL)=%d errmsg(NULL)=%s\n", sqlite3_errcode(0), sqlite3_errmsg(0));
  printf("step(NULL)=%d reset(NULL)=%d finalize(NULL)=%d close(NULL)=%d\n", sqlite3_step(0),
         sqlite3_reset(0), sqlite3_finalize(0), sqlite3_close(0));
  printf("column_count(NULL)=%d\n", sqlite3_column_count(0));
  printf("bind_int(NULL)=%d\n", sqlite3_bind_int(0, 1, 1));
  st = 0;
  printf("prepare(NULL db)=%d\n", sqlite3_prepare_v2(0, "SELECT 1", -1, &st, 0));
  rc = sqlite3_prepare_v2(db, 0, -1, &st, 0);
  show(db, "prepare(NULL sql)", rc);

  /* Opening: flags and missing files. */
  char missing[1100];
  snprintf(missing, sizeof missing, "%s/missing.db", argv[1]);
  sqlite3 *db2 = 0;
  rc = sqlite3_open_v2(missing, &db2, SQLITE_OPEN_READWRITE, 0);
  show(db2, "open missing without CREATE", rc);
  printf("handle given=%d\n", db2 != 0);
  rc = sqlite3_prepare_v2(db2, "SELECT 1", -1, &st, 0);
  printf("prepare on failed handle=%d\n", rc);
  printf("close failed handle=%d\n", sqlite3_close(db2));
  db2 = 0;
  rc = sqlite3_open_v2(missing, &db2, SQLITE_OPEN_READONLY, 0);
  show(db2, "open missing read-only", rc);
  sqlite3_close(db2);
  db2 = 0;
  rc = sqlite3_open_v2(missing, &db2, SQLITE_OPEN_CREATE, 0);
  printf("open CREATE alone=%d handle=%d\n", rc, db2 != 0);
  rc = sqlite3_open_v2(path, &db2, SQLITE_OPEN_READONLY, 0);
  show(db2, "open read-only", rc);
  run(db2, "SELECT count(*) FROM t");
  run(db2, "INSERT INTO t(id, u) VALUES(30, 'r')");
  sqlite3_close(db2);
  rc = sqlite3_open_v2(":memory:", &db2, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 0);
  run(db2, "CREATE TABLE m(x); INSERT INTO m VALUES(1); SELECT * FROM m");
  sqlite3_close(db2);
  rc = sqlite3_open(":memory:", &db2);
  show(db2, "sqlite3_open", rc);
  run(db2, "SELECT count(*) FROM sqlite_schema");

  /* close refuses while statements live; close_v2 defers until the last finalize. */
  rc = sqlite3_prepare_v2(db2, "SELECT 1", -1, &st, 0);
  rc = sqlite3_close(db2);
  show(db2, "close with a live statement", rc);
  rc = sqlite3_close_v2(db2);
  printf("close_v2 with a live statement=%d\n", rc);
  printf("step on the zombie's statement=%d\n", sqlite3_step(st));
  printf("finalize frees it=%d\n", sqlite3_finalize(st));

  printf("close=%d\n", sqlite3_close(db));
  return 0;
}
