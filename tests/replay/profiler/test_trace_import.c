/* The profiler importer (src/replay/trace_import*.c) and the trace writer
 * (trace_write.c): each kind of event read as the call it is, nested events
 * counted once, the assumptions said, every bad input refused with the file,
 * the event and the problem; an imported trace written and read back whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "replay/trace.h"
#include "replay/trace_import.h"
#include "replay/trace_write.h"
#include "support/test_files.h"

static char path[512];

#define DIST(r, w) \
    "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":" #r ",\"world_size\":" #w "}"

/* record_param_comms as torch's profiler writes it (lists as strings). */
#define PARAM(ts, dur, coll, dtype, in, out, size, pg, ranks, rank, extra)                  \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"pid\":7,\"tid\":7," \
    "\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"Collective name\":\"" coll                 \
    "\",\"dtype\":\"" dtype "\",\"In msg nelems\":" #in ",\"Out msg nelems\":" #out         \
    ",\"In split size\":\"[]\",\"Out split size\":\"[]\",\"Group size\":" #size             \
    ",\"Process Group Name\":\"" pg "\",\"Process Group Description\":\"default_pg\","      \
    "\"Process Group Ranks\":\"" ranks "\",\"Rank\":" #rank extra "}}"

/* A backend's event on its worker thread (tid 9), as gloo writes it. */
#define GLOO(name, ts, dur, dims, types)                                                      \
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"" name "\",\"pid\":7,\"tid\":9,"    \
    "\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"Input Dims\":" dims ",\"Input type\":" types \
    ",\"Concrete Inputs\":[\"\"]}}"

/* A c10d op or a backend's event with its shapes (record_shapes=True). */
#define OP(name, ts, dur, dims, types, concrete)                                             \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":7,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"Input Dims\":" dims ",\"Input type\":" types              \
    ",\"Concrete Inputs\":" concrete "}}"

static void write_profile(void **state, const char *text)
{
    struct test_dir *d = *state;
    snprintf(path, sizeof path, "%s/rank.pt.trace.json", d->path);
    test_spit(path, text);
}

/* text imported: 0 expected, im filled. */
static void imported(void **state, const char *text, replay_import *im)
{
    char err[2048];
    write_profile(state, text);
    if (replay_import_profiler(path, -1, -1, im, err, sizeof err)) fail_msg("refused: %s", err);
}

/* text refused, the message holding the file and each of what[]. */
static void refused(void **state, const char *text, int rank_fallback, const char *what1,
                    const char *what2)
{
    replay_import im;
    char err[2048];
    write_profile(state, text);
    assert_int_equal(replay_import_profiler(path, rank_fallback, 2, &im, err, sizeof err), -1);
    if (!strstr(err, path)) fail_msg("message without the file: %s", err);
    if (what1 && !strstr(err, what1)) fail_msg("message without '%s': %s", what1, err);
    if (what2 && !strstr(err, what2)) fail_msg("message without '%s': %s", what2, err);
    replay_import_free(&im);
}

static void has_warning(const replay_import *im, const char *what)
{
    if (!strstr(im->warnings, what)) fail_msg("no warning '%s' in: %s", what, im->warnings);
}

/* ---- record_param_comms ---- */

