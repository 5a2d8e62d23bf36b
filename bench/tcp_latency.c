/* Where the time of a tcp all-reduce goes, layer by layer, across processes
 * on loopback (issue 50): each layer is timed on its own, back to back, and
 * the difference between two layers is what the upper one adds.
 *   tcp_latency [ranks (2)] [bytes (8)] [iters (0: by size)] [algo (auto)]
 * Layers (float32 sum, out of place; every time the slowest rank's, p50):
 *   one-way       the transport's ping-pong between ranks 0 and 1, half a round trip
 *   exchange      every rank posts a receive and a send of `bytes` to/from its
 *                 neighbours and waits for both (one step of any algorithm)
 *   algo          coll__algo_run with the tuning table's choice, on a raw transport
 *   coll_allreduce the public call on a tcp communicator (sig, staging, backend)
 *   iallreduce+wait the nonblocking call and its wait: the hand-off to the
 *                 communicator's progress thread and back (what blocking calls skip)
 *   coll_barrier  the public barrier
 *   collbench     collbench's timing loop: barrier, then the timed all-reduce
 * csw/call: voluntary context switches per call on rank 0 (each is a sleep in
 * poll and a wake-up later); cpu us/call: rank 0's user + system time per
 * call, the work a layer does whatever else the machine runs. */
#include "algo/algo.h"
#include "bootstrap/store.h"
#include "coll.h"
#include "core/clock.h"
#include "core/reduce.h"
#include "transport/transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum { L_ONEWAY, L_EXCHANGE, L_ALGO, L_ALLREDUCE, L_IALLREDUCE, L_BARRIER, L_LOOP, L_COUNT };
static const char *const layer_name[L_COUNT] = {
    "one-way",         "exchange",     "algo",           "coll_allreduce",
    "iallreduce+wait", "coll_barrier", "collbench loop",
};

typedef struct run {
    int rank, size, iters;
    size_t bytes;
    coll__transport *tp;
    coll_comm *comm;
    float *sbuf, *rbuf, *tmp;
    double *t[L_COUNT]; /* per iteration, us */
    double csw[L_COUNT], cpu[L_COUNT];
    coll__algo_id algo; /* AUTO: the tuning table's choice */
    const char *algo_name;
} run;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "tcp_latency: %s: %s\n", what, msg);
    exit(3);
}

