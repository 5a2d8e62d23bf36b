/* coll_recv_any on a real backend: `test_recv_any NPROCS [BACKEND]` (3 or 4
 * ranks), every rank checking what it can see:
 *
 *   refusals: a NULL source, a NULL buffer, an invalid dtype give COLL_EINVAL
 *     and a message, and the communicator stays usable;
 *   staggered: rank k >= 1 sends k small messages after sleeping
 *     (NPROCS - 1 - k) x STAGGER_S, so they arrive highest rank first; rank 0
 *     takes them all with coll_recv_any and checks each payload against the
 *     source reported, the order of arrival, and that rank k came k times;
 *   at once: every rank k >= 1 sends two large messages (past shm's mailbox,
 *     several tcp rounds) at the same time: payloads, each peer's two in the
 *     order sent, two from each;
 *   beside a collective: rank 1 sends to rank 0 late while the others are
 *     already in an all-reduce that needs rank 0: rank 0's receive from any
 *     takes rank 1's message, not the collective's;
 *   not only rank 0: the last rank receives from any while rank 0 sends;
 *   a ring of coll_sendrecv_any: each rank sends a large message to the next
 *     while receiving from any (its previous rank's), where a send that
 *     waits for its receiver (gloo) would deadlock as a send, then a receive;
 *   afterwards: a plain coll_recv and an all-reduce still work. */
#include "coll.h"
#include "rank_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SMALL 16
#define LARGE 300000 /* int32s: 1.2 MB, a count below 2^20 (see value) */
#define STAGGER_S 0.3

static int failures;

