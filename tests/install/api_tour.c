/* A program built against the installed libcoll that calls every group of its
 * API (include/coll.h): status and dtype/op names, configuration, backends and
 * algorithms, the communicator's questions, coll_alloc, every blocking and
 * nonblocking collective and point to point, each result checked. Ranks from
 * the environment (env://), 2 or more. Prints "rank R of N: api ok". */
#include <coll.h>
#include <stdio.h>
#include <string.h>

#define N 8

static int fails;

static void check(int ok, int rank, const char *what)
{
    if (!ok) {
        fprintf(stderr, "rank %d: %s\n", rank, what);
        fails++;
    }
}

static void check_rc(int rc, coll_comm *comm, const char *what)
{
    if (rc != COLL_OK) {
        fprintf(stderr, "rank %d: %s: %s (%s): %s\n", coll_comm_rank(comm), what,
                coll_status_name(rc), coll_strerror(rc), coll_comm_errmsg(comm));
        fails++;
    }
}

/* Status codes, dtypes, ops, backends, algorithms: no communicator needed. */
static void names(void)
{
    check(strcmp(coll_status_name(COLL_EPEER), "COLL_EPEER") == 0, -1, "coll_status_name");
    check(strcmp(coll_strerror(COLL_EINVAL), "invalid argument") == 0, -1, "coll_strerror");
    coll_dtype dt;
    coll_op op;
    check(coll_dtype_parse("bf16", &dt) == COLL_OK && dt == COLL_BFLOAT16, -1, "coll_dtype_parse");
    check(coll_dtype_size(COLL_FLOAT64) == 8 && strcmp(coll_dtype_name(COLL_INT32), "int32") == 0,
          -1, "coll_dtype_size/name");
    check(coll_op_parse("max", &op) == COLL_OK && op == COLL_MAX, -1, "coll_op_parse");
    check(strcmp(coll_op_name(COLL_SUM), "sum") == 0, -1, "coll_op_name");
    check(coll_op_valid(COLL_FLOAT32, COLL_AVG) == COLL_OK &&
              coll_op_valid(COLL_INT32, COLL_AVG) != COLL_OK,
          -1, "coll_op_valid");
    int tcp = 0;
    for (const char *const *b = coll_backend_names(); *b; b++) tcp |= strcmp(*b, "tcp") == 0;
    char why[256];
    check(tcp && coll_backend_available("tcp", why, sizeof why) == 1, -1,
          "coll_backend_names/available");
    check(coll_backend_available("no-such", why, sizeof why) == 0 && why[0], -1,
          "coll_backend_available(no-such) says why");
    check(coll_algo_supported("allreduce", "ring") && !coll_algo_supported("allreduce", "no-such"),
          -1, "coll_algo_supported");
    check(strstr(coll_algo_names("allreduce"), "ring") != NULL, -1, "coll_algo_names");
}

/* rank r contributes r + 1 + i at element i: the sum over ranks is known. */
static double sum_at(int size, int i) { return size * (size + 1) / 2.0 + (double)size * i; }

