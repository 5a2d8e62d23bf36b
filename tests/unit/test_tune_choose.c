/* collbench tune's choice from its medians (tools/collbench/cmd_tune_plan.c):
 * the faster value where it is faster beyond noise, the default otherwise or
 * with fewer than 2 rounds; a crossover at the size from which the default's
 * way wins. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cmd_tune.h"

/* A decision of arms x 1 group x sizes, rounds rounds; time(arm, size). */
static void fill(tune_decision *d, tune_kind kind, int narms, int nsizes, int rounds,
                 double (*time)(int arm, int size, int round))
{
    memset(d, 0, sizeof *d);
    d->knob = "COLL_SHM_CHUNK_BYTES";
    d->kind = kind;
    d->narms = narms;
    d->arms[0] = NULL, d->arms[1] = "64K", d->arms[2] = "1M";
    if (kind == TUNE_THRESHOLD) d->arms[1] = "1024G";
    d->ngroups = 1;
    d->groups[0].ranks = 2, d->groups[0].buffers = "thp";
    d->nsizes = nsizes;
    for (int s = 0; s < nsizes; s++) d->sizes[s] = (uint64_t)1 << (16 + 4 * s); /* 64K, 1M, 16M */
    d->rounds = rounds;
    for (int r = 0; r < rounds; r++)
        for (int a = 0; a < narms; a++)
            for (int s = 0; s < nsizes; s++) d->us[r][a][0][s] = time(a, s, r);
}

static double arm2_faster(int arm, int size, int round)
{
    (void)size;
    return (arm == 2 ? 50.0 : 100.0) + round; /* 2x, ranges 1% */
}
static double level(int arm, int size, int round)
{
    (void)size;
    return 100.0 + arm + (round % 2) * 3; /* within 5% */
}
static double noisy(int arm, int size, int round)
{
    (void)size;
    return arm == 1 ? (round % 2 ? 40 : 160) : 100.0; /* a 4x range */
}
/* arm 1 1.25x faster beside the default in every round, the machine 1.6x
 * slower in odd rounds: the rounds' spread (60%) hides the gain */
static double drifting(int arm, int size, int round)
{
    (void)size;
    return (arm == 1 ? 80.0 : 100.0) * (round % 2 ? 1.6 : 1.0);
}
/* the same, but one round of five the other way */
static double drifting_once_slower(int arm, int size, int round)
{
    return round == 3 ? (arm == 1 ? 170.0 : 160.0) : drifting(arm, size, round);
}
static double others_slower(int arm, int size, int round)
{
    (void)size, (void)round;
    return arm == 0 ? 100 : 200;
}
/* CMA (arm 0) loses below 1 MiB, wins from there on */
static double crossover(int arm, int size, int round)
{
    (void)round;
    if (size == 0) return arm == 0 ? 200 : 100;
    return arm == 0 ? 100 : 200;
}
static double stage_always(int arm, int size, int round)
{
    (void)size, (void)round;
    return arm == 0 ? 300 : 100;
}

static void picks_the_faster_beyond_noise(void **state)
{
    (void)state;
    tune_decision d;
    int changed;
    char value[64], why[512];
    fill(&d, TUNE_PICK, 3, 2, 3, arm2_faster);
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 1);
    assert_string_equal(value, "1M");
    assert_non_null(strstr(why, "2 ranks thp"));
    assert_non_null(strstr(why, "us"));
}

static void keeps_the_default_within_noise(void **state)
{
    (void)state;
    tune_decision d;
    int changed;
    char value[64], why[512];
    fill(&d, TUNE_PICK, 3, 2, 4, level);
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 0);
    fill(&d, TUNE_PICK, 2, 2, 4, noisy);
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 0);
    assert_non_null(strstr(why, "noise"));
    /* every alternative slower: kept, saying by how much */
    fill(&d, TUNE_PICK, 3, 2, 3, others_slower);
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 0);
    assert_non_null(strstr(why, "best 0.50x"));
    /* one round is no comparison */
    fill(&d, TUNE_PICK, 3, 2, 1, arm2_faster);
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 0);
    assert_non_null(strstr(why, "2 needed"));
}

