/* The shm backend: processes of one host through one shared segment per
 * communicator (shm_segment.h), with shared-memory collectives (not
 * point-to-point algorithms over shared memory): small messages through
 * staging slots, all-reduce on coll_alloc'd buffers direct from the shared
 * heaps, all-reduce on private buffers of mid sizes through a copy-in scratch
 * in the shared heap, other large ones single-copy with process_vm_readv
 * (shm_op.h).
 *
 * Which engine runs a call: coll__shm_plan (shm_plan.c). Its knobs, the
 * COLL_SHM_* variables, are rows of shm_knobs.c's table (name, default,
 * range, meaning; `collbench info --tuning`), read once here. Every rank must
 * see the same values; a value that is not a number in range fails the set-up. */
#include "backend/shm/shm_backend.h"
#include "backend/shm/shm_op.h"
#include "backend/shm/shm_fused.h"
#include "algo/algo.h"
#include "bootstrap/rendezvous.h"
#include "backend/shm/shm_cma.h"
#include "backend/shm/shm_core_probe.h"
#include "backend/shm/shm_oversub.h"
#include "core/alloc.h"
#include "core/clock.h"
#include "core/env.h"
#include "core/fault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIB ((size_t)1024)

/* Can this rank read its right neighbour's private memory? */
/* World rank of this group's rank r, for messages. */
static int world(const shm_state *st, int r)
{
    if (!st->world_of) return r;
    return r >= 0 && r < st->nworld ? st->world_of[r] : -1;
}

static int probe_cma(shm_state *st, int wanted, char *why, size_t len)
{
    if (!wanted) {
        snprintf(why, len, "disabled by COLL_SHM_CMA=0");
        return 0;
    }
    if (st->n == 1) return 1;
    int peer = (st->rank + 1) % st->n;
    const shm_rank_ctrl *pc = &st->seg.ctrl[peer];
    uint64_t got = 0;
    int e = coll__shm_cma_read(pc->pid, &got, pc->probe_addr, sizeof got);
    if (e) {
        snprintf(why, len, "process_vm_readv from rank %d (pid %d) failed: %s%s", world(st, peer),
                 (int)pc->pid, strerror(-e),
                 e == -EPERM ? " (ptrace restrictions: see /proc/sys/kernel/yama/ptrace_scope)"
                             : "");
        return 0;
    }
    if (got != pc->probe_value) {
        snprintf(why, len, "process_vm_readv from rank %d read the wrong value", world(st, peer));
        return 0;
    }
    return 1;
}

/* The buffers of every rank's call and of each engine's state (shm_op.h),
 * sized for n ranks; 0 or COLL_ENOMEM (shm_fini frees what was allocated). */
static int alloc_state(shm_state *st)
{
    size_t n = (size_t)st->n;
    st->peer_send = calloc(n, sizeof *st->peer_send);
    st->peer_recv = calloc(n, sizeof *st->peer_recv);
    st->red_in = calloc(n, sizeof *st->red_in);
    /* Page-aligned: malloc puts a block this large 16 bytes into a page, and
     * with process_vm_readv copying into lines split so, CMA slices in place
     * on huge pages took 1.05-1.15x the time (2 and 4 ranks, 256 KiB-100
     * MiB, Zen 5; PERFORMANCE.md). */
    st->cma.tmp = coll__alloc_aligned_to(4096, st->k.chunk_bytes);
    st->cma.acc = coll__alloc_aligned_to(4096, st->k.chunk_bytes);
    st->direct.in_map = calloc(n, sizeof *st->direct.in_map);
    st->direct.out_map = calloc(n, sizeof *st->direct.out_map);
    st->direct.sub = coll__alloc_aligned_to(64, SHM_SUB_BYTES);
    st->pages.set = calloc(n * SHM_POP_SETS * SHM_POP_WAYS, sizeof *st->pages.set);
    st->fused.on = coll__shm_fused_available();
    st->fused.in = calloc(n, sizeof *st->fused.in);
    st->fused.out = calloc(n, sizeof *st->fused.out);
    st->claim.home_done = calloc(n, sizeof *st->claim.home_done);
    st->p2p.watch = calloc(n, 1);
    coll__page_probe_init(&st->page_kind);
    int ok = st->peer_send && st->peer_recv && st->red_in && st->cma.tmp && st->cma.acc &&
             st->direct.in_map && st->direct.out_map && st->direct.sub && st->pages.set &&
             st->fused.in && st->fused.out && st->claim.home_done && st->p2p.watch;
    return ok ? COLL_OK : COLL_ENOMEM;
}

