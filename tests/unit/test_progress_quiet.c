/* A communicator's progress thread sleeps through blocking calls: once a
 * nonblocking call has started it, the blocking calls that follow must not
 * wake it (each wake-up is a context switch on a machine whose cores the
 * ranks need: issue 50). Counted as the process's voluntary context switches
 * over many blocking calls on a world of one, where nothing else sleeps. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "coll.h"

#define CALLS 2000

static long sleeps(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_nvcsw;
}

static void test_blocking_calls_leave_it_asleep(void **state)
{
    (void)state;
    char dir[] = "/tmp/progress_quiet.XXXXXX", method[64], store[96];
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
    float v = 1, out = 0;
    coll_request *req;
    assert_int_equal(coll_iallreduce(comm, &v, &out, 1, COLL_FLOAT32, COLL_SUM, &req), COLL_OK);
    assert_int_equal(coll_wait(req), COLL_OK); /* the progress thread runs, then sleeps */
    assert_true(out == 1);
    usleep(20000); /* let it go back to sleep */
    long before = sleeps();
    for (int i = 0; i < CALLS; i++) {
        assert_int_equal(coll_barrier(comm), COLL_OK);
        assert_int_equal(coll_allreduce(comm, &v, &out, 1, COLL_FLOAT32, COLL_SUM), COLL_OK);
    }
    long woken = sleeps() - before;
    /* Woken by the calls, it sleeps again after many of them (on two busy
     * cores: about one in fifty calls, one in one on idle ones); a few stray
     * sleeps (a page fault waiting on I/O) are allowed. */
    if (woken >= CALLS / 100) fail_msg("%ld sleeps over %d blocking calls", woken, 2 * CALLS);
    assert_int_equal(coll_comm_destroy(comm), COLL_OK);
    snprintf(store, sizeof store, "%s/store", dir);
    unlink(store);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocking_calls_leave_it_asleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
