/* coll_monitored_barrier: a barrier that says who did not come.
 *
 * It runs over the rendezvous store rather than the transport: the transport
 * cannot cancel a receive from a rank that never sends, while store keys can be
 * polled with a deadline and a late rank's key does no harm. Keys of barrier n:
 *   <prefix>mb<n>/a<r>   rank r arrived
 *   <prefix>mb<n>/ans    rank 0's answer: "K r1 r2 ... rK", the missing ranks
 * A rank that arrives after the answer reads it and learns it was late too. */
#include "comm/comm.h"
#include "bootstrap/store.h"
#include "core/clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long the others wait for rank 0's answer beyond the timeout: rank 0 may
 * start its own wait a little after them. */
#define ANSWER_GRACE_S 1.0

/* Poll interval: short at first (a fast barrier), backing off to 10 ms. */
static double next_backoff(double b) { return b * 2 > 0.01 ? 0.01 : b * 2; }

static int store_fail(coll_comm *comm, int rc, const char *what)
{
    return coll__err_blame(&comm->err, rc, -1, "monitored barrier: store %s failed: %s", what,
                           coll__err_text(&comm->store->err));
}

/* Rank 0: wait for every arrival key until deadline; missing ranks into list. */
static int gather_arrivals(coll_comm *comm, uint32_t n, double deadline, int *list, int *nlist)
{
    char key[128];
    int *arrived = calloc((size_t)comm->size, sizeof *arrived);
    if (!arrived) return COLL_ENOMEM;
    int pending = comm->size - 1, rc = COLL_OK;
    double backoff = 0.0005;
    for (;;) {
        for (int r = 1; r < comm->size && rc == COLL_OK; r++) {
            if (arrived[r]) continue;
            int exists = 0;
            rc = coll__store_key(key, sizeof key, NULL, comm->store_prefix, "mb%u/a%d", n, r);
            if (rc == COLL_OK) rc = comm->store->ops->check(comm->store, key, &exists);
            if (rc == COLL_OK && exists) arrived[r] = 1, pending--;
        }
        if (rc || pending == 0 || coll__now_s() >= deadline) break;
        double left = deadline - coll__now_s();
        coll__nap_s(backoff < left ? backoff : left);
        backoff = next_backoff(backoff);
    }
    *nlist = 0;
    for (int r = 1; r < comm->size; r++)
        if (!arrived[r]) list[(*nlist)++] = r;
    free(arrived);
    return rc ? store_fail(comm, rc, "check") : COLL_OK;
}

static int publish_answer(coll_comm *comm, uint32_t n, const int *list, int nlist)
{
    size_t cap = 16 + (size_t)nlist * 12, len;
    char key[128], *val = malloc(cap);
    if (!val) return COLL_ENOMEM;
    len = (size_t)snprintf(val, cap, "%d", nlist);
    for (int i = 0; i < nlist; i++) len += (size_t)snprintf(val + len, cap - len, " %d", list[i]);
    int rc = coll__store_key(key, sizeof key, NULL, comm->store_prefix, "mb%u/ans", n);
    if (!rc) rc = coll__store_set(comm->store, key, val, len);
    free(val);
    return rc ? store_fail(comm, rc, "set") : COLL_OK;
}

/* Others: wait for rank 0's answer until deadline. *got = 0 when none came. */
static int read_answer(coll_comm *comm, uint32_t n, double deadline, int *list, int *nlist,
                       int *got)
{
    char key[128];
    int krc = coll__store_key(key, sizeof key, NULL, comm->store_prefix, "mb%u/ans", n);
    if (krc) return store_fail(comm, krc, "key");
    double backoff = 0.0005;
    *got = 0;
    for (;;) {
        int exists = 0;
        int rc = comm->store->ops->check(comm->store, key, &exists);
        if (rc) return store_fail(comm, rc, "check");
        if (exists) break;
        double left = deadline - coll__now_s();
        if (left <= 0) return COLL_OK;
        coll__nap_s(backoff < left ? backoff : left);
        backoff = next_backoff(backoff);
    }
    void *val = NULL;
    size_t len = 0;
    int rc = coll__store_get(comm->store, key, &val, &len);
    if (rc) return store_fail(comm, rc, "get");
    char *p = val, *end;
    long k = strtol(p, &end, 10);
    int bad = end == p || k < 0 || k >= comm->size;
    for (long i = 0; !bad && i < k; i++) {
        p = end;
        long r = strtol(p, &end, 10);
        if (end == p || r < 0 || r >= comm->size) bad = 1;
        else list[i] = (int)r;
    }
    free(val);
    if (bad) {
        return coll__err_blame(&comm->err, COLL_EPROTO, 0,
                               "monitored barrier: malformed answer from rank 0 under key %s", key);
    }
    *nlist = (int)k;
    *got = 1;
    return COLL_OK;
}

