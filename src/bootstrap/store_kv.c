/* The stores' one key/value table (store_kv.h): a list, newest key first. */
#include "bootstrap/store_kv.h"
#include "coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

coll__kv_entry *coll__kv_find(const coll__kv *t, const char *key)
{
    for (coll__kv_entry *e = t->head; e; e = e->next)
        if (strcmp(e->key, key) == 0) return e;
    return NULL;
}

static coll__kv_entry *find_n(const coll__kv *t, const char *key, size_t klen)
{
    for (coll__kv_entry *e = t->head; e; e = e->next)
        if (strlen(e->key) == klen && memcmp(e->key, key, klen) == 0) return e;
    return NULL;
}

int coll__kv_put_n(coll__kv *t, const char *key, size_t klen, const void *val, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy) return COLL_ENOMEM;
    if (len) memcpy(copy, val, len);
    copy[len] = '\0';
    coll__kv_entry *e = find_n(t, key, klen);
    if (!e) {
        if (!(e = calloc(1, sizeof *e)) || !(e->key = strndup(key, klen))) {
            free(e);
            free(copy);
            return COLL_ENOMEM;
        }
        e->next = t->head;
        t->head = e;
    }
    free(e->val);
    e->val = copy;
    e->len = len;
    return COLL_OK;
}

int coll__kv_put(coll__kv *t, const char *key, const void *val, size_t len)
{
    return coll__kv_put_n(t, key, strlen(key), val, len);
}

size_t coll__kv_next_count(const coll__kv *t, const char *key, int64_t delta, int64_t *value,
                           char text[COLL__KV_COUNT_LEN])
{
    const coll__kv_entry *e = coll__kv_find(t, key);
    /* Wraps like the two's complement it is: a client's delta must not be UB (fuzzed). */
    *value = (int64_t)((uint64_t)(e ? strtoll(e->val, NULL, 10) : 0) + (uint64_t)delta);
    return (size_t)snprintf(text, COLL__KV_COUNT_LEN, "%lld", (long long)*value);
}

int coll__kv_add(coll__kv *t, const char *key, int64_t delta, int64_t *value)
{
    char text[COLL__KV_COUNT_LEN];
    size_t n = coll__kv_next_count(t, key, delta, value, text);
    return coll__kv_put(t, key, text, n);
}

int coll__kv_copy_out(const coll__kv_entry *e, void **val, size_t *len)
{
    if (!(*val = malloc(e->len + 1))) return COLL_ENOMEM;
    memcpy(*val, e->val, e->len + 1);
    if (len) *len = e->len;
    return COLL_OK;
}

void coll__kv_clear(coll__kv *t)
{
    for (coll__kv_entry *e = t->head, *n; e; e = n) {
        n = e->next;
        free(e->key);
        free(e->val);
        free(e);
    }
    t->head = NULL;
}
