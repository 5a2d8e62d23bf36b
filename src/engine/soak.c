/* Soak mode: repeat the sweep for a duration and watch memory and descriptors. */
#include "engine/soak.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"

/* A tenth of the run, and at least WARMUP_PASSES passes, warm up (buffer
 * pools, lazily opened connections, the heap's high-water mark of messages
 * that arrive before their receive is posted, which a loaded machine reaches
 * only after a few dozen passes: seen at pass 5 of 125 as +12 MiB). */
#define WARMUP_FRACTION 0.1
#define WARMUP_PASSES 30

static int64_t resident_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long long size = 0, resident = -1;
    if (!f) return -1;
    if (fscanf(f, "%lld %lld", &size, &resident) != 2) resident = -1;
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return resident < 0 || page <= 0 ? -1 : (int64_t)resident * (page / 1024);
}

/* Entries of /proc/self/fd but the directory's own descriptor. */
static int64_t open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int64_t n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1;
}

int bench_usage_sample(bench_usage *u)
{
    u->rss_kib = resident_kib();
    u->fds = open_fds();
    return u->rss_kib < 0 || u->fds < 0 ? COLL_ESYS : 0;
}

int bench_usage_gather(coll_comm *comm, bench_usage *mine, bench_usage *max)
{
    bench_usage_sample(mine); /* -1 where /proc is missing: shown as such */
    int64_t v[2] = {mine->rss_kib, mine->fds}, m[2];
    int rc = coll_allreduce(comm, v, m, 2, COLL_INT64, COLL_MAX);
    if (rc) return rc;
    max->rss_kib = m[0];
    max->fds = m[1];
    return 0;
}

int bench_parse_duration(const char *s, double *seconds)
{
    char *end;
    double x = strtod(s, &end), unit = 1;
    if (end == s || !isfinite(x) || x <= 0) return COLL_EINVAL;
    if (*end == 's') end++;
    else if (*end == 'm') unit = 60, end++;
    else if (*end == 'h') unit = 3600, end++;
    if (*end != '\0') return COLL_EINVAL;
    *seconds = x * unit;
    return 0;
}

static void print_usage(FILE *out, const char *when, int pass, double elapsed,
                        const bench_usage *r0, const bench_usage *max)
{
    fprintf(out,
            "# soak %s (pass %d, %.1f s): rank 0 rss %lld KiB fds %lld; "
            "max over ranks rss %lld KiB fds %lld\n",
            when, pass, elapsed, (long long)r0->rss_kib, (long long)r0->fds,
            (long long)max->rss_kib, (long long)max->fds);
    fflush(out);
}

/* Every rank stops after the same pass: the first one any rank saw the time up. */
static int all_done(coll_comm *comm, int mine, int *done)
{
    int64_t v = mine, any = 0;
    int rc = coll_allreduce(comm, &v, &any, 1, COLL_INT64, COLL_MAX);
    *done = any != 0;
    return rc;
}

int bench_soak_run(coll_comm *comm, double duration_s, int (*pass)(void *arg), void *arg, FILE *out,
                   bench_usage *growth)
{
    double t0 = coll__now_s();
    bench_usage base = {0, 0}, base_max = {0, 0}, now, now_max;
    int npass = 0, have_base = 0, done = 0, rc;
    memset(growth, 0, sizeof *growth);
    while (!done) {
        if ((rc = pass(arg))) return rc;
        npass++;
        double elapsed = coll__now_s() - t0;
        if ((rc = all_done(comm, elapsed >= duration_s, &done))) return rc;
        int warm = elapsed >= duration_s * WARMUP_FRACTION && npass >= WARMUP_PASSES;
        if ((rc = all_done(comm, warm, &warm))) return rc; /* all ranks sample together */
        if (!have_base && (warm || done)) {
            if ((rc = bench_usage_gather(comm, &base, &base_max))) return rc;
            have_base = 1;
            if (out) print_usage(out, "start", npass, elapsed, &base, &base_max);
        }
    }
    if ((rc = bench_usage_gather(comm, &now, &now_max))) return rc;
    int64_t g[2] = {now.rss_kib - base.rss_kib, now.fds - base.fds}, gmax[2];
    if ((rc = coll_allreduce(comm, g, gmax, 2, COLL_INT64, COLL_MAX))) return rc;
    growth->rss_kib = gmax[0];
    growth->fds = gmax[1];
    if (out) {
        print_usage(out, "end", npass, coll__now_s() - t0, &now, &now_max);
        fprintf(out, "# soak growth after warm-up (largest over ranks): rss %+lld KiB fds %+lld\n",
                (long long)growth->rss_kib, (long long)growth->fds);
        fflush(out);
    }
    return 0;
}