static void format_missing(coll_comm *comm, const int *list, int nlist, double timeout_s,
                           const char *why)
{
    size_t len = (size_t)snprintf(comm->err.msg, sizeof comm->err.msg, "rank%s ",
                                  nlist > 1 ? "s" : "");
    for (int i = 0; i < nlist && len < sizeof comm->err.msg; i++)
        len += (size_t)snprintf(comm->err.msg + len, sizeof comm->err.msg - len, "%s%d",
                                i ? ", " : "", list[i]);
    if (len < sizeof comm->err.msg)
        snprintf(comm->err.msg + len, sizeof comm->err.msg - len, " %s within %.*f s", why,
                 timeout_s < 0.1 ? 3 : 1, timeout_s);
    comm->err.rank = list[0];
}

static int run_monitored(coll_comm *comm, double timeout_s, int *list, int *nlist)
{
    char key[128];
    uint32_t n = ++comm->monitored_seq;
    double start = coll__now_s();
    int rc = coll__store_key(key, sizeof key, NULL, comm->store_prefix, "mb%u/a%d", n, comm->rank);
    if (!rc) rc = coll__store_set(comm->store, key, "1", 1);
    if (rc) return store_fail(comm, rc, "set");
    if (comm->rank == 0) {
        rc = gather_arrivals(comm, n, start + timeout_s, list, nlist);
        if (rc == COLL_OK) rc = publish_answer(comm, n, list, *nlist);
        if (rc == COLL_OK && *nlist)
            format_missing(comm, list, *nlist, timeout_s, "did not reach the monitored barrier");
        return rc ? rc : *nlist ? COLL_ETIMEDOUT : COLL_OK;
    }
    int got = 0;
    rc = read_answer(comm, n, start + timeout_s + ANSWER_GRACE_S, list, nlist, &got);
    if (rc) return rc;
    if (!got) { /* rank 0 is dead or late: it is the one missing */
        list[0] = 0;
        *nlist = 1;
        format_missing(comm, list, 1, timeout_s + ANSWER_GRACE_S,
                       "did not answer the monitored barrier");
        return COLL_ETIMEDOUT;
    }
    if (*nlist)
        format_missing(comm, list, *nlist, timeout_s, "did not reach the monitored barrier");
    return *nlist ? COLL_ETIMEDOUT : COLL_OK;
}

int coll_monitored_barrier(coll_comm *comm, double timeout_s, int *missing, int max_missing,
                           int *nmissing)
{
    if (!comm) return COLL_EINVAL;
    if (nmissing) *nmissing = 0;
    if (!(timeout_s > 0) || isinf(timeout_s) || max_missing < 0 || (max_missing && !missing)) {
        return coll__err_blame(&comm->err, COLL_EINVAL, -1,
                               "monitored barrier: timeout %g s must be positive and finite, "
                               "missing[] non-NULL when max_missing (%d) > 0",
                               timeout_s, max_missing);
    }
    if (comm->failed) return comm->failed;
    if (!comm->store) {
        return coll__err_blame(&comm->err, COLL_ENOTSUP, -1,
                               "monitored barrier: no rendezvous store");
    }
    int *list = calloc((size_t)comm->size, sizeof *list);
    if (!list) return COLL_ENOMEM;
    int nlist = 0;

    /* Run in call order, after everything queued before (as call_blocking does). */
    pthread_mutex_lock(&comm->lock);
    while (comm->busy || comm->queue_head) pthread_cond_wait(&comm->changed, &comm->lock);
    comm->busy = 1;
    pthread_mutex_unlock(&comm->lock);

    int rc = run_monitored(comm, timeout_s, list, &nlist);

    pthread_mutex_lock(&comm->lock);
    comm->busy = 0;
    pthread_cond_broadcast(&comm->changed);
    if (comm->queue_head) pthread_cond_signal(&comm->work); /* queued meanwhile */
    pthread_mutex_unlock(&comm->lock);

    if (rc == COLL_OK || rc == COLL_ETIMEDOUT) {
        for (int i = 0; i < nlist && i < max_missing; i++) missing[i] = list[i];
        if (nmissing) *nmissing = nlist;
    }
    /* a rank that fails on it tells its launcher whom it waited for */
    if (rc) coll__comm_note_blame(rc == COLL_ETIMEDOUT && nlist == 1 ? list[0] : -1, rc);
    free(list);
    return rc;
}
