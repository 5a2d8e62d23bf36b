/* The plan's probes (src/backend/shm/shm_core_probe.c) through a stand-in for
 * the backend's run: each probe must time its two ways and nothing else. The
 * stand-in asks the plan (shm_plan.c) which engine each call would get with
 * the knobs the probe set for it, and whether the private engine would
 * stream, on ranks that hold their buffers in 4 KiB pages: 2 with a core
 * each, or 4 on fewer cores. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "backend/shm/shm_core_probe.h"
#include "core/clock.h"

#define M ((size_t)1 << 20)

static struct {
    size_t bytes;      /* the plan's: the calls of that size are the timed ones */
    int engines[8];    /* calls per engine (shm_engine) */
    int other;         /* calls of that size with an engine outside engines[] */
    int in_place, out; /* calls of that size in place, out of place */
    int streams;       /* calls of that size whose private engine would stream */
} seen;

static int stand_in(shm_state *st, const coll__call *c, const coll__sig *sig, double deadline,
                    coll__err *err)
{
    (void)deadline, (void)err;
    size_t bytes = (size_t)sig->count * sizeof(float);
    if (sig->dtype != COLL_FLOAT32 || bytes != seen.bytes) return COLL_OK; /* the verdict's max */
    int in_place = c->sendbuf == c->recvbuf;
    shm_plan_in in = {.kind = COLL_KIND_ALLREDUCE,
                      .bytes = bytes,
                      .n = st->n,
                      .cma = 1,
                      .heaps = 1,
                      .mine_plain = 1,
                      .mine_in_place = in_place,
                      .arrived = 1,
                      .any_in_place = in_place,
                      .all_in_place = in_place,
                      .all_plain = 1};
    shm_engine e = coll__shm_plan(&in, &st->k);
    if ((int)e >= 0 && (int)e < 8) seen.engines[e]++;
    else seen.other++;
    seen.streams += coll__shm_private_streams(&st->k, bytes * (size_t)st->n);
    seen.in_place += in_place;
    seen.out += !in_place;
    return COLL_OK;
}

/* A communicator of n ranks (oversub: more than cores), its bounds as read
 * kept where shm.c's set-up keeps them for the probes. */
static void ranks(shm_state *st, int n, int oversub)
{
    memset(st, 0, sizeof *st);
    st->n = n;
    coll__shm_knobs_default(&st->k, n, oversub);
    st->probe.window_max = st->k.priv_core_max;
    st->probe.slices_min = st->k.cma_allreduce_min;
    st->probe.huge_min = st->k.cma_huge_min;
    st->probe.huge_window_max = st->k.priv_core_huge_max;
    st->probe.above_window_max = st->k.priv_core_above_max;
    st->probe.priv_stream_min = st->k.priv_stream_min;
}

static void two_ranks(shm_state *st) { ranks(st, 2, 0); }

/* Runs plan; the calls of its size each way: 1 before the blocks, then a
 * block of plan->calls in each of plan->rounds rounds. */
static void probe(shm_state *st, const shm_probe_plan *plan)
{
    memset(&seen, 0, sizeof seen);
    seen.bytes = plan->bytes;
    shm_probe_result r;
    coll__err err = {0};
    shm_knobs was = st->k;
    assert_int_equal(coll__shm_probe(st, stand_in, plan, coll__now_s() + 60, &r, &err), COLL_OK);
    assert_memory_equal(&st->k, &was, sizeof was); /* the caller applies the verdict */
    assert_int_equal(seen.other, 0);
    int each = 1 + plan->rounds * plan->calls;
    assert_int_equal(seen.in_place + seen.out, 2 * each);
    assert_int_equal(plan->out ? seen.out : seen.in_place, 2 * each);
}

static int calls_each(const shm_probe_plan *plan) { return 1 + plan->rounds * plan->calls; }

/* The band above the window: staging against the slices, out of place at
 * 16 MiB. The window above (open by default until its own probe) must not
 * take both ways: it did, and the verdict was a coin's. */
static void test_above(void **state)
{
    (void)state;
    shm_state st;
    two_ranks(&st);
    assert_true(st.k.priv_core_above_max > 0);
    const shm_probe_plan *p = &coll__shm_probe_above;
    assert_int_equal(p->bytes, 16 * M);
    probe(&st, p);
    assert_int_equal(seen.engines[SHM_ENGINE_STAGE], calls_each(p));
    assert_int_equal(seen.engines[SHM_ENGINE_CMA], calls_each(p));
    assert_int_equal(seen.engines[SHM_ENGINE_PRIVATE], 0);
}

/* The window above: the private engine against what the band above's
 * answer chose, staging or the slices. */
static void test_above_window(void **state)
{
    (void)state;
    shm_state st;
    two_ranks(&st);
    const shm_probe_plan *p = &coll__shm_probe_above_window;
    probe(&st, p);
    assert_int_equal(seen.engines[SHM_ENGINE_PRIVATE], calls_each(p));
    assert_int_equal(seen.engines[SHM_ENGINE_CMA], calls_each(p));
    st.k.cma_allreduce_min = SIZE_MAX; /* the band above staged */
    probe(&st, p);
    assert_int_equal(seen.engines[SHM_ENGINE_PRIVATE], calls_each(p));
    assert_int_equal(seen.engines[SHM_ENGINE_STAGE], calls_each(p));
}

/* The window and the slices' lowest band, in place on 4 KiB pages. */
static void test_window_and_low(void **state)
{
    (void)state;
    shm_state st;
    two_ranks(&st);
    const shm_probe_plan *w = &coll__shm_probe_window;
    probe(&st, w);
    assert_int_equal(seen.engines[SHM_ENGINE_PRIVATE], calls_each(w));
    assert_int_equal(seen.engines[SHM_ENGINE_CMA], calls_each(w));
    st.k.priv_core_max = 0; /* shut: the lowest band is what it then takes */
    const shm_probe_plan *l = &coll__shm_probe_low;
    probe(&st, l);
    assert_int_equal(seen.engines[SHM_ENGINE_STAGE], calls_each(l));
    assert_int_equal(seen.engines[SHM_ENGINE_CMA], calls_each(l));
}

/* More ranks than cores: the private engine with its stores streamed
 * against kept in the caches (the bound as read: none at 1 MiB a rank). */
static void test_stream(void **state)
{
    (void)state;
    shm_state st;
    ranks(&st, 4, 1);
    const shm_probe_plan *p = &coll__shm_probe_stream;
    assert_int_equal(p->bytes, M);
    assert_false(coll__shm_private_streams(&st.k, 4 * M));
    probe(&st, p);
    assert_int_equal(seen.engines[SHM_ENGINE_PRIVATE], 2 * calls_each(p));
    assert_int_equal(seen.streams, calls_each(p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_above),
        cmocka_unit_test(test_above_window),
        cmocka_unit_test(test_window_and_low),
        cmocka_unit_test(test_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
