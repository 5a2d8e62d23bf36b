/* Collective algorithms on ranks running as threads over the in-process mem
 * transport: every collective x algorithm x world size 1..8 x counts x
 * in/out-of-place x dtype/op x root, checked against a reference computed
 * here from the generated inputs (all inputs are chosen so the exact result
 * is representable: integers, powers of two). Also: signature mismatch,
 * timeouts, coll__block_range and the tuning table. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "algo/algo.h"
#include "backend/tcp/tcp_algo_knobs.h"
#include "core/clock.h"
#include "support/thread_ranks.h"

#define MAX_RANKS 8
#define BIG_COUNT 100003

/* ---- inputs and reference ---- */

typedef struct dcase {
    coll_dtype dt;
    coll_op op;
} dcase;

static const dcase dcases[] = {
    {COLL_FLOAT32, COLL_SUM},  {COLL_INT32, COLL_MAX}, {COLL_FLOAT64, COLL_PROD},
    {COLL_BFLOAT16, COLL_SUM}, {COLL_INT8, COLL_MIN},
};
#define NDCASES (int)(sizeof(dcases) / sizeof(dcases[0]))

static const size_t counts[] = {0, 1, 7, 1031, BIG_COUNT};
#define NCOUNTS (int)(sizeof(counts) / sizeof(counts[0]))

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* Input element i of rank `rank`, as an exact double. */
static double gen(const dcase *d, int rank, size_t i)
{
    uint32_t h = mix((uint32_t)i * 2654435761U + (uint32_t)rank * 97U + 1U);
    switch (d->dt) {
    case COLL_FLOAT32: return (double)((int)(h % 11) - 5);
    case COLL_INT32: return (double)(int32_t)h;
    case COLL_FLOAT64: {
        static const double v[4] = {0.5, 1.0, 2.0, -1.0};
        return v[h % 4];
    }
    case COLL_BFLOAT16: return (double)((int)(h % 9) - 4);
    case COLL_INT8: return (double)(int8_t)(h & 0xff);
    default: return 0;
    }
}

static double combine(coll_op op, double a, double b)
{
    switch (op) {
    case COLL_SUM: return a + b;
    case COLL_PROD: return a * b;
    case COLL_MIN: return a < b ? a : b;
    case COLL_MAX: return a > b ? a : b;
    default: return 0;
    }
}

/* Reduction over all n ranks of element i. */
static double reduced(const dcase *d, int n, size_t i)
{
    double v = gen(d, 0, i);
    for (int r = 1; r < n; r++) v = combine(d->op, v, gen(d, r, i));
    return v;
}

/* Exact values only, so truncating float to bfloat16 is exact too. */
static void put(coll_dtype dt, void *buf, size_t i, double v)
{
    switch (dt) {
    case COLL_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case COLL_FLOAT64: ((double *)buf)[i] = v; break;
    case COLL_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case COLL_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case COLL_BFLOAT16: {
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        ((uint16_t *)buf)[i] = (uint16_t)(bits >> 16);
        break;
    }
    default: break;
    }
}

/* Byte-exact comparison of element i with the expected value. */
static int same(coll_dtype dt, const void *buf, size_t i, double v)
{
    unsigned char want[8];
    size_t esz = coll_dtype_size(dt);
    put(dt, want, 0, v);
    return memcmp((const char *)buf + i * esz, want, esz) == 0;
}

/* ---- one world: a rank runs the whole matrix for one (collective, algorithm) ---- */

typedef struct world_arg {
    coll__kind kind;
    coll__algo_id algo;
    int big_world; /* run BIG_COUNT in this world */
    int big_all;   /* ... for every dtype/op, not float32 sum alone */
    int errors[MAX_RANKS];
    char first[MAX_RANKS][200]; /* first wrong result of each rank */
} world_arg;

static void note(world_arg *a, int rank, const char *fmt, ...)
{
    va_list ap;
    a->errors[rank]++;
    if (a->first[rank][0]) return;
    va_start(ap, fmt);
    vsnprintf(a->first[rank], sizeof(a->first[rank]), fmt, ap);
    va_end(ap);
}