static void shm_fini(void *state)
{
    shm_state *st = state;
    if (!st) return;
    coll__shm_liveness_close(&st->live);
    coll__shm_segment_unmap(&st->seg);
    /* The private engine's scratch is the backend's own block of the heap: a
     * block left allocated keeps the heap mapped for the user's buffers, and
     * its memory was lost with every communicator (about 2 x the largest
     * private call per rank: 0.9 GB a replay pass of a 4-rank DDP trace). */
    if (st->priv.scratch) coll__shm_heap_free(&st->heap, st->priv.scratch);
    coll__shm_heap_destroy(&st->heap);
    coll__page_probe_close(&st->page_kind);
    free(st->peer_send);
    free(st->peer_recv);
    free(st->red_in);
    free(st->cma.tmp);
    free(st->cma.acc);
    free(st->cma.wide);
    free(st->direct.in_map);
    free(st->direct.out_map);
    free(st->direct.sub);
    free(st->priv.mine);
    free(st->pages.set);
    free(st->fused.in);
    free(st->fused.out);
    free(st->claim.home_done);
    free(st->p2p.watch);
    free(st);
}

/* This rank's heap, described under the store for the peers ("none": without). */
static int heap_publish(shm_state *st, const coll__rendezvous *rv, size_t bytes)
{
    char key[160], desc[96] = "none";
    coll__err err;
    coll__err_init(&err, st->world_of, st->nworld);
    if (bytes && coll__shm_heap_create(&st->heap, st->n, st->rank, bytes, &err) == COLL_OK)
        coll__shm_heap_describe(&st->heap, desc, sizeof desc);
    else if (bytes && st->rank == 0)
        fprintf(stderr, "collbench shm: coll_alloc gives private memory (%s)\n", err.msg);
    int rc = coll__store_key(key, sizeof key, NULL, rv->prefix, "shm/heap/%d", st->rank);
    if (!rc) rc = coll__store_set(rv->store, key, desc, strlen(desc) + 1);
    return rc;
}

/* 1 when this rank mapped every peer's heap. */
static int heap_attach_all(shm_state *st, const coll__rendezvous *rv)
{
    int ok = st->heap.map && st->heap.map[st->rank];
    for (int r = 0; ok && r < st->n; r++) {
        char key[160];
        coll__err err;
        coll__err_init(&err, st->world_of, st->nworld);
        void *val = NULL;
        size_t len = 0;
        if (r == st->rank) continue;
        ok = coll__store_key(key, sizeof key, NULL, rv->prefix, "shm/heap/%d", r) == COLL_OK &&
             coll__store_get(rv->store, key, &val, &len) == COLL_OK && len > 0 &&
             ((char *)val)[len - 1] == '\0' && strcmp(val, "none") != 0 &&
             coll__shm_heap_attach(&st->heap, r, val, &err) == COLL_OK;
        free(val);
    }
    return ok;
}

static int run_op(shm_state *st, const coll__call *c, const coll__sig *sig, double deadline,
                  coll__err *err);

#define GIVEN(field) coll__shm_knob_given(offsetof(shm_knobs, field))
/* A knob given leaves its probes out, unless they run for knobs given too
 * (COLL_SHM_PROBE_GIVEN). */
#define SKIPS(st, field) (GIVEN(field) && !(st)->k.probe_given)

/* The probes this rank would take part in (shm_core_probe.h), as bits:
 * it asks for them, counts a core per rank, and has no fault to fire (the
 * probes' bytes would count towards it); then each probe whose knobs are
 * not given: the window's end (the window and the band above), the slices'
 * bound on 4 KiB pages (the band above, the slices' lowest band), on huge
 * pages (huge pages), the window's end on huge pages (its window), the
 * window above's end (its window). A probe runs only where every rank
 * would (the AND of the bits). */
