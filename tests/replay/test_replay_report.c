/* How a replay sums its ranks (src/replay/replay_report.c): total the slowest
 * rank's, communication, gaps and exposed communication the mean, class times
 * per rank, calls over all ranks, busbw from bytes x bus factor over time, the
 * recorded time only where every rank has it; the rows say the same; size
 * classes and gaps. The median of one call (src/replay/replay_median.c): each
 * call position's mean over the ranks that made it, the median over the
 * positions, per class, per collective and over the trace. A rank's time in
 * communication (src/replay/replay_busy.c): calls in flight at once count
 * once; of it, the time before a call's last rank arrived
 * (src/replay/replay_skew.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <math.h>

#include "replay/replay_busy.h"
#include "replay/replay_median.h"
#include "replay/replay_report.h"
#include "replay/replay_run.h"
#include "replay/replay_skew.h"

static void two_ranks(replay_measure m[2])
{
    memset(m, 0, 2 * sizeof *m);
    m[0].total_s = 1.0, m[0].comm_s = 0.4, m[0].gap_s = 0.5, m[0].has_times = 1;
    m[1].total_s = 1.2, m[1].comm_s = 0.6, m[1].gap_s = 0.5, m[1].has_times = 1;
    m[0].recorded_comm_s = 0.2, m[1].recorded_comm_s = 0.4;
    m[0].skew_s = 0.1, m[0].recorded_skew_s = 0.08, m[1].recorded_skew_s = 0.02;
    replay_cell *a = &m[0].cell[REPLAY_ALLREDUCE][2], *b = &m[1].cell[REPLAY_ALLREDUCE][2];
    a->calls = 3, a->time_s = 0.4, a->busbytes = 4e8, a->recorded_s = 0.2;
    b->calls = 3, b->time_s = 0.6, b->busbytes = 4e8, b->recorded_s = 0.4;
}

static void test_summarize(void **state)
{
    (void)state;
    replay_measure m[2];
    replay_summary s;
    two_ranks(m);
    replay_summarize(m, 2, &s);
    assert_true(s.total_s == 1.2);                             /* the slowest rank */
    assert_true(s.comm_s > 0.4999 && s.comm_s < 0.5001);       /* the mean */
    assert_true(s.exposed_s > 0.5999 && s.exposed_s < 0.6001); /* (0.5 + 0.7) / 2 */
    assert_true(s.has_times);
    assert_true(s.recorded_comm_s > 0.2999 && s.recorded_comm_s < 0.3001);
    assert_true(fabs(s.skew_s - 0.05) < 1e-12 && fabs(s.recorded_skew_s - 0.05) < 1e-12);
    assert_true(s.cell[REPLAY_ALLREDUCE][2].calls == 6);
    assert_true(s.cell[REPLAY_ALLREDUCE][2].busbytes == 8e8);
    m[1].has_times = 0;         /* one rank without times: nothing recorded is shown */
    m[1].recorded_skew_s = NAN; /* one rank's skew unknown: the turn's too */
    replay_summarize(m, 2, &s);
    assert_false(s.has_times);
    assert_true(isnan(s.recorded_skew_s) && fabs(s.skew_s - 0.05) < 1e-12);
}

