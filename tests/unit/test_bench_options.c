/* Option parsing of the collective commands: defaults, every flag's good forms,
 * and bad input refused with a message naming the flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine/bench_coll.h"
#include "engine/bench_data.h"
#include "engine/bench_options.h"
#include "coll.h"

#define MAX_ARGS 64

static char err[512];

/* Parse a NULL-terminated list of arguments after the command name. */
static int parse_as(const char *coll, bench_options *o, const char *const *args)
{
    char *argv[MAX_ARGS];
    int argc = 0;
    argv[argc++] = (char *)coll;
    while (*args && argc < MAX_ARGS - 1) argv[argc++] = (char *)*args++;
    argv[argc] = NULL;
    err[0] = '\0';
    return bench_options_parse(o, bench_coll_find(coll), argc, argv, err, sizeof err);
}

#define PARSE(coll, o, ...) parse_as(coll, o, (const char *const[]){__VA_ARGS__, NULL})

/* The argv must be refused and the message must name `flag`. */
static void assert_refused(const char *coll, const char *flag, const char *const *args)
{
    bench_options o;
    assert_int_equal(parse_as(coll, &o, args), COLL_EINVAL);
    if (!strstr(err, flag)) fail_msg("message \"%s\" does not name %s", err, flag);
    bench_options_free(&o);
}

#define REFUSED(coll, flag, ...) \
    assert_refused(coll, flag, (const char *const[]){__VA_ARGS__, NULL})

static void test_defaults(void **state)
{
    (void)state;
    bench_options o;
    assert_int_equal(parse_as("allreduce", &o, (const char *const[]){NULL}), 0);
    assert_int_equal(o.nsizes, 4);
    assert_true(o.sizes[0] == 1ULL << 20 && o.sizes[3] == 1ULL << 30);
    assert_int_equal(o.nprocs, 3);
    assert_int_equal(o.procs[2], 6);
    assert_int_equal(o.npairs, 1);
    assert_int_equal(o.pairs[0].dtype, COLL_FLOAT32);
    assert_int_equal(o.pairs[0].op, COLL_SUM);
    assert_int_equal(o.warmup, 5);
    assert_int_equal(o.iters, 20);
    assert_int_equal(o.check, 1);
    assert_int_equal(o.inplace, 2);
    assert_int_equal(o.nbackends, 0);
    assert_string_equal(o.algo, "auto");
    assert_string_equal(o.device, "cpu");
    assert_null(o.csv_path);
    bench_options_free(&o);
}

static void test_every_flag(void **state)
{
    (void)state;
    bench_options o;
    int rc = PARSE("broadcast", &o, "-b", "1K", "-e4K", "--stepfactor=4", "-n", "7", "--warmup",
                   "0", "-c", "2", "-d", "int32", "-r", "1", "-T", "2.5", "-J", "x.json", "--csv",
                   "x.csv", "-P", "3,5", "--backend", "tcp", "--algo", "tree", "--inplace", "0",
                   "--seed", "99", "--time-budget", "0", "-q", "-v");
    assert_int_equal(rc, 0);
    assert_int_equal(o.nsizes, 2); /* 1K, 4K */
    assert_true(o.sizes[0] == 1024 && o.sizes[1] == 4096);
    assert_int_equal(o.iters, 7);
    assert_int_equal(o.warmup, 0);
    assert_int_equal(o.check, 2);
    assert_int_equal(o.pairs[0].dtype, COLL_INT32);
    assert_int_equal(o.pairs[0].op, BENCH_OP_NONE); /* broadcast has no op */
    assert_int_equal(o.root, 1);
    assert_true(o.timeout_s == 2.5);
    assert_string_equal(o.json_path, "x.json");
    assert_string_equal(o.csv_path, "x.csv");
    assert_int_equal(o.nprocs, 2);
    assert_int_equal(o.procs[1], 5);
    assert_int_equal(o.nbackends, 1);
    assert_string_equal(o.backends[0], "tcp");
    assert_string_equal(o.algo, "tree");
    assert_int_equal(o.inplace, 0);
    assert_true(o.seed == 99);
    assert_true(o.time_budget_s == 0);
    assert_true(o.quiet && o.verbose);
    bench_options_free(&o);
}

