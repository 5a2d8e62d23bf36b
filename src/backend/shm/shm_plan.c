/* The shm engine plan: see shm_plan.h. The thresholds are the knobs
 * (shm_knobs.c); why they sit where they do:
 *  - CMA slices for all-reduce (cma_allreduce_min, 64 KiB): with 2 ranks (a
 *    core each) they beat staging from 64 KiB a rank (64 KiB 4.5-4.8 vs
 *    5.8-6.5 us, 96 KiB 5.6-5.9 vs 8.4-8.9, p50, 3 interleaved runs), level
 *    at 48 KiB, slower at 32 KiB. On a Zen 5 EPYC VM staging won at 64 KiB
 *    on 4 KiB pages (5.9 vs 7.1 us, 7.2 vs 8.5 in its slow state) and lost
 *    from 128 KiB, so a probe of that band may move the bound to 128 KiB
 *    (shm_core_probe.h).
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
 *    and lost out of place, and on an AVX2 Zen 3 EPYC VM it won in place
 *    from 32 MiB (0.77-1.03x at 32 MiB, 0.77-0.91x at 256) and lost out of
 *    place, so the two places have their own end, and `collbench tune`
 *    measures each (the size from which CMA runs). With a core per rank the two were level
 *    on 4 KiB pages from 10 MiB and traded places with the machine's state
 *    below it, so CMA keeps them by default ("against the machine's floor");
 *    on a Zen 5 EPYC VM the private engine took 0.54-0.89x CMA's time at 2
 *    ranks from 32 KiB to 4 MiB in one of the VM's two states and 1.7-2.6x
 *    in the other (1.2-1.8x at 10 MiB, 1.2x at 4 KiB, slower on huge pages:
 *    docs/PERFORMANCE.md), so that window (priv_core_min..max, 64 KiB to 4
 *    MiB: at 32 KiB staging is faster) opens only where a probe that runs
 *    the engines finds the private one faster, before the communicator's
 *    first all-reduce in it (shm_core_probe.h); another, before the first
 *    from its end, moves cma_allreduce_min to never where staging beats the
 *    slices.
 *  - CMA slices on huge pages (cma_huge_min, 64 KiB as on 4 KiB pages): pinning
 *    a huge page costs 0.05-0.14 us here, but on an AMD EPYC VM
 *    process_vm_readv on huge pages ran 2x slower than staging at 1-10 MiB
 *    (COLL_SHM_CMA=0: 443 -> 212 us at 1 MiB, 2 ranks; issue 53), and on a
 *    Zen 5 EPYC staging beat the slices on 4 KiB pages up to 1 MiB while CMA
 *    won on huge pages, so each page kind has its own bound and `collbench
 *    tune` measures each.
 *  - The window a core per rank has on huge pages (priv_core_min to
 *    priv_core_huge_max, 64 to 128 KiB): at 64 KiB, 2 ranks, in place, the
 *    private engine took 3.5 us against the slices' 4.45 on a Zen 5 EPYC VM
 *    in its fast state (the floor's copies through shared memory: 3.7), and
 *    lost from 128 KiB (6.7 against 5.7); in the VM's slow state it took
 *    11 us against 4-5.6, so this window too opens only where its own probe
 *    (on huge pages, 64 KiB) finds the private engine faster.
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

/* Per-rank bytes from which all-reduce's CMA slices run: on 4 KiB pages, or
 * where some rank holds huge pages. */
static size_t slices_min(const shm_knobs *k, int plain)
{
    return plain ? k->cma_allreduce_min : k->cma_huge_min;
}

/* Whether all-reduce of b bytes a rank may leave staging for CMA: from the
 * slices' bound, or inside the whole-input window. */
static int cma_open(const shm_knobs *k, size_t b, size_t slices)
{
    return b >= slices || (b >= k->cma_whole_min && b < k->cma_whole_max);
}

