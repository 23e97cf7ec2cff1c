/* Application-defined collations (sqlite3_create_collation, _v2 with xDestroy,
 * sqlite3_collation_needed) and window functions (sqlite3_create_window_function): what
 * each call answers and what queries using them return, printed on both libraries. */
#include "common.h"

/* Runs one statement, printing its rows, or its error whether prepare or step gave it:
 * a statement needing a collation its schema names and the connection lacks fails at
 * prepare in SQLite and at its first step in parlite (README, C API). */
static void run_either(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = 0;
  printf("run %s\n", sql);
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, 0);
  if (rc == SQLITE_OK) {
    rc = print_rows(st);
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
  }
  if (rc != SQLITE_OK) show(db, "  error", rc);
  sqlite3_finalize(st);
}

static int destroyed_rev, destroyed_fold, destroyed_win;
static void destroy_rev(void *p) { destroyed_rev++; (void)p; }
static void destroy_fold(void *p) { destroyed_fold++; (void)p; }
static void destroy_win(void *p) { destroyed_win++; (void)p; }

static int bytes_cmp(int na, const void *a, int nb, const void *b) {
  int n = na < nb ? na : nb;
  int c = memcmp(a, b, n);
  return c ? c : na - nb;
}

/* rev: BINARY reversed. */
static int rev(void *arg, int na, const void *a, int nb, const void *b) {
  (void)arg;
  return -bytes_cmp(na, a, nb, b);
}

/* fold: ASCII case folded, then the lengths. */
static int fold(void *arg, int na, const void *a, int nb, const void *b) {
  const unsigned char *x = a, *y = b;
  (void)arg;
  for (int i = 0; i < na && i < nb; i++) {
    int p = x[i] >= 'A' && x[i] <= 'Z' ? x[i] + 32 : x[i];
    int q = y[i] >= 'A' && y[i] <= 'Z' ? y[i] + 32 : y[i];
    if (p != q) return p - q;
  }
  return na - nb;
}

/* utf16len: orders by the byte length it is given (UTF-16: two per character here). */
static int utf16len(void *arg, int na, const void *a, int nb, const void *b) {
  (void)arg; (void)a; (void)b;
  return na - nb;
}

static void needed(void *arg, sqlite3 *db, int rep, const char *name) {
  (void)arg;
  printf("  needed: %s rep=%d\n", name, rep);
  if (!strcmp(name, "late") || !strcmp(name, "LATE"))
    sqlite3_create_collation(db, name, SQLITE_UTF8, 0, rev);
}

/* wsum(x): the sum of the frame's integers; xValue and xInverse keep it per frame. */
static void wsum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  long long *acc = sqlite3_aggregate_context(ctx, sizeof *acc);
  (void)argc;
  if (acc) *acc += sqlite3_value_int64(argv[0]);
}
static void wsum_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  long long *acc = sqlite3_aggregate_context(ctx, sizeof *acc);
  (void)argc;
  if (acc) *acc -= sqlite3_value_int64(argv[0]);
}
static void wsum_value(sqlite3_context *ctx) {
  long long *acc = sqlite3_aggregate_context(ctx, 0);
  sqlite3_result_int64(ctx, acc ? *acc : -1);
}
static void wsum_final(sqlite3_context *ctx) {
  long long *acc = sqlite3_aggregate_context(ctx, 0);
  sqlite3_result_int64(ctx, acc ? *acc : -1);
}

