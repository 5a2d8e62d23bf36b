/* JSON results: the docs/DESIGN.md schema, merging into an existing file without
 * losing anything, refusing files it cannot read, and the atomic writer under
 * it (no temp file left, old file intact when a write fails). */
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

#ifdef COLL_HAVE_JANSSON
#include <jansson.h>
#endif

static bench_row sample_row(const char *collective, int i)
{
    bench_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.timestamp, sizeof r.timestamp, "2026-11-22T03:04:%02dZ", i % 60);
    snprintf(r.host, sizeof r.host, "node-%d", i);
    snprintf(r.collective, sizeof r.collective, "%s", collective);
    snprintf(r.backend, sizeof r.backend, "shm");
    snprintf(r.algo, sizeof r.algo, "auto");
    snprintf(r.device, sizeof r.device, "cpu");
    r.nprocs = 4;
    r.nnodes = 1;
    snprintf(r.dtype, sizeof r.dtype, "float32");
    snprintf(r.op, sizeof r.op, "sum");
    r.in_place = i & 1;
    r.bytes = 1024ull << i;
    r.count = r.bytes / 4;
    r.warmup = 5;
    r.iters = 20;
    r.time_us_avg = 10.5 * (i + 1);
    r.time_us_min = 9.25;
    r.time_us_p50 = 10.125;
    r.time_us_p99 = 20.0;
    r.time_us_max = 21.5;
    r.algbw_GBps = 1.5 + i;
    r.busbw_GBps = 2.25 + i;
    r.wrong = i;
    r.pass = i + 1;
    return r;
}

static const char *dir_of(void **state) { return ((struct test_dir *)*state)->path; }

static void file_in(void **state, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", dir_of(state), name);
}

/* Number of files in dir; fails the test if one's name contains must_not_contain. */
static size_t count_entries(const char *dir, const char *must_not_contain)
{
    size_t n = 0;
    DIR *dh = opendir(dir);
    struct dirent *e;
    while (dh && (e = readdir(dh))) {
        if (e->d_name[0] == '.') continue;
        if (must_not_contain && strstr(e->d_name, must_not_contain))
            fail_msg("leftover file %s in %s", e->d_name, dir);
        n++;
    }
    if (dh) closedir(dh);
    return n;
}

static const bench_json_meta META = {
    .name = "collbench",
    .world_size = 4,
    .warmup_iters = 5,
    .benchmark_iters = 20,
    .device = "cpu",
    .extra_config_json = "{\"sizes\": \"1M,10M\", \"backends\": [\"shm\", \"tcp\"]}",
};

/* ---- the atomic writer (independent of jansson) ---- */

static void test_atomic_write_replaces_and_leaves_no_temp(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "data.txt", path, sizeof path);
    assert_int_equal(coll__file_write_atomic(path, "first\n", 6, err, sizeof err), COLL_OK);
    char *text = test_slurp(path, NULL);
    assert_string_equal(text, "first\n");
    free(text);
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(coll__file_write_atomic(path, "second\n", 7, err, sizeof err), COLL_OK);
    text = test_slurp(path, NULL);
    assert_string_equal(text, "second\n");
    free(text);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600); /* permissions of the replaced file kept */
    assert_int_equal(count_entries(dir_of(state), ".tmp."), 1);
}

static void test_atomic_write_failure_keeps_old_file(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "keep.txt", path, sizeof path);
    test_spit(path, "precious\n");
    char big[4096];
    memset(big, 'x', sizeof big);

    struct rlimit old;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    struct rlimit lim = old;
    lim.rlim_cur = 100; /* the temporary cannot grow past 100 bytes */
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = coll__file_write_atomic(path, big, sizeof big, err, sizeof err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, old_handler);

    assert_int_equal(rc, COLL_ESYS);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, strerror(EFBIG)));
    char *text = test_slurp(path, NULL);
    assert_string_equal(text, "precious\n");
    free(text);
    assert_int_equal(count_entries(dir_of(state), ".tmp."), 1);
}

static void test_atomic_write_bad_path(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "missing-dir/out.json", path, sizeof path);
    assert_int_equal(coll__file_write_atomic(path, "x", 1, err, sizeof err), COLL_ESYS);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, strerror(ENOENT)));
    assert_int_equal(coll__file_write_atomic(dir_of(state), "x", 1, err, sizeof err), COLL_ESYS);
    assert_non_null(strstr(err, dir_of(state)));
}

