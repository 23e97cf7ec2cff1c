/* The printf family (sqlite3_mprintf, _vmprintf, _snprintf, _vsnprintf), the sqlite3_str
 * builder, the keyword list, randomness, mutexes, sqlite3_config before and after
 * initialization, and the sqlite3_db_config switches whose defaults parlite shares.
 * c_api.rs runs this on SQLite 3.50.2 (rusqlite's bundled build, whose printf parlite's
 * matches: 3.40's differs in digits past the 17th significant one) and on parlite. */
#include "common.h"
#include <stdarg.h>

/* One sqlite3_mprintf result, shown with its bytes (NULL as such). */
static void shown(const char *label, char *z) {
  printf("%s: ", label);
  if (z) print_bytes((const unsigned char *)z, (int)strlen(z));
  else printf("NULL");
  printf("\n");
  sqlite3_free(z);
}

#define M(...) shown(#__VA_ARGS__, sqlite3_mprintf(__VA_ARGS__))

static char *through_va_list(const char *fmt, ...) {
  va_list ap;
  char *z;
  va_start(ap, fmt);
  z = sqlite3_vmprintf(fmt, ap);
  va_end(ap);
  return z;
}

static void vsn(int n, const char *fmt, ...) {
  char buf[64];
  va_list ap;
  memset(buf, '#', sizeof(buf));
  va_start(ap, fmt);
  sqlite3_vsnprintf(n, buf, fmt, ap);
  va_end(ap);
  printf("vsnprintf(%d, %s): ", n, fmt);
  print_bytes((const unsigned char *)buf, n > 0 ? (int)strlen(buf) : 0);
  printf(" then %c\n", buf[n > 0 ? strlen(buf) + 1 : 0]);
}

static void integers(void) {
  M("%d|%i|%5d|%-5d|%05d|%+d|% d", 42, -7, 42, 42, -42, 42, 42);
  M("%u|%x|%X|%o|%#x|%#o|%#X", 3000000000u, 255u, 255u, 8u, 255u, 8u, 0u);
  M("%lld|%llu|%llx|%lli", (long long)-9223372036854775807LL - 1,
    (unsigned long long)18446744073709551615ULL, (unsigned long long)0xdeadbeefcafeULL,
    (long long)1234567890123LL);
  M("%ld|%lu", (long)-123456789L, (unsigned long)123456789UL);
  M("%,d|%,lld|%,d", 1234567, (long long)-9876543210LL, 999);
  M("%r|%r|%r|%r|%r|%r|%r", 1, 2, 3, 4, 11, 12, 23);
  M("%*d|%-*d|%.*d|%*.*d", 6, 1, 6, 2, 4, 3, 8, 5, 4);
  M("%.0d|%.3d|%8.3d", 0, 7, -7);
}

static void reals(void) {
  M("%f|%.2f|%10.3f|%-10.1f|%+.1f|%010.2f", 3.14159, 2.5, -1.0 / 3, 7.25, 2.0, -3.75);
  M("%e|%.3e|%E|%g|%G|%#g", 123456.789, 0.000123, 1e-10, 0.0001, 1e20, 1.0);
  M("%g|%g|%g|%g|%g", 100000.0, 1000000.0, 1e-4, 1e-5, 123456789.0);
  M("%!.15g|%!.15g|%!.15g|%!.20g|%!.20g", 0.1, 1.0, 1e100, 1.98, 1961.5);
  M("%.20f|%.15g|%.17g|%!.26g", 0.1, 2.0 / 3, 2.0 / 3, 2.0 / 3);
  M("%.2f|%.2f|%.1f|%.0f|%.0f", 2.675, 0.125, 0.05, 0.5, 1.5);
  M("%f|%f|%e|%g", 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0, -0.0);
  M("%,.2f|%,f", 1234567.891, 1e9);
  M("%.3s|%5.1f%%|100%%", "abcdef", 99.44);
}

static void strings(void) {
  char *dyn = sqlite3_mprintf("dynamic %d", 1);
  M("[%s]|[%10s]|[%-10s]|[%.2s]|[%s]", "abc", "right", "left", "cut", (char *)0);
  M("%q|%Q|%Q|%w|%q", "it's", "it's", (char *)0, "a\"b", (char *)0);
  M("%.3q|%!.2Q|%#q", "a'b'c'd", "\xc3\xa9t\xc3\xa9", "tab\there");
  M("%z|after", dyn);
  M("%c|%5c|%-3c|%.3c|%c", 'x', 'y', 'z', '*', 0xe9);
  M("%!5s|%!.2s|%5s", "\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9", "\xc3\xa9");
  M("%p", (void *)0x1234);
  M("literal only");
  M("%");
  M("ab%");
  M("before %k after %d", 1);
  M("before %T after");
  M("%");
  M("");
  shown("NULL format", sqlite3_mprintf(0));
  shown("va_list", through_va_list("%s=%d %q", "x", 5, "y'z"));
  {
    int n = -1, m = -1;
    shown("%n", sqlite3_mprintf("abc%n def%n!", &n, &m));
    printf("%%n counted %d and %d\n", n, m);
  }
}

