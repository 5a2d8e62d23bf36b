/* The shm backend's knobs from core/tuning.c's table, read in one place. */
#include "backend/shm/shm_plan.h"

#include "coll.h"
#include "core/tuning.h"

/* Each knob: its variable and where it goes. */
#define KNOB(name, field)                                                 \
    {                                                                     \
        name, offsetof(shm_knobs, field), sizeof(((shm_knobs *)0)->field) \
    }
static const struct {
    const char *name;
    size_t at, size;
} knobs[] = {
    KNOB("COLL_SHM_SLOT_BYTES", slot_bytes),
    KNOB("COLL_SHM_MBOX_BYTES", mbox_bytes),
    KNOB("COLL_SHM_CHUNK_BYTES", chunk_bytes),
    KNOB("COLL_SHM_CMA_MIN", cma_min),
    KNOB("COLL_SHM_CMA_ALLREDUCE_MIN", cma_allreduce_min),
    KNOB("COLL_SHM_CMA_WHOLE_MIN", cma_whole_min),
    KNOB("COLL_SHM_CMA_WHOLE_MAX", cma_whole_max),
    KNOB("COLL_SHM_DIRECT_MIN", direct_min),
    KNOB("COLL_SHM_STREAM_MIN", stream_min),
    KNOB("COLL_SHM_TOUCH_MAX", touch_max),
    KNOB("COLL_SHM_HEAP_BYTES", heap_bytes),
    KNOB("COLL_SHM_PRIV_MIN", priv_min),
    KNOB("COLL_SHM_PRIV_MAX", priv_max),
    KNOB("COLL_SHM_PRIV_PLAIN_MAX", priv_plain_max),
    KNOB("COLL_SHM_SPIN_US", spin_us),
    KNOB("COLL_SHM_CMA", cma),
};

/* The table's ranges keep every value within its field (an int's are below
 * INT_MAX), so the stores below never wrap. */
static void store(shm_knobs *k, size_t i, uint64_t v)
{
    char *at = (char *)k + knobs[i].at;
    if (knobs[i].size == sizeof(int)) *(int *)(void *)at = (int)v;
    else *(size_t *)(void *)at = (size_t)v;
}

static int read_all(shm_knobs *k, int n, int oversub, int env, coll__err *err)
{
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        const coll__tunable *t = coll__tunable_find(knobs[i].name);
        uint64_t v = t ? coll__tunable_default(t, n, oversub) : 0;
        if (env) {
            int rc = coll__tunable_read(knobs[i].name, n, oversub, &v, err);
            if (rc) return rc;
        }
        store(k, i, v);
    }
    return COLL_OK;
}

int coll__shm_knobs_read(shm_knobs *k, int n, int oversub, coll__err *err)
{
    return read_all(k, n, oversub, 1, err);
}

void coll__shm_knobs_default(shm_knobs *k, int n, int oversub)
{
    (void)read_all(k, n, oversub, 0, NULL);
}

void coll__shm_knobs_cap_scratch(shm_knobs *k, int n, uint64_t host_ram, int set_by_user)
{
    if (set_by_user || host_ram == 0 || n < 1) return;
    /* n scratch areas of 2 x priv_plain_max within host_ram / 4 */
    uint64_t cap = host_ram / 8 / (uint64_t)n;
    if (cap < k->priv_plain_max) k->priv_plain_max = (size_t)cap;
}
