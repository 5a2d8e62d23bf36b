/* The tcp transport's tuning variables: see tcp_knobs.h. */
#include "transport/tcp/tcp_knobs.h"

static const coll__tunable rows[] = {
    [TCP_KNOB_SOCKBUF] = COLL__TUNABLE("COLL_TCP_SOCKBUF", BYTES, 0, ALWAYS, 0, COLL__GIB,
                                       "tcp socket buffer bytes (0: the kernel's autotuning)"),
};

const coll__tunable_table coll__tcp_tunables = {rows, sizeof rows / sizeof rows[0]};
