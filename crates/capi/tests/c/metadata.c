/* Column metadata (SQLITE_ENABLE_COLUMN_METADATA), sqlite3_table_column_metadata, protected
 * and unprotected values (column_value, value_dup/free, bind_value, result_value),
 * stmt_isexplain, txn_state, db_readonly, strglob and strlike.
 * Usage: metadata DIR */
#include "common.h"

static const char *s(const char *p) { return p ? p : "(null)"; }

static void origin(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, 0) != SQLITE_OK) { show(db, sql, 1); return; }
  printf("%s\n", sql);
  for (int i = 0; i < sqlite3_column_count(st); i++)
    printf("  %d %s: db=%s table=%s origin=%s decltype=%s\n", i, sqlite3_column_name(st, i),
           s(sqlite3_column_database_name(st, i)), s(sqlite3_column_table_name(st, i)),
           s(sqlite3_column_origin_name(st, i)), s(sqlite3_column_decltype(st, i)));
  sqlite3_finalize(st);
}

static void meta(sqlite3 *db, const char *dbn, const char *table, const char *col) {
  const char *type = "x", *coll = "x";
  int nn = 9, pk = 9, ai = 9;
  int rc = sqlite3_table_column_metadata(db, dbn, table, col, &type, &coll, &nn, &pk, &ai);
  printf("meta %s.%s.%s: rc=%d type=%s coll=%s notnull=%d pk=%d autoinc=%d", s(dbn), s(table),
         s(col), rc, s(type), s(coll), nn, pk, ai);
  if (rc) printf(" msg=[%s]", sqlite3_errmsg(db));
  printf("\n");
}

static void echo(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  sqlite3_value *copy = sqlite3_value_dup(argv[0]);
  sqlite3_result_value(ctx, copy);
  sqlite3_value_free(copy);
}

/* Only the main database's state: parlite's TEMP and attached databases share its
 * transaction. */
static void txn(sqlite3 *db, const char *when) {
  printf("%s: txn_state main=%d NULL=%d nosuch=%d\n", when, sqlite3_txn_state(db, "main"),
         sqlite3_txn_state(db, 0), sqlite3_txn_state(db, "nosuch"));
}