#ifdef COLL_HAVE_JANSSON

static json_t *load(const char *path)
{
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    if (!doc) fail_msg("%s does not parse: line %d: %s", path, jerr.line, jerr.text);
    return doc;
}

static const char *const COLUMNS[] = {"timestamp",   "host",        "collective",  "backend",
                                      "algo",        "device",      "buffers",     "nprocs",
                                      "nnodes",      "dtype",       "op",          "in_place",
                                      "bytes",       "count",       "warmup",      "iters",
                                      "time_us_avg", "time_us_min", "time_us_p25", "time_us_p50",
                                      "time_us_p75", "time_us_p99", "time_us_max", "algbw_GBps",
                                      "busbw_GBps",  "wrong",       "pass"};

static void test_schema(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "out.json", path, sizeof path);
    bench_row rows[3] = {sample_row("allreduce", 0), sample_row("allreduce", 1),
                         sample_row("allgather", 2)};
    int rc = bench_json_write(path, &META, rows, 3, err, sizeof err);
    if (rc != COLL_OK) fail_msg("%s", err);

    json_t *doc = load(path);
    assert_string_equal(json_string_value(json_object_get(doc, "name")), "collbench");
    assert_int_equal(json_integer_value(json_object_get(doc, "world_size")), 4);
    assert_true(json_is_string(json_object_get(doc, "timestamp")));
    json_t *config = json_object_get(doc, "config");
    assert_int_equal(json_integer_value(json_object_get(config, "warmup_iters")), 5);
    assert_int_equal(json_integer_value(json_object_get(config, "benchmark_iters")), 20);
    assert_string_equal(json_string_value(json_object_get(config, "device")), "cpu");
    assert_string_equal(json_string_value(json_object_get(config, "sizes")), "1M,10M");
    assert_int_equal(json_array_size(json_object_get(config, "backends")), 2);

    json_t *results = json_object_get(doc, "results");
    assert_true(json_is_object(json_object_get(results, "training")));
    assert_true(json_is_object(json_object_get(results, "memory")));
    json_t *comm = json_object_get(results, "communication");
    json_t *ar = json_object_get(comm, "allreduce");
    json_t *ag = json_object_get(comm, "allgather");
    assert_int_equal(json_array_size(ar), 2);
    assert_int_equal(json_array_size(ag), 1);

    /* Rows: the CSV columns, in order, numbers as numbers. */
    json_t *row = json_array_get(ar, 1);
    assert_int_equal(json_object_size(row), 27);
    void *it = json_object_iter(row);
    for (size_t i = 0; i < 27; i++, it = json_object_iter_next(row, it))
        assert_string_equal(json_object_iter_key(it), COLUMNS[i]);
    assert_true(json_is_integer(json_object_get(row, "bytes")));
    assert_int_equal(json_integer_value(json_object_get(row, "bytes")), 2048);
    assert_int_equal(json_integer_value(json_object_get(row, "in_place")), 1);
    assert_int_equal(json_integer_value(json_object_get(row, "wrong")), 1);
    assert_int_equal(json_integer_value(json_object_get(row, "pass")), 2);
    assert_true(json_is_real(json_object_get(row, "time_us_avg")));
    assert_true(json_real_value(json_object_get(row, "time_us_avg")) == 21.0);
    assert_true(json_real_value(json_object_get(row, "busbw_GBps")) == 3.25);
    assert_string_equal(json_string_value(json_object_get(row, "backend")), "shm");
    json_decref(doc);

    assert_int_equal(count_entries(dir_of(state), ".tmp."), 1);
}

