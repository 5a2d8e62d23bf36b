/* The validator (src/replay/trace_check.c): ranks' traces that agree pass;
 * every kind of disagreement is refused with the first one named (files,
 * seq, group, what differs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "replay/trace.h"
#include "support/test_files.h"

#define MAXR 4

typedef struct fixture {
    struct test_dir *dir;
    replay_trace t[MAXR];
    replay_trace *p[MAXR];
    size_t n;
} fixture;

static int setup(void **state)
{
    void *d;
    if (test_dir_setup(&d)) return -1;
    fixture *f = calloc(1, sizeof *f);
    f->dir = d;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (size_t i = 0; i < f->n; i++) replay_trace_free(&f->t[i]);
    void *d = f->dir;
    free(f);
    return test_dir_teardown(&d);
}

/* Adds a trace: its header (rank, world) and body (group and call lines, then
 * the footer with the calls counted here). */
static void add(fixture *f, const char *name, int rank, int world, const char *body)
{
    char path[512], text[8192], err[512];
    int calls = 0;
    for (const char *s = body; (s = strstr(s, "\"seq\"")); s++) calls++;
    snprintf(path, sizeof path, "%s/%s", f->dir->path, name);
    snprintf(text, sizeof text,
             "{\"format\":\"collbench-trace\",\"version\":1,\"rank\":%d,\"world\":%d,"
             "\"source\":\"handmade\"}\n%s{\"end\":true,\"calls\":%d,\"truncated\":false}\n",
             rank, world, body, calls);
    test_spit(path, text);
    assert_true(f->n < MAXR);
    if (replay_trace_read(path, REPLAY_TRACE_MAX_BYTES, &f->t[f->n], NULL, err, sizeof err))
        fail_msg("%s", err);
    f->p[f->n] = &f->t[f->n];
    f->n++;
}

static void passes(fixture *f)
{
    char err[1024] = "";
    replay_trace *by_rank[MAXR];
    if (replay_trace_check(f->p, f->n, by_rank, err, sizeof err)) fail_msg("%s", err);
    for (size_t i = 0; i < f->n; i++) assert_int_equal(by_rank[i]->rank, (int)i);
}

/* Refused, and the message holds every one of the NULL-terminated pieces. */
static void refused(fixture *f, ...)
{
    char err[1024] = "";
    assert_int_equal(replay_trace_check(f->p, f->n, NULL, err, sizeof err), -1);
    va_list ap;
    va_start(ap, f);
    for (const char *s; (s = va_arg(ap, const char *));)
        if (!strstr(err, s)) fail_msg("message without '%s': %s", s, err);
    va_end(ap);
}

#define G01 "{\"group\":\"0\",\"ranks\":[0,1]}\n"
#define AR(seq, count)                                                             \
    "{\"seq\":" #seq                                                               \
    ",\"group\":\"0\",\"op\":\"allreduce\",\"dtype\":\"float32\",\"red\":\"sum\"," \
    "\"count\":" #count "}\n"
#define BC(seq, root)                                                                           \
    "{\"seq\":" #seq ",\"group\":\"0\",\"op\":\"broadcast\",\"dtype\":\"float32\",\"count\":4," \
    "\"root\":" #root "}\n"
#define P2P(seq, op, peer, count, dtype)                                     \
    "{\"seq\":" #seq ",\"group\":\"0\",\"op\":\"" op "\",\"dtype\":\"" dtype \
    "\",\"count\":" #count ",\"peer\":" #peer "}\n"

static void test_agreeing(void **state)
{
    fixture *f = *state;
    /* given in reverse: the validator orders them */
    add(f, "rank1.jsonl", 1, 2, G01 AR(0, 8) P2P(1, "recv", 0, 3, "int32") BC(2, 1) AR(3, 9));
    add(f, "rank0.jsonl", 0, 2, G01 AR(0, 8) P2P(1, "send", 1, 3, "int32") BC(2, 1) AR(5, 9));
    passes(f);
}

static void test_world_disagrees(void **state)
{
    fixture *f = *state;
    add(f, "rank0.jsonl", 0, 2, G01);
    add(f, "rank1.jsonl", 1, 3, "{\"group\":\"0\",\"ranks\":[0,1]}\n");
    refused(f, "rank1.jsonl says world 3", "rank0.jsonl says world 2", NULL);
}

