/* CSV rows: exact header, round trip, field validation, and appends that never
 * lose or mix data (new file, second append, foreign header, bad path, full disk,
 * a write cut short). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rows/result.h"
#include "support/test_files.h"
#include "coll.h"
#include "core/atomic_file.h"

static const char *const EXPECTED_HEADER =
    "timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,in_place,bytes,"
    "count,warmup,iters,time_us_avg,time_us_min,time_us_p25,time_us_p50,time_us_p75,time_us_p99,"
    "time_us_max,algbw_GBps,busbw_GBps,wrong,pass";

static bench_row sample_row(int i)
{
    bench_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.timestamp, sizeof r.timestamp, "2026-11-22T03:04:%02dZ", i % 60);
    snprintf(r.host, sizeof r.host, "node-%d", i);
    snprintf(r.collective, sizeof r.collective, "%s", i % 2 ? "allgather" : "allreduce");
    snprintf(r.backend, sizeof r.backend, "tcp");
    snprintf(r.algo, sizeof r.algo, "ring");
    snprintf(r.device, sizeof r.device, "cpu");
    snprintf(r.buffers, sizeof r.buffers, "%s", i % 2 ? "coll" : "malloc");
    r.nprocs = 2 + i;
    r.nnodes = 1;
    snprintf(r.dtype, sizeof r.dtype, "float32");
    snprintf(r.op, sizeof r.op, "%s", i % 2 ? "none" : "sum");
    r.in_place = i & 1;
    r.bytes = (1ull << 20) << i;
    r.count = r.bytes / 4;
    r.warmup = 5;
    r.iters = 20;
    r.time_us_avg = (123456.0 + 1000.0 * i) /
                    1000.0; /* nearest double to 123.456+i, as strtod gives */
    r.time_us_min = 100.001;
    r.time_us_p25 = 110.25;
    r.time_us_p50 = 120.5;
    r.time_us_p75 = 130.75;
    r.time_us_p99 = 150.25;
    r.time_us_max = 160.125;
    r.algbw_GBps = 8.49347;
    r.busbw_GBps = (127402.0 + 10000.0 * i) / 10000.0;
    r.wrong = i == 3 ? 17 : 0;
    r.pass = 1 + i % 3;
    return r;
}

static void assert_rows_equal(const bench_row *a, const bench_row *b)
{
    assert_string_equal(a->timestamp, b->timestamp);
    assert_string_equal(a->host, b->host);
    assert_string_equal(a->collective, b->collective);
    assert_string_equal(a->backend, b->backend);
    assert_string_equal(a->algo, b->algo);
    assert_string_equal(a->device, b->device);
    assert_string_equal(a->buffers, b->buffers);
    assert_int_equal(a->nprocs, b->nprocs);
    assert_int_equal(a->nnodes, b->nnodes);
    assert_string_equal(a->dtype, b->dtype);
    assert_string_equal(a->op, b->op);
    assert_int_equal(a->in_place, b->in_place);
    assert_true(a->bytes == b->bytes);
    assert_true(a->count == b->count);
    assert_int_equal(a->warmup, b->warmup);
    assert_int_equal(a->iters, b->iters);
    assert_true(a->time_us_avg == b->time_us_avg);
    assert_true(a->time_us_min == b->time_us_min);
    assert_true(a->time_us_p25 == b->time_us_p25);
    assert_true(a->time_us_p50 == b->time_us_p50);
    assert_true(a->time_us_p75 == b->time_us_p75);
    assert_true(a->time_us_p99 == b->time_us_p99);
    assert_true(a->time_us_max == b->time_us_max);
    assert_true(a->algbw_GBps == b->algbw_GBps);
    assert_true(a->busbw_GBps == b->busbw_GBps);
    assert_true(a->wrong == b->wrong);
    assert_int_equal(a->pass, b->pass);
}

static void file_in(void **state, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", ((struct test_dir *)*state)->path, name);
}

static size_t count_entries(const char *dir)
{
    size_t n = 0;
    DIR *dh = opendir(dir);
    struct dirent *e;
    while (dh && (e = readdir(dh)))
        if (e->d_name[0] != '.') n++;
    if (dh) closedir(dh);
    return n;
}

static void test_header_is_the_schema(void **state)
{
    (void)state;
    assert_string_equal(BENCH_CSV_HEADER, EXPECTED_HEADER);
    bench_row r = sample_row(0);
    char line[1024];
    int len = bench_row_to_csv(&r, line, sizeof line);
    assert_true(len > 0);
    assert_int_equal((size_t)len, strlen(line));
    size_t commas = 0;
    for (const char *p = line; *p; p++) commas += *p == ',';
    assert_int_equal(commas, 26); /* 27 columns */
}

