/* What an all-reduce on private buffers must cost on this machine: the plain
 * operations it cannot do without, timed with every rank at once, as in the
 * collective. A rank of n owns a slice of S/n bytes; to all-reduce S bytes
 * (float32 sum) it can
 *   copy    bring each peer's slice across processes ((n-1)/n S bytes, read
 *           through process_vm_readv from the peer's pages) and send its
 *           result into every peer's output ((n-1)/n S, process_vm_writev),
 *           in chunks of --chunk bytes (shm's CMA chunk: L2-sized),
 *   reduce  and add (n-1) slices into its own: the reduction kernel over
 *           (n-1)/n S bytes, a chunk of its own buffer against one in cache;
 *   whole   or read every peer's whole input in one call each and add it in
 *           ((n-1) S read and reduced: fewer calls; measured up to 4 MiB);
 *   fused   or copy and reduce chunk by chunk, as shm's CMA strategy does, with
 *           none of its steps;
 *   shared  or go through memory every rank maps (shm's private strategy,
 *           bare): copy the input in, reduce the slice of every copy, copy
 *           the others' slices of the result out, a barrier between.
 * floor = the cheapest of copy + reduce, whole, fused and shared. Beside it:
 *   memcpy  the copy's bytes moved by memcpy inside the rank's own buffers:
 *           what the kernel interface adds to a copy (per 4 KiB page, below);
 *   pull, push  the copy's bytes all read (process_vm_readv) or all written
 *           (writev): which side of the interface should move them.
 * A reading spans the first rank's start to the last rank's end: with more
 * ranks than cores, ranks that share a core run one after the other, which
 * one rank's clock would not see. The barrier before it spins with a yield
 * (as shm's waits do with more ranks than cores), so that ranks with a core
 * each leave it together, not a futex wake-up apart. The readings alternate
 * within each iteration (copy reduce whole fused shared memcpy pull push,
 * copy ...) so that all see the same machine. Buffers are what collbench
 * --buffers malloc allocates (posix_memalign 64, written once before
 * timing), or with --thp 2 MiB aligned and MADV_HUGEPAGE (--buffers thp).
 *
 *   floor -n RANKS [--inplace 0|1] [--thp] [--bind] [--chunk BYTES]
 *         [--only READING] [-i ITERS] [-w WARMUP] BYTES...
 * prints one line per size: ranks, bytes, the p50 microseconds of copy,
 * reduce, whole (0: not measured), fused, shared, floor, memcpy, pull and
 * push, and the kernel interface's nanoseconds per 4 KiB page ((copy -
 * memcpy) / pages copied). --only N times reading N alone (0 copy, 1 reduce,
 * 2 whole, 3 fused, 4 shared, 5 memcpy, 6 pull, 7 push). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coll.h"
#include "core/clock.h"
#include "core/copy_stream.h"
#include "core/reduce.h"

#define MAX_RANKS 64
#define MAX_ITERS 1000
#define HUGE_PAGE ((size_t)2 << 20)
#define STREAM_MIN ((size_t)16 << 20) /* shm's: all ranks' bytes from which copies stream */
#define WHOLE_MAX ((size_t)4 << 20)   /* whole inputs are read up to here */

enum { COPY, REDUCE, WHOLE, FUSED, SHARED, MEMCPY, PULL, PUSH, NPHASE };

/* Shared by the ranks: addresses, the barrier, every rank's time per reading. */
struct ctl {
    pthread_barrier_t bar;             /* set-up and teardown */
    _Atomic unsigned arrived, release; /* sync(): the readings' barrier */
    char *sh;                          /* n inputs and a result, mapped by every rank (SHARED) */
    pid_t pid[MAX_RANKS];
    uintptr_t in[MAX_RANKS], out[MAX_RANKS];
    double t0[MAX_RANKS], t1[MAX_RANKS]; /* a reading's start and end on every rank */
    double slowest[NPHASE][MAX_ITERS];
    int failed;
};

struct opts {
    int n, inplace, thp, bind, iters, warmup, only; /* only: -1, or the one reading timed */
    size_t chunk;
};

struct rank {
    struct ctl *c;
    const struct opts *o;
    int me;
    size_t bytes, lo, hi;         /* my slice, bytes */
    char *in, *out, *tmp, *whole; /* whole: a peer's whole input, up to WHOLE_MAX */
    coll__reduce_fn fn;
};


static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

/* Rank r's slice of S bytes, float32 elements split as evenly as they go. */
static void slice(size_t bytes, int n, int r, size_t *lo, size_t *hi)
{
    size_t e = bytes / 4, q = e / (size_t)n, rem = e % (size_t)n, ur = (size_t)r;
    *lo = 4 * (ur * q + min_sz(ur, rem));
    *hi = *lo + 4 * (q + (ur < rem));
}

