/* The stager that lets tcp/shm take CUDA device buffers (and nccl take host
 * ones), with a fake "device": an arena the backend must not touch. Every
 * call shape is checked: which bytes are staged, that in-place offsets survive,
 * that results come back, and that untouched buffers stay untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/nccl/nccl_backend.h"
#include "backend/shm/shm_backend.h"
#include "backend/staging.h"
#include "backend/tcp/tcp_backend.h"

#define ARENA 4096
static unsigned char arena[ARENA]; /* the fake device */
static int copies, allocs;

static int in_arena(const void *p)
{
    return (uintptr_t)p >= (uintptr_t)arena && (uintptr_t)p < (uintptr_t)arena + ARENA;
}

static void *fake_alloc(size_t n)
{
    allocs++;
    return malloc(n);
}

static int fake_copy(void *dst, const void *src, size_t n, coll__err *err)
{
    (void)err;
    copies++;
    memcpy(dst, src, n);
    return 0;
}

static const coll__stage_mem fake = {
    .what = "fake", .foreign = in_arena, .alloc = fake_alloc, .release = free, .copy = fake_copy};

static coll__call call_of(coll__kind kind, const void *s, void *r, size_t count, int root)
{
    coll__call c = {.kind = kind,
                    .sendbuf = s,
                    .recvbuf = r,
                    .count = count,
                    .dt = COLL_INT32,
                    .op = COLL_SUM,
                    .root = root,
                    .dest = -1,
                    .source = -1};
    return c;
}

static int setup(void **state)
{
    static coll__stager s;
    memset(&s, 0, sizeof s);
    s.mem = &fake;
    for (int i = 0; i < ARENA; i++) arena[i] = (unsigned char)(i * 7 + 1);
    copies = allocs = 0;
    *state = &s;
    return 0;
}

static int teardown(void **state)
{
    coll__stager_free(*state);
    return 0;
}

/* A stand-in for the backend: writes f(i) into the staged receive buffer. */
static void backend_writes(const coll__call *staged, size_t bytes, unsigned char tag)
{
    assert_false(in_arena(staged->recvbuf));
    for (size_t i = 0; i < bytes; i++)
        ((unsigned char *)staged->recvbuf)[i] = (unsigned char)(tag + i);
}

static void check_result(const void *recv, size_t bytes, unsigned char tag)
{
    for (size_t i = 0; i < bytes; i++)
        if (((const unsigned char *)recv)[i] != (unsigned char)(tag + i))
            fail_msg("byte %zu of the result: %d, want %d", i, ((const unsigned char *)recv)[i],
                     (unsigned char)(tag + i));
}

static void extents(void **state)
{
    (void)state;
    size_t s, r;
    int x;
    coll__call c = call_of(COLL_KIND_ALLGATHER, &x, &x, 10, 0);
    coll__call_extents(&c, 1, 4, &s, &r);
    assert_int_equal(s, 40);
    assert_int_equal(r, 160);
    c.kind = COLL_KIND_REDUCESCATTER;
    coll__call_extents(&c, 1, 4, &s, &r);
    assert_int_equal(s, 160);
    assert_int_equal(r, 40);
    c.kind = COLL_KIND_BROADCAST; /* sendbuf is read at the root only */
    coll__call_extents(&c, 1, 4, &s, &r);
    assert_int_equal(s, 0);
    assert_int_equal(r, 40);
    c.kind = COLL_KIND_REDUCE; /* recvbuf is written at the root only */
    coll__call_extents(&c, 1, 4, &s, &r);
    assert_int_equal(s, 40);
    assert_int_equal(r, 0);
    c.kind = COLL_KIND_ALLTOALL;
    coll__call_extents(&c, 1, 4, &s, &r);
    assert_int_equal(s, 160);
    assert_int_equal(r, 160);
    c = call_of(COLL_KIND_P2P, &x, &x, 3, 0);
    c.source = 2;
    c.recvcount = 5;
    coll__call_extents(&c, 1, 4, &s, &r);
    assert_int_equal(s, 0);
    assert_int_equal(r, 20);
    c = call_of(COLL_KIND_BARRIER, NULL, NULL, 0, 0);
    coll__call_extents(&c, 1, 4, &s, &r);
    assert_int_equal(s + r, 0);
}

