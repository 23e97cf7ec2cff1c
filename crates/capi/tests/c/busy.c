/* Two connections on one file (WAL): SQLITE_BUSY, busy_timeout, busy handlers,
 * SQLITE_BUSY_SNAPSHOT, snapshot reads. Usage: busy DIR */
#include "common.h"

static sqlite3 *g_holder; /* the connection holding the writer lock */
static int calls;

/* Gives up after `limit` calls (counts 0..limit-1 answered "retry"). */
static int give_up_after(void *arg, int count) {
  printf("  handler count=%d\n", count);
  calls++;
  return count < *(int *)arg;
}

/* Ends the holder's transaction on the first call, then asks for a retry. */
static int commit_holder(void *arg, int count) {
  printf("  handler count=%d: holder commits\n", count);
  calls++;
  if (count == 0) run(g_holder, "COMMIT");
  return count < 5;
}

static void exec_show(sqlite3 *db, const char *label, const char *sql) {
  int rc = sqlite3_exec(db, sql, 0, 0, 0);
  show(db, label, rc);
}

int main(int argc, char **argv) {
  if (argc < 2) return 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/busy.db", argv[1]);
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  sqlite3 *a = open_or_die(path, flags), *b = open_or_die(path, flags);
  g_holder = a;
  run(a, "PRAGMA journal_mode=WAL");
  run(a, "CREATE TABLE t(id INTEGER PRIMARY KEY, n); INSERT INTO t VALUES(1, 0), (2, 0)");

  /* A holds the writer lock: B's BEGIN IMMEDIATE and autocommit write are busy. */
  exec_show(a, "a begin immediate", "BEGIN IMMEDIATE; UPDATE t SET n = 1 WHERE id = 1");
  exec_show(b, "b begin immediate, no timeout", "BEGIN IMMEDIATE");
  printf("b autocommit=%d\n", sqlite3_get_autocommit(b));
  sqlite3_busy_timeout(b, 30);
  exec_show(b, "b begin immediate, 30 ms timeout", "BEGIN IMMEDIATE");
  exec_show(b, "b autocommit update, 30 ms timeout", "UPDATE t SET n = 5 WHERE id = 2");
  /* B still reads the last committed state. */
  run(b, "SELECT id, n FROM t ORDER BY id");

  /* A busy handler: called with 0, 1, 2, ... until it returns 0. */
  int limit = 3;
  calls = 0;
  sqlite3_busy_handler(b, give_up_after, &limit);
  exec_show(b, "b begin immediate, handler gives up", "BEGIN IMMEDIATE");
  printf("calls=%d\n", calls);
  calls = 0;
  sqlite3_busy_handler(b, commit_holder, 0);
  exec_show(b, "b begin immediate, handler waits for a's commit", "BEGIN IMMEDIATE");
  printf("calls=%d a autocommit=%d b autocommit=%d\n", calls, sqlite3_get_autocommit(a),
         sqlite3_get_autocommit(b));
  exec_show(b, "b update and commit", "UPDATE t SET n = n + 10 WHERE id = 1; COMMIT");
  run(a, "SELECT id, n FROM t ORDER BY id");

  /* No handler, no timeout: busy at once. */
  sqlite3_busy_handler(b, 0, 0);
  exec_show(a, "a begin immediate", "BEGIN IMMEDIATE");
  exec_show(b, "b begin immediate, no handler", "BEGIN IMMEDIATE");
  exec_show(a, "a commit", "COMMIT");

  /* A deferred transaction whose snapshot is stale cannot write: SQLITE_BUSY_SNAPSHOT,
   * whatever the handler says (no wait can help). */
  sqlite3_extended_result_codes(b, 1);
  calls = 0;
  limit = 2;
  sqlite3_busy_handler(b, give_up_after, &limit);
  exec_show(b, "b begin", "BEGIN");
  run(b, "SELECT n FROM t WHERE id = 2");
  exec_show(a, "a autocommit update", "UPDATE t SET n = 7 WHERE id = 2");
  run(b, "SELECT n FROM t WHERE id = 2");
  exec_show(b, "b write on a stale snapshot", "UPDATE t SET n = 8 WHERE id = 2");
  printf("calls=%d b autocommit=%d\n", calls, sqlite3_get_autocommit(b));
  exec_show(b, "b rollback", "ROLLBACK");
  sqlite3_extended_result_codes(b, 0);
  exec_show(b, "b begin again", "BEGIN");
  run(b, "SELECT n FROM t WHERE id = 2");
  exec_show(a, "a autocommit update", "UPDATE t SET n = 9 WHERE id = 2");
  exec_show(b, "b write on a stale snapshot, primary code", "UPDATE t SET n = 8 WHERE id = 2");
  exec_show(b, "b rollback", "ROLLBACK");

  /* busy_timeout replaces the handler. */
  sqlite3_busy_timeout(b, 20);
  calls = 0;
  exec_show(a, "a begin immediate", "BEGIN IMMEDIATE");
  exec_show(b, "b begin immediate after busy_timeout", "BEGIN IMMEDIATE");
  printf("calls=%d\n", calls);
  exec_show(a, "a commit", "COMMIT");
  run(b, "SELECT id, n FROM t ORDER BY id");

  printf("close b=%d close a=%d\n", sqlite3_close(b), sqlite3_close(a));
  return 0;
}