static void snprintf_family(void) {
  char buf[16];
  char *r;
  memset(buf, '#', sizeof(buf));
  r = sqlite3_snprintf(sizeof(buf), buf, "%s-%d", "hello", 12345);
  printf("snprintf fits: [%s] same=%d\n", buf, r == buf);
  memset(buf, '#', sizeof(buf));
  sqlite3_snprintf(8, buf, "%s", "truncated text");
  printf("snprintf cut: [%s] next=%c\n", buf, buf[8]);
  memset(buf, '#', sizeof(buf));
  sqlite3_snprintf(4, buf, "%d|%s", 123456, "x");
  printf("snprintf cut in a field: [%s]\n", buf);
  memset(buf, '#', sizeof(buf));
  sqlite3_snprintf(1, buf, "abc");
  printf("snprintf 1: len=%d\n", (int)strlen(buf));
  memset(buf, '#', sizeof(buf));
  r = sqlite3_snprintf(0, buf, "abc");
  printf("snprintf 0: untouched=%d same=%d\n", buf[0] == '#', r == buf);
  vsn(10, "%s and %d", "va", 77);
  vsn(5, "%q", "o'clock");
}

static void str_builder(sqlite3 *db) {
  sqlite3_str *s = sqlite3_str_new(db);
  char *z;
  printf("str new: len=%d err=%d value=%s\n", sqlite3_str_length(s), sqlite3_str_errcode(s),
         sqlite3_str_value(s) ? "set" : "NULL");
  sqlite3_str_appendall(s, "SELECT ");
  sqlite3_str_appendf(s, "%Q, %w", "x'y", "col\"umn");
  sqlite3_str_append(s, " FROM tXYZ", 6);
  sqlite3_str_append(s, "ignored", 0);
  sqlite3_str_appendchar(s, 3, '!');
  sqlite3_str_appendchar(s, 0, '?');
  printf("str: [%s] len=%d err=%d\n", sqlite3_str_value(s), sqlite3_str_length(s),
         sqlite3_str_errcode(s));
  sqlite3_str_reset(s);
  printf("str reset: len=%d value=%s\n", sqlite3_str_length(s),
         sqlite3_str_value(s) ? "set" : "NULL");
  sqlite3_str_appendf(s, "%d-%d", 1, 2);
  z = sqlite3_str_finish(s);
  printf("str finish: [%s]\n", z);
  sqlite3_free(z);
  s = sqlite3_str_new(0);
  z = sqlite3_str_finish(s);
  printf("str finish empty: %s\n", z ? "set" : "NULL");
  s = sqlite3_str_new(db);
  sqlite3_str_appendf(s, "%.*c", 2000, 'w');
  printf("str long: len=%d err=%d\n", sqlite3_str_length(s), sqlite3_str_errcode(s));
  sqlite3_free(sqlite3_str_finish(s));
  printf("str NULL: err=%d len=%d\n", sqlite3_str_errcode(0), sqlite3_str_length(0));
  /* Past SQLITE_MAX_LENGTH: SQLITE_TOOBIG, the text dropped, later appends ignored. */
  s = sqlite3_str_new(db);
  sqlite3_str_appendall(s, "kept?");
  sqlite3_str_appendf(s, "%.*c", 1000000001, 'x');
  sqlite3_str_appendall(s, "more");
  printf("str too big: err=%d len=%d value=%s\n", sqlite3_str_errcode(s),
         sqlite3_str_length(s), sqlite3_str_value(s) ? "set" : "NULL");
  z = sqlite3_str_finish(s);
  printf("str too big finish: %s\n", z ? "set" : "NULL");
  sqlite3_free(z);
  shown("mprintf too big", sqlite3_mprintf("%.*c", 1000000001, 'x'));
  shown("mprintf wide", sqlite3_mprintf("%*d", 2000000000, 1));
}

static void keywords(void) {
  int n = sqlite3_keyword_count();
  printf("keywords: %d\n", n);
  for (int i = 0; i < n; i++) {
    const char *z;
    int len;
    if (sqlite3_keyword_name(i, &z, &len) != SQLITE_OK) printf("keyword %d: error\n", i);
    else printf("%.*s%s", len, z, i % 12 == 11 ? "\n" : " ");
  }
  printf("\n");
  {
    const char *z = 0;
    int len = -1;
    printf("keyword_name(-1)=%d keyword_name(n)=%d\n", sqlite3_keyword_name(-1, &z, &len),
           sqlite3_keyword_name(n, &z, &len));
  }
  printf("check: select=%d SELECT=%d Select=%d selec=%d selectx=%d row=%d rowid=%d "
         "sel(3)=%d\n",
         sqlite3_keyword_check("select", 6), sqlite3_keyword_check("SELECT", 6),
         sqlite3_keyword_check("Select", 6), sqlite3_keyword_check("selec", 5),
         sqlite3_keyword_check("selectx", 7), sqlite3_keyword_check("row", 3),
         sqlite3_keyword_check("rowid", 5), sqlite3_keyword_check("selectx", 3));
}