#define PROBE_WINDOW 1
#define PROBE_ABOVE 2
#define PROBE_HUGE 4
#define PROBE_HUGE_WINDOW 8
#define PROBE_LOW 16
#define PROBE_ABOVE_WINDOW 32
#define PROBE_STREAM 64
/* Each probe: its plan (shm_core_probe.h) and the knob its verdict sets. */
static const struct probe_kind {
    int bit;
    const shm_probe_plan *plan;
    size_t field;
} probe_kinds[] = {
    {PROBE_WINDOW, &coll__shm_probe_window, offsetof(shm_knobs, priv_core_max)},
    {PROBE_ABOVE, &coll__shm_probe_above, offsetof(shm_knobs, cma_allreduce_min)},
    {PROBE_HUGE, &coll__shm_probe_huge, offsetof(shm_knobs, cma_huge_min)},
    {PROBE_HUGE_WINDOW, &coll__shm_probe_huge_window, offsetof(shm_knobs, priv_core_huge_max)},
    {PROBE_LOW, &coll__shm_probe_low, offsetof(shm_knobs, cma_allreduce_min)},
    {PROBE_ABOVE_WINDOW, &coll__shm_probe_above_window, offsetof(shm_knobs, priv_core_above_max)},
    {PROBE_STREAM, &coll__shm_probe_stream, offsetof(shm_knobs, priv_stream_min)},
};

static const struct probe_kind *probe_kind(int which)
{
    for (size_t i = 0; i < sizeof probe_kinds / sizeof probe_kinds[0]; i++)
        if (probe_kinds[i].bit == which) return &probe_kinds[i];
    return &probe_kinds[0]; /* not reached: every caller names one of them */
}

/* The knobs as the probes find them: st->k, but where the probes run for
 * knobs given too (COLL_SHM_PROBE_GIVEN), the given ones as if not, so that
 * the same probes run at the same calls as where none was given (a program
 * whose verdicts a replay gives back: replay_run.c). */
static void knobs_before_probes(const shm_state *st, int oversub, shm_knobs *b)
{
    *b = st->k;
    if (!st->k.probe_given) return;
    size_t fields[sizeof probe_kinds / sizeof probe_kinds[0]];
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) fields[i] = probe_kinds[i].field;
    coll__shm_knobs_ungiven(b, st->n, oversub, fields, sizeof fields / sizeof fields[0]);
}

static int wants_probes(const shm_state *st)
{
    if (!coll__shm_core_probe_wanted(&st->k, st->n) || coll__fault_pending()) return 0;
    shm_knobs b;
    knobs_before_probes(st, st->yield, &b);
    if (st->yield) return SKIPS(st, priv_stream_min) ? 0 : PROBE_STREAM; /* more ranks than cores */
    int bits = (SKIPS(st, cma_huge_min) ? 0 : PROBE_HUGE) |
               (SKIPS(st, cma_allreduce_min) ? 0 : PROBE_LOW);
    if (!SKIPS(st, priv_core_huge_max) && b.priv_core_huge_max) bits |= PROBE_HUGE_WINDOW;
    /* a first window given past the second's start covers it: nothing to ask */
    int covered = SKIPS(st, priv_core_max) && b.priv_core_max > b.priv_core_above_min;
    if (!SKIPS(st, priv_core_above_max) && b.priv_core_above_max && !covered)
        bits |= PROBE_ABOVE_WINDOW;
    if (!SKIPS(st, priv_core_max) && b.priv_core_max)
        bits |= PROBE_WINDOW | (SKIPS(st, cma_allreduce_min) ? 0 : PROBE_ABOVE);
    return bits;
}

/* The default window a core per rank has (COLL_SHM_PRIV_CORE_MAX) stays open
 * only where its probe finds the private engine faster than CMA here, and
 * 4 KiB pages above it stage where that probe finds staging faster; a value
 * given applies as it is. The probes are due at the first all-reduce in
 * their band, not at set-up: creating a communicator stays cheap (it took
 * 0.65 -> 5.7 ms with the window's probe there, most of it the scratch's
 * first mapping, which that call pays anyway). */
static void core_window(shm_state *st, int oversub)
{
    /* more ranks than cores: no window, one probe (the private engine's stores) */
    int all = oversub         ? (st->direct.ok ? PROBE_STREAM : 0)
              : !st->cma.ok   ? 0
              : st->direct.ok ? PROBE_WINDOW | PROBE_ABOVE | PROBE_HUGE | PROBE_HUGE_WINDOW |
                                    PROBE_LOW | PROBE_ABOVE_WINDOW
                              : PROBE_HUGE | PROBE_LOW;
    for (int r = 0; r < st->n; r++) all &= st->seg.ctrl[r].probe_core;
    shm_knobs b;
    knobs_before_probes(st, oversub, &b);
    st->probe.on = st->probe.due = all;
    st->probe.given = 0;
    for (size_t i = 0; i < sizeof probe_kinds / sizeof probe_kinds[0]; i++)
        if (coll__shm_knob_given(probe_kinds[i].field)) st->probe.given |= probe_kinds[i].bit;
    st->probe.window_max = b.priv_core_max;
    st->probe.slices_min = b.cma_allreduce_min;
    st->probe.huge_min = b.cma_huge_min;
    st->probe.huge_window_max = b.priv_core_huge_max;
    st->probe.above_window_max = b.priv_core_above_max;
    st->probe.priv_stream_min = b.priv_stream_min;
    st->probe.at = coll__now_s();
    /* a window only on the probe's word, or the user's */
    if (!(all & PROBE_WINDOW) && !GIVEN(priv_core_max)) st->k.priv_core_max = 0;
    if (!(all & PROBE_HUGE_WINDOW) && !GIVEN(priv_core_huge_max)) st->k.priv_core_huge_max = 0;
    if (!(all & PROBE_ABOVE_WINDOW) && !GIVEN(priv_core_above_max)) st->k.priv_core_above_max = 0;
}

