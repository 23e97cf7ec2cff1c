/*
** The C-variadic half of parlite's SQLite C API: the functions whose prototypes end in
** `...` or take a `va_list`, which stable Rust cannot define. Everything here only takes
** the arguments off the list, with the types SQLite's documentation gives them, and hands
** them to Rust (src/printf.rs, src/config.rs), which holds the semantics.
**
**  - The printf family (sqlite3_mprintf, _vmprintf, _snprintf, _vsnprintf) and the
**    `sqlite3_str` string builder. A format is walked here only far enough to know what
**    each conversion takes (its `*` width and precision, its length modifier); each
**    conversion is then rendered by SQLite's printf as parlite's SQL printf() implements
**    it (parlite_sql::func::printf), so `%q %Q %w %z %c %r %!.15g %,d` behave as
**    SQLite's. Literal text is copied here.
**  - sqlite3_config, sqlite3_db_config, sqlite3_test_control and sqlite3_vtab_config:
**    their option codes select the arguments taken, as sqlite3.h documents them.
**
** Invariants:
**  1. A `sqlite3_str` that met an error (SQLITE_NOMEM, SQLITE_TOOBIG) keeps that error,
**     drops what it held and takes nothing more, as SQLite's accumulator; one over a
**     caller's fixed buffer (sqlite3_snprintf) keeps what fit instead.
**  2. A conversion parlite does not know (and SQLite's internal %T/%S) ends the output
**     where it stands, as SQLite's does; `%` at the very end is a literal `%`.
**  3. Memory handed out is from malloc, which sqlite3_free (free) takes.
**
** Nothing here is copied from SQLite's sources; its behaviour is the specification.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RC_OK 0
#define RC_ERROR 1
#define RC_NOMEM 7
#define RC_TOOBIG 18
#define RC_MISUSE 21

/* SQLITE_MAX_LENGTH: the default limit of a string sqlite3_mprintf makes. */
#define MAX_LENGTH 1000000000u
#define LIMIT_LENGTH 0

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_vtab sqlite3_vtab;
extern int sqlite3_limit(sqlite3 *, int id, int new_value);

/* ---- the arguments of one conversion, as Rust takes them (src/printf.rs) ------------ */

enum { ARG_INT = 0, ARG_REAL = 1, ARG_TEXT = 2, ARG_BYTES = 3 };

typedef struct FormatArg {
  int kind;            /* ARG_* */
  long long i;         /* ARG_INT */
  double r;            /* ARG_REAL */
  const char *s;       /* ARG_TEXT: a C string or NULL; ARG_BYTES: `i` bytes */
} FormatArg;

/* Renders the conversion `spec` (from its `%` to its conversion character, `len` bytes)
** with `args`: 0 and the bytes in `*out` (malloc'd, `*out_len` of them; NULL when empty),
** or SQLITE_TOOBIG / SQLITE_NOMEM. */
extern int parlite_capi_format_spec(const char *spec, size_t len, const FormatArg *args,
                                    int nargs, char **out, size_t *out_len);

/* ---- sqlite3_str ----------------------------------------------------------------- */

typedef struct sqlite3_str {
  char *z;          /* the text, not NUL-terminated until asked for; NULL while empty */
  size_t n;         /* bytes held */
  size_t alloc;     /* bytes allocated at z (the caller's buffer size when fixed) */
  size_t max;       /* the most bytes the text and its NUL may take */
  int err;          /* the first error: SQLITE_NOMEM or SQLITE_TOOBIG (invariant 1) */
  int fixed;        /* z is the caller's buffer (sqlite3_snprintf) */
} sqlite3_str;

/* What sqlite3_str_new returns when it cannot allocate: every call on it is harmless. */
static sqlite3_str oom_str = {0, 0, 0, 0, RC_NOMEM, 1};

static void str_init_dynamic(sqlite3_str *p, size_t max) {
  memset(p, 0, sizeof(*p));
  p->max = max;
}

static void str_drop_text(sqlite3_str *p) {
  if (!p->fixed) free(p->z);
  if (!p->fixed) p->z = 0;
  p->n = 0;
  if (!p->fixed) p->alloc = 0;
}

static void str_fail(sqlite3_str *p, int err) {
  p->err = err;
  if (!p->fixed) str_drop_text(p);
}

