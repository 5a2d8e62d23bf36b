/* How a replay sums its ranks (src/replay/replay_report.c): total the slowest
 * rank's, communication, gaps and exposed communication the mean, class times
 * per rank, calls over all ranks, busbw from bytes x bus factor over time, the
 * recorded time only where every rank has it; the rows say the same; size
 * classes and gaps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "replay/replay_report.h"
#include "replay/replay_run.h"

static void two_ranks(replay_measure m[2])
{
    memset(m, 0, 2 * sizeof *m);
    m[0].total_s = 1.0, m[0].comm_s = 0.4, m[0].gap_s = 0.5, m[0].has_times = 1;
    m[1].total_s = 1.2, m[1].comm_s = 0.6, m[1].gap_s = 0.5, m[1].has_times = 1;
    m[0].recorded_comm_s = 0.2, m[1].recorded_comm_s = 0.4;
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
    assert_true(s.cell[REPLAY_ALLREDUCE][2].calls == 6);
    assert_true(s.cell[REPLAY_ALLREDUCE][2].busbytes == 8e8);
    m[1].has_times = 0; /* one rank without times: nothing recorded is shown */
    replay_summarize(m, 2, &s);
    assert_false(s.has_times);
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
    replay_turn turn = {"dir", "shm", 2, 2, "malloc", "recorded"};
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
    free(text);
    text = NULL;
    f = open_memstream(&text, &len);
    replay_print(f, &turn, &s);
    fclose(f);
    if (!strstr(text,
                "# replay of dir on shm (pass 2 of 2): 2 ranks, buffers malloc, gaps recorded") ||
        !strstr(text, "total 1200.000 ms   communication 500.000 ms") ||
        !strstr(text, "replayed/recorded 1.67") || !strstr(text, "allreduce   1M-16M        6"))
        fail_msg("table: %s", text);
    free(text);
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

static void test_gaps(void **state)
{
    (void)state;
    /* spun and slept gaps both last at least as long as asked */
    assert_true(replay_spend_gap(50e-6) >= 50e-6);
    assert_true(replay_spend_gap(2e-3) >= 2e-3);
    assert_true(replay_spend_gap(0) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summarize),
        cmocka_unit_test(test_rows_and_table),
        cmocka_unit_test(test_size_classes),
        cmocka_unit_test(test_gaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
