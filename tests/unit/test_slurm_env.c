/* Slurm's environment for the rendezvous (bootstrap/slurm_env.h): the store
 * port derived from the job and step ids, the store host from the nodelist. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/launch_env.h"
#include "bootstrap/slurm_env.h"

static const char *const VARS[] = {"SLURM_JOB_ID",
                                   "SLURM_STEP_ID",
                                   "SLURM_STEP_NODELIST",
                                   "SLURM_JOB_NODELIST",
                                   "SLURM_LAUNCH_NODE_IPADDR",
                                   "SLURM_PROCID",
                                   "SLURM_NTASKS",
                                   "MASTER_ADDR"};

static int clear(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++) unsetenv(VARS[i]);
    return 0;
}

static int port_of(const char *job, const char *step)
{
    setenv("SLURM_JOB_ID", job, 1);
    if (step) setenv("SLURM_STEP_ID", step, 1);
    else unsetenv("SLURM_STEP_ID");
    return coll__slurm_store_port();
}

static void test_port_from_job_and_step(void **state)
{
    (void)state;
    assert_int_equal(coll__slurm_store_port(), -1); /* not under Slurm */
    assert_int_equal(port_of("12", "0"), 20000 + 12 * 97);
    assert_int_equal(port_of("12", NULL), 20000 + 12 * 97); /* no step: step 0 */
    assert_int_equal(port_of("12", "3"), 20000 + 12 * 97 + 3);
    /* Steps of one job never share a port; nor do consecutive jobs. */
    int seen[64];
    char step[16];
    for (int i = 0; i < 64; i++) {
        snprintf(step, sizeof step, "%d", i);
        seen[i] = port_of("4294967295", step);
        assert_true(seen[i] >= COLL_SLURM_PORT_BASE && seen[i] < 32768);
        for (int j = 0; j < i; j++) assert_int_not_equal(seen[i], seen[j]);
    }
    assert_int_not_equal(port_of("1000", "0"), port_of("1001", "0"));
    /* The batch step's id (0xfffffffe) still lands in range. */
    int batch = port_of("77", "4294967294");
    assert_true(batch >= COLL_SLURM_PORT_BASE &&
                batch < COLL_SLURM_PORT_BASE + COLL_SLURM_PORT_SPAN);
    assert_int_equal(port_of("abc", "0"), -1);
    assert_int_equal(port_of("", "0"), -1);
    assert_int_equal(port_of("-5", "0"), -1);
}

static void first_is(const char *list, const char *want)
{
    char buf[64];
    int rc = coll__slurm_first_host(list, buf, sizeof buf);
    if (!want) {
        assert_int_equal(rc, -1);
        return;
    }
    assert_int_equal(rc, 0);
    assert_string_equal(buf, want);
}

static void test_first_host(void **state)
{
    (void)state;
    first_is("node1", "node1");
    first_is("node1,node2", "node1");
    first_is("node[03-05,9],login", "node03");
    first_is("node[7]", "node7");
    first_is("rack[1-2]-n[07-08]", "rack1-n07");
    first_is("h0.example.org,h1", "h0.example.org");
    first_is("", NULL);
    first_is(NULL, NULL);
    first_is(",node1", NULL);
    first_is("node[", NULL);
    first_is("node[a-b]", NULL);
    first_is("node[1-3", NULL);
    char tiny[4];
    assert_int_equal(coll__slurm_first_host("node1", tiny, sizeof tiny), -1);
}

static void test_store_host_under_srun(void **state)
{
    (void)state;
    setenv("SLURM_PROCID", "1", 1);
    setenv("SLURM_NTASKS", "4", 1);
    coll_launch_env env;
    assert_true(coll_launch_env_detect(&env));
    assert_null(coll__launch_env_store_host(&env));
    setenv("SLURM_LAUNCH_NODE_IPADDR", "10.0.0.9", 1);
    assert_string_equal(coll__launch_env_store_host(&env), "10.0.0.9");
    setenv("SLURM_JOB_NODELIST", "cn[10-11]", 1);
    assert_string_equal(coll__launch_env_store_host(&env), "cn10");
    setenv("SLURM_STEP_NODELIST", "cn[11]", 1); /* the step's own nodes win */
    assert_string_equal(coll__launch_env_store_host(&env), "cn11");
    setenv("MASTER_ADDR", "10.1.1.1", 1);
    assert_string_equal(coll__launch_env_store_host(&env), "10.1.1.1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_port_from_job_and_step, clear),
        cmocka_unit_test_setup(test_first_host, clear),
        cmocka_unit_test_setup(test_store_host_under_srun, clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
