/* Host ids and the plan of which ranks share a host (backend/auto/auto.h). */
#include "backend/auto/auto.h"

#include "core/clock.h"
#include "core/env.h"

#include <limits.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NO_LIST '\x01' /* first byte of the list key when rank 0 has none to give */
/* How long rank 0 stays, at most, for its verdict to be read (linger_for_readers). */
#define VERDICT_GRACE_S 1.0

/* Ids travel joined by '\n' in one store value: keep them to one printable line. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '_';
}

static void read_boot_id(char *buf, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    buf[0] = '\0';
    if (f) {
        if (!fgets(buf, (int)len, f)) buf[0] = '\0';
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = '\0';
    if (!buf[0]) snprintf(buf, len, "noboot"); /* no /proc: the netns inode still tells apart */
}

int coll__host_id(int rank, char *buf, size_t len, coll__err *err)
{
    if (!buf || len < 2) return COLL_EINVAL;
    const char *fixed = getenv("COLL_HOST_ID");
    if (fixed && *fixed) {
        snprintf(buf, len, "%s", fixed);
    } else {
        char boot[64];
        struct stat st;
        read_boot_id(boot, sizeof boot);
        unsigned long long ns = stat("/proc/self/ns/net", &st) == 0 ? (unsigned long long)st.st_ino
                                                                    : 0;
        snprintf(buf, len, "%s/net%llu", boot, ns);
    }
    uint64_t k;
    int rc = coll__tunable_read(&coll__auto_tunables.rows[AUTO_KNOB_RANKS_PER_HOST], 0, 0, &k, err);
    if (rc) return rc;
    if (k > 0) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "/emu%ld", (long)rank / (long)k);
    }
    sanitize(buf);
    return COLL_OK;
}

void coll__host_plan_free(coll__host_plan *p)
{
    free(p->host_of);
    free(p->local_of);
    free(p->members);
    free(p->peers);
    memset(p, 0, sizeof *p);
}

/* The peers array: rank with our local index on every host, when all hosts match. */
static int fill_peers(coll__host_plan *p, const int *host_count)
{
    p->regular = 1;
    for (int h = 0; h < p->nhosts; h++)
        if (host_count[h] != p->local_size) p->regular = 0;
    if (!p->regular) return COLL_OK;
    p->peers = malloc((size_t)p->nhosts * sizeof *p->peers);
    if (!p->peers) return COLL_ENOMEM;
    for (int r = 0; r < p->size; r++)
        if (p->local_of[r] == p->local_rank) p->peers[p->host_of[r]] = r;
    return COLL_OK;
}

int coll__host_plan_build(const char *const *ids, int size, int rank, coll__host_plan *p)
{
    memset(p, 0, sizeof *p);
    if (size < 1 || rank < 0 || rank >= size) return COLL_EINVAL;
    p->size = size;
    p->host_of = malloc((size_t)size * sizeof(int));
    p->local_of = malloc((size_t)size * sizeof(int));
    int *first = malloc((size_t)size * sizeof(int)); /* lowest rank of each host */
    int *count = calloc((size_t)size, sizeof(int));  /* ranks on each host */
    int rc = COLL_ENOMEM;
    if (!p->host_of || !p->local_of || !first || !count) goto out;
    /* Quadratic in the number of hosts, once per communicator: fine for thousands. */
    for (int r = 0; r < size; r++) {
        int h = 0;
        while (h < p->nhosts && strcmp(ids[first[h]], ids[r]) != 0) h++;
        if (h == p->nhosts) first[p->nhosts++] = r;
        p->host_of[r] = h;
        p->local_of[r] = count[h]++;
    }
    p->host = p->host_of[rank];
    p->local_rank = p->local_of[rank];
    p->local_size = count[p->host];
    p->members = malloc((size_t)p->local_size * sizeof(int));
    if (!p->members) goto out;
    for (int r = 0; r < size; r++)
        if (p->host_of[r] == p->host) p->members[p->local_of[r]] = r;
    rc = fill_peers(p, count);
out:
    free(first);
    free(count);
    if (rc) coll__host_plan_free(p);
    return rc;
}

/* Names in buf the ranks whose host id is not in the store (only on the error
 * path, so one check per rank is fine). */
static int missing_ranks(coll__store *store, const char *prefix, int size, char *buf, size_t len)
{
    char key_prefix[160];
    coll__err e;
    coll__err_init(&e, NULL, 0);
    int rc = coll__store_key(key_prefix, sizeof key_prefix, &e, prefix, "host/");
    if (rc) coll__err_copy(&e, buf, len);
    return rc ? rc : coll__store_missing_ranks(store, key_prefix, size, buf, len);
}

