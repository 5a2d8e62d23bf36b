/* The launcher's memory check (memory_need.h). */
#include "engine/memory_need.h"
#include "engine/bench_coll.h"

#include <stdio.h>
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

/* The number after key in a "key: N kB" or bare "N" file; 0 or -1. */
static int read_number(const char *path, const char *key, uint64_t *v)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        unsigned long long x;
        if (!key) {
            if (sscanf(line, "%llu", &x) == 1) *v = x, found = 0;
            break;
        }
        if (strncmp(line, key, strlen(key)) == 0 && sscanf(line + strlen(key), "%llu", &x) == 1)
            *v = (uint64_t)x * 1024, found = 0; /* meminfo counts kB */
    }
    fclose(f);
    return found;
}

/* The cgroup v2 limit left to this process: memory.max - memory.current of
 * its group ("0::/path" in /proc/self/cgroup); -1 when there is none. */
static int cgroup_left(uint64_t *left)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return -1;
    char line[512], path[700];
    int rc = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            uint64_t max, cur;
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
            if (read_number(path, NULL, &max)) break; /* "max": no limit */
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", line + 3);
            if (read_number(path, NULL, &cur)) cur = 0;
            *left = max > cur ? max - cur : 0;
            rc = 0;
            break;
        }
    fclose(f);
    return rc;
}

int bench_memory_available(uint64_t *bytes)
{
    uint64_t avail, left;
    int have = read_number("/proc/meminfo", "MemAvailable:", &avail) == 0;
    if (cgroup_left(&left) == 0 && (!have || left < avail)) avail = left, have = 1;
    if (have) *bytes = avail;
    return have ? 0 : -1;
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
        double need = (double)here * ((double)sb + (double)rb);
        if (need <= (double)avail) continue;
        char n[32], a[32], s[32], r[32], how[160];
        gib(n, sizeof n, need);
        gib(a, sizeof a, (double)avail);
        gib(s, sizeof s, (double)sb);
        gib(r, sizeof r, (double)rb);
        if (sb == rb) snprintf(how, sizeof how, "%d ranks x 2 buffers x %s", here, s);
        else if (sb <= 1 || rb <= 1)
            snprintf(how, sizeof how, "%d ranks x 1 buffer x %s", here, sb > rb ? s : r);
        else snprintf(how, sizeof how, "%d ranks x (%s send + %s receive)", here, s, r);
        snprintf(err, errlen,
                 "needs %s on this host (%s), %s available; smaller --sizes or -P, or "
                 "--force-memory to run it anyway",
                 n, how, a);
        return -1;
    }
    return 0;
}
