/* Which calls a replay keeps in flight (src/replay/replay_schedule.c): done_by
 * from the recorded times (a call must end before the first call issued after
 * its recorded end), kept in issue order per group, capped by the group's next
 * blocking call; each group's most calls in flight at once, capped at
 * REPLAY_MAX_IN_FLIGHT. The traces are built in memory, times in ns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "replay/replay_schedule.h"

#define MAXC 64

typedef struct built {
    replay_trace t;
    replay_call calls[MAXC];
    replay_group groups[2];
} built;

static void start(built *b, size_t ngroups)
{
    memset(b, 0, sizeof *b);
    b->t.calls = b->calls, b->t.groups = b->groups, b->t.ngroups = ngroups, b->t.has_times = 1;
}

static void add(built *b, size_t group, replay_op op, int64_t t0, int64_t t1)
{
    replay_call *c = &b->calls[b->t.ncalls];
    c->seq = (int64_t)b->t.ncalls++, c->group = group, c->op = op, c->t0 = t0, c->t1 = t1;
    c->cpu = c->wait_cpu = -1;
}

/* One after the other: each call must end before the next is issued, one in flight. */
static void test_sequential(void **state)
{
    (void)state;
    built b;
    start(&b, 1);
    add(&b, 0, REPLAY_ALLREDUCE, 0, 10);
    add(&b, 0, REPLAY_ALLREDUCE, 15, 20);
    add(&b, 0, REPLAY_BROADCAST, 20, 30); /* issued the instant the previous ended */
    size_t done_by[3], depth[1];
    replay_schedule_done_by(&b.t, done_by);
    assert_int_equal(done_by[0], 1);
    assert_int_equal(done_by[1], 2);
    assert_int_equal(done_by[2], 3); /* the last: the end of the trace */
    assert_int_equal(replay_schedule_depth(&b.t, done_by, depth), 0);
    assert_int_equal(depth[0], 1);
}

/* DDP's buckets: three all-reduces issued before the first ends, then a wait
 * for all: three in flight; the call after them waits for all three. */
static void test_async_buckets(void **state)
{
    (void)state;
    built b;
    start(&b, 1);
    add(&b, 0, REPLAY_ALLREDUCE, 0, 50);
    add(&b, 0, REPLAY_ALLREDUCE, 10, 70);
    add(&b, 0, REPLAY_ALLREDUCE, 20, 90);
    add(&b, 0, REPLAY_ALLREDUCE, 100, 110);
    size_t done_by[4], depth[1];
    replay_schedule_done_by(&b.t, done_by);
    assert_int_equal(done_by[0], 3);
    assert_int_equal(done_by[1], 3);
    assert_int_equal(done_by[2], 3);
    assert_int_equal(done_by[3], 4);
    assert_int_equal(replay_schedule_depth(&b.t, done_by, depth), 0);
    assert_int_equal(depth[0], 3);
}

/* A later call of the group recorded as ending first (an import's times):
 * the earlier one must be done by then too, calls of a group end in order. */
static void test_group_order(void **state)
{
    (void)state;
    built b;
    start(&b, 1);
    add(&b, 0, REPLAY_ALLREDUCE, 0, 100); /* recorded as ending after call 1 */
    add(&b, 0, REPLAY_ALLREDUCE, 5, 8);
    add(&b, 0, REPLAY_ALLREDUCE, 10, 20);
    size_t done_by[3];
    replay_schedule_done_by(&b.t, done_by);
    assert_int_equal(done_by[1], 2);
    assert_int_equal(done_by[0], 2); /* not 3: call 1 cannot end before call 0 */
}

/* A blocking call (send) waits for its group's calls in flight, not for
 * another group's; two groups count their own depth. */
static void test_blocking_and_groups(void **state)
{
    (void)state;
    built b;
    start(&b, 2);
    add(&b, 0, REPLAY_ALLREDUCE, 0, 100); /* 0: in flight over the send */
    add(&b, 1, REPLAY_ALLREDUCE, 5, 100); /* 1: in group 1 */
    add(&b, 1, REPLAY_ALLGATHER, 6, 100); /* 2 */
    add(&b, 0, REPLAY_SEND, 10, 20);      /* 3: blocking in group 0 */
    add(&b, 0, REPLAY_ALLREDUCE, 200, 210);
    size_t done_by[5], depth[2];
    replay_schedule_done_by(&b.t, done_by);
    assert_int_equal(done_by[0], 3); /* the send needs it ended */
    assert_int_equal(done_by[1], 4); /* recorded end 100: before call 4 */
    assert_int_equal(done_by[2], 4);
    assert_int_equal(replay_schedule_depth(&b.t, done_by, depth), 0);
    assert_int_equal(depth[0], 1);
    assert_int_equal(depth[1], 2);
}

