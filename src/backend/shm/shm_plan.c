/* The shm engine plan: see shm_plan.h. The thresholds are the knobs
 * (shm_knobs.c); why they sit where they do:
 *  - CMA slices for all-reduce (cma_allreduce_min, 64 KiB): with 2 ranks (a
 *    core each) they beat staging from 64 KiB a rank (64 KiB 4.5-4.8 vs
 *    5.8-6.5 us, 96 KiB 5.6-5.9 vs 8.4-8.9, p50, 3 interleaved runs), level
 *    at 48 KiB, slower at 32 KiB.
 *  - CMA whole inputs (cma_whole_min..max, 32..256 KiB at 2 ranks, out of
 *    place): beat staging from 32 KiB (0.67-0.85x the time, level or faster
 *    at 24) and the slices up to 192 KiB (0.72x at 64 KiB), level from 256
 *    KiB to 1 MiB (p50, interleaved runs, bound ranks). Unmeasured with more
 *    ranks, which read (n-1) S a rank instead of the slices' 2 (n-1)/n S: no
 *    window by default. In place a rank's writes would have to wait for its
 *    peers' reads, and those would cross cores from dirty lines (3-4.5x
 *    slower than the slices, measured).
 *  - The private engine (priv_min..max): with more ranks than cores it beats
 *    staging from 4 KiB to 128 KiB a rank (1.7-2.6x, p50, bound ranks) and
 *    CMA from 256 KiB to 512 KiB (1.3-1.8x); at 1 MiB on huge pages CMA is
 *    faster (0.4-0.7x the private engine's time). With a core per rank
 *    staging and CMA are as fast or faster, so the window is empty
 *    (docs/PERFORMANCE.md, "shm on private buffers").
 *  - Past priv_max up to priv_plain_max (in place) or priv_plain_out_max
 *    (out of place), when every rank's buffers are in 4 KiB pages
 *    (backend/shm/shm_page_kind.h): CMA pins each page it copies, 0.23-0.51
 *    us a page on the EPYC of issue 45 against 0.05-0.14 on huge pages
 *    (bench/floor.c), and with more ranks than cores the private engine's
 *    plain copies beat it at every size measured there, 1 to 256 MiB
 *    (0.46-0.82x the time, bench/ab.sh), while on huge pages CMA stays 2-3x
 *    faster. On a Xeon CMA won in place (0.66-0.80x at 4 ranks, 1-100 MiB)
 *    and lost out of place, so the two places have their own end, and
 *    `collbench tune` measures each. With a core per rank the two were level
 *    on 4 KiB pages from 10 MiB and traded places with the machine's state
 *    below it, so CMA keeps them ("against the machine's floor").
 *  - CMA on huge pages (cma_huge_min, 0: as on 4 KiB pages): pinning a huge
 *    page costs 0.05-0.14 us here, but on an AMD EPYC VM process_vm_readv on
 *    huge pages ran 2x slower than staging at 1-10 MiB (COLL_SHM_CMA=0: 443 ->
 *    212 us at 1 MiB, 2 ranks; issue 53), so `collbench tune` measures where
 *    CMA starts to pay on them.
 * A reduce-scatter + all-gather composition is what the CMA slices are (each
 * rank reduces its slice, then writes it into every output), fused so that a
 * finished chunk goes out while it is in the cache. */
#include "backend/shm/shm_plan.h"

#include <stdint.h>

/* Collectives with an engine in shm_cma_coll.c. */
static int has_cma_engine(coll__kind kind)
{
    switch (kind) {
    case COLL_KIND_ALLREDUCE:
    case COLL_KIND_REDUCE:
    case COLL_KIND_REDUCESCATTER:
    case COLL_KIND_ALLGATHER:
    case COLL_KIND_BROADCAST:
    case COLL_KIND_ALLTOALL: return 1;
    default: return 0;
    }
}

/* Per-rank bytes from which all-reduce leaves staging for CMA: the whole-input
 * window may start below the slices' bound. */
static size_t allreduce_cma_min(const shm_knobs *k)
{
    if (k->cma_whole_min < k->cma_whole_max && k->cma_whole_min < k->cma_allreduce_min)
        return k->cma_whole_min;
    return k->cma_allreduce_min;
}

/* All-reduce on buffers some rank holds in private memory, after the arrival. */
static shm_engine allreduce_cma(const shm_plan_in *in, const shm_knobs *k)
{
    size_t b = in->bytes;
    /* Reading whole inputs needs a chunk buffer for the other inputs beyond 2 ranks. */
    int whole = b >= k->cma_whole_min && b < k->cma_whole_max &&
                (in->n == 2 || b * (size_t)in->n <= k->chunk_bytes);
    if (whole && !in->any_in_place) return SHM_ENGINE_CMA_WHOLE;
    if (b < k->cma_allreduce_min) return SHM_ENGINE_STAGE; /* the window's in-place calls */
    return SHM_ENGINE_CMA;
}