/* err for a wait on host ids that failed: the ranks that never published one
 * when the store can tell (after: why that stops this rank), else fallback and
 * the store's own words (why). Returns how many are missing, or a negative
 * status when the store cannot tell. */
static int blame_missing(coll__store *store, const char *prefix, int size, double waited,
                         const char *why, const char *after, const char *fallback, coll__err *err)
{
    char list[96];
    int missing = missing_ranks(store, prefix, size, list, sizeof list);
    if (missing > 0)
        coll__err_set(err, 0,
                      "host ids: rank%s %s never published %s host id within %.3g s%s%s%s%s",
                      missing > 1 ? "s" : "", list, missing > 1 ? "their" : "its", waited, after,
                      why[0] ? " (" : "", why, why[0] ? ")" : "");
    else
        coll__err_set(err, 0, "host ids: %s: %s", fallback,
                      why[0]              ? why
                      : store->err.msg[0] ? store->err.msg
                                          : "no rank is missing now");
    return missing;
}

static void store_error(coll__store *store, int rc, char *why, size_t len)
{
    if (store->err.msg[0]) coll__err_copy(&store->err, why, len);
    else snprintf(why, len, "%s", coll_strerror(rc));
}

/* Rank 0 gives up this much before the store's timeout, so that the others,
 * waiting for the list with the store's timeout, read why there is none
 * before rank 0 exits and takes the store with it. */
static double gather_patience(double timeout_s)
{
    return timeout_s - (timeout_s / 4 < 0.5 ? timeout_s / 4 : 0.5);
}

/* Until every rank's id is in the store (rank 0 hosts it: looks are cheap),
 * sleeping between looks, or the patience runs out. */
static int await_ids(coll__store *store, const char *prefix, int size, coll__err *err)
{
    double patience = gather_patience(store->timeout_s), until = coll__now_s() + patience;
    double pause = 0.001;
    char key[128], why[256];
    for (int r = 0; r < size;) {
        int exists = 0;
        int rc = coll__store_key(key, sizeof key, err, prefix, "host/%d", r);
        if (rc) return rc;
        rc = store->ops->check(store, key, &exists);
        if (rc) {
            store_error(store, rc, why, sizeof why);
            return coll__err_set(err, rc, "host ids: rank 0 cannot look for rank %d's host id: %s",
                                 r, why);
        }
        if (exists) {
            r++;
            continue;
        }
        if (coll__now_s() >= until) {
            int missing = blame_missing(store, prefix, size, patience, "", "",
                                        "rank 0 cannot look for the missing ids", err);
            if (missing == 0) continue; /* the last one came just now */
            return missing > 0 ? COLL_ETIMEDOUT : missing;
        }
        coll__sleep_s(pause);
        pause = pause * 2 > 0.05 ? 0.05 : pause * 2;
    }
    return COLL_OK;
}

/* Rank 0 waits for every rank's id, then joins them into one value so the
 * others read one key. */
static int gather_ids(coll__store *store, const char *prefix, int size, char **joined,
                      coll__err *err)
{
    size_t cap = (size_t)size * COLL_HOST_ID_MAX + 1, used = 0;
    char *all = malloc(cap), key[128], why[256];
    if (!all) return COLL_ENOMEM;
    int rc = await_ids(store, prefix, size, err);
    for (int r = 0; !rc && r < size; r++) {
        void *v;
        size_t n;
        if ((rc = coll__store_key(key, sizeof key, err, prefix, "host/%d", r))) break;
        if ((rc = coll__store_get(store, key, &v, &n))) {
            store_error(store, rc, why, sizeof why);
            coll__err_set(err, 0, "host ids: cannot read rank %d's host id: %s", r, why);
            break;
        }
        if (n >= COLL_HOST_ID_MAX) n = COLL_HOST_ID_MAX - 1;
        memcpy(all + used, v, n);
        used += n;
        all[used++] = '\n';
        free(v);
    }
    if (rc) {
        free(all);
        return rc;
    }
    all[used] = '\0';
    *joined = all;
    return COLL_OK;
}

static int split_ids(char *joined, int size, const char **ids)
{
    char *save = NULL, *line = strtok_r(joined, "\n", &save);
    for (int r = 0; r < size; r++, line = strtok_r(NULL, "\n", &save)) {
        if (!line) return COLL_EPROTO;
        ids[r] = line;
    }
    return COLL_OK;
}

