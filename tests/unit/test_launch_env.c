/* Launcher detection: every source, its precedence, and invalid values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bootstrap/launch_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const all_vars[] = {
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "COLL_LAUNCHED",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "PMI_RANK",
    "PMI_SIZE",
    "MPI_LOCALRANKID",
    "MPI_LOCALNRANKS",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "SLURM_NTASKS_PER_NODE",
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

static void expect(int found, int rank, int world, int lrank, int lworld, const char *source)
{
    coll_launch_env env;
    memset(&env, 0x5a, sizeof env); /* detect must fill every field */
    assert_int_equal(coll_launch_env_detect(&env), found);
    assert_int_equal(env.rank, rank);
    assert_int_equal(env.world_size, world);
    assert_int_equal(env.local_rank, lrank);
    assert_int_equal(env.local_world_size, lworld);
    if (source) assert_string_equal(env.source, source);
    else assert_null(env.source);
}

static void expect_error(const char *text)
{
    assert_non_null(strstr(coll_launch_env_error(), text));
}

static void expect_no_error(void) { assert_string_equal(coll_launch_env_error(), ""); }

static void test_nothing_set(void **state)
{
    (void)state;
    expect(0, -1, -1, -1, -1, NULL);
    expect_no_error();
}

static void test_torchrun(void **state)
{
    (void)state;
    set("RANK", "3");
    set("WORLD_SIZE", "8");
    expect(1, 3, 8, -1, -1, "torchrun");
    set("LOCAL_RANK", "1");
    set("LOCAL_WORLD_SIZE", "4");
    expect(1, 3, 8, 1, 4, "torchrun");
    expect_no_error();
    set("COLL_LAUNCHED", "0");
    expect(1, 3, 8, 1, 4, "torchrun");
}

static void test_collbench_launcher(void **state)
{
    (void)state;
    set("RANK", "0");
    set("WORLD_SIZE", "1");
    set("LOCAL_RANK", "0");
    set("LOCAL_WORLD_SIZE", "1");
    set("COLL_LAUNCHED", "1");
    expect(1, 0, 1, 0, 1, "collbench");
    expect_no_error();
}

static void test_mpirun(void **state)
{
    (void)state;
    set("OMPI_COMM_WORLD_RANK", "5");
    set("OMPI_COMM_WORLD_SIZE", "6");
    expect(1, 5, 6, -1, -1, "mpirun");
    set("OMPI_COMM_WORLD_LOCAL_RANK", "2");
    set("OMPI_COMM_WORLD_LOCAL_SIZE", "3");
    expect(1, 5, 6, 2, 3, "mpirun");
    expect_no_error();
}

static void test_pmi(void **state)
{
    (void)state;
    set("PMI_RANK", "1");
    set("PMI_SIZE", "2");
    expect(1, 1, 2, -1, -1, "pmi");
    set("MPI_LOCALRANKID", "1");
    set("MPI_LOCALNRANKS", "2");
    expect(1, 1, 2, 1, 2, "pmi");
    expect_no_error();
}

static void test_srun(void **state)
{
    (void)state;
    set("SLURM_PROCID", "4");
    set("SLURM_NTASKS", "6");
    expect(1, 4, 6, -1, -1, "srun");
    set("SLURM_LOCALID", "1");
    expect(1, 4, 6, 1, -1, "srun");
    set("SLURM_NTASKS_PER_NODE", "3");
    expect(1, 4, 6, 1, 3, "srun");
    /* Uneven allocations say "2(x3)": no node size, and no complaint either. */
    set("SLURM_NTASKS_PER_NODE", "2(x3)");
    expect(1, 4, 6, 1, -1, "srun");
    expect_no_error();
}

static void test_precedence(void **state)
{
    (void)state;
    set("SLURM_PROCID", "0");
    set("SLURM_NTASKS", "2");
    set("PMI_RANK", "1");
    set("PMI_SIZE", "3");
    expect(1, 1, 3, -1, -1, "pmi");
    set("OMPI_COMM_WORLD_RANK", "2");
    set("OMPI_COMM_WORLD_SIZE", "4");
    expect(1, 2, 4, -1, -1, "mpirun");
    set("RANK", "3");
    set("WORLD_SIZE", "5");
    expect(1, 3, 5, -1, -1, "torchrun");
}

