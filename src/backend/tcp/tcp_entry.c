/* The tcp backend in the table of backends (backends.h): always here; its
 * tuning variable is the tcp transport's socket buffer. */
#include "backend/backends.h"
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
    .knobs = &coll__tcp_tunables,
};