/* The others read the list rank 0 published, or why it has none. */
static int receive_list(coll__store *store, const char *prefix, int size, char **joined,
                        coll__err *err)
{
    char key[128], why[256];
    void *v = NULL;
    size_t n = 0;
    int exists = 0;
    int rc = coll__store_key(key, sizeof key, err, prefix, "hosts");
    if (rc) return rc;
    rc = coll__store_get(store, key, &v, &n);
    if (rc == COLL_ETIMEDOUT) {
        store_error(store, rc, why, sizeof why);
        /* Rank 0 gives up before us (gather_patience), but under load its word
         * may come just after our timeout: one more look, then ask the store
         * who is missing. */
        if (store->ops->check(store, key, &exists) == COLL_OK && exists)
            rc = coll__store_get(store, key, &v, &n);
        if (rc)
            blame_missing(store, prefix, size, store->timeout_s, why,
                          ", so rank 0 had no list to send", "rank 0 never published the list",
                          err);
    } else if (rc) { /* rank 0, the store's host, died before it published anything */
        store_error(store, rc, why, sizeof why);
        coll__err_set(err, 0, "host ids: rank 0 never published the list: %s", why);
    }
    if (rc) return rc;
    if (n > 0 && ((char *)v)[0] == NO_LIST) {
        /* rank 0 waits for this before its store goes away (linger_for_readers) */
        if (!coll__store_key(key, sizeof key, NULL, prefix, "hosts_seen"))
            coll__store_add(store, key, 1, NULL);
        coll__err_set(err, 0, "%s (reported by rank 0)", (char *)v + 1);
        free(v);
        return COLL_ETIMEDOUT;
    }
    *joined = v;
    return COLL_OK;
}

/* Rank 0 hosts the store: after publishing a verdict instead of the list it
 * stays until every other rank whose id arrived has read it (each adds 1 to
 * "hosts_seen"), at most VERDICT_GRACE_S, so that a rank slow to ask finds the
 * verdict (naming the missing rank) rather than a closed store. */
static void linger_for_readers(coll__store *store, const char *prefix, int size)
{
    char key[128];
    int want = 0, exists;
    for (int r = 1; r < size; r++)
        if (!coll__store_key(key, sizeof key, NULL, prefix, "host/%d", r) &&
            store->ops->check(store, key, &exists) == COLL_OK && exists)
            want++;
    if (coll__store_key(key, sizeof key, NULL, prefix, "hosts_seen")) return;
    for (double until = coll__now_s() + VERDICT_GRACE_S; coll__now_s() < until;) {
        int64_t seen = 0;
        if (coll__store_add(store, key, 0, &seen) != COLL_OK || seen >= want) return;
        coll__sleep_s(0.005);
    }
}

int coll__host_plan_exchange(coll__store *store, const char *prefix, int rank, int size,
                             coll__host_plan *p, coll__err *err)
{
    char id[COLL_HOST_ID_MAX], key[128], why[256];
    char *joined = NULL;
    const char **ids = calloc((size_t)size, sizeof *ids);
    if (!ids) return COLL_ENOMEM;
    int rc = coll__host_id(rank, id, sizeof id, err);
    if (!rc) rc = coll__store_key(key, sizeof key, err, prefix, "host/%d", rank);
    if (!rc && (rc = coll__store_set(store, key, id, strlen(id)))) {
        store_error(store, rc, why, sizeof why);
        coll__err_set(err, 0, "host ids: rank %d cannot publish its host id: %s", rank, why);
    }
    if (!rc && rank == 0 && !(rc = coll__store_key(key, sizeof key, err, prefix, "hosts"))) {
        int grc = gather_ids(store, prefix, size, &joined, err);
        if (grc) {
            /* The others wait for the list: they get why there is none (ids
             * have no control characters, so NO_LIST cannot start one) and
             * can name the missing rank after this process and its store
             * are gone. */
            char verdict[COLL__ERR_MSG + 2];
            snprintf(verdict, sizeof verdict, "%c%s", NO_LIST, err->msg);
            if (coll__store_set(store, key, verdict, strlen(verdict)) == COLL_OK)
                linger_for_readers(store, prefix, size);
            rc = grc;
        } else if ((rc = coll__store_set(store, key, joined, strlen(joined)))) {
            store_error(store, rc, why, sizeof why);
            coll__err_set(err, 0, "host ids: rank 0 cannot publish the list: %s", why);
        }
    }
    if (!rc && rank != 0) rc = receive_list(store, prefix, size, &joined, err);
    if (!rc && (rc = split_ids(joined, size, ids)))
        coll__err_set(err, 0, "host ids: the list from rank 0 has fewer than %d entries", size);
    if (!rc && (rc = coll__host_plan_build(ids, size, rank, p)))
        coll__err_set(err, 0, "host ids: %s", coll_strerror(rc));
    free(joined);
    free(ids);
    return rc;
}