int main(int argc, char **argv) {
  char path[4096];
  snprintf(path, sizeof path, "%s/collations.db", argc > 1 ? argv[1] : ".");
  sqlite3 *db = open_or_die(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);

  run_either(db, "CREATE TABLE t(a TEXT COLLATE nope)");
  show(db, "create rev", sqlite3_create_collation_v2(db, "rev", SQLITE_UTF8, 0, rev, destroy_rev));
  show(db, "create Fold", sqlite3_create_collation_v2(db, "Fold", SQLITE_UTF8, 0, fold, destroy_fold));
  show(db, "bad encoding", sqlite3_create_collation(db, "bad", 99, 0, rev));
  run(db, "CREATE TABLE t(a TEXT COLLATE rev, b TEXT COLLATE fold UNIQUE, n INT);"
          "CREATE INDEX ta ON t(a);"
          "INSERT INTO t VALUES('a','x',1),('c','Y',2),('b','z',3),('B','Zz',4),('ab','w',5);");
  run(db, "INSERT INTO t VALUES('q','X',6)");
  run(db, "SELECT a FROM t ORDER BY a");
  run(db, "SELECT a FROM t WHERE a > 'b' ORDER BY a DESC");
  run(db, "SELECT b FROM t ORDER BY b");
  run(db, "SELECT b FROM t WHERE b = 'ZZ'");
  run(db, "SELECT min(a), max(a), min(b), max(b) FROM t");
  run(db, "SELECT count(*) FROM t GROUP BY a COLLATE fold ORDER BY 1");
  run(db, "SELECT DISTINCT a COLLATE fold FROM t ORDER BY 1");
  run(db, "SELECT 'a' < 'b' COLLATE rev, 'A' = 'a' COLLATE FOLD");
  run(db, "SELECT a FROM t ORDER BY a COLLATE nope");

  /* Redefinition runs the old xDestroy; a prepared statement uses the new definition. */
  sqlite3_stmt *st = 0;
  sqlite3_prepare_v2(db, "SELECT group_concat(a, '') FROM (SELECT a FROM t ORDER BY a)", -1, &st, 0);
  print_rows(st);
  sqlite3_reset(st);
  show(db, "redefine rev as fold", sqlite3_create_collation_v2(db, "REV", SQLITE_UTF8, 0, fold, destroy_rev));
  printf("destroyed rev: %d\n", destroyed_rev);
  show(db, "  step", print_rows(st));
  sqlite3_finalize(st);
  show(db, "delete rev", sqlite3_create_collation(db, "rev", SQLITE_UTF8, 0, 0));
  printf("destroyed rev: %d\n", destroyed_rev);
  run_either(db, "SELECT a FROM t ORDER BY a");
  run(db, "SELECT n FROM t ORDER BY n");
  run_either(db, "INSERT INTO t VALUES('d','v',7)");

  /* A collation asked for when a statement needs it. */
  show(db, "collation_needed", sqlite3_collation_needed(db, 0, needed));
  run(db, "SELECT 'a' < 'b' COLLATE LATE");
  run(db, "SELECT 'a' < 'b' COLLATE late");
  run(db, "SELECT 'a' < 'b' COLLATE other");
  show(db, "collation_needed off", sqlite3_collation_needed(db, 0, 0));
  run(db, "SELECT 'a' < 'b' COLLATE other2");

  /* UTF-16 comparisons get UTF-16 text. */
  show(db, "utf16", sqlite3_create_collation(db, "u16", SQLITE_UTF16, 0, utf16len));
  run(db, "SELECT x FROM (VALUES('ccc'),('a'),('bb')) ORDER BY x COLLATE u16");

  /* Window functions. */
  show(db, "window value only", sqlite3_create_window_function(db, "w", 1, SQLITE_UTF8, 0,
       wsum_step, wsum_final, wsum_value, 0, 0));
  show(db, "window", sqlite3_create_window_function(db, "wsum", 1, SQLITE_UTF8, 0,
       wsum_step, wsum_final, wsum_value, wsum_inverse, destroy_win));
  show(db, "plain aggregate", sqlite3_create_window_function(db, "psum", 1, SQLITE_UTF8, 0,
       wsum_step, wsum_final, 0, 0, 0));
  run(db, "CREATE TABLE w(g, k, x); INSERT INTO w VALUES(1,1,1),(1,2,2),(1,2,4),(2,5,8),(2,9,16),(1,3,32)");
  run(db, "SELECT wsum(x), psum(x) FROM w");
  run(db, "SELECT k, wsum(x) OVER (ORDER BY k, x ROWS 1 PRECEDING) FROM w ORDER BY k, x");
  run(db, "SELECT k, wsum(x) OVER (ORDER BY k RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w ORDER BY k, x");
  run(db, "SELECT k, wsum(x) OVER (PARTITION BY g ORDER BY k GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING) FROM w ORDER BY k, x");
  run(db, "SELECT k, wsum(x) OVER (ORDER BY k ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) FROM w ORDER BY k, x");
  run(db, "SELECT k, wsum(x) OVER (ORDER BY k ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING EXCLUDE CURRENT ROW) FROM w ORDER BY k, x");
  run(db, "SELECT psum(x) OVER (ORDER BY k) FROM w");
  show(db, "redefine window", sqlite3_create_window_function(db, "wsum", 1, SQLITE_UTF8, 0,
       wsum_step, wsum_final, wsum_value, wsum_inverse, destroy_win));
  printf("destroyed window: %d\n", destroyed_win);
  show(db, "delete window", sqlite3_create_window_function(db, "wsum", 1, SQLITE_UTF8, 0, 0, 0, 0, 0, 0));
  printf("destroyed window: %d\n", destroyed_win);
  run(db, "SELECT wsum(x) OVER () FROM w");

  printf("close: rc=%d\n", sqlite3_close(db));
  printf("destroyed: rev %d fold %d window %d\n", destroyed_rev, destroyed_fold, destroyed_win);

  /* Reopened without the collations its schema names. */
  db = open_or_die(path, SQLITE_OPEN_READWRITE);
  run(db, "SELECT n FROM t ORDER BY n");
  run_either(db, "SELECT b FROM t WHERE b = 'ZZ'");
  run_either(db, "INSERT INTO t VALUES('e','u',8)");
  show(db, "create fold again", sqlite3_create_collation(db, "fold", SQLITE_UTF8, 0, fold));
  run(db, "SELECT b FROM t WHERE b = 'ZZ'");
  run_either(db, "INSERT INTO t VALUES('e','zZ',8)");
  show(db, "create rev again", sqlite3_create_collation(db, "rev", SQLITE_UTF8, 0, rev));
  run(db, "INSERT INTO t VALUES('e','zZ',8)");
  run(db, "INSERT INTO t VALUES('e','u',8)");
  run(db, "SELECT a, b FROM t ORDER BY a");
  run(db, "PRAGMA integrity_check");
  printf("close: rc=%d\n", sqlite3_close(db));
  return 0;
}
