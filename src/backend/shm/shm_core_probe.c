/* The probe of the window a core per rank has: see shm_core_probe.h. */
#include "backend/shm/shm_core_probe.h"

#include "core/alloc.h"
#include "core/clock.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A block's calls run back to back: a rank's time for them holds little of
 * its peers' arrival, which one call's time would be mostly. */
#define ROUNDS 6    /* of a block of each way, after one call of each */
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

/* The plan's knobs for way w. */
static void set_way(shm_knobs *k, int w, size_t open, size_t slices)
{
    k->priv_core_max = w == SHM_WAY_PRIVATE ? open : 0;
    k->cma_allreduce_min = w == SHM_WAY_STAGE ? SIZE_MAX : slices;
}

int coll__shm_core_probe(shm_state *st, shm_run_fn run, double deadline, shm_core_probe *p,
                         coll__err *err)
{
    *p = (shm_core_probe){0};
    size_t open = st->k.priv_core_max, slices = st->k.cma_allreduce_min;
    size_t count = SHM_CORE_PROBE_BYTES / sizeof(float);
    float *buf = coll__alloc_aligned(SHM_CORE_PROBE_BYTES);
    if (!buf) return coll__err_set(err, COLL_ENOMEM, "shm: out of memory");
    memset(buf, 0, SHM_CORE_PROBE_BYTES); /* sums of zeros stay zeros */
    double best[SHM_WAYS] = {0};          /* a call's time, in the best block of each way */
    int rc = COLL_OK;
    /* one call of each way, then ROUNDS rounds of a block of each, the
     * order reversed every other round: 0 1 2 2 1 0 0 1 2 ... */
    for (int i = -SHM_WAYS; rc == COLL_OK && i < ROUNDS * SHM_WAYS; i++) {
        int j = i < 0 ? i + SHM_WAYS : i % SHM_WAYS;
        int way = i >= 0 && (i / SHM_WAYS) % 2 ? SHM_WAYS - 1 - j : j;
        int calls = i < 0 ? 1 : CALLS;
        set_way(&st->k, way, open, slices);
        double t0 = coll__now_us();
        for (int c = 0; rc == COLL_OK && c < calls; c++)
            rc = call(st, run, buf, count, COLL_FLOAT32, COLL_SUM, deadline, err);
        double us = (coll__now_us() - t0) / calls;
        if (i >= 0 && (best[way] == 0 || us < best[way])) best[way] = us;
    }
    free(buf);
    set_way(&st->k, SHM_WAY_CMA, open, slices);
    if (rc) return rc;
    /* The slowest rank's: every rank decides on the same numbers. */
    rc = call(st, run, best, SHM_WAYS, COLL_FLOAT64, COLL_MAX, deadline, err);
    if (rc) return rc;
    for (int w = 0; w < SHM_WAYS; w++) p->us[w] = best[w];
    p->private_wins = best[SHM_WAY_PRIVATE] < MARGIN * best[SHM_WAY_CMA];
    p->stage_wins = best[SHM_WAY_STAGE] < MARGIN * best[SHM_WAY_CMA];
    return COLL_OK;
}
