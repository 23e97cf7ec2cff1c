/* Helpers of the differential C API tests (crates/capi/tests/c_api.rs): each program prints
 * what the API answers, and the test compares the output on parlite's libsqlite3.so.0 with
 * the output on the system SQLite. Print only what both must agree on (no versions). */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A call's result code and the connection's error state after it. */
static void show(sqlite3 *db, const char *what, int rc) {
  printf("%s: rc=%d errcode=%d ext=%d msg=[%s]\n", what, rc, sqlite3_errcode(db),
         sqlite3_extended_errcode(db), sqlite3_errmsg(db));
}

static void print_bytes(const unsigned char *p, int n) {
  putchar('\'');
  for (int i = 0; i < n; i++) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') putchar(p[i]);
    else printf("\\x%02x", p[i]);
  }
  putchar('\'');
}

/* Column i of the current row: its type, then the value as that type. */
static void print_column(sqlite3_stmt *st, int i) {
  int type = sqlite3_column_type(st, i);
  switch (type) {
    case SQLITE_INTEGER: printf("int:%lld", (long long)sqlite3_column_int64(st, i)); break;
    case SQLITE_FLOAT: printf("real:%.17g", sqlite3_column_double(st, i)); break;
    case SQLITE_TEXT: {
      const unsigned char *t = sqlite3_column_text(st, i);
      int n = sqlite3_column_bytes(st, i);
      printf("text(%d):", n);
      print_bytes(t, n);
      if (t[n] != 0) printf("<no NUL>");
      break;
    }
    case SQLITE_BLOB: {
      const void *b = sqlite3_column_blob(st, i);
      int n = sqlite3_column_bytes(st, i);
      printf("blob(%d):", n);
      if (b) print_bytes(b, n);
      else printf("NULL");
      break;
    }
    case SQLITE_NULL: printf("null"); break;
    default: printf("type %d?", type);
  }
}

/* Steps `st` to the end, printing each row; returns the last step's result. */
static int print_rows(sqlite3_stmt *st) {
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    printf("  row:");
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      printf(" ");
      print_column(st, i);
    }
    printf("\n");
  }
  return rc;
}

/* Prepares and runs every statement of `sql`, printing rows and each result. */
static void run(sqlite3 *db, const char *sql) {
  const char *tail = sql;
  printf("run %s\n", sql);
  while (tail && *tail) {
    sqlite3_stmt *st = 0;
    const char *next = 0;
    int rc = sqlite3_prepare_v2(db, tail, -1, &st, &next);
    if (rc != SQLITE_OK) { show(db, "  prepare", rc); return; }
    if (!st) break;
    rc = print_rows(st);
    if (rc != SQLITE_DONE) show(db, "  step", rc);
    rc = sqlite3_finalize(st);
    if (rc != SQLITE_OK) show(db, "  finalize", rc);
    tail = next;
  }
}

static sqlite3 *open_or_die(const char *path, int flags) {
  sqlite3 *db = 0;
  int rc = sqlite3_open_v2(path, &db, flags, 0);
  if (rc != SQLITE_OK) {
    fprintf(stderr, "open %s: %d %s\n", path, rc, db ? sqlite3_errmsg(db) : "?");
    exit(2);
  }
  return db;
}

/* Unbuffered, so that a crash shows how far the program got. */
__attribute__((constructor)) static void unbuffered_stdout(void) { setvbuf(stdout, 0, _IONBF, 0); }
