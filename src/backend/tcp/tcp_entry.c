/* The tcp backend in the table of backends (backends.h): always here; its
 * tuning variables are the tcp transport's and its algorithms' crossovers. */
#include "backend/backends.h"
#include "backend/tcp/tcp_algo_knobs.h"
#include "backend/tcp/tcp_backend.h"
#include "transport/tcp/tcp_knobs.h"

static const coll__backend_ops *probe(char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    return &coll__backend_tcp;
}

const coll__backend_entry coll__tcp_entry = {
    .name = "tcp",
    .probe = probe,
    .flags = COLL__BACKEND_SWEEPS,
    .knobs = (const coll__tunable_table *const[]){&coll__tcp_tunables, &coll__tcp_algo_tunables,
                                                  NULL},
};