/* Rank 0, at an all-reduce's arrival: whether to ask every rank to probe
 * again (each band at its next all-reduce), COLL_SHM_PROBE_EVERY_S after the
 * last time. A VM's state changes under a communicator that lives long (on
 * a Zen 5 EPYC VM, every minute or so: docs/PERFORMANCE.md); the answer
 * travels in rank 0's post, so every rank takes it at the same step. Off by
 * default: the probes' milliseconds land inside whichever call comes next,
 * and a benchmark's average over a row of small calls would carry them. */
static int probe_again(shm_state *st)
{
    if (st->rank != 0 || !st->probe.on || st->k.probe_every_s == 0) return 0;
    double now = coll__now_s();
    if (now - st->probe.at < st->k.probe_every_s) return 0;
    st->probe.at = now;
    return 1;
}

/* What a probe's verdict says, for COLL_SHM_CORE_PROBE=2. */
static const char *verdict_text(int which, const shm_probe_result *r)
{
    switch (which) {
    case PROBE_WINDOW:
        return r->a_wins ? "the window a core per rank has is open"
                         : "the window a core per rank has is shut";
    case PROBE_ABOVE:
        return r->a_wins ? "staging from the window's end" : "CMA slices from the window's end";
    case PROBE_ABOVE_WINDOW:
        return r->a_wins ? "the window above is open" : "the window above is shut";
    case PROBE_STREAM:
        return r->a_wins ? "the private engine streams from 1 MiB a rank"
                         : "the private engine's stores stay cached";
    case PROBE_LOW:
        return r->a_wins ? "staging up to twice the slices' bound" : "CMA slices from their bound";
    case PROBE_HUGE_WINDOW:
        return r->no_huge  ? "no huge pages here: no window on them"
               : r->a_wins ? "the window on huge pages is open"
                           : "the window on huge pages is shut";
    default:
        return r->no_huge  ? "no huge pages here: CMA slices"
               : r->a_wins ? "staging where some rank holds huge pages"
                           : "CMA slices where some rank holds huge pages";
    }
}

/* Whether probe_kinds[i] has run on this communicator (its verdict is in). */
static int probe_ran(const shm_state *st, size_t i)
{
    int bit = probe_kinds[i].bit;
    return (st->probe.on & bit) && !(st->probe.due & bit);
}

/* The probes' verdicts so far as the knobs they set (coll_comm_plan), each
 * where its probe has run. */

static int shm_plan(const void *state, char *buf, size_t len)
{
    const shm_state *st = state;
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof probe_kinds / sizeof probe_kinds[0]; i++) {
        if (!probe_ran(st, i)) continue;
        int again = 0; /* two probes set the slices' bound: it is said once */
        for (size_t j = 0; j < i && !again; j++)
            again = probe_ran(st, j) && probe_kinds[j].field == probe_kinds[i].field;
        if (again) continue;
        if (at && at + 1 < len) buf[at++] = ' ';
        int n = at + 1 < len
                    ? coll__shm_knob_setting(&st->k, probe_kinds[i].field, buf + at, len - at)
                    : -1;
        if (n < 0) return COLL_EINVAL; /* too short */
        at += (size_t)n;
    }
    return COLL_OK;
}

/* The slices' bound on 4 KiB pages the verdicts say: staging everywhere
 * (the band above), staging in the lowest band, up to twice the bound as
 * read (64 -> 128 KiB: at 128 KiB the slices won in both of a VM's states
 * where staging won at 64), or the bound as read. */