static void test_number_formats(void **state)
{
    (void)state;
    bench_row r = sample_row(0);
    r.time_us_avg = 12.3456789;
    r.busbw_GBps = 0.0000123456789; /* tiny sizes must not print as 0 */
    char line[1024];
    assert_true(bench_row_to_csv(&r, line, sizeof line) > 0);
    assert_non_null(strstr(line, ",1048576,262144,5,20,12.346,100.001,"));
    assert_non_null(strstr(line, ",1.23457e-05,0"));
    assert_non_null(
        strstr(line,
               "2026-11-22T03:04:00Z,node-0,allreduce,tcp,ring,cpu,malloc,2,1,float32,sum,0,"));
    assert_non_null(strstr(line, ",100.001,110.250,120.500,130.750,150.250,160.125,"));
}

static void test_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < 6; i++) {
        bench_row r = sample_row(i), back;
        if (i == 4) snprintf(r.host, sizeof r.host, "odd,\"host\""); /* needs quoting */
        if (i == 5) r.wrong = -1;                                    /* not checked */
        char line[1024], err[256] = "";
        assert_true(bench_row_to_csv(&r, line, sizeof line) > 0);
        memset(&back, 0xab, sizeof back);
        int rc = bench_row_from_csv(line, &back, err, sizeof err);
        if (rc != COLL_OK) fail_msg("'%s': %s", line, err);
        assert_rows_equal(&r, &back);
        /* A trailing CRLF (file written on another system) is accepted too. */
        strcat(line, "\r\n");
        assert_int_equal(bench_row_from_csv(line, &back, err, sizeof err), COLL_OK);
        assert_rows_equal(&r, &back);
    }
}

static void test_to_csv_too_small(void **state)
{
    (void)state;
    bench_row r = sample_row(0);
    char line[1024];
    int len = bench_row_to_csv(&r, line, sizeof line);
    assert_true(len > 10);
    assert_int_equal(bench_row_to_csv(&r, line, (size_t)len), -1); /* no room for the NUL */
    assert_int_equal(bench_row_to_csv(&r, line, (size_t)len + 1), len);
    snprintf(r.host, sizeof r.host, "two\nlines");
    assert_int_equal(bench_row_to_csv(&r, line, sizeof line), -1);
}

/* Replaces field idx (0-based) of a valid line with value, parses, and expects
 * an error naming the field. */
static void expect_field_error(int idx, const char *value, const char *field)
{
    bench_row r = sample_row(0), back;
    char line[1024], bad[1200] = "", err[256] = "";
    assert_true(bench_row_to_csv(&r, line, sizeof line) > 0);
    char *save = NULL;
    int i = 0;
    for (char *tok = strtok_r(line, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
        if (i) strcat(bad, ",");
        strcat(bad, i == idx ? value : tok);
    }
    assert_int_equal(bench_row_from_csv(bad, &back, err, sizeof err), COLL_EINVAL);
    if (!strstr(err, field)) fail_msg("'%s': message '%s' does not name %s", bad, err, field);
}

static void test_parse_validates_fields(void **state)
{
    (void)state;
    expect_field_error(7, "abc", "nprocs");
    expect_field_error(7, "0", "nprocs");
    expect_field_error(11, "2", "in_place");
    expect_field_error(12, "-5", "bytes");
    expect_field_error(12, "12x", "bytes");
    expect_field_error(12, "99999999999999999999999", "bytes");
    expect_field_error(13, "", "count");
    expect_field_error(15, " 20", "iters");
    expect_field_error(16, "1.2x", "time_us_avg");
    expect_field_error(18, "slow", "time_us_p25");
    expect_field_error(24, "fast", "busbw_GBps");
    expect_field_error(25, "1.5", "wrong");
    expect_field_error(26, "-1", "pass");
    expect_field_error(2, "a-collective-name-too-long", "collective");
    expect_field_error(6, "hugepages", "buffers");

    bench_row back;
    char err[512] = "";
    assert_int_equal(bench_row_from_csv("a,b,c", &back, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "3 fields, expected 27"));
    assert_int_equal(bench_row_from_csv(EXPECTED_HEADER, &back, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "nprocs"));
    bench_row r = sample_row(0);
    char line[1024];
    bench_row_to_csv(&r, line, sizeof line);
    strcat(line, ",extra");
    assert_int_equal(bench_row_from_csv(line, &back, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "28 fields"));
    assert_int_equal(bench_row_from_csv("\"unterminated,b", &back, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "timestamp"));
}

/* Every line of the file, parsed: header first, then rows in order. */
static void assert_file_rows(const char *path, const bench_row *rows, size_t n)
{
    char *text = test_slurp(path, NULL);
    assert_non_null(text);
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    assert_non_null(line);
    assert_string_equal(line, EXPECTED_HEADER);
    size_t i = 0;
    while ((line = strtok_r(NULL, "\n", &save))) {
        assert_true(i < n);
        bench_row back;
        char err[256];
        if (bench_row_from_csv(line, &back, err, sizeof err) != COLL_OK) fail_msg("%s", err);
        assert_rows_equal(&rows[i], &back);
        i++;
    }
    assert_int_equal(i, n);
    free(text);
}

static void test_append_new_then_again(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "results.csv", path, sizeof path);
    bench_row rows[5];
    for (int i = 0; i < 5; i++) rows[i] = sample_row(i);

    assert_int_equal(bench_csv_append(path, rows, 3, err, sizeof err), COLL_OK);
    assert_file_rows(path, rows, 3);
    assert_int_equal(bench_csv_append(path, rows + 3, 2, err, sizeof err), COLL_OK);
    assert_file_rows(path, rows, 5); /* one header, first rows kept, new ones after */
    assert_int_equal(count_entries(((struct test_dir *)*state)->path), 1); /* no temp files */
}