/* All-reduce on buffers some rank holds in private memory, after the arrival. */
static shm_engine allreduce_cma(const shm_plan_in *in, const shm_knobs *k)
{
    size_t b = in->bytes;
    /* Reading whole inputs needs a chunk buffer for the other inputs beyond 2 ranks. */
    int whole = b >= k->cma_whole_min && b < k->cma_whole_max &&
                (in->n == 2 || b * (size_t)in->n <= k->chunk_bytes);
    if (whole && !in->any_in_place) return SHM_ENGINE_CMA_WHOLE;
    if (b < slices_min(k, in->all_plain)) return SHM_ENGINE_STAGE; /* the window's in-place calls */
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

int coll__shm_core_window(const shm_knobs *k, size_t bytes, int plain, int out)
{
    size_t max = plain ? k->priv_core_max : k->priv_core_huge_max;
    if (bytes < k->direct_min) return 0;
    if (plain && out && bytes >= k->priv_core_above_min && bytes < k->priv_core_above_max) return 1;
    return bytes >= k->priv_core_min && bytes < max;
}

/* An all-reduce of a size that takes the slices where some rank's call is
 * nonblocking. A nonblocking call runs on the progress thread beside the
 * caller's own work (DDP's backward pass): the shared heap's engines hand
 * slots between the ranks in lock step, and each hand-over waits for a rank
 * the scheduler may have put behind that work, while the slices let each
 * rank read its peers at its own pace (2 ranks, 16 MiB, with a busy process
 * on each core: staging 28-32 ms, the slices 5-6; DDP's all-reduces on coll
 * took 2x with staging, docs/PERFORMANCE.md). Only a nonblocking rank posts
 * its page kind for it, so a call some rank makes blocking keeps the plan's
 * other engines on every rank. */
static int beside_size(const shm_plan_in *in, const shm_knobs *k)
{
    return in->kind == COLL_KIND_ALLREDUCE && in->cma && in->n > 1 &&
           in->bytes >= k->nonblocking_cma_min;
}

int coll__shm_asks_page_kind(const shm_plan_in *in, const shm_knobs *k)
{
    size_t b = in->bytes;
    if (in->kind != COLL_KIND_ALLREDUCE || in->mine_in_heap) return 0;
    if (in->mine_nonblocking && beside_size(in, k)) return 1; /* on 4 KiB pages only */
    /* the CMA slices' bound per page kind (in the whole-input window too:
     * a call some rank makes in place takes the slices or staging there) */
    if (in->cma && (b >= k->cma_allreduce_min) != (b >= k->cma_huge_min)) return 1;
    /* the private engine's windows on 4 KiB pages, and a core per rank's on huge ones */
    size_t plain_max = coll__shm_plain_max(k, in->mine_in_place, !in->mine_in_place);
    return in->heaps && ((b >= k->priv_max && b < plain_max) ||
                         coll__shm_core_window(k, b, 1, !in->mine_in_place) ||
                         coll__shm_core_window(k, b, 0, 0));
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

int coll__shm_private_streams(const shm_knobs *k, size_t all_bytes)
{
    return all_bytes >= k->priv_stream_min;
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
    int nonblocking = in->arrived ? in->any_nonblocking : in->mine_nonblocking;
    int beside = beside_size(in, k) && nonblocking && plain;
    int priv = in->heaps && !beside &&
               (coll__shm_private_window(k, b, plain_max) ||
                coll__shm_core_window(k, b, plain, !some_in));
    /* The page kinds' bounds: every rank's are known after the arrival, so
     * before it CMA stays open from the lower one (staging may still follow
     * the arrival; staging before it cannot lead to CMA). */
    size_t lower = k->cma_allreduce_min < k->cma_huge_min ? k->cma_allreduce_min : k->cma_huge_min;
    size_t slices = in->arrived ? slices_min(k, in->all_plain) : lower;
    int cma = in->cma && in->n > 1 && (beside || cma_open(k, b, slices));
    if (!in->arrived) {
        /* The input goes to the scratch before the arrival, so that the
         * arrival is also the step that says every input is in place. */
        if (direct) return priv && !in->mine_in_heap ? SHM_ENGINE_ARRIVE_COPY : SHM_ENGINE_ARRIVE;
        return cma ? SHM_ENGINE_ARRIVE : SHM_ENGINE_STAGE;
    }
    if (direct && in->all_in_heap) return SHM_ENGINE_DIRECT;
    if (beside) return SHM_ENGINE_CMA;
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