static void test_param_calls(void **state)
{
    replay_import im;
    imported(state,
             "{" DIST(1, 2) ",\"traceEvents\":["                                                  //
             PARAM(100.5, 40, "allreduce", "Float", 1024, 1024, 2, "0", "[0, 1]", 1, "") ","      //
             PARAM(200, 10, "broadcast", "BFloat16", 8, 8, 2, "0", "[0, 1]", 0, "") ","           //
             PARAM(300, 10, "_allgather_base", "Half", 100, 200, 2, "0", "[0, 1]", 1, "") ","     //
             PARAM(400, 10, "_reduce_scatter_base", "Long", 64, 32, 2, "0", "[0, 1]", 1, "") ","  //
             PARAM(500, 10, "recv", "Int", 16, 16, 2, "0", "[0, 1]", 0, "") ","                   //
             PARAM(600, 10, "all_to_all", "Double", 40, 40, 2, "0", "[0, 1]", 1, "") ","          //
             PARAM(700, 10, "barrier", "Byte", 0, 0, 2, "0", "[0, 1]", 1, "") "]}",
             &im);
    replay_trace *t = &im.t;
    assert_int_equal(t->rank, 1);
    assert_int_equal(t->world, 2);
    assert_string_equal(im.rank_from, "distributedInfo");
    assert_string_equal(t->source, "torch-profiler");
    assert_int_equal(t->ngroups, 1);
    assert_string_equal(t->groups[0].id, "0");
    assert_string_equal(t->groups[0].desc, "default_pg");
    assert_int_equal(t->groups[0].my_rank, 1);
    assert_int_equal(t->ncalls, 7);
    replay_call *c = t->calls;
    assert_int_equal(c[0].op, REPLAY_ALLREDUCE);
    assert_int_equal(c[0].dtype, COLL_FLOAT32);
    assert_int_equal(c[0].count, 1024);
    assert_int_equal(c[0].red, COLL_SUM);
    assert_int_equal(c[0].t0, 100500); /* us to ns */
    assert_int_equal(c[0].t1, 140500);
    assert_int_equal(c[0].gap, 0);
    assert_int_equal(c[1].op, REPLAY_BROADCAST);
    assert_int_equal(c[1].dtype, COLL_BFLOAT16);
    assert_int_equal(c[1].root, 0); /* "Rank" of a rooted collective: the root */
    assert_int_equal(c[1].gap, 200000 - 140500);
    assert_int_equal(c[2].op, REPLAY_ALLGATHER);
    assert_int_equal(c[2].dtype, COLL_FLOAT16);
    assert_int_equal(c[2].count, 100); /* what each rank sends */
    assert_int_equal(c[2].out, 200);
    assert_int_equal(c[3].op, REPLAY_REDUCESCATTER);
    assert_int_equal(c[3].dtype, COLL_INT64);
    assert_int_equal(c[3].count, 32); /* what each rank receives */
    assert_int_equal(c[3].in, 64);
    assert_int_equal(c[4].op, REPLAY_RECV);
    assert_int_equal(c[4].peer, 0);
    assert_int_equal(c[4].dtype, COLL_INT32);
    assert_int_equal(c[5].op, REPLAY_ALLTOALL);
    assert_int_equal(c[5].count, 20); /* per peer */
    assert_int_equal(c[6].op, REPLAY_BARRIER);
    assert_int_equal(c[6].count, 0);
    for (size_t i = 0; i < t->ncalls; i++) assert_int_equal(c[i].seq, (int64_t)i);
    has_warning(&im, "2 calls with a reduction");
    has_warning(&im, "assumed sum");
    replay_import_free(&im);
}

/* Uneven splits travel as splits; the count is their mean per peer. */
static void test_param_splits(void **state)
{
    replay_import im;
    imported(state,
             "{" DIST(0, 2) ",\"traceEvents\":[" PARAM(
                 1, 1, "all_to_allv", "Float", 8, 6, 2, "0", "[0, 1]", 0,
                 ",\"In split size\":\"[3, 5]\",\"Out split size\":\"[3, 3]\"") "]}",
             &im);
    assert_int_equal(im.t.ncalls, 1);
    assert_int_equal(im.t.calls[0].sp.n, 2);
    assert_int_equal(im.t.calls[0].sp.in[1], 5);
    assert_int_equal(im.t.calls[0].sp.out[0], 3);
    assert_int_equal(im.t.calls[0].count, 4);
    replay_import_free(&im);
}

/* torch's splits count rows: a tensor of 2 elements a row sends 2x each. */
static void test_param_splits_rows(void **state)
{
    replay_import im;
    imported(state,
             "{" DIST(0, 2) ",\"traceEvents\":[" PARAM(
                 1, 1, "all_to_allv", "Float", 16, 12, 2, "0", "[0, 1]", 0,
                 ",\"In split size\":\"[3, 5]\",\"Out split size\":\"[3, 3]\"") "]}",
             &im);
    assert_int_equal(im.t.ncalls, 1);
    assert_int_equal(im.t.calls[0].sp.in[0], 6);
    assert_int_equal(im.t.calls[0].sp.in[1], 10);
    assert_int_equal(im.t.calls[0].sp.out[1], 6);
    replay_import_free(&im);
}

/* A group's ranks: the list, start and stride where torch cut the list, and
 * distributedInfo's pg_config where the event lists none. */
static void test_param_group_ranks(void **state)
{
    replay_import im;
    imported(state,
             "{\"distributedInfo\":{\"rank\":2,\"world_size\":40,\"pg_config\":["
             "{\"pg_name\":\"5\",\"pg_desc\":\"tp\",\"pg_size\":2,\"ranks\":[3,2]}]},"
             "\"traceEvents\":[" PARAM(
                 1, 1, "allreduce", "Float", 4, 4, 40, "0",
                 "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, "
                 "16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, "
                 "...]",
                 2,
                 ",\"Global rank start\":0,\"Global rank stride\":1") "," PARAM(5, 1, "allreduce",
                                                                                "Float", 4, 4, 2,
                                                                                "5", "[]", 1,
                                                                                "") "]}",
             &im);
    assert_int_equal(im.t.ngroups, 2);
    assert_int_equal(im.t.groups[0].nranks, 40);
    assert_int_equal(im.t.groups[0].ranks[39], 39);
    assert_string_equal(im.t.groups[1].id, "5");
    assert_string_equal(im.t.groups[1].desc, "default_pg"); /* the event's description */
    assert_int_equal(im.t.groups[1].ranks[0], 3);
    assert_int_equal(im.t.groups[1].my_rank, 1);
    assert_int_equal(im.t.calls[1].group, 1);
    replay_import_free(&im);
}

