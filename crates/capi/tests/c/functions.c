/* Application-defined functions (sqlite3_create_function_v2, sqlite3_value_*,
 * sqlite3_result_*, sqlite3_aggregate_context, xDestroy), trace, progress, interrupt,
 * limits, expanded SQL, declared types and sqlite3_stricmp: printed on both libraries. */
#include "common.h"

static sqlite3 *the_db;
static int destroyed;
static void count_destroy(void *p) { destroyed++; (void)p; }

/* result(kind, ...) returns a value of the kind named by its first argument. */
static void result_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  const char *kind = (const char *)sqlite3_value_text(argv[0]);
  if (!strcmp(kind, "int64")) sqlite3_result_int64(ctx, -9223372036854775807LL - 1);
  else if (!strcmp(kind, "int")) sqlite3_result_int(ctx, -7);
  else if (!strcmp(kind, "double")) sqlite3_result_double(ctx, 0.1);
  else if (!strcmp(kind, "nan")) sqlite3_result_double(ctx, 0.0 / 0.0);
  else if (!strcmp(kind, "text")) sqlite3_result_text(ctx, "hello", -1, SQLITE_TRANSIENT);
  else if (!strcmp(kind, "text3")) sqlite3_result_text(ctx, "hello", 3, SQLITE_STATIC);
  else if (!strcmp(kind, "textfree")) {
    char *p = malloc(4);
    memcpy(p, "abc", 4);
    sqlite3_result_text(ctx, p, -1, free);
  } else if (!strcmp(kind, "blob")) sqlite3_result_blob(ctx, "\x00\x01\x02", 3, SQLITE_TRANSIENT);
  else if (!strcmp(kind, "zeroblob")) sqlite3_result_zeroblob(ctx, 4);
  else if (!strcmp(kind, "null")) sqlite3_result_null(ctx);
  else if (!strcmp(kind, "error")) sqlite3_result_error(ctx, "my error", -1);
  else if (!strcmp(kind, "error3")) sqlite3_result_error(ctx, "my error", 3);
  else if (!strcmp(kind, "error_then_int")) {
    sqlite3_result_error(ctx, "sticky", -1);
    sqlite3_result_int(ctx, 1);
  } else if (!strcmp(kind, "toobig")) sqlite3_result_error_toobig(ctx);
  else if (!strcmp(kind, "code")) sqlite3_result_error_code(ctx, SQLITE_CONSTRAINT);
  else if (!strcmp(kind, "msg_code")) {
    sqlite3_result_error(ctx, "with a message", -1);
    sqlite3_result_error_code(ctx, SQLITE_ABORT);
  } else if (!strcmp(kind, "argc")) sqlite3_result_int(ctx, argc);
  else if (!strcmp(kind, "user_data")) sqlite3_result_text(ctx, sqlite3_user_data(ctx), -1, SQLITE_TRANSIENT);
  else if (!strcmp(kind, "db")) sqlite3_result_int(ctx, sqlite3_context_db_handle(ctx) == the_db);
  /* no result set: NULL */
}

/* conv(x) reports what each sqlite3_value accessor makes of x. */
static void conv_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  char buf[400];
  sqlite3_value *v = argv[0];
  int type = sqlite3_value_type(v);
  long long i = sqlite3_value_int64(v);
  int i32 = sqlite3_value_int(v);
  double d = sqlite3_value_double(v);
  const unsigned char *t = sqlite3_value_text(v);
  int tn = sqlite3_value_bytes(v);
  const void *b = sqlite3_value_blob(v);
  int bn = sqlite3_value_bytes(v);
  snprintf(buf, sizeof buf, "type=%d int64=%lld int=%d double=%.17g text=%s(%d) blob=%s(%d)",
           type, i, i32, d, t ? (const char *)t : "NULL", tn, b ? "ptr" : "NULL", bn);
  (void)argc;
  sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
}

/* isum(x): the sum of x over the group, in sqlite3_aggregate_context memory; the final
 * reports whether any step allocated it. */
static int finals;
static void isum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  long long *acc = sqlite3_aggregate_context(ctx, sizeof(long long));
  (void)argc;
  if (sqlite3_value_type(argv[0]) == SQLITE_TEXT && !strcmp((const char *)sqlite3_value_text(argv[0]), "fail")) {
    sqlite3_result_error(ctx, "step failed", -1);
    return;
  }
  *acc += sqlite3_value_int64(argv[0]);
}
static void isum_final(sqlite3_context *ctx) {
  long long *acc = sqlite3_aggregate_context(ctx, 0);
  finals++;
  if (acc) sqlite3_result_int64(ctx, *acc);
  else sqlite3_result_text(ctx, "no rows", -1, SQLITE_STATIC);
}