static void *alloc(size_t bytes, int thp)
{
    void *p = NULL;
    if (!thp) return posix_memalign(&p, 64, bytes) ? NULL : p;
    size_t len = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (posix_memalign(&p, HUGE_PAGE, len)) return NULL;
    madvise(p, len, MADV_HUGEPAGE);
    return p;
}

/* The kernel may move less than asked: loop, as shm does. */
static int cma(pid_t pid, char *local, uintptr_t remote, size_t len, int write)
{
    while (len > 0) {
        struct iovec l = {local, len}, r = {(void *)remote, len};
        ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                            : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (got <= 0) return -1;
        local += got, remote += (uintptr_t)got, len -= (size_t)got;
    }
    return 0;
}

/* Peer p of rank me at distance j, in shm's order (me+1, me+2, ...). */
static int peer(const struct rank *r, int j) { return (r->me + j) % r->o->n; }

/* One half of the copy: my slice of every peer's input read into the chunk
 * (write 0), or my output's slice written into every peer's output (1). */
static int cma_half(struct rank *r, int write)
{
    size_t ch = r->o->chunk;
    for (int j = 1; j < r->o->n; j++) {
        int p = peer(r, j);
        for (size_t a = r->lo; a < r->hi; a += ch) {
            size_t m = min_sz(ch, r->hi - a);
            int rc = write ? cma(r->c->pid[p], r->out + a, r->c->out[p] + a, m, 1)
                           : cma(r->c->pid[p], r->tmp, r->c->in[p] + a, m, 0);
            if (rc) return -1;
        }
    }
    return 0;
}

static int copy(struct rank *r) { return cma_half(r, 0) || cma_half(r, 1) ? -1 : 0; }

/* The copy's bytes all pulled (process_vm_readv) or all pushed (writev):
 * which side of the kernel interface should move them. */
static int pull(struct rank *r) { return cma_half(r, 0) || cma_half(r, 0) ? -1 : 0; }
static int push(struct rank *r) { return cma_half(r, 1) || cma_half(r, 1) ? -1 : 0; }

/* The same bytes within the rank's own buffers: peer p's slice offsets of my
 * input into the chunk, my slice of my output into p's offsets of a spare. */
static int plain_copy(struct rank *r)
{
    size_t ch = r->o->chunk;
    for (int j = 1; j < r->o->n; j++)
        for (size_t a = r->lo; a < r->hi; a += ch) memcpy(r->tmp, r->in + a, min_sz(ch, r->hi - a));
    char *dst = r->o->inplace ? r->in : r->out;
    for (int j = 1; j < r->o->n; j++)
        for (size_t a = r->lo; a < r->hi; a += ch) {
            size_t m = min_sz(ch, r->hi - a);
            /* to a different place each time, as writes to n-1 peers are */
            size_t to = (a + (size_t)j * (r->bytes / (size_t)r->o->n)) % (r->bytes - m + 1);
            memmove(dst + (to & ~(size_t)63), r->tmp, m);
        }
    return 0;
}

static int reduce(struct rank *r)
{
    size_t ch = r->o->chunk;
    for (size_t a = r->lo; a < r->hi; a += ch) {
        size_t m = min_sz(ch, r->hi - a);
        for (int j = 1; j < r->o->n; j++)
            r->fn(r->out + a, j == 1 ? r->in + a : r->out + a, r->tmp, m / 4);
    }
    return 0;
}

/* The other way to move the bytes: every peer's whole input read in one
 * call each and added in ((n-1) S read and reduced: fewer calls, more bytes;
 * shm's cma-whole strategy, cheaper for small S). */
static int whole(struct rank *r)
{
    if (!r->whole) return 0;
    for (int j = 1; j < r->o->n; j++) {
        /* out of place the first peer's input goes straight into the output */
        char *to = j == 1 && r->out != r->in ? r->out : r->whole;
        if (cma(r->c->pid[peer(r, j)], to, r->c->in[peer(r, j)], r->bytes, 0)) return -1;
        r->fn(r->out, j == 1 ? r->in : r->out, to, r->bytes / 4);
    }
    return 0;
}

/* The barrier around and inside the readings: spinning, with a yield so
 * that a rank sharing the core runs (shm's waits do the same with more ranks
 * than cores), so that the ranks leave it together rather than a futex
 * wake-up apart. */
