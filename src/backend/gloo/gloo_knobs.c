/* The gloo backend's tuning variables: see gloo_backend.h. */
#include "backend/gloo/gloo_backend.h"

static const coll__tunable rows[] = {
    [COLL__GLOO_KNOB_CHECK] = COLL__TUNABLE("COLL_GLOO_CHECK", FLAG, 1, ALWAYS, 0, 1,
                                            "0: gloo runs collectives without comparing every "
                                            "rank's arguments first"),
};

const coll__tunable_table coll__gloo_tunables = {rows, sizeof rows / sizeof rows[0]};