/* Without distributedInfo: the rank from "Rank" in a group the event lists. */
static void test_param_rank_from_events(void **state)
{
    replay_import im;
    char err[1024];
    write_profile(state, "{\"traceEvents\":[" PARAM(1, 1, "allreduce", "Float", 4, 4, 3, "0",
                                                    "[0, 1, 2]", 2, "") "]}");
    assert_int_equal(replay_import_profiler(path, 0, 3, &im, err, sizeof err), 0);
    assert_int_equal(im.t.rank, 2);
    assert_string_equal(im.rank_from, "the events' \"Rank\"");
    replay_import_free(&im);
}

/* ---- nesting: one call however many events say it ---- */

static void test_nested_once(void **state)
{
    replay_import im;
    imported(state,
             "{" DIST(0, 2) ",\"traceEvents\":["                                           //
             OP("c10d::allreduce_", 10, 100, "[[[4]]]", "[\"TensorList\"]", "[\"\"]") ","  //
             OP("gloo:all_reduce", 20, 50, "[[4]]", "[\"float\"]", "[\"\"]") ","           //
             PARAM(30, 10, "allreduce", "Float", 4, 4, 2, "0", "[0, 1]", 0, "") ","        //
             PARAM(32, 2, "allreduce", "Float", 4, 4, 2, "0", "[0, 1]", 0, "") ","         //
             PARAM(300, 10, "wait", "Byte", 0, 0, 2, "0", "[0, 1]", 0, "") ","             //
             /* events of kinds not imported here may be anything */
             OP("nccl:recv 0<-1", 400, 5, "[]", "[]", "[]") ","  //
             OP("c10d::frobnicate_", 500, 5, "[]", "[]", "[]") "]}",
             &im);
    assert_int_equal(im.t.ncalls, 1);
    assert_int_equal(im.t.calls[0].t0, 30000); /* the record_param_comms event's */
    replay_import_free(&im);
}

/* A GPU kernel on the stream, as kineto writes it (no args of ours). */
#define KERNEL(name, ts, dur)                                                                \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7}}"