static void test_rank_twice_or_missing(void **state)
{
    fixture *f = *state;
    add(f, "rank0.jsonl", 0, 3, "");
    add(f, "copy.jsonl", 0, 3, "");
    refused(f, "rank 0 has two traces", "rank0.jsonl", "copy.jsonl", NULL);
    replay_trace_free(&f->t[1]), f->n = 1;
    add(f, "rank2.jsonl", 2, 3, "");
    refused(f, "no trace for rank 1 of world 3", NULL);
}

static void test_group_lists_differ(void **state)
{
    fixture *f = *state;
    add(f, "rank0.jsonl", 0, 2, G01);
    add(f, "rank1.jsonl", 1, 2, "{\"group\":\"0\",\"ranks\":[1,0]}\n");
    refused(f, "group \"0\"", "rank0.jsonl:2 lists ranks [0,1]", "rank1.jsonl:2 lists [1,0]", NULL);
}

static void test_group_not_declared(void **state)
{
    fixture *f = *state;
    add(f, "rank0.jsonl", 0, 2, G01);
    add(f, "rank1.jsonl", 1, 2, "{\"group\":\"x\",\"ranks\":[1]}\n");
    refused(f, "group \"0\"", "rank 1's trace", "rank1.jsonl does not declare the group", NULL);
}

static void test_call_counts_differ(void **state)
{
    fixture *f = *state;
    add(f, "rank0.jsonl", 0, 2, G01 AR(0, 8) AR(1, 8));
    add(f, "rank1.jsonl", 1, 2, G01 AR(0, 8));
    refused(f, "group \"0\"", "rank1.jsonl makes 1 collective calls", "rank0.jsonl seq 1 (line 4",
            "has no partner", NULL);
}

static void test_fields_differ(void **state)
{
    fixture *f = *state;
    add(f, "rank0.jsonl", 0, 2, G01 AR(0, 8) AR(1, 16));
    add(f, "rank1.jsonl", 1, 2, G01 AR(0, 8) AR(1, 32));
    refused(f, "group \"0\": collective call 1",
            "rank0.jsonl seq 1 (line 4) is allreduce float32 sum count 16",
            "rank1.jsonl seq 1 (line 4) is allreduce float32 sum count 32", "the count differs",
            NULL);
}

static void test_op_root_dtype_red_differ(void **state)
{
    fixture *f = *state;
    add(f, "rank0.jsonl", 0, 2, G01 AR(0, 8));
    add(f, "rank1.jsonl", 1, 2, G01 BC(0, 0));
    refused(f, "the op differs", NULL);
    replay_trace_free(&f->t[1]), f->n = 1;
    add(f, "rank1.jsonl", 1, 2,
        G01 "{\"seq\":0,\"group\":\"0\",\"op\":\"allreduce\",\"dtype\":\"float64\","
            "\"red\":\"sum\",\"count\":8}\n");
    refused(f, "the dtype differs", NULL);
    replay_trace_free(&f->t[1]), f->n = 1;
    add(f, "rank1.jsonl", 1, 2,
        G01 "{\"seq\":0,\"group\":\"0\",\"op\":\"allreduce\",\"dtype\":\"float32\","
            "\"red\":\"max\",\"count\":8}\n");
    refused(f, "the reduction differs", NULL);
    for (size_t i = 0; i < f->n; i++) replay_trace_free(&f->t[i]);
    f->n = 0;
    add(f, "rank0.jsonl", 0, 2, G01 BC(0, 0));
    add(f, "rank1.jsonl", 1, 2, G01 BC(0, 1));
    refused(f, "root 0", "root 1", "the root differs", NULL);
}

static void test_p2p_differs(void **state)
{
    fixture *f = *state;
    add(f, "rank0.jsonl", 0, 2, G01 P2P(0, "send", 1, 3, "int32") P2P(1, "send", 1, 4, "int32"));
    add(f, "rank1.jsonl", 1, 2, G01 P2P(0, "recv", 0, 3, "int32") P2P(1, "recv", 0, 5, "int32"));
    refused(f, "send 1 from group rank 0 to 1", "rank0.jsonl seq 1", "rank1.jsonl seq 1",
            "the count differs", NULL);
    replay_trace_free(&f->t[1]), f->n = 1;
    add(f, "rank1.jsonl", 1, 2, G01 P2P(0, "recv", 0, 3, "int32"));
    refused(f, "group rank 0 sends 2 messages to group rank 1, which receives 1",
            "rank0.jsonl seq 1", "has no partner", NULL);
    replay_trace_free(&f->t[1]), f->n = 1;
    add(f, "rank1.jsonl", 1, 2, G01 P2P(0, "recv", 0, 3, "int32") P2P(1, "recv", 0, 4, "int64"));
    refused(f, "the dtype differs", NULL);
}