static size_t slices_bound(const shm_state *st)
{
    size_t b = st->probe.slices_min;
    if (st->probe.above_stage) return SIZE_MAX;
    return st->probe.low_stage && b <= SIZE_MAX / 2 ? 2 * b : b;
}

/* A probe's way, for COLL_SHM_CORE_PROBE=2: the slices are what the
 * windows' probes run against, which is staging where the bound they take
 * says so. */
static const char *way_name(int way, const shm_state *st, int which)
{
    switch (way) {
    case SHM_WAY_PRIVATE: return "private engine";
    case SHM_WAY_STREAM: return "private engine streaming";
    case SHM_WAY_STAGE: return "staging";
    default:
        return (which == PROBE_HUGE_WINDOW && st->k.cma_huge_min == SIZE_MAX) ||
                       (which == PROBE_ABOVE_WINDOW && st->k.cma_allreduce_min == SIZE_MAX)
                   ? "staging"
                   : "CMA slices";
    }
}

/* A probe's verdict into the knob it sets. */
static void apply_verdict(shm_state *st, int which, const shm_probe_plan *plan,
                          const shm_probe_result *r)
{
    if (which == PROBE_WINDOW) st->k.priv_core_max = r->a_wins ? st->probe.window_max : 0;
    if (which == PROBE_ABOVE) st->probe.above_stage = r->a_wins;
    if (which == PROBE_LOW) st->probe.low_stage = r->a_wins;
    if (which == PROBE_ABOVE || which == PROBE_LOW) st->k.cma_allreduce_min = slices_bound(st);
    if (which == PROBE_HUGE) st->k.cma_huge_min = r->a_wins ? SIZE_MAX : st->probe.huge_min;
    if (which == PROBE_HUGE_WINDOW)
        st->k.priv_core_huge_max = r->a_wins ? st->probe.huge_window_max : 0;
    if (which == PROBE_ABOVE_WINDOW)
        st->k.priv_core_above_max = r->a_wins ? st->probe.above_window_max : 0;
    if (which == PROBE_ABOVE_WINDOW && !r->a_wins) coll__shm_private_release(st);
    if (which == PROBE_STREAM)
        st->k.priv_stream_min = r->a_wins ? plan->bytes * (size_t)st->n : st->probe.priv_stream_min;
}

/* One probe and its verdict. */
static int probe_one(shm_state *st, int which, double deadline, coll__err *err)
{
    const shm_probe_plan *plan = probe_kind(which)->plan;
    shm_probe_result r;
    st->probe.due &= ~which;
    st->probe.running = 1;
    int rc = coll__shm_probe(st, run_op, plan, deadline, &r, err);
    st->probe.running = 0;
    if (rc) return rc;
    /* a knob given stands (the probe ran for its time: COLL_SHM_PROBE_GIVEN) */
    int given = st->probe.given & which;
    if (!given) apply_verdict(st, which, plan, &r);
    if (st->k.core_probe == 2 && st->rank == 0)
        fprintf(stderr,
                "collbench shm: probe, all-reduce of %zu KiB a rank %s on %s pages, a "
                "call in the slowest rank's best block: %s %.1f us, %s %.1f us: %s%s\n",
                plan->bytes >> 10, plan->out ? "out of place" : "in place",
                plan->huge ? "huge" : "4 KiB", way_name(plan->way_a, st, which), r.us_a,
                way_name(plan->way_b, st, which), r.us_b, verdict_text(which, &r),
                given ? " (not taken: its knob is given)" : "");
    return COLL_OK;
}

/* Before the first all-reduce of each band: its probe, and its verdict; the
 * huge pages' probes (the slices' bound, then the window, whose other way
 * is that bound's) before the first from the window's start, whatever the
 * call's pages (a rank cannot know its peers' before the arrival, and all
 * must probe alike). The test reads only what every rank's call has alike
 * (kind and size), so all run them. */
