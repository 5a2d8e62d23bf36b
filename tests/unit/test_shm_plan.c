/* The shm strategy plan (src/backend/shm/shm_plan.c) with the knobs' defaults
 * (shm_knobs.c): which strategy each all-reduce gets over buffers (coll heap,
 * malloc, thp, mixed) x ranks against cores x per-rank size (around every
 * threshold) x in place. The tables below are the spec: a moved threshold or
 * a changed default fails the cell it moves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/shm/shm_plan.h"
#include "coll.h"

#define K 1024u
#define M (1024u * 1024u)

/* Per-rank bytes: each threshold and the size just below it (2M: a size
 * inside the window on 4 KiB pages). */
static const size_t sizes[] = {8,         4 * K - 4, 4 * K,       32 * K - 4,  32 * K, 64 * K - 4,
                               64 * K,    128 * K,   256 * K - 4, 256 * K,     M - 4,  M,
                               2 * M - 4, 2 * M,     256 * M,     512 * M - 4, 512 * M};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* One letter per strategy, one per size above. */
static char letter(shm_engine e)
{
    switch (e) {
    case SHM_ENGINE_STAGE: return 'S';
    case SHM_ENGINE_CMA: return 'C';
    case SHM_ENGINE_CMA_WHOLE: return 'W';
    case SHM_ENGINE_DIRECT: return 'D';
    case SHM_ENGINE_PRIVATE: return 'P';
    default: return '?';
    }
}

/* How a rank sees its own buffers and, after the arrival, everyone's: malloc
 * and thp are both private memory, malloc's in 4 KiB pages, thp's huge;
 * mixed: some ranks' buffers in the heaps, others' private (malloc). */
typedef enum { BUF_COLL, BUF_MALLOC, BUF_THP, BUF_MIXED } buf_kind;
static const char *const buf_name[] = {"coll", "malloc", "thp", "mixed"};

typedef struct cell_row {
    buf_kind buf;
    int n, oversub, in_place;
    const char *want; /* S stage, C CMA slices, W CMA whole inputs, D direct, P private */
} cell_row;

/* CMA and the shared heaps work (the usual case). */
static const cell_row rows[] = {
    /*                  8 4K- 4K 32K- 32K 64K- 64K 128K 256K- 256K 1M- 1M 2M- 2M 256M 512M- 512M */
    {BUF_COLL, 2, 0, 0, "SSDDDDDDDDDDDDDDD"},
    {BUF_COLL, 2, 0, 1, "SSDDDDDDDDDDDDDDD"},
    {BUF_COLL, 6, 1, 0, "SSDDDDDDDDDDDDDDD"},
    {BUF_COLL, 6, 1, 1, "SSDDDDDDDDDDDDDDD"},
    /* 2 ranks a core each: whole inputs from 32K out of place, slices from 64K */
    {BUF_MALLOC, 2, 0, 0, "SSSSWWWWWCCCCCCCC"},
    {BUF_MALLOC, 2, 0, 1, "SSSSSSCCCCCCCCCCC"},
    {BUF_THP, 2, 0, 0, "SSSSWWWWWCCCCCCCC"},
    {BUF_THP, 2, 0, 1, "SSSSSSCCCCCCCCCCC"},
    {BUF_MIXED, 2, 0, 0, "SSSSWWWWWCCCCCCCC"},
    {BUF_MIXED, 2, 0, 1, "SSSSSSCCCCCCCCCCC"},
    /* more ranks than cores: the private strategy from 4K, below 1M on huge
     * pages (or some rank's buffers in its heap), below 512M on 4 KiB pages */
    {BUF_MALLOC, 2, 1, 0, "SSPPPPPPPPPPPPPPC"},
    {BUF_MALLOC, 2, 1, 1, "SSPPPPPPPPPPPPPPC"},
    {BUF_THP, 2, 1, 0, "SSPPPPPPPPPCCCCCC"},
    {BUF_MIXED, 2, 1, 0, "SSPPPPPPPPPCCCCCC"},
    /* 4 and 6 ranks a core each: no whole-input window, slices from 64K */
    {BUF_MALLOC, 4, 0, 0, "SSSSSSCCCCCCCCCCC"},
    {BUF_MALLOC, 4, 0, 1, "SSSSSSCCCCCCCCCCC"},
    {BUF_THP, 6, 0, 0, "SSSSSSCCCCCCCCCCC"},
    {BUF_MIXED, 6, 0, 1, "SSSSSSCCCCCCCCCCC"},
    {BUF_MALLOC, 4, 1, 0, "SSPPPPPPPPPPPPPPC"},
    {BUF_MALLOC, 6, 1, 0, "SSPPPPPPPPPPPPPPC"},
    {BUF_MALLOC, 6, 1, 1, "SSPPPPPPPPPPPPPPC"},
    {BUF_THP, 6, 1, 1, "SSPPPPPPPPPCCCCCC"},
    {BUF_MIXED, 6, 1, 0, "SSPPPPPPPPPCCCCCC"},
};

