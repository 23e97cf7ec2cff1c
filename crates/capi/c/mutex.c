/*
** sqlite3_mutex: SQLite's portable mutexes, which applications and extensions use for
** their own data (the sqlite3 shell guards its state with one), over POSIX threads.
**
** Invariants:
**  1. sqlite3_mutex_alloc(SQLITE_MUTEX_FAST) and (SQLITE_MUTEX_RECURSIVE) make a new mutex,
**     recursive in both cases (a fast mutex entered twice by one thread is the caller's
**     error, so a recursive one serves it); every other type (the static ones, 2 to 12)
**     names one mutex that lives as long as the process, the same one on every call.
**  2. Every function takes NULL and does nothing with it (returning SQLITE_OK from try,
**     1 from held/notheld), as SQLite's does.
*/
#include <pthread.h>
#include <stdlib.h>

#define RC_OK 0
#define RC_BUSY 5
#define MUTEX_FAST 0
#define MUTEX_RECURSIVE 1
#define MUTEX_STATIC_FIRST 2
#define MUTEX_STATIC_LAST 12

typedef struct sqlite3_mutex {
  pthread_mutex_t m;
  int is_static;
} sqlite3_mutex;

static sqlite3_mutex static_mutexes[MUTEX_STATIC_LAST - MUTEX_STATIC_FIRST + 1];
static pthread_once_t statics_once = PTHREAD_ONCE_INIT;

static void init_recursive(pthread_mutex_t *m) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(m, &attr);
  pthread_mutexattr_destroy(&attr);
}

static void init_statics(void) {
  int i;
  for (i = 0; i <= MUTEX_STATIC_LAST - MUTEX_STATIC_FIRST; i++) {
    init_recursive(&static_mutexes[i].m);
    static_mutexes[i].is_static = 1;
  }
}

sqlite3_mutex *sqlite3_mutex_alloc(int type) {
  sqlite3_mutex *p;
  if (type == MUTEX_FAST || type == MUTEX_RECURSIVE) {
    p = malloc(sizeof(*p));
    if (!p) return 0;
    init_recursive(&p->m);
    p->is_static = 0;
    return p;
  }
  if (type < MUTEX_STATIC_FIRST || type > MUTEX_STATIC_LAST) return 0;
  pthread_once(&statics_once, init_statics);
  return &static_mutexes[type - MUTEX_STATIC_FIRST];
}

void sqlite3_mutex_free(sqlite3_mutex *p) {
  if (!p || p->is_static) return;
  pthread_mutex_destroy(&p->m);
  free(p);
}

void sqlite3_mutex_enter(sqlite3_mutex *p) {
  if (p) pthread_mutex_lock(&p->m);
}

int sqlite3_mutex_try(sqlite3_mutex *p) {
  if (!p) return RC_OK;
  return pthread_mutex_trylock(&p->m) == 0 ? RC_OK : RC_BUSY;
}

void sqlite3_mutex_leave(sqlite3_mutex *p) {
  if (p) pthread_mutex_unlock(&p->m);
}