static void test_append_to_empty_file_writes_header(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "empty.csv", path, sizeof path);
    test_spit(path, "");
    bench_row r = sample_row(1);
    assert_int_equal(bench_csv_append(path, &r, 1, err, sizeof err), COLL_OK);
    assert_file_rows(path, &r, 1);
}

static void test_append_after_torn_line(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "torn.csv", path, sizeof path);
    bench_row r = sample_row(0);
    assert_int_equal(bench_csv_append(path, &r, 1, err, sizeof err), COLL_OK);
    FILE *f = fopen(path, "ab");
    fputs("2026-11-22T03", f); /* a writer that died mid-row */
    fclose(f);
    bench_row r2 = sample_row(2);
    assert_int_equal(bench_csv_append(path, &r2, 1, err, sizeof err), COLL_OK);
    char *text = test_slurp(path, NULL);
    char *last = strrchr(text, '\n');
    assert_non_null(last);
    *last = '\0';
    last = strrchr(text, '\n'); /* the new row starts on its own line */
    bench_row back;
    assert_int_equal(bench_row_from_csv(last + 1, &back, err, sizeof err), COLL_OK);
    assert_rows_equal(&r2, &back);
    free(text);
}

static void test_foreign_header_refused(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "other.csv", path, sizeof path);
    const char *content = "size,time\n1024,3.5\n";
    test_spit(path, content);
    bench_row r = sample_row(0);
    assert_int_equal(bench_csv_append(path, &r, 1, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "different header; refusing to mix schemas"));
    char *after = test_slurp(path, NULL);
    assert_string_equal(after, content);
    free(after);

    /* Our header with extra columns is a different schema too. */
    char longer[1024];
    snprintf(longer, sizeof longer, "%s,extra\n", EXPECTED_HEADER);
    test_spit(path, longer);
    assert_int_equal(bench_csv_append(path, &r, 1, err, sizeof err), COLL_EINVAL);
    after = test_slurp(path, NULL);
    assert_string_equal(after, longer);
    free(after);
}

/* Files from before the buffers/p25/p75 columns: read with the new fields marked
 * unknown, never appended to (the columns would shift). */
static void test_v1_rows_read_not_appended(void **state)
{
    const char *v1_row = "2026-11-20T01:02:03Z,cpubox,allreduce,shm,auto,cpu,2,1,float32,sum,0,"
                         "1048576,262144,5,20,31.5,30.1,31.0,40.2,41.0,33.288,33.288,0";
    bench_row back;
    char err[512] = "";
    assert_int_equal(bench_row_from_csv_v1(v1_row, &back, err, sizeof err), COLL_OK);
    assert_string_equal(back.host, "cpubox");
    assert_string_equal(back.buffers, BENCH_BUFFERS_UNKNOWN);
    assert_int_equal(back.nprocs, 2);
    assert_true(back.time_us_p50 == 31.0 && back.time_us_p99 == 40.2);
    assert_true(isnan(back.time_us_p25) && isnan(back.time_us_p75));
    /* a new-schema line is not a v1 line */
    bench_row r = sample_row(0);
    char line[1024];
    bench_row_to_csv(&r, line, sizeof line);
    assert_int_equal(bench_row_from_csv_v1(line, &back, err, sizeof err), COLL_EINVAL);
    assert_int_equal(bench_row_from_csv(v1_row, &back, err, sizeof err), COLL_EINVAL);

    char path[512], content[1024];
    file_in(state, "old.csv", path, sizeof path);
    snprintf(content, sizeof content, "%s\n%s\n", BENCH_CSV_HEADER_V1, v1_row);
    test_spit(path, content);
    assert_int_equal(bench_csv_append(path, &r, 1, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "older collbench header"));
    char *after = test_slurp(path, NULL);
    assert_string_equal(after, content);
    free(after);
}