static int probe_now(shm_state *st, const coll__call *c, size_t bytes, double deadline,
                     coll__err *err)
{
    if (!st->probe.due || st->probe.running || c->kind != COLL_KIND_ALLREDUCE ||
        bytes < st->k.priv_core_min)
        return COLL_OK;
    int rc = st->probe.due & PROBE_HUGE ? probe_one(st, PROBE_HUGE, deadline, err) : COLL_OK;
    if (rc == COLL_OK && st->probe.due & PROBE_HUGE_WINDOW)
        rc = probe_one(st, PROBE_HUGE_WINDOW, deadline, err);
    int which = bytes < st->probe.window_max ? PROBE_WINDOW : PROBE_ABOVE;
    if (rc == COLL_OK && st->probe.due & which) rc = probe_one(st, which, deadline, err);
    /* the slices' lowest band (where a window covers it, for when one shuts) */
    if (rc == COLL_OK && st->probe.due & PROBE_LOW) rc = probe_one(st, PROBE_LOW, deadline, err);
    /* the window above, after the band above's answer (its other way) */
    if (rc == COLL_OK && st->probe.due & PROBE_ABOVE_WINDOW && bytes >= st->k.priv_core_above_min)
        rc = probe_one(st, PROBE_ABOVE_WINDOW, deadline, err);
    /* more ranks than cores: the private engine's stores, from the probe's size */
    if (rc == COLL_OK && st->probe.due & PROBE_STREAM && bytes >= coll__shm_probe_stream.bytes)
        rc = probe_one(st, PROBE_STREAM, deadline, err);
    return rc;
}

static int setup(shm_state *st, const coll__rendezvous *rv, coll__err *err)
{
    /* More ranks than cores: a waiter's spin yields the CPU at every miss
     * (shm_wait.c), so a peer that needs the core gets it at once; sleeping
     * would cost a futex wake-up per step. This rank's own answer until every
     * rank's is known (after the "probed" barrier). */
    st->yield = coll__shm_oversub_mine(st->n);
    int rc = coll__shm_knobs_setup(&st->k, st->n, st->yield, err);
    if (rc) return rc;
    size_t slot = (st->k.slot_bytes + 4095) / 4096 * 4096;
    size_t mbox = (st->k.mbox_bytes + 63) / 64 * 64;
    st->spin = st->k.spin_us;
    int cma_env = st->k.cma;
    pid_t *pids = calloc((size_t)st->n, sizeof *pids);
    if (!pids || alloc_state(st)) {
        free(pids);
        return coll__err_set(err, COLL_ENOMEM, "shm: out of memory");
    }
    int cma_wanted = st->n > 1 && cma_env;
    if (cma_wanted) coll__shm_cma_allow_peers(1); /* before the probe, which needs it */
    rc = heap_publish(st, rv, st->k.heap_bytes);
    if (rc) {
        free(pids);
        return coll__err_set(err, rc, "shm: cannot publish rank %d's heap: %s", world(st, st->rank),
                             rv->store->err.msg);
    }
    st->cma.probe_word = ((uint64_t)getpid() << 20) ^ 0x5eedc0115eedull;
    rc = coll__shm_segment_create(&st->seg, rv->store, rv->prefix, st->rank, st->n, slot, mbox,
                                  (uint64_t)(uintptr_t)&st->cma.probe_word, st->cma.probe_word,
                                  err);
    if (rc == COLL_OK) {
        for (int r = 0; r < st->n; r++) pids[r] = st->seg.ctrl[r].pid;
        rc = coll__shm_liveness_open(&st->live, pids, st->n, st->rank);
    }
    free(pids);
    if (rc) return rc;
    char why[160] = "";
    st->seg.ctrl[st->rank].cma_ok = probe_cma(st, cma_env, why, sizeof why) ? 1 : -1;
    st->seg.ctrl[st->rank].heap_ok = heap_attach_all(st, rv);
    st->seg.ctrl[st->rank].oversub = st->yield;
    st->seg.ctrl[st->rank].probe_core = wants_probes(st);
    rc = coll__shm_segment_barrier(rv->store, rv->prefix, "probed", st->rank, st->n, err);
    if (rc) return rc;
    /* Every rank plans with the same windows: the OR of every rank's answer
     * (the OVERSUB knobs only change; the environment was read without error). */
    int oversub = coll__shm_oversub_agree(st->seg.ctrl, st->n);
    if (oversub != st->yield) {
        st->yield = oversub;
        rc = coll__shm_knobs_setup(&st->k, st->n, oversub, err);
        if (rc) return rc;
    }
    /* Every peer has mapped our heap (or given up on it). */
    coll__shm_heap_seal(&st->heap);
    st->direct.ok = st->n > 1;
    for (int r = 0; r < st->n; r++) st->direct.ok &= st->seg.ctrl[r].heap_ok == 1;
    st->cma.ok = 1;
    for (int r = 0; r < st->n; r++)
        if (st->seg.ctrl[r].cma_ok != 1) {
            st->cma.ok = 0;
            snprintf(st->cma.reason, sizeof st->cma.reason, "rank %d: %.120s", world(st, r),
                     r == st->rank ? why : "process_vm_readv does not work there");
            break;
        }
    if (!st->cma.ok && cma_wanted) coll__shm_cma_allow_peers(0); /* no engine: no one may attach */
    if (!st->cma.ok && st->rank == 0 && !(why[0] && strstr(why, "COLL_SHM_CMA=0")))
        fprintf(stderr,
                "collbench shm: single-copy transfers unavailable (%s); copying "
                "through the shared segment instead\n",
                st->cma.reason);
    core_window(st, oversub);
    return COLL_OK;
}

