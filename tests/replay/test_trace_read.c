/* The trace reader (src/replay/trace_read.c): a good trace reads whole, and
 * each bad input is refused with a message naming the file, the line and the
 * problem. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "replay/trace.h"
#include "support/test_files.h"

#define HEADER                                                                         \
    "{\"format\":\"collbench-trace\",\"version\":1,\"rank\":0,\"world\":2,\"source\":" \
    "\"handmade\","                                                                    \
    "\"host\":\"h\",\"pid\":1,\"backend\":\"coll\",\"created_unix\":1.5}\n"
#define GROUP "{\"group\":\"0\",\"ranks\":[0,1],\"desc\":\"default_pg\"}\n"
#define CALL0                                                                                  \
    "{\"seq\":0,\"group\":\"0\",\"op\":\"allreduce\",\"dtype\":\"float32\",\"red\":\"sum\","   \
    "\"count\":1024,\"in\":1024,\"out\":1024,\"root\":-1,\"peer\":-1,\"t0\":1000,\"t1\":3000," \
    "\"gap\":0}\n"
#define CALL1                                                                                     \
    "{\"seq\":1,\"group\":\"0\",\"op\":\"broadcast\",\"dtype\":\"int64\",\"red\":\"\",\"count\":" \
    "8,"                                                                                          \
    "\"in\":8,\"out\":8,\"root\":1,\"peer\":-1,\"t0\":5000,\"t1\":6000,\"gap\":2000,"             \
    "\"cpu\":1500,\"wait_cpu\":0,\"blocking\":true}\n"
#define CALL2                                                                                  \
    "{\"seq\":2,\"group\":\"0\",\"op\":\"send\",\"dtype\":\"bfloat16\",\"red\":\"\","          \
    "\"count\":16,\"in\":16,\"out\":0,\"root\":-1,\"peer\":1,\"t0\":7000,\"t1\":7500,\"gap\":" \
    "1000}\n"
#define FOOTER(n) "{\"end\":true,\"calls\":" #n ",\"truncated\":false}\n"

static char path[512];

/* Writes text as the trace and reads it with limit (0: the default). */
static int read_text(void **state, const char *text, uint64_t limit, replay_trace *t, char *err,
                     size_t len)
{
    struct test_dir *d = *state;
    snprintf(path, sizeof path, "%s/rank0.jsonl", d->path);
    test_spit(path, text);
    return replay_trace_read(path, limit ? limit : REPLAY_TRACE_MAX_BYTES, t, NULL, err, len);
}

/* text is refused, with the file, ":LINE:" (when line > 0) and what in the message. */
static void refused(void **state, const char *text, long line, const char *what)
{
    replay_trace t;
    char err[1024], at[32];
    assert_int_equal(read_text(state, text, 0, &t, err, sizeof err), -1);
    if (!strstr(err, path)) fail_msg("message without the file: %s", err);
    snprintf(at, sizeof at, "%s:%ld: ", "", line);
    if (line > 0 && !strstr(err, at)) fail_msg("message without line %ld: %s", line, err);
    if (!strstr(err, what)) fail_msg("message without '%s': %s", what, err);
    replay_trace_free(&t);
}

static void test_good_trace(void **state)
{
    replay_trace t;
    char err[512] = "";
    int rc = read_text(state, HEADER GROUP CALL0 CALL1 CALL2 FOOTER(3), 0, &t, err, sizeof err);
    if (rc) fail_msg("%s", err);
    assert_int_equal(t.rank, 0);
    assert_int_equal(t.world, 2);
    assert_string_equal(t.source, "handmade");
    assert_int_equal(t.ngroups, 1);
    assert_string_equal(t.groups[0].id, "0");
    assert_int_equal(t.groups[0].nranks, 2);
    assert_int_equal(t.groups[0].my_rank, 0);
    assert_int_equal(t.ncalls, 3);
    assert_int_equal(t.calls[0].op, REPLAY_ALLREDUCE);
    assert_int_equal(t.calls[0].dtype, COLL_FLOAT32);
    assert_int_equal(t.calls[0].red, COLL_SUM);
    assert_int_equal(t.calls[0].count, 1024);
    assert_int_equal(t.calls[0].t1 - t.calls[0].t0, 2000);
    assert_int_equal(t.calls[1].op, REPLAY_BROADCAST);
    assert_int_equal(t.calls[1].root, 1);
    assert_int_equal(t.calls[1].gap, 2000);
    assert_int_equal(t.calls[1].line, 4);
    assert_int_equal(t.calls[1].cpu, 1500);
    assert_int_equal(t.calls[1].wait_cpu, 0);
    assert_int_equal(t.calls[0].cpu, -1); /* absent: unknown */
    assert_int_equal(t.calls[2].wait_cpu, -1);
    assert_true(t.calls[1].blocking);
    assert_false(t.calls[0].blocking);
    assert_int_equal(t.calls[2].op, REPLAY_SEND);
    assert_int_equal(t.calls[2].peer, 1);
    assert_int_equal(t.calls[2].dtype, COLL_BFLOAT16);
    assert_true(t.has_times);
    replay_trace_free(&t);
}

