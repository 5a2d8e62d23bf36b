/* Multi-rank test of every collective x algorithm over the real backend.
 *
 *   test_collectives NPROCS [BACKEND [INIT_METHOD]]   (env TEST_AUTO_ONLY=1: auto alone)
 * launches NPROCS ranks of itself through the launcher; each rank runs every
 * collective with each of its algorithms, counts 0, 1, prime and large,
 * in-place and out-of-place, several dtype/op pairs, then the nonblocking
 * calls overlapped and an uneven all-to-all (coll_alltoallv), and checks
 * every element. On gloo (Gloo's own collectives)
 * the algorithms are Gloo's, every dtype/op pair Gloo has is checked, and its
 * refusal of bfloat16 arithmetic must name the pair. */
#include "coll.h"
#include "rank_harness.h"
#include "rank_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    coll_dtype dt;
    coll_op op;
} pairs[] = {
    {COLL_FLOAT32, COLL_SUM},  {COLL_INT32, COLL_MAX},  {COLL_FLOAT64, COLL_PROD},
    {COLL_BFLOAT16, COLL_SUM}, {COLL_INT8, COLL_MIN},   {COLL_FLOAT16, COLL_AVG},
    {COLL_UINT8, COLL_SUM},    {COLL_INT64, COLL_PROD}, {COLL_FLOAT32, COLL_AVG},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])
static const size_t counts[] = {0, 1, 17, 65537, 1000003}; /* the last spans several 1 MiB chunks */
#define NCOUNTS (sizeof counts / sizeof counts[0])

typedef struct test_case {
    const char *kind;
    const char *algo;
    size_t count;
    coll_dtype dt;
    coll_op op;
    int in_place;
    int root;
} test_case;

static int failures;
static int on_gloo; /* the gloo backend: Gloo's algorithms, no bfloat16 arithmetic */
static int cases;   /* run, so a matrix that silently shrank to nothing fails */

static void describe(const test_case *t, char *buf, size_t len)
{
    snprintf(buf, len, "%s algo=%s count=%zu %s %s%s root=%d", t->kind, t->algo, t->count,
             coll_dtype_name(t->dt), coll_op_name(t->op), t->in_place ? " in-place" : "", t->root);
}

/* Compares n elements of buf against want(i); reports the first few wrong ones. */
static int check_elems(const test_case *t, const void *buf, size_t n, size_t base,
                       double (*want)(const test_case *, size_t))
{
    int wrong = 0;
    for (size_t i = 0; i < n; i++) {
        double got = rank_get(t->dt, buf, i), exp = want(t, base + i);
        if (!rank_close(t->dt, t->op, got, exp) && wrong++ < 3) {
            char d[160];
            describe(t, d, sizeof d);
            fprintf(stderr, "rank %d: %s: element %zu got %g want %g\n", rh_rank, d, base + i, got,
                    exp);
        }
    }
    return wrong;
}

static double want_reduced(const test_case *t, size_t i)
{
    return rank_expected(t->dt, t->op, rh_size, i, 0);
}
static double want_root_input(const test_case *t, size_t i)
{
    return rank_input(t->dt, t->op, t->root, rh_size, i, 0);
}
static double want_gathered(const test_case *t, size_t i) /* block j holds rank j's input */
{
    return rank_input(t->dt, t->op, (int)(i / (t->count ? t->count : 1)), rh_size,
                      i % (t->count ? t->count : 1), 0);
}

static void fill(const test_case *t, void *buf, int r, size_t n, size_t base)
{
    for (size_t i = 0; i < n; i++)
        rank_set(t->dt, buf, i, rank_input(t->dt, t->op, r, rh_size, base + i, 0));
}