int main(int argc, char **argv) {
  if (argc < 2) return 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/meta.db", argv[1]);
  sqlite3 *db = open_or_die(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  run(db, "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL COLLATE NOCASE, "
          "n NUMERIC, x, UNIQUE(n))");
  run(db, "CREATE TABLE k(a, b VARCHAR(10), PRIMARY KEY(a, b)) WITHOUT ROWID");
  run(db, "CREATE TABLE r(v REAL)");
  run(db, "CREATE VIEW v AS SELECT name AS nm, n + 1 AS n1 FROM t");
  run(db, "CREATE TEMP TABLE tt(q TEXT)");
  run(db, "CREATE TABLE c(p TEXT COLLATE nocase, q COLLATE RTrim, r)");
  run(db, "INSERT INTO t(name, n, x) VALUES ('a', 1, x'00ff'), ('b', 2.5, NULL)");
  run(db, "INSERT INTO k VALUES (1, 'x')");

  origin(db, "SELECT id, name, n AS renamed, x, n + 1, rowid, 7 FROM t");
  origin(db, "SELECT rowid, oid, _rowid_, v FROM r");
  origin(db, "SELECT * FROM k");
  origin(db, "SELECT nm, n1 FROM v");
  origin(db, "SELECT q FROM tt");
  origin(db, "SELECT t.name, r.v FROM t JOIN r");
  origin(db, "SELECT (SELECT name FROM t), name FROM (SELECT name FROM t)");
  origin(db, "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema");
  origin(db, "INSERT INTO r VALUES (1)");

  meta(db, 0, "t", "id");
  meta(db, 0, "t", "name");
  meta(db, "main", "t", "n");
  meta(db, "main", "t", "x");
  meta(db, 0, "t", "rowid");
  meta(db, 0, "r", "rowid");
  meta(db, 0, "r", "OID");
  meta(db, 0, "t", 0);
  meta(db, 0, "k", "a");
  meta(db, 0, "c", "p");
  meta(db, 0, "c", "q");
  meta(db, 0, "c", "r");
  meta(db, 0, "k", "b");
  meta(db, 0, "k", "rowid");
  meta(db, 0, "tt", "q");
  meta(db, "temp", "tt", "q");
  meta(db, "main", "tt", "q");
  meta(db, 0, "v", "nm");
  meta(db, 0, "nosuch", "a");
  meta(db, 0, "t", "nosuch");

  /* Values: column_value into bind_value, an application function echoing a dup. */
  sqlite3_create_function(db, "echo", 1, SQLITE_UTF8, 0, echo, 0, 0);
  sqlite3_stmt *src = 0, *dst = 0;
  sqlite3_prepare_v2(db, "SELECT id, name, n, x, NULL FROM t ORDER BY id", -1, &src, 0);
  sqlite3_prepare_v2(db, "SELECT echo(?1), typeof(echo(?1)), quote(?2)", -1, &dst, 0);
  while (sqlite3_step(src) == SQLITE_ROW) {
    for (int i = 0; i < 5; i++) {
      sqlite3_value *v = sqlite3_column_value(src, i);
      sqlite3_value *kept = sqlite3_value_dup(v);
      printf("column %d: type %d bytes %d\n", i, sqlite3_value_type(v), sqlite3_value_bytes(v));
      sqlite3_bind_value(dst, 1, v);
      sqlite3_bind_value(dst, 2, kept);
      print_rows(dst);
      sqlite3_reset(dst);
      sqlite3_value_free(kept);
    }
    sqlite3_value *past = sqlite3_column_value(src, 9);
    printf("past the last column: %s type %d errcode %d\n", past ? "a value" : "NULL",
           past ? sqlite3_value_type(past) : -1, sqlite3_errcode(db));
  }
  sqlite3_finalize(src);
  sqlite3_finalize(dst);
  sqlite3_value_free(0);
  printf("dup of NULL: %p\n", (void *)sqlite3_value_dup(0));

  /* stmt_isexplain. */
  const char *kinds[] = {"SELECT 1", "EXPLAIN SELECT 1", "EXPLAIN QUERY PLAN SELECT 1",
                         "explain query plan select * from t"};
  for (int i = 0; i < 4; i++) {
    sqlite3_stmt *st = 0;
    sqlite3_prepare_v2(db, kinds[i], -1, &st, 0);
    printf("isexplain [%s]: %d\n", kinds[i], sqlite3_stmt_isexplain(st));
    sqlite3_finalize(st);
  }
  printf("isexplain NULL: %d\n", sqlite3_stmt_isexplain(0));

  /* txn_state through a transaction's life. */
  txn(db, "autocommit");
  run(db, "BEGIN");
  txn(db, "after BEGIN");
  run(db, "SELECT count(*) FROM t");
  txn(db, "after a read");
  run(db, "INSERT INTO r VALUES (2)");
  txn(db, "after a write");
  run(db, "COMMIT");
  txn(db, "after COMMIT");
  run(db, "BEGIN IMMEDIATE");
  txn(db, "after BEGIN IMMEDIATE");
  run(db, "ROLLBACK");

  /* db_readonly. */
  printf("readonly main=%d NULL=%d temp=%d nosuch=%d\n", sqlite3_db_readonly(db, "main"),
         sqlite3_db_readonly(db, 0), sqlite3_db_readonly(db, "temp"),
         sqlite3_db_readonly(db, "nosuch"));
  sqlite3 *ro = open_or_die(path, SQLITE_OPEN_READONLY);
  printf("read-only handle: main=%d\n", sqlite3_db_readonly(ro, "main"));
  sqlite3_close(ro);

  /* strglob and strlike: 0 is a match. */
  const char *pairs[][2] = {{"a*c", "abc"}, {"a?c", "ac"}, {"[a-c]x", "bx"}, {"A*", "abc"},
                            {"a%", "ABC"}, {"a_c", "aXc"}, {"%b%", "abc"}, {"x", "y"},
                            {"a\\%", "a%"}, {"", ""}};
  for (int i = 0; i < 10; i++)
    printf("glob(%s, %s)=%d like=%d like-esc=%d\n", pairs[i][0], pairs[i][1],
           sqlite3_strglob(pairs[i][0], pairs[i][1]) == 0,
           sqlite3_strlike(pairs[i][0], pairs[i][1], 0) == 0,
           sqlite3_strlike(pairs[i][0], pairs[i][1], '\\') == 0);

  sqlite3_close(db);
  return 0;
}
