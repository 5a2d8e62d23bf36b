/* The nccl-tests-style table: header block, column header, rows with one or
 * both placements, the average bus bandwidth and the wrong total. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rows/result.h"
#include "engine/table.h"

static bench_row cfg_row(void)
{
    bench_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.collective, sizeof r.collective, "allreduce");
    snprintf(r.backend, sizeof r.backend, "tcp");
    snprintf(r.algo, sizeof r.algo, "auto");
    snprintf(r.device, sizeof r.device, "cpu");
    snprintf(r.dtype, sizeof r.dtype, "float32");
    snprintf(r.op, sizeof r.op, "sum");
    snprintf(r.host, sizeof r.host, "box");
    r.nprocs = 4;
    r.nnodes = 1;
    r.warmup = 5;
    r.iters = 20;
    return r;
}

static bench_row result(uint64_t bytes, int in_place, double time_us, double busbw, int64_t wrong)
{
    bench_row r = cfg_row();
    r.bytes = bytes;
    r.count = bytes / 4;
    r.in_place = in_place;
    r.time_us_avg = time_us;
    r.time_us_min = time_us / 2;
    r.time_us_p50 = time_us;
    r.time_us_p99 = time_us * 2;
    r.time_us_max = time_us * 3;
    r.algbw_GBps = busbw / 1.5;
    r.busbw_GBps = busbw;
    r.wrong = wrong;
    return r;
}

struct capture {
    char *text;
    size_t len;
    FILE *f;
};

static void capture_open(struct capture *c)
{
    memset(c, 0, sizeof *c);
    c->f = open_memstream(&c->text, &c->len);
    assert_non_null(c->f);
}

static void capture_close(struct capture *c) { assert_int_equal(fclose(c->f), 0); }

/* Line number n (0-based) of text that starts with a non-'#' character: the rows. */
static char *data_line(const char *text, int n, char *buf, size_t len)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (*p != '#' && n-- == 0) {
            assert_true(l < len);
            memcpy(buf, p, l);
            buf[l] = '\0';
            return buf;
        }
        p += l + (nl ? 1 : 0);
    }
    fail_msg("no data line %d in:\n%s", n, text);
    return NULL;
}

static int split(char *line, char **tok, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " ", &save); t && n < max; t = strtok_r(NULL, " ", &save))
        tok[n++] = t;
    return n;
}

static void test_header_block(void **state)
{
    (void)state;
    struct capture c;
    capture_open(&c);
    bench_table t;
    bench_table_init(&t, c.f, 0);
    bench_row cfg = cfg_row();
    bench_table_print_header(&t, &cfg);
    capture_close(&c);
    assert_non_null(
        strstr(c.text, "#  collective allreduce, backend tcp, algo auto, 4 ranks, float32 sum\n"));
    assert_non_null(strstr(c.text, "warmup iters 5, iters 20"));
    assert_non_null(strstr(c.text, "#                                                              "
                                   "out-of-place                       in-place\n"
                                   "#       size         count      type   redop    root     time  "
                                   " algbw   busbw #wrong     time   algbw   busbw #wrong\n"
                                   "#        (B)    (elements)                               (us)  "
                                   "(GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"));
    free(c.text);
}