static void host_buffers_are_not_staged(void **state)
{
    int a[8] = {0}, b[8] = {0}, any = -1;
    coll__call c = call_of(COLL_KIND_ALLREDUCE, a, b, 8, 0), staged;
    coll__err err = {.rank = -1};
    assert_int_equal(coll__stager_begin(*state, &c, 0, 2, &staged, &any, &err), 0);
    assert_int_equal(any, 0);
    assert_ptr_equal(staged.sendbuf, a);
    assert_ptr_equal(staged.recvbuf, b);
    assert_int_equal(copies + allocs, 0);
}

static void allreduce_out_of_place(void **state)
{
    unsigned char *send = arena, *recv = arena + 1024;
    unsigned char before_send[64];
    memcpy(before_send, send, 64);
    coll__call c = call_of(COLL_KIND_ALLREDUCE, send, recv, 16, 0), staged;
    coll__err err = {.rank = -1};
    int any;
    assert_int_equal(coll__stager_begin(*state, &c, 0, 2, &staged, &any, &err), 0);
    assert_int_equal(any, 1);
    assert_false(in_arena(staged.sendbuf));
    assert_memory_equal(staged.sendbuf, send, 64); /* the input went across */
    backend_writes(&staged, 64, 9);
    assert_int_equal(coll__stager_end(*state, &c, &staged, 0, 2, &err), 0);
    check_result(recv, 64, 9);
    assert_memory_equal(send, before_send, 64);
    assert_int_equal(copies, 2); /* in and out, nothing else */
    /* a second call of the same size reuses the staging memory */
    assert_int_equal(coll__stager_begin(*state, &c, 0, 2, &staged, &any, &err), 0);
    assert_int_equal(allocs, 2);
}

/* In-place allgather: sendbuf is rank r's block inside recvbuf. */
static void allgather_in_place(void **state)
{
    const int n = 4, rank = 2, count = 8; /* int32: 32 bytes a block */
    unsigned char *recv = arena + 256, *send = recv + rank * count * 4;
    coll__call c = call_of(COLL_KIND_ALLGATHER, send, recv, count, 0), staged;
    coll__err err = {.rank = -1};
    int any;
    assert_int_equal(coll__stager_begin(*state, &c, rank, n, &staged, &any, &err), 0);
    assert_int_equal(any, 1);
    assert_ptr_equal((const char *)staged.sendbuf, (char *)staged.recvbuf + rank * count * 4);
    assert_memory_equal(staged.sendbuf, send, (size_t)count * 4);
    backend_writes(&staged, (size_t)n * count * 4, 3);
    assert_int_equal(coll__stager_end(*state, &c, &staged, rank, n, &err), 0);
    check_result(recv, (size_t)n * count * 4, 3);
}

/* In-place reduce-scatter: recvbuf is rank r's block inside sendbuf. */
static void reducescatter_in_place(void **state)
{
    const int n = 3, rank = 1, count = 4;
    unsigned char *send = arena + 100, *recv = send + rank * count * 4;
    unsigned char whole[48];
    memcpy(whole, send, sizeof whole);
    coll__call c = call_of(COLL_KIND_REDUCESCATTER, send, recv, count, 0), staged;
    coll__err err = {.rank = -1};
    int any;
    assert_int_equal(coll__stager_begin(*state, &c, rank, n, &staged, &any, &err), 0);
    assert_ptr_equal((char *)staged.recvbuf, (const char *)staged.sendbuf + rank * count * 4);
    assert_memory_equal(staged.sendbuf, whole, sizeof whole); /* every block went across */
    backend_writes(&staged, (size_t)count * 4, 77);
    assert_int_equal(coll__stager_end(*state, &c, &staged, rank, n, &err), 0);
    check_result(recv, (size_t)count * 4, 77);
    assert_memory_equal(send, whole, 16); /* block 0 is not this rank's result: untouched */
}

/* Off the root, a broadcast does not read sendbuf; in place it must stay in place. */
static void broadcast_off_root_in_place(void **state)
{
    unsigned char *buf = arena + 512;
    coll__call c = call_of(COLL_KIND_BROADCAST, buf, buf, 10, 0), staged;
    coll__err err = {.rank = -1};
    int any;
    assert_int_equal(coll__stager_begin(*state, &c, 1, 2, &staged, &any, &err), 0);
    assert_int_equal(any, 1);
    assert_ptr_equal(staged.sendbuf, staged.recvbuf);
    assert_int_equal(copies, 0); /* nothing to read at this rank */
    backend_writes(&staged, 40, 5);
    assert_int_equal(coll__stager_end(*state, &c, &staged, 1, 2, &err), 0);
    check_result(buf, 40, 5);
}