/* On a GPU the call's work is its NCCL kernel: its end is the call's. */
static void test_param_kernels(void **state)
{
    replay_import im;
    imported(state,
             "{" DIST(1, 2) ",\"traceEvents\":["                                                  //
             PARAM(10, 5, "allreduce", "Float", 64, 64, 2, "0", "[0, 1]", 1, "") ","              //
             KERNEL("void at::native::vectorized_elementwise_kernel<4>", 20, 3) ","               //
             KERNEL("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",  //
                    50, 100) ","                                                                  //
             PARAM(200, 5, "recv", "Float", 8, 8, 2, "0", "[0, 1]", 0, "") ","                    //
             KERNEL("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 250, 10) ","      //
             PARAM(300, 5, "barrier", "Byte", 0, 0, 2, "0", "[0, 1]", 1, "") "]}",
             &im);
    assert_int_equal(im.t.ncalls, 3);
    assert_int_equal(im.t.calls[0].t0, 10000);
    assert_int_equal(im.t.calls[0].t1, 150000);
    assert_int_equal(im.t.calls[1].t1, 260000);
    assert_int_equal(im.t.calls[2].t1, 305000); /* no kernel: the op's own end */
    has_warning(&im, "1 calls (barrier 1) without the backend's event of their work");
    replay_import_free(&im);
}

/* A backend that writes record_param_comms for some ops only: the others are
 * not imported, and that is said. */
static void test_param_missing_ops(void **state)
{
    replay_import im;
    imported(state,
             "{" DIST(0, 2) ",\"traceEvents\":["                                           //
             OP("c10d::allreduce_", 10, 100, "[[[4]]]", "[\"TensorList\"]", "[\"\"]") ","  //
             PARAM(30, 10, "allreduce", "Float", 4, 4, 2, "0", "[0, 1]", 0, "") ","        //
             OP("c10d::send", 200, 10, "[[[4]]]", "[\"TensorList\"]", "[\"\"]") "]}",
             &im);
    assert_int_equal(im.t.ncalls, 1);
    has_warning(&im, "2 c10d ops but 1 record_param_comms calls");
    replay_import_free(&im);
}

/* A c10d op inside another on its thread counts there. */
static void test_nested_c10d(void **state)
{
    replay_import im;
    imported(state,
             "{" DIST(0, 2) ",\"traceEvents\":["  //
             OP("c10d::barrier", 10, 100, "[[1], [], [], []]",
                "[\"unsigned char\", \"\", \"ScalarList\", \"Scalar\"]", "[]") ","  //
             OP("c10d::allreduce_", 20, 10, "[[[1]], [], [], [], []]",
                "[\"TensorList\", \"\", \"\", \"\", \"Scalar\"]", "[]") ","  //
             GLOO("gloo:barrier", 30, 5, "[]", "[]") ","                     //
             GLOO("gloo:all_reduce", 200, 5, "[[1]]", "[\"unsigned char\"]") "]}",
             &im);
    assert_int_equal(im.t.ncalls, 1);
    assert_int_equal(im.t.calls[0].op, REPLAY_BARRIER);
    assert_int_equal(im.t.calls[0].t1, 110000);
    replay_import_free(&im);
}

/* ---- c10d ops and the backend's events (gloo) ---- */

/* As torch 2.6 writes them: the c10d op on the caller's thread, the gloo
 * event of its work on gloo's worker thread, starting after the op. */
/* clang-format off */
static const char c10d_profile[] =
    "{" DIST(1, 2) ",\"traceEvents\":["
    OP("c10d::allreduce_", 10, 20, "[[[4, 4]], [], [], [], []]",
       "[\"TensorList\", \"\", \"\", \"\", \"Scalar\"]", "[\"\", \"\", \"\", \"\", \"-1\"]") ","
    GLOO("gloo:all_reduce", 40, 200, "[[4, 4]]", "[\"float\"]") ","
    OP("c10d::broadcast_", 1000, 20, "[[[8]], [], [], [], [], []]",
       "[\"TensorList\", \"\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]",
       "[\"\", \"\", \"1\", \"0\", \"False\", \"-1\"]") ","
    GLOO("gloo:broadcast", 1025, 30, "[[8]]", "[\"long int\"]") ","
    OP("c10d::allgather_", 2000, 20, "[[[[3], [3]]], [[3]], [], []]",
       "[\"GenericList\", \"TensorList\", \"\", \"Scalar\"]", "[\"\", \"\", \"\", \"-1\"]") ","
    GLOO("gloo:all_gather", 2030, 5, "[[3]]", "[\"c10::BFloat16\"]") ","
    OP("c10d::send", 3000, 20, "[[[5]], [], [], []]",
       "[\"TensorList\", \"\", \"Scalar\", \"Scalar\"]", "[\"\", \"\", \"0\", \"0\"]") ","
    GLOO("gloo:send", 3001, 5, "[[5]]", "[\"int\"]") "]}";
/* clang-format on */

static void test_c10d_calls(void **state)
{
    replay_import im;
    imported(state, c10d_profile, &im);
    replay_trace *t = &im.t;
    assert_int_equal(t->ncalls, 4);
    assert_int_equal(t->calls[0].op, REPLAY_ALLREDUCE);
    assert_int_equal(t->calls[0].count, 16);
    assert_int_equal(t->calls[0].dtype, COLL_FLOAT32); /* from gloo's event */
    assert_int_equal(t->calls[0].t0, 10000);           /* the c10d op's start */
    assert_int_equal(t->calls[0].t1, 240000);          /* gloo's end: the work's */
    assert_int_equal(t->calls[1].op, REPLAY_BROADCAST);
    assert_int_equal(t->calls[1].root, 1); /* Concrete Inputs[2] */
    assert_int_equal(t->calls[1].dtype, COLL_INT64);
    assert_int_equal(t->calls[2].op, REPLAY_ALLGATHER);
    assert_int_equal(t->calls[2].dtype, COLL_BFLOAT16);
    assert_int_equal(t->calls[2].count, 3);
    assert_int_equal(t->calls[2].out, 6);
    assert_int_equal(t->calls[3].op, REPLAY_SEND);
    assert_int_equal(t->calls[3].peer, 0);
    assert_int_equal(t->calls[3].dtype, COLL_INT32);
    assert_int_equal(t->calls[1].gap, 1000000 - 240000);
    assert_int_equal(t->ngroups, 1);
    assert_string_equal(t->groups[0].id, "0");
    assert_string_equal(t->groups[0].desc,
                        "placed: no group name in the profiler event; assumed the world group");
    has_warning(&im, "4 calls (allreduce 1, allgather 1, broadcast 1, send 1) placed in group "
                     "\"0\"");
    has_warning(&im, "assumed the world group");
    has_warning(&im, "1 calls with a reduction");
    replay_import_free(&im);
}

/* The backend's event of a call is the next of its op whose size agrees: a
 * reduce-scatter's gloo work is an all_reduce of its input, which an earlier
 * all-reduce of another size, whose work starts later, must not take. */
/* clang-format off */
static const char pairing_profile[] =
    "{" DIST(0, 2) ",\"traceEvents\":["
    OP("c10d::_reduce_scatter_base_", 20, 5, "[[16], [32], [], [], [], []]",
       "[\"float\", \"float\", \"\", \"\", \"Scalar\", \"Scalar\"]", "[]") ","
    OP("c10d::allreduce_", 10, 5, "[[[100]], [], [], [], []]",
       "[\"TensorList\", \"\", \"\", \"\", \"Scalar\"]", "[]") ","
    GLOO("gloo:all_reduce", 30, 70, "[[32]]", "[\"float\"]") ","
    GLOO("gloo:all_reduce", 40, 500, "[[100]]", "[\"float\"]") ","
    OP("c10d::allreduce_", 1000, 5, "[[[7]], [], [], [], []]",
       "[\"TensorList\", \"\", \"\", \"\", \"Scalar\"]", "[]") "]}";
/* clang-format on */

static void test_c10d_pairing(void **state)
{
    replay_import im;
    char err[1024];
    write_profile(state, pairing_profile);
    /* the last all-reduce has no gloo event: no dtype, said */
    assert_int_equal(replay_import_profiler(path, -1, -1, &im, err, sizeof err), -1);
    assert_non_null(strstr(err, "event \"c10d::allreduce_\" at ts 1000.000 us"));
    assert_non_null(strstr(err, "no tensor dtype"));
    replay_import_free(&im);
    char text[sizeof pairing_profile];
    snprintf(text, sizeof text, "%s", pairing_profile);
    strcpy(strstr(text, ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c10d::allreduce_\",\"pid\":7,"
                        "\"tid\":7,\"ts\":1000"),
           "]}");
    imported(state, text, &im);
    assert_int_equal(im.t.ncalls, 2);
    assert_int_equal(im.t.calls[0].op, REPLAY_ALLREDUCE);
    assert_int_equal(im.t.calls[0].count, 100);
    assert_int_equal(im.t.calls[0].t1, 540000); /* the all_reduce of 100, not the first */
    assert_int_equal(im.t.calls[1].op, REPLAY_REDUCESCATTER);
    assert_int_equal(im.t.calls[1].count, 16);
    assert_int_equal(im.t.calls[1].t1, 100000); /* the all_reduce of its 32 */
    replay_import_free(&im);
}

/* The calling thread's CPU times from its operators (tid 7; gloo's work on
 * tid 9): cpu, the operators' time between a call's return and the next
 * call; wait_cpu where the thread sat in no operator for a call's end. */
#define CPU_OP(name, ts, dur)                                                                \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":7,\"tid\":7,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{}}"
#define AR(ts)                                                  \
    OP("c10d::allreduce_", ts, 10, "[[[100]], [], [], [], []]", \
       "[\"TensorList\", \"\", \"\", \"\", \"Scalar\"]", "[]")
/* clang-format off */
static const char cpu_profile[] =
    "{" DIST(0, 2) ",\"traceEvents\":["
    AR(100) "," GLOO("gloo:all_reduce", 120, 280, "[[100]]", "[\"float\"]") ","
    CPU_OP("aten::mm", 150, 100) ","       /* then idle from 250: waits for the first call */
    CPU_OP("aten::linear", 450, 450) ","   /* resumes 50 us after its end (400) */
    CPU_OP("aten::mm", 500, 300) ","       /* inside linear: counted once */
    AR(1000) "," GLOO("gloo:all_reduce", 1020, 3980, "[[100]]", "[\"float\"]") ","
    CPU_OP("aten::addmm", 1100, 4900) ","  /* runs through the second call's end (5000) */
    AR(7000) "," GLOO("gloo:all_reduce", 7020, 100, "[[100]]", "[\"float\"]") "]}";
/* clang-format on */

static void test_c10d_cpu(void **state)
{
    replay_import im;
    imported(state, cpu_profile, &im);
    replay_trace *t = &im.t;
    assert_int_equal(t->ncalls, 3);
    assert_int_equal(t->calls[0].cpu, -1);                 /* the thread's first call */
    assert_int_equal(t->calls[1].cpu, (100 + 450) * 1000); /* from 110 to 1000 */
    assert_int_equal(t->calls[2].cpu, 4900 * 1000);        /* from 1010 to 7000 */
    assert_int_equal(t->calls[0].wait_cpu, 100 * 1000);    /* blocked after the first mm */
    assert_int_equal(t->calls[1].wait_cpu, -1);            /* in an operator at its end */
    assert_int_equal(t->calls[2].wait_cpu, -1);            /* no operator after it */
    replay_import_free(&im);
}

/* Busy cores: a thread woken at a bucket's end resumes a tick later. A
 * resume 3 ms after the end of a 43 ms stretch is a wait for that call (an
 * eighth of the stretch); a call that ended halfway through it is not; nor
 * a resume 1 ms after a call's end in a 2 ms stretch. */
/* clang-format off */
static const char late_resume_profile[] =
    "{" DIST(0, 2) ",\"traceEvents\":["
    AR(100) "," GLOO("gloo:all_reduce", 120, 40000, "[[100]]", "[\"float\"]") ","
    AR(200) "," GLOO("gloo:all_reduce", 220, 20000, "[[100]]", "[\"float\"]") ","
    CPU_OP("aten::mm", 250, 100) ","        /* idle from 350 */
    CPU_OP("aten::linear", 43120, 2000) "," /* 3 ms after the first call's end */
    CPU_OP("aten::mm", 49000, 500) ","
    AR(50000) "," GLOO("gloo:all_reduce", 50020, 1000, "[[100]]", "[\"float\"]") ","
    CPU_OP("aten::mm", 52020, 10) "]}";
/* clang-format on */

static void test_c10d_wait_late_resume(void **state)
{
    replay_import im;
    imported(state, late_resume_profile, &im);
    replay_trace *t = &im.t;
    assert_int_equal(t->ncalls, 3);
    assert_int_equal(t->calls[0].wait_cpu, 100 * 1000); /* the mm after the second call */
    assert_int_equal(t->calls[1].wait_cpu, -1);         /* ended 23 ms before the resume */
    assert_int_equal(t->calls[2].wait_cpu, -1);         /* 1 ms late of 2 */
    assert_int_equal(t->calls[2].cpu, (100 + 2000 + 500) * 1000);
    replay_import_free(&im);
}

/* The profiler stopped while the last all-reduce ran: its gloo event carries
 * no arguments, so its dtype comes from the earlier all-reduce of its size. */
/* clang-format off */
static const char cut_profile[] =
    "{" DIST(0, 2) ",\"traceEvents\":["
    OP("c10d::allreduce_", 10, 5, "[[[100]], [], [], [], []]",
       "[\"TensorList\", \"\", \"\", \"\", \"Scalar\"]", "[]") ","
    GLOO("gloo:all_reduce", 40, 500, "[[100]]", "[\"double\"]") ","
    OP("c10d::allreduce_", 1000, 5, "[[[100]], [], [], [], []]",
       "[\"TensorList\", \"\", \"\", \"\", \"Scalar\"]", "[]") ","
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"gloo:all_reduce\",\"pid\":7,"
    "\"tid\":9,\"ts\":1010,\"dur\":900}]}";
/* clang-format on */

static void test_c10d_dtype_cut(void **state)
{
    replay_import im;
    imported(state, cut_profile, &im);
    assert_int_equal(im.t.ncalls, 2);
    assert_int_equal(im.t.calls[1].op, REPLAY_ALLREDUCE);
    assert_int_equal(im.t.calls[1].count, 100);
    assert_int_equal(im.t.calls[1].dtype, COLL_FLOAT64); /* the first one's */
    has_warning(&im, "1 calls whose events carry no dtype");
    replay_import_free(&im);
    /* no earlier call of its size: refused, saying why */
    char text[sizeof cut_profile];
    snprintf(text, sizeof text, "%s", cut_profile);
    char *second = strstr(strstr(text, "\"ts\":1000"), "[[[100]]");
    memcpy(second, "[[[101]]", 8);
    refused(state, text, -1, "at ts 1000.000 us", "nor an earlier allreduce of 101 elements");
}

/* A group smaller than the world: the one pg_config lists with this rank. */
static void test_c10d_placed_by_size(void **state)
{
    replay_import im;
    imported(state,
             "{\"distributedInfo\":{\"rank\":2,\"world_size\":4,\"pg_config\":["
             "{\"pg_name\":\"0\",\"pg_desc\":\"default_pg\",\"pg_size\":4,\"ranks\":[0,1,2,3]},"
             "{\"pg_name\":\"1\",\"pg_desc\":\"undefined\",\"pg_size\":2,\"ranks\":[0,1]},"
             "{\"pg_name\":\"2\",\"pg_desc\":\"undefined\",\"pg_size\":2,\"ranks\":[2,3]}]},"
             "\"traceEvents\":[" OP("c10d::_allgather_base_", 10, 20, "[[6], [3], [], [], []]",
                                    "[\"float\", \"float\", \"\", \"Bool\", \"Int\"]",
                                    "[\"\", \"\", \"\", \"False\", \"-1\"]") "]}",
             &im);
    assert_int_equal(im.t.ngroups, 1);
    assert_string_equal(im.t.groups[0].id, "2");
    assert_int_equal(im.t.groups[0].my_rank, 0);
    has_warning(&im, "the only group of that size with this rank");
    has_warning(&im, "1 calls (allgather 1) without the backend's event of their work");
    replay_import_free(&im);
}

/* Where there are no c10d events: the backend's alone. */
static void test_backend_only(void **state)
{
    replay_import im;
    imported(state,
             "{" DIST(0, 2) ",\"traceEvents\":[" OP("gloo:all_reduce", 1, 2, "[[10]]",
                                                    "[\"double\"]", "[\"\"]") "]}",
             &im);
    assert_int_equal(im.t.ncalls, 1);
    assert_int_equal(im.t.calls[0].dtype, COLL_FLOAT64);
    assert_int_equal(im.t.calls[0].count, 10);
    has_warning(&im, "the gloo:<collective> events do not name their group");
    replay_import_free(&im);
}

/* ---- bad input ---- */

static void test_bad_input(void **state)
{
    refused(state, "{\"traceEvents\": [", 0, "not JSON", NULL);
    refused(state, "{\"schemaVersion\": 1}", 0, "no \"traceEvents\"", "not a torch profiler");
    refused(state, "[1, 2]", 0, "no \"traceEvents\"", NULL);
    refused(state, "\x1f\x8b\x08", 0, "gzip-compressed: gunzip it first", NULL);
    refused(state, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"aten::mm\",\"ts\":1,\"dur\":1}]}", 0,
            "no communication events", "1 events");
    refused(state,
            "{" DIST(0, 2) ",\"traceEvents\":[" PARAM(12.5, 1, "allsmash", "Float", 4, 4, 2, "0",
                                                      "[0, 1]", 0, "") "]}",
            0, "event \"record_param_comms\" (\"allsmash\") at ts 12.500 us",
            "unknown collective \"allsmash\"");
    refused(state,
            "{" DIST(0, 2) ",\"traceEvents\":[" PARAM(1, 1, "allreduce", "ComplexFloat", 4, 4, 2,
                                                      "0", "[0, 1]", 0, "") "]}",
            0, "unknown dtype \"ComplexFloat\"", "record_param_comms");
    refused(state,
            "{" DIST(0, 2) ",\"traceEvents\":[" OP("gloo:all_reduce", 1, 2, "[[10]]",
                                                   "[\"short int\"]", "[\"\"]") "]}",
            0, "unknown dtype \"short int\"", "gloo:all_reduce");
    refused(state,
            "{" DIST(0, 2) ",\"traceEvents\":[{\"ph\":\"X\",\"name\":\"c10d::allreduce_\","
                           "\"ts\":3,\"dur\":1,\"args\":{}}]}",
            0, "record_shapes=True", "c10d::allreduce_");
    refused(state,
            "{" DIST(0, 2) ",\"traceEvents\":[" OP("c10d::frobnicate_", 1, 2, "[]", "[]",
                                                   "[]") "]}",
            0, "unknown collective \"frobnicate\"", NULL);
    refused(state,
            "{" DIST(0, 2) ",\"traceEvents\":[" PARAM(1, 1, "recvAnySource", "Float", 4, 4, 2, "0",
                                                      "[0, 1]", 0, "") "]}",
            0, "a receive from any source", "recvAnySource");
    /* no rank anywhere, and none given */
    refused(state,
            "{\"traceEvents\":[" OP("gloo:all_reduce", 1, 2, "[[10]]", "[\"float\"]",
                                    "[\"\"]") "]}",
            -1, "does not say its rank", NULL);
    /* a subgroup the event names without ranks, and no pg_config */
    refused(state,
            "{" DIST(0, 4) ",\"traceEvents\":[" PARAM(1, 1, "allreduce", "Float", 4, 4, 2, "3",
                                                      "[]", 0, "") "]}",
            0, "group \"3\" of 2 ranks", "pg_config");
    refused(state,
            "{" DIST(0, 2) ",\"traceEvents\":[" PARAM(1, 1, "broadcast", "Float", 4, 4, 2, "0",
                                                      "[0, 1]", 5, "") "]}",
            0, "without its root", NULL);
    refused(state,
            "{" DIST(0, 2) ",\"traceEvents\":[" PARAM(1, 1, "allreduce", "Float", 4, 4, 2, "0",
                                                      "[2, 3]", 0, "") "]}",
            0, "not a rank of world 2", NULL);
    refused(state,
            "{" DIST(5, 2) ",\"traceEvents\":[" PARAM(1, 1, "allreduce", "Float", 4, 4, 2, "0",
                                                      "[0, 1]", 0, "") "]}",
            0, "rank 5", "world 2");
}

static void test_missing_file(void **state)
{
    struct test_dir *d = *state;
    replay_import im;
    char err[1024], p[512];
    snprintf(p, sizeof p, "%s/absent.json", d->path);
    assert_int_equal(replay_import_profiler(p, 0, 1, &im, err, sizeof err), -1);
    assert_non_null(strstr(err, p));
    replay_import_free(&im);
}

/* ---- the writer: imported, written, read back as replay reads it ---- */

static void test_write_read_back(void **state)
{
    struct test_dir *d = *state;
    replay_import im;
    replay_trace back;
    char err[1024], out[600];
    imported(state,
             "{" DIST(1, 2) ",\"traceEvents\":["                                            //
             PARAM(100, 40, "allreduce", "Float", 1024, 1024, 2, "0", "[0, 1]", 1, "") ","  //
             PARAM(200, 10, "broadcast", "BFloat16", 8, 8, 2, "0", "[0, 1]", 0, "") ","     //
             PARAM(300, 10, "all_to_allv", "Int", 8, 6, 2, "0", "[0, 1]", 1,
                   ",\"In split size\":\"[3, 5]\",\"Out split size\":\"[3, 3]\"") "]}",
             &im);
    snprintf(out, sizeof out, "%s/rank1.jsonl", d->path);
    replay_write_meta m = {.host = "h\"q", .backend = "nccl", .pid = 9};
    assert_int_equal(replay_trace_write(out, &im.t, &m, err, sizeof err), 0);
    if (replay_trace_read(out, REPLAY_TRACE_MAX_BYTES, &back, NULL, err, sizeof err))
        fail_msg("written trace not read back: %s", err);
    assert_int_equal(back.rank, 1);
    assert_int_equal(back.world, 2);
    assert_string_equal(back.source, "torch-profiler");
    assert_int_equal(back.ncalls, 3);
    assert_int_equal(back.has_times, 1);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(back.calls[i].op, im.t.calls[i].op);
        assert_int_equal(back.calls[i].count, im.t.calls[i].count);
        assert_int_equal(back.calls[i].t0, im.t.calls[i].t0);
        assert_int_equal(back.calls[i].gap, im.t.calls[i].gap);
    }
    char *text = test_slurp(out, NULL);
    assert_non_null(strstr(text, "\"in_splits\":[3,5]"));
    assert_non_null(strstr(text, "\"host\":\"h\\\"q\""));
    assert_non_null(strstr(text, "{\"end\":true,\"calls\":3,\"truncated\":false}\n"));
    free(text);
    /* an unwritable place: refused naming it, nothing left */
    snprintf(out, sizeof out, "%s/no/such/dir/rank1.jsonl", d->path);
    assert_int_equal(replay_trace_write(out, &im.t, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "no/such/dir"));
    replay_trace_free(&back);
    replay_import_free(&im);
}

