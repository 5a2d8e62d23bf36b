/* In-process store: one table shared by the threads of a process.
 * Used by tests that run ranks as threads, and by single-rank communicators. */
#include "bootstrap/store.h"
#include "coll.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct mem_entry {
    struct mem_entry *next;
    char *key;
    void *val;
    size_t len;
} mem_entry;

typedef struct mem_store {
    coll_store base;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    mem_entry *head;
} mem_store;

static mem_entry *find(mem_store *m, const char *key)
{
    for (mem_entry *e = m->head; e; e = e->next)
        if (strcmp(e->key, key) == 0) return e;
    return NULL;
}

static int put_locked(mem_store *m, const char *key, const void *val, size_t len)
{
    mem_entry *e = find(m, key);
    void *copy = malloc(len + 1);
    if (!copy) return COLL_ENOMEM;
    memcpy(copy, val, len);
    ((char *)copy)[len] = '\0';
    if (!e) {
        e = calloc(1, sizeof(*e));
        if (!e || !(e->key = strdup(key))) {
            free(e);
            free(copy);
            return COLL_ENOMEM;
        }
        e->next = m->head;
        m->head = e;
    }
    free(e->val);
    e->val = copy;
    e->len = len;
    pthread_cond_broadcast(&m->changed);
    return COLL_OK;
}

static int mem_set(coll_store *s, const char *key, const void *val, size_t len)
{
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->lock);
    int rc = put_locked(m, key, val, len);
    pthread_mutex_unlock(&m->lock);
    return rc;
}

/* Waits for key under the lock; returns the entry or NULL on timeout. */
static mem_entry *wait_locked(mem_store *m, const char *key, const struct timespec *until)
{
    mem_entry *e;
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

static int mem_get(coll_store *s, const char *key, void **val, size_t *len)
{
    mem_store *m = (mem_store *)s;
    struct timespec until = deadline_of(s->timeout_s);
    int rc = COLL_OK;
    pthread_mutex_lock(&m->lock);
    mem_entry *e = wait_locked(m, key, &until);
    if (!e) {
        rc = COLL_ETIMEDOUT;
    } else if (!(*val = malloc(e->len + 1))) {
        rc = COLL_ENOMEM;
    } else {
        memcpy(*val, e->val, e->len + 1);
        if (len) *len = e->len;
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

static int mem_add(coll_store *s, const char *key, int64_t delta, int64_t *result)
{
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->lock);
    mem_entry *e = find(m, key);
    int64_t v = (e ? strtoll(e->val, NULL, 10) : 0) + delta;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%lld", (long long)v);
    int rc = put_locked(m, key, buf, (size_t)n);
    pthread_mutex_unlock(&m->lock);
    if (result) *result = v;
    return rc;
}

static int mem_wait(coll_store *s, const char *const *keys, int nkeys)
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

static int mem_check(coll_store *s, const char *key, int *exists)
{
    mem_store *m = (mem_store *)s;
    pthread_mutex_lock(&m->lock);
    *exists = find(m, key) != NULL;
    pthread_mutex_unlock(&m->lock);
    return COLL_OK;
}

static void mem_destroy(coll_store *s)
{
    mem_store *m = (mem_store *)s;
    for (mem_entry *e = m->head, *n; e; e = n) {
        n = e->next;
        free(e->key);
        free(e->val);
        free(e);
    }
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->changed);
    free(m);
}

static const coll_store_ops mem_ops = {
    .size = sizeof(coll_store_ops),
    .name = "mem",
    .set = mem_set,
    .get = mem_get,
    .add = mem_add,
    .wait = mem_wait,
    .check = mem_check,
    .destroy = mem_destroy,
};

int coll_mem_store_create(double timeout_s, coll_store **out)
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