/* The strategy a rank ends up with: the plan before the arrival and, where it
 * says "arrive", again with every post. mine_*: this rank's view, all_*: the
 * posts'. */
static shm_engine run_plan(const shm_plan_in *base, const shm_knobs *k, int mine_in_heap,
                           int mine_plain, int all_in_heap, int all_plain, int in_place,
                           shm_engine *before)
{
    shm_plan_in in = *base;
    in.mine_in_heap = mine_in_heap;
    in.mine_in_place = in_place;
    /* a rank posts its page kind only where the plan asks for it (shm.c) */
    int asks = coll__shm_asks_page_kind(&in, k);
    in.mine_plain = asks && mine_plain;
    all_plain = asks && all_plain;
    *before = coll__shm_plan(&in, k);
    if (*before != SHM_ENGINE_ARRIVE && *before != SHM_ENGINE_ARRIVE_COPY) return *before;
    in.arrived = 1;
    in.all_in_heap = all_in_heap;
    in.all_plain = all_plain;
    in.any_in_place = in.all_in_place = in_place;
    return coll__shm_plan(&in, k);
}

/* The row's strategies, one letter per size; NULL when the ranks of a mixed
 * row (one with its buffers in the heap, one without) would disagree. */
static const char *strategies(const cell_row *r, int cma, int heaps, char *out)
{
    shm_knobs k;
    coll__shm_knobs_default(&k, r->n, r->oversub);
    /* the core windows as their probes leave them where CMA wins (open: test_core_window) */
    k.priv_core_max = k.priv_core_huge_max = k.priv_core_above_max = 0;
    for (size_t i = 0; i < NSIZES; i++) {
        shm_plan_in in = {
            .kind = COLL_KIND_ALLREDUCE, .bytes = sizes[i], .n = r->n, .cma = cma, .heaps = heaps};
        int all = r->buf == BUF_COLL && heaps, mine = r->buf == BUF_COLL && heaps;
        /* a rank whose buffers are in its heap posts them as not plain */
        int mine_plain = r->buf == BUF_MALLOC || r->buf == BUF_MIXED,
            all_plain = r->buf == BUF_MALLOC;
        shm_engine before,
            e = run_plan(&in, &k, mine, mine_plain, all, all_plain, r->in_place, &before);
        if (r->buf == BUF_MIXED) { /* the rank with heap buffers decides alike */
            shm_engine b2;
            if (run_plan(&in, &k, 1, 0, 0, 0, r->in_place, &b2) != e) return NULL;
        }
        out[i] = letter(e);
    }
    out[NSIZES] = '\0';
    return out;
}

static void check_rows(const cell_row *t, size_t count, int cma, int heaps)
{
    int bad = 0;
    for (size_t i = 0; i < count; i++) {
        char got[NSIZES + 1];
        const char *g = strategies(&t[i], cma, heaps, got);
        if (g && strcmp(g, t[i].want) == 0) continue;
        fprintf(stderr, "%s buffers, %d ranks, %s, %s: got %s, want %s\n", buf_name[t[i].buf],
                t[i].n, t[i].oversub ? "more ranks than cores" : "a core each",
                t[i].in_place ? "in place" : "out of place", g ? g : "ranks disagree", t[i].want);
        bad++;
    }
    assert_int_equal(bad, 0);
}

static void test_allreduce_grid(void **state)
{
    (void)state;
    assert_int_equal(strlen(rows[0].want), NSIZES);
    check_rows(rows, sizeof rows / sizeof rows[0], 1, 1);
}

/* Without CMA (ptrace rules, COLL_SHM_CMA=0) private buffers always stage. */
static void test_without_cma(void **state)
{
    (void)state;
    static const cell_row t[] = {
        {BUF_MALLOC, 2, 0, 0, "SSSSSSSSSSSSSSSSS"}, {BUF_MALLOC, 6, 0, 1, "SSSSSSSSSSSSSSSSS"},
        {BUF_MALLOC, 6, 1, 0, "SSPPPPPPPPPPPPPPS"}, {BUF_THP, 6, 1, 0, "SSPPPPPPPPPSSSSSS"},
        {BUF_COLL, 6, 0, 0, "SSDDDDDDDDDDDDDDD"},
    };
    check_rows(t, sizeof t / sizeof t[0], 0, 1);
}

/* Without the shared heaps (COLL_SHM_HEAP_BYTES=0): coll_alloc gives private
 * memory, so no direct and no private strategy. */
static void test_without_heaps(void **state)
{
    (void)state;
    static const cell_row t[] = {
        {BUF_COLL, 2, 0, 0, "SSSSWWWWWCCCCCCCC"},
        {BUF_MALLOC, 2, 1, 0, "SSSSWWWWWCCCCCCCC"},
        {BUF_MALLOC, 6, 1, 1, "SSSSSSCCCCCCCCCCC"},
    };
    check_rows(t, sizeof t / sizeof t[0], 1, 0);
}

