/* Types, NULLs, text and blob bytes, conversions between column types, binding (every
 * bind_* kind, destructors, names, ranges, rebinding after reset), column names and counts,
 * changes and rowids. Usage: values DIR */
#include "common.h"

static int freed;
static void count_free(void *p) { freed++; free(p); }

static char *dup_str(const char *s) {
  char *p = malloc(strlen(s) + 1);
  strcpy(p, s);
  return p;
}

/* Every conversion of one value: int, int64, double, text, blob, bytes, then the type. */
static void conversions(sqlite3 *db, const char *expr) {
  char sql[256];
  sqlite3_stmt *st = 0;
  snprintf(sql, sizeof sql, "SELECT %s", expr);
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, 0);
  if (rc != SQLITE_OK) { show(db, sql, rc); return; }
  rc = sqlite3_step(st);
  printf("%s -> type=%d int=%d int64=%lld double=%.17g", expr, sqlite3_column_type(st, 0),
         sqlite3_column_int(st, 0), (long long)sqlite3_column_int64(st, 0),
         sqlite3_column_double(st, 0));
  const unsigned char *t = sqlite3_column_text(st, 0);
  int n = sqlite3_column_bytes(st, 0);
  printf(" text=");
  if (t) print_bytes(t, n); else printf("NULL");
  const void *b = sqlite3_column_blob(st, 0);
  printf(" blob=%s bytes=%d same_ptr=%d\n", b ? "ptr" : "NULL", sqlite3_column_bytes(st, 0),
         t != 0 && (const void *)t == b);
  sqlite3_finalize(st);
}

