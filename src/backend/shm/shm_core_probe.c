/* The probes of the ways a core per rank has: see shm_core_probe.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend/shm/shm_core_probe.h"

#include "backend/shm/shm_page_kind.h"

#include "core/alloc.h"
#include "core/clock.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MARGIN 0.95 /* a way must save a twentieth of the default's time */

/* A block's calls run back to back: a rank's time for them holds little of
 * its peers' arrival, which one call's time would be mostly. 14 to 302
 * calls: a few milliseconds each, about 100 at 16 MiB, where staging's calls
 * take 3x the slices' (shm.c says when they run). */
#define WAYS(a, b) .way_a = SHM_WAY_##a, .way_b = SHM_WAY_##b
const shm_probe_plan coll__shm_probe_window = {
    .bytes = 512u << 10, WAYS(PRIVATE, CMA), .rounds = 6, .calls = 4, .margin = MARGIN};
/* The band above the window at 16 MiB in place: at 4 MiB staging and the
 * slices were level in a VM's fast state (0.95-1.02x, the verdict a coin's)
 * where at 10-64 MiB staging took 0.6-0.8x the slices' time. In place,
 * because calls out of place there have a window of their own, asked after
 * (out of place: the slow state's answer differs most there), and in that
 * state staging out of place came close to the slices at 16 MiB where in
 * place at 100 MiB it took 1.6x their time. */
const shm_probe_plan coll__shm_probe_above = {
    .bytes = 16u << 20, WAYS(STAGE, CMA), .rounds = 3, .calls = 2, .margin = MARGIN};
const shm_probe_plan coll__shm_probe_huge = {
    .bytes = 1u << 20, WAYS(STAGE, CMA), .rounds = 3, .calls = 2, .huge = 1, .margin = MARGIN};
const shm_probe_plan coll__shm_probe_huge_window = {
    .bytes = 64u << 10, WAYS(PRIVATE, CMA), .rounds = 6, .calls = 25, .huge = 1, .margin = MARGIN};
/* Any lead decides here: back to back the slices' calls took 0.92-0.97x
 * the time one call takes alone (the best block against the p50), where
 * staging's took the same, so blocks understate staging's lead (per call
 * 0.86x the slices' time on a Zen 5 EPYC VM in its slow state). */
const shm_probe_plan coll__shm_probe_low = {
    .bytes = 64u << 10, WAYS(STAGE, CMA), .rounds = 6, .calls = 25, .margin = 1.0};
const shm_probe_plan coll__shm_probe_above_window = {.bytes = 16u << 20,
                                                     WAYS(PRIVATE, CMA),
                                                     .rounds = 3,
                                                     .calls = 2,
                                                     .margin = MARGIN,
                                                     .above = 1,
                                                     .out = 1};

/* More ranks than cores: the private engine's stores streamed past the
 * caches or kept there, at 1 MiB a rank, in place. With 4 ranks on a Zen 5
 * EPYC VM's 2 cores streaming took 0.68-0.83x the time in one of the VM's
 * two states and 2.5-3.6x in the other (256 KiB-1 MiB); from 4 MiB a rank
 * (16 MiB in all, the default bound) the two were level in both. */
const shm_probe_plan coll__shm_probe_stream = {
    .bytes = 1u << 20, WAYS(STREAM, PRIVATE), .rounds = 3, .calls = 4, .margin = MARGIN};

#define HUGE_PAGE ((size_t)2 << 20)