/* ---- the names ---- */

static void test_names(void **state)
{
    (void)state;
    replay_op op;
    coll_dtype dt;
    const struct {
        const char *name;
        replay_op op;
    } ops[] = {{"allreduce", REPLAY_ALLREDUCE},
               {"allreduce_coalesced", REPLAY_ALLREDUCE},
               {"all_gather", REPLAY_ALLGATHER},
               {"allgather_into_tensor_coalesced", REPLAY_ALLGATHER},
               {"_reduce_scatter_base", REPLAY_REDUCESCATTER},
               {"reduce_scatter_tensor_coalesced", REPLAY_REDUCESCATTER},
               {"alltoall_base", REPLAY_ALLTOALL},
               {"all_to_all", REPLAY_ALLTOALL},
               {"_broadcast_oop", REPLAY_BROADCAST},
               {"gather", REPLAY_GATHER},
               {"scatter", REPLAY_SCATTER}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        assert_int_equal(replay_import_op(ops[i].name, &op), 0);
        assert_int_equal(op, ops[i].op);
    }
    assert_int_equal(replay_import_op("wait", &op), 1);
    assert_int_equal(replay_import_op("allsmash", &op), -1);
    assert_int_equal(replay_import_dtype("Float", &dt), 0);
    assert_int_equal(dt, COLL_FLOAT32);
    assert_int_equal(replay_import_dtype("c10::BFloat16", &dt), 0);
    assert_int_equal(dt, COLL_BFLOAT16);
    assert_int_equal(replay_import_dtype("long int", &dt), 0);
    assert_int_equal(dt, COLL_INT64);
    assert_int_equal(replay_import_dtype("Char", &dt), 0);
    assert_int_equal(dt, COLL_INT8);
    assert_int_equal(replay_import_dtype("Short", &dt), -1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, test_dir_setup, test_dir_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_param_calls),
        T(test_param_splits),
        T(test_param_splits_rows),
        T(test_param_group_ranks),
        T(test_param_rank_from_events),
        T(test_nested_once),
        T(test_nested_c10d),
        T(test_param_missing_ops),
        T(test_param_kernels),
        T(test_c10d_calls),
        T(test_c10d_pairing),
        T(test_c10d_placed_by_size),
        T(test_c10d_dtype_cut),
        T(test_c10d_cpu),
        T(test_c10d_wait_late_resume),
        T(test_backend_only),
        T(test_bad_input),
        T(test_missing_file),
        T(test_write_read_back),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