size_t coll__shm_plain_max(const shm_knobs *k, int in, int out)
{
    size_t m = SIZE_MAX;
    if (in && k->priv_plain_max < m) m = k->priv_plain_max;
    if (out && k->priv_plain_out_max < m) m = k->priv_plain_out_max;
    return m == SIZE_MAX ? 0 : m;
}

/* [priv_min, priv_max), and past priv_max up to plain_max on buffers in
 * 4 KiB pages, where CMA pays for pinning every page. */
int coll__shm_private_window(const shm_knobs *k, size_t bytes, size_t plain_max)
{
    return bytes >= k->direct_min && bytes >= k->priv_min &&
           (bytes < k->priv_max || bytes < plain_max);
}

/* Streaming stores skip reading the lines they fill. In place there is no
 * such read to skip (a chunk's output lines are its input lines, just read),
 * and streaming them out of the cache ran 1.5-3.1x slower (10-256 MiB, 2 and
 * 4 ranks, coll buffers, Intel Xeon), where out of place, and into the
 * private engine's scratch, streaming ran 1.14-1.40x faster (PERFORMANCE.md,
 * "Streaming stores in place"). */
int coll__shm_streams(const shm_knobs *k, size_t all_bytes, int in_place)
{
    return !in_place && all_bytes >= k->stream_min;
}

size_t coll__shm_private_scratch(size_t bytes)
{
    size_t half = (bytes + SHM_SCRATCH_ROUND - 1) / SHM_SCRATCH_ROUND * SHM_SCRATCH_ROUND;
    return 2 * half;
}

static shm_engine allreduce(const shm_plan_in *in, const shm_knobs *k)
{
    size_t b = in->bytes;
    int direct = in->heaps && b >= k->direct_min;
    /* plain and place: every rank's buffers after the arrival, this rank's before it */
    int plain = in->arrived ? in->all_plain : in->mine_plain;
    int some_in = in->arrived ? in->any_in_place : in->mine_in_place;
    int some_out = in->arrived ? !in->all_in_place : !in->mine_in_place;
    size_t plain_max = plain ? coll__shm_plain_max(k, some_in, some_out) : 0;
    int priv = in->heaps && coll__shm_private_window(k, b, plain_max);
    int cma = in->cma && in->n > 1 && b >= allreduce_cma_min(k);
    /* Huge pages below cma_huge_min stage instead: known after the arrival
     * (every rank's pages), when staging may still follow it. */
    if (in->arrived && !in->all_plain && b < k->cma_huge_min) cma = 0;
    if (!in->arrived) {
        /* The input goes to the scratch before the arrival, so that the
         * arrival is also the step that says every input is in place. */
        if (direct) return priv && !in->mine_in_heap ? SHM_ENGINE_ARRIVE_COPY : SHM_ENGINE_ARRIVE;
        return cma ? SHM_ENGINE_ARRIVE : SHM_ENGINE_STAGE;
    }
    if (direct && in->all_in_heap) return SHM_ENGINE_DIRECT;
    if (priv && !in->no_scratch) return SHM_ENGINE_PRIVATE;
    return cma ? allreduce_cma(in, k) : SHM_ENGINE_STAGE;
}

shm_engine coll__shm_plan(const shm_plan_in *in, const shm_knobs *k)
{
    if (in->kind == COLL_KIND_P2P) return SHM_ENGINE_P2P;
    if (in->bytes == 0) return SHM_ENGINE_STAGE;
    if (in->kind == COLL_KIND_ALLREDUCE) return allreduce(in, k);
    if (in->cma && in->n > 1 && in->bytes >= k->cma_min && has_cma_engine(in->kind))
        return SHM_ENGINE_CMA;
    return SHM_ENGINE_STAGE;
}

const char *coll__shm_engine_name(shm_engine e)
{
    switch (e) {
    case SHM_ENGINE_STAGE: return "stage";
    case SHM_ENGINE_P2P: return "p2p";
    case SHM_ENGINE_CMA: return "cma";
    case SHM_ENGINE_CMA_WHOLE: return "cma-whole";
    case SHM_ENGINE_DIRECT: return "direct";
    case SHM_ENGINE_PRIVATE: return "private";
    case SHM_ENGINE_ARRIVE: return "arrive";
    case SHM_ENGINE_ARRIVE_COPY: return "arrive-copy";
    }
    return "?";
}
