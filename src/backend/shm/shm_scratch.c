/* What shm allocates beyond a run's buffers, for the launcher's memory check
 * (coll_backend_scratch_bytes): the private engine's scratch, by the plan's
 * own rule (coll__shm_private_window) and size (coll__shm_private_scratch). */
#include "backend/shm/shm_backend.h"
#include "backend/shm/shm_oversub.h"
#include "backend/shm/shm_plan.h"

#include "coll.h"

size_t coll__shm_scratch_bound(const shm_knobs *k, int n, const uint64_t *bytes, size_t nbytes)
{
    size_t most = 0;
    if (k->heap_bytes == 0 || n < 2) return 0; /* no heaps, no private engine */
    /* the widest window: 4 KiB pages, in the place whose window ends later */
    size_t widest = k->priv_plain_max > k->priv_plain_out_max ? k->priv_plain_max
                                                              : k->priv_plain_out_max;
    for (size_t i = 0; i < nbytes; i++) {
        if (bytes[i] == 0 || bytes[i] > SIZE_MAX / 4) continue;
        size_t b = (size_t)bytes[i];
        if (!coll__shm_private_window(k, b, widest) && !coll__shm_core_window(k, b, 1, 1) &&
            !coll__shm_core_window(k, b, 0, 0))
            continue;
        size_t s = coll__shm_private_scratch(b);
        /* a heap without room for it: the plan falls back, nothing is taken */
        if (s <= k->heap_bytes && s > most) most = s;
    }
    return most;
}

size_t coll__shm_scratch_bytes(coll__kind kind, const uint64_t *bytes, size_t nbytes, int nranks)
{
    if (kind != COLL_KIND_ALLREDUCE) return 0; /* the one collective with a private engine */
    shm_knobs k;
    coll__err err;
    coll__err_init(&err, NULL, 0);
    /* a bad variable is the tuning check's to report; the ranks would refuse it */
    if (coll__shm_knobs_setup(&k, nranks, coll__shm_oversub_mine(nranks), &err)) return 0;
    return coll__shm_scratch_bound(&k, nranks, bytes, nbytes);
}