/* A call the program ran on its calling thread (blocking) is one the replay
 * waits for its group's calls before, as a blocking op: the all-reduce
 * before it must be done by then, and it takes no slot of its own. */
static void test_blocking_call(void **state)
{
    (void)state;
    built b;
    start(&b, 1);
    add(&b, 0, REPLAY_ALLREDUCE, 0, 100); /* 0: recorded in flight over call 1 */
    add(&b, 0, REPLAY_BROADCAST, 10, 11); /* 1: ran on the calling thread */
    add(&b, 0, REPLAY_ALLREDUCE, 200, 210);
    b.calls[1].blocking = 1;
    assert_false(replay_call_nonblocking(&b.calls[1]));
    assert_true(replay_call_nonblocking(&b.calls[0]));
    size_t done_by[3], depth[1];
    replay_schedule_done_by(&b.t, done_by);
    assert_int_equal(done_by[0], 1);
    assert_int_equal(replay_schedule_depth(&b.t, done_by, depth), 0);
    assert_int_equal(depth[0], 1);
}

/* Where the program blocked for a call (wait_cpu): met in the gap before the
 * first call issued after its end, in the order of the CPU time at which the
 * program blocked; calls it never blocked for are not there. */
static void test_waits(void **state)
{
    (void)state;
    built b;
    start(&b, 1);
    add(&b, 0, REPLAY_ALLREDUCE, 0, 50);    /* ends before call 2: not waited for */
    add(&b, 0, REPLAY_ALLREDUCE, 10, 70);   /* waited for before call 2, after 9 ns */
    add(&b, 0, REPLAY_ALLREDUCE, 20, 65);   /* waited for before call 2, after 4 ns */
    add(&b, 0, REPLAY_ALLREDUCE, 100, 130); /* waited for after the last call */
    b.calls[1].wait_cpu = 9, b.calls[2].wait_cpu = 4, b.calls[3].wait_cpu = 0;
    size_t n = 99;
    replay_wait *w = replay_schedule_waits(&b.t, &n);
    assert_non_null(w);
    assert_int_equal(n, 3);
    assert_int_equal(w[0].call, 2), assert_int_equal(w[0].before, 3), assert_int_equal(w[0].cpu, 4);
    assert_int_equal(w[1].call, 1), assert_int_equal(w[1].before, 3), assert_int_equal(w[1].cpu, 9);
    assert_int_equal(w[2].call, 3), assert_int_equal(w[2].before, 4);
    free(w);
    b.calls[1].wait_cpu = b.calls[2].wait_cpu = b.calls[3].wait_cpu = -1;
    assert_null(replay_schedule_waits(&b.t, &n));
    assert_int_equal(n, 0);
}

/* More in flight than REPLAY_MAX_IN_FLIGHT: the depth is the cap. */
static void test_cap(void **state)
{
    (void)state;
    built b;
    start(&b, 1);
    for (int i = 0; i < REPLAY_MAX_IN_FLIGHT + 5; i++) add(&b, 0, REPLAY_ALLREDUCE, i, 1000);
    size_t done_by[MAXC], depth[1];
    replay_schedule_done_by(&b.t, done_by);
    assert_int_equal(replay_schedule_depth(&b.t, done_by, depth), 0);
    assert_int_equal(depth[0], REPLAY_MAX_IN_FLIGHT);
    assert_true(replay_op_nonblocking(REPLAY_ALLREDUCE) && !replay_op_nonblocking(REPLAY_RECV) &&
                !replay_op_nonblocking(REPLAY_BARRIER));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequential),    cmocka_unit_test(test_async_buckets),
        cmocka_unit_test(test_group_order),   cmocka_unit_test(test_blocking_and_groups),
        cmocka_unit_test(test_cap),           cmocka_unit_test(test_waits),
        cmocka_unit_test(test_blocking_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