static void test_not_an_integer(void **state)
{
    (void)state;
    const char *bad[] = {"abc", "", "1x", " 1", "1 ", "0x2", "99999999999", "1.0", NULL};
    set("WORLD_SIZE", "4");
    for (int i = 0; bad[i]; i++) {
        set("RANK", bad[i]);
        expect(0, -1, -1, -1, -1, NULL);
        char msg[64];
        snprintf(msg, sizeof msg, "RANK=%s is not an integer", bad[i]);
        assert_string_equal(coll_launch_env_error(), msg);
    }
}

static void test_invalid_source_falls_through_to_the_next(void **state)
{
    (void)state;
    set("RANK", "abc");
    set("WORLD_SIZE", "4");
    set("OMPI_COMM_WORLD_RANK", "1");
    set("OMPI_COMM_WORLD_SIZE", "2");
    expect(1, 1, 2, -1, -1, "mpirun");
    expect_error("RANK=abc is not an integer"); /* still reported */
}

static void test_out_of_range(void **state)
{
    (void)state;
    set("RANK", "4");
    set("WORLD_SIZE", "4");
    expect(0, -1, -1, -1, -1, NULL);
    expect_error("RANK=4 is not below WORLD_SIZE=4");
    set("RANK", "-1");
    expect(0, -1, -1, -1, -1, NULL);
    expect_error("RANK=-1 is negative");
    set("RANK", "0");
    set("WORLD_SIZE", "0");
    expect(0, -1, -1, -1, -1, NULL);
    expect_error("WORLD_SIZE=0 must be at least 1");
    set("SLURM_PROCID", "2");
    set("SLURM_NTASKS", "2");
    expect(0, -1, -1, -1, -1, NULL);
    expect_error("WORLD_SIZE=0"); /* the first problem is the one reported */
}

static void test_half_a_pair(void **state)
{
    (void)state;
    set("RANK", "1");
    expect(0, -1, -1, -1, -1, NULL);
    expect_error("RANK=1 is set but WORLD_SIZE is not");
    unsetenv("RANK");
    set("PMI_SIZE", "4");
    expect(0, -1, -1, -1, -1, NULL);
    expect_error("PMI_SIZE=4 is set but PMI_RANK is not");
}

static void test_invalid_local_values_are_dropped(void **state)
{
    (void)state;
    set("RANK", "1");
    set("WORLD_SIZE", "4");
    set("LOCAL_RANK", "x");
    set("LOCAL_WORLD_SIZE", "2");
    expect(1, 1, 4, -1, -1, "torchrun");
    expect_error("LOCAL_RANK=x is not an integer");
    set("LOCAL_RANK", "2");
    expect(1, 1, 4, -1, -1, "torchrun");
    expect_error("LOCAL_RANK=2 is not below LOCAL_WORLD_SIZE=2");
    set("LOCAL_RANK", "0");
    set("LOCAL_WORLD_SIZE", "8");
    expect(1, 1, 4, -1, -1, "torchrun");
    expect_error("LOCAL_WORLD_SIZE=8 is larger than the world size");
    set("LOCAL_WORLD_SIZE", "4");
    expect(1, 1, 4, 0, 4, "torchrun");
    expect_no_error();
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, clear_env, clear_env)
    const struct CMUnitTest tests[] = {
        T(test_nothing_set),
        T(test_torchrun),
        T(test_collbench_launcher),
        T(test_mpirun),
        T(test_pmi),
        T(test_srun),
        T(test_precedence),
        T(test_not_an_integer),
        T(test_invalid_source_falls_through_to_the_next),
        T(test_out_of_range),
        T(test_half_a_pair),
        T(test_invalid_local_values_are_dropped),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