int main(int argc, char **argv) {
  if (argc < 2) return 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/values.db", argv[1]);
  sqlite3 *db = open_or_die(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  run(db, "PRAGMA journal_mode=WAL");

  /* Types and values straight from SQL. */
  run(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, a, b TEXT, c REAL, d BLOB)");
  run(db, "INSERT INTO t VALUES(1, 42, 'hello', 1.5, x'00ff10'), (2, NULL, '', 0.1, x''),"
          " (3, -9223372036854775808, 'caf\xc3\xa9', 1e300, NULL), (4, 'x', 'a''b', -0.0, 'txt')");
  printf("changes=%d total=%d rowid=%lld\n", sqlite3_changes(db), sqlite3_total_changes(db),
         (long long)sqlite3_last_insert_rowid(db));
  run(db, "SELECT * FROM t ORDER BY id");
  run(db, "SELECT 1, 2.5, 'x', x'41', NULL, 9223372036854775807, 1e15, 1e16, 123456789.123456789,"
          " 0.1+0.2, 1.0, -1.5e-7, char(0)||'z'");

  /* Conversions between types, as sqlite3_column_* define them. */
  const char *exprs[] = {"42", "-7", "3.99", "-3.99", "1e20", "'12abc'", "' 12 '", "'1e3'",
                         "'0x10'", "'abc'", "''", "x'3132'", "x''", "NULL", "0.5", "1.0",
                         "9223372036854775807", "'9223372036854775808'", "2147483648",
                         "'-4.5e2x'", "char(0)", "100.0", "12345678901234567.0"};
  for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++) conversions(db, exprs[i]);

  /* Binding: every kind, by position and by name. */
  sqlite3_stmt *st = 0;
  int rc = sqlite3_prepare_v2(db, "SELECT ?, :name, @at, $dollar, ?7, ?", -1, &st, 0);
  show(db, "prepare binds", rc);
  printf("param_count=%d\n", sqlite3_bind_parameter_count(st));
  for (int i = 0; i <= sqlite3_bind_parameter_count(st) + 1; i++) {
    const char *n = sqlite3_bind_parameter_name(st, i);
    printf("param %d name=%s\n", i, n ? n : "NULL");
  }
  const char *names[] = {":name", "@at", "$dollar", "?7", "name", ":nope", "?1"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    printf("index(%s)=%d\n", names[i], sqlite3_bind_parameter_index(st, names[i]));
  printf("bind_int=%d\n", sqlite3_bind_int(st, 1, -5));
  printf("bind_text -1=%d\n", sqlite3_bind_text(st, 2, "nul-terminated", -1, SQLITE_STATIC));
  printf("bind_text n=%d\n", sqlite3_bind_text(st, 3, "abcdef", 3, SQLITE_TRANSIENT));
  printf("bind_text nul=%d\n", sqlite3_bind_text(st, 4, "a\0b", 3, SQLITE_TRANSIENT));
  printf("bind_blob=%d\n", sqlite3_bind_blob(st, 5, "\x01\x02\x00\x03", 4, SQLITE_STATIC));
  printf("bind_double=%d\n", sqlite3_bind_double(st, 7, 2.25));
  printf("bind_int64=%d\n", sqlite3_bind_int64(st, 8, 1LL << 40));
  printf("bind_null=%d\n", sqlite3_bind_null(st, 6));
  rc = sqlite3_bind_int(st, 0, 1);
  show(db, "bind index 0", rc);
  rc = sqlite3_bind_int(st, 9, 1);
  show(db, "bind index 9", rc);
  rc = print_rows(st);
  show(db, "step binds", rc);

  /* Destructors run after the copy, and on a failed bind too. */
  rc = sqlite3_reset(st);
  show(db, "reset", rc);
  freed = 0;
  rc = sqlite3_bind_text(st, 1, dup_str("owned text"), -1, count_free);
  printf("bind owned=%d\n", rc);
  rc = sqlite3_bind_blob(st, 99, dup_str("owned blob"), 4, count_free);
  printf("bind owned out of range=%d\n", rc);
  rc = print_rows(st);
  printf("step=%d\n", rc);
  sqlite3_finalize(st);
  printf("freed after finalize=%d\n", freed);

  /* Rebinding: allowed after reset, a misuse while running or after DONE. */
  rc = sqlite3_prepare_v2(db, "SELECT id, b FROM t WHERE id >= ? ORDER BY id", -1, &st, 0);
  sqlite3_bind_int(st, 1, 2);
  rc = sqlite3_step(st);
  printf("step=%d data_count=%d\n", rc, sqlite3_data_count(st));
  rc = sqlite3_bind_int(st, 1, 3);
  show(db, "bind while running", rc);
  print_rows(st);
  printf("data_count after done=%d\n", sqlite3_data_count(st));
  rc = sqlite3_bind_int(st, 1, 3);
  show(db, "bind after done", rc);
  rc = sqlite3_reset(st);
  show(db, "reset", rc);
  rc = sqlite3_bind_int(st, 1, 3);
  show(db, "bind after reset", rc);
  print_rows(st);
  printf("step after done restarts:\n");
  print_rows(st);
  rc = sqlite3_clear_bindings(st);
  printf("clear_bindings=%d\n", rc);
  sqlite3_reset(st);
  print_rows(st);
  sqlite3_finalize(st);

  /* Column names and counts, before any step too. */
  rc = sqlite3_prepare_v2(db, "SELECT id AS ident, b, c*2, 'lit' FROM t LIMIT 1", -1, &st, 0);
  printf("column_count=%d data_count=%d\n", sqlite3_column_count(st), sqlite3_data_count(st));
  for (int i = -1; i <= sqlite3_column_count(st); i++) {
    const char *n = sqlite3_column_name(st, i);
    printf("name %d=%s\n", i, n ? n : "NULL");
  }
  printf("readonly=%d sql=[%s]\n", sqlite3_stmt_readonly(st), sqlite3_sql(st));
  printf("db_handle ok=%d\n", sqlite3_db_handle(st) == db);
  /* A column read with no current row reads NULL and records SQLITE_RANGE. */
  printf("type before step=%d\n", sqlite3_column_type(st, 0));
  show(db, "after column with no row", 0);
  sqlite3_step(st);
  printf("type out of range=%d text=%p\n", sqlite3_column_type(st, 9), (void *)sqlite3_column_text(st, 9));
  show(db, "after column out of range", 0);
  sqlite3_finalize(st);

  /* Writes: changes, total_changes, last_insert_rowid, readonly. */
  rc = sqlite3_prepare_v2(db, "INSERT INTO t(a) VALUES(?)", -1, &st, 0);
  printf("insert readonly=%d\n", sqlite3_stmt_readonly(st));
  for (int i = 0; i < 3; i++) {
    sqlite3_bind_int(st, 1, i);
    rc = sqlite3_step(st);
    printf("insert step=%d changes=%d rowid=%lld\n", rc, sqlite3_changes(db),
           (long long)sqlite3_last_insert_rowid(db));
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  run(db, "UPDATE t SET a = a + 1 WHERE id > 4");
  printf("update changes=%d total=%d autocommit=%d\n", sqlite3_changes(db),
         sqlite3_total_changes(db), sqlite3_get_autocommit(db));
  run(db, "BEGIN");
  printf("in transaction autocommit=%d\n", sqlite3_get_autocommit(db));
  run(db, "DELETE FROM t WHERE id > 4; COMMIT");
  printf("delete changes=%d total=%d autocommit=%d\n", sqlite3_changes(db),
         sqlite3_total_changes(db), sqlite3_get_autocommit(db));
  printf("changes64=%lld total64=%lld\n", (long long)sqlite3_changes64(db),
         (long long)sqlite3_total_changes64(db));

  rc = sqlite3_close(db);
  printf("close=%d\n", rc);
  return 0;
}
