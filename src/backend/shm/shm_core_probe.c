/* The probe of the window a core per rank has: see shm_core_probe.h. */
#include "backend/shm/shm_core_probe.h"

#include "core/alloc.h"
#include "core/clock.h"

#include <stdlib.h>
#include <string.h>

/* A block's calls run back to back: a rank's time for them holds little of
 * its peers' arrival, which one call's time would be mostly. */
#define BLOCKS 6    /* of each way, alternated A B B A A B ..., after one call each */
#define CALLS 4     /* in a block */
#define MARGIN 0.95 /* copies must save a twentieth */

static int call(shm_state *st, shm_run_fn run, void *buf, size_t count, coll_dtype dt, coll_op op,
                double deadline, coll__err *err)
{
    coll__call c = {.kind = COLL_KIND_ALLREDUCE,
                    .sendbuf = buf,
                    .recvbuf = buf,
                    .count = count,
                    .dt = dt,
                    .op = op,
                    .dest = -1,
                    .source = -1};
    coll__sig sig = {.kind = COLL_KIND_ALLREDUCE,
                     .dtype = (uint8_t)dt,
                     .op = (uint8_t)op,
                     .root = -1,
                     .count = count};
    return run(st, &c, &sig, deadline, err);
}

int coll__shm_core_probe(shm_state *st, shm_run_fn run, double deadline, shm_core_probe *p,
                         coll__err *err)
{
    *p = (shm_core_probe){0};
    size_t open = st->k.priv_core_max, count = SHM_CORE_PROBE_BYTES / sizeof(float);
    float *buf = coll__alloc_aligned(SHM_CORE_PROBE_BYTES);
    if (!buf) return coll__err_set(err, COLL_ENOMEM, "shm: out of memory");
    memset(buf, 0, SHM_CORE_PROBE_BYTES); /* sums of zeros stay zeros */
    double best[2] = {0, 0};              /* open, shut: a call's, in the best block */
    int rc = COLL_OK;
    for (int i = -2; rc == COLL_OK && i < 2 * BLOCKS; i++) {
        int way = i < 0 ? i + 2 : (i ^ (i >> 1)) & 1; /* 0 1, then 0 1 1 0 0 1 1 0 ... */
        int calls = i < 0 ? 1 : CALLS;
        st->k.priv_core_max = way ? 0 : open;
        double t0 = coll__now_us();
        for (int j = 0; rc == COLL_OK && j < calls; j++)
            rc = call(st, run, buf, count, COLL_FLOAT32, COLL_SUM, deadline, err);
        double us = (coll__now_us() - t0) / calls;
        if (i >= 0 && (best[way] == 0 || us < best[way])) best[way] = us;
    }
    free(buf);
    if (rc) return rc;
    /* The slowest rank's: every rank decides on the same numbers. */
    rc = call(st, run, best, 2, COLL_FLOAT64, COLL_MAX, deadline, err);
    if (rc) return rc;
    p->copies_us = best[0];
    p->cma_us = best[1];
    p->copies_win = best[0] < MARGIN * best[1];
    st->k.priv_core_max = p->copies_win ? open : 0;
    return COLL_OK;
}