static int shm_init(const coll__rendezvous *rv, void **state, coll__err *err)
{
    shm_state *st = calloc(1, sizeof *st);
    if (!st) return COLL_ENOMEM;
    st->rank = rv->rank;
    st->n = rv->world_size;
    st->world_of = rv->world_of;
    st->nworld = rv->nworld;
    coll__err why; /* names world ranks */
    coll__err_init(&why, st->world_of, st->nworld);
    int rc = setup(st, rv, &why);
    if (rc) {
        coll__err_pass(err, &why);
        err->status = rc;
        shm_fini(st);
        return rc;
    }
    *state = st;
    return COLL_OK;
}

/* Is [p, p + bytes) in this rank's shared heap? */
static int in_own_heap(shm_state *st, const void *p, size_t bytes)
{
    return coll__shm_heap_peer(&st->heap, st->rank, (uint64_t)(uintptr_t)p, bytes) != NULL;
}

static int buffers_plain(shm_state *st, const coll__call *c, size_t bytes)
{
    return coll__pages_plain(&st->page_kind, c->sendbuf, bytes) &&
           (c->recvbuf == c->sendbuf || coll__pages_plain(&st->page_kind, c->recvbuf, bytes));
}

static shm_plan_in plan_in(shm_op *o)
{
    shm_state *st = o->st;
    const coll__call *c = o->c;
    return (shm_plan_in){.kind = c->kind,
                         .bytes = c->count * o->es,
                         .n = st->n,
                         .cma = st->cma.ok,
                         .heaps = st->direct.ok,
                         .mine_in_place = c->sendbuf == c->recvbuf,
                         .mine_nonblocking = c->nonblocking};
}

/* After the arrival of an all-reduce, the engine the plan picks from every
 * rank's post; no_scratch: some rank's heap had no room for the private
 * engine's. */
static int run_arrived(shm_op *o, int no_scratch)
{
    shm_plan_in in = plan_in(o);
    in.arrived = 1;
    in.all_in_heap = coll__shm_direct_map(o);
    int in_place = coll__shm_in_place_ranks(o->st);
    in.any_in_place = in_place > 0;
    in.all_in_place = in_place == o->st->n;
    in.all_plain = o->all_plain;
    in.any_nonblocking = o->any_nonblocking;
    in.no_scratch = no_scratch;
    switch (coll__shm_plan(&in, &o->st->k)) {
    case SHM_ENGINE_DIRECT: return coll__shm_direct_allreduce(o);
    case SHM_ENGINE_PRIVATE: return coll__shm_private_allreduce(o);
    case SHM_ENGINE_CMA_WHOLE: return coll__shm_cma_whole(o);
    case SHM_ENGINE_CMA: return coll__shm_cma_allreduce(o);
    case SHM_ENGINE_STAGE: return coll__shm_stage_run(o);
    default: /* the plan knows every post now: it never says arrive again */
        return coll__err_set(o->w.err, COLL_ENOTSUP, "shm: no engine for %s after the arrival",
                             coll__kind_name(o->c->kind));
    }
}