static void test_step_sweeps(void **state)
{
    (void)state;
    bench_options o;
    assert_int_equal(PARSE("allreduce", &o, "-b", "8", "-e", "1K"), 0); /* factor 2 */
    assert_int_equal(o.nsizes, 8);
    assert_true(o.sizes[7] == 1024);
    bench_options_free(&o);
    assert_int_equal(PARSE("allreduce", &o, "-b", "100", "-e", "120", "-i", "8"), 0);
    assert_int_equal(o.nsizes, 3); /* 100 108 116 */
    assert_true(o.sizes[2] == 116);
    bench_options_free(&o);
    assert_int_equal(PARSE("allreduce", &o, "-b", "64"), 0); /* alone: one size */
    assert_int_equal(o.nsizes, 1);
    bench_options_free(&o);
    assert_int_equal(PARSE("allreduce", &o, "--sizes", "4,1M,8"), 0); /* order kept */
    assert_int_equal(o.nsizes, 3);
    assert_true(o.sizes[1] == 1048576);
    bench_options_free(&o);
}

static void test_dtype_op_sweeps(void **state)
{
    (void)state;
    bench_options o;
    int valid = 0;
    for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++)
        for (int op = 0; op < COLL_OP_COUNT; op++)
            valid += coll_op_valid((coll_dtype)dt, (coll_op)op) == COLL_OK;
    assert_int_equal(PARSE("allreduce", &o, "-d", "all", "-o", "all"), 0);
    assert_int_equal(o.npairs, valid);
    for (size_t i = 0; i < o.npairs; i++)
        assert_int_equal(coll_op_valid(o.pairs[i].dtype, (coll_op)o.pairs[i].op), COLL_OK);
    bench_options_free(&o);
    assert_int_equal(PARSE("allreduce", &o, "-d", "all", "-o", "avg"), 0); /* floats only */
    assert_int_equal(o.npairs, 4);
    bench_options_free(&o);
    assert_int_equal(PARSE("allreduce", &o, "-d", "int8,float64", "-o", "min,max"), 0);
    assert_int_equal(o.npairs, 4);
    bench_options_free(&o);
    assert_int_equal(PARSE("allgather", &o, "-d", "all", "-o", "all"), 0); /* no op: dtypes only */
    assert_int_equal(o.npairs, COLL_DTYPE_COUNT);
    bench_options_free(&o);
}

static void test_help(void **state)
{
    (void)state;
    bench_options o;
    assert_int_equal(PARSE("allreduce", &o, "--help"), BENCH_OPTIONS_HELP);
    bench_options_free(&o);
    assert_int_equal(PARSE("barrier", &o, "-n", "3", "-h"), BENCH_OPTIONS_HELP);
    bench_options_free(&o);
}

