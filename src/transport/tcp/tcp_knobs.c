/* The tcp transport's tuning variables: see tcp_knobs.h. */
#include "transport/tcp/tcp_knobs.h"

static const coll__tunable rows[] = {
    [TCP_KNOB_SOCKBUF] = COLL__TUNABLE("COLL_TCP_SOCKBUF", BYTES, 0, ALWAYS, 0, COLL__GIB,
                                       "tcp socket buffer bytes (0: the kernel's autotuning)"),
    [TCP_KNOB_SPIN_CROWDED_US] = COLL__TUNABLE("COLL_TCP_SPIN_CROWDED_US", COUNT, 0, ALWAYS, 0,
                                               1000000,
                                               "the same with more ranks on the host than cores "
                                               "(0: they sleep at once)"),
    [TCP_KNOB_CHUNK] = COLL__TUNABLE("COLL_TCP_CHUNK_BYTES", BYTES, COLL__MIB, ALWAYS, 4096,
                                     COLL__GIB,
                                     "tcp pipelining chunk of the algorithms (scratch grows with "
                                     "it)"),
    [TCP_KNOB_SPIN_US] = COLL__TUNABLE("COLL_TCP_SPIN_US", COUNT, 50, ALWAYS, 0, 1000000,
                                       "microseconds a tcp wait polls its sockets before it "
                                       "sleeps, yielding the CPU at each miss (with more ranks "
                                       "on the host than cores: COLL_TCP_SPIN_CROWDED_US)"),
};

const coll__tunable_table coll__tcp_tunables = {rows, sizeof rows / sizeof rows[0]};