/* Before the arrival: staging that can travel with the arrival, an arrival
 * first, or an arrival with the input copied to the scratch already. */
static void test_before_arrival(void **state)
{
    (void)state;
    shm_knobs k, ko;
    coll__shm_knobs_default(&k, 2, 0);
    coll__shm_knobs_default(&ko, 2, 1);
    shm_plan_in in = {.kind = COLL_KIND_ALLREDUCE, .n = 2, .cma = 1, .heaps = 1};
    in.bytes = 4 * K - 4;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_STAGE);
    in.bytes = 4 * K; /* direct possible: the peers' buffers decide */
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_ARRIVE);
    assert_int_equal(coll__shm_plan(&in, &ko), SHM_ENGINE_ARRIVE_COPY);
    in.mine_in_heap = 1; /* no copy for buffers direct may take */
    assert_int_equal(coll__shm_plan(&in, &ko), SHM_ENGINE_ARRIVE);
    in.heaps = 0; /* no heaps: only CMA needs the posts */
    in.mine_in_heap = 0;
    assert_int_equal(coll__shm_plan(&in, &ko), SHM_ENGINE_STAGE);
    in.bytes = 32 * K;
    assert_int_equal(coll__shm_plan(&in, &ko), SHM_ENGINE_ARRIVE);
    in.bytes = 0; /* nothing to move */
    in.heaps = 1;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_STAGE);
}

/* A heap with no room for some rank's scratch: the private strategy's calls go
 * where they would with a core per rank. */
static void test_no_scratch(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 2, 1);
    shm_plan_in in = {.kind = COLL_KIND_ALLREDUCE, .n = 2, .cma = 1, .heaps = 1, .arrived = 1};
    in.bytes = 8 * K;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_PRIVATE);
    in.no_scratch = 1;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_STAGE);
    in.bytes = 64 * K;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_CMA_WHOLE);
    in.bytes = 512 * K;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_CMA);
}

/* Whole inputs beyond 2 ranks (a knob opens the window) only while the other
 * inputs fit the chunk buffer. */
static void test_whole_window_more_ranks(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 4, 0);
    k.cma_whole_min = 16 * K;
    k.cma_whole_max = 256 * K;
    shm_plan_in in = {.kind = COLL_KIND_ALLREDUCE, .n = 4, .cma = 1, .arrived = 1};
    in.bytes = 64 * K; /* 4 x 64K = the 256K chunk */
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_CMA_WHOLE);
    in.bytes = 64 * K + 4;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_CMA);
    in.bytes = 32 * K; /* below the slices' bound: staging when whole is out */
    in.any_in_place = 1;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_STAGE);
}

/* CMA slices from one bound per page kind (tune's knobs): on huge pages from
 * cma_huge_min, on 4 KiB pages from cma_allreduce_min, each whatever the
 * other says; before the arrival (a rank knows only its own pages) CMA stays
 * open from the lower one. */
static void test_cma_per_page_kind(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 2, 0);
    assert_int_equal(k.cma_huge_min, k.cma_allreduce_min); /* one default serves both */
    k.cma_huge_min = M;
    shm_plan_in in = {.kind = COLL_KIND_ALLREDUCE, .n = 2, .cma = 1, .any_in_place = 1};
    shm_engine before;
    in.bytes = 256 * K;
    assert_int_equal(run_plan(&in, &k, 0, 0, 0, 0, 1, &before), SHM_ENGINE_STAGE);
    assert_int_equal(before, SHM_ENGINE_ARRIVE); /* the same first step on every page kind */
    assert_int_equal(run_plan(&in, &k, 0, 1, 0, 1, 1, &before), SHM_ENGINE_CMA);
    /* a peer in huge pages decides for a rank in 4 KiB pages */
    assert_int_equal(run_plan(&in, &k, 0, 1, 0, 0, 1, &before), SHM_ENGINE_STAGE);
    in.bytes = M;
    assert_int_equal(run_plan(&in, &k, 0, 0, 0, 0, 1, &before), SHM_ENGINE_CMA);
    in.any_in_place = 0; /* out of place: the whole-input window is its own knob */
    in.bytes = 64 * K;
    assert_int_equal(run_plan(&in, &k, 0, 0, 0, 0, 0, &before), SHM_ENGINE_CMA_WHOLE);
    assert_int_equal(run_plan(&in, &k, 0, 1, 0, 1, 0, &before), SHM_ENGINE_CMA_WHOLE);
    /* the other way: staging on 4 KiB pages, CMA on huge ones */
    coll__shm_knobs_default(&k, 2, 0);
    k.cma_allreduce_min = 1024 * M;
    in.any_in_place = 1;
    assert_int_equal(run_plan(&in, &k, 0, 1, 0, 1, 1, &before), SHM_ENGINE_STAGE);
    assert_int_equal(before, SHM_ENGINE_ARRIVE);
    assert_int_equal(run_plan(&in, &k, 0, 0, 0, 0, 1, &before), SHM_ENGINE_CMA);
    in.bytes = M;
    assert_int_equal(run_plan(&in, &k, 0, 1, 0, 1, 1, &before), SHM_ENGINE_STAGE);
    /* both bounds above: staging from the first step */
    k.cma_huge_min = 1024 * M;
    assert_int_equal(run_plan(&in, &k, 0, 0, 0, 0, 1, &before), SHM_ENGINE_STAGE);
    assert_int_equal(before, SHM_ENGINE_STAGE);
}

