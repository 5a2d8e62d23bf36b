/* What collbench tune measures, and how the medians choose: see cmd_tune.h. The
 * decisions are shm all-reduce's (src/backend/shm/shm_plan.c), on the buffer
 * kinds bench/floor.sh compares: private 4 KiB pages (malloc), private huge
 * pages (thp; process_vm_readv's cost per page differs by kernel and host:
 * issue 53), and coll_alloc'd memory (coll), in place unless a group says
 * otherwise (whole-input reads and streaming stores run out of place only);
 * and tcp's algorithm crossovers
 * (src/algo/select.c's table, the tcp backend's COLL_TCP_*_MIN), where
 * latency-bound sizes take more iterations. */
#include "cmd_tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIB 1024ull
#define MIB (KIB * KIB)

static const tune_decision full[] = {
    {.knob = "COLL_SHM_CMA_ALLREDUCE_MIN",
     .what = "CMA slices or staging through the shared segment, private buffers",
     .kind = TUNE_THRESHOLD,
     .narms = 2,
     .arms = {NULL, "1024G"},
     .ngroups = 2,
     .groups = {{2, "malloc", 0}, {4, "malloc", 0}},
     .nsizes = 4,
     .sizes = {64 * KIB, MIB, 10 * MIB, 100 * MIB}},
    {.knob = "COLL_SHM_CMA_HUGE_MIN",
     .what = "the same on huge pages (process_vm_readv's cost per page differs there)",
     .kind = TUNE_THRESHOLD,
     .narms = 2,
     .arms = {NULL, "1024G"},
     .ngroups = 2,
     .groups = {{2, "thp", 0}, {4, "thp", 0}},
     .nsizes = 4,
     .sizes = {64 * KIB, MIB, 10 * MIB, 100 * MIB}},
    {.knob = "COLL_SHM_PRIV_CORE_MAX",
     .what = "a core per rank, 4 KiB pages: copies through the shared heap up to it where "
             "set-up's probe finds them faster (default), never, or always up to 8M",
     .kind = TUNE_PICK,
     .narms = 3,
     .arms = {NULL, "0", "8M"},
     .ngroups = 2,
     .groups = {{2, "malloc", 0}, {2, "malloc", 1}},
     .nsizes = 4,
     .sizes = {64 * KIB, MIB, 4 * MIB, 10 * MIB}},
    {.knob = "COLL_SHM_PRIV_CORE_HUGE_MAX",
     .what = "the same on huge pages: up to it where set-up's probe finds copies faster "
             "(default), never, or always up to 128K",
     .kind = TUNE_PICK,
     .narms = 3,
     .arms = {NULL, "0", "128K"},
     .ngroups = 2,
     .groups = {{2, "thp", 0}, {2, "thp", 1}},
     .nsizes = 1,
     .sizes = {64 * KIB}},
    {.knob = "COLL_SHM_CMA_WHOLE_MAX",
     .what = "whole inputs read with CMA, 2 ranks out of place (0: never)",
     .kind = TUNE_PICK,
     .narms = 3,
     .arms = {NULL, "0", "1M"},
     .ngroups = 2,
     .groups = {{2, "malloc", 1}, {2, "thp", 1}},
     .nsizes = 3,
     .sizes = {64 * KIB, 192 * KIB, 512 * KIB}},
    {.knob = "COLL_SHM_PRIV_PLAIN_MAX",
     .what = "more ranks than cores, 4 KiB pages, in place: copies through the shared heap "
             "below it, CMA slices from it",
     .kind = TUNE_CEILING,
     .narms = 2,
     .arms = {NULL, "0"},
     .ngroups = 1,
     .groups = {{4, "malloc", 0}},
     .nsizes = 4,
     .sizes = {MIB, 10 * MIB, 32 * MIB, 100 * MIB}},
    {.knob = "COLL_SHM_PRIV_PLAIN_OUT_MAX",
     .what = "the same out of place",
     .kind = TUNE_CEILING,
     .narms = 2,
     .arms = {NULL, "0"},
     .ngroups = 1,
     .groups = {{4, "malloc", 1}},
     .nsizes = 4,
     .sizes = {MIB, 10 * MIB, 32 * MIB, 100 * MIB}},
    {.knob = "COLL_SHM_CHUNK_BYTES",
     .what = "CMA pipeline chunk",
     .kind = TUNE_PICK,
     .narms = 3,
     .arms = {NULL, "64K", "1M"},
     .ngroups = 3,
     .groups = {{2, "malloc", 0}, {2, "thp", 0}, {4, "thp", 0}},
     .nsizes = 3,
     .sizes = {MIB, 10 * MIB, 100 * MIB}},
    {.knob = "COLL_SHM_STREAM_MIN",
     .what = "streaming stores in direct all-reduce out of place, coll_alloc'd buffers",
     .kind = TUNE_PICK,
     .narms = 3,
     .arms = {NULL, "4M", "1024G"},
     .ngroups = 2,
     .groups = {{2, "coll", 1}, {4, "coll", 1}},
     .nsizes = 3,
     .sizes = {MIB, 10 * MIB, 100 * MIB}},
    {.knob = "COLL_TCP_PAIR_RING_MIN",
     .what = "tcp all-reduce of 2 ranks: one exchange, or the pipelined pair",
     .backend = "tcp",
     .iters = 200,
     .warmup = 20,
     .kind = TUNE_PICK,
     .narms = 4,
     .arms = {NULL, "1K", "16K", "64K"},
     .ngroups = 1,
     .groups = {{2, "malloc", 0}},
     .nsizes = 4,
     .sizes = {KIB, 4 * KIB, 16 * KIB, 64 * KIB}},
    {.knob = "COLL_TCP_ALLREDUCE_RHD_MIN",
     .what = "tcp all-reduce of 3+ ranks: recursive doubling, or Rabenseifner",
     .backend = "tcp",
     .iters = 100,
     .warmup = 10,
     .kind = TUNE_PICK,
     .narms = 4,
     .arms = {NULL, "8K", "128K", "512K"},
     .ngroups = 1,
     .groups = {{4, "malloc", 0}},
     .nsizes = 4,
     .sizes = {8 * KIB, 32 * KIB, 128 * KIB, 512 * KIB}},
    {.knob = "COLL_TCP_ALLREDUCE_RING_MIN",
     .what = "tcp all-reduce of 3+ ranks: Rabenseifner, or the ring",
     .backend = "tcp",
     .iters = 20,
     .warmup = 3,
     .kind = TUNE_PICK,
     .narms = 4,
     .arms = {NULL, "256K", "4M", "16M"},
     .ngroups = 1,
     .groups = {{4, "malloc", 0}},
     .nsizes = 4,
     .sizes = {256 * KIB, MIB, 4 * MIB, 16 * MIB}},
};

