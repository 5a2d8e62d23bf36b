/* The mpi backend under mpirun: `mpirun -np N test_mpi_backend`.
 *
 * Every collective x every dtype/op pair x in-place or not x counts 0, 1, 17
 * and 65537, roots rotating; broadcast/reduce/allreduce cut into pieces
 * (COLL_MPI_MAX_COUNT) and block collectives refused beyond it; nonblocking
 * calls overlapped; send/recv; set_algo; three communicators at once; a limit
 * that is not a count refused by name; and a
 * receive count mismatch reported by every rank as EMISMATCH naming its peer. */
#include "coll.h"
#include "rank_data.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures, cases;

#define FAIL(...)                           \
    do {                                    \
        fprintf(stderr, "rank %d: ", rank); \
        fprintf(stderr, __VA_ARGS__);       \
        fprintf(stderr, "\n");              \
        failures++;                         \
    } while (0)

typedef struct tcase {
    const char *kind;
    size_t count;
    coll_dtype dt;
    coll_op op;
    int in_place, root;
} tcase;

static void describe(const tcase *t, char *b, size_t n)
{
    snprintf(b, n, "%s count=%zu %s %s%s root=%d", t->kind, t->count, coll_dtype_name(t->dt),
             coll_op_name(t->op), t->in_place ? " in-place" : "", t->root);
}

static double in_of(const tcase *t, int r, size_t i)
{
    return rank_input(t->dt, t->op, r, size, i, 0);
}

static void fill(const tcase *t, void *buf, int r, size_t n, size_t base)
{
    for (size_t i = 0; i < n; i++) rank_set(t->dt, buf, i, in_of(t, r, base + i));
}

/* Counts wrong elements of buf[0..n) against want(base + i); reports the first. */
static int check(const tcase *t, const void *buf, size_t n, size_t base, int reduced, int from)
{
    int wrong = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = base + i;
        double got = rank_get(t->dt, buf, i);
        double want = reduced     ? rank_expected(t->dt, t->op, size, k, 0)
                      : from >= 0 ? in_of(t, from, k)
                                  : in_of(t, (int)(k / t->count), k % t->count); /* gathered */
        if (!rank_close(t->dt, t->op, got, want) && wrong++ == 0) {
            char d[160];
            describe(t, d, sizeof d);
            FAIL("%s: element %zu got %g want %g", d, k, got, want);
        }
    }
    return wrong;
}

static int run_case(coll_comm *comm, const tcase *t)
{
    size_t es = coll_dtype_size(t->dt), n = t->count, N = n * (size_t)size;
    char *s = calloc(N + 1, es), *r = calloc(N + 1, es);
    int rc = -100, wrong = 0;
    const char *k = t->kind;
    if (!strcmp(k, "allreduce")) {
        fill(t, t->in_place ? r : s, rank, n, 0);
        if (!(rc = coll_allreduce(comm, t->in_place ? r : s, r, n, t->dt, t->op)))
            wrong = check(t, r, n, 0, 1, -1);
    } else if (!strcmp(k, "allgather")) {
        char *mine = t->in_place ? r + (size_t)rank * n * es : s;
        fill(t, mine, rank, n, 0);
        if (!(rc = coll_allgather(comm, mine, r, n, t->dt))) wrong = check(t, r, N, 0, 0, -1);
    } else if (!strcmp(k, "reducescatter")) {
        fill(t, s, rank, N, 0);
        char *out = t->in_place ? s + (size_t)rank * n * es : r;
        if (!(rc = coll_reducescatter(comm, s, out, n, t->dt, t->op)))
            wrong = check(t, out, n, (size_t)rank * n, 1, -1);
    } else if (!strcmp(k, "broadcast")) {
        if (rank == t->root) fill(t, t->in_place ? r : s, rank, n, 0);
        if (!(rc = coll_broadcast(comm, t->in_place ? r : s, r, n, t->dt, t->root)))
            wrong = check(t, r, n, 0, 0, t->root);
    } else if (!strcmp(k, "reduce")) {
        char *src = t->in_place && rank == t->root ? r : s;
        fill(t, src, rank, n, 0);
        if (!(rc = coll_reduce(comm, src, r, n, t->dt, t->op, t->root)) && rank == t->root)
            wrong = check(t, r, n, 0, 1, -1);
    } else if (!strcmp(k, "alltoall")) {
        fill(t, s, rank, N, 0); /* block j goes to rank j */
        rc = coll_alltoall(comm, s, r, n, t->dt);
        for (int j = 0; !rc && j < size; j++)
            wrong += check(t, r + (size_t)j * n * es, n, (size_t)rank * n, 0, j);
    }
    free(s);
    free(r);
    cases++;
    if (rc) {
        char d[160];
        describe(t, d, sizeof d);
        FAIL("%s failed: %s (%s)", d, coll_strerror(rc), coll_comm_errmsg(comm));
        return 1;
    }
    return wrong > 0;
}