static void test_rows_and_table(void **state)
{
    (void)state;
    replay_measure m[2];
    replay_summary s;
    char *text = NULL;
    size_t len = 0;
    two_ranks(m);
    replay_summarize(m, 2, &s);
    s.med.replayed[REPLAY_ALLREDUCE][2] = 0.05, s.med.recorded[REPLAY_ALLREDUCE][2] = 0.025;
    s.med.replayed[REPLAY_ALLREDUCE][REPLAY_MEDIAN_ALL] = 0.05;
    s.med.recorded[REPLAY_ALLREDUCE][REPLAY_MEDIAN_ALL] = 0.025;
    s.med.all_replayed = 0.05, s.med.all_recorded = 0.025;
    replay_turn turn = {"dir", "shm", 2, 2, "malloc", "recorded", "none", "core", "recorded", 1};
    FILE *f = open_memstream(&text, &len);
    replay_rows_jsonl(f, &turn, &s);
    fclose(f);
    /* the summary row, then allreduce 1M-16M: time per rank 0.5 s, busbw 8e8 B / 1 s */
    if (!strstr(text, "\"collective\":\"all\",\"size_class\":\"all\",\"calls\":6,\"time_s\":0.5,"
                      "\"recorded_s\":0.3,\"ratio\":1.66666667,\"busbw_GBps\":0.8,\"total_s\":1.2"))
        fail_msg("summary row: %s", text);
    if (!strstr(text, "\"backend\":\"shm\",\"pass\":2,\"nprocs\":2,\"buffers\":\"malloc\""))
        fail_msg("turn fields: %s", text);
    if (!strstr(text, "\"collective\":\"allreduce\",\"size_class\":\"1M-16M\",\"calls\":6,"
                      "\"time_s\":0.5,\"recorded_s\":0.3,\"ratio\":1.66666667,\"busbw_GBps\":0.8,"
                      "\"total_s\":null"))
        fail_msg("class row: %s", text);
    if (!strstr(text, "\"exposed_s\":null,\"median_s\":0.05,\"recorded_median_s\":0.025,"
                      "\"overlap\":\"none\",\"bind\":\"core\",\"skew_s\":null,"
                      "\"recorded_skew_s\":null}"))
        fail_msg("medians, overlap, bind and no skew in the class row: %s", text);
    if (!strstr(text, "\"bind\":\"core\",\"skew_s\":0.05,\"recorded_skew_s\":0.05}"))
        fail_msg("the skew in the summary row: %s", text);
    /* the collective overall: its classes together, size_class "all" */
    if (!strstr(text, "\"collective\":\"allreduce\",\"size_class\":\"all\",\"calls\":6,"
                      "\"time_s\":0.5,"))
        fail_msg("collective row: %s", text);
    free(text);
    text = NULL;
    f = open_memstream(&text, &len);
    replay_print(f, &turn, &s);
    fclose(f);
    if (!strstr(text,
                "# replay of dir on shm (pass 2 of 2): 2 ranks, buffers malloc, gaps recorded, "
                "overlap none, plan recorded, bind core") ||
        !strstr(text, "total 1200.000 ms   communication 500.000 ms") ||
        !strstr(text, "replayed/recorded 1.67") || !strstr(text, "allreduce   1M-16M        6") ||
        !strstr(text, "median: one call's time") || !strstr(text, "allreduce      all        6") ||
        !strstr(text, "50.0000     25.0000   2.00") ||
        !strstr(text, "before a call's last rank arrived: 50.000 ms (recorded 50.000 ms); after "
                      "it: 450.000 ms (recorded 250.000 ms)"))
        fail_msg("table: %s", text);
    free(text);
}

static void test_median_of(void **state)
{
    (void)state;
    double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};
    assert_true(replay_median_of(odd, 3) == 3);
    assert_true(replay_median_of(even, 4) == 2.5);
    assert_true(isnan(replay_median_of(even, 0)));
}

/* A rank's trace in memory: n allreduces of counts[i] float32 in one group of
 * two, call i recorded as rec[i] seconds; then one send (rank 0) or recv. */
static void trace_of(replay_trace *t, replay_group *g, replay_call *c, const uint64_t *counts,
                     const double *rec, size_t n, int rank)
{
    memset(t, 0, sizeof *t);
    memset(g, 0, sizeof *g);
    g->nranks = 2, g->my_rank = rank;
    for (size_t i = 0; i <= n; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].op = i < n ? REPLAY_ALLREDUCE : rank == 0 ? REPLAY_SEND : REPLAY_RECV;
        c[i].dtype = COLL_FLOAT32;
        c[i].count = i < n ? counts[i] : 16;
        c[i].peer = i < n ? -1 : 1 - rank;
        c[i].t0 = 1000000000ll * (int64_t)i;
        c[i].t1 = c[i].t0 + (int64_t)((i < n ? rec[i] : 1) * 1e9);
    }
    t->groups = g, t->ngroups = 1, t->calls = c, t->ncalls = n + 1, t->has_times = 1;
}