static void test_bad_input_names_the_flag(void **state)
{
    (void)state;
    REFUSED("allreduce", "--bogus", "--bogus");
    REFUSED("allreduce", "-z", "-z");
    REFUSED("allreduce", "stray", "stray");
    REFUSED("allreduce", "-n", "-n"); /* missing value */
    REFUSED("allreduce", "-n", "-n", "0");
    REFUSED("allreduce", "-n", "-n", "-3");
    REFUSED("allreduce", "--iters", "--iters=abc");
    REFUSED("allreduce", "-w", "-w", "-1");
    REFUSED("allreduce", "-c", "-c", "x");
    REFUSED("allreduce", "-P", "-P", "0");
    REFUSED("allreduce", "-P", "-P", "2,-4");
    REFUSED("allreduce", "-b", "-b", "1X"); /* bad suffix */
    REFUSED("allreduce", "-b", "-b", "0");
    REFUSED("allreduce", "-e", "-e", "12Q");
    REFUSED("allreduce", "--sizes", "--sizes", "1M,,2M");
    REFUSED("allreduce", "-b", "-b", "1M", "-e", "1K"); /* -b > -e */
    REFUSED("allreduce", "-f", "-b", "1K", "-e", "1M", "-f", "1");
    REFUSED("allreduce", "-i", "-b", "1K", "-e", "1M", "-i", "4", "-f", "2");
    REFUSED("allreduce", "--sizes", "--sizes", "1M", "-b", "1K");
    REFUSED("allreduce", "-d", "-d", "float128");
    REFUSED("allreduce", "-o", "-o", "xor");
    REFUSED("allreduce", "-o", "-d", "int8", "-o", "avg"); /* avg on an integer dtype */
    REFUSED("allreduce", "--backend", "--backend", "carrier-pigeon");
    REFUSED("allreduce", "--algo", "--algo", "bogus");
    REFUSED("allreduce", "--device", "--device", "tpu");
    REFUSED("allreduce", "--inplace", "--inplace", "3");
    REFUSED("sendrecv", "--inplace", "--inplace", "1");
    REFUSED("allreduce", "-T", "-T", "0");
    REFUSED("allreduce", "--time-budget", "--time-budget", "-1");
    REFUSED("allreduce", "--seed", "--seed", "-5");
    REFUSED("allreduce", "-q", "-qx");
    REFUSED("allreduce", "--sizes", "--sizes", "6", "-d", "float32"); /* not whole elements */
    REFUSED("allreduce", "-b/-e", "-b", "2", "-e", "8", "-d", "float16,float32");
}

static void test_init_method(void **state)
{
    (void)state;
    bench_options o;
    assert_int_equal(PARSE("allreduce", &o, "-n", "1"), 0);
    assert_null(o.init_method); /* env:// */
    bench_options_free(&o);
    static const char *const good[] = {"env://", "tcp://127.0.0.1:29500", "tcp://node-a:1",
                                       "tcp://[::1]:65535", "file:///tmp/x/store"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(PARSE("allreduce", &o, "--init-method", good[i]), 0);
        assert_non_null(o.init_method);
        assert_string_equal(o.init_method, good[i]);
        bench_options_free(&o);
    }
    assert_int_equal(PARSE("barrier", &o, "--init-method=file:///s"), 0);
    assert_string_equal(o.init_method, "file:///s");
    bench_options_free(&o);

    REFUSED("allreduce", "--init-method", "--init-method");               /* missing value */
    REFUSED("allreduce", "--init-method", "--init-method", "http://h:1"); /* bad scheme */
    REFUSED("allreduce", "--init-method", "--init-method", "127.0.0.1:29500");
    REFUSED("allreduce", "--init-method", "--init-method", "env://x");
    REFUSED("allreduce", "--init-method", "--init-method", "tcp://host");
    REFUSED("allreduce", "--init-method", "--init-method", "tcp://:29500");
    REFUSED("allreduce", "--init-method", "--init-method", "tcp://h:");
    REFUSED("allreduce", "--init-method", "--init-method", "tcp://h:0");
    REFUSED("allreduce", "--init-method", "--init-method", "tcp://h:65536");
    REFUSED("allreduce", "--init-method", "--init-method", "tcp://h:12x");
    REFUSED("allreduce", "--init-method", "--init-method", "file://");
}

static void test_last_flag_wins(void **state)
{
    (void)state;
    bench_options o;
    assert_int_equal(PARSE("allreduce", &o, "-P", "2", "-P", "3,4", "--backend", "tcp", "--backend",
                           "tcp,shm"),
                     0);
    assert_int_equal(o.nprocs, 2);
    assert_int_equal(o.procs[0], 3);
    assert_int_equal(o.nbackends, 2);
    bench_options_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),       cmocka_unit_test(test_every_flag),
        cmocka_unit_test(test_step_sweeps),    cmocka_unit_test(test_dtype_op_sweeps),
        cmocka_unit_test(test_help),           cmocka_unit_test(test_bad_input_names_the_flag),
        cmocka_unit_test(test_last_flag_wins), cmocka_unit_test(test_init_method),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
