/* Rendezvous key-value stores (like torch's TCPStore / FileStore).
 * Values are byte strings. get() and wait() block until the keys exist or the
 * store's timeout passes (COLL_ETIMEDOUT). */
#ifndef COLL_STORE_H
#define COLL_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

typedef struct coll__store coll__store;

typedef struct coll__store_ops {
    size_t size; /* sizeof this struct, for future growth */
    const char *name;
    int (*set)(coll__store *s, const char *key, const void *val, size_t len);
    /* Blocks until key exists; *val is malloc'd (caller frees), NUL-terminated past len. */
    int (*get)(coll__store *s, const char *key, void **val, size_t *len);
    /* Atomically adds delta to the integer at key (missing = 0); *result = new value. */
    int (*add)(coll__store *s, const char *key, int64_t delta, int64_t *result);
    /* Blocks until every key exists. */
    int (*wait)(coll__store *s, const char *const *keys, int nkeys);
    /* *exists = 1 if key is set; never blocks. */
    int (*check)(coll__store *s, const char *key, int *exists);
    void (*destroy)(coll__store *s);
} coll__store_ops;

struct coll__store {
    const coll__store_ops *ops;
    double timeout_s;
    coll__err err; /* why the last call failed */
};

/* TCP store. The server (rank 0) runs in a thread of this process and serves on
 * listen_fd if >= 0 (inherited from the launcher), else binds host:port (port 0:
 * a free port, see coll__tcp_store_port). Every client proves it knows token
 * (may be NULL or "" = no authentication) before its first request. */
int coll__tcp_store_create(const char *host, int port, int is_server, int listen_fd,
                           const char *token, double timeout_s, coll__store **out, coll__err *err);
/* Port the server listens on (server side only), else -1. */
int coll__tcp_store_port(const coll__store *s);
/* Server side: connections refused so far for a wrong job token (the last
 * one's address in last); 0 for a client or another store. */
unsigned coll__tcp_store_refused(const coll__store *s, char *last, size_t len);
/* Fuzzing: run the TCP store server's request handling over bytes as if one
 * client had sent them (token "k"), replies discarded. Returns 0, or -1 when no
 * socketpair could be made. */
int coll__tcp_store_feed(const unsigned char *data, size_t len);

/* File store: records appended to one file under flock; ranks poll it with backoff. */
int coll__file_store_create(const char *path, double timeout_s, coll__store **out, coll__err *err);

/* In-process store for threads of one process (tests, single-process use). */
int coll__mem_store_create(double timeout_s, coll__store **out);

static inline int coll__store_set(coll__store *s, const char *k, const void *v, size_t n)
{
    return s->ops->set(s, k, v, n);
}
static inline int coll__store_get(coll__store *s, const char *k, void **v, size_t *n)
{
    return s->ops->get(s, k, v, n);
}
static inline int coll__store_add(coll__store *s, const char *k, int64_t d, int64_t *r)
{
    return s->ops->add(s, k, d, r);
}
static inline int coll__store_wait(coll__store *s, const char *const *keys, int n)
{
    return s->ops->wait(s, keys, n);
}
static inline void coll__store_destroy(coll__store *s)
{
    if (s) s->ops->destroy(s);
}

/* A store key, like Gloo's PrefixStore: key = prefix followed by fmt's text
 * ("c0/" + "tcp/addr/%d"). COLL_OK, or COLL_EINVAL when it does not fit in len
 * bytes (never silently cut): err, when not NULL, then says so. */
__attribute__((format(printf, 5, 6))) int coll__store_key(char *key, size_t len, coll__err *err,
                                                          const char *prefix, const char *fmt, ...);

/* The ranks r < size with no key key_prefix<r> in the store, listed in buf
 * ("2", "1, 4", "0, 1, ... and 3 more"): how many, or a negative status. */
int coll__store_missing_ranks(coll__store *store, const char *key_prefix, int size, char *buf,
                              size_t len);

#endif
