/* The tcp backend's algorithm crossovers: see tcp_algo_knobs.h. */
#include "backend/tcp/tcp_algo_knobs.h"

#define NEVER (1024 * COLL__GIB) /* "1024G": the smaller messages' algorithm at every size */

static const coll__tunable rows[] = {
    [COLL__CROSS_PAIR_RING] = COLL__TUNABLE("COLL_TCP_PAIR_RING_MIN", BYTES,
                                            COLL__CROSS_PAIR_RING_DEFAULT, ALWAYS, 0, NEVER,
                                            "tcp all-reduce of 2 ranks: one exchange below, the "
                                            "pipelined pair from this size"),
    [COLL__CROSS_ALLREDUCE_RHD] = COLL__TUNABLE("COLL_TCP_ALLREDUCE_RHD_MIN", BYTES,
                                                COLL__CROSS_ALLREDUCE_RHD_DEFAULT, ALWAYS, 0, NEVER,
                                                "tcp all-reduce of 3+ ranks: recursive doubling "
                                                "below, Rabenseifner from this size"),
    [COLL__CROSS_ALLREDUCE_RING] = COLL__TUNABLE("COLL_TCP_ALLREDUCE_RING_MIN", BYTES,
                                                 COLL__CROSS_ALLREDUCE_RING_DEFAULT, ALWAYS, 0,
                                                 NEVER,
                                                 "tcp all-reduce of 3+ ranks: Rabenseifner below, "
                                                 "the ring from this size"),
    [COLL__CROSS_ALLGATHER_RING] = COLL__TUNABLE("COLL_TCP_ALLGATHER_RING_MIN", BYTES,
                                                 COLL__CROSS_ALLGATHER_RING_DEFAULT, ALWAYS, 0,
                                                 NEVER,
                                                 "tcp all-gather of a power-of-two world: "
                                                 "recursive doubling below, the ring from this "
                                                 "size (bytes of all ranks)"),
    [COLL__CROSS_BROADCAST_RING] = COLL__TUNABLE("COLL_TCP_BROADCAST_RING_MIN", BYTES,
                                                 COLL__CROSS_BROADCAST_RING_DEFAULT, ALWAYS, 0,
                                                 NEVER,
                                                 "tcp broadcast: binomial tree below, the "
                                                 "pipelined chain from this size"),
};
_Static_assert(sizeof rows / sizeof rows[0] == COLL__CROSS_COUNT, "a row per crossover");

const coll__tunable_table coll__tcp_algo_tunables = {rows, sizeof rows / sizeof rows[0]};

int coll__tcp_algo_limits(int ranks, coll__algo_limits *out, coll__err *err)
{
    for (int i = 0; i < COLL__CROSS_COUNT; i++) {
        uint64_t v;
        int rc = coll__tunable_read(&rows[i], ranks, 0, &v, err);
        if (rc) return rc;
        out->from[i] = (size_t)v;
    }
    return COLL_OK;
}