/* A gain inside the rounds' spread counts when every round of 4 or more
 * shows it beside the default, and only then. */
static void takes_a_gain_every_round_shows(void **state)
{
    (void)state;
    tune_decision d;
    int changed;
    char value[64], why[512];
    fill(&d, TUNE_PICK, 2, 2, 5, drifting);
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 1);
    assert_string_equal(value, "64K");
    assert_non_null(strstr(why, "faster in each of 5 rounds"));
    fill(&d, TUNE_PICK, 2, 2, 3, drifting); /* 3 rounds: too few to say */
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 0);
    fill(&d, TUNE_PICK, 2, 2, 5, drifting_once_slower);
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 0);
    fill(&d, TUNE_PICK, 2, 2, 6, noisy); /* alternately 2.5x faster and slower */
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 0);
}

static void finds_the_crossover(void **state)
{
    (void)state;
    tune_decision d;
    int changed;
    char value[64], why[512];
    fill(&d, TUNE_THRESHOLD, 2, 3, 2, crossover);
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 1);
    assert_string_equal(value, "1M"); /* the default's way from 1 MiB */
    assert_non_null(strstr(why, "64 KiB 2 ranks thp: 200 -> 100 us, 2.00x"));
    fill(&d, TUNE_THRESHOLD, 2, 3, 2, stage_always);
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 1);
    assert_string_equal(value, "1024G"); /* the other way at every size */
}

/* The private engine (arm 0) wins up to 1 MiB, CMA (arm 1) from 16 MiB by
 * 1.25x, within every round's 20% drift: one cell of three changes. */
static double ceiling(int arm, int size, int round)
{
    double drift = round % 2 ? 1.2 : 1.0;
    if (size < 2) return (arm == 0 ? 100 : 150) * drift;
    return (arm == 0 ? 125 : 100) * drift;
}

static void finds_the_ceiling(void **state)
{
    (void)state;
    tune_decision d;
    int changed;
    char value[64], why[512];
    fill(&d, TUNE_CEILING, 2, 3, 3, ceiling);
    d.arms[1] = "0";
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 1);
    assert_string_equal(value, "16M"); /* the default's way below 16 MiB */
    /* judged where it changes the plan: 1.25x, not diluted to 1.08x */
    assert_non_null(strstr(why, "16 MiB 2 ranks thp: 125 -> 100 us, 1.25x; 1.25x over the cells"));
    fill(&d, TUNE_CEILING, 2, 3, 3, stage_always);
    d.arms[1] = "0";
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 1);
    assert_string_equal(value, "64K"); /* the other way from the smallest size measured */
    fill(&d, TUNE_CEILING, 2, 3, 4, level);
    cmd_tune_choose(&d, &changed, value, sizeof value, why, sizeof why);
    assert_int_equal(changed, 0);
}

static void plans_fit_the_limits(void **state)
{
    (void)state;
    static tune_decision ds[TUNE_MAX_DECISIONS];
    for (int quick = 0; quick < 2; quick++) {
        size_t n = cmd_tune_plan(ds, TUNE_MAX_DECISIONS, quick);
        assert_true(n >= 2 && n <= TUNE_MAX_DECISIONS);
        for (size_t i = 0; i < n; i++) {
            assert_true(ds[i].narms >= 2 && ds[i].narms <= TUNE_MAX_ARMS);
            assert_null(ds[i].arms[0]); /* the default first */
            assert_true(ds[i].ngroups >= 1 && ds[i].ngroups <= TUNE_MAX_GROUPS);
            assert_true(ds[i].nsizes >= 1 && ds[i].nsizes <= TUNE_MAX_SIZES);
            assert_int_equal(ds[i].rounds, 0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(picks_the_faster_beyond_noise),
        cmocka_unit_test(keeps_the_default_within_noise),
        cmocka_unit_test(takes_a_gain_every_round_shows),
        cmocka_unit_test(finds_the_crossover),
        cmocka_unit_test(finds_the_ceiling),
        cmocka_unit_test(plans_fit_the_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