/* Streaming stores from stream_min (all ranks' bytes), never in place. */
static void test_streams(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 4, 1);
    assert_false(coll__shm_streams(&k, k.stream_min - 1, 0));
    assert_true(coll__shm_streams(&k, k.stream_min, 0));
    assert_false(coll__shm_streams(&k, 64 * k.stream_min, 1));
}

/* The other collectives: CMA from 128K a rank where they have a CMA strategy. */
static void test_other_collectives(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 4, 0);
    const coll__kind with_cma[] = {COLL_KIND_ALLGATHER, COLL_KIND_REDUCESCATTER,
                                   COLL_KIND_BROADCAST, COLL_KIND_REDUCE, COLL_KIND_ALLTOALL};
    for (size_t i = 0; i < sizeof with_cma / sizeof with_cma[0]; i++) {
        shm_plan_in in = {.kind = with_cma[i], .n = 4, .cma = 1, .heaps = 1, .bytes = 128 * K - 4};
        assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_STAGE);
        in.bytes = 128 * K;
        assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_CMA);
        in.cma = 0;
        assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_STAGE);
    }
    shm_plan_in b = {.kind = COLL_KIND_BARRIER, .n = 4, .cma = 1, .bytes = M};
    assert_int_equal(coll__shm_plan(&b, &k), SHM_ENGINE_STAGE);
    shm_plan_in p = {.kind = COLL_KIND_P2P, .n = 4, .cma = 1, .bytes = M};
    assert_int_equal(coll__shm_plan(&p, &k), SHM_ENGINE_P2P);
    shm_plan_in one = {.kind = COLL_KIND_ALLGATHER, .n = 1, .cma = 1, .bytes = M};
    assert_int_equal(coll__shm_plan(&one, &k), SHM_ENGINE_STAGE);
}

/* The private window on 4 KiB pages shrinks on a small host, so that the
 * ranks' scratch (2x a rank's bytes each) stays within a quarter of its
 * memory; a value the user set stands. */
static void test_scratch_cap(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 6, 1);
    assert_int_equal(k.priv_plain_max, 512 * M);
    coll__shm_knobs_cap_scratch(&k, 6, 24ull << 30, 0, 0, 0, 0); /* 24 GiB, 6 ranks: 512M stands */
    assert_int_equal(k.priv_plain_max, 512 * M);
    coll__shm_knobs_cap_scratch(&k, 4, 8ull << 30, 0, 0, 0, 0); /* 8 GiB, 4 ranks: 256M */
    assert_int_equal(k.priv_plain_max, 256 * M);
    assert_int_equal(k.priv_plain_out_max, 256 * M);
    coll__shm_knobs_default(&k, 4, 1);
    coll__shm_knobs_cap_scratch(&k, 4, 8ull << 30, 1, 0, 0, 0); /* in place set by the user */
    assert_int_equal(k.priv_plain_max, 512 * M);
    assert_int_equal(k.priv_plain_out_max, 256 * M);
    coll__shm_knobs_default(&k, 4, 1);
    coll__shm_knobs_cap_scratch(&k, 4, 0, 0, 0, 0, 0); /* memory unknown */
    assert_int_equal(k.priv_plain_max, 512 * M);
    assert_int_equal(k.priv_plain_out_max, 512 * M);
    shm_plan_in in = {.kind = COLL_KIND_ALLREDUCE,
                      .n = 4,
                      .cma = 1,
                      .heaps = 1,
                      .arrived = 1,
                      .all_plain = 1,
                      .bytes = 300 * M};
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_PRIVATE);
    coll__shm_knobs_cap_scratch(&k, 4, 8ull << 30, 0, 0, 0, 0);
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_CMA);
}

/* The memory check's scratch (coll__shm_scratch_bound) is the plan's: the
 * largest size the private window takes, 2x it rounded up to 1 MiB, none
 * outside the window, without heaps or with a heap too small for it. */
