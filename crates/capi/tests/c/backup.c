/* The online backup API: sqlite3_backup_init/step/remaining/pagecount/finish between
 * files and memory, steps of a few pages, SQLITE_BUSY on a locked destination (and its
 * busy handler), a source in a write transaction, a read-only destination, the errors of
 * init, and close of a source with a backup in progress. Usage: backup DIR */
#include "common.h"

static sqlite3 *g_holder;

/* Ends the holder's transaction on the first call, then asks for a retry. */
static int commit_holder(void *arg, int count) {
  (void)arg;
  printf("  handler count=%d: holder commits\n", count);
  if (count == 0) run(g_holder, "COMMIT");
  return count < 5;
}

/* Steps `b` `n` pages at a time to the end; prints the first step's counts as facts
 * both libraries share (page counts of equal content may differ between engines). */
static int copy_all(sqlite3_backup *b, int n, int src_pages) {
  printf("  before: remaining=%d pagecount=%d\n", sqlite3_backup_remaining(b),
         sqlite3_backup_pagecount(b));
  int rc = sqlite3_backup_step(b, n), steps = 1;
  printf("  first step rc=%d remaining+copied==pagecount: %d pagecount==source: %d\n", rc,
         sqlite3_backup_remaining(b) + n == sqlite3_backup_pagecount(b),
         sqlite3_backup_pagecount(b) == src_pages);
  while (rc == SQLITE_OK) {
    rc = sqlite3_backup_step(b, n);
    steps++;
  }
  printf("  last step rc=%d remaining=%d more than one step: %d\n", rc,
         sqlite3_backup_remaining(b), steps > 1);
  return rc;
}