static const char *const kinds[] = {"allreduce", "allgather", "reducescatter",
                                    "broadcast", "reduce",    "alltoall"};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static void run_matrix(coll_comm *comm)
{
    static const size_t counts[] = {0, 1, 17, 65537};
    int salt = 0;
    for (size_t k = 0; k < NKINDS; k++)
        for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++)
            for (int op = 0; op < COLL_OP_COUNT; op++) {
                if (coll_op_valid((coll_dtype)dt, (coll_op)op) != COLL_OK) continue;
                int has_op = k == 0 || k == 2 || k == 4;
                if (!has_op && op != COLL_SUM) continue; /* op means nothing to them */
                /* rank_data's products use -1: no uint8 input for them */
                if (dt == COLL_UINT8 && op == COLL_PROD) continue;
                for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                    for (int ip = 0; ip < (k == 5 ? 1 : 2); ip++) {
                        tcase t = {kinds[k],    counts[c], (coll_dtype)dt,
                                   (coll_op)op, ip,        salt++ % size};
                        run_case(comm, &t); /* every rank runs every case: no early exit */
                    }
            }
    if (coll_barrier(comm)) FAIL("barrier: %s", coll_comm_errmsg(comm));
}

/* Reductions and broadcasts longer than one MPI call may carry, in pieces. */
static void run_pieces(coll_comm *comm)
{
    tcase t[] = {{"allreduce", 2501, COLL_FLOAT32, COLL_AVG, 1, 0},
                 {"reduce", 2999, COLL_BFLOAT16, COLL_MAX, 0, size - 1},
                 {"broadcast", 2000, COLL_INT64, COLL_SUM, 0, size / 2}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) run_case(comm, &t[i]);
}

static void run_p2p(coll_comm *comm)
{
    if (size < 2) return;
    tcase t = {"sendrecv", 4099, COLL_FLOAT16, COLL_SUM, 0, 0};
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    uint16_t s[4099], r[4099];
    fill(&t, s, rank, t.count, 0);
    int rc = coll_sendrecv(comm, s, t.count, right, r, t.count, left, t.dt);
    if (rc) FAIL("sendrecv: %s", coll_comm_errmsg(comm));
    else check(&t, r, t.count, 0, 0, left);
    /* send/recv: rank 0 to the last rank */
    if (rank == 0) rc = coll_send(comm, s, 100, t.dt, size - 1);
    if (rank == size - 1) rc = coll_recv(comm, r, 100, t.dt, 0);
    if (rc) FAIL("send/recv: %s", coll_comm_errmsg(comm));
    else if (rank == size - 1) check(&t, r, 100, 0, 0, 0);
}

/* coll_alltoallv over MPI's point to point: uneven counts, some 0 (also a
 * rank to itself), every element checked. */