static void test_medians(void **state)
{
    (void)state;
    /* three small allreduces (<64K) and one of 4 MB (1M-16M) on each rank */
    const uint64_t counts[] = {1024, 1024, 1024, 1u << 20};
    const double rec0[] = {0.1, 0.2, 0.3, 1}, rec1[] = {0.3, 0.2, 0.1, 3};
    const double call0[] = {1, 2, 3, 10, 7}, call1[] = {3, 4, 5, 30, 9};
    replay_group g[2];
    replay_call c0[5], c1[5];
    replay_trace t[2];
    trace_of(&t[0], &g[0], c0, counts, rec0, 4, 0);
    trace_of(&t[1], &g[1], c1, counts, rec1, 4, 1);
    double n0[REPLAY_MEDIAN_CELLS], n1[REPLAY_MEDIAN_CELLS], maxc[REPLAY_MEDIAN_CELLS];
    replay_median_counts(&t[0], n0);
    replay_median_counts(&t[1], n1);
    assert_true(n0[REPLAY_ALLREDUCE * REPLAY_NSIZE + 0] == 3);
    assert_true(n0[REPLAY_ALLREDUCE * REPLAY_NSIZE + 2] == 1);
    assert_true(n0[REPLAY_SEND * REPLAY_NSIZE] == 1 && n1[REPLAY_SEND * REPLAY_NSIZE] == 0);
    for (int i = 0; i < REPLAY_MEDIAN_CELLS; i++) maxc[i] = n0[i] > n1[i] ? n0[i] : n1[i];
    size_t n = replay_median_positions(maxc);
    assert_int_equal(n, 6); /* 3 + 1 allreduce positions, a send, a recv */
    /* what the allreduce of the ranks' buffers adds up */
    double b0[18] = {0}, b1[18] = {0}, sum[18];
    replay_median_fill(&t[0], call0, maxc, b0);
    replay_median_fill(&t[1], call1, maxc, b1);
    for (int i = 0; i < 18; i++) sum[i] = b0[i] + b1[i];
    replay_medians m;
    assert_int_equal(replay_median_compute(sum, maxc, &m), 0);
    /* <64K: position means 2, 3, 4 -> 3; recorded 0.2, 0.2, 0.2 */
    assert_true(m.replayed[REPLAY_ALLREDUCE][0] == 3);
    assert_true(fabs(m.recorded[REPLAY_ALLREDUCE][0] - 0.2) < 1e-9);
    /* 1M-16M: one position, (10 + 30) / 2; recorded (1 + 3) / 2 */
    assert_true(m.replayed[REPLAY_ALLREDUCE][2] == 20);
    assert_true(fabs(m.recorded[REPLAY_ALLREDUCE][2] - 2) < 1e-9);
    /* allreduce overall: 2, 3, 4, 20 -> 3.5 (the sum per call would be 7.25) */
    assert_true(m.replayed[REPLAY_ALLREDUCE][REPLAY_MEDIAN_ALL] == 3.5);
    assert_true(isnan(m.replayed[REPLAY_ALLREDUCE][1]));
    /* a send only rank 0 made: its own time, not halved by the rank without it */
    assert_true(m.replayed[REPLAY_SEND][0] == 7 && m.replayed[REPLAY_RECV][0] == 9);
    assert_true(m.replayed[REPLAY_SEND][REPLAY_MEDIAN_ALL] == 7);
    assert_true(isnan(m.replayed[REPLAY_BARRIER][REPLAY_MEDIAN_ALL]));
    /* the trace: 2, 3, 4, 20, 7, 9 -> (4 + 7) / 2 */
    assert_true(m.all_replayed == 5.5);
    /* recorded: 0.2 x 3, 2, 1, 1 -> (0.2 + 1) / 2 */
    assert_true(fabs(m.all_recorded - 0.6) < 1e-9);
}