static void test_merge_keeps_old_rows(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "merge.json", path, sizeof path);
    bench_row first[2] = {sample_row("allreduce", 0), sample_row("allreduce", 1)};
    assert_int_equal(bench_json_write(path, &META, first, 2, err, sizeof err), COLL_OK);

    /* Someone else's section and key, which a merge must keep. */
    json_t *doc = load(path);
    json_object_set_new(json_object_get(json_object_get(doc, "results"), "training"), "step_ms",
                        json_real(12.5));
    json_object_set_new(doc, "notes", json_string("keep me"));
    const char *old_ts = json_string_value(json_object_get(doc, "timestamp"));
    char ts[64];
    snprintf(ts, sizeof ts, "%s", old_ts);
    assert_int_equal(json_dump_file(doc, path, JSON_INDENT(1)), 0);
    json_decref(doc);

    bench_json_meta meta2 = META;
    meta2.world_size = 2;
    meta2.extra_config_json = NULL;
    bench_row second[2] = {sample_row("allreduce", 5), sample_row("broadcast", 6)};
    assert_int_equal(bench_json_write(path, &meta2, second, 2, err, sizeof err), COLL_OK);

    doc = load(path);
    assert_int_equal(json_integer_value(json_object_get(doc, "world_size")), 4); /* the max */
    assert_string_equal(json_string_value(json_object_get(doc, "notes")), "keep me");
    assert_string_equal(json_string_value(json_object_get(doc, "timestamp")), ts);
    json_t *results = json_object_get(doc, "results");
    assert_true(json_real_value(json_object_get(json_object_get(results, "training"), "step_ms")) ==
                12.5);
    json_t *comm = json_object_get(results, "communication");
    json_t *ar = json_object_get(comm, "allreduce");
    assert_int_equal(json_array_size(ar), 3);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ar, 0), "bytes")), 1024);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ar, 1), "bytes")), 2048);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ar, 2), "bytes")),
                     1024 << 5);
    assert_int_equal(json_array_size(json_object_get(comm, "broadcast")), 1);
    /* Config keys of the first run that the second did not set stay. */
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "config"), "sizes")),
                        "1M,10M");
    json_decref(doc);

    /* A larger world size grows it. */
    meta2.world_size = 6;
    assert_int_equal(bench_json_write(path, &meta2, second, 1, err, sizeof err), COLL_OK);
    doc = load(path);
    assert_int_equal(json_integer_value(json_object_get(doc, "world_size")), 6);
    json_decref(doc);
    assert_int_equal(count_entries(dir_of(state), ".tmp."), 1);
}

/* Existing content that cannot be merged is refused and left byte-identical. */
static void expect_refused(void **state, const char *name, const char *content, const char *why)
{
    char path[512], err[512] = "";
    file_in(state, name, path, sizeof path);
    test_spit(path, content);
    bench_row r = sample_row("allreduce", 0);
    assert_int_equal(bench_json_write(path, &META, &r, 1, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, path));
    if (!strstr(err, why)) fail_msg("message '%s' lacks '%s'", err, why);
    char *after = test_slurp(path, NULL);
    assert_string_equal(after, content);
    free(after);
}

static void test_corrupt_existing_refused(void **state)
{
    expect_refused(state, "corrupt.json", "{\"name\": \"collbench\", \"results\": {",
                   "not valid JSON");
    expect_refused(state, "array.json", "[1, 2, 3]\n", "not a JSON object");
    expect_refused(state, "odd.json", "{\"results\": {\"communication\": {\"allreduce\": 5}}}",
                   "results.communication.allreduce");
    expect_refused(state, "odd2.json", "{\"results\": []}", "results");
    assert_int_equal(count_entries(dir_of(state), ".tmp."), 4);
}

static void test_empty_existing_file_is_new(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "empty.json", path, sizeof path);
    test_spit(path, "");
    bench_row r = sample_row("reduce", 0);
    assert_int_equal(bench_json_write(path, &META, &r, 1, err, sizeof err), COLL_OK);
    json_t *doc = load(path);
    assert_int_equal(json_array_size(json_object_get(
                         json_object_get(json_object_get(doc, "results"), "communication"),
                         "reduce")),
                     1);
    json_decref(doc);
}

/* Two commands' runs into one file: the top-level config is only what both
 * ran with; each run's own config is in "configs", once however often it wrote. */