/* 3 ranks, a subgroup {0,2}: its calls are compared among its members only. */
#define W3 "{\"group\":\"0\",\"ranks\":[0,1,2]}\n"
#define S02 "{\"group\":\"r0-2#0\",\"ranks\":[0,2]}\n"
#define SUB(seq, count) \
    "{\"seq\":" #seq    \
    ",\"group\":\"r0-2#0\",\"op\":\"allgather\",\"dtype\":\"uint8\",\"count\":" #count "}\n"

static void test_subgroup(void **state)
{
    fixture *f = *state;
    add(f, "rank0.jsonl", 0, 3, W3 S02 AR(0, 8) SUB(1, 64) AR(2, 8));
    add(f, "rank1.jsonl", 1, 3, W3 AR(0, 8) AR(1, 8));
    add(f, "rank2.jsonl", 2, 3, W3 AR(0, 8) S02 SUB(1, 64) AR(2, 8));
    passes(f);
    replay_trace_free(&f->t[2]), f->n = 2;
    add(f, "rank2.jsonl", 2, 3, W3 AR(0, 8) S02 SUB(1, 65) AR(2, 8));
    refused(f, "group \"r0-2#0\"", "allgather uint8 count 64", "count 65", "the count differs",
            NULL);
}

/* An uneven all-to-all: what each rank sends another is what that one
 * receives (counts per rank may differ); an even one beside uneven ones. */
#define A2A(seq, count, in, out, extra)                                                           \
    "{\"seq\":" #seq                                                                              \
    ",\"group\":\"0\",\"op\":\"alltoall\",\"dtype\":\"float32\",\"count\":" #count ",\"in\":" #in \
    ",\"out\":" #out extra "}\n"
static void test_alltoall_splits(void **state)
{
    fixture *f = *state;
    add(f, "rank0.jsonl", 0, 2,
        G01 A2A(0, 3, 7, 5, ",\"in_splits\":[2,5],\"out_splits\":[2,3]") A2A(1, 4, 8, 8, ""));
    add(f, "rank1.jsonl", 1, 2,
        G01 A2A(0, 4, 9, 11, ",\"in_splits\":[3,6],\"out_splits\":[5,6]")
            A2A(1, 4, 8, 8, ",\"in_splits\":[4,4],\"out_splits\":[4,4]"));
    passes(f);
    replay_trace_free(&f->t[1]), f->n = 1;
    add(f, "rank1.jsonl", 1, 2,
        G01 A2A(0, 4, 9, 10, ",\"in_splits\":[3,6],\"out_splits\":[4,6]") A2A(1, 4, 8, 8, ""));
    refused(f, "collective call 0 of the group, an alltoall", "group rank 0", "rank0.jsonl seq 0",
            "sends 5 elements to group rank 1", "rank1.jsonl seq 0", "receives 4 from it", NULL);
    replay_trace_free(&f->t[1]), f->n = 1;
    add(f, "rank1.jsonl", 1, 2,
        G01 A2A(0, 4, 9, 11, ",\"in_splits\":[3,6],\"out_splits\":[5,6]")
            A2A(1, 4, 8, 8, ",\"in_splits\":[5,3],\"out_splits\":[4,4]"));
    refused(f, "collective call 1 of the group", "sends 5 elements to group rank 0", NULL);
}

static void test_gather_not_replayable(void **state)
{
    fixture *f = *state;
    char err[512];
    add(f, "rank0.jsonl", 0, 2,
        G01 AR(0, 8) "{\"seq\":1,\"group\":\"0\",\"op\":\"gather\",\"dtype\":\"float32\","
                     "\"count\":4,\"root\":0}\n");
    assert_int_equal(replay_trace_replayable(&f->t[0], err, sizeof err), -1);
    assert_non_null(strstr(err, "rank0.jsonl:4: seq 1: gather: libcoll has no gather"));
    replay_trace_free(&f->t[0]), f->n = 0;
    add(f, "rank0.jsonl", 0, 2, G01 AR(0, 8));
    assert_int_equal(replay_trace_replayable(&f->t[0], err, sizeof err), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_agreeing),           T(test_world_disagrees),          T(test_rank_twice_or_missing),
        T(test_group_lists_differ), T(test_group_not_declared),       T(test_call_counts_differ),
        T(test_fields_differ),      T(test_op_root_dtype_red_differ), T(test_p2p_differs),
        T(test_subgroup),           T(test_gather_not_replayable),    T(test_alltoall_splits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