static void test_no_times(void **state)
{
    replay_trace t;
    char err[512] = "";
    const char *call = "{\"seq\":0,\"group\":\"0\",\"op\":\"barrier\",\"dtype\":\"float32\","
                       "\"red\":\"\",\"count\":0}\n";
    char text[2048];
    snprintf(text, sizeof text, "%s%s%s%s", HEADER, GROUP, call, FOOTER(1));
    if (read_text(state, text, 0, &t, err, sizeof err)) fail_msg("%s", err);
    assert_false(t.has_times);
    assert_int_equal(t.calls[0].t0, -1);
    replay_trace_free(&t);
}

/* The calling thread's CPU times: counts of ns, or absent; blocking: a boolean. */
static void test_cpu_times(void **state)
{
    static const char *const bad[] = {"\"cpu\":-1", "\"cpu\":\"5\"", "\"wait_cpu\":-3",
                                      "\"wait_cpu\":null", "\"blocking\":1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[2048], what[64];
        snprintf(text, sizeof text,
                 "%s%s{\"seq\":0,\"group\":\"0\",\"op\":\"barrier\",\"dtype\":\"float32\","
                 "\"red\":\"\",\"count\":0,%s}\n%s",
                 HEADER, GROUP, bad[i], FOOTER(1));
        snprintf(what, sizeof what, "\"%s\" is not",
                 i < 2   ? "cpu"
                 : i < 4 ? "wait_cpu"
                         : "blocking");
        refused(state, text, 3, what);
    }
}

/* The header's "cpus" (the CPUs the program's rank could run on): read, 0
 * when absent; a count below 1, a non-integer or an implausible one refused. */