static void test_merge_of_two_collectives(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "two.json", path, sizeof path);
    bench_json_meta ar = META, bc = META;
    ar.extra_config_json = "{\"collective\": \"allreduce\", \"seed\": 1}";
    bc.extra_config_json = "{\"collective\": \"broadcast\", \"seed\": 1}";
    bc.benchmark_iters = 7;
    bench_row a = sample_row("allreduce", 0), b = sample_row("broadcast", 1);
    assert_int_equal(bench_json_write(path, &ar, &a, 1, err, sizeof err), COLL_OK);
    assert_int_equal(bench_json_write(path, &ar, &a, 1, err, sizeof err), COLL_OK);
    assert_int_equal(bench_json_write(path, &bc, &b, 1, err, sizeof err), COLL_OK);

    json_t *doc = load(path);
    json_t *config = json_object_get(doc, "config"), *configs = json_object_get(doc, "configs");
    assert_null(json_object_get(config, "collective"));      /* the two disagree */
    assert_null(json_object_get(config, "benchmark_iters")); /* 20 and 7 */
    assert_int_equal(json_integer_value(json_object_get(config, "seed")), 1);
    assert_int_equal(json_integer_value(json_object_get(config, "warmup_iters")), 5);
    assert_int_equal(json_array_size(configs), 2);
    json_t *first = json_array_get(configs, 0), *second = json_array_get(configs, 1);
    assert_string_equal(json_string_value(json_object_get(first, "collective")), "allreduce");
    assert_int_equal(json_integer_value(json_object_get(first, "benchmark_iters")), 20);
    assert_string_equal(json_string_value(json_object_get(second, "collective")), "broadcast");
    assert_int_equal(json_integer_value(json_object_get(second, "benchmark_iters")), 7);
    json_decref(doc);
}

static void test_bad_extra_config(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "extra.json", path, sizeof path);
    bench_json_meta meta = META;
    meta.extra_config_json = "[1,2]";
    bench_row r = sample_row("allreduce", 0);
    assert_int_equal(bench_json_write(path, &meta, &r, 1, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "extra config"));
    assert_int_equal(access(path, F_OK), -1); /* nothing written */
}

static void test_non_finite_is_null(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "nan.json", path, sizeof path);
    bench_row r = sample_row("allreduce", 0);
    r.busbw_GBps = INFINITY;
    assert_int_equal(bench_json_write(path, &META, &r, 1, err, sizeof err), COLL_OK);
    json_t *doc = load(path); /* still valid JSON */
    json_t *row = json_array_get(json_object_get(json_object_get(json_object_get(doc, "results"),
                                                                 "communication"),
                                                 "allreduce"),
                                 0);
    assert_true(json_is_null(json_object_get(row, "busbw_GBps")));
    json_decref(doc);
}

static void test_json_unwritable_path(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "nope/out.json", path, sizeof path);
    bench_row r = sample_row("allreduce", 0);
    assert_int_equal(bench_json_write(path, &META, &r, 1, err, sizeof err), COLL_ESYS);
    assert_non_null(strstr(err, path));
}

#else /* !COLL_HAVE_JANSSON */

static void test_without_jansson(void **state)
{
    char path[512], err[256] = "";
    file_in(state, "out.json", path, sizeof path);
    bench_row r = sample_row("allreduce", 0);
    assert_int_equal(bench_json_write(path, &META, &r, 1, err, sizeof err), COLL_EUNAVAIL);
    assert_non_null(strstr(err, "built without jansson (apt-get install libjansson-dev)"));
    assert_int_equal(access(path, F_OK), -1);
}

#endif

int main(void)
{
#define DIR_TEST(f) cmocka_unit_test_setup_teardown(f, test_dir_setup, test_dir_teardown)
    const struct CMUnitTest tests[] = {
        DIR_TEST(test_atomic_write_replaces_and_leaves_no_temp),
        DIR_TEST(test_atomic_write_failure_keeps_old_file),
        DIR_TEST(test_atomic_write_bad_path),
#ifdef COLL_HAVE_JANSSON
        DIR_TEST(test_schema),
        DIR_TEST(test_merge_keeps_old_rows),
        DIR_TEST(test_corrupt_existing_refused),
        DIR_TEST(test_empty_existing_file_is_new),
        DIR_TEST(test_merge_of_two_collectives),
        DIR_TEST(test_bad_extra_config),
        DIR_TEST(test_non_finite_is_null),
        DIR_TEST(test_json_unwritable_path),
#else
        DIR_TEST(test_without_jansson),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
