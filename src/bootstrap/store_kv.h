/* The key/value table every store keeps (the TCP store's server, the file
 * store's parsed records, the in-memory store): keys are C strings, values
 * byte strings kept NUL-terminated past their length (so ADD can read them as
 * text), the last put of a key wins. No locking: the store that owns the table
 * serialises access. */
#ifndef COLL_STORE_KV_H
#define COLL_STORE_KV_H

#include <stddef.h>
#include <stdint.h>

typedef struct coll__kv_entry {
    struct coll__kv_entry *next;
    char *key;
    char *val; /* NUL-terminated past len */
    size_t len;
} coll__kv_entry;

typedef struct coll__kv {
    coll__kv_entry *head;
} coll__kv;

/* The entry of key, or NULL. */
coll__kv_entry *coll__kv_find(const coll__kv *t, const char *key);
/* Sets key (klen bytes, not NUL-terminated) to a copy of val. COLL_OK or COLL_ENOMEM. */
int coll__kv_put_n(coll__kv *t, const char *key, size_t klen, const void *val, size_t len);
/* Sets the C-string key to a copy of val. COLL_OK or COLL_ENOMEM. */
int coll__kv_put(coll__kv *t, const char *key, const void *val, size_t len);
/* Room for a counter's decimal text. */
#define COLL__KV_COUNT_LEN 32
/* What ADD would store, without storing it: *value = the integer text at key
 * (missing = 0) plus delta, wrapping like two's complement, written to text as
 * decimal; returns the text's length. */
size_t coll__kv_next_count(const coll__kv *t, const char *key, int64_t delta, int64_t *value,
                           char text[COLL__KV_COUNT_LEN]);
/* ADD: *value = the integer text at key (missing = 0) plus delta, wrapping like two's
 * complement; stores it back as decimal text. *value is set even on failure. */
int coll__kv_add(coll__kv *t, const char *key, int64_t delta, int64_t *value);
/* A get() result: *val a malloc'd copy of e's value, NUL-terminated past *len (len may be NULL). */
int coll__kv_copy_out(const coll__kv_entry *e, void **val, size_t *len);
/* Frees every entry; the table is empty after. */
void coll__kv_clear(coll__kv *t);

#endif
