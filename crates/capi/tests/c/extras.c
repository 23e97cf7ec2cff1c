/* The rest of what the sqlite3 shell imports: the legacy trace, the 64-bit and UTF-16
 * result setters, auxiliary data, sqlite3_overload_function, compile options and the
 * error log; then, on lines beginning "unsupported: ", the interfaces parlite answers
 * with an error where SQLite succeeds (virtual tables, VFSes: c_api.rs checks parlite's
 * exact answers). c_api.rs runs this on SQLite 3.50.2 and on parlite. */
#include "common.h"

static void legacy_trace(void *arg, const char *sql) {
  printf("trace(%s): %s\n", (const char *)arg, sql);
}

static int logged = 0;
static void error_log(void *arg, int code, const char *message) {
  (void)arg;
  (void)message;
  if (code == SQLITE_ERROR) logged++;
}

/* results(kind): a result set by each of the setters the shell's extensions use. */
static void results(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  static const unsigned char le[] = {'h', 0, 0xe9, 0, '!', 0, 0, 0};
  static const unsigned char be[] = {0, 'h', 0, 0xe9, 0, '?', 0, 0};
  const char *kind = (const char *)sqlite3_value_text(argv[0]);
  (void)argc;
  if (strcmp(kind, "text64") == 0) {
    sqlite3_result_text64(ctx, "abcdef", 3, SQLITE_TRANSIENT, SQLITE_UTF8);
  } else if (strcmp(kind, "text64le") == 0) {
    sqlite3_result_text64(ctx, (const char *)le, 4, SQLITE_STATIC, SQLITE_UTF16LE);
  } else if (strcmp(kind, "text16le") == 0) {
    sqlite3_result_text16le(ctx, le, -1, SQLITE_STATIC);
  } else if (strcmp(kind, "text16be") == 0) {
    sqlite3_result_text16be(ctx, be, 6, SQLITE_STATIC);
  } else if (strcmp(kind, "blob64") == 0) {
    sqlite3_result_blob64(ctx, "\x01\x02\x00\x03", 4, SQLITE_TRANSIENT);
  } else if (strcmp(kind, "toobig") == 0) {
    sqlite3_result_blob64(ctx, "x", (sqlite3_uint64)0x80000000u, SQLITE_STATIC);
  } else {
    sqlite3_result_null(ctx);
  }
}

/* cached(x): keeps a counter as auxiliary data of its argument; every allocation must be
 * freed by the time the statement is finalized, whenever the library frees it. */
static int aux_made = 0, aux_freed = 0;
static void aux_free(void *p) {
  aux_freed++;
  free(p);
}
static void cached(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  int *p = sqlite3_get_auxdata(ctx, 0);
  (void)argc;
  (void)argv;
  if (!p) {
    p = malloc(sizeof(int));
    *p = 7;
    aux_made++;
    sqlite3_result_int(ctx, *p);
    sqlite3_set_auxdata(ctx, 0, p, aux_free);
    return;
  }
  sqlite3_result_int(ctx, *p);
}

static void unsupported(sqlite3 *db) {
  static sqlite3_module module; /* all methods NULL: never called by either library */
  int rc;
  rc = sqlite3_create_module(db, "nomod", &module, 0);
  printf("unsupported: create_module: %s\n", rc == SQLITE_OK ? "ok" : sqlite3_errmsg(db));
  printf("unsupported: vfs_find: %s\n", sqlite3_vfs_find(0) ? "ok" : "NULL");
}

int main(int argc, char **argv) {
  sqlite3 *db;
  char path[512];
  sqlite3_stmt *st;
  printf("config log: %d\n", sqlite3_config(SQLITE_CONFIG_LOG, error_log, (void *)0));
  snprintf(path, sizeof(path), "%s/extras.db", argc > 1 ? argv[1] : ".");
  if (sqlite3_open(path, &db) != SQLITE_OK) return 1;
  sqlite3_create_function(db, "results", 1, SQLITE_UTF8, 0, results, 0, 0);
  sqlite3_create_function(db, "cached", 1, SQLITE_UTF8, 0, cached, 0, 0);

  run(db, "SELECT results('text64'), results('text64le'), results('text16le')");
  run(db, "SELECT results('text16be'), hex(results('blob64')), results('other')");
  run(db, "SELECT results('toobig')");

  run(db, "CREATE TABLE t(a)");
  run(db, "INSERT INTO t VALUES (1), (2), (3)");
  sqlite3_prepare_v2(db, "SELECT cached('k'), cached(a) FROM t", -1, &st, 0);
  print_rows(st);
  sqlite3_finalize(st);
  printf("auxdata: made some=%d all freed=%d\n", aux_made > 0, aux_made == aux_freed);

  printf("trace was: %p\n", sqlite3_trace(db, legacy_trace, "one"));
  sqlite3_prepare_v2(db, "SELECT ?1 + 1, 'x'", -1, &st, 0);
  sqlite3_bind_int(st, 1, 41);
  print_rows(st);
  sqlite3_finalize(st);
  printf("trace replaced: %s\n", (const char *)sqlite3_trace(db, legacy_trace, "two"));
  run(db, "SELECT 2");
  sqlite3_trace(db, 0, 0);
  run(db, "SELECT 3");

  printf("overload new: %d\n", sqlite3_overload_function(db, "nosuchfn", 2));
  run(db, "SELECT nosuchfn(1, 2)");
  printf("overload existing: %d\n", sqlite3_overload_function(db, "upper", 1));
  run(db, "SELECT upper('abc')");

  printf("compile options: THREADSAFE=%d SQLITE_THREADSAFE=%d THREADSAFE=1=%d NOSUCH=%d\n",
         sqlite3_compileoption_used("THREADSAFE"),
         sqlite3_compileoption_used("SQLITE_THREADSAFE"),
         sqlite3_compileoption_used("THREADSAFE=1"), sqlite3_compileoption_used("NOSUCH"));

  logged = 0;
  run(db, "SELECT * FROM nosuchtable");
  printf("logged an error: %d\n", logged > 0);
  printf("release memory: %d\n", sqlite3_db_release_memory(db));

  unsupported(db);
  sqlite3_close(db);
  return 0;
}
