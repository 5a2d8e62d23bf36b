/* The collectives the benchmark knows, one struct each (nccl-tests' testColl
 * pattern): how a size in bytes becomes the counts of one call, where the
 * buffers sit for in-place calls, the bus bandwidth factor, how to run the call
 * through coll.h and how to check its result with bench_data. */
#ifndef BENCH_COLL_H
#define BENCH_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"

typedef enum bench_coll_id {
    BENCH_ALLREDUCE = 0,
    BENCH_ALLGATHER,
    BENCH_REDUCESCATTER,
    BENCH_BROADCAST,
    BENCH_REDUCE,
    BENCH_ALLTOALL,
    BENCH_SENDRECV,
    BENCH_BARRIER,
    BENCH_COLL_COUNT
} bench_coll_id;

/* One call's arguments; send/recv already point where the placement wants them. */
typedef struct bench_call {
    coll_comm *comm;
    int rank, nranks;
    void *send, *recv;
    size_t count; /* the count argument of the coll.h call */
    coll_dtype dtype;
    coll_op op; /* ignored by collectives without a reduction */
    int root;   /* ignored by collectives without a root */
} bench_call;

struct bench_data_key;

typedef struct bench_coll {
    const char *name;
    bench_coll_id id;
    const char *help; /* one line for `collbench help` */
    int has_op, has_root;
    int has_inplace; /* 0: only out-of-place makes sense */
    int moves_data;  /* 0 for barrier: no sizes, no buffers */
    /* Buffers hold count * nranks elements on this side (else count). */
    int send_per_rank, recv_per_rank;
    /* The count argument is bytes / (nranks * dtype size), rounded down. */
    int count_per_rank;
    /* busbw = algbw * bus_factor(nranks) */
    double (*bus_factor)(int nranks);
    int (*run)(const bench_call *c);
    /* Wrong elements in c->recv for inputs made by bench_data_fill with key;
     * NULL when there is nothing to check (barrier: #wrong N/A, CSV -1). */
    uint64_t (*check)(const bench_call *c, const struct bench_data_key *key);
} bench_coll;

/* NULL when name is not a collective. */
const bench_coll *bench_coll_find(const char *name);
const bench_coll *bench_coll_get(bench_coll_id id);

/* Count argument of a call for `bytes` asked for (rounded down like nccl-tests). */
size_t bench_coll_call_count(const bench_coll *c, uint64_t bytes, size_t dtype_size, int nranks);
/* Bytes the call really moves (what the table and CSV report). */
uint64_t bench_coll_bytes(const bench_coll *c, size_t call_count, size_t dtype_size, int nranks);
/* Elements of the send and receive buffers of a call. */
size_t bench_coll_send_elems(const bench_coll *c, size_t call_count, int nranks);
size_t bench_coll_recv_elems(const bench_coll *c, size_t call_count, int nranks);

/* Point c->send and c->recv into the caller's buffers for one placement.
 * Out-of-place: send and recv are separate. In-place: everything lives in the
 * larger of the two (recv for allgather, send for reducescatter, else recv),
 * with the other pointer at the offset coll.h defines. */
void bench_coll_place(const bench_coll *coll, bench_call *c, void *sendbuf, void *recvbuf,
                      int in_place);

#endif
