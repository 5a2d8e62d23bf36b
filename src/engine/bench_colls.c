/* One struct per collective: counts, buffers, bus bandwidth factor, the coll.h
 * call and the check of its result. Checks read c->recv and know which rank's
 * inputs (bench_data_fill of c->send) should have landed where. */
#include "engine/bench_coll.h"

#include <string.h>

#include "engine/bench_data.h"

static double factor_one(int n)
{
    (void)n;
    return 1.0;
}
static double factor_zero(int n)
{
    (void)n;
    return 0.0;
}
static double factor_allreduce(int n) { return n > 0 ? 2.0 * (n - 1) / n : 0; }
static double factor_gather(int n) { return n > 0 ? (double)(n - 1) / n : 0; }

static char *elem_ptr(void *buf, size_t index, coll_dtype dt)
{
    return (char *)buf + index * coll_dtype_size(dt);
}

/* ---- run ---- */

static int run_allreduce(const bench_call *c)
{
    return coll_allreduce(c->comm, c->send, c->recv, c->count, c->dtype, c->op);
}
static int run_allgather(const bench_call *c)
{
    return coll_allgather(c->comm, c->send, c->recv, c->count, c->dtype);
}
static int run_reducescatter(const bench_call *c)
{
    return coll_reducescatter(c->comm, c->send, c->recv, c->count, c->dtype, c->op);
}
static int run_broadcast(const bench_call *c)
{
    return coll_broadcast(c->comm, c->send, c->recv, c->count, c->dtype, c->root);
}
static int run_reduce(const bench_call *c)
{
    return coll_reduce(c->comm, c->send, c->recv, c->count, c->dtype, c->op, c->root);
}
static int run_alltoall(const bench_call *c)
{
    return coll_alltoall(c->comm, c->send, c->recv, c->count, c->dtype);
}
/* A ring, like nccl-tests' sendrecv: send to the next rank, receive from the previous. */
static int run_sendrecv(const bench_call *c)
{
    int next = (c->rank + 1) % c->nranks, prev = (c->rank + c->nranks - 1) % c->nranks;
    return coll_sendrecv(c->comm, c->send, c->count, next, c->recv, c->count, prev, c->dtype);
}
static int run_barrier(const bench_call *c) { return coll_barrier(c->comm); }

/* ---- check ---- */

static uint64_t check_allreduce(const bench_call *c, const bench_data_key *k)
{
    return bench_data_check_reduced(k, 0, c->recv, c->count);
}
static uint64_t check_allgather(const bench_call *c, const bench_data_key *k)
{
    uint64_t wrong = 0;
    for (int q = 0; q < c->nranks; q++)
        wrong += bench_data_check_copy(k, q, 0, elem_ptr(c->recv, q * c->count, c->dtype),
                                       c->count);
    return wrong;
}
/* Rank r gets block r of the reduced send buffers. */
static uint64_t check_reducescatter(const bench_call *c, const bench_data_key *k)
{
    return bench_data_check_reduced(k, (uint64_t)c->rank * c->count, c->recv, c->count);
}
static uint64_t check_broadcast(const bench_call *c, const bench_data_key *k)
{
    return bench_data_check_copy(k, c->root, 0, c->recv, c->count);
}
static uint64_t check_reduce(const bench_call *c, const bench_data_key *k)
{
    if (c->rank != c->root) return 0; /* only the root's buffer is defined */
    return bench_data_check_reduced(k, 0, c->recv, c->count);
}
/* Block q of rank r's receive buffer is block r of rank q's send buffer. */
static uint64_t check_alltoall(const bench_call *c, const bench_data_key *k)
{
    uint64_t wrong = 0;
    for (int q = 0; q < c->nranks; q++)
        wrong += bench_data_check_copy(k, q, (uint64_t)c->rank * c->count,
                                       elem_ptr(c->recv, q * c->count, c->dtype), c->count);
    return wrong;
}
static uint64_t check_sendrecv(const bench_call *c, const bench_data_key *k)
{
    int prev = (c->rank + c->nranks - 1) % c->nranks;
    return bench_data_check_copy(k, prev, 0, c->recv, c->count);
}