/* Elements of each buffer for a call with `count`. */
static void buf_elems(coll__kind k, size_t count, int n, size_t *sn, size_t *rn)
{
    size_t big = count * (size_t)n;
    *sn = *rn = count;
    if (k == COLL_KIND_ALLGATHER) *rn = big;
    if (k == COLL_KIND_REDUCESCATTER) *sn = big;
    if (k == COLL_KIND_ALLTOALL) *sn = *rn = big;
}

/* Expected element j of rank r's result; 0 when that element is not defined. */
static int expected(coll__kind k, const dcase *d, int n, int r, int root, size_t count, size_t j,
                    double *v)
{
    switch (k) {
    case COLL_KIND_ALLREDUCE: *v = reduced(d, n, j); return 1;
    case COLL_KIND_REDUCE:
        if (r != root) return 0;
        *v = reduced(d, n, j);
        return 1;
    case COLL_KIND_REDUCESCATTER: *v = reduced(d, n, (size_t)r * count + j); return 1;
    case COLL_KIND_ALLGATHER: *v = gen(d, (int)(j / count), j % count); return 1;
    case COLL_KIND_BROADCAST: *v = gen(d, root, j); return 1;
    case COLL_KIND_ALLTOALL: *v = gen(d, (int)(j / count), (size_t)r * count + j % count); return 1;
    default: return 0;
    }
}

/* Input element i of rank r (non-root broadcast input is never read: garbage). */
static double input(coll__kind k, const dcase *d, int r, int root, size_t i)
{
    return gen(d, (k == COLL_KIND_BROADCAST && r != root) ? (r + 1) * 1000 : r, i);
}

static int one_call(coll__algo_ctx *c, world_arg *a, const dcase *d, size_t count, int inplace,
                    int root)
{
    int n = c->size, r = c->rank;
    coll__kind k = a->kind;
    size_t esz = coll_dtype_size(d->dt), sn, rn;
    buf_elems(k, count, n, &sn, &rn);
    /* +1: never malloc(0). Out of place rbuf starts as garbage. */
    char *sbuf = malloc(sn * esz + 1), *rbuf = malloc((rn > sn ? rn : sn) * esz + 1);
    if (!sbuf || !rbuf) return COLL_ENOMEM;
    memset(rbuf, 0xA5, (rn > sn ? rn : sn) * esz + 1);
    char *in = sbuf, *sarg = sbuf, *rarg = rbuf;
    size_t in_n = k == COLL_KIND_ALLGATHER ? count : sn;
    if (inplace) { /* positions as in coll.h */
        in = sarg = rarg = rbuf;
        if (k == COLL_KIND_ALLGATHER) in = sarg = rbuf + (size_t)r * count * esz;
        if (k == COLL_KIND_REDUCESCATTER) rarg = rbuf + (size_t)r * count * esz;
    }
    for (size_t i = 0; i < in_n; i++) put(d->dt, in, i, input(k, d, r, root, i));
    coll_op op = d->op;
    thread_ranks_stamp(c, k, count, d->dt, op, root);
    int rc = coll__algo_run(c, a->algo, k, sarg, rarg, count, d->dt, op, root);
    if (rc < 0) {
        note(a, r, "%s/%s n=%d count=%zu %s inplace=%d root=%d: %s (%s)", coll__kind_name(k),
             coll__algo_name(a->algo), n, count, coll_dtype_name(d->dt), inplace, root,
             coll_strerror(rc), c->tp->err.msg);
        free(sbuf);
        free(rbuf);
        return rc;
    }
    const char *res = rarg;
    size_t res_n = k == COLL_KIND_REDUCESCATTER ? count : rn;
    for (size_t j = 0; j < res_n; j++) {
        double v;
        if (!expected(k, d, n, r, root, count, j, &v)) continue;
        if (!same(d->dt, res, j, v)) {
            note(a, r,
                 "%s/%s n=%d rank=%d count=%zu %s/%s inplace=%d root=%d: element %zu wrong "
                 "(want %g)",
                 coll__kind_name(k), coll__algo_name(a->algo), n, r, count, coll_dtype_name(d->dt),
                 coll_op_name(op), inplace, root, j, v);
            break;
        }
    }
    if (!inplace) { /* out of place: the input is left alone */
        for (size_t i = 0; i < in_n; i++) {
            if (!same(d->dt, sbuf, i, input(k, d, r, root, i))) {
                note(a, r, "%s/%s n=%d count=%zu: send buffer modified at %zu", coll__kind_name(k),
                     coll__algo_name(a->algo), n, count, i);
                break;
            }
        }
    }
    free(sbuf);
    free(rbuf);
    return COLL_OK;
}