/* The same path on tiny sizes: a test's seconds, not a measurement. */
static const tune_decision quick[] = {
    {.knob = "COLL_SHM_CMA_ALLREDUCE_MIN",
     .what = "CMA slices or staging through the shared segment, private buffers",
     .kind = TUNE_THRESHOLD,
     .narms = 2,
     .arms = {NULL, "1024G"},
     .ngroups = 1,
     .groups = {{2, "malloc", 0}},
     .nsizes = 2,
     .sizes = {4 * KIB, 64 * KIB}},
    {.knob = "COLL_SHM_CHUNK_BYTES",
     .what = "CMA pipeline chunk",
     .kind = TUNE_PICK,
     .narms = 2,
     .arms = {NULL, "64K"},
     .ngroups = 1,
     .groups = {{2, "malloc", 0}},
     .nsizes = 1,
     .sizes = {256 * KIB}},
    {.knob = "COLL_TCP_PAIR_RING_MIN",
     .what = "tcp all-reduce of 2 ranks: one exchange, or the pipelined pair",
     .backend = "tcp",
     .kind = TUNE_PICK,
     .narms = 2,
     .arms = {NULL, "1K"},
     .ngroups = 1,
     .groups = {{2, "malloc", 0}},
     .nsizes = 2,
     .sizes = {KIB, 4 * KIB}},
};