/* Files from before the pass column: read with pass 0 (unknown), and appended
 * to in their own schema, so the file stays one schema and its readers work. */
static void test_v2_rows_read_and_appended_as_v2(void **state)
{
    bench_row r = sample_row(2), back;
    char line[1024], err[512] = "";
    assert_true(bench_row_to_csv(&r, line, sizeof line) > 0);
    *strrchr(line, ',') = '\0'; /* the row as the previous schema wrote it */
    assert_int_equal(bench_row_from_csv(line, &back, err, sizeof err), COLL_EINVAL);
    assert_int_equal(bench_row_from_csv_v2(line, &back, err, sizeof err), COLL_OK);
    assert_int_equal(back.pass, 0);
    back.pass = r.pass;
    assert_rows_equal(&r, &back);

    char path[512], content[2048];
    file_in(state, "v2.csv", path, sizeof path);
    snprintf(content, sizeof content, "%s\n%s\n", BENCH_CSV_HEADER_V2, line);
    test_spit(path, content);
    assert_int_equal(bench_csv_check(path, err, sizeof err), COLL_OK);
    assert_int_equal(bench_csv_append(path, &r, 1, err, sizeof err), COLL_OK);
    char *after = test_slurp(path, NULL), want[4096];
    snprintf(want, sizeof want, "%s%s\n", content, line); /* same row, no pass column */
    assert_string_equal(after, want);
    free(after);
}

static void test_unwritable_path(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "no-such-dir/results.csv", path, sizeof path);
    bench_row r = sample_row(0);
    assert_int_equal(bench_csv_append(path, &r, 1, err, sizeof err), COLL_ESYS);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, strerror(ENOENT)));

    /* A directory is not a CSV file either. */
    char dir[512];
    file_in(state, "", dir, sizeof dir);
    assert_int_not_equal(bench_csv_append(dir, &r, 1, err, sizeof err), COLL_OK);
    assert_non_null(strstr(err, dir));
}

static void test_full_disk(void **state)
{
    (void)state;
    if (access("/dev/full", W_OK) != 0) skip();
    char err[256] = "";
    bench_row r = sample_row(0);
    assert_int_equal(bench_csv_append("/dev/full", &r, 1, err, sizeof err), COLL_ESYS);
    assert_non_null(strstr(err, "/dev/full"));
    assert_non_null(strstr(err, "No space left on device"));
    assert_int_equal(coll__file_append("/dev/full", "x\n", 2, err, sizeof err), COLL_ESYS);
    assert_non_null(strstr(err, "/dev/full: No space left on device"));
}

/* A write cut short (file size limit standing in for a full disk) is rolled back:
 * the file keeps exactly its old bytes, no half row. */
static void test_append_cut_short_rolls_back(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "limited.csv", path, sizeof path);
    bench_row rows[4];
    for (int i = 0; i < 4; i++) rows[i] = sample_row(i);
    assert_int_equal(bench_csv_append(path, rows, 1, err, sizeof err), COLL_OK);
    size_t before_len = 0;
    char *before = test_slurp(path, &before_len);
    assert_non_null(before);

    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    struct rlimit lim = old;
    lim.rlim_cur = before_len + 40; /* room for part of the next row only */
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = bench_csv_append(path, rows + 1, 3, err, sizeof err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, old_handler);

    assert_int_equal(rc, COLL_ESYS);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, strerror(EFBIG)));
    size_t after_len = 0;
    char *after = test_slurp(path, &after_len);
    assert_int_equal(after_len, before_len);
    assert_memory_equal(after, before, before_len);
    free(before);
    free(after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_is_the_schema),
        cmocka_unit_test(test_number_formats),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_to_csv_too_small),
        cmocka_unit_test(test_parse_validates_fields),
        cmocka_unit_test_setup_teardown(test_append_new_then_again, test_dir_setup,
                                        test_dir_teardown),
        cmocka_unit_test_setup_teardown(test_append_to_empty_file_writes_header, test_dir_setup,
                                        test_dir_teardown),
        cmocka_unit_test_setup_teardown(test_append_after_torn_line, test_dir_setup,
                                        test_dir_teardown),
        cmocka_unit_test_setup_teardown(test_foreign_header_refused, test_dir_setup,
                                        test_dir_teardown),
        cmocka_unit_test_setup_teardown(test_v1_rows_read_not_appended, test_dir_setup,
                                        test_dir_teardown),
        cmocka_unit_test_setup_teardown(test_v2_rows_read_and_appended_as_v2, test_dir_setup,
                                        test_dir_teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_path, test_dir_setup, test_dir_teardown),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test_setup_teardown(test_append_cut_short_rolls_back, test_dir_setup,
                                        test_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