/* The first column of the first row of `sql`, as an integer. */
static void show_query(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, sql, -1, &st, 0) != SQLITE_OK) {
    printf("%s: prepare failed\n", sql);
    return;
  }
  if (sqlite3_step(st) == SQLITE_ROW) printf("%s: %d\n", sql, sqlite3_column_int(st, 0));
  sqlite3_finalize(st);
}

static void misc(sqlite3 *db) {
  unsigned char a[32], b[32];
  int on = -1, rc;
  sqlite3_mutex *m = sqlite3_mutex_alloc(SQLITE_MUTEX_RECURSIVE);
  sqlite3_mutex_enter(m);
  sqlite3_mutex_enter(m);
  printf("mutex try: %d\n", sqlite3_mutex_try(m));
  sqlite3_mutex_leave(m);
  sqlite3_mutex_leave(m);
  sqlite3_mutex_leave(m);
  sqlite3_mutex_free(m);
  printf("static mutex same: %d\n",
         sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1) ==
             sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1));
  sqlite3_randomness(sizeof(a), a);
  sqlite3_randomness(sizeof(b), b);
  printf("random differ: %d\n", memcmp(a, b, sizeof(a)) != 0);
  sqlite3_randomness(0, 0);

  /* Off first: rusqlite's bundled SQLite is built with foreign keys on by default. */
  rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, 0, &on);
  printf("fkey off: rc=%d on=%d\n", rc, on);
  rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, -1, &on);
  printf("fkey: rc=%d on=%d\n", rc, on);
  rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, 1, &on);
  printf("fkey set: rc=%d on=%d\n", rc, on);
  show_query(db, "PRAGMA foreign_keys");
  rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, 0, &on);
  printf("fkey clear: rc=%d on=%d\n", rc, on);
  show_query(db, "PRAGMA foreign_keys");
  sqlite3_exec(db, "PRAGMA foreign_keys=ON", 0, 0, 0);
  rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, -1, &on);
  printf("fkey after pragma: rc=%d on=%d\n", rc, on);
  rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, -1, &on);
  printf("trigger: rc=%d on=%d\n", rc, on);
  rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 1, &on);
  printf("view: rc=%d on=%d\n", rc, on);
  rc = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &on);
  printf("trusted schema: rc=%d on=%d\n", rc, on);
  rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, &on);
  printf("load extension: rc=%d on=%d\n", rc, on);
  rc = sqlite3_db_config(db, SQLITE_DBCONFIG_WRITABLE_SCHEMA, -1, &on);
  printf("writable schema: rc=%d on=%d\n", rc, on);
  printf("unknown dbconfig: %d\n", sqlite3_db_config(db, 999, 0, 0));
  printf("config after init: %d %d\n", sqlite3_config(SQLITE_CONFIG_MULTITHREAD),
         sqlite3_config(-1));
  {
    sqlite3_int64 cur = -1, hi = -1;
    int c = -1, h = -1;
    printf("status64: rc=%d\n", sqlite3_status64(SQLITE_STATUS_MALLOC_COUNT, &cur, &hi, 0));
    printf("status bad op: %d\n", sqlite3_status(99, &c, &h, 0));
    printf("db_status: rc=%d bad op: %d\n",
           sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_HIT, &c, &h, 0),
           sqlite3_db_status(db, 99, &c, &h, 0));
    sqlite3_exec(db, "CREATE TABLE cached(x); INSERT INTO cached VALUES (randomblob(9000));"
                     "SELECT count(*) FROM cached", 0, 0, 0);
    c = -1;
    h = -1;
    rc = sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_USED, &c, &h, 0);
    printf("cache used: rc=%d some=%d highwater=%d\n", rc, c > 0, h);
    c = -1;
    rc = sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_USED_SHARED, &c, &h, 0);
    printf("cache used shared: rc=%d some=%d\n", rc, c > 0);
  }
}

int main(int argc, char **argv) {
  sqlite3 *db;
  char path[512];
  /* Before any open: the library is not initialized yet. */
  printf("config before init: unknown=%d multithread=%d\n", sqlite3_config(-1),
         sqlite3_config(SQLITE_CONFIG_MULTITHREAD));
  integers();
  reals();
  strings();
  snprintf_family();
  keywords();
  snprintf(path, sizeof(path), "%s/printf.db", argc > 1 ? argv[1] : ".");
  if (sqlite3_open(path, &db) != SQLITE_OK) return 1;
  str_builder(db);
  misc(db);
  sqlite3_close(db);
  return 0;
}