static int rank_matrix(coll__algo_ctx *c, void *p)
{
    world_arg *a = p;
    int n = c->size;
    int has_root = a->kind == COLL_KIND_BROADCAST || a->kind == COLL_KIND_REDUCE;
    int nroots = has_root && n > 1 ? 2 : 1;
    int reduces = a->kind == COLL_KIND_ALLREDUCE || a->kind == COLL_KIND_REDUCE ||
                  a->kind == COLL_KIND_REDUCESCATTER;
    for (int ci = 0; ci < NCOUNTS; ci++)
        for (int di = 0; di < NDCASES; di++) {
            /* The big count for one dtype and some world sizes only (time). */
            if (counts[ci] == BIG_COUNT && ((di != 0 && !a->big_all) || !a->big_world)) continue;
            /* Data movers ignore the op: one op per dtype is plenty. */
            if (!reduces && di >= 3) continue;
            for (int inplace = 0; inplace < 2; inplace++)
                for (int ri = 0; ri < nroots; ri++) {
                    int rc = one_call(c, a, &dcases[di], counts[ci], inplace, ri ? n - 1 : 0);
                    if (rc < 0) return rc;
                }
        }
    return COLL_OK;
}

/* Worlds lo..hi; the big count on some of them, or on all (big_all). */
static void run_worlds(coll__kind kind, coll__algo_id algo, int lo, int hi, int big_all)
{
    for (int n = lo; n <= hi; n++) {
        world_arg a;
        memset(&a, 0, sizeof(a));
        a.kind = kind;
        a.algo = algo;
        a.big_world = big_all || n == 1 || n == 3 || n == 4 || n == 7;
        a.big_all = big_all;
        /* Small chunks and odd pieces exercise chunking and partial elements. */
        thread_ranks_opts o = {.chunk_bytes = 4096, .piece_bytes = 1000, .timeout_s = 60};
        int st[MAX_RANKS];
        int rc = thread_ranks_run(n, &o, rank_matrix, &a, st);
        int bad = 0;
        for (int r = 0; r < n; r++)
            if (a.errors[r]) {
                print_error("%s (%d wrong)\n", a.first[r], a.errors[r]);
                bad = 1;
            }
        assert_int_equal(rc, COLL_OK);
        assert_int_equal(bad, 0);
    }
}

static void run_matrix(coll__kind kind, coll__algo_id algo)
{
    run_worlds(kind, algo, 1, MAX_RANKS, 0);
}

static void test_allreduce_ring(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_ALLREDUCE, COLL_ALGO_RING);
}
/* 2 ranks' ring is the pipelined pair (allreduce_pair.c): the big count
 * (many chunks, the window sliding) on every dtype/op, in and out of place. */
static void test_allreduce_pair(void **s)
{
    (void)s;
    run_worlds(COLL_KIND_ALLREDUCE, COLL_ALGO_RING, 2, 2, 1);
}

static void test_allreduce_rhd(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_ALLREDUCE, COLL_ALGO_RHD);
}
static void test_allreduce_rd(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_ALLREDUCE, COLL_ALGO_RD);
}
static void test_allreduce_direct(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_ALLREDUCE, COLL_ALGO_DIRECT);
}
static void test_allgather_ring(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_ALLGATHER, COLL_ALGO_RING);
}
static void test_allgather_rd(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_ALLGATHER, COLL_ALGO_RD);
}
static void test_reducescatter_ring(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_REDUCESCATTER, COLL_ALGO_RING);
}
static void test_broadcast_tree(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_BROADCAST, COLL_ALGO_TREE);
}
static void test_broadcast_ring(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_BROADCAST, COLL_ALGO_RING);
}
static void test_reduce_tree(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_REDUCE, COLL_ALGO_TREE);
}
static void test_alltoall_pairwise(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_ALLTOALL, COLL_ALGO_PAIRWISE);
    run_matrix(COLL_KIND_ALLTOALL, COLL_ALGO_DIRECT); /* another name for it */
}
/* AUTO goes through the tuning table and the dispatch. */
static void test_allreduce_auto(void **s)
{
    (void)s;
    run_matrix(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO);
}