static void blocking(coll_comm *comm, int rank, int size, double *a, double *b)
{
    for (int i = 0; i < N; i++) a[i] = rank + 1 + i;
    check_rc(coll_allreduce(comm, a, b, N, COLL_FLOAT64, COLL_SUM), comm, "coll_allreduce");
    for (int i = 0; i < N; i++) check(b[i] == sum_at(size, i), rank, "allreduce result");

    check_rc(coll_reduce(comm, a, b, N, COLL_FLOAT64, COLL_MAX, 0), comm, "coll_reduce");
    if (rank == 0)
        for (int i = 0; i < N; i++) check(b[i] == size + i, rank, "reduce result");

    b[0] = rank == 1 ? 42 : 0;
    check_rc(coll_broadcast(comm, b, b, 1, COLL_FLOAT64, 1), comm, "coll_broadcast");
    check(b[0] == 42, rank, "broadcast result");

    a[0] = rank; /* allgather: one element each */
    check_rc(coll_allgather(comm, a, b, 1, COLL_FLOAT64), comm, "coll_allgather");
    for (int r = 0; r < size; r++) check(b[r] == r, rank, "allgather result");

    for (int r = 0; r < size; r++) a[r] = r * 10 + rank; /* block r goes to rank r */
    check_rc(coll_alltoall(comm, a, b, 1, COLL_FLOAT64), comm, "coll_alltoall");
    for (int r = 0; r < size; r++) check(b[r] == rank * 10 + r, rank, "alltoall result");

    for (int r = 0; r < size; r++) a[r] = r + rank; /* reduced block r: sum over ranks of r + q */
    check_rc(coll_reducescatter(comm, a, b, 1, COLL_FLOAT64, COLL_SUM), comm, "coll_reducescatter");
    check(b[0] == (double)size * rank + size * (size - 1) / 2.0, rank, "reducescatter result");

    /* A ring: send to the next rank, receive from the previous one. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    a[0] = rank;
    check_rc(coll_sendrecv(comm, a, 1, next, b, 1, prev, COLL_FLOAT64), comm, "coll_sendrecv");
    check(b[0] == prev, rank, "sendrecv result");
    if (rank == 0) check_rc(coll_send(comm, a, 1, COLL_FLOAT64, 1), comm, "coll_send");
    if (rank == 1) {
        check_rc(coll_recv(comm, b, 1, COLL_FLOAT64, 0), comm, "coll_recv");
        check(b[0] == 0, rank, "recv result");
    }

    check_rc(coll_barrier(comm), comm, "coll_barrier");
    int missing[4], nmissing = -1;
    check_rc(coll_monitored_barrier(comm, 30.0, missing, 4, &nmissing), comm,
             "coll_monitored_barrier");
    check(nmissing == 0, rank, "monitored barrier: nobody missing");
}

static void nonblocking(coll_comm *comm, int rank, int size, double *a, double *b)
{
    coll_request *req[4];
    double *ag = b + N, *rs = b + N + size, *bc = rs + 1;
    for (int i = 0; i < N; i++) a[i] = rank + 1 + i;
    a[N] = rank;
    for (int r = 0; r < size; r++) a[N + 1 + r] = r + rank;
    bc[0] = rank == 0 ? 7 : 0;
    check_rc(coll_iallreduce(comm, a, b, N, COLL_FLOAT64, COLL_SUM, &req[0]), comm,
             "coll_iallreduce");
    check_rc(coll_iallgather(comm, a + N, ag, 1, COLL_FLOAT64, &req[1]), comm, "coll_iallgather");
    check_rc(coll_ireducescatter(comm, a + N + 1, rs, 1, COLL_FLOAT64, COLL_SUM, &req[2]), comm,
             "coll_ireducescatter");
    check_rc(coll_ibroadcast(comm, bc, bc, 1, COLL_FLOAT64, 0, &req[3]), comm, "coll_ibroadcast");
    int done = 0;
    check_rc(coll_test(req[3], &done), comm, "coll_test");
    for (int k = 0; k < 4; k++) check_rc(coll_wait(req[k]), comm, "coll_wait");
    for (int i = 0; i < N; i++) check(b[i] == sum_at(size, i), rank, "iallreduce result");
    for (int r = 0; r < size; r++) check(ag[r] == r, rank, "iallgather result");
    check(rs[0] == (double)size * rank + size * (size - 1) / 2.0, rank, "ireducescatter result");
    check(bc[0] == 7, rank, "ibroadcast result");
}

int main(void)
{
    names();
    coll_config cfg;
    coll_config_init(&cfg); /* env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; tcp */
    cfg.timeout_s = 60;
    coll_comm *comm = NULL;
    if (coll_comm_create(&cfg, &comm) != COLL_OK) {
        fprintf(stderr, "coll_comm_create: %s\n", coll_last_create_error());
        return 1;
    }
    int rank = coll_comm_rank(comm), size = coll_comm_size(comm);
    check(size >= 2 && size <= 16, rank, "2 to 16 ranks");
    check(strcmp(coll_comm_backend(comm), "tcp") == 0, rank,
          "the library's default backend is tcp");
    check(coll_comm_failed_rank(comm) == -1 && coll_comm_errmsg(comm)[0] == '\0', rank,
          "no error yet");
    check(coll_comm_host_count(comm) == 1, rank, "coll_comm_host_count: one host");
    char line[256];
    int drc = coll_comm_describe(comm, line, sizeof line);
    check(drc == COLL_OK || drc == COLL_ENOTSUP, rank, "coll_comm_describe");
    int prc = coll_comm_plan(comm, line, sizeof line);
    check(prc == COLL_OK || prc == COLL_ENOTSUP, rank, "coll_comm_plan");
    check(coll_comm_plan(comm, line, 0) == COLL_EINVAL, rank, "coll_comm_plan: no room");
    check(coll_comm_set_algo(comm, "no-such") != COLL_OK, rank,
          "coll_comm_set_algo refuses no-such");
    check_rc(coll_comm_set_algo(comm, "auto"), comm, "coll_comm_set_algo(auto)");

    double *a = coll_alloc(comm, 64 * sizeof(double)), *b = coll_alloc(comm, 64 * sizeof(double));
    check(a && b, rank, "coll_alloc");
    if (a && b && size >= 2 && size <= 16) {
        blocking(comm, rank, size, a, b);
        nonblocking(comm, rank, size, a, b);
    }
    coll_free(comm, a);
    coll_free(comm, b);
    check(coll_comm_destroy(comm) == COLL_OK, rank, "coll_comm_destroy");
    if (fails) return 1;
    printf("rank %d of %d: api ok\n", rank, size);
    return 0;
}