static void test_scratch_bound(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 4, 1); /* window [4K, 1M), on 4 KiB pages to 512M */
    const uint64_t some[] = {8, 300 * K, 3 * M + 5, 600 * M};
    assert_int_equal(coll__shm_scratch_bound(&k, 4, some, 4), 8 * M); /* 3M+5 -> 2 x 4M */
    assert_int_equal(coll__shm_scratch_bound(&k, 4, some, 2), 2 * M); /* 300K -> 2 x 1M */
    assert_int_equal(coll__shm_scratch_bound(&k, 4, some, 1), 0);     /* below the window */
    assert_int_equal(coll__shm_scratch_bound(&k, 4, some + 3, 1), 0); /* above it */
    assert_int_equal(coll__shm_scratch_bound(&k, 1, some, 4), 0);     /* one rank */
    for (size_t i = 0; i < 4; i++) {
        shm_plan_in in = {.kind = COLL_KIND_ALLREDUCE,
                          .n = 4,
                          .cma = 1,
                          .heaps = 1,
                          .arrived = 1,
                          .all_plain = 1,
                          .bytes = some[i]};
        int priv = coll__shm_plan(&in, &k) == SHM_ENGINE_PRIVATE;
        assert_int_equal(coll__shm_scratch_bound(&k, 4, &some[i], 1) > 0, priv);
    }
    k.heap_bytes = 4 * M; /* 3M+5's 8M do not fit: the plan falls back */
    assert_int_equal(coll__shm_scratch_bound(&k, 4, some, 4), 2 * M);
    k.heap_bytes = 0;
    assert_int_equal(coll__shm_scratch_bound(&k, 4, some, 4), 0);
    coll__shm_knobs_default(&k, 2, 0); /* a core each: the core window, up to 4M */
    assert_int_equal(coll__shm_scratch_bound(&k, 2, some, 4), 8 * M); /* 3M+5's */
    k.priv_core_max = 0; /* as its probe leaves it where CMA wins */
    assert_int_equal(coll__shm_scratch_bound(&k, 2, some, 4), 0);
}

/* The environment moves a threshold; a bad value is refused by name. */
static void test_knobs_from_environment(void **state)
{
    (void)state;
    shm_knobs k;
    coll__err e;
    coll__err_init(&e, NULL, 0);
    setenv("COLL_SHM_PRIV_MAX", "4M", 1);
    assert_int_equal(coll__shm_knobs_read(&k, 4, 1, &e), COLL_OK);
    assert_int_equal(k.priv_max, 4 * M);
    assert_int_equal(k.priv_plain_max, 512 * M);
    shm_plan_in in = {.kind = COLL_KIND_ALLREDUCE, .n = 4, .cma = 1, .heaps = 1, .arrived = 1};
    in.bytes = 2 * M; /* huge pages: the window's top moved */
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_PRIVATE);
    setenv("COLL_SHM_PRIV_PLAIN_MAX", "8M", 1);
    assert_int_equal(coll__shm_knobs_read(&k, 4, 1, &e), COLL_OK);
    in.all_plain = in.any_in_place = in.all_in_place = 1; /* the variable's place */
    in.bytes = 8 * M - 4;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_PRIVATE);
    in.bytes = 8 * M;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_CMA);
    unsetenv("COLL_SHM_PRIV_PLAIN_MAX");
    unsetenv("COLL_SHM_PRIV_MAX");
    assert_int_equal(coll__shm_knobs_read(&k, 4, 0, &e), COLL_OK);
    assert_int_equal(k.priv_max, 0); /* a core per rank: no window */
    const char *bad[][2] = {{"COLL_SHM_CMA_MIN", "-1"},
                            {"COLL_SHM_CHUNK_BYTES", "1G"},
                            {"COLL_SHM_SPIN_US", "5K"},
                            {"COLL_SHM_CMA", "yes"},
                            {"COLL_SHM_DIRECT_MIN", "99999999999999999999"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i][0], bad[i][1], 1);
        coll__err_init(&e, NULL, 0);
        assert_int_equal(coll__shm_knobs_read(&k, 2, 0, &e), COLL_EINVAL);
        assert_non_null(strstr(e.msg, bad[i][0]));
        unsetenv(bad[i][0]);
    }
}

/* Each place has its own end of the window on 4 KiB pages; a call some ranks
 * make in place and others not takes the lower end, on every rank alike. */
static void test_window_per_place(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 4, 1);
    k.priv_plain_max = M; /* in place: CMA slices from 1 MiB */
    shm_plan_in base = {.kind = COLL_KIND_ALLREDUCE, .bytes = 10 * M, .n = 4, .cma = 1, .heaps = 1};
    shm_engine before;
    /* mine_in_heap 0, mine_plain 1, all_in_heap 0, all_plain 1, in place */
    assert_int_equal(run_plan(&base, &k, 0, 1, 0, 1, 1, &before), SHM_ENGINE_CMA);
    assert_int_equal(before, SHM_ENGINE_ARRIVE);
    assert_int_equal(run_plan(&base, &k, 0, 1, 0, 1, 0, &before), SHM_ENGINE_PRIVATE);
    assert_int_equal(before, SHM_ENGINE_ARRIVE_COPY);
    /* mixed: the out-of-place rank copied before the arrival; both take CMA */
    shm_plan_in in = base;
    in.mine_plain = 1;
    in.arrived = in.all_plain = in.any_in_place = 1;
    in.all_in_place = 0;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_CMA);
    k.priv_plain_max = 512 * M;
    k.priv_plain_out_max = M; /* the other way round */
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_CMA);
    in.all_in_place = 1;
    assert_int_equal(coll__shm_plan(&in, &k), SHM_ENGINE_PRIVATE);
    /* the memory check counts the wider of the two windows */
    const uint64_t ten = 10 * M;
    assert_int_equal(coll__shm_scratch_bound(&k, 4, &ten, 1), 20 * M);
    k.priv_plain_max = M;
    assert_int_equal(coll__shm_scratch_bound(&k, 4, &ten, 1), 0);
}