static void run_alltoallv(coll_comm *comm)
{
    size_t sc[64], rcnt[64], ns = 0, nr = 0;
    if (size > 64) return;
    for (int j = 0; j < size; j++)
        ns += sc[j] = rank_a2av_count(rank, j, 3001),
              nr += rcnt[j] = rank_a2av_count(j, rank, 3001);
    int32_t *s = malloc((ns + 1) * 4), *r = malloc((nr + 1) * 4), got = 0;
    rank_a2av_fill(s, rank, size, sc);
    int rc = coll_alltoallv(comm, s, sc, r, rcnt, COLL_INT32), from = 0;
    size_t e = 0;
    if (rc) FAIL("alltoallv: %s", coll_comm_errmsg(comm));
    else if (rank_a2av_wrong(r, rank, size, rcnt, &from, &e, &got))
        FAIL("alltoallv: element %zu from rank %d is %d, want %d", e, from, got,
             rank_a2av_value(from, rank, e));
    cases++;
    free(s), free(r);
}

static void run_nonblocking(coll_comm *comm)
{
    tcase ar = {"iallreduce", 100003, COLL_FLOAT32, COLL_SUM, 0, 0};
    tcase ag = {"iallgather", 5003, COLL_INT32, COLL_SUM, 0, 0};
    tcase rs = {"ireducescatter", 7001, COLL_FLOAT16, COLL_AVG, 0, 0};
    tcase bc = {"ibroadcast", 3001, COLL_INT8, COLL_SUM, 0, size - 1};
    size_t N = (size_t)size;
    float *ars = malloc(ar.count * 4), *arr = malloc(ar.count * 4);
    int32_t *ags = malloc(ag.count * 4), *agr = malloc(ag.count * N * 4);
    uint16_t *rss = malloc(rs.count * N * 2), *rsr = malloc(rs.count * 2);
    int8_t *bcb = malloc(bc.count);
    fill(&ar, ars, rank, ar.count, 0);
    fill(&ag, ags, rank, ag.count, 0);
    fill(&rs, rss, rank, rs.count * N, 0);
    if (rank == bc.root) fill(&bc, bcb, rank, bc.count, 0);
    coll_request *q[4] = {0};
    int rc = coll_iallreduce(comm, ars, arr, ar.count, ar.dt, ar.op, &q[0]);
    if (!rc) rc = coll_iallgather(comm, ags, agr, ag.count, ag.dt, &q[1]);
    if (!rc) rc = coll_ireducescatter(comm, rss, rsr, rs.count, rs.dt, rs.op, &q[2]);
    if (!rc) rc = coll_ibroadcast(comm, bcb, bcb, bc.count, bc.dt, bc.root, &q[3]);
    if (!rc) rc = coll_barrier(comm); /* blocking, behind the four */
    for (int i = 0; i < 4; i++) {
        int w = q[i] ? coll_wait(q[i]) : COLL_OK;
        if (!rc) rc = w;
    }
    cases += 4;
    if (rc) FAIL("nonblocking: %s (%s)", coll_strerror(rc), coll_comm_errmsg(comm));
    else {
        check(&ar, arr, ar.count, 0, 1, -1);
        check(&ag, agr, ag.count * N, 0, 0, -1);
        check(&rs, rsr, rs.count, (size_t)rank * rs.count, 1, -1);
        check(&bc, bcb, bc.count, 0, 0, bc.root);
    }
    free(ars);
    free(arr);
    free(ags);
    free(agr);
    free(rss);
    free(rsr);
    free(bcb);
}

/* A communicator whose largest MPI call is $COLL_MPI_MAX_COUNT=max_count as it
 * is created (NULL: unset). */
static int create_with(const char *max_count, coll_comm **comm)
{
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = "mpi";
    cfg.timeout_s = 60;
    *comm = NULL;
    if (max_count) setenv("COLL_MPI_MAX_COUNT", max_count, 1);
    int rc = coll_comm_create(&cfg, comm);
    unsetenv("COLL_MPI_MAX_COUNT");
    return rc;
}