static int run_case(coll_comm *comm, const test_case *t)
{
    size_t es = coll_dtype_size(t->dt), n = t->count, N = n * (size_t)rh_size;
    char *s = calloc(N + 1, es), *r = calloc(N + 1, es);
    int rc = COLL_OK, wrong = 0;
    const char *k = t->kind;
    if (strcmp(k, "allreduce") == 0) {
        fill(t, t->in_place ? r : s, rh_rank, n, 0);
        rc = coll_allreduce(comm, t->in_place ? r : s, r, n, t->dt, t->op);
        if (!rc) wrong = check_elems(t, r, n, 0, want_reduced);
    } else if (strcmp(k, "allgather") == 0) {
        char *mine = t->in_place ? r + (size_t)rh_rank * n * es : s;
        for (size_t i = 0; i < n; i++)
            rank_set(t->dt, mine, i, rank_input(t->dt, t->op, rh_rank, rh_size, i, 0));
        rc = coll_allgather(comm, mine, r, n, t->dt);
        if (!rc) wrong = check_elems(t, r, N, 0, want_gathered);
    } else if (strcmp(k, "reducescatter") == 0) {
        fill(t, s, rh_rank, N, 0);
        char *out = t->in_place ? s + (size_t)rh_rank * n * es : r;
        rc = coll_reducescatter(comm, s, out, n, t->dt, t->op);
        if (!rc) wrong = check_elems(t, out, n, (size_t)rh_rank * n, want_reduced);
    } else if (strcmp(k, "broadcast") == 0) {
        if (rh_rank == t->root) fill(t, t->in_place ? r : s, rh_rank, n, 0);
        rc = coll_broadcast(comm, t->in_place ? r : s, r, n, t->dt, t->root);
        if (!rc) wrong = check_elems(t, r, n, 0, want_root_input);
    } else if (strcmp(k, "reduce") == 0) {
        fill(t, t->in_place && rh_rank == t->root ? r : s, rh_rank, n, 0);
        rc = coll_reduce(comm, t->in_place && rh_rank == t->root ? r : s, r, n, t->dt, t->op,
                         t->root);
        if (!rc && rh_rank == t->root) wrong = check_elems(t, r, n, 0, want_reduced);
    } else if (strcmp(k, "alltoall") == 0) {
        fill(t, s, rh_rank, N, 0); /* block j goes to rank j */
        rc = coll_alltoall(comm, s, r, n, t->dt);
        for (int j = 0; !rc && j < rh_size; j++)
            for (size_t i = 0; i < n; i++) {
                double got = rank_get(t->dt, r, (size_t)j * n + i);
                double exp = rank_input(t->dt, t->op, j, rh_size, (size_t)rh_rank * n + i, 0);
                if (got != exp && wrong++ < 3)
                    fprintf(stderr,
                            "rank %d: alltoall count=%zu block %d element %zu got %g want %g\n",
                            rh_rank, n, j, i, got, exp);
            }
    } else if (strcmp(k, "barrier") == 0) {
        rc = coll_barrier(comm);
    }
    free(s);
    free(r);
    if (rc) {
        char d[160];
        describe(t, d, sizeof d);
        fprintf(stderr, "rank %d: %s failed: %s (%s)\n", rh_rank, d, coll_strerror(rc),
                coll_comm_errmsg(comm));
        return -1;
    }
    return wrong;
}

static int reduces(const char *kind)
{
    return strcmp(kind, "allreduce") == 0 || strcmp(kind, "reducescatter") == 0 ||
           strcmp(kind, "reduce") == 0;
}

/* The algorithms to run kind with: the backend's own names, or auto alone
 * where a variant tests something else (an init method): TEST_AUTO_ONLY=1. */
static const char *algo_names(const char *kind)
{
    const char *auto_only = getenv("TEST_AUTO_ONLY");
    if (auto_only && strcmp(auto_only, "1") == 0) return "auto";
    if (!on_gloo) return coll_algo_names(kind);
    if (strcmp(kind, "allreduce") == 0) return "auto,ring,ring_chunked,halving_doubling,bcube";
    return "auto";
}

static void run_matrix(coll_comm *comm)
{
    static const char *kinds[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                  "reduce",    "alltoall",  "barrier"};
    int salt = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char algos[128];
        snprintf(algos, sizeof algos, "%s", algo_names(kinds[k]));
        for (char *save, *a = strtok_r(algos, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
            int rc = coll_comm_set_algo(comm, a);
            /* shm (and auto on one host over it) picks its own strategies: it
             * refuses libcoll's named algorithms, and must refuse, not ignore. */
            int may_refuse = strcmp(a, "auto") != 0 && strcmp(coll_comm_backend(comm), "tcp") != 0;
            if (rc == COLL_ENOTSUP && may_refuse) continue;
            if (rc) {
                fprintf(stderr, "rank %d: set_algo %s failed: %s\n", rh_rank, a,
                        coll_comm_errmsg(comm));
                failures++;
                continue;
            }
            for (size_t c = 0; c < NCOUNTS; c++)
                for (int ip = 0; ip < 2; ip++) {
                    if (ip && strcmp(kinds[k], "alltoall") == 0) continue;
                    test_case t = {kinds[k],
                                   a,
                                   counts[c],
                                   pairs[salt % NPAIRS].dt,
                                   pairs[salt % NPAIRS].op,
                                   ip,
                                   (int)(c % (size_t)rh_size)};
                    salt++;
                    if (on_gloo && t.dt == COLL_BFLOAT16 && reduces(t.kind))
                        t.dt = COLL_FLOAT16; /* refused on gloo: see check_gloo_refusal */
                    cases++;
                    if (run_case(comm, &t)) failures++;
                    if (failures > 10) return;
                }
        }
    }
    coll_comm_set_algo(comm, "auto");
}