/* With a core per rank the private engine's window on 4 KiB pages is
 * [priv_core_min, priv_core_max) when open (by default up to 4M, where
 * set-up's probe finds it faster: shm_core_probe.h), in and out of place,
 * never on huge pages; shut, the plan is CMA's; the page kind is asked only
 * where it decides, and the memory check counts the window. */
static void test_core_window(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 2, 0);
    assert_int_equal(k.priv_core_max, 4 * M);
    assert_true(coll__shm_core_probe_wanted(&k, 2));
    assert_false(coll__shm_core_probe_wanted(&k, 1));
    k.core_probe = 0;
    assert_false(coll__shm_core_probe_wanted(&k, 2));
    k.priv_core_max = 0; /* shut, as set-up leaves it where the probe says CMA */
    k.priv_core_huge_max = k.priv_core_above_max = 0;
    shm_plan_in base = {.kind = COLL_KIND_ALLREDUCE, .bytes = M, .n = 2, .cma = 1, .heaps = 1};
    assert_false(coll__shm_asks_page_kind(&base, &k)); /* the defaults: one answer */
    shm_engine before;
    assert_int_equal(run_plan(&base, &k, 0, 1, 0, 1, 1, &before), SHM_ENGINE_CMA);
    k.priv_core_max = 4 * M;
    assert_true(coll__shm_asks_page_kind(&base, &k));
    for (int in_place = 0; in_place <= 1; in_place++) {
        assert_int_equal(run_plan(&base, &k, 0, 1, 0, 1, in_place, &before), SHM_ENGINE_PRIVATE);
        assert_int_equal(before, SHM_ENGINE_ARRIVE_COPY);
        /* huge pages, this rank's or a peer's: CMA */
        assert_int_equal(run_plan(&base, &k, 0, 0, 0, 0, in_place, &before), SHM_ENGINE_CMA);
        assert_int_equal(run_plan(&base, &k, 0, 1, 0, 0, in_place, &before), SHM_ENGINE_CMA);
    }
    shm_plan_in edge = base;
    edge.bytes = 4 * M; /* the end is excluded */
    assert_false(coll__shm_asks_page_kind(&edge, &k));
    assert_int_equal(run_plan(&edge, &k, 0, 1, 0, 1, 1, &before), SHM_ENGINE_CMA);
    edge.bytes = 16 * K; /* below the start: staging, as before */
    assert_int_equal(run_plan(&edge, &k, 0, 1, 0, 1, 1, &before), SHM_ENGINE_STAGE);
    /* buffers in this rank's heap are never asked about */
    edge = base;
    edge.mine_in_heap = 1;
    assert_false(coll__shm_asks_page_kind(&edge, &k));
    const uint64_t one = M;
    assert_int_equal(coll__shm_scratch_bound(&k, 2, &one, 1), 2 * M);
    /* a file's value (the tunable's scope) never opens it with more ranks than cores */
    coll__shm_knobs_default(&k, 4, 1);
    assert_int_equal(k.priv_core_min, 0);
    assert_int_equal(k.priv_core_max, 0);
    /* two CMA bounds that differ at this size make the page kind a question */
    coll__shm_knobs_default(&k, 2, 0);
    k.priv_core_max = k.priv_core_huge_max = k.priv_core_above_max = 0;
    assert_false(coll__shm_asks_page_kind(&base, &k));
    k.cma_allreduce_min = 1024 * M;
    assert_true(coll__shm_asks_page_kind(&base, &k));
    base.cma = 0;
    assert_false(coll__shm_asks_page_kind(&base, &k));
}

/* The window on huge pages: [priv_core_min, priv_core_huge_max), by default
 * 64K to 128K where its probe finds it faster, wherever some rank holds huge
 * pages, in and out of place; independent of the 4 KiB pages' window. */