static void sync_ranks(struct ctl *c, int n)
{
    unsigned gen = atomic_load(&c->release);
    if (atomic_fetch_add(&c->arrived, 1) == (unsigned)n - 1) {
        atomic_store(&c->arrived, 0);
        atomic_fetch_add(&c->release, 1);
        return;
    }
    while (atomic_load(&c->release) == gen) sched_yield();
}

/* Through memory every rank maps (shm's private strategy, bare): each rank
 * copies its input in, reduces its slice of all the copies into its output and
 * the shared result, then copies the others' slices of the result out; a
 * barrier between the steps, as the data needs. No system call per page. */
static int shared(struct rank *r)
{
    struct ctl *c = r->c;
    size_t s = r->bytes, ch = r->o->chunk;
    char *res = c->sh + (size_t)r->o->n * s;
    int stream = s * (size_t)r->o->n >= STREAM_MIN;
    coll__copy_stream(c->sh + (size_t)r->me * s, r->in, s, stream);
    coll__store_fence();
    sync_ranks(c, r->o->n);
    for (size_t a = r->lo; a < r->hi; a += ch) {
        size_t m = min_sz(ch, r->hi - a);
        r->fn(r->out + a, c->sh + a, c->sh + s + a, m / 4);
        for (int p = 2; p < r->o->n; p++) r->fn(r->out + a, r->out + a, c->sh + p * s + a, m / 4);
        coll__copy_stream(res + a, r->out + a, m, stream);
    }
    coll__store_fence();
    sync_ranks(c, r->o->n);
    coll__copy_stream(r->out, res, r->lo, stream);
    coll__copy_stream(r->out + r->hi, res + r->hi, s - r->hi, stream);
    return 0;
}

static int fused(struct rank *r)
{
    size_t ch = r->o->chunk;
    for (size_t a = r->lo; a < r->hi; a += ch) {
        size_t m = min_sz(ch, r->hi - a);
        for (int j = 1; j < r->o->n; j++) {
            if (cma(r->c->pid[peer(r, j)], r->tmp, r->c->in[peer(r, j)] + a, m, 0)) return -1;
            r->fn(r->out + a, j == 1 ? r->in + a : r->out + a, r->tmp, m / 4);
        }
        for (int j = 1; j < r->o->n; j++)
            if (cma(r->c->pid[peer(r, j)], r->out + a, r->c->out[peer(r, j)] + a, m, 1)) return -1;
    }
    return 0;
}

static int (*const phase_fn[NPHASE])(struct rank *) = {copy,   reduce,     whole, fused,
                                                       shared, plain_copy, pull,  push};