static int page_count(sqlite3 *db) {
  sqlite3_stmt *st = 0;
  int n = -1;
  if (sqlite3_prepare_v2(db, "PRAGMA page_count", -1, &st, 0) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return n;
}

static const char *CHECK =
    "SELECT count(*), sum(a), sum(length(c)), (SELECT group_concat(name) FROM sqlite_schema) "
    "FROM t";

int main(int argc, char **argv) {
  if (argc < 2) return 1;
  char src_path[1024], dst_path[1024], ro_path[1024];
  snprintf(src_path, sizeof src_path, "%s/src.db", argv[1]);
  snprintf(dst_path, sizeof dst_path, "%s/dst.db", argv[1]);
  snprintf(ro_path, sizeof ro_path, "%s/ro.db", argv[1]);
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  sqlite3 *src = open_or_die(src_path, flags);
  run(src, "PRAGMA journal_mode=WAL");
  run(src,
      "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c BLOB); CREATE INDEX tb ON t(b);"
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) "
      "INSERT INTO t SELECT i, 'row' || i, zeroblob(CASE WHEN i % 10 = 0 THEN 5000 ELSE 200 END) "
      "FROM n");
  int src_pages = page_count(src);

  /* File to memory, 5 pages a step. */
  sqlite3 *mem = open_or_die(":memory:", flags);
  run(mem, "CREATE TABLE gone(x)");
  sqlite3_backup *b = sqlite3_backup_init(mem, "main", src, "main");
  printf("init to memory: %s\n", b ? "ok" : sqlite3_errmsg(mem));
  copy_all(b, 5, src_pages);
  int rc = sqlite3_backup_finish(b);
  show(mem, "finish", rc);
  run(mem, CHECK);
  run(mem, "PRAGMA integrity_check");

  /* Memory to file; the destination's other connection sees the copy. */
  run(mem, "INSERT INTO t VALUES(1000, 'mem', x'01')");
  sqlite3 *dst = open_or_die(dst_path, flags);
  run(dst, "PRAGMA journal_mode=WAL");
  run(dst, "CREATE TABLE old(x); INSERT INTO old VALUES(1)");
  sqlite3 *dst2 = open_or_die(dst_path, flags);
  run(dst2, "SELECT count(*) FROM old");
  b = sqlite3_backup_init(dst, "main", mem, "main");
  printf("init to file: %s\n", b ? "ok" : sqlite3_errmsg(dst));
  copy_all(b, -1, page_count(mem));
  show(dst, "finish", sqlite3_backup_finish(b));
  run(dst, CHECK);
  run(dst2, CHECK);
  run(dst2, "SELECT count(*) FROM old");

  /* A destination locked by another writer: SQLITE_BUSY, then done once it commits. */
  g_holder = dst2;
  run(dst2, "BEGIN IMMEDIATE; INSERT INTO t VALUES(2000, 'held', NULL)");
  b = sqlite3_backup_init(dst, "main", src, "main");
  rc = sqlite3_backup_step(b, -1);
  printf("step with the destination locked: rc=%d\n", rc);
  rc = sqlite3_backup_finish(b);
  show(dst, "finish after busy", rc);
  b = sqlite3_backup_init(dst, "main", src, "main");
  sqlite3_busy_handler(dst, commit_holder, 0);
  rc = sqlite3_backup_step(b, -1);
  printf("step with a busy handler: rc=%d\n", rc);
  show(dst, "finish", sqlite3_backup_finish(b));
  sqlite3_busy_handler(dst, 0, 0);
  run(dst, CHECK);

  /* A source in a write transaction: SQLITE_BUSY, retried after it ends. */
  run(src, "BEGIN IMMEDIATE; INSERT INTO t VALUES(3000, 'src txn', NULL)");
  b = sqlite3_backup_init(mem, "main", src, "main");
  rc = sqlite3_backup_step(b, -1);
  printf("step with the source writing: rc=%d\n", rc);
  run(src, "COMMIT");
  rc = sqlite3_backup_step(b, -1);
  printf("step again: rc=%d\n", rc);
  show(mem, "finish", sqlite3_backup_finish(b));
  run(mem, "SELECT b FROM t WHERE a = 3000");

  /* init errors, on the destination handle. */
  b = sqlite3_backup_init(mem, "main", mem, "main");
  printf("same handle: %p\n", (void *)b);
  show(mem, "  init", 0);
  b = sqlite3_backup_init(mem, "main", src, "nosuch");
  printf("unknown source: %p\n", (void *)b);
  show(mem, "  init", 0);
  b = sqlite3_backup_init(mem, "aux", src, "main");
  printf("unknown destination: %p\n", (void *)b);
  show(mem, "  init", 0);
  run(mem, "BEGIN; SELECT count(*) FROM t");
  b = sqlite3_backup_init(mem, "main", src, "main");
  printf("destination in a transaction: %p\n", (void *)b);
  show(mem, "  init", 0);
  run(mem, "COMMIT");

  /* A read-only destination. */
  sqlite3 *w = open_or_die(ro_path, flags);
  run(w, "CREATE TABLE r(x)");
  sqlite3_close(w);
  sqlite3 *ro = open_or_die(ro_path, SQLITE_OPEN_READONLY);
  b = sqlite3_backup_init(ro, "main", src, "main");
  rc = sqlite3_backup_step(b, -1);
  printf("step to a read-only destination: rc=%d\n", rc);
  rc = sqlite3_backup_step(b, -1);
  printf("step again: rc=%d\n", rc);
  show(ro, "finish", sqlite3_backup_finish(b));
  run(ro, "SELECT name FROM sqlite_schema");
  sqlite3_close(ro);

  /* Attached databases by name; NULL handles and a NULL backup. */
  char attach[1200];
  snprintf(attach, sizeof attach, "ATTACH '%s/aux.db' AS aux", argv[1]);
  show(mem, "attach aux.db", sqlite3_exec(mem, attach, 0, 0, 0)); /* path not printed */
  b = sqlite3_backup_init(mem, "aux", src, "main");
  printf("init to attached: %s\n", b ? "ok" : sqlite3_errmsg(mem));
  printf("  step rc=%d\n", sqlite3_backup_step(b, -1));
  show(mem, "finish", sqlite3_backup_finish(b));
  run(mem, "SELECT count(*) FROM aux.t");
  printf("finish(NULL)=%d\n", sqlite3_backup_finish(0));

  /* Closing a source with an unfinished backup: busy; close_v2 waits for finish. */
  b = sqlite3_backup_init(mem, "main", dst, "main");
  printf("  step rc=%d\n", sqlite3_backup_step(b, 1));
  rc = sqlite3_close(dst);
  show(dst, "close source during a backup", rc);
  printf("close_v2=%d\n", sqlite3_close_v2(dst));
  show(mem, "finish", sqlite3_backup_finish(b));
  run(mem, "SELECT count(*) FROM t");

  sqlite3_close(dst2);
  sqlite3_close(mem);
  sqlite3_close(src);
  printf("done\n");
  return 0;
}
