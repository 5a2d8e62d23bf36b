/* coll_monitored_barrier on real ranks: `test_monitored_barrier NPROCS` (>= 3).
 *   all arrive                     -> COLL_OK everywhere, nobody missing
 *   ranks 1 and N-1 arrive late    -> every rank, the late ones too, gets
 *                                     COLL_ETIMEDOUT listing exactly {1, N-1}
 *   the communicator still works   -> an all-reduce with a known sum
 *   rank 0 arrives late            -> the others report rank 0 missing without
 *                                     waiting for it; rank 0 itself sees all arrived
 *   bad arguments                  -> COLL_EINVAL */
#include "coll.h"
#include "rank_harness.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static int failures;

#define CHECK(cond, ...)                                           \
    do {                                                           \
        if (!(cond)) {                                             \
            fprintf(stderr, "rank %d: FAIL %s: ", rh_rank, #cond); \
            fprintf(stderr, __VA_ARGS__);                          \
            fprintf(stderr, "\n");                                 \
            failures++;                                            \
        }                                                          \
    } while (0)

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void all_arrive(coll_comm *comm)
{
    int missing[8] = {-1}, n = -1;
    int rc = coll_monitored_barrier(comm, 10.0, missing, 8, &n);
    CHECK(rc == COLL_OK && n == 0, "rc %s n %d: %s", coll_status_name(rc), n,
          coll_comm_errmsg(comm));
}

static void late_ranks(coll_comm *comm)
{
    int last = rh_size - 1;
    if (rh_rank == 1 || rh_rank == last) sleep_s(2.0);
    int missing[8] = {-1, -1}, n = -1;
    int rc = coll_monitored_barrier(comm, 0.3, missing, 8, &n);
    const char *msg = coll_comm_errmsg(comm);
    char want[96];
    snprintf(want, sizeof want, "ranks 1, %d did not reach the monitored barrier", last);
    CHECK(rc == COLL_ETIMEDOUT, "rc %s: %s", coll_status_name(rc), msg);
    CHECK(n == 2 && missing[0] == 1 && missing[1] == last, "n %d missing %d %d", n, missing[0],
          missing[1]);
    CHECK(strstr(msg, want) != NULL, "errmsg '%s' lacks '%s'", msg, want);
    CHECK(coll_comm_failed_rank(comm) == 1, "blames %d", coll_comm_failed_rank(comm));
}

static void still_usable(coll_comm *comm)
{
    double v = rh_rank + 1;
    int rc = coll_allreduce(comm, &v, &v, 1, COLL_FLOAT64, COLL_SUM);
    CHECK(rc == COLL_OK && v == rh_size * (rh_size + 1) / 2.0, "rc %s v %g", coll_status_name(rc),
          v);
}

static void late_root(coll_comm *comm)
{
    if (rh_rank == 0) sleep_s(2.5);
    int missing[8] = {-1}, n = -1;
    int rc = coll_monitored_barrier(comm, 0.3, missing, 8, &n);
    if (rh_rank == 0) {
        CHECK(rc == COLL_OK && n == 0, "late rank 0: rc %s n %d", coll_status_name(rc), n);
    } else {
        CHECK(rc == COLL_ETIMEDOUT && n == 1 && missing[0] == 0, "rc %s n %d missing %d: %s",
              coll_status_name(rc), n, missing[0], coll_comm_errmsg(comm));
        CHECK(strstr(coll_comm_errmsg(comm), "rank 0 did not answer") != NULL, "errmsg '%s'",
              coll_comm_errmsg(comm));
    }
    CHECK(coll_barrier(comm) == COLL_OK, "barrier after a late rank 0: %s", coll_comm_errmsg(comm));
}

static void bad_args(coll_comm *comm)
{
    int m[1];
    CHECK(coll_monitored_barrier(comm, 0, m, 1, NULL) == COLL_EINVAL, "timeout 0");
    CHECK(coll_monitored_barrier(comm, -1, m, 1, NULL) == COLL_EINVAL, "timeout -1");
    CHECK(coll_monitored_barrier(comm, 1, NULL, 1, NULL) == COLL_EINVAL, "NULL missing");
    CHECK(coll_monitored_barrier(NULL, 1, m, 1, NULL) == COLL_EINVAL, "NULL comm");
}

int main(int argc, char **argv)
{
    coll_comm *comm = rh_start(argc, argv);
    if (!comm) return rh_launch_status;
    if (rh_size < 3) {
        fprintf(stderr, "test_monitored_barrier needs at least 3 ranks\n");
        return rh_finish(comm, 1);
    }
    bad_args(comm);
    all_arrive(comm);
    late_ranks(comm);
    still_usable(comm);
    late_root(comm);
    all_arrive(comm);
    if (rh_rank == 0 && failures == 0) printf("monitored barrier on %d ranks: PASS\n", rh_size);
    return rh_finish(comm, failures);
}