/* name id help op root inplace data send*n recv*n count/n factor run check */
static const bench_coll colls[BENCH_COLL_COUNT] = {
    {"allreduce", BENCH_ALLREDUCE, "every rank gets the reduction of all ranks' buffers", 1, 0, 1,
     1, 0, 0, 0, factor_allreduce, run_allreduce, check_allreduce},
    {"allgather", BENCH_ALLGATHER, "every rank gets every rank's block", 0, 0, 1, 1, 0, 1, 1,
     factor_gather, run_allgather, check_allgather},
    {"reducescatter", BENCH_REDUCESCATTER, "rank r gets block r of the reduction", 1, 0, 1, 1, 1, 0,
     1, factor_gather, run_reducescatter, check_reducescatter},
    {"broadcast", BENCH_BROADCAST, "the root's buffer goes to every rank", 0, 1, 1, 1, 0, 0, 0,
     factor_one, run_broadcast, check_broadcast},
    {"reduce", BENCH_REDUCE, "the root gets the reduction of all ranks' buffers", 1, 1, 1, 1, 0, 0,
     0, factor_one, run_reduce, check_reduce},
    {"alltoall", BENCH_ALLTOALL, "block j of rank i goes to block i of rank j", 0, 0, 0, 1, 1, 1, 1,
     factor_gather, run_alltoall, check_alltoall},
    {"sendrecv", BENCH_SENDRECV, "each rank sends to the next and receives from the previous", 0, 0,
     0, 1, 0, 0, 0, factor_one, run_sendrecv, check_sendrecv},
    {"barrier", BENCH_BARRIER, "every rank waits for all others", 0, 0, 0, 0, 0, 0, 0, factor_zero,
     run_barrier, NULL /* nothing to check: #wrong N/A */},
};

const bench_coll *bench_coll_get(bench_coll_id id)
{
    return (unsigned)id < BENCH_COLL_COUNT ? &colls[id] : NULL;
}

const bench_coll *bench_coll_find(const char *name)
{
    for (int i = 0; i < BENCH_COLL_COUNT; i++)
        if (name && strcmp(colls[i].name, name) == 0) return &colls[i];
    return NULL;
}

size_t bench_coll_call_count(const bench_coll *c, uint64_t bytes, size_t dtype_size, int nranks)
{
    if (!c->moves_data || dtype_size == 0) return 0;
    uint64_t div = (uint64_t)dtype_size * (c->count_per_rank ? (uint64_t)nranks : 1);
    return (size_t)(bytes / div);
}

uint64_t bench_coll_bytes(const bench_coll *c, size_t call_count, size_t dtype_size, int nranks)
{
    uint64_t mult = c->count_per_rank ? (uint64_t)nranks : 1;
    return c->moves_data ? (uint64_t)call_count * dtype_size * mult : 0;
}

size_t bench_coll_send_elems(const bench_coll *c, size_t call_count, int nranks)
{
    return c->send_per_rank ? call_count * (size_t)nranks : call_count;
}

size_t bench_coll_recv_elems(const bench_coll *c, size_t call_count, int nranks)
{
    return c->recv_per_rank ? call_count * (size_t)nranks : call_count;
}

void bench_coll_place(const bench_coll *coll, bench_call *c, void *sendbuf, void *recvbuf,
                      int in_place)
{
    c->send = sendbuf;
    c->recv = recvbuf;
    if (!in_place) return;
    if (coll->send_per_rank && !coll->recv_per_rank) { /* reducescatter */
        c->recv = elem_ptr(sendbuf, (size_t)c->rank * c->count, c->dtype);
    } else if (coll->recv_per_rank && !coll->send_per_rank) { /* allgather */
        c->send = elem_ptr(recvbuf, (size_t)c->rank * c->count, c->dtype);
    } else {
        c->send = recvbuf;
    }
}