static void rank_main(struct ctl *c, const struct opts *o, int me, size_t bytes)
{
    struct rank r = {.c = c, .o = o, .me = me, .bytes = bytes};
    if (o->bind) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(me % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
        sched_setaffinity(0, sizeof set, &set);
    }
#ifdef PR_SET_PTRACER
    /* Peers read and write each other: the permission shm asks for (Yama). */
    (void)prctl(PR_SET_PTRACER, (unsigned long)getppid(), 0, 0, 0);
#endif
    slice(bytes, o->n, me, &r.lo, &r.hi);
    r.in = alloc(bytes, o->thp);
    r.out = o->inplace ? r.in : alloc(bytes, o->thp);
    r.tmp = alloc(o->chunk, 0);
    r.whole = bytes <= WHOLE_MAX ? alloc(bytes, 0) : NULL;
    r.fn = coll__reduce_kernel(COLL_FLOAT32, COLL_SUM);
    if (!r.in || !r.out || !r.tmp) c->failed = 1;
    else {
        memset(r.in, 0, bytes); /* small floats: 0 + 0 stays 0 however often summed */
        memset(r.out, 0, bytes);
        memset(r.tmp, 0, o->chunk);
        if (r.whole) memset(r.whole, 0, bytes);
    }
    c->pid[me] = getpid();
    c->in[me] = (uintptr_t)r.in, c->out[me] = (uintptr_t)r.out;
    pthread_barrier_wait(&c->bar);
    if (c->failed) _exit(1);
    for (int it = -o->warmup; it < o->iters; it++)
        for (int ph = 0; ph < NPHASE; ph++) {
            if (o->only >= 0 && ph != o->only) continue;
            sync_ranks(c, o->n);
            c->t0[me] = coll__now_s();
            if (phase_fn[ph](&r)) c->failed = 1;
            c->t1[me] = coll__now_s();
            sync_ranks(c, o->n);
            if (me == 0 && it >= 0) {
                double lo = c->t0[0], hi = c->t1[0];
                for (int k = 1; k < o->n; k++) {
                    lo = c->t0[k] < lo ? c->t0[k] : lo;
                    hi = c->t1[k] > hi ? c->t1[k] : hi;
                }
                c->slowest[ph][it] = hi - lo;
            }
        }
    _exit(c->failed);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double p50_us(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return 1e6 * (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

static int run_size(const struct opts *o, size_t bytes)
{
    struct ctl *c = mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                         0);
    if (c == MAP_FAILED) return perror("floor: mmap"), 1;
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&c->bar, &ba, (unsigned)o->n);
    size_t sh_len = ((size_t)o->n + 1) * bytes;
    c->sh = mmap(NULL, sh_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (c->sh == MAP_FAILED) return perror("floor: mmap of the shared copies"), 1;
    memset(c->sh, 0, sh_len);
    for (int me = 0; me < o->n; me++)
        if (fork() == 0) rank_main(c, o, me, bytes);
    int bad = 0, st;
    while (wait(&st) > 0) bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    if (bad || c->failed) {
        fprintf(stderr,
                "floor: %d ranks, %zu bytes: a rank failed (process_vm_readv needs ptrace "
                "permission among siblings: kernel.yama.ptrace_scope 0, or root)\n",
                o->n, bytes);
        munmap(c->sh, sh_len);
        munmap(c, sizeof *c);
        return 1;
    }
    double us[NPHASE];
    for (int ph = 0; ph < NPHASE; ph++) us[ph] = p50_us(c->slowest[ph], o->iters);
    size_t lo, hi;
    slice(bytes, o->n, 0, &lo, &hi);
    double pages = 2.0 * (o->n - 1) * (double)(hi - lo) / 4096;
    double floor = us[COPY] + us[REDUCE];
    if (bytes <= WHOLE_MAX && us[WHOLE] < floor) floor = us[WHOLE];
    if (us[FUSED] < floor) floor = us[FUSED];
    if (us[SHARED] < floor) floor = us[SHARED];
    printf("%5d %12zu %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %8.0f\n", o->n,
           bytes, us[COPY], us[REDUCE], bytes <= WHOLE_MAX ? us[WHOLE] : 0.0, us[FUSED], us[SHARED],
           floor, us[MEMCPY], us[PULL], us[PUSH],
           pages > 0 ? 1e3 * (us[COPY] - us[MEMCPY]) / pages : 0.0);
    fflush(stdout);
    munmap(c->sh, sh_len);
    munmap(c, sizeof *c);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: floor -n RANKS [--inplace 0|1] [--thp] [--bind] [--chunk BYTES] "
                    "[-i ITERS] [-w WARMUP] BYTES...\n");
    return 2;
}

int main(int argc, char **argv)
{
    struct opts o = {
        .n = 2, .inplace = 1, .iters = 10, .warmup = 3, .chunk = 256 * 1024, .only = -1};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--thp")) o.thp = 1;
        else if (!strcmp(a, "--bind")) o.bind = 1;
        else if (!v) return usage();
        else if (!strcmp(a, "-n")) o.n = atoi(v), i++;
        else if (!strcmp(a, "--inplace")) o.inplace = atoi(v), i++;
        else if (!strcmp(a, "--chunk")) o.chunk = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--only")) o.only = atoi(v), i++;
        else if (!strcmp(a, "-i")) o.iters = atoi(v), i++;
        else if (!strcmp(a, "-w")) o.warmup = atoi(v), i++;
        else return usage();
    }
    if (o.n < 2 || o.n > MAX_RANKS)
        return fprintf(stderr, "floor: -n %d: 2..%d ranks\n", o.n, MAX_RANKS), 2;
    if (o.iters < 1 || o.iters > MAX_ITERS || o.warmup < 0)
        return fprintf(stderr, "floor: -i 1..%d, -w 0 or more\n", MAX_ITERS), 2;
    if (o.chunk < 64 || o.chunk % 4)
        return fprintf(stderr, "floor: --chunk: a multiple of 4, 64 or more\n"), 2;
    if (i == argc) return usage();
    printf("%5s %12s %10s %10s %10s %10s %10s %10s %10s %10s %10s %8s\n", "ranks", "bytes",
           "copy_us", "reduce_us", "whole_us", "fused_us", "shared_us", "floor_us", "memcpy_us",
           "pull_us", "push_us", "ns/page");
    for (; i < argc; i++) {
        char *end;
        unsigned long long b = strtoull(argv[i], &end, 0);
        if (*end || b < 4 * (unsigned long long)o.n || b % 4)
            return fprintf(stderr, "floor: '%s': bytes, a multiple of 4, 4 a rank or more\n",
                           argv[i]),
                   2;
        if (run_size(&o, (size_t)b)) return 1;
    }
    return 0;
}