/* Makes room for `extra` more bytes and a NUL; 0 when the string failed (invariant 1). */
static int str_reserve(sqlite3_str *p, size_t extra) {
  size_t want;
  char *z;
  if (p->err) return 0;
  if (extra > p->max || p->n + extra + 1 > p->max) {
    str_fail(p, RC_TOOBIG);
    return 0;
  }
  want = p->n + extra + 1;
  if (want <= p->alloc) return 1;
  if (want < p->alloc * 2) want = p->alloc * 2;
  if (want < 64) want = 64;
  if (want > p->max) want = p->max;
  z = realloc(p->z, want);
  if (!z) {
    str_fail(p, RC_NOMEM);
    return 0;
  }
  p->z = z;
  p->alloc = want;
  return 1;
}

static void str_put(sqlite3_str *p, const char *z, size_t n) {
  if (n == 0 || p->err) return;
  if (p->fixed) {
    size_t room = p->alloc > p->n + 1 ? p->alloc - p->n - 1 : 0;
    if (n > room) {
      memcpy(p->z + p->n, z, room);
      p->n += room;
      p->err = RC_TOOBIG;
      return;
    }
    memcpy(p->z + p->n, z, n);
    p->n += n;
    return;
  }
  if (!str_reserve(p, n)) return;
  memcpy(p->z + p->n, z, n);
  p->n += n;
}

/* A builder whose text may grow to the connection's SQLITE_LIMIT_LENGTH (SQLITE_MAX_LENGTH
** without a connection, or one whose limit cannot be read). */
sqlite3_str *sqlite3_str_new(sqlite3 *db) {
  sqlite3_str *p = malloc(sizeof(*p));
  int limit = db ? sqlite3_limit(db, LIMIT_LENGTH, -1) : -1;
  if (!p) return &oom_str;
  str_init_dynamic(p, limit > 0 ? (size_t)limit : MAX_LENGTH);
  return p;
}

void sqlite3_str_append(sqlite3_str *p, const char *z, int n) {
  if (!p || !z || n <= 0) return;
  str_put(p, z, (size_t)n);
}

void sqlite3_str_appendall(sqlite3_str *p, const char *z) {
  if (!p || !z) return;
  str_put(p, z, strlen(z));
}

void sqlite3_str_appendchar(sqlite3_str *p, int n, char c) {
  char run[64];
  if (!p || n <= 0) return;
  memset(run, c, sizeof(run));
  while (n > 0 && !p->err) {
    int k = n < (int)sizeof(run) ? n : (int)sizeof(run);
    str_put(p, run, (size_t)k);
    n -= k;
  }
}

void sqlite3_str_reset(sqlite3_str *p) {
  if (!p || p == &oom_str) return;
  str_drop_text(p);
  if (p->fixed && p->alloc) p->z[0] = 0;
}

int sqlite3_str_errcode(sqlite3_str *p) { return p ? p->err : RC_NOMEM; }

int sqlite3_str_length(sqlite3_str *p) { return p ? (int)p->n : 0; }

char *sqlite3_str_value(sqlite3_str *p) {
  if (!p || p->n == 0) return 0;
  p->z[p->n] = 0;
  return p->z;
}

/* The text, NUL-terminated and owned by the caller (NULL when there is none), and the
** builder freed. */
char *sqlite3_str_finish(sqlite3_str *p) {
  char *z = 0;
  if (!p || p == &oom_str) return 0;
  if (p->z) {
    p->z[p->n] = 0;
    z = p->z;
  }
  free(p);
  return z;
}

/* ---- the format walk -------------------------------------------------------------- */