#define CHECK(cond, ...)                           \
    do {                                           \
        if (!(cond)) {                             \
            fprintf(stderr, "rank %d: ", rh_rank); \
            fprintf(stderr, __VA_ARGS__);          \
            fprintf(stderr, " (%s)\n", #cond);     \
            failures++;                            \
        }                                          \
    } while (0)

/* Element i of message k from rank src: each says who sent it and which. */
static int32_t value(int src, int k, size_t i) { return (src << 24) ^ (k << 20) ^ (int32_t)i; }

static void fill(int32_t *buf, size_t n, int src, int k)
{
    for (size_t i = 0; i < n; i++) buf[i] = value(src, k, i);
}

/* The message index k whose payload buf holds if it came from src, or -1. */
static int index_from(const int32_t *buf, size_t n, int src)
{
    int k = (int)((buf[0] ^ (src << 24)) >> 20);
    for (size_t i = 0; i < n; i++)
        if (buf[i] != value(src, k, i)) return -1;
    return k;
}

static int send_all(coll_comm *comm, size_t n, int nmsgs)
{
    int32_t *buf = malloc(n * sizeof *buf);
    int rc = COLL_OK;
    for (int k = 0; k < nmsgs && rc == COLL_OK && buf; k++) {
        fill(buf, n, rh_rank, k);
        rc = coll_send(comm, buf, n, COLL_INT32, 0);
    }
    free(buf);
    return buf ? rc : COLL_ENOMEM;
}

/* Rank 0: total messages of n elements from any source; seen[src] counts
 * them, order[] lists their sources as they came. Each peer's in the order sent. */
static void recv_all(coll_comm *comm, size_t n, int total, int *seen, int *order)
{
    int32_t *buf = malloc(n * sizeof *buf);
    if (!buf) {
        failures++;
        return;
    }
    for (int m = 0; m < total; m++) {
        int src = -2;
        int rc = coll_recv_any(comm, buf, n, COLL_INT32, &src);
        CHECK(rc == COLL_OK, "recv_any %d of %d: %s: %s", m, total, coll_status_name(rc),
              coll_comm_errmsg(comm));
        if (rc) break;
        CHECK(src > 0 && src < rh_size, "recv_any reported source %d", src);
        if (src <= 0 || src >= rh_size) break;
        int k = index_from(buf, n, src);
        CHECK(k == seen[src],
              "message %d: reported from rank %d, but the payload is not its "
              "message %d (got index %d, first element 0x%x)",
              m, src, seen[src], k, (unsigned)buf[0]);
        seen[src]++;
        if (order) order[m] = src;
    }
    free(buf);
}

static void refusals(coll_comm *comm)
{
    int32_t buf[SMALL];
    int src = 5;
    int rc = coll_recv_any(comm, buf, SMALL, COLL_INT32, NULL);
    CHECK(rc == COLL_EINVAL && strstr(coll_comm_errmsg(comm), "source"), "NULL source: %s: %s",
          coll_status_name(rc), coll_comm_errmsg(comm));
    rc = coll_recv_any(comm, NULL, SMALL, COLL_INT32, &src);
    CHECK(rc == COLL_EINVAL && src == -1 && strstr(coll_comm_errmsg(comm), "NULL buffer"),
          "NULL buffer: %s, source %d: %s", coll_status_name(rc), src, coll_comm_errmsg(comm));
    rc = coll_recv_any(comm, buf, SMALL, (coll_dtype)99, &src);
    CHECK(rc == COLL_EINVAL && strstr(coll_comm_errmsg(comm), "dtype"), "bad dtype: %s: %s",
          coll_status_name(rc), coll_comm_errmsg(comm));
    rc = coll_barrier(comm);
    CHECK(rc == COLL_OK, "barrier after the refusals: %s", coll_status_name(rc));
}

static void staggered(coll_comm *comm)
{
    int n = rh_size, total = n * (n - 1) / 2; /* rank k sends k */
    if (rh_rank > 0) {
        usleep((useconds_t)((n - 1 - rh_rank) * STAGGER_S * 1e6));
        int rc = send_all(comm, SMALL, rh_rank);
        CHECK(rc == COLL_OK, "staggered send: %s", coll_status_name(rc));
        return;
    }
    int seen[8] = {0}, order[32];
    recv_all(comm, SMALL, total, seen, order);
    for (int k = 1; k < n; k++)
        CHECK(seen[k] == k, "rank %d came %d times, sent %d", k, seen[k], k);
    /* Arrival order: rank n-1's messages, then rank n-2's, ..., rank 1's. */
    for (int m = 0, src = n - 1; src > 0; src--)
        for (int j = 0; j < src && !failures; j++, m++)
            CHECK(order[m] == src, "message %d came from rank %d, but rank %d sent first", m,
                  order[m], src);
}

static void at_once(coll_comm *comm)
{
    if (rh_rank > 0) {
        int rc = send_all(comm, LARGE, 2);
        CHECK(rc == COLL_OK, "large send: %s", coll_status_name(rc));
        return;
    }
    int seen[8] = {0};
    recv_all(comm, LARGE, 2 * (rh_size - 1), seen, NULL);
    for (int k = 1; k < rh_size; k++)
        CHECK(seen[k] == 2, "rank %d came %d times, sent 2", k, seen[k]);
}

static void beside_collective(coll_comm *comm)
{
    int32_t one = 1, sum = 0;
    if (rh_rank == 1) {
        usleep((useconds_t)(STAGGER_S * 1e6)); /* the others are in the all-reduce by then */
        CHECK(send_all(comm, SMALL, 1) == COLL_OK, "send beside the all-reduce");
    } else if (rh_rank == 0) {
        int seen[8] = {0};
        recv_all(comm, SMALL, 1, seen, NULL);
        CHECK(seen[1] == 1, "rank 1's message was not the one taken");
    }
    int rc = coll_allreduce(comm, &one, &sum, 1, COLL_INT32, COLL_SUM);
    CHECK(rc == COLL_OK && sum == rh_size, "all-reduce beside recv_any: %s, sum %d",
          coll_status_name(rc), (int)sum);
}

static void last_rank_receives(coll_comm *comm)
{
    int32_t buf[SMALL];
    int last = rh_size - 1, src = -2;
    if (rh_rank == 0) {
        fill(buf, SMALL, 0, 3);
        CHECK(coll_send(comm, buf, SMALL, COLL_INT32, last) == COLL_OK, "send to the last rank");
    } else if (rh_rank == last) {
        int rc = coll_recv_any(comm, buf, SMALL, COLL_INT32, &src);
        CHECK(rc == COLL_OK && src == 0 && index_from(buf, SMALL, 0) == 3,
              "last rank's recv_any: %s, source %d: %s", coll_status_name(rc), src,
              coll_comm_errmsg(comm));
    }
}

static void ring(coll_comm *comm)
{
    int32_t *out = malloc(LARGE * sizeof *out), *in = malloc(LARGE * sizeof *in);
    int next = (rh_rank + 1) % rh_size, prev = (rh_rank + rh_size - 1) % rh_size, src = -2;
    if (out && in) {
        fill(out, LARGE, rh_rank, 1);
        int rc = coll_sendrecv_any(comm, out, LARGE, next, in, LARGE, COLL_INT32, &src);
        CHECK(rc == COLL_OK && src == prev && index_from(in, LARGE, prev) == 1,
              "sendrecv_any around the ring: %s, source %d (want %d): %s", coll_status_name(rc),
              src, prev, coll_comm_errmsg(comm));
    } else {
        failures++;
    }
    free(out);
    free(in);
}

static void afterwards(coll_comm *comm)
{
    int32_t buf[7], one = 1, sum = 0;
    if (rh_rank == 1) {
        fill(buf, 7, 1, 5);
        CHECK(coll_send(comm, buf, 7, COLL_INT32, 0) == COLL_OK, "plain send");
    } else if (rh_rank == 0) {
        int rc = coll_recv(comm, buf, 7, COLL_INT32, 1);
        CHECK(rc == COLL_OK && index_from(buf, 7, 1) == 5, "plain recv after recv_any: %s: %s",
              coll_status_name(rc), coll_comm_errmsg(comm));
    }
    int rc = coll_allreduce(comm, &one, &sum, 1, COLL_INT32, COLL_SUM);
    CHECK(rc == COLL_OK && sum == rh_size, "final all-reduce: %s, sum %d", coll_status_name(rc),
          (int)sum);
}

int main(int argc, char **argv)
{
    coll_comm *comm = rh_start(argc, argv);
    if (!comm) return rh_launch_status;
    if (rh_size < 3 || rh_size > 8) {
        fprintf(stderr, "test_recv_any: 3 to 8 ranks, not %d\n", rh_size);
        return rh_finish(comm, 1);
    }
    refusals(comm);
    void (*phases[])(coll_comm *) = {staggered,          at_once, beside_collective,
                                     last_rank_receives, ring,    afterwards};
    for (size_t i = 0; i < sizeof phases / sizeof phases[0] && !failures; i++) {
        phases[i](comm);
        coll_barrier(comm);
    }
    if (rh_rank == 0)
        printf("rank 0: recv_any on %s, %d ranks: %s\n", coll_comm_backend(comm), rh_size,
               failures ? "FAILED" : "ok");
    return rh_finish(comm, failures);
}
