/* coll_recv_any's refusals that need no peer: bad arguments, a world of one,
 * and the backends that cannot run it (nccl always, gloo for 0 elements),
 * refused before their state is touched. The receives themselves run on real
 * ranks: tests/ranks/test_recv_any.c, test_failures.c's any_* modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/gloo/gloo_backend.h"
#include "backend/nccl/nccl_backend.h"
#include "coll.h"
#include "core/clock.h"

static void test_null_comm(void **state)
{
    (void)state;
    int src = 3, buf[4];
    assert_int_equal(coll_recv_any(NULL, buf, 4, COLL_INT32, &src), COLL_EINVAL);
}

/* A world of one has nobody to receive from: refused, the communicator usable. */
static void test_world_of_one(void **state)
{
    (void)state;
    char dir[] = "/tmp/recv_any.XXXXXX", method[64];
    assert_non_null(mkdtemp(dir));
    snprintf(method, sizeof method, "file://%s/store", dir);
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = "tcp";
    cfg.init_method = method;
    cfg.rank = 0;
    cfg.world_size = 1;
    cfg.timeout_s = 10;
    coll_comm *comm;
    assert_int_equal(coll_comm_create(&cfg, &comm), COLL_OK);
    int src = 3, buf[4] = {0};
    assert_int_equal(coll_recv_any(comm, buf, 4, COLL_INT32, &src), COLL_EINVAL);
    assert_int_equal(src, -1);
    assert_non_null(strstr(coll_comm_errmsg(comm), "no other rank"));
    assert_int_equal(coll_recv_any(comm, buf, 4, COLL_INT32, NULL), COLL_EINVAL);
    assert_non_null(strstr(coll_comm_errmsg(comm), "source is NULL"));
    assert_int_equal(coll_barrier(comm), COLL_OK);
    assert_int_equal(coll_comm_destroy(comm), COLL_OK);
    char store[96];
    snprintf(store, sizeof store, "%s/store", dir);
    unlink(store);
    rmdir(dir);
}

static coll__call any_call(size_t count, int *from)
{
    static int32_t buf[4];
    return (coll__call){.kind = COLL_KIND_P2P,
                        .recvbuf = buf,
                        .dt = COLL_INT32,
                        .dest = -1,
                        .source = COLL__ANY_SOURCE,
                        .recvcount = count,
                        .from = from};
}

/* Refused by ops before it looks at its state (NULL here): nothing was sent,
 * so every backend refuses alike and the communicator stays usable. */
static void expect_refused(const coll__backend_ops *ops, size_t count, const char *why)
{
    int from = -1;
    coll__call c = any_call(count, &from);
    coll__sig sig;
    memset(&sig, 0, sizeof sig);
    sig.kind = COLL_KIND_P2P;
    coll__err err;
    coll__err_init(&err, NULL, 0);
    assert_int_equal(ops->run(NULL, &c, &sig, coll__now_s() + 10, &err), COLL_ENOTSUP);
    if (!strstr(err.msg, why)) fail_msg("%s: '%s' lacks '%s'", ops->name, err.msg, why);
}

static void test_nccl_refuses(void **state)
{
    (void)state;
    expect_refused(&coll__backend_nccl, 4, "NCCL has no receive from any source");
    /* Without a GPU the backend is not even there: its communicator is refused. */
    char why[256];
    if (coll_backend_available("nccl", why, sizeof why)) return;
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = "nccl";
    coll_comm *comm;
    assert_int_equal(coll_comm_create(&cfg, &comm), COLL_EUNAVAIL);
    assert_null(comm);
}

static void test_gloo_refuses_empty(void **state)
{
    (void)state;
#ifdef COLL_HAVE_GLOO
    expect_refused(&coll__backend_gloo, 0, "Gloo moves no message for 0 elements");
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_comm),
        cmocka_unit_test(test_world_of_one),
        cmocka_unit_test(test_nccl_refuses),
        cmocka_unit_test(test_gloo_refuses_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
