/* Listen address selection (bootstrap/listen_addr.h): the overrides, one host,
 * the route to the store host, COLL_SOCKET_IFNAME syntax, the fail-fast
 * errors, and which launcher variables say a job spans hosts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bootstrap/launch_env.h"
#include "bootstrap/listen_addr.h"

#include <stdlib.h>
#include <string.h>

static const char *const all_vars[] = {
    "COLL_LISTEN_ADDR",
    "COLL_SOCKET_IFNAME",
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "MASTER_ADDR",
    "COLL_LAUNCHED",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "SLURM_NODEID",
    "SLURM_NNODES",
    "SLURM_STEP_NUM_NODES",
    "SLURM_NTASKS_PER_NODE",
    "SLURM_LAUNCH_NODE_IPADDR",
    "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST",
    NULL,
};

static int clear_env(void **state)
{
    (void)state;
    for (int i = 0; all_vars[i]; i++) unsetenv(all_vars[i]);
    return 0;
}

static void set(const char *name, const char *value)
{
    assert_int_equal(setenv(name, value, 1), 0);
}

static void test_ifname_match(void **state)
{
    (void)state;
    assert_true(coll__ifname_match("eth", "eth0"));
    assert_false(coll__ifname_match("eth", "ens3"));
    assert_true(coll__ifname_match("ib,eth", "eth1"));
    assert_true(coll__ifname_match("=eth0", "eth0"));
    assert_false(coll__ifname_match("=eth0", "eth01"));
    assert_false(coll__ifname_match("^docker,lo", "docker0"));
    assert_false(coll__ifname_match("^docker,lo", "lo"));
    assert_true(coll__ifname_match("^docker,lo", "veth7"));
    assert_true(coll__ifname_match("^=eth0", "eth01"));
    assert_false(coll__ifname_match("^=eth0", "eth0"));
}

static void test_loopback_names(void **state)
{
    (void)state;
    assert_true(coll_host_is_loopback("127.0.0.1"));
    assert_true(coll_host_is_loopback("127.0.1.1"));
    assert_true(coll_host_is_loopback("localhost"));
    assert_false(coll_host_is_loopback("10.77.0.1"));
    assert_false(coll_host_is_loopback("node127"));
}

static void test_listen_addr_wins(void **state)
{
    (void)state;
    coll_listen_pick p;
    char err[400] = "";
    set("COLL_LISTEN_ADDR", "10.9.8.7");
    set("COLL_SOCKET_IFNAME", "nosuchif");
    assert_int_equal(coll__listen_addr_pick("10.1.1.1", 1, &p, err, sizeof err), 0);
    assert_string_equal(p.addr, "10.9.8.7");
    assert_non_null(strstr(p.why, "COLL_LISTEN_ADDR"));
}

static void test_ifname_picks_loopback_by_name(void **state)
{
    (void)state;
    coll_listen_pick p;
    char err[400] = "";
    set("COLL_SOCKET_IFNAME", "=lo");
    assert_int_equal(coll__listen_addr_pick(NULL, 1, &p, err, sizeof err), 0);
    assert_string_equal(p.addr, "127.0.0.1");
    assert_string_equal(p.ifname, "lo");
}

static void test_ifname_matching_nothing_fails(void **state)
{
    (void)state;
    coll_listen_pick p;
    char err[400] = "";
    set("COLL_SOCKET_IFNAME", "nosuchif");
    assert_int_not_equal(coll__listen_addr_pick(NULL, 1, &p, err, sizeof err), 0);
    assert_non_null(strstr(err, "COLL_SOCKET_IFNAME=nosuchif matches no interface"));
    assert_non_null(strstr(err, "lo")); /* lists what there is */
    set("COLL_SOCKET_IFNAME", "");
    assert_int_not_equal(coll__listen_addr_pick(NULL, 1, &p, err, sizeof err), 0);
    assert_non_null(strstr(err, "names no interface"));
}

static void test_one_host_is_loopback(void **state)
{
    (void)state;
    coll_listen_pick p;
    char err[400] = "";
    assert_int_equal(coll__listen_addr_pick("10.1.1.1", 0, &p, err, sizeof err), 0);
    assert_string_equal(p.addr, "127.0.0.1");
    assert_non_null(strstr(p.why, "every rank is on this host"));
    /* A loopback store host: the user put every rank here. */
    assert_int_equal(coll__listen_addr_pick("127.0.0.1", 1, &p, err, sizeof err), 0);
    assert_string_equal(p.addr, "127.0.0.1");
    assert_int_equal(coll__listen_addr_pick(NULL, -1, &p, err, sizeof err), 0);
    assert_string_equal(p.addr, "127.0.0.1");
}

static void test_unresolvable_store_host_fails(void **state)
{
    (void)state;
    coll_listen_pick p;
    char err[400] = "";
    assert_int_not_equal(coll__listen_addr_pick("no-such-host.invalid", 1, &p, err, sizeof err), 0);
    assert_non_null(strstr(err, "no-such-host.invalid"));
}

static int spans(void)
{
    coll_launch_env env;
    assert_int_equal(coll_launch_env_detect(&env), 1);
    return coll__launch_env_spans_hosts(&env);
}

static void test_spans_torchrun(void **state)
{
    (void)state;
    set("RANK", "0");
    set("WORLD_SIZE", "2");
    assert_int_equal(spans(), -1);
    set("LOCAL_RANK", "0");
    set("LOCAL_WORLD_SIZE", "1");
    assert_int_equal(spans(), 1);
    set("LOCAL_WORLD_SIZE", "2");
    assert_int_equal(spans(), 0);
    set("GROUP_RANK", "1"); /* a second node says so even with a full local world */
    assert_int_equal(spans(), 1);
}

static void test_spans_srun(void **state)
{
    (void)state;
    set("SLURM_PROCID", "0");
    set("SLURM_NTASKS", "4");
    set("SLURM_LOCALID", "0");
    assert_int_equal(spans(), -1);
    set("SLURM_NODEID", "1");
    assert_int_equal(spans(), 1);
    set("SLURM_NNODES", "1");
    assert_int_equal(spans(), 0);
    set("SLURM_STEP_NUM_NODES", "2"); /* the step's nodes, not the allocation's */
    assert_int_equal(spans(), 1);
    coll_launch_env env;
    coll_launch_env_detect(&env);
    assert_null(coll__launch_env_store_host(&env));
    set("SLURM_LAUNCH_NODE_IPADDR", "10.3.3.3");
    assert_string_equal(coll__launch_env_store_host(&env), "10.3.3.3");
    set("MASTER_ADDR", "10.4.4.4");
    assert_string_equal(coll__launch_env_store_host(&env), "10.4.4.4");
}

static void test_spans_mpirun(void **state)
{
    (void)state;
    set("OMPI_COMM_WORLD_RANK", "1");
    set("OMPI_COMM_WORLD_SIZE", "4");
    set("OMPI_COMM_WORLD_LOCAL_RANK", "1");
    set("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
    assert_int_equal(spans(), 1);
    set("OMPI_COMM_WORLD_LOCAL_SIZE", "4");
    assert_int_equal(spans(), 0);
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, clear_env, clear_env)
    const struct CMUnitTest tests[] = {
        T(test_ifname_match),
        T(test_loopback_names),
        T(test_listen_addr_wins),
        T(test_ifname_picks_loopback_by_name),
        T(test_ifname_matching_nothing_fails),
        T(test_one_host_is_loopback),
        T(test_unresolvable_store_host_fails),
        T(test_spans_torchrun),
        T(test_spans_srun),
        T(test_spans_mpirun),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
