/* The auto backend's tuning variables: see auto.h. */
#include "backend/auto/auto.h"

#include <limits.h>
#include <stdint.h>

static const coll__tunable rows[] = {
    [AUTO_KNOB_RANKS_PER_HOST] = COLL__TUNABLE("COLL_AUTO_RANKS_PER_HOST", COUNT, 0, ALWAYS, 0,
                                               INT_MAX,
                                               "auto: emulate hosts of this many ranks each (0: "
                                               "the real hosts)"),
    [AUTO_KNOB_HIER] = COLL__TUNABLE("COLL_AUTO_HIER", FLAG, 1, ALWAYS, 0, 1,
                                     "0: auto runs flat, not hierarchical, across hosts"),
    [AUTO_KNOB_PIPE_BYTES] = COLL__TUNABLE("COLL_AUTO_PIPE_BYTES", BYTES, 4 * COLL__MIB, ALWAYS, 0,
                                           UINT64_MAX >> 1,
                                           "auto: pipeline chunk of hierarchical collectives (0: "
                                           "not pipelined)"),
};

const coll__tunable_table coll__auto_tunables = {rows, sizeof rows / sizeof rows[0]};