/* Voluntary context switches and CPU seconds of this process so far. */
static void usage_now(long *csw, double *cpu_s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *csw = ru.ru_nvcsw;
    *cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
             (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static void wait_all(run *r, coll__xfer *x, int n)
{
    for (;;) {
        int pending = 0;
        for (int i = 0; i < n; i++) {
            if (x[i].status == COLL_EAGAIN) pending++;
            else if (x[i].status != COLL_OK) die("transfer", r->tp->err.msg);
        }
        if (!pending) return;
        if (r->tp->ops->progress(r->tp, 1000) < 0) die("progress", r->tp->err.msg);
    }
}

static void xfer(run *r, coll__xfer *x, coll__xfer_kind kind, int peer, void *buf, size_t len)
{
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->peer = peer;
    x->buf = buf;
    x->len = len;
    x->sig.kind = COLL_KIND_P2P;
    x->sig.count = len;
    if (r->tp->ops->post(r->tp, x) < 0) die("post", r->tp->err.msg);
}

static void one_way(run *r)
{
    coll__xfer x;
    if (r->rank > 1) return;
    int peer = 1 - r->rank;
    for (int k = 0; k < 2; k++) {
        int sending = (k == 0) == (r->rank == 0);
        xfer(r, &x, sending ? COLL_XFER_SEND : COLL_XFER_RECV, peer, r->tmp, 8);
        wait_all(r, &x, 1);
    }
}

static void exchange(run *r)
{
    coll__xfer x[2];
    int right = (r->rank + 1) % r->size, left = (r->rank + r->size - 1) % r->size;
    xfer(r, &x[0], COLL_XFER_RECV, left, r->tmp, r->bytes);
    xfer(r, &x[1], COLL_XFER_SEND, right, r->sbuf, r->bytes);
    wait_all(r, x, 2);
}

static void algo(run *r, coll__scratch *scratch, uint32_t seq)
{
    size_t count = r->bytes / sizeof(float);
    coll__algo_ctx ctx = {.tp = r->tp,
                          .rank = r->rank,
                          .size = r->size,
                          .sig = {.seq = seq, .kind = COLL_KIND_ALLREDUCE, .count = count},
                          .deadline = coll__now_s() + 60,
                          .scratch = scratch,
                          .timeout_s = 60};
    coll__algo_id id = coll__algo_select(COLL_KIND_ALLREDUCE, r->algo, r->bytes, r->size, NULL);
    if (coll__algo_run(&ctx, id, COLL_KIND_ALLREDUCE, r->sbuf, r->rbuf, count, COLL_FLOAT32,
                       COLL_SUM, -1))
        die("algo", r->tp->err.msg);
}

static void check(int rc, run *r, const char *what)
{
    if (rc) die(what, coll_comm_errmsg(r->comm));
}

/* One layer's iterations (a few untimed first), each timed on this rank. */
static void time_layer(run *r, int layer, coll__scratch *scratch)
{
    int warm = r->iters / 10 + 2;
    long c0 = 0, c1;
    double cpu0 = 0, cpu1;
    for (int i = -warm; i < r->iters; i++) {
        if (i == 0) usage_now(&c0, &cpu0);
        double t0 = 0;
        if (layer != L_LOOP) t0 = coll__now_us();
        switch (layer) {
        case L_ONEWAY: one_way(r); break;
        case L_EXCHANGE: exchange(r); break;
        case L_ALGO: algo(r, scratch, (uint32_t)(i + warm)); break;
        case L_ALLREDUCE:
            check(coll_allreduce(r->comm, r->sbuf, r->rbuf, r->bytes / 4, COLL_FLOAT32, COLL_SUM),
                  r, "coll_allreduce");
            break;
        case L_IALLREDUCE: {
            coll_request *q = NULL;
            check(coll_iallreduce(r->comm, r->sbuf, r->rbuf, r->bytes / 4, COLL_FLOAT32, COLL_SUM,
                                  &q),
                  r, "coll_iallreduce");
            check(coll_wait(q), r, "coll_wait");
            break;
        }
        case L_BARRIER: check(coll_barrier(r->comm), r, "coll_barrier"); break;
        case L_LOOP:
            check(coll_barrier(r->comm), r, "coll_barrier");
            t0 = coll__now_us();
            check(coll_allreduce(r->comm, r->sbuf, r->rbuf, r->bytes / 4, COLL_FLOAT32, COLL_SUM),
                  r, "coll_allreduce");
            break;
        }
        double dt = coll__now_us() - t0;
        if (layer == L_ONEWAY) dt /= 2;
        if (i >= 0) r->t[layer][i] = dt;
    }
    usage_now(&c1, &cpu1);
    r->csw[layer] = (double)(c1 - c0) / r->iters;
    r->cpu[layer] = (cpu1 - cpu0) * 1e6 / r->iters;
    check(coll_barrier(r->comm), r, "coll_barrier"); /* layers do not overlap */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int rank_main(run *r, const char *dir)
{
    char path[512], init[600];
    coll__err err = {.rank = -1};
    coll__store *store;
    snprintf(path, sizeof path, "%s/transport", dir);
    if (coll__file_store_create(path, 60, &store, &err)) die("store", err.msg);
    if (coll__tcp_transport_create(store, "lat/", r->rank, r->size, NULL, NULL, 60, NULL, 0, &r->tp,
                                   &err))
        die("transport", err.msg);
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = "tcp";
    snprintf(init, sizeof init, "file://%s/comm", dir);
    cfg.init_method = init;
    cfg.rank = r->rank;
    cfg.world_size = r->size;
    cfg.timeout_s = 60;
    cfg.algo = r->algo_name;
    if (coll_comm_create(&cfg, &r->comm)) die("coll_comm_create", coll_last_create_error());
    size_t n = r->bytes / sizeof(float);
    r->sbuf = malloc(r->bytes + 64);
    r->rbuf = malloc(r->bytes + 64);
    r->tmp = malloc(r->bytes + 64);
    for (int l = 0; l < L_COUNT; l++) r->t[l] = calloc((size_t)r->iters, sizeof(double));
    if (!r->sbuf || !r->rbuf || !r->tmp) die("malloc", "out of memory");
    for (size_t i = 0; i < n; i++) r->sbuf[i] = (float)(r->rank + 1);
    coll__scratch scratch = {0};
    for (int l = 0; l < L_COUNT; l++) time_layer(r, l, &scratch);
    coll__scratch_free(&scratch);
    for (size_t i = 0; i < n; i++)
        if (r->rbuf[i] != (float)(r->size * (r->size + 1) / 2)) die("check", "wrong sum");
    double p50[L_COUNT];
    for (int l = 0; l < L_COUNT; l++) { /* the slowest rank's time per iteration */
        check(coll_allreduce(r->comm, r->t[l], r->t[l], (size_t)r->iters, COLL_FLOAT64, COLL_MAX),
              r, "coll_allreduce");
        qsort(r->t[l], (size_t)r->iters, sizeof(double), cmp_double);
        p50[l] = r->t[l][r->iters / 2];
    }
    if (r->rank == 0) {
        coll__algo_id id = coll__algo_select(COLL_KIND_ALLREDUCE, r->algo, r->bytes, r->size, NULL);
        printf("# tcp all-reduce breakdown: %d ranks, %zu bytes float32 sum out of place, %d "
               "iters, algo %s\n",
               r->size, r->bytes, r->iters, coll__algo_name(id));
        printf("| layer | p50 us | p90 us | adds us | csw/call | cpu us/call |\n"
               "|---|---|---|---|---|---|\n");
        for (int l = 0; l < L_COUNT; l++) {
            double adds = l == L_ALGO         ? p50[l] - p50[L_EXCHANGE]
                          : l == L_ALLREDUCE  ? p50[l] - p50[L_ALGO]
                          : l == L_IALLREDUCE ? p50[l] - p50[L_ALLREDUCE]
                          : l == L_LOOP       ? p50[l] - p50[L_ALLREDUCE]
                                              : 0;
            printf("| %s | %.2f | %.2f | %+.2f | %.2f | %.1f |\n", layer_name[l], p50[l],
                   r->t[l][r->iters * 9 / 10], adds, r->csw[l], r->cpu[l]);
        }
    }
    check(coll_comm_destroy(r->comm), r, "coll_comm_destroy");
    r->tp->ops->destroy(r->tp);
    coll__store_destroy(store);
    return 0;
}

int main(int argc, char **argv)
{
    int size = argc > 1 ? atoi(argv[1]) : 2;
    long long bytes = argc > 2 ? atoll(argv[2]) : 8;
    int iters = argc > 3 ? atoi(argv[3]) : 0;
    const char *algo_name = argc > 4 ? argv[4] : "auto";
    coll__algo_id algo;
    if (size < 2 || size > 64 || bytes < 4 || bytes % 4 || iters < 0 ||
        coll__algo_parse(algo_name, &algo) || !coll__algo_exists(COLL_KIND_ALLREDUCE, algo)) {
        fprintf(stderr,
                "usage: tcp_latency [ranks 2..64] [bytes, a multiple of 4] [iters] "
                "[algo: %s]\n",
                coll__algo_list(COLL_KIND_ALLREDUCE));
        return 2;
    }
    if (!iters) { /* about 0.2 s of transfer per layer at 1 GB/s, 100..2000 */
        long long k = 200000000LL / bytes;
        iters = k > 2000 ? 2000 : k < 20 ? 20 : (int)k;
    }
    char dir[] = "/tmp/tcp_latency.XXXXXX";
    if (!mkdtemp(dir)) die("mkdtemp", "cannot make a directory");
    fflush(stdout);
    for (int rank = 0; rank < size; rank++) {
        pid_t pid = fork();
        if (pid < 0) die("fork", "failed");
        if (pid == 0) {
            run r = {.rank = rank,
                     .size = size,
                     .iters = iters,
                     .bytes = (size_t)bytes,
                     .algo = algo,
                     .algo_name = algo_name};
            int rc = rank_main(&r, dir);
            fflush(stdout); /* _exit does not */
            _exit(rc);
        }
    }
    int bad = 0, st;
    while (wait(&st) > 0)
        if (!WIFEXITED(st) || WEXITSTATUS(st)) bad = 1;
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    if (system(rm) != 0) bad = 1;
    return bad ? 3 : 0;
}