static int is_flag(char c) {
  return c == '-' || c == '+' || c == ' ' || c == '#' || c == '!' || c == '0' || c == ',';
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* UTF-8 bytes of `ch` as %c writes an int argument: 1 to 4 bytes, the lead byte's
** payload bits masked as UTF-8 encodes them. */
static int utf8_encode(unsigned int ch, char *buf) {
  if (ch < 0x80) {
    buf[0] = (char)(ch & 0xff);
    return 1;
  }
  if (ch < 0x800) {
    buf[0] = (char)(0xc0 + ((ch >> 6) & 0x1f));
    buf[1] = (char)(0x80 + (ch & 0x3f));
    return 2;
  }
  if (ch < 0x10000) {
    buf[0] = (char)(0xe0 + ((ch >> 12) & 0x0f));
    buf[1] = (char)(0x80 + ((ch >> 6) & 0x3f));
    buf[2] = (char)(0x80 + (ch & 0x3f));
    return 3;
  }
  buf[0] = (char)(0xf0 + ((ch >> 18) & 0x07));
  buf[1] = (char)(0x80 + ((ch >> 12) & 0x3f));
  buf[2] = (char)(0x80 + ((ch >> 6) & 0x3f));
  buf[3] = (char)(0x80 + (ch & 0x3f));
  return 4;
}

static long long signed_arg(va_list *ap, int longs) {
  if (longs == 2) return va_arg(*ap, long long);
  if (longs == 1) return va_arg(*ap, long);
  return va_arg(*ap, int);
}

static long long unsigned_arg(va_list *ap, int longs) {
  if (longs == 2) return (long long)va_arg(*ap, unsigned long long);
  if (longs == 1) return (long long)va_arg(*ap, unsigned long);
  return (long long)va_arg(*ap, unsigned int);
}

/* Renders one conversion through Rust and appends it; 0 when the string failed. */
static int render(sqlite3_str *p, const char *spec, size_t len, const FormatArg *args,
                  int nargs) {
  char *out = 0;
  size_t out_len = 0;
  int rc = parlite_capi_format_spec(spec, len, args, nargs, &out, &out_len);
  if (rc != RC_OK) {
    free(out);
    if (p->fixed) {
      p->err = rc;
    } else {
      str_fail(p, rc);
    }
    return 0;
  }
  str_put(p, out, out_len);
  free(out);
  return !p->err;
}

void sqlite3_str_vappendf(sqlite3_str *p, const char *fmt, va_list ap_in) {
  va_list ap;
  if (!p || !fmt) return;
  va_copy(ap, ap_in);
  while (*fmt && !p->err) {
    const char *spec;
    FormatArg args[3];
    int nargs = 0, longs = 0;
    char conv, cbuf[4];
    char *dynamic = 0;
    if (*fmt != '%') {
      const char *start = fmt;
      while (*fmt && *fmt != '%') fmt++;
      str_put(p, start, (size_t)(fmt - start));
      continue;
    }
    spec = fmt++;
    if (*fmt == 0) {
      str_put(p, "%", 1); /* invariant 2 */
      break;
    }
    while (is_flag(*fmt)) fmt++;
    if (*fmt == '*') {
      args[nargs].kind = ARG_INT;
      args[nargs++].i = va_arg(ap, int);
      fmt++;
    } else {
      while (is_digit(*fmt)) fmt++;
    }
    if (*fmt == '.') {
      fmt++;
      if (*fmt == '*') {
        args[nargs].kind = ARG_INT;
        args[nargs++].i = va_arg(ap, int);
        fmt++;
      } else {
        while (is_digit(*fmt)) fmt++;
      }
    }
    if (*fmt == 'l') {
      longs = 1;
      fmt++;
      if (*fmt == 'l') {
        longs = 2;
        fmt++;
      }
    }
    conv = *fmt;
    switch (conv) {
      case 'd': case 'i': case 'r':
        args[nargs].kind = ARG_INT;
        args[nargs++].i = signed_arg(&ap, longs);
        break;
      case 'u': case 'x': case 'X': case 'o':
        args[nargs].kind = ARG_INT;
        args[nargs++].i = unsigned_arg(&ap, longs);
        break;
      case 'p':
        args[nargs].kind = ARG_INT;
        args[nargs++].i = (long long)(uintptr_t)va_arg(ap, void *);
        break;
      case 'f': case 'e': case 'E': case 'g': case 'G':
        args[nargs].kind = ARG_REAL;
        args[nargs++].r = va_arg(ap, double);
        break;
      case 'c':
        args[nargs].kind = ARG_BYTES;
        args[nargs].i = utf8_encode(va_arg(ap, unsigned int), cbuf);
        args[nargs++].s = cbuf;
        break;
      case 'z':
        dynamic = va_arg(ap, char *);
        args[nargs].kind = ARG_TEXT;
        args[nargs++].s = dynamic;
        break;
      case 's': case 'q': case 'Q': case 'w':
        args[nargs].kind = ARG_TEXT;
        args[nargs++].s = va_arg(ap, const char *);
        break;
      case 'n':
        /* The bytes written so far; the field itself writes nothing. */
        *va_arg(ap, int *) = (int)p->n;
        fmt++;
        continue;
      case '%':
        break;
      default:
        goto done; /* invariant 2 */
    }
    fmt++;
    render(p, spec, (size_t)(fmt - spec), args, nargs);
    free(dynamic); /* %z: the argument was the caller's to give away */
  }
done:
  va_end(ap);
}

void sqlite3_str_appendf(sqlite3_str *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sqlite3_str_vappendf(p, fmt, ap);
  va_end(ap);
}

char *sqlite3_vmprintf(const char *fmt, va_list ap) {
  sqlite3_str acc;
  if (!fmt) return 0;
  str_init_dynamic(&acc, MAX_LENGTH);
  sqlite3_str_vappendf(&acc, fmt, ap);
  if (acc.err) {
    str_drop_text(&acc);
    return 0;
  }
  if (!acc.z) return calloc(1, 1); /* an empty result is "", not NULL */
  acc.z[acc.n] = 0;
  return acc.z;
}

char *sqlite3_mprintf(const char *fmt, ...) {
  va_list ap;
  char *z;
  va_start(ap, fmt);
  z = sqlite3_vmprintf(fmt, ap);
  va_end(ap);
  return z;
}

/* Writes at most n-1 bytes and a NUL into buf; returns buf. */
char *sqlite3_vsnprintf(int n, char *buf, const char *fmt, va_list ap) {
  sqlite3_str acc;
  if (n <= 0 || !buf) return buf;
  if (!fmt) {
    buf[0] = 0;
    return buf;
  }
  memset(&acc, 0, sizeof(acc));
  acc.z = buf;
  acc.alloc = (size_t)n;
  acc.max = (size_t)n;
  acc.fixed = 1;
  sqlite3_str_vappendf(&acc, fmt, ap);
  buf[acc.n] = 0;
  return buf;
}

char *sqlite3_snprintf(int n, char *buf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sqlite3_vsnprintf(n, buf, fmt, ap);
  va_end(ap);
  return buf;
}

/* ---- configuration: option codes select the arguments (src/config.rs) -------------- */

/* sqlite3_config's options that take arguments parlite reads (sqlite3.h). */
#define CONFIG_LOG 16
#define CONFIG_URI 17
#define CONFIG_COVERING_INDEX_SCAN 20
#define CONFIG_MEMSTATUS 9
#define CONFIG_SMALL_MALLOC 27
#define CONFIG_SORTERREF_SIZE 28
#define CONFIG_STMTJRNL_SPILL 26
#define CONFIG_LOOKASIDE 13
#define CONFIG_MMAP_SIZE 22

typedef void (*LogCallback)(void *, int, const char *);
extern int parlite_capi_config_int(int op, int value);
extern int parlite_capi_config_log(LogCallback callback, void *arg);
extern int parlite_capi_config_other(int op);

int sqlite3_config(int op, ...) {
  va_list ap;
  int rc;
  va_start(ap, op);
  switch (op) {
    case CONFIG_LOG: {
      LogCallback callback = va_arg(ap, LogCallback);
      void *arg = va_arg(ap, void *);
      rc = parlite_capi_config_log(callback, arg);
      break;
    }
    case CONFIG_URI:
    case CONFIG_COVERING_INDEX_SCAN:
    case CONFIG_MEMSTATUS:
    case CONFIG_SMALL_MALLOC:
    case CONFIG_SORTERREF_SIZE:
    case CONFIG_STMTJRNL_SPILL:
      rc = parlite_capi_config_int(op, va_arg(ap, int));
      break;
    default:
      rc = parlite_capi_config_other(op);
      break;
  }
  va_end(ap);
  return rc;
}

/* sqlite3_db_config: SQLITE_DBCONFIG_MAINDBNAME takes a name, _LOOKASIDE a buffer and two
** sizes; every other option (1002 and up) a switch and where to report it. */
#define DBCONFIG_MAINDBNAME 1000
#define DBCONFIG_LOOKASIDE 1001

extern int parlite_capi_db_config_switch(sqlite3 *db, int op, int onoff, int *result);
extern int parlite_capi_db_config_other(sqlite3 *db, int op);

int sqlite3_db_config(sqlite3 *db, int op, ...) {
  va_list ap;
  int rc;
  va_start(ap, op);
  if (op == DBCONFIG_MAINDBNAME || op == DBCONFIG_LOOKASIDE) {
    rc = parlite_capi_db_config_other(db, op);
  } else {
    int onoff = va_arg(ap, int);
    int *result = va_arg(ap, int *);
    rc = parlite_capi_db_config_switch(db, op, onoff, result);
  }
  va_end(ap);
  return rc;
}

/* sqlite3_test_control: SQLite's testing hooks, whose arguments differ per operation.
** None is parlite's; each answers as SQLite does for an operation it does not have. */
extern int parlite_capi_test_control(int op);

int sqlite3_test_control(int op, ...) { return parlite_capi_test_control(op); }

/* sqlite3_vtab_config: only an xCreate/xConnect of a virtual table may call it, and parlite
** runs none. */
extern int parlite_capi_vtab_config(sqlite3 *db, int op);

int sqlite3_vtab_config(sqlite3 *db, int op, ...) { return parlite_capi_vtab_config(db, op); }