static int call(shm_state *st, shm_run_fn run, void *in, void *out, size_t count, coll_dtype dt,
                coll_op op, double deadline, coll__err *err)
{
    coll__call c = {.kind = COLL_KIND_ALLREDUCE,
                    .sendbuf = in,
                    .recvbuf = out,
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

/* The plan's knobs for way w (the bounds of the probe's page kind). On huge
 * pages the private engine's question comes after the slices' bound is
 * decided: its other way is what that bound says; so does the window
 * above's on 4 KiB pages. */
static void set_way(shm_state *st, int w, const shm_probe_plan *plan)
{
    if (plan->way_a == SHM_WAY_STREAM) {
        st->k.priv_stream_min = w == SHM_WAY_STREAM ? 0 : st->probe.priv_stream_min;
        return;
    }
    if (plan->above) { /* against what the band above's answer says */
        st->k.priv_core_above_max = w == SHM_WAY_PRIVATE ? st->probe.above_window_max : 0;
        return;
    }
    if (plan->huge && plan->way_a == SHM_WAY_PRIVATE) {
        st->k.priv_core_huge_max = w == SHM_WAY_PRIVATE ? st->probe.huge_window_max : 0;
        return;
    }
    if (plan->huge) {
        st->k.cma_huge_min = w == SHM_WAY_STAGE ? SIZE_MAX : st->probe.huge_min;
        return;
    }
    st->k.priv_core_max = w == SHM_WAY_PRIVATE ? st->probe.window_max : 0;
    /* shut: the window above is asked after the band above, and until then
     * would take both of that band's ways at 16 MiB */
    st->k.priv_core_above_max = 0;
    st->k.cma_allreduce_min = w == SHM_WAY_STAGE ? SIZE_MAX : st->probe.slices_min;
}

/* The probe's buffer: 4 KiB pages, the question's, also where THP is
 * "always"; or huge ones, asked for. Zeros: sums of zeros stay zeros. */
static float *probe_buffer(size_t bytes, int huge)
{
    size_t len = huge ? (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE : bytes;
    float *buf = huge ? coll__alloc_aligned_to(HUGE_PAGE, len) : coll__alloc_aligned(len);
    if (!buf) return NULL;
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    uintptr_t lo = ((uintptr_t)buf + 4095) / 4096 * 4096, hi = ((uintptr_t)buf + len) / 4096 * 4096;
    if (hi > lo) (void)madvise((void *)lo, hi - lo, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
    memset(buf, 0, bytes);
    return buf;
}

int coll__shm_probe(shm_state *st, shm_run_fn run, const shm_probe_plan *plan, double deadline,
                    shm_probe_result *r, coll__err *err)
{
    *r = (shm_probe_result){0};
    shm_knobs was = st->k;
    size_t count = plan->bytes / sizeof(float);
    float *buf = probe_buffer(plan->bytes, plan->huge);
    float *out = buf && plan->out ? probe_buffer(plan->bytes, plan->huge) : buf;
    if (!out) free(buf);
    if (!buf || !out) return coll__err_set(err, COLL_ENOMEM, "shm: out of memory");
    /* a call's time, in the best block of each way; 1 where this rank's
     * buffer is not in the pages the question is about */
    double best[3] = {0, 0, plan->huge && coll__pages_plain(&st->page_kind, buf, plan->bytes)};
    int rc = COLL_OK;
    for (int i = -2; rc == COLL_OK && i < 2 * plan->rounds; i++) {
        int b = i < 0 ? i + 2 : (i ^ (i >> 1)) & 1; /* 0 1, then 0 1 1 0 0 1 1 0 ... */
        int calls = i < 0 ? 1 : plan->calls;
        set_way(st, b ? plan->way_b : plan->way_a, plan);
        double t0 = coll__now_us();
        for (int c = 0; rc == COLL_OK && c < calls; c++)
            rc = call(st, run, buf, out, count, COLL_FLOAT32, COLL_SUM, deadline, err);
        double us = (coll__now_us() - t0) / calls;
        if (i >= 0 && (best[b] == 0 || us < best[b])) best[b] = us;
    }
    if (out != buf) free(out);
    free(buf);
    st->k = was;
    if (rc) return rc;
    /* The slowest rank's: every rank decides on the same numbers. */
    rc = call(st, run, best, best, 3, COLL_FLOAT64, COLL_MAX, deadline, err);
    if (rc) return rc;
    r->us_a = best[0];
    r->us_b = best[1];
    r->no_huge = best[2] > 0;
    r->a_wins = !r->no_huge && best[0] < plan->margin * best[1];
    return COLL_OK;
}