static void test_core_huge_window(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 2, 0);
    assert_int_equal(k.priv_core_huge_max, 128 * K);
    k.priv_core_max = 0; /* the 4 KiB pages' window shut */
    shm_plan_in base = {.kind = COLL_KIND_ALLREDUCE, .bytes = 64 * K, .n = 2, .cma = 1, .heaps = 1};
    assert_true(coll__shm_asks_page_kind(&base, &k));
    shm_engine before;
    for (int in_place = 0; in_place <= 1; in_place++) {
        /* this rank's huge pages: its input goes to the scratch before the arrival */
        assert_int_equal(run_plan(&base, &k, 0, 0, 0, 0, in_place, &before), SHM_ENGINE_PRIVATE);
        assert_int_equal(before, SHM_ENGINE_ARRIVE_COPY);
        /* a peer's huge pages, this rank's 4 KiB ones: the same engine after the arrival */
        assert_int_equal(run_plan(&base, &k, 0, 1, 0, 0, in_place, &before), SHM_ENGINE_PRIVATE);
        /* every rank's in 4 KiB pages: not this window's */
        assert_int_not_equal(run_plan(&base, &k, 0, 1, 0, 1, in_place, &before),
                             SHM_ENGINE_PRIVATE);
    }
    shm_plan_in edge = base;
    edge.bytes = 128 * K; /* the end is excluded */
    assert_int_equal(run_plan(&edge, &k, 0, 0, 0, 0, 1, &before), SHM_ENGINE_CMA);
    assert_false(coll__shm_asks_page_kind(&edge, &k));
    edge.bytes = 32 * K; /* below the start: staging */
    assert_int_equal(run_plan(&edge, &k, 0, 0, 0, 0, 1, &before), SHM_ENGINE_STAGE);
    /* the memory check counts it */
    const uint64_t b = 64 * K;
    assert_int_equal(coll__shm_scratch_bound(&k, 2, &b, 1), 2 * M);
    /* shut, as its probe leaves it where the slices win: CMA */
    k.priv_core_huge_max = 0;
    assert_int_equal(run_plan(&base, &k, 0, 0, 0, 0, 1, &before), SHM_ENGINE_CMA);
    assert_int_equal(coll__shm_scratch_bound(&k, 2, &b, 1), 0);
    /* more ranks than cores: no such window (the oversubscribed one applies) */
    coll__shm_knobs_default(&k, 4, 1);
    assert_int_equal(k.priv_core_huge_max, 0);
}

/* The window above: [priv_core_above_min, priv_core_above_max), by default
 * 8M to 512M where its probe finds the private engine faster, on 4 KiB pages
 * and out of place only (in place the slices were as fast or faster at
 * 4-100 MiB in both of a VM's states); independent of the first window, and
 * counted by the memory check. */
static void test_core_above_window(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 2, 0);
    assert_int_equal(k.priv_core_above_min, 8 * M);
    assert_int_equal(k.priv_core_above_max, 512 * M);
    k.priv_core_max = k.priv_core_huge_max = 0; /* the other windows shut */
    shm_plan_in base = {.kind = COLL_KIND_ALLREDUCE, .bytes = 16 * M, .n = 2, .cma = 1, .heaps = 1};
    assert_true(coll__shm_asks_page_kind(&base, &k));
    shm_engine before;
    assert_int_equal(run_plan(&base, &k, 0, 1, 0, 1, 0, &before), SHM_ENGINE_PRIVATE);
    assert_int_equal(before, SHM_ENGINE_ARRIVE_COPY);
    /* some rank's huge pages, or in place: not this window's */
    assert_int_equal(run_plan(&base, &k, 0, 1, 0, 0, 0, &before), SHM_ENGINE_CMA);
    assert_int_equal(run_plan(&base, &k, 0, 1, 0, 1, 1, &before), SHM_ENGINE_CMA);
    assert_int_equal(before, SHM_ENGINE_ARRIVE);
    /* a call one rank makes in place: after the arrival both take the slices */
    shm_plan_in mixed = base;
    mixed.mine_plain = mixed.all_plain = mixed.arrived = 1;
    mixed.any_in_place = 1;
    assert_int_equal(coll__shm_plan(&mixed, &k), SHM_ENGINE_CMA);
    shm_plan_in edge = base;
    edge.bytes = 8 * M - 4; /* below its start, the first window shut: CMA */
    assert_int_equal(run_plan(&edge, &k, 0, 1, 0, 1, 0, &before), SHM_ENGINE_CMA);
    edge.bytes = 512 * M; /* its end is excluded */
    assert_int_equal(run_plan(&edge, &k, 0, 1, 0, 1, 0, &before), SHM_ENGINE_CMA);
    /* the memory check counts it; the memory cap shrinks it unless given */
    const uint64_t b = 16 * M;
    assert_int_equal(coll__shm_scratch_bound(&k, 2, &b, 1), 32 * M);
    coll__shm_knobs_cap_scratch(&k, 2, 1ull << 30, 0, 0, 0, 0); /* 1 GiB, 2 ranks: 64M */
    assert_int_equal(k.priv_core_above_max, 64 * M);
    k.priv_core_above_max = 512 * M;
    coll__shm_knobs_cap_scratch(&k, 2, 1ull << 30, 0, 0, 0, 1); /* given: it stands */
    assert_int_equal(k.priv_core_above_max, 512 * M);
    /* shut, as its probe leaves it where CMA wins */
    k.priv_core_above_max = 0;
    assert_int_equal(run_plan(&base, &k, 0, 1, 0, 1, 0, &before), SHM_ENGINE_CMA);
    assert_int_equal(coll__shm_scratch_bound(&k, 2, &b, 1), 0);
    /* more ranks than cores: no such window */
    coll__shm_knobs_default(&k, 4, 1);
    assert_int_equal(k.priv_core_above_max, 0);
}