/* ---- barrier: nobody leaves before everybody arrived ---- */

typedef struct barrier_arg {
    int n, rounds;
    int arrived; /* guarded by the atomics below */
    int early[MAX_RANKS];
} barrier_arg;

static int rank_barrier(coll__algo_ctx *c, void *p)
{
    barrier_arg *a = p;
    for (int k = 0; k < a->rounds; k++) {
        __atomic_add_fetch(&a->arrived, 1, __ATOMIC_SEQ_CST);
        thread_ranks_stamp(c, COLL_KIND_BARRIER, 0, COLL_FLOAT32, COLL_SUM, 0);
        int rc = coll__algo_run(c, COLL_ALGO_DISSEMINATION, COLL_KIND_BARRIER, NULL, NULL, 0,
                                COLL_FLOAT32, COLL_SUM, 0);
        if (rc < 0) return rc;
        if (__atomic_load_n(&a->arrived, __ATOMIC_SEQ_CST) < (k + 1) * a->n) a->early[c->rank]++;
        /* A second barrier so nobody starts round k+1 while others still check round k. */
        thread_ranks_stamp(c, COLL_KIND_BARRIER, 0, COLL_FLOAT32, COLL_SUM, 0);
        rc = coll__barrier_dissemination(c);
        if (rc < 0) return rc;
    }
    return COLL_OK;
}

static void test_barrier_dissemination(void **s)
{
    (void)s;
    for (int n = 1; n <= MAX_RANKS; n++) {
        barrier_arg a;
        memset(&a, 0, sizeof(a));
        a.n = n;
        a.rounds = 20;
        thread_ranks_opts o = {.timeout_s = 30};
        assert_int_equal(thread_ranks_run(n, &o, rank_barrier, &a, NULL), COLL_OK);
        for (int r = 0; r < n; r++) assert_int_equal(a.early[r], 0);
    }
}

/* ---- a rank whose arguments differ gets COLL_EMISMATCH; nobody hangs ---- */

typedef struct mismatch_arg {
    pthread_t tid;
    coll__kind kind;
    coll__algo_id algo;
    int odd, root, rc;
    float *bufs[MAX_RANKS][2];
    int st[MAX_RANKS];
    char msg[MAX_RANKS][COLL__ERR_MSG];
} mismatch_arg;

static int rank_mismatch(coll__algo_ctx *c, void *p)
{
    mismatch_arg *a = p;
    size_t count = c->rank == a->odd ? 65 : 64, sn, rn;
    buf_elems(a->kind, 65, c->size, &sn, &rn);
    float *sbuf = calloc(sn, sizeof(float)), *rbuf = calloc(rn, sizeof(float));
    if (!sbuf || !rbuf) return COLL_ENOMEM;
    thread_ranks_stamp(c, a->kind, count, COLL_FLOAT32, COLL_SUM, a->root);
    int rc = coll__algo_run(c, a->algo, a->kind, sbuf, rbuf, count, COLL_FLOAT32, COLL_SUM,
                            a->root);
    snprintf(a->msg[c->rank], sizeof(a->msg[c->rank]), "%s", c->tp->err.msg);
    /* Peers may still read these (nobody aborts here): keep them until the
     * world is gone. */
    a->bufs[c->rank][0] = sbuf;
    a->bufs[c->rank][1] = rbuf;
    return rc;
}

/* One world per case, all at once: the ranks that do not see the mismatch wait
 * for their deadline, and the cases share that wait. */
static void *mismatch_world(void *p)
{
    mismatch_arg *a = p;
    /* No abort: the odd rank must find the mismatch itself, from the first
     * message it receives; the others give up at the short deadline. */
    thread_ranks_opts o = {.timeout_s = 1.0, .no_abort = 1};
    a->rc = thread_ranks_run(4, &o, rank_mismatch, a, a->st);
    for (int r = 0; r < MAX_RANKS; r++) {
        free(a->bufs[r][0]);
        free(a->bufs[r][1]);
    }
    return NULL;
}

