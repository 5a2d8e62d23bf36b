/* The chain of blames in the store: see blame_chain.h. */
#include "bootstrap/blame_chain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core/clock.h"

#define BLAME_STORE_S 0.2 /* how long one store op of the look-up may take */

typedef struct chain {
    coll__store *store;
    const char *prefix, *tag;
    int size;
} chain;

static int key_of(const chain *c, int rank, char *key, size_t len)
{
    return coll__store_key(key, len, NULL, c->prefix, "%s/blame/%d", c->tag, rank);
}

static void publish(const chain *c, int rank, int blamed)
{
    char key[128], val[16];
    if (key_of(c, rank, key, sizeof key)) return;
    snprintf(val, sizeof val, "%d", blamed);
    coll__store_set(c->store, key, val, strlen(val));
}

/* Whom rank r blames (-1: no word from it); never blocks on the store. */
static int blame_of(const chain *c, int r)
{
    char key[128];
    int exists = 0, who = -1;
    void *v = NULL;
    size_t n;
    if (key_of(c, r, key, sizeof key)) return -1;
    if (c->store->ops->check(c->store, key, &exists) || !exists) return -1;
    if (coll__store_get(c->store, key, &v, &n) == COLL_OK) who = atoi(v);
    free(v);
    return who >= 0 && who < c->size ? who : -1;
}

static int follow(const chain *c, int rank, int blamed, double grace_s)
{
    double until = coll__now_s() + grace_s;
    int root = blamed;
    for (int hops = 0; hops < c->size;) {
        int next = blame_of(c, root);
        if (next == rank || next == root) break; /* waiting on each other: keep root */
        if (next >= 0) {
            root = next;
            hops++;
            continue;
        }
        if (coll__now_s() >= until) break;
        coll__sleep_s(0.01);
    }
    return root;
}

int coll__blame_chain(coll__store *store, const char *prefix, const char *tag, int rank, int size,
                      int blamed, double grace_s)
{
    if (!store || blamed < 0 || blamed >= size || blamed == rank) return blamed;
    chain c = {store, prefix, tag, size};
    double saved = store->timeout_s;
    store->timeout_s = BLAME_STORE_S;
    publish(&c, rank, blamed);
    int root = follow(&c, rank, blamed, grace_s);
    if (root != blamed) publish(&c, rank, root);
    store->timeout_s = saved;
    return root;
}