static void test_size_classes(void **state)
{
    (void)state;
    assert_int_equal(replay_size_class(0), 0);
    assert_int_equal(replay_size_class(65535), 0);
    assert_int_equal(replay_size_class(65536), 1);
    assert_int_equal(replay_size_class((1u << 20) - 1), 1);
    assert_int_equal(replay_size_class(1u << 20), 2);
    assert_int_equal(replay_size_class(16u << 20), 3);
    assert_string_equal(replay_size_class_name(3), ">=16M");
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_gaps(void **state)
{
    (void)state;
    /* spun and slept gaps both last at least as long as asked */
    assert_true(replay_spend_gap(50e-6, 0) >= 50e-6);
    assert_true(replay_spend_gap(2e-3, 0) >= 2e-3);
    assert_true(replay_spend_gap(0, 0) == 0);
    /* a busy gap holds the core (CPU time, however loaded the machine, well
     * above a sleep's); a long recorded one gives it away */
    double busy = thread_cpu_s(), slept;
    assert_true(replay_spend_gap(20e-3, 1) >= 20e-3);
    busy = thread_cpu_s() - busy;
    slept = thread_cpu_s();
    assert_true(replay_spend_gap(20e-3, 0) >= 20e-3);
    slept = thread_cpu_s() - slept;
    if (!(busy > 2e-3 && slept < 1e-3))
        fail_msg("CPU time: busy %.6f s, slept %.6f s", busy, slept);
    replay_gaps g;
    assert_int_equal(replay_gaps_parse("busy", &g), 0);
    assert_int_equal(g, REPLAY_GAPS_BUSY);
    assert_string_equal(replay_gaps_name(REPLAY_GAPS_NONE), "none");
    assert_int_equal(replay_gaps_parse("sometimes", &g), -1);
}

/* Overlapping calls count once, in any order; calls apart add up; one that
 * never ended (end <= start) adds nothing. */
static void test_busy(void **state)
{
    (void)state;
    /* [0,4) and [1,3) nested, [2,6) overlapping, [8,9) apart, [10,10) never ended */
    const double a[] = {2, 0, 8, 1, 10}, b[] = {6, 4, 9, 3, 10};
    assert_true(fabs(replay_busy(a, b, 5) - 7.0) < 1e-12);
    const double c[] = {0, 1, 2}, d[] = {1, 2, 3}; /* one after another: the sum */
    assert_true(fabs(replay_busy(c, d, 3) - 3.0) < 1e-12);
    assert_true(replay_busy(a, b, 0) == 0);
}

/* Of each call, the time before its last rank arrived: [0,5) with the last
 * arrival at 3 waits 3; [10,12) with its last rank there already, none; a
 * call whose last rank came after its end here (an inconsistent clock) counts
 * whole; a call in flight beside a waiting one counts its own time only where
 * nothing else was after its arrival. */
static void test_skew(void **state)
{
    (void)state;
    const double a[] = {0, 10}, b[] = {5, 12}, last[] = {3, 10};
    assert_true(fabs(replay_skew_of(a, b, last, 2) - 3.0) < 1e-12);
    const double late[] = {3, 20}; /* the second's last rank after its end */
    assert_true(fabs(replay_skew_of(a, b, late, 2) - 5.0) < 1e-12);
    /* [0,5) waits until 3; [1,4) in flight beside it, its last rank at 1:
     * after arrival the union is [1,5), so only [0,1) is skew */
    const double c[] = {0, 1}, d[] = {5, 4}, e[] = {3, 1};
    assert_true(fabs(replay_skew_of(c, d, e, 2) - 1.0) < 1e-12);
    assert_true(replay_skew_of(a, b, last, 0) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summarize),    cmocka_unit_test(test_rows_and_table),
        cmocka_unit_test(test_median_of),    cmocka_unit_test(test_medians),
        cmocka_unit_test(test_size_classes), cmocka_unit_test(test_gaps),
        cmocka_unit_test(test_busy),         cmocka_unit_test(test_skew),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
