/* Rendezvous checks for ranks that another launcher (torchrun style, several
 * hosts) started: a rank given twice or world sizes that disagree would
 * otherwise wait for a peer that never comes until the timeout. Here every rank
 * claims its rank in the store, compares its world size with the first rank's,
 * and waits until all ranks have claimed theirs or one of them reported a
 * problem, which all of them then print. */
#include "bootstrap/rendezvous.h"
#include "core/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLL_MIN_S 0.001
#define POLL_MAX_S 0.050

int coll__rendezvous_wants_verify(const coll__rendezvous *rv)
{
    if (!rv->store || rv->world_size < 2) return 0;
    const char *launched = getenv("COLL_LAUNCHED"), *multi = getenv("COLL_VERIFY_RANKS");
    /* Our own single-host launcher numbers its ranks itself: nothing to check. */
    return !(launched && strcmp(launched, "1") == 0) || (multi && strcmp(multi, "1") == 0);
}

/* rv's key "v/<name>"; COLL_EINVAL (err says so) when it does not fit. */
static int key(char *buf, size_t len, const coll__rendezvous *rv, const char *name, coll__err *err)
{
    return coll__store_key(buf, len, err, rv->prefix, "v/%s", name);
}

/* Tell every waiting rank, then fail this one with the same words. */
static int report(const coll__rendezvous *rv, const char *msg, coll__err *err)
{
    char k[128];
    if (key(k, sizeof k, rv, "error", NULL) == COLL_OK)
        coll__store_set(rv->store, k, msg, strlen(msg));
    return coll__err_set(err, COLL_EINVAL, "%s", msg);
}

static int store_fail(const coll__rendezvous *rv, int rc, const char *what, coll__err *err)
{
    return coll__err_set(err, rc, "rendezvous: rank %d: %s: %s", rv->rank, what,
                         rv->store->err.msg[0] ? rv->store->err.msg : coll_strerror(rc));
}

static int check_world(const coll__rendezvous *rv, coll__err *err)
{
    char k[128], mine[32], msg[256];
    int64_t order;
    void *v = NULL;
    size_t n;
    snprintf(mine, sizeof mine, "%d", rv->world_size);
    int rc = key(k, sizeof k, rv, "first", err);
    if (rc) return rc;
    rc = coll__store_add(rv->store, k, 1, &order);
    if (rc) return store_fail(rv, rc, "cannot reach the store", err);
    if ((rc = key(k, sizeof k, rv, "world", err))) return rc;
    if (order == 1 && (rc = coll__store_set(rv->store, k, mine, strlen(mine))))
        return store_fail(rv, rc, "cannot publish the world size", err);
    if ((rc = coll__store_get(rv->store, k, &v, &n)))
        return store_fail(rv, rc, "no world size in the store", err);
    int first = atoi(v);
    free(v);
    if (first == rv->world_size) return COLL_OK;
    snprintf(msg, sizeof msg,
             "world size mismatch at rendezvous: rank %d was started with world size %d, "
             "the first rank to arrive with %d (check WORLD_SIZE / --nnodes x --nproc-per-node "
             "on every host)",
             rv->rank, rv->world_size, first);
    return report(rv, msg, err);
}

static int claim_rank(const coll__rendezvous *rv, coll__err *err)
{
    char k[128], name[48], msg[256];
    int64_t claims, arrived;
    snprintf(name, sizeof name, "claim/%d", rv->rank);
    int rc = key(k, sizeof k, rv, name, err);
    if (rc) return rc;
    rc = coll__store_add(rv->store, k, 1, &claims);
    if (rc) return store_fail(rv, rc, "cannot claim its rank", err);
    if (claims > 1) {
        snprintf(msg, sizeof msg,
                 "duplicate rank at rendezvous: two processes were started as rank %d of %d "
                 "(check RANK / --node-rank on every host)",
                 rv->rank, rv->world_size);
        return report(rv, msg, err);
    }
    if ((rc = key(k, sizeof k, rv, "arrived", err))) return rc;
    if ((rc = coll__store_add(rv->store, k, 1, &arrived)))
        return store_fail(rv, rc, "cannot count itself in", err);
    return COLL_OK;
}

/* Names in buf the ranks that never claimed their rank. */
static int missing_ranks(const coll__rendezvous *rv, char *buf, size_t len)
{
    char key_prefix[128];
    coll__err e;
    coll__err_init(&e, NULL, 0);
    int rc = key(key_prefix, sizeof key_prefix, rv, "claim/", &e);
    if (rc) coll__err_copy(&e, buf, len);
    return rc ? rc : coll__store_missing_ranks(rv->store, key_prefix, rv->world_size, buf, len);
}

/* Until every rank arrived or one reported a problem; sleeps between looks. */
static int wait_all(const coll__rendezvous *rv, coll__err *err)
{
    char karr[128], kerr[128];
    int krc = key(karr, sizeof karr, rv, "arrived", err);
    if (!krc) krc = key(kerr, sizeof kerr, rv, "error", err);
    if (krc) return krc;
    double deadline = coll__now_s() + rv->timeout_s, pause = POLL_MIN_S;
    int64_t arrived = 0;
    for (;;) {
        int failed = 0, rc = coll__store_add(rv->store, karr, 0, &arrived);
        if (!rc) rc = rv->store->ops->check(rv->store, kerr, &failed);
        if (rc) return store_fail(rv, rc, "lost the store while waiting for the others", err);
        if (failed) {
            void *v = NULL;
            size_t n;
            if (coll__store_get(rv->store, kerr, &v, &n) == COLL_OK) {
                coll__err_set(err, 0, "another rank failed the rendezvous: %s", (char *)v);
                free(v);
            }
            return COLL_EINVAL;
        }
        if (arrived >= rv->world_size) return COLL_OK;
        if (coll__now_s() >= deadline) break;
        coll__sleep_s(pause);
        pause = pause * 2 > POLL_MAX_S ? POLL_MAX_S : pause * 2;
    }
    char list[96], last[64], why[192];
    int missing = missing_ranks(rv, list, sizeof list);
    unsigned refused = coll__tcp_store_refused(rv->store, last, sizeof last);
    /* what the store saw says more than a guess */
    if (refused)
        snprintf(why, sizeof why,
                 "the store refused %u connection%s with a wrong job token, the last from %s: "
                 "give every host the same --job-token-file",
                 refused, refused > 1 ? "s" : "", last);
    else
        snprintf(why, sizeof why,
                 "not started, or started with another --master-addr/--master-port?");
    if (missing > 0)
        return coll__err_set(err, COLL_ETIMEDOUT,
                             "rendezvous: only %lld of %d ranks arrived within %.3g s: rank%s %s "
                             "%s missing (%s)",
                             (long long)arrived, rv->world_size, rv->timeout_s,
                             missing > 1 ? "s" : "", list, missing > 1 ? "are" : "is", why);
    else
        return coll__err_set(err, COLL_ETIMEDOUT,
                             "rendezvous: only %lld of %d ranks arrived within %.3g s (ranks not "
                             "started, or started with another --master-addr/--master-port?)",
                             (long long)arrived, rv->world_size, rv->timeout_s);
}

int coll__rendezvous_verify(const coll__rendezvous *rv, coll__err *err)
{
    int rc = check_world(rv, err);
    if (!rc) rc = claim_rank(rv, err);
    if (!rc) rc = wait_all(rv, err);
    return rc;
}