static coll_comm *create(const char *max_count)
{
    coll_comm *comm;
    int rc = create_with(max_count, &comm);
    if (rc) FAIL("coll_comm_create(mpi): %s: %s", coll_strerror(rc), coll_last_create_error());
    return comm;
}

/* A limit that is not a count fails the creation, naming it, on every rank alike. */
static void run_bad_limit(void)
{
    coll_comm *comm;
    int rc = create_with("1e3", &comm);
    if (rc != COLL_EINVAL || !strstr(coll_last_create_error(), "COLL_MPI_MAX_COUNT=1e3"))
        FAIL("COLL_MPI_MAX_COUNT=1e3: %s '%s'; want EINVAL naming it", coll_strerror(rc),
             coll_last_create_error());
    if (!rc) coll_comm_destroy(comm);
}

/* On a second communicator: refusals that leave it usable or fail every rank alike. */
static void run_errors(coll_comm *comm)
{
    int rc = coll_comm_set_algo(comm, "ring");
    if (rc != COLL_ENOTSUP || !strstr(coll_comm_errmsg(comm), "MPI library"))
        FAIL("set_algo ring: %s, '%s'; want ENOTSUP naming the MPI library", coll_strerror(rc),
             coll_comm_errmsg(comm));
    if ((rc = coll_comm_set_algo(comm, "auto"))) FAIL("set_algo auto: %s", coll_strerror(rc));

    /* the last thing on this communicator: every rank fails at once, so no one waits */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int32_t s[8] = {1, 2, 3, 4, 5}, r[8];
    rc = coll_sendrecv(comm, s, 5, right, r, 8, left, COLL_INT32);
    char want[64];
    snprintf(want, sizeof want, "rank %d sent 5 elements", left);
    if (size > 1 && (rc != COLL_EMISMATCH || coll_comm_failed_rank(comm) != left ||
                     !strstr(coll_comm_errmsg(comm), want)))
        FAIL("short receive: %s, failed rank %d, '%s'; want EMISMATCH from rank %d",
             coll_strerror(rc), coll_comm_failed_rank(comm), coll_comm_errmsg(comm), left);
}

static void run_too_large(coll_comm *comm)
{
    int32_t *b = calloc(1001 * (size_t)size, 4);
    int rc = coll_allgather(comm, b, b, 1001, COLL_INT32);
    if (rc != COLL_ENOTSUP || !strstr(coll_comm_errmsg(comm), "MPI counts are int"))
        FAIL("allgather beyond COLL_MPI_MAX_COUNT: %s '%s'; want ENOTSUP", coll_strerror(rc),
             coll_comm_errmsg(comm));
    free(b);
}

int main(void)
{
    /* small: MPI calls of at most 1000 elements */
    coll_comm *comm = create(NULL), *errs = create(NULL), *small = create("1000");
    if (!comm || !errs || !small) return 1;
    rank = coll_comm_rank(comm);
    size = coll_comm_size(comm);
    int wrank = -1, wsize = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (rank != wrank || size != wsize || strcmp(coll_comm_backend(comm), "mpi") != 0)
        FAIL("comm says rank %d of %d on %s; MPI_COMM_WORLD says %d of %d", rank, size,
             coll_comm_backend(comm), wrank, wsize);

    run_matrix(comm);
    run_pieces(small);
    run_p2p(comm);
    run_alltoallv(comm);
    run_nonblocking(comm);
    run_errors(errs);
    run_too_large(small);
    run_bad_limit();
    if (cases < 500) FAIL("only %d cases ran", cases);
    if (coll_comm_destroy(comm)) FAIL("destroy: %s", coll_comm_errmsg(comm));
    coll_comm_destroy(errs);
    coll_comm_destroy(small);
    if (rank == 0) printf("rank 0: %d cases on %d ranks, %d failures\n", cases, size, failures);
    /* errs failed on every rank alike: MPI itself is sound, so finish
     * it here rather than let libcoll skip MPI_Finalize after a failure */
    MPI_Finalize();
    return failures ? 1 : 0;
}