static void test_mismatch(void **s)
{
    (void)s;
    static const struct {
        coll__kind kind;
        coll__algo_id algo;
    } cases[] = {
        {COLL_KIND_ALLREDUCE, COLL_ALGO_RING}, {COLL_KIND_ALLREDUCE, COLL_ALGO_RHD},
        {COLL_KIND_ALLREDUCE, COLL_ALGO_RD},   {COLL_KIND_ALLGATHER, COLL_ALGO_RING},
        {COLL_KIND_ALLGATHER, COLL_ALGO_RD},   {COLL_KIND_REDUCESCATTER, COLL_ALGO_RING},
        {COLL_KIND_BROADCAST, COLL_ALGO_TREE}, {COLL_KIND_BROADCAST, COLL_ALGO_RING},
        {COLL_KIND_REDUCE, COLL_ALGO_TREE},    {COLL_KIND_ALLTOALL, COLL_ALGO_PAIRWISE},
    };
    enum { NCASES = sizeof(cases) / sizeof(cases[0]) };
    const int n = 4;
    static mismatch_arg a[NCASES];
    memset(a, 0, sizeof(a));
    for (int i = 0; i < NCASES; i++) {
        a[i].kind = cases[i].kind;
        a[i].algo = cases[i].algo;
        a[i].odd = n - 1;
        /* The odd rank must receive something: the root of a reduce, a leaf of a broadcast. */
        a[i].root = a[i].kind == COLL_KIND_REDUCE ? n - 1 : 0;
        assert_int_equal(pthread_create(&a[i].tid, NULL, mismatch_world, &a[i]), 0);
    }
    for (int i = 0; i < NCASES; i++) assert_int_equal(pthread_join(a[i].tid, NULL), 0);
    for (int i = 0; i < NCASES; i++) {
        if (a[i].st[a[i].odd] != COLL_EMISMATCH)
            print_error("%s/%s: odd rank got %s (%s)\n", coll__kind_name(a[i].kind),
                        coll__algo_name(a[i].algo), coll_status_name(a[i].st[a[i].odd]),
                        a[i].msg[a[i].odd]);
        assert_int_not_equal(a[i].rc, COLL_OK);
        assert_int_equal(a[i].st[a[i].odd], COLL_EMISMATCH);
        /* the detail comes from whichever rank saw the mismatch first: the odd
         * rank itself, or a peer whose abort names it */
        assert_true(strstr(a[i].msg[a[i].odd], "count=") || strstr(a[i].msg[a[i].odd], "aborted"));
        for (int r = 0; r < n; r++) /* finished: fine, or failed (the odd rank's abort
                                       reaches the others as EPEER), never wrong */
            assert_true(a[i].st[r] == COLL_OK || a[i].st[r] == COLL_EMISMATCH ||
                        a[i].st[r] == COLL_EPEER || a[i].st[r] == COLL_ETIMEDOUT ||
                        a[i].st[r] == COLL_EABORTED);
    }
}

/* ---- a silent peer makes the wait time out, naming the peer ---- */

typedef struct timeout_arg {
    int status;
    char msg[COLL__ERR_MSG];
} timeout_arg;

static int rank_timeout(coll__algo_ctx *c, void *p)
{
    timeout_arg *a = p;
    if (c->rank == 1) return COLL_OK; /* never shows up */
    thread_ranks_stamp(c, COLL_KIND_ALLREDUCE, 8, COLL_FLOAT32, COLL_SUM, 0);
    c->deadline = coll__now_s() + 0.2;
    c->timeout_s = 0.2;
    float v[8] = {0};
    a->status = coll__allreduce_ring(c, v, v, 8, COLL_FLOAT32, COLL_SUM);
    snprintf(a->msg, sizeof(a->msg), "%s", c->tp->err.msg);
    return COLL_OK;
}

