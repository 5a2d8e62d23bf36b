/* The launcher's memory check (memory_need.h). */
#include "engine/memory_need.h"
#include "engine/bench_coll.h"

#include "coll_tool.h"
#include "core/mem_limit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which of the send and receive buffers o's placements use (in place: one). */
static void used_buffers(const bench_options *o, int *send, int *recv)
{
    const bench_coll *c = o->coll;
    int rs_like = c->send_per_rank && !c->recv_per_rank; /* in-place lives in send */
    *send = o->inplace != 1 || rs_like;
    *recv = o->inplace != 1 || !rs_like;
}

void bench_pool_bytes(const bench_options *o, const uint64_t *sizes, size_t nsizes, int nranks,
                      size_t *send_bytes, size_t *recv_bytes)
{
    const bench_coll *c = o->coll;
    int use_send, use_recv;
    used_buffers(o, &use_send, &use_recv);
    size_t sbytes = 1, rbytes = 1;
    for (size_t p = 0; p < o->npairs; p++)
        for (size_t i = 0; i < nsizes; i++) {
            size_t esz = coll_dtype_size(o->pairs[p].dtype);
            size_t count = bench_coll_call_count(c, sizes[i], esz, nranks);
            size_t sb = bench_coll_send_elems(c, count, nranks) * esz;
            size_t rb = bench_coll_recv_elems(c, count, nranks) * esz;
            if (use_send && sb > sbytes) sbytes = sb;
            if (use_recv && rb > rbytes) rbytes = rb;
        }
    *send_bytes = sbytes;
    *recv_bytes = rbytes;
}

/* The number after key in /proc/meminfo ("key: N kB"); 0 or -1. */
static int read_meminfo(const char *key, uint64_t *v)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char line[256];
    int found = -1;
    unsigned long long x;
    while (found < 0 && fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0 && sscanf(line + strlen(key), "%llu", &x) == 1)
            *v = (uint64_t)x * 1024, found = 0; /* meminfo counts kB */
    fclose(f);
    return found;
}

int bench_memory_available(uint64_t *bytes)
{
    uint64_t avail, left;
    int have = read_meminfo("MemAvailable:", &avail) == 0;
    if (coll__cgroup_mem_limit(&coll__cgroup_here, NULL, &left) == 0 && (!have || left < avail))
        avail = left, have = 1;
    if (have) *bytes = avail;
    return have ? 0 : -1;
}

/* The per-rank bytes of every call o makes at sizes on nranks ranks (one per
 * size and dtype), into a malloc'd array of *n; NULL when out of memory. */
static uint64_t *call_bytes(const bench_options *o, int nranks, size_t *n)
{
    uint64_t *b = malloc((o->nsizes * o->npairs + 1) * sizeof *b);
    *n = 0;
    for (size_t p = 0; b && p < o->npairs; p++)
        for (size_t i = 0; i < o->nsizes; i++) {
            size_t esz = coll_dtype_size(o->pairs[p].dtype);
            b[(*n)++] = (uint64_t)bench_coll_call_count(o->coll, o->sizes[i], esz, nranks) * esz;
        }
    return b;
}

/* Bytes each of here ranks allocates beyond its buffers (a backend's scratch:
 * coll_backend_scratch_bytes): the largest backend's when each runs in its own
 * launch, their sum under --same-ranks, whose ranks hold every backend's
 * communicator at once; names gets the backends that take any. Private
 * buffers only: coll buffers lie in the heaps themselves. */
static double scratch_bytes(const bench_options *o, int world, int here, char *names, size_t len)
{
    const char *all[BENCH_MAX_BACKENDS];
    size_t nb = o->nbackends;
    names[0] = '\0';
    if (strcmp(o->buffers, "malloc") != 0) return 0;
    if (nb == 0) nb = coll_backend_default_sweep(all, BENCH_MAX_BACKENDS);
    else memcpy(all, o->backends, nb * sizeof all[0]);
    size_t n = 0;
    uint64_t *b = call_bytes(o, world, &n);
    double total = 0;
    for (size_t i = 0; b && i < nb; i++) {
        double s = (double)coll_backend_scratch_bytes(all[i], o->coll->name, b, n, here);
        if (s <= 0) continue;
        size_t used = strlen(names);
        snprintf(names + used, len - used, "%s%s", used ? ", " : "", all[i]);
        total = o->same_ranks ? total + s : (s > total ? s : total);
    }
    free(b);
    return total;
}

static void gib(char *buf, size_t len, double bytes)
{
    if (bytes >= (1ull << 30)) snprintf(buf, len, "%.1f GiB", bytes / (1ull << 30));
    else snprintf(buf, len, "%.1f MiB", bytes / (1ull << 20));
}

int bench_memory_check(const bench_options *o, char *err, size_t errlen)
{
    if (strcmp(o->buffers, "cuda") == 0 || strcmp(o->device, "cuda") == 0) return 0;
    uint64_t avail;
    if (bench_memory_available(&avail)) return 0; /* nothing to compare with: run */
    for (size_t i = 0; i < o->nprocs; i++) {
        int world = o->mn.nnodes > 1 ? o->procs[i] * o->mn.nnodes : o->procs[i];
        int here = o->procs[i]; /* with --nnodes, -P is the ranks per host */
        size_t sb, rb;
        bench_pool_bytes(o, o->sizes, o->nsizes, world, &sb, &rb);
        char who[64];
        double extra = scratch_bytes(o, world, here, who, sizeof who);
        double need = (double)here * ((double)sb + (double)rb + extra);
        if (need <= (double)avail) continue;
        char n[32], a[32], s[32], r[32], x[32], how[256];
        gib(n, sizeof n, need);
        gib(a, sizeof a, (double)avail);
        gib(s, sizeof s, (double)sb);
        gib(r, sizeof r, (double)rb);
        gib(x, sizeof x, extra);
        int w;
        if (sb == rb) w = snprintf(how, sizeof how, "%d ranks x 2 buffers x %s", here, s);
        else if (sb <= 1 || rb <= 1)
            w = snprintf(how, sizeof how, "%d ranks x 1 buffer x %s", here, sb > rb ? s : r);
        else w = snprintf(how, sizeof how, "%d ranks x (%s send + %s receive)", here, s, r);
        if (extra > 0 && w > 0 && (size_t)w < sizeof how)
            snprintf(how + w, sizeof how - (size_t)w,
                     " + %d ranks x %s of %s scratch (all-reduce on private buffers copies "
                     "into the shared heap)",
                     here, x, who);
        snprintf(err, errlen,
                 "needs %s on this host (%s), %s available; smaller --sizes or -P, or "
                 "--force-memory to run it anyway",
                 n, how, a);
        return -1;
    }
    return 0;
}