static int run_op(shm_state *st, const coll__call *c, const coll__sig *sig, double deadline,
                  coll__err *err)
{
    shm_op o = {.st = st, .c = c, .sig = sig};
    o.w = (shm_waiter){.seg = &st->seg,
                       .live = &st->live,
                       .watch = NULL,
                       .deadline = deadline,
                       .spin = st->spin,
                       .yield = st->yield,
                       .err = err};
    o.es = c->kind == COLL_KIND_BARRIER ? 1 : coll_dtype_size(c->dt);
    if (o.es == 0) return COLL_EINVAL;
    if (c->kind == COLL_KIND_ALLREDUCE || c->kind == COLL_KIND_REDUCESCATTER ||
        c->kind == COLL_KIND_REDUCE) {
        o.fn = coll__reduce_kernel(c->dt, c->op == COLL_AVG ? COLL_SUM : c->op);
        if (!o.fn) {
            return coll__err_set(err, COLL_EINVAL, "op %s is not defined for dtype %s",
                                 coll_op_name(c->op), coll_dtype_name(c->dt));
        }
    }
    shm_plan_in in = plan_in(&o);
    int rc = probe_now(st, c, in.bytes, deadline, err);
    if (rc) return rc;
    in.mine_in_heap = c->kind == COLL_KIND_ALLREDUCE && in_own_heap(st, c->sendbuf, in.bytes) &&
                      in_own_heap(st, c->recvbuf, in.bytes);
    in.mine_plain = o.plain = coll__shm_asks_page_kind(&in, &st->k) &&
                              buffers_plain(st, c, in.bytes);
    shm_engine e = coll__shm_plan(&in, &st->k);
    switch (e) {
    case SHM_ENGINE_P2P: return coll__shm_p2p_run(&o);
    case SHM_ENGINE_CMA: return coll__shm_cma_run(&o);
    case SHM_ENGINE_ARRIVE_COPY:
    case SHM_ENGINE_ARRIVE: {
        if (e == SHM_ENGINE_ARRIVE_COPY) coll__shm_private_stage(&o);
        o.probe = probe_again(st);
        int rc = coll__shm_op_arrive(&o, c->sendbuf, c->recvbuf);
        o.arrived = 1;
        if (rc == COLL_OK) rc = run_arrived(&o, 0);
        /* The plan never picks the private engine again with no_scratch. */
        return rc == SHM_NO_ROOM ? run_arrived(&o, 1) : rc;
    }
    case SHM_ENGINE_STAGE: return coll__shm_stage_run(&o);
    default: /* the others need every rank's buffers: the plan says arrive first */
        return coll__err_set(err, COLL_ENOTSUP, "shm: no engine for %s before the arrival",
                             coll__kind_name(c->kind));
    }
}

/* Errors of the call name world ranks: a value with this group's map, passed on. */
static int shm_run(void *state, const coll__call *c, const coll__sig *sig, double deadline,
                   coll__err *err)
{
    shm_state *st = state;
    coll__err why;
    coll__err_init(&why, st->world_of, st->nworld);
    int rc = run_op(st, c, sig, deadline, &why);
    if (rc) {
        coll__err_pass(err, &why);
        err->status = rc;
    }
    return rc;
}

/* shm picks its engine per call (staging, cma or direct: shm_op.h) from the
 * message size and where the buffers live; none of libcoll's named algorithms
 * runs here, and forcing an engine would also force it on the harness's own
 * small reductions, so "auto" is the only choice. Refusing the others keeps
 * results from being recorded under an algorithm that never ran. */
static int shm_set_algo(void *state, const char *algo, coll__err *err)
{
    (void)state;
    coll__algo_id id;
    if (coll__algo_parse(algo, &id) != 0) {
        return coll__err_set(err, COLL_EINVAL, "unknown algorithm '%s'", algo);
    }
    if (id == COLL_ALGO_AUTO) return COLL_OK;
    return coll__err_set(
        err, COLL_ENOTSUP,
        "backend shm has no algorithm '%s' (it has: auto; it picks staging, "
        "cma or direct per call by message size and buffers; libcoll's algorithms run on "
        "backend tcp)",
        algo);
}

/* coll_alloc: the shared heap (so that collectives can go direct), else
 * private memory as the core would give. */
static void *shm_alloc(void *state, size_t bytes)
{
    shm_state *st = state;
    void *p = coll__shm_heap_alloc(&st->heap, bytes);
    return p ? p : coll__alloc_aligned(bytes);
}

static void shm_free(void *state, void *ptr)
{
    shm_state *st = state;
    if (!ptr) return;
    if (coll__shm_heap_free(&st->heap, ptr))
        atomic_fetch_add_explicit(&st->seg.ctrl[st->rank].heap_frees, 1, memory_order_release);
    else free(ptr);
}

static void shm_abort(void *state, int status, int failed_rank)
{
    shm_state *st = state;
    if (st && st->seg.base) coll__shm_abort_mark(&st->seg, status, failed_rank);
}

const coll__backend_ops coll__backend_shm = {
    .size = sizeof(coll__backend_ops),
    .name = "shm",
    .init = shm_init,
    .run = shm_run,
    .set_algo = shm_set_algo,
    .abort = shm_abort,
    .fini = shm_fini,
    .alloc = shm_alloc,
    .free = shm_free,
    .plan = shm_plan,
};