/* Ring sendrecv: every rank sends to the right and receives from the left. */
static void run_p2p(coll_comm *comm)
{
    if (rh_size < 2) return;
    test_case t = {"sendrecv", "-", 4099, COLL_INT32, COLL_SUM, 0, 0};
    int right = (rh_rank + 1) % rh_size, left = (rh_rank + rh_size - 1) % rh_size;
    int32_t *s = calloc(t.count, 4), *r = calloc(t.count, 4);
    fill(&t, s, rh_rank, t.count, 0);
    int rc = coll_sendrecv(comm, s, t.count, right, r, t.count, left, COLL_INT32);
    t.root = left;
    if (rc || check_elems(&t, r, t.count, 0, want_root_input)) {
        fprintf(stderr, "rank %d: sendrecv failed: %s\n", rh_rank, coll_strerror(rc));
        failures++;
    }
    free(s);
    free(r);
}

/* coll_alltoallv with uneven counts, every element checked, then its refusals
 * (NULL counts: COLL_EINVAL with a message, the communicator still usable). */
static void run_alltoallv(coll_comm *comm)
{
    int n = rh_size, me = rh_rank;
    size_t *sc = calloc((size_t)n, sizeof *sc), *rcnt = calloc((size_t)n, sizeof *rcnt), ns = 0,
           nr = 0;
    /* 0 for some pairs (also a rank to itself), several 1 MiB chunks for others */
    for (int j = 0; j < n; j++)
        ns += sc[j] = rank_a2av_count(me, j, 100003),
              nr += rcnt[j] = rank_a2av_count(j, me, 100003);
    int32_t *s = malloc((ns + 1) * 4), *r = malloc((nr + 1) * 4);
    rank_a2av_fill(s, me, n, sc);
    int rc = coll_alltoallv(comm, s, sc, r, rcnt, COLL_INT32), from = 0;
    int32_t got = 0;
    size_t e = 0, wrong = rc ? 0 : rank_a2av_wrong(r, me, n, rcnt, &from, &e, &got);
    if (wrong)
        fprintf(stderr,
                "rank %d: alltoallv: %zu elements wrong, the first %zu from rank %d: %d, "
                "want %d\n",
                me, wrong, e, from, got, rank_a2av_value(from, me, e));
    if (rc)
        fprintf(stderr, "rank %d: alltoallv failed: %s (%s)\n", me, coll_strerror(rc),
                coll_comm_errmsg(comm));
    if (rc || wrong) failures++;
    rc = coll_alltoallv(comm, s, NULL, r, rcnt, COLL_INT32);
    if (rc != COLL_EINVAL || !strstr(coll_comm_errmsg(comm), "sendcounts")) {
        fprintf(stderr,
                "rank %d: alltoallv with NULL sendcounts: %s (%s), not EINVAL naming them\n", me,
                coll_strerror(rc), coll_comm_errmsg(comm));
        failures++;
    }
    cases++;
    free(s), free(r), free(sc), free(rcnt);
}