static void test_header_cpus(void **state)
{
#define HEAD_WITH(x)                                                                   \
    "{\"format\":\"collbench-trace\",\"version\":1,\"rank\":0,\"world\":2,\"source\":" \
    "\"coll\"," x "}\n"
    replay_trace t;
    char err[512] = "";
    if (read_text(state, HEAD_WITH("\"cpus\":1") GROUP CALL0 FOOTER(1), 0, &t, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(t.cpus, 1);
    replay_trace_free(&t);
    if (read_text(state, HEADER GROUP CALL0 FOOTER(1), 0, &t, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(t.cpus, 0);
    replay_trace_free(&t);
    refused(state, HEAD_WITH("\"cpus\":0") GROUP CALL0 FOOTER(1), 1, "\"cpus\" is 0: below 1");
    refused(state, HEAD_WITH("\"cpus\":\"2\"") GROUP CALL0 FOOTER(1), 1,
            "\"cpus\" is not an integer");
    refused(state, HEAD_WITH("\"cpus\":4000000") GROUP CALL0 FOOTER(1), 1,
            "not a plausible number of CPUs");
#undef HEAD_WITH
}

/* A group's plan line (what its communicator's probes decided): read, the
 * last one a group's, also after its calls; refused for a group not declared
 * before it, or a plan that is not COLL_NAME=VALUE pairs (the replay puts them
 * in its environment). */
static void test_plan(void **state)
{
#define PLAN(x) "{\"group\":\"0\",\"plan\":\"" x "\"}\n"
    replay_trace t;
    char err[512] = "";
    if (read_text(state,
                  HEADER GROUP PLAN("COLL_SHM_CMA_ALLREDUCE_MIN=18446744073709551615")
                      CALL0 PLAN("COLL_SHM_PRIV_CORE_MAX=0 COLL_SHM_CMA_HUGE_MIN=64K") FOOTER(1),
                  0, &t, err, sizeof err))
        fail_msg("%s", err);
    assert_non_null(t.groups[0].plan);
    assert_string_equal(t.groups[0].plan, "COLL_SHM_PRIV_CORE_MAX=0 COLL_SHM_CMA_HUGE_MIN=64K");
    replay_trace_free(&t);
    if (read_text(state, HEADER GROUP CALL0 FOOTER(1), 0, &t, err, sizeof err)) fail_msg("%s", err);
    assert_null(t.groups[0].plan);
    replay_trace_free(&t);
    refused(state, HEADER PLAN("COLL_SHM_PRIV_CORE_MAX=0") GROUP CALL0 FOOTER(1), 2,
            "a plan line for a group not declared before it");
    refused(state, HEADER GROUP PLAN("LD_PRELOAD=evil") CALL0 FOOTER(1), 3,
            "is not COLL_NAME=VALUE pairs");
    refused(state, HEADER GROUP PLAN("COLL_SHM_PRIV_CORE_MAX=0;rm") CALL0 FOOTER(1), 3,
            "is not COLL_NAME=VALUE pairs");
    refused(state, HEADER GROUP PLAN("COLL_SHM_PRIV_CORE_MAX=") CALL0 FOOTER(1), 3,
            "is not COLL_NAME=VALUE pairs");
    refused(state, HEADER GROUP "{\"group\":\"0\",\"plan\":7}\n" CALL0 FOOTER(1), 3,
            "\"plan\" is not a string");
    /* longer than the replay takes: refused, never cut short */
    char text[4096], value[1100];
    memset(value, '9', sizeof value - 1);
    value[sizeof value - 1] = '\0';
    snprintf(text, sizeof text, "%s%s{\"group\":\"0\",\"plan\":\"COLL_SHM_CMA_MIN=%s\"}\n%s%s",
             HEADER, GROUP, value, CALL0, FOOTER(1));
    refused(state, text, 3, "the plan is longer than 1023 characters");
#undef PLAN
}

static void test_not_json(void **state)
{
    refused(state, HEADER GROUP "{\"seq\":0,\"group\"\n" FOOTER(0), 3, "not JSON");
    refused(state, HEADER GROUP "[1,2]\n" FOOTER(0), 3, "not a JSON object");
}

static void test_missing_header(void **state)
{
    refused(state, GROUP CALL0 FOOTER(1), 1, "missing header");
    refused(state, "", 0, "missing header");
}

static void test_missing_footer(void **state)
{
    /* cut at a line's end: no footer */
    refused(state, HEADER GROUP CALL0 CALL1, 4, "no footer");
    /* cut inside a line: that line is not JSON */
    char text[2048];
    snprintf(text, sizeof text, "%s%s%s%.40s", HEADER, GROUP, CALL0, CALL1);
    refused(state, text, 4, "not JSON");
}

static void test_format_version(void **state)
{
    refused(state, "{\"format\":\"chakra\",\"version\":1,\"rank\":0,\"world\":2}\n" GROUP FOOTER(0),
            1, "format \"chakra\" is not collbench-trace");
    refused(state,
            "{\"format\":\"collbench-trace\",\"version\":2,\"rank\":0,\"world\":2}\n" GROUP FOOTER(
                0),
            1, "version 2: this collbench reads version 1");
    refused(state,
            "{\"format\":\"collbench-trace\",\"version\":1,\"rank\":2,\"world\":2}\n" FOOTER(0), 1,
            "rank 2 is not a rank of world 2");
}

/* CALL0 with one field replaced: key's value "from" becomes "to". */
static void call0_with(char *out, size_t len, const char *from, const char *to)
{
    const char *c = CALL0, *at = strstr(c, from);
    assert_non_null(at);
    snprintf(out, len, "%s%s%.*s%s%s%s", HEADER, GROUP, (int)(at - c), c, to, at + strlen(from),
             FOOTER(1));
}

static void test_unknown_op_dtype_red(void **state)
{
    char text[2048];
    call0_with(text, sizeof text, "\"allreduce\"", "\"allgatherv\"");
    refused(state, text, 3, "unknown op \"allgatherv\"");
    call0_with(text, sizeof text, "\"float32\"", "\"float8\"");
    refused(state, text, 3, "unknown dtype \"float8\"");
    call0_with(text, sizeof text, "\"sum\"", "\"xor\"");
    refused(state, text, 3, "unknown reduction \"xor\"");
    call0_with(text, sizeof text, "\"red\":\"sum\",", "");
    refused(state, text, 3, "allreduce without \"red\"");
    call0_with(text, sizeof text, "\"float32\",\"red\":\"sum\"", "\"int32\",\"red\":\"avg\"");
    refused(state, text, 3, "reduction avg on int32");
}

static void test_negative_counts(void **state)
{
    char text[2048];
    call0_with(text, sizeof text, "\"count\":1024", "\"count\":-5");
    refused(state, text, 3, "\"count\" is -5: negative");
    call0_with(text, sizeof text, "\"in\":1024", "\"in\":-1");
    refused(state, text, 3, "\"in\" is -1: negative");
    call0_with(text, sizeof text, "\"count\":1024", "\"count\":\"many\"");
    refused(state, text, 3, "\"count\" is not an integer");
}

static void test_undeclared_group(void **state)
{
    char text[2048];
    call0_with(text, sizeof text, "\"group\":\"0\"", "\"group\":\"7\"");
    refused(state, text, 3, "in group \"7\", which no line before it declares");
    /* declared only after its first call */
    refused(state, HEADER CALL0 GROUP FOOTER(1), 2, "in group \"0\", which no line before");
    refused(state, HEADER "{\"group\":\"0\",\"ranks\":[1]}\n" FOOTER(0), 2,
            "this trace's rank 0 is not one of its ranks");
    refused(state, HEADER GROUP GROUP FOOTER(0), 3, "group \"0\" declared twice");
}

static void test_seq_not_increasing(void **state)
{
    refused(state, HEADER GROUP CALL1 CALL0 FOOTER(2), 4, "seq 0 does not increase");
    refused(state, HEADER GROUP CALL0 CALL0 FOOTER(2), 4, "seq 0 does not increase");
}

/* An uneven all-to-all: its splits read; each way they can be wrong refused. */
#define A2A(extra)                                                                       \
    "{\"seq\":0,\"group\":\"0\",\"op\":\"alltoall\",\"dtype\":\"float32\",\"red\":\"\"," \
    "\"count\":3,\"in\":7,\"out\":5,\"root\":-1,\"peer\":-1" extra "}\n"
static void test_alltoall_splits(void **state)
{
    replay_trace t;
    char err[512] = "";
    if (read_text(state, HEADER GROUP A2A(",\"in_splits\":[2,5],\"out_splits\":[2,3]") FOOTER(1), 0,
                  &t, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(t.calls[0].sp.n, 2);
    assert_int_equal(replay_call_split(&t.calls[0], 1, 0), 5);
    assert_int_equal(replay_call_split(&t.calls[0], 1, 1), 3);
    replay_trace_free(&t);
    refused(state, HEADER GROUP A2A(",\"in_splits\":[2,5]") FOOTER(1), 3,
            "\"in_splits\" without \"out_splits\"");
    refused(state, HEADER GROUP A2A(",\"in_splits\":[7],\"out_splits\":[5]") FOOTER(1), 3,
            "\"in_splits\" has 1 entries for a group of 2 ranks");
    refused(state, HEADER GROUP A2A(",\"in_splits\":[2,4],\"out_splits\":[2,3]") FOOTER(1), 3,
            "\"in_splits\" adds up to 6 elements, the call's \"in\" says 7");
    refused(state, HEADER GROUP A2A(",\"in_splits\":[2,5],\"out_splits\":[-1,6]") FOOTER(1), 3,
            "\"out_splits\"[0] is not a non-negative integer");
    refused(state, HEADER GROUP A2A(",\"in_splits\":\"2,5\",\"out_splits\":[2,3]") FOOTER(1), 3,
            "\"in_splits\" is not a list");
    const char *ar = "{\"seq\":0,\"group\":\"0\",\"op\":\"allreduce\",\"dtype\":\"float32\","
                     "\"red\":\"sum\",\"count\":4,\"in_splits\":[2,2],\"out_splits\":[2,2]}\n";
    char text[2048];
    snprintf(text, sizeof text, "%s%s%s%s", HEADER, GROUP, ar, FOOTER(1));
    refused(state, text, 3, "allreduce with splits: only an alltoall has them");
}

static void test_roots_and_peers(void **state)
{
    char text[2048];
    const char *bad_root = "{\"seq\":0,\"group\":\"0\",\"op\":\"reduce\",\"dtype\":\"float32\","
                           "\"red\":\"max\",\"count\":4,\"root\":2,\"peer\":-1}\n";
    snprintf(text, sizeof text, "%s%s%s%s", HEADER, GROUP, bad_root, FOOTER(1));
    refused(state, text, 3, "root 2 is not a rank of group \"0\" (2 ranks)");
    const char *self = "{\"seq\":0,\"group\":\"0\",\"op\":\"recv\",\"dtype\":\"float32\","
                       "\"red\":\"\",\"count\":4,\"root\":-1,\"peer\":0}\n";
    snprintf(text, sizeof text, "%s%s%s%s", HEADER, GROUP, self, FOOTER(1));
    refused(state, text, 3, "peer 0 is this rank itself");
}

static void test_footer(void **state)
{
    refused(state, HEADER GROUP CALL0 "{\"end\":true,\"calls\":1,\"truncated\":true}\n", 4,
            "truncated");
    refused(state, HEADER GROUP CALL0 FOOTER(2), 4, "the footer says 2 calls, the file has 1");
    refused(state, HEADER GROUP CALL0 FOOTER(1) CALL1, 5, "a line after the footer");
}

static void test_size_limit(void **state)
{
    replay_trace t;
    char err[1024];
    /* a small limit: the good trace is over it */
    assert_int_equal(read_text(state, HEADER GROUP CALL0 FOOTER(1), 100, &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "over the limit of 100 bytes"));
    replay_trace_free(&t);
    /* a 10 GB file (sparse: no disk used) is refused before a byte is read */
    struct test_dir *d = *state;
    char big[512];
    snprintf(big, sizeof big, "%s/rank1.jsonl", d->path);
    int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 10000000000LL), 0);
    close(fd);
    assert_int_equal(replay_trace_read(big, REPLAY_TRACE_MAX_BYTES, &t, NULL, err, sizeof err), -1);
    if (!strstr(err, big) || !strstr(err, "10000000000 bytes") ||
        !strstr(err, "over the limit of 1073741824 bytes (1 GiB)"))
        fail_msg("%s", err);
    replay_trace_free(&t);
    unlink(big);
}

static void test_missing_file(void **state)
{
    replay_trace t;
    char err[1024];
    (void)state;
    assert_int_equal(replay_trace_read("/nonexistent/rank0.jsonl", REPLAY_TRACE_MAX_BYTES, &t, NULL,
                                       err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "/nonexistent/rank0.jsonl: No such file"));
    replay_trace_free(&t);
}

static void test_op_names(void **state)
{
    (void)state;
    replay_op op;
    for (int i = 0; i < REPLAY_OP_COUNT; i++) {
        assert_int_equal(replay_op_parse(replay_op_name((replay_op)i), &op), 0);
        assert_int_equal(op, i);
    }
    assert_int_equal(replay_op_parse("gatherv", &op), -1);
    assert_true(replay_op_has_root(REPLAY_REDUCE) && replay_op_has_red(REPLAY_REDUCE));
    assert_true(replay_op_is_p2p(REPLAY_RECV) && !replay_op_is_p2p(REPLAY_BARRIER));
}

#define T(f) cmocka_unit_test_setup_teardown(f, test_dir_setup, test_dir_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_good_trace),
        T(test_no_times),
        T(test_cpu_times),
        T(test_header_cpus),
        T(test_not_json),
        T(test_missing_header),
        T(test_missing_footer),
        T(test_format_version),
        T(test_unknown_op_dtype_red),
        T(test_negative_counts),
        T(test_undeclared_group),
        T(test_seq_not_increasing),
        T(test_roots_and_peers),
        T(test_footer),
        T(test_alltoall_splits),
        T(test_size_limit),
        T(test_missing_file),
        T(test_op_names),
        T(test_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