static void test_timeout(void **s)
{
    (void)s;
    timeout_arg a;
    memset(&a, 0, sizeof(a));
    thread_ranks_opts o = {.timeout_s = 5};
    assert_int_equal(thread_ranks_run(2, &o, rank_timeout, &a, NULL), COLL_OK);
    assert_int_equal(a.status, COLL_ETIMEDOUT);
    assert_non_null(strstr(a.msg, "timed out"));
    assert_non_null(strstr(a.msg, "rank 1"));
    assert_non_null(strstr(a.msg, "allreduce"));
}

/* ---- coll__block_range ---- */

static void test_block_range(void **s)
{
    (void)s;
    static const size_t cs[] = {0, 1, 2, 7, 8, 1031, 100003};
    for (size_t ci = 0; ci < sizeof(cs) / sizeof(cs[0]); ci++)
        for (int n = 1; n <= 9; n++) {
            size_t next = 0, lo = (size_t)-1, hi = 0, prev = (size_t)-1;
            for (int i = 0; i < n; i++) {
                size_t off, cnt;
                coll__block_range(cs[ci], n, i, &off, &cnt);
                assert_int_equal(off, next); /* contiguous, in order */
                next = off + cnt;
                if (cnt < lo) lo = cnt;
                if (cnt > hi) hi = cnt;
                assert_true(cnt <= prev); /* larger blocks first */
                prev = cnt;
            }
            assert_int_equal(next, cs[ci]); /* covers everything */
            assert_true(hi - lo <= 1);      /* as even as possible */
        }
}

/* ---- names and the tuning table ---- */

static void test_select(void **s)
{
    (void)s;
    for (int i = 0; i < COLL_ALGO_COUNT; i++) {
        coll__algo_id id;
        assert_int_equal(coll__algo_parse(coll__algo_name((coll__algo_id)i), &id), COLL_OK);
        assert_int_equal(id, i);
    }
    coll__algo_id id;
    assert_int_equal(coll__algo_parse("no-such-algo", &id), COLL_EINVAL);
    assert_int_equal(coll__algo_parse("one-shot", &id), COLL_OK);
    assert_int_equal(id, COLL_ALGO_DIRECT);
    assert_true(coll__algo_exists(COLL_KIND_ALLREDUCE, COLL_ALGO_DIRECT));
    assert_false(coll__algo_exists(COLL_KIND_BROADCAST, COLL_ALGO_DIRECT));
    assert_non_null(strstr(coll__algo_list(COLL_KIND_ALLREDUCE), "direct"));
    assert_true(coll__algo_exists(COLL_KIND_ALLREDUCE, COLL_ALGO_RHD));
    assert_false(coll__algo_exists(COLL_KIND_ALLREDUCE, COLL_ALGO_TREE));
    assert_true(coll__algo_exists(COLL_KIND_BARRIER, COLL_ALGO_AUTO));
    assert_non_null(strstr(coll__algo_list(COLL_KIND_BROADCAST), "tree"));

    /* Far from any crossover: tiny and huge messages. */
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO, 64, 4, NULL),
                     COLL_ALGO_RD);
    /* 2 ranks: one exchange while tiny, then the pipelined pair at every size */
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO, 64, 2, NULL),
                     COLL_ALGO_RD);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO, 16 << 10, 2, NULL),
                     COLL_ALGO_RING);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO, 256 << 10, 2, NULL),
                     COLL_ALGO_RING);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO, 1 << 30, 4, NULL),
                     COLL_ALGO_RING);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO, 128 << 10, 6, NULL),
                     COLL_ALGO_RHD);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLGATHER, COLL_ALGO_AUTO, 64, 4, NULL),
                     COLL_ALGO_RD);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLGATHER, COLL_ALGO_AUTO, 64, 6, NULL),
                     COLL_ALGO_RING);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLGATHER, COLL_ALGO_AUTO, 1 << 30, 4, NULL),
                     COLL_ALGO_RING);
    assert_int_equal(coll__algo_select(COLL_KIND_BROADCAST, COLL_ALGO_AUTO, 64, 5, NULL),
                     COLL_ALGO_TREE);
    assert_int_equal(coll__algo_select(COLL_KIND_BROADCAST, COLL_ALGO_AUTO, 1 << 30, 5, NULL),
                     COLL_ALGO_RING);
    assert_int_equal(coll__algo_select(COLL_KIND_REDUCE, COLL_ALGO_AUTO, 64, 5, NULL),
                     COLL_ALGO_TREE);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLTOALL, COLL_ALGO_AUTO, 64, 5, NULL),
                     COLL_ALGO_PAIRWISE);
    assert_int_equal(coll__algo_select(COLL_KIND_BARRIER, COLL_ALGO_AUTO, 0, 5, NULL),
                     COLL_ALGO_DISSEMINATION);
    /* Requests that exist win; others fall back to the table. */
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_RING, 64, 4, NULL),
                     COLL_ALGO_RING);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_RD, 1 << 30, 4, NULL),
                     COLL_ALGO_RD);
    assert_int_equal(coll__algo_select(COLL_KIND_BROADCAST, COLL_ALGO_RING, 64, 4, NULL),
                     COLL_ALGO_RING);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_TREE, 64, 4, NULL),
                     COLL_ALGO_RD);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLGATHER, COLL_ALGO_RD, 64, 3, NULL),
                     COLL_ALGO_RING);
}