static int trace_cb(unsigned type, void *ctx, void *p, void *x) {
  (void)ctx;
  if (type == SQLITE_TRACE_STMT) {
    char *e = sqlite3_expanded_sql(p);
    printf("  trace STMT [%s] expanded [%s]\n", (const char *)x, e);
    sqlite3_free(e);
  } else if (type == SQLITE_TRACE_ROW) {
    printf("  trace ROW\n");
  } else if (type == SQLITE_TRACE_PROFILE) {
    printf("  trace PROFILE ns>=0:%d\n", *(sqlite3_int64 *)x >= 0);
  } else if (type == SQLITE_TRACE_CLOSE) {
    printf("  trace CLOSE db=%d\n", p == the_db);
  }
  return 0;
}

static int progress_calls, progress_stop;
static int progress_cb(void *arg) {
  (void)arg;
  progress_calls++;
  return progress_stop;
}

int main(int argc, char **argv) {
  char path[512];
  sqlite3 *db;
  if (argc < 2) return 2;
  snprintf(path, sizeof path, "%s/functions.db", argv[1]);
  show(0, "open", sqlite3_open(path, &db));
  the_db = db;

  /* ---- scalar results ---- */
  show(db, "create result", sqlite3_create_function_v2(db, "result", -1, SQLITE_UTF8, "the user data", result_fn, 0, 0, count_destroy));
  const char *kinds[] = {"int64", "int", "double", "nan", "text", "text3", "textfree", "blob", "zeroblob", "null",
                         "error", "error3", "error_then_int", "toobig", "code", "msg_code", "argc", "user_data", "db", "none"};
  for (unsigned k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    char sql[100];
    snprintf(sql, sizeof sql, "SELECT result('%s', 1, 2)", kinds[k]);
    run(db, sql);
  }

  /* ---- argument conversions ---- */
  show(db, "create conv", sqlite3_create_function(db, "conv", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, 0, conv_fn, 0, 0));
  run(db, "SELECT conv(42), conv(-1.5), conv('12abc'), conv(' 3.5e2x'), conv(x'414243'), conv(''), conv(x''), conv(NULL), conv(9223372036854775807), conv(1e300)");

  /* ---- aggregates ---- */
  show(db, "create isum", sqlite3_create_function_v2(db, "isum", 1, SQLITE_UTF8, 0, 0, isum_step, isum_final, count_destroy));
  sqlite3_exec(db, "CREATE TABLE t(g, x); INSERT INTO t VALUES (1, 10), (1, 20), (2, 5), (2, 'fail'), (3, NULL)", 0, 0, 0);
  finals = 0;
  run(db, "SELECT isum(x) FROM t WHERE g = 1");
  run(db, "SELECT isum(x) FROM t WHERE 0");
  run(db, "SELECT g, isum(x) FROM t WHERE g <> 2 GROUP BY g ORDER BY g");
  run(db, "SELECT isum(x) FROM t");
  run(db, "SELECT isum(DISTINCT g) FROM t");
  printf("finals called: %d\n", finals > 0);

  /* ---- definition errors and xDestroy ---- */
  destroyed = 0;
  show(db, "nArg -2", sqlite3_create_function_v2(db, "bad", -2, SQLITE_UTF8, 0, conv_fn, 0, 0, count_destroy));
  show(db, "xFunc and xStep", sqlite3_create_function_v2(db, "bad", 1, SQLITE_UTF8, 0, conv_fn, isum_step, isum_final, count_destroy));
  show(db, "xStep without xFinal", sqlite3_create_function_v2(db, "bad", 1, SQLITE_UTF8, 0, 0, isum_step, 0, count_destroy));
  printf("destroyed after failures: %d\n", destroyed);
  show(db, "replace result", sqlite3_create_function_v2(db, "result", -1, SQLITE_UTF8, "new data", result_fn, 0, 0, count_destroy));
  printf("destroyed after replace: %d\n", destroyed);
  run(db, "SELECT result('user_data')");
  show(db, "delete result", sqlite3_create_function_v2(db, "result", -1, SQLITE_UTF8, 0, 0, 0, 0, 0));
  printf("destroyed after delete: %d\n", destroyed);
  run(db, "SELECT result('int')");
  run(db, "SELECT conv(1, 2)");
  show(db, "override upper", sqlite3_create_function(db, "upper", 1, SQLITE_UTF8, 0, conv_fn, 0, 0));
  run(db, "SELECT upper('x'), upper('a', 'b')");
  run(db, "CREATE INDEX tc ON t(conv(x))");
  run(db, "SELECT count(*) FROM t WHERE conv(x) LIKE 'type=1%'");
  run(db, "SELECT isum(x) OVER () FROM t");

  /* ---- trace, expanded SQL ---- */
  show(db, "trace_v2", sqlite3_trace_v2(db, SQLITE_TRACE_STMT | SQLITE_TRACE_ROW | SQLITE_TRACE_PROFILE | SQLITE_TRACE_CLOSE, trace_cb, 0));
  {
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT ?, ?5, :name, @x, $y, ?  ;", -1, &st, 0);
    sqlite3_bind_int(st, 1, 7);
    sqlite3_bind_text(st, 5, "it's", -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 6, 2.5);
    sqlite3_bind_blob(st, 7, "\x01\xab", 2, SQLITE_STATIC);
    char *e = sqlite3_expanded_sql(st);
    printf("expanded before step [%s] sql [%s]\n", e, sqlite3_sql(st));
    sqlite3_free(e);
    print_rows(st);
    sqlite3_reset(st);
    printf("after reset\n");
    sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_finalize(st);
  }
  run(db, "SELECT x FROM t WHERE g = 1 ORDER BY x");
  run(db, "SELEC");
  sqlite3_trace_v2(db, 0, 0, 0);
  run(db, "SELECT 'untraced'");

  /* ---- progress handler and interrupt ---- */
  progress_calls = 0;
  progress_stop = 0;
  sqlite3_progress_handler(db, 1, progress_cb, 0);
  run(db, "SELECT count(*) FROM t");
  printf("progress called: %d\n", progress_calls > 0);
  progress_stop = 1;
  run(db, "SELECT count(*) FROM t");
  run(db, "INSERT INTO t VALUES (9, 9)");
  sqlite3_progress_handler(db, 0, 0, 0);
  run(db, "SELECT count(*) FROM t");
  sqlite3_interrupt(db);
  run(db, "SELECT 'idle interrupt is forgotten'");
  {
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT x FROM t ORDER BY x", -1, &st, 0);
    show(db, "first step", sqlite3_step(st));
    sqlite3_interrupt(db);
    show(db, "step after interrupt", sqlite3_step(st));
    show(db, "reset", sqlite3_reset(st));
    /* (SQLite's errmsg still says "interrupted" here: a step keeps the last message.) */
    printf("rerun: rc=%d\n", sqlite3_step(st));
    sqlite3_finalize(st);
  }
  {
    char *err = 0;
    sqlite3_interrupt(db);
    show(db, "exec after interrupt", sqlite3_exec(db, "SELECT 1", 0, 0, &err));
    printf("  exec message [%s]\n", err ? err : "(none)");
    sqlite3_free(err);
  }

  /* ---- limits ---- */
  printf("limit LENGTH %d\n", sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1));
  printf("limit ATTACHED set 0 -> %d\n", sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0));
  printf("limit ATTACHED now %d\n", sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1));
  run(db, "ATTACH ':memory:' AS a");
  printf("limit 99 %d, limit -1 %d\n", sqlite3_limit(db, 99, -1), sqlite3_limit(db, -1, 5));

  /* ---- declared types ---- */
  sqlite3_exec(db, "CREATE TABLE dt(id INTEGER PRIMARY KEY, a VARCHAR(10), b, c Custom Type)", 0, 0, 0);
  {
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT a, b, c, a || '', rowid, (SELECT c FROM dt), 1 FROM dt", -1, &st, 0);
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const char *d = sqlite3_column_decltype(st, i);
      printf("decltype %d: %s\n", i, d ? d : "NULL");
    }
    printf("decltype 99: %s\n", sqlite3_column_decltype(st, 99) ? "?" : "NULL");
    sqlite3_finalize(st);
    sqlite3_prepare_v2(db, "SELECT s.c FROM (SELECT c FROM dt) AS s", -1, &st, 0);
    const char *d = sqlite3_column_decltype(st, 0);
    printf("decltype through subquery: %s\n", d ? d : "NULL");
    sqlite3_finalize(st);
  }

  /* ---- stricmp ---- */
  printf("stricmp %d %d %d %d %d\n", sqlite3_stricmp("abc", "ABC"), sqlite3_stricmp("abc", "abd") < 0,
         sqlite3_stricmp("b", "A") > 0, sqlite3_stricmp(0, "a"), sqlite3_stricmp("a", 0));
  printf("strnicmp %d %d\n", sqlite3_strnicmp("abcX", "ABCy", 3), sqlite3_strnicmp("abcX", "ABCy", 4) < 0);

  /* ---- close: the remaining definitions are destroyed ---- */
  sqlite3_trace_v2(db, SQLITE_TRACE_CLOSE, trace_cb, 0);
  destroyed = 0;
  show(0, "close", sqlite3_close(db));
  printf("destroyed at close: %d\n", destroyed);
  return 0;
}