static void test_rows_average_and_wrong(void **state)
{
    (void)state;
    struct capture c;
    capture_open(&c);
    bench_table t;
    bench_table_init(&t, c.f, 0);
    bench_row cfg = cfg_row();
    bench_table_print_header(&t, &cfg);
    bench_row a = result(1048576, 0, 1.5, 1.0, 0), b = result(1048576, 1, 150.0, 2.0, 3);
    bench_row d = result(10485760, 0, 12345.6, 6.0, 2);
    bench_row e = result(104857600, 0, 20.0, 100.0, -1); /* not checked */
    bench_table_print_row(&t, &a, &b, -1);
    bench_table_print_row(&t, &d, NULL, -1);
    bench_table_print_row(&t, NULL, &e, 0);
    bench_table_print_footer(&t);
    capture_close(&c);

    char line[512], *tok[32];
    int n = split(data_line(c.text, 0, line, sizeof line), tok, 32);
    assert_int_equal(n, 13);
    const char *want0[] = {"1048576", "262144", "float32", "sum",  "-1",   "1.50", "0.67",
                           "1.00",    "0",      "150.0",   "1.33", "2.00", "3"};
    for (int i = 0; i < 13; i++) assert_string_equal(tok[i], want0[i]);

    n = split(data_line(c.text, 1, line, sizeof line), tok, 32);
    assert_int_equal(n, 13);
    assert_string_equal(tok[5], "12346"); /* large times lose their decimals, as in nccl-tests */
    assert_string_equal(tok[8], "2");
    for (int i = 9; i < 13; i++) assert_string_equal(tok[i], "-");

    n = split(data_line(c.text, 2, line, sizeof line), tok, 32);
    assert_int_equal(n, 13);
    assert_string_equal(tok[4], "0"); /* root */
    for (int i = 5; i < 9; i++) assert_string_equal(tok[i], "-");
    assert_string_equal(tok[11], "100.00");
    assert_string_equal(tok[12], "N/A");

    /* Mean over the four printed cells: (1 + 2 + 6 + 100) / 4. */
    assert_non_null(strstr(c.text, "# Avg bus bandwidth    : 27.25\n"));
    assert_non_null(strstr(c.text, "# Out of bounds values : 5 FAILED\n"));
    assert_true(bench_table_avg_busbw(&t) == 27.25);

    /* Columns line up with the header: every data line as long as the column header. */
    const char *hdr = strstr(c.text, "#       size");
    size_t hdr_len = strcspn(hdr, "\n");
    assert_int_equal(strlen(data_line(c.text, 0, line, sizeof line)), hdr_len);
    free(c.text);
}

static void test_header_resets_accumulators(void **state)
{
    (void)state;
    struct capture c;
    capture_open(&c);
    bench_table t;
    bench_table_init(&t, c.f, 0);
    bench_row cfg = cfg_row();
    bench_table_print_header(&t, &cfg);
    bench_row a = result(8, 0, 10, 50.0, 4);
    bench_table_print_row(&t, &a, NULL, -1);
    bench_table_print_footer(&t);
    bench_table_print_header(&t, &cfg);
    bench_row b = result(8, 0, 10, 0.5, 0);
    bench_table_print_row(&t, &b, &b, -1);
    bench_table_print_footer(&t);
    capture_close(&c);
    const char *second = strstr(c.text, "# Avg bus bandwidth    : 50\n");
    assert_non_null(second);
    assert_non_null(strstr(c.text, "# Out of bounds values : 4 FAILED\n"));
    assert_non_null(strstr(second, "# Out of bounds values : 0 OK\n"));
    assert_non_null(strstr(second, "# Avg bus bandwidth    : 0.5\n"));
    free(c.text);
}

static void test_verbose_columns(void **state)
{
    (void)state;
    struct capture c;
    capture_open(&c);
    bench_table t;
    bench_table_init(&t, c.f, 1);
    bench_row cfg = cfg_row();
    bench_table_print_header(&t, &cfg);
    bench_row a = result(4096, 0, 10.0, 1.0, 0);
    bench_table_print_row(&t, &a, NULL, -1);
    bench_table_print_note(&t, "fewer iterations at 1G");
    bench_table_print_footer(&t);
    capture_close(&c);

    assert_non_null(strstr(c.text, "p99"));
    assert_non_null(strstr(c.text, "# fewer iterations at 1G\n"));
    char line[512], *tok[32];
    int n = split(data_line(c.text, 0, line, sizeof line), tok, 32);
    assert_int_equal(n, 21);               /* 5 + 2 x (4 + 4) */
    assert_string_equal(tok[9], "5.00");   /* min */
    assert_string_equal(tok[10], "10.00"); /* p50 */
    assert_string_equal(tok[11], "20.00"); /* p99 */
    assert_string_equal(tok[12], "30.00"); /* max */
    for (int i = 13; i < 21; i++) assert_string_equal(tok[i], "-");
    const char *hdr = strstr(c.text, "#       size");
    assert_non_null(hdr);
    assert_int_equal(strlen(data_line(c.text, 0, line, sizeof line)), strcspn(hdr, "\n"));
    /* Both group labels sit above their columns. */
    const char *groups = strstr(c.text, "out-of-place");
    assert_non_null(groups);
    assert_non_null(strstr(groups, "in-place"));
    free(c.text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_block),
        cmocka_unit_test(test_rows_average_and_wrong),
        cmocka_unit_test(test_header_resets_accumulators),
        cmocka_unit_test(test_verbose_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
