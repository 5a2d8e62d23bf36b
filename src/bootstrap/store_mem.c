/* In-process store: one table shared by the threads of a process.
 * Used by tests that run ranks as threads, and by single-rank communicators. */
#include "bootstrap/store.h"
#include "bootstrap/store_kv.h"
#include "coll.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct mem_store {
    coll__store base;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    coll__kv table;
} mem_store;

static coll__kv_entry *find(mem_store *m, const char *key) { return coll__kv_find(&m->table, key); }

static int put_locked(mem_store *m, const char *key, const void *val, size_t len)
{
    int rc = coll__kv_put(&m->table, key, val, len);
    if (rc == COLL_OK) pthread_cond_broadcast(&m->changed);
    return rc;
}

static int mem_set(coll__store *s, const char *key, const void *val, size_t len)
{
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->lock);
    int rc = put_locked(m, key, val, len);
    pthread_mutex_unlock(&m->lock);
    return rc;
}

/* Waits for key under the lock; returns the entry or NULL on timeout. */
static coll__kv_entry *wait_locked(mem_store *m, const char *key, const struct timespec *until)
{
    coll__kv_entry *e;
    while (!(e = find(m, key)))
        if (pthread_cond_timedwait(&m->changed, &m->lock, until) == ETIMEDOUT) return find(m, key);
    return e;
}

static struct timespec deadline_of(double timeout_s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double t = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + timeout_s;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    return ts;
}

static int mem_get(coll__store *s, const char *key, void **val, size_t *len)
{
    mem_store *m = (mem_store *)s;
    struct timespec until = deadline_of(s->timeout_s);
    pthread_mutex_lock(&m->lock);
    coll__kv_entry *e = wait_locked(m, key, &until);
    int rc = e ? coll__kv_copy_out(e, val, len) : COLL_ETIMEDOUT;
    pthread_mutex_unlock(&m->lock);
    return rc;
}

static int mem_add(coll__store *s, const char *key, int64_t delta, int64_t *result)
{
    mem_store *m = (mem_store *)s;
    int64_t v;
    pthread_mutex_lock(&m->lock);
    int rc = coll__kv_add(&m->table, key, delta, &v);
    if (rc == COLL_OK) pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->lock);
    if (result) *result = v;
    return rc;
}

static int mem_wait(coll__store *s, const char *const *keys, int nkeys)
{
    mem_store *m = (mem_store *)s;
    struct timespec until = deadline_of(s->timeout_s);
    int rc = COLL_OK;
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < nkeys && rc == COLL_OK; i++)
        if (!wait_locked(m, keys[i], &until)) rc = COLL_ETIMEDOUT;
    pthread_mutex_unlock(&m->lock);
    return rc;
}

static int mem_check(coll__store *s, const char *key, int *exists)
{
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->lock);
    *exists = find(m, key) != NULL;
    pthread_mutex_unlock(&m->lock);
    return COLL_OK;
}

static void mem_destroy(coll__store *s)
{
    mem_store *m = (mem_store *)s;
    coll__kv_clear(&m->table);
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->changed);
    free(m);
}

static const coll__store_ops mem_ops = {
    .size = sizeof(coll__store_ops),
    .name = "mem",
    .set = mem_set,
    .get = mem_get,
    .add = mem_add,
    .wait = mem_wait,
    .check = mem_check,
    .destroy = mem_destroy,
};

int coll__mem_store_create(double timeout_s, coll__store **out)
{
    mem_store *m = calloc(1, sizeof(*m));
    if (!m) return COLL_ENOMEM;
    m->base.ops = &mem_ops;
    m->base.timeout_s = timeout_s;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->changed, NULL);
    *out = &m->base;
    return COLL_OK;
}