/* Four nonblocking collectives in flight, a blocking one behind them, all checked. */
static void run_nonblocking(coll_comm *comm)
{
    test_case ar = {"iallreduce", "auto", 100003, COLL_FLOAT32, COLL_SUM, 0, 0};
    test_case ag = {"iallgather", "auto", 5003, COLL_INT32, COLL_SUM, 0, 0};
    test_case rs = {"ireducescatter", "auto", 7001, COLL_FLOAT64, COLL_MAX, 0, 0};
    test_case bc = {"ibroadcast", "auto", 3001, COLL_INT8, COLL_SUM, 0, rh_size - 1};
    test_case ar2 = {"allreduce", "auto", 33, COLL_INT64, COLL_SUM, 0, 0};
    size_t N = (size_t)rh_size;
    float *ars = malloc(ar.count * 4), *arr = malloc(ar.count * 4);
    int32_t *ags = malloc(ag.count * 4), *agr = malloc(ag.count * N * 4);
    double *rss = malloc(rs.count * N * 8), *rsr = malloc(rs.count * 8);
    int8_t *bcb = malloc(bc.count);
    int64_t *a2 = malloc(ar2.count * 8);
    fill(&ar, ars, rh_rank, ar.count, 0);
    fill(&ag, ags, rh_rank, ag.count, 0);
    fill(&rs, rss, rh_rank, rs.count * N, 0);
    if (rh_rank == bc.root) fill(&bc, bcb, rh_rank, bc.count, 0);
    fill(&ar2, a2, rh_rank, ar2.count, 0);

    coll_request *q[4] = {0};
    int rc = coll_iallreduce(comm, ars, arr, ar.count, ar.dt, ar.op, &q[0]);
    if (!rc) rc = coll_iallgather(comm, ags, agr, ag.count, ag.dt, &q[1]);
    if (!rc) rc = coll_ireducescatter(comm, rss, rsr, rs.count, rs.dt, rs.op, &q[2]);
    if (!rc) rc = coll_ibroadcast(comm, bcb, bcb, bc.count, bc.dt, bc.root, &q[3]);
    int done = 0;
    if (!rc) rc = coll_test(q[0], &done); /* may or may not be done: must not fail */
    if (!rc) rc = coll_allreduce(comm, a2, a2, ar2.count, ar2.dt, ar2.op);
    for (int i = 0; i < 4; i++) {
        int w = q[i] ? coll_wait(q[i]) : COLL_OK;
        if (!rc) rc = w;
    }
    int wrong = 0;
    if (!rc) {
        wrong += check_elems(&ar, arr, ar.count, 0, want_reduced);
        wrong += check_elems(&ag, agr, ag.count * N, 0, want_gathered);
        wrong += check_elems(&rs, rsr, rs.count, (size_t)rh_rank * rs.count, want_reduced);
        wrong += check_elems(&bc, bcb, bc.count, 0, want_root_input);
        wrong += check_elems(&ar2, a2, ar2.count, 0, want_reduced);
    }
    /* the same all-reduce blocking on the even ranks, nonblocking on the odd
     * (backends that plan by it must agree across the two) */
    fill(&ar, ars, rh_rank, ar.count, 0);
    coll_request *mixed = NULL;
    if (!rc && rh_rank % 2) rc = coll_iallreduce(comm, ars, arr, ar.count, ar.dt, ar.op, &mixed);
    else if (!rc) rc = coll_allreduce(comm, ars, arr, ar.count, ar.dt, ar.op);
    if (mixed) {
        int w = coll_wait(mixed);
        if (!rc) rc = w;
    }
    if (!rc) wrong += check_elems(&ar, arr, ar.count, 0, want_reduced);
    if (rc || wrong) {
        fprintf(stderr, "rank %d: nonblocking: %s, %d wrong\n", rh_rank, coll_strerror(rc), wrong);
        failures++;
    }
    free(ars);
    free(arr);
    free(ags);
    free(agr);
    free(rss);
    free(rsr);
    free(bcb);
    free(a2);
}

/* gloo: every dtype/op pair coll.h defines, on each reducing collective. */
static void run_all_pairs(coll_comm *comm)
{
    static const char *kinds[] = {"allreduce", "reducescatter", "reduce"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (int d = 0; d < COLL_DTYPE_COUNT; d++)
            for (int o = 0; o < COLL_OP_COUNT; o++) {
                if (d == COLL_BFLOAT16 || coll_op_valid((coll_dtype)d, (coll_op)o) != COLL_OK)
                    continue;
                for (int ip = 0; ip < 2; ip++) {
                    test_case t = {kinds[k], "auto",           4099, (coll_dtype)d, (coll_op)o,
                                   ip,       (d + o) % rh_size};
                    cases++;
                    if (run_case(comm, &t)) failures++;
                }
            }
}

/* gloo: a bfloat16 reduction is refused on every rank, naming the pair. Last
 * call: a refusal ends the communicator, as every failed call does. */
static void check_gloo_refusal(coll_comm *comm)
{
    uint16_t b[8] = {0};
    int rc = coll_allreduce(comm, b, b, 8, COLL_BFLOAT16, COLL_MAX);
    const char *msg = coll_comm_errmsg(comm);
    if (rc != COLL_ENOTSUP || !strstr(msg, "bfloat16") || !strstr(msg, "max")) {
        fprintf(stderr, "rank %d: bfloat16 max on gloo: %s (%s), want a refusal naming the pair\n",
                rh_rank, coll_strerror(rc), msg);
        failures++;
    }
}

int main(int argc, char **argv)
{
    coll_comm *comm = rh_start(argc, argv);
    if (!comm) return rh_launch_status;
    on_gloo = strcmp(coll_comm_backend(comm), "gloo") == 0;
    run_matrix(comm);
    run_p2p(comm);
    run_alltoallv(comm);
    run_nonblocking(comm);
    if (on_gloo) {
        run_all_pairs(comm);
        check_gloo_refusal(comm);
    }
    if (cases < 60) { /* auto alone: 7 collectives x 5 counts x (in-place or not) */
        fprintf(stderr, "rank %d: only %d cases ran\n", rh_rank, cases);
        failures++;
    }
    if (rh_rank == 0) printf("rank 0: %d collective cases checked, %d failed\n", cases, failures);
    return rh_finish(comm, failures);
}