/* run_plan for a call this rank makes nonblocking or not (mine_nb), beside
 * peers of which some made it nonblocking (any_nb) and whose posts say plain
 * or not (all_plain); in place, private buffers in 4 KiB pages. */
static shm_engine run_nb(const shm_plan_in *base, const shm_knobs *k, int mine_nb, int any_nb,
                         int all_plain, shm_engine *before)
{
    shm_plan_in in = *base;
    in.mine_nonblocking = mine_nb;
    in.any_nonblocking = any_nb;
    return run_plan(&in, k, 0, 1, 0, all_plain, 1, before);
}

/* A nonblocking all-reduce from nonblocking_cma_min on 4 KiB pages takes the
 * CMA slices where the plan copies through the shared heap; a blocking one,
 * one on huge pages, or one some rank makes blocking keeps those engines. */
static void test_nonblocking(void **state)
{
    (void)state;
    shm_knobs k;
    coll__shm_knobs_default(&k, 2, 0);
    assert_int_equal(k.nonblocking_cma_min, 4 * M);
    /* the band above staged on both page kinds, as its probes may leave it */
    k.cma_allreduce_min = k.cma_huge_min = SIZE_MAX;
    k.priv_core_above_max = 0;
    shm_plan_in base = {.kind = COLL_KIND_ALLREDUCE, .bytes = 16 * M, .n = 2, .cma = 1, .heaps = 1};
    shm_engine before;
    assert_int_equal(run_nb(&base, &k, 0, 0, 1, &before), SHM_ENGINE_STAGE);
    assert_int_equal(before, SHM_ENGINE_ARRIVE);
    assert_int_equal(run_nb(&base, &k, 1, 1, 1, &before), SHM_ENGINE_CMA);
    assert_int_equal(before, SHM_ENGINE_ARRIVE);
    /* a peer's huge pages: staged as the blocking call is */
    assert_int_equal(run_nb(&base, &k, 1, 1, 0, &before), SHM_ENGINE_STAGE);
    /* a call one rank makes blocking: that rank posts no page kind, both stage */
    assert_int_equal(run_nb(&base, &k, 0, 1, 1, &before), SHM_ENGINE_STAGE);
    assert_int_equal(run_nb(&base, &k, 1, 1, 0, &before), SHM_ENGINE_STAGE);
    /* below the bound, the core window's private engine as for a blocking call */
    shm_plan_in edge = base;
    edge.bytes = 4 * M - 4;
    assert_int_equal(run_nb(&edge, &k, 1, 1, 1, &before), SHM_ENGINE_PRIVATE);
    assert_int_equal(before, SHM_ENGINE_ARRIVE_COPY);
    edge.bytes = 4 * M;
    assert_int_equal(run_nb(&edge, &k, 1, 1, 1, &before), SHM_ENGINE_CMA);
    /* the bound given higher, or no CMA: as blocking */
    k.nonblocking_cma_min = 32 * M;
    assert_int_equal(run_nb(&base, &k, 1, 1, 1, &before), SHM_ENGINE_STAGE);
    k.nonblocking_cma_min = 4 * M;
    edge = base;
    edge.cma = 0;
    assert_int_equal(run_nb(&edge, &k, 1, 1, 1, &before), SHM_ENGINE_STAGE);
    /* more ranks than cores: the slices instead of the private engine's plain copies */
    coll__shm_knobs_default(&k, 4, 1);
    base.n = 4;
    assert_int_equal(run_nb(&base, &k, 0, 0, 1, &before), SHM_ENGINE_PRIVATE);
    assert_int_equal(run_nb(&base, &k, 1, 1, 1, &before), SHM_ENGINE_CMA);
    assert_int_equal(before, SHM_ENGINE_ARRIVE);
    /* other collectives never ask */
    base.kind = COLL_KIND_ALLGATHER;
    base.mine_nonblocking = 1;
    assert_false(coll__shm_asks_page_kind(&base, &k));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allreduce_grid),    cmocka_unit_test(test_without_cma),
        cmocka_unit_test(test_without_heaps),     cmocka_unit_test(test_before_arrival),
        cmocka_unit_test(test_no_scratch),        cmocka_unit_test(test_whole_window_more_ranks),
        cmocka_unit_test(test_other_collectives), cmocka_unit_test(test_knobs_from_environment),
        cmocka_unit_test(test_scratch_cap),       cmocka_unit_test(test_scratch_bound),
        cmocka_unit_test(test_cma_per_page_kind), cmocka_unit_test(test_streams),
        cmocka_unit_test(test_window_per_place),  cmocka_unit_test(test_core_window),
        cmocka_unit_test(test_core_huge_window),  cmocka_unit_test(test_core_above_window),
        cmocka_unit_test(test_nonblocking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