/* Off the root, reduce writes nothing: recvbuf must not be touched. */
static void reduce_off_root(void **state)
{
    unsigned char *send = arena, *recv = arena + 2048;
    unsigned char before[40];
    memcpy(before, recv, sizeof before);
    coll__call c = call_of(COLL_KIND_REDUCE, send, recv, 10, 0), staged;
    coll__err err = {.rank = -1};
    int any;
    assert_int_equal(coll__stager_begin(*state, &c, 1, 2, &staged, &any, &err), 0);
    assert_ptr_equal(staged.recvbuf, recv);
    assert_false(in_arena(staged.sendbuf));
    assert_int_equal(coll__stager_end(*state, &c, &staged, 1, 2, &err), 0);
    assert_memory_equal(recv, before, sizeof before);
    assert_int_equal(copies, 1);
}

/* A receive into device memory from a host send buffer: only the receive is staged. */
static void mixed_p2p(void **state)
{
    int host[4] = {1, 2, 3, 4};
    unsigned char *recv = arena + 3000;
    coll__call c = call_of(COLL_KIND_P2P, host, recv, 4, 0), staged;
    c.dest = 1;
    c.source = 1;
    c.recvcount = 6;
    coll__err err = {.rank = -1};
    int any;
    assert_int_equal(coll__stager_begin(*state, &c, 0, 2, &staged, &any, &err), 0);
    assert_ptr_equal(staged.sendbuf, host);
    backend_writes(&staged, 24, 40);
    assert_int_equal(coll__stager_end(*state, &c, &staged, 0, 2, &err), 0);
    check_result(recv, 24, 40);
}

static void *no_memory(size_t n)
{
    (void)n;
    return NULL;
}

static void out_of_staging_memory(void **state)
{
    (void)state;
    coll__stage_mem none = fake;
    none.alloc = no_memory;
    coll__stager s = {.mem = &none};
    coll__call c = call_of(COLL_KIND_ALLREDUCE, arena, arena + 64, 8, 0), staged;
    coll__err err = {.rank = -1};
    int any;
    assert_int_equal(coll__stager_begin(&s, &c, 0, 2, &staged, &any, &err), COLL_ENOMEM);
    if (!strstr(err.msg, "32 bytes of fake memory")) fail_msg("message: %s", err.msg);
    coll__stager_free(&s);
}

/* Whether a backend is staged is its caps bit, not its name: nccl has the bit
 * and the host backends do not; a barrier, which has no data, never is. */
static void staging_follows_caps(void **state)
{
    (void)state;
    coll__call ar = call_of(COLL_KIND_ALLREDUCE, arena, arena + 64, 8, 0);
    coll__call bar = call_of(COLL_KIND_BARRIER, NULL, NULL, 0, 0);
    coll__backend_ops named_nccl = {.name = "nccl"}, native = {.name = "tcp"};
    native.caps = COLL__CAP_DEVICE_BUFFERS;
    assert_true(coll__backend_nccl.caps & COLL__CAP_DEVICE_BUFFERS);
    assert_false(coll__call_needs_staging(&coll__backend_nccl, &ar));
    assert_true(coll__call_needs_staging(&coll__backend_tcp, &ar));
    assert_true(coll__call_needs_staging(&coll__backend_shm, &ar));
    assert_true(coll__call_needs_staging(&named_nccl, &ar));
    assert_false(coll__call_needs_staging(&native, &ar));
    assert_false(coll__call_needs_staging(&coll__backend_tcp, &bar));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(extents),
        cmocka_unit_test_setup_teardown(host_buffers_are_not_staged, setup, teardown),
        cmocka_unit_test_setup_teardown(allreduce_out_of_place, setup, teardown),
        cmocka_unit_test_setup_teardown(allgather_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(reducescatter_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(broadcast_off_root_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(reduce_off_root, setup, teardown),
        cmocka_unit_test_setup_teardown(mixed_p2p, setup, teardown),
        cmocka_unit_test(out_of_staging_memory),
        cmocka_unit_test(staging_follows_caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
