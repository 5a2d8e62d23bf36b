/* The memory a process may use (src/core/mem_limit.c) read from a fake
 * cgroup tree: v2's memory.max and v1's memory.limit_in_bytes, on the
 * process's group or one above it, cap the host's RAM; "max", v1's
 * "unlimited" and a missing file do not. shm's private window on 4 KiB pages
 * (coll__shm_knobs_cap_scratch) caps its scratch by this, not by RAM. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/shm/shm_plan.h"
#include "core/mem_limit.h"
#include "support/test_files.h"

#define GIB (1ull << 30)

/* dir/rel made, with its parents. */
static void mkdirs(const char *dir, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *p = path + strlen(dir) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0700);
            *p = '/';
        }
    mkdir(path, 0700);
}

static void put(const char *dir, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    test_spit(path, text);
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* The fake tree has folders: test_dir_teardown removes files alone. */
static int tree_teardown(void **state)
{
    struct test_dir *d = *state;
    nftw(d->path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(d);
    return 0;
}

/* The fake tree's places: dir/self (the process's groups), dir/root. */
static coll__cgroup_where at(const struct test_dir *d, char *self, char *root)
{
    snprintf(self, 300, "%s/self", d->path);
    snprintf(root, 300, "%s/root", d->path);
    return (coll__cgroup_where){self, root};
}

static void test_v2_limit_on_own_group(void **state)
{
    struct test_dir *d = *state;
    char self[300], root[300];
    coll__cgroup_where w = at(d, self, root);
    put(d->path, "self", "0::/user.slice/job\n");
    mkdirs(d->path, "root/user.slice/job");
    put(d->path, "root/user.slice/job/memory.max", "2147483648\n");
    put(d->path, "root/user.slice/job/memory.current", "536870912\n");
    put(d->path, "root/user.slice/memory.max", "max\n");
    uint64_t limit = 0, left = 0;
    assert_int_equal(coll__cgroup_mem_limit(&w, &limit, &left), 0);
    assert_int_equal(limit, 2 * GIB);
    assert_int_equal(left, 3 * GIB / 2);
    assert_int_equal(coll__mem_limit_of(&w, 64 * GIB), 2 * GIB);
    assert_int_equal(coll__mem_limit_of(&w, GIB), GIB); /* RAM lower: RAM */
}

/* A limit on a group above the process's own (a container's, a slice's). */
static void test_v2_limit_above(void **state)
{
    struct test_dir *d = *state;
    char self[300], root[300];
    coll__cgroup_where w = at(d, self, root);
    put(d->path, "self", "0::/box/inner\n");
    mkdirs(d->path, "root/box/inner");
    put(d->path, "root/box/inner/memory.max", "max\n");
    put(d->path, "root/box/memory.max", "1073741824\n");
    assert_int_equal(coll__mem_limit_of(&w, 64 * GIB), GIB);
}

static void test_v1_limit(void **state)
{
    struct test_dir *d = *state;
    char self[300], root[300];
    coll__cgroup_where w = at(d, self, root);
    put(d->path, "self", "5:cpu,cpuacct:/\n4:memory:/job\n0::/\n");
    mkdirs(d->path, "root/memory/job");
    put(d->path, "root/memory/job/memory.limit_in_bytes", "4294967296\n");
    put(d->path, "root/memory/job/memory.usage_in_bytes", "1073741824\n");
    put(d->path, "root/memory/memory.limit_in_bytes", "9223372036854771712\n");
    uint64_t limit = 0, left = 0;
    assert_int_equal(coll__cgroup_mem_limit(&w, &limit, &left), 0);
    assert_int_equal(limit, 4 * GIB);
    assert_int_equal(left, 3 * GIB);
}

/* "max", v1's unlimited, no file, no memory group: RAM. */
static void test_no_limit(void **state)
{
    struct test_dir *d = *state;
    char self[300], root[300];
    coll__cgroup_where w = at(d, self, root);
    put(d->path, "self", "4:memory:/a\n0::/b\n");
    mkdirs(d->path, "root/memory/a");
    mkdirs(d->path, "root/b");
    put(d->path, "root/memory/a/memory.limit_in_bytes", "9223372036854771712\n");
    put(d->path, "root/b/memory.max", "max\n");
    assert_int_equal(coll__cgroup_mem_limit(&w, NULL, NULL), -1);
    assert_int_equal(coll__mem_limit_of(&w, 8 * GIB), 8 * GIB);
    put(d->path, "self", "1:cpu:/x\n");
    assert_int_equal(coll__mem_limit_of(&w, 8 * GIB), 8 * GIB);
    coll__cgroup_where none = {"/nonexistent/cgroup", root};
    assert_int_equal(coll__mem_limit_of(&none, 8 * GIB), 8 * GIB);
}

/* The private window on 4 KiB pages (2x a rank's bytes of scratch in each
 * rank's heap) shrinks to fit a quarter of the cgroup's 4 GiB on a 64 GiB
 * host, not a quarter of the 64 GiB. */
static void test_scratch_capped_by_cgroup(void **state)
{
    struct test_dir *d = *state;
    char self[300], root[300];
    coll__cgroup_where w = at(d, self, root);
    put(d->path, "self", "0::/job\n");
    mkdirs(d->path, "root/job");
    put(d->path, "root/job/memory.max", "4294967296\n");
    shm_knobs k;
    coll__shm_knobs_default(&k, 4, 1);
    assert_true(k.priv_plain_max > 128u << 20);
    k.priv_core_max = 512u << 20; /* a window a core per rank was given (not by the user) */
    coll__shm_knobs_cap_scratch(&k, 4, coll__mem_limit_of(&w, 64 * GIB), 0, 0, 0, 0);
    assert_int_equal(k.priv_plain_max, 4 * GIB / 8 / 4); /* 4 ranks x 2 x 128 MiB = 1 GiB */
    assert_int_equal(k.priv_core_max, 4 * GIB / 8 / 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_v2_limit_on_own_group, test_dir_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_v2_limit_above, test_dir_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_v1_limit, test_dir_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_no_limit, test_dir_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_scratch_capped_by_cgroup, test_dir_setup,
                                        tree_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