size_t cmd_tune_plan(tune_decision *out, size_t cap, int quick_mode)
{
    const tune_decision *src = quick_mode ? quick : full;
    size_t n = quick_mode ? sizeof quick / sizeof quick[0] : sizeof full / sizeof full[0];
    memcpy(out, src, (n < cap ? n : cap) * sizeof *out);
    return n;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over the rounds of one cell, and its rounds' relative range. */
static double cell(const tune_decision *d, int a, int g, int s, double *range)
{
    double v[TUNE_MAX_ROUNDS];
    int n = 0;
    for (int r = 0; r < d->rounds; r++)
        if (d->us[r][a][g][s] > 0) v[n++] = d->us[r][a][g][s];
    if (n == 0) return *range = 0, 0;
    qsort(v, (size_t)n, sizeof v[0], by_value);
    double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    *range = (v[n - 1] - v[0]) / m;
    return m;
}

static void size_text(uint64_t b, char *buf, size_t len)
{
    if (b >= MIB && b % MIB == 0) snprintf(buf, len, "%llu MiB", (unsigned long long)(b / MIB));
    else if (b >= KIB && b % KIB == 0)
        snprintf(buf, len, "%llu KiB", (unsigned long long)(b / KIB));
    else snprintf(buf, len, "%llu B", (unsigned long long)b);
}

/* A candidate: per cell, the arm whose time it gets. */
typedef struct candidate {
    int arm_of[TUNE_MAX_GROUPS][TUNE_MAX_SIZES];
} candidate;

/* Its gain over the default (geometric mean of default / its time over the
 * cells: what ranks the candidates), the same over the cells where it runs
 * another way (*changed_gain: what must stand out of the noise, so that a
 * crossover that changes one cell of four is not diluted by three equal
 * ones), the noise there (the median of the rounds' ranges, at least
 * TUNE_NOISE) and the cell that gains most. */
static double judge(const tune_decision *d, const candidate *c, double *changed_gain, double *noise,
                    int *bg, int *bs)
{
    double logsum = 0, changed_log = 0, ranges[TUNE_MAX_GROUPS * TUNE_MAX_SIZES * 2], best = 0;
    int cells = 0, nr = 0;
    for (int g = 0; g < d->ngroups; g++)
        for (int s = 0; s < d->nsizes; s++) {
            double r0, r1, t0 = cell(d, 0, g, s, &r0), t = cell(d, c->arm_of[g][s], g, s, &r1);
            if (t0 <= 0 || t <= 0) continue;
            logsum += log(t0 / t);
            cells++;
            if (c->arm_of[g][s] == 0) continue;
            changed_log += log(t0 / t);
            ranges[nr++] = r0, ranges[nr++] = r1;
            if (t0 / t > best) best = t0 / t, *bg = g, *bs = s;
        }
    qsort(ranges, (size_t)nr, sizeof ranges[0], by_value);
    *noise = nr ? ranges[nr / 2] : 0;
    if (*noise < TUNE_NOISE) *noise = TUNE_NOISE;
    *changed_gain = nr ? exp(changed_log / (nr / 2)) : 1;
    return cells ? exp(logsum / cells) : 1;
}

/* The candidate's gain within each round alone (geometric mean over the cells
 * where it differs from the default): both ways ran side by side there, so a
 * machine that drifts between rounds moves both. 1 when every round's is
 * above 1. */
static int faster_every_round(const tune_decision *d, const candidate *c)
{
    for (int r = 0; r < d->rounds; r++) {
        double logsum = 0;
        int cells = 0;
        for (int g = 0; g < d->ngroups; g++)
            for (int s = 0; s < d->nsizes; s++) {
                int a = c->arm_of[g][s];
                double t0 = d->us[r][0][g][s], t = d->us[r][a][g][s];
                if (a == 0 || t0 <= 0 || t <= 0) continue;
                logsum += log(t0 / t);
                cells++;
            }
        if (cells == 0 || logsum <= 0) return 0;
    }
    return 1;
}

/* The size index at which candidate k of a crossover or an end changes
 * way: THRESHOLD runs arm 1 below it, CEILING from it on. */
static int cut(const tune_decision *d, int k)
{
    return d->kind == TUNE_THRESHOLD ? k : d->nsizes - k;
}

void cmd_tune_choose(const tune_decision *d, int *changed, char *value, size_t valuelen, char *why,
                     size_t whylen)
{
    *changed = 0;
    value[0] = 0;
    if (d->rounds < 2) {
        snprintf(why, whylen, "%d round%s in the budget, 2 needed", d->rounds,
                 d->rounds == 1 ? "" : "s");
        return;
    }
    /* candidates: PICK, one per arm; THRESHOLD, arm 1 below each size;
     * CEILING, arm 1 from each size on (k = 1: the last size alone) */
    int ncand = d->kind == TUNE_PICK ? d->narms : d->nsizes + 1;
    /* the best alternative, also when all are slower: the message says by how much */
    double best_total = 0, best_gain = 0, best_noise = TUNE_NOISE;
    int best = 0, bg = 0, bs = 0, every_round = 0;
    for (int k = 1; k < ncand; k++) {
        candidate c;
        for (int g = 0; g < d->ngroups; g++)
            for (int s = 0; s < d->nsizes; s++)
                c.arm_of[g][s] = d->kind == TUNE_PICK        ? k
                                 : d->kind == TUNE_THRESHOLD ? s < cut(d, k)
                                                             : s >= cut(d, k);
        double noise, gain;
        int g = 0, s = 0;
        double total = judge(d, &c, &gain, &noise, &g, &s);
        if (best == 0 || total > best_total) {
            best_total = total, best_gain = gain, best_noise = noise, best = k, bg = g, bs = s;
            every_round = faster_every_round(d, &c);
        }
    }
    /* Beyond noise: above the rounds' spread, or, where the machine drifts
     * between rounds more than the gain, faster beside the default in every
     * one of TUNE_PAIRED_ROUNDS or more rounds (a sign test: 1 in 16 or less
     * by chance) and by more than TUNE_NOISE. */
    int paired = best && d->rounds >= TUNE_PAIRED_ROUNDS && every_round &&
                 best_gain > 1 + TUNE_NOISE && best_gain <= 1 + best_noise;
    if (best == 0 || (best_gain <= 1 + best_noise && !paired)) {
        snprintf(why, whylen, "no other value faster beyond noise (best %.2fx, noise %.0f%%)",
                 best_gain, best_noise * 100);
        return;
    }
    int arm = d->kind == TUNE_PICK ? best : 1;
    if (d->kind == TUNE_PICK || (d->kind == TUNE_THRESHOLD && best == d->nsizes))
        snprintf(value, valuelen, "%s", d->arms[arm]);
    else {
        uint64_t v = d->sizes[cut(d, best)];
        if (v >= MIB && v % MIB == 0)
            snprintf(value, valuelen, "%lluM", (unsigned long long)(v / MIB));
        else snprintf(value, valuelen, "%lluK", (unsigned long long)(v / KIB));
    }
    double r, t0 = cell(d, 0, bg, bs, &r), t1 = cell(d, arm, bg, bs, &r);
    char sz[32];
    size_text(d->sizes[bs], sz, sizeof sz);
    char paired_text[64] = "";
    if (paired)
        snprintf(paired_text, sizeof paired_text, ", faster in each of %d rounds", d->rounds);
    snprintf(
        why, whylen,
        "%s %d ranks %s%s: %.0f -> %.0f us, %.2fx; %.2fx over the cells it changes, noise %.0f%%%s",
        sz, d->groups[bg].ranks, d->groups[bg].buffers, tune_place(&d->groups[bg]), t0, t1, t0 / t1,
        best_gain, best_noise * 100, paired_text);
    *changed = 1;
}