/* The crossovers a backend passes (the tcp backend's COLL_TCP_*_MIN) move the
 * table's choices; out of range is refused with the variable named. */
static void test_select_limits(void **state)
{
    (void)state;
    coll__algo_limits lim = coll__algo_limits_default;
    lim.from[COLL__CROSS_PAIR_RING] = 0; /* the pair at every size */
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO, 8, 2, &lim),
                     COLL_ALGO_RING);
    lim.from[COLL__CROSS_PAIR_RING] = (size_t)1 << 30; /* one exchange up to 1 GiB */
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO, 16 << 10, 2, &lim),
                     COLL_ALGO_RD);
    lim.from[COLL__CROSS_ALLREDUCE_RHD] = 0;
    lim.from[COLL__CROSS_ALLREDUCE_RING] = (size_t)1 << 30;
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO, 8, 4, &lim),
                     COLL_ALGO_RHD);
    assert_int_equal(coll__algo_select(COLL_KIND_ALLREDUCE, COLL_ALGO_AUTO, 64 << 20, 4, &lim),
                     COLL_ALGO_RHD);
    lim.from[COLL__CROSS_BROADCAST_RING] = 64;
    assert_int_equal(coll__algo_select(COLL_KIND_BROADCAST, COLL_ALGO_AUTO, 64, 3, &lim),
                     COLL_ALGO_RING);

    coll__err err;
    coll__err_init(&err, NULL, 0);
    setenv("COLL_TCP_ALLREDUCE_RING_MIN", "256K", 1);
    assert_int_equal(coll__tcp_algo_limits(4, &lim, &err), COLL_OK);
    assert_int_equal(lim.from[COLL__CROSS_ALLREDUCE_RING], 256 << 10);
    setenv("COLL_TCP_ALLREDUCE_RING_MIN", "1x", 1);
    assert_int_equal(coll__tcp_algo_limits(4, &lim, &err), COLL_EINVAL);
    assert_non_null(strstr(err.msg, "COLL_TCP_ALLREDUCE_RING_MIN"));
    unsetenv("COLL_TCP_ALLREDUCE_RING_MIN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_range),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_select_limits),
        cmocka_unit_test(test_allreduce_ring),
        cmocka_unit_test(test_allreduce_pair),
        cmocka_unit_test(test_allreduce_rhd),
        cmocka_unit_test(test_allreduce_rd),
        cmocka_unit_test(test_allreduce_direct),
        cmocka_unit_test(test_allreduce_auto),
        cmocka_unit_test(test_allgather_ring),
        cmocka_unit_test(test_allgather_rd),
        cmocka_unit_test(test_reducescatter_ring),
        cmocka_unit_test(test_broadcast_tree),
        cmocka_unit_test(test_broadcast_ring),
        cmocka_unit_test(test_reduce_tree),
        cmocka_unit_test(test_alltoall_pairwise),
        cmocka_unit_test(test_barrier_dissemination),
        cmocka_unit_test(test_mismatch),
        cmocka_unit_test(test_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
