/* The page-kind probe (src/backend/shm/shm_page_kind.c) that sends all-reduce on
 * 4 KiB-page private buffers through shm's private strategy: a malloc'd buffer
 * is plain, one in a transparent huge page is not, and without the kernel's
 * answer the guess follows THP's mode. */
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
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/shm/shm_page_kind.h"

#define HUGE ((size_t)2 << 20)

static void test_malloc_is_plain(void **state)
{
    (void)state;
    coll__page_probe pp;
    coll__page_probe_init(&pp);
    size_t n = 8u << 20;
    void *p = NULL;
    assert_int_equal(posix_memalign(&p, 64, n), 0);
#ifdef MADV_NOHUGEPAGE
    madvise((void *)((uintptr_t)p / 4096 * 4096), n - 4096, MADV_NOHUGEPAGE); /* THP "always" */
#endif
    memset(p, 1, n);
    assert_int_equal(coll__pages_plain(&pp, p, n), 1);
    free(p);
    coll__page_probe_close(&pp);
}

/* kB of AnonHugePages in this process (smaps_rollup), -1 without it. */
static long anon_huge_kb(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

static void test_huge_page_is_not_plain(void **state)
{
    (void)state;
    coll__page_probe pp;
    coll__page_probe_init(&pp);
    size_t n = 4 * HUGE;
    char *p = NULL;
    assert_int_equal(posix_memalign((void **)&p, HUGE, n), 0);
    long before = anon_huge_kb();
    madvise(p, n, MADV_HUGEPAGE);
    memset(p, 1, n);
    long after = anon_huge_kb();
    int plain = coll__pages_plain(&pp, p, n);
    int scan = pp.scan_ok;
    free(p);
    coll__page_probe_close(&pp);
    if (before < 0 || after - before < (long)(HUGE >> 10)) {
        print_message("skipped: no transparent huge page was given (THP off, or none free)\n");
        skip();
        return;
    }
    if (!scan) {
        /* Linux < 6.7 lacks PAGEMAP_SCAN (or pagemap is unreadable): the
         * guess is all it gives, so only a kernel that answers is held to it. */
        print_message("skipped: no PAGEMAP_SCAN here (Linux < 6.7, or pagemap unreadable)\n");
        skip();
        return;
    }
    assert_int_equal(plain, 0);
}

/* Nothing present (or no kernel answer): the guess from THP's mode. */
static void test_guess_without_an_answer(void **state)
{
    (void)state;
    coll__page_probe pp;
    coll__page_probe_init(&pp);
    char *p = mmap(NULL, HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    int guess = coll__pages_plain(&pp, p, HUGE); /* never touched */
    assert_int_equal(guess, !pp.thp_always);
    assert_int_equal(coll__pages_plain(&pp, p, 0), !pp.thp_always);
    munmap(p, HUGE);
    coll__page_probe_close(&pp);
    assert_int_equal(pp.fd, -1);
}

/* A forked child asks about its own memory, not through the parent's
 * descriptor of /proc/self/pagemap (which would scan the parent's). */
static void test_fork_reopens(void **state)
{
    (void)state;
    coll__page_probe pp;
    coll__page_probe_init(&pp);
    static char buf[1 << 16];
    memset(buf, 1, sizeof buf);
    (void)coll__pages_plain(&pp, buf, sizeof buf);
    assert_true(pp.opened);
    unsigned parent = pp.forks;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* opened again: at the child's fork count */
        (void)coll__pages_plain(&pp, buf, sizeof buf);
        _exit(pp.opened && pp.forks == parent + 1 ? 0 : 1);
    }
    (void)coll__pages_plain(&pp, buf, sizeof buf); /* the parent's stays */
    assert_int_equal(pp.forks, parent);
    int st = 0;
    assert_int_equal(waitpid(child, &st, 0), child);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    coll__page_probe_close(&pp);
}

/* An answer is kept for the same buffer and size for COLL_PAGE_KIND_KEEP_S,
 * then asked of the kernel again; another size is another question. The
 * kept answer is marked wrong here so that a reuse shows. */
static void test_answer_kept_briefly(void **state)
{
    (void)state;
    coll__page_probe pp;
    coll__page_probe_init(&pp);
    static char buf[1 << 16];
    memset(buf, 1, sizeof buf);
    assert_int_equal(coll__pages_plain(&pp, buf, sizeof buf), 1);
    if (!pp.scan_ok) {
        print_message("skipped: no PAGEMAP_SCAN here: guesses are not kept\n");
        coll__page_probe_close(&pp);
        skip();
        return;
    }
    coll__page_answer *a = NULL;
    for (int i = 0; i < COLL_PAGE_KIND_KEEP; i++)
        if (pp.kept[i].p == buf) a = &pp.kept[i];
    assert_non_null(a);
    a->plain = 0;
    assert_int_equal(coll__pages_plain(&pp, buf, sizeof buf), 0);     /* kept */
    assert_int_equal(coll__pages_plain(&pp, buf, sizeof buf / 2), 1); /* another size */
    a->at -= 2 * COLL_PAGE_KIND_KEEP_S;                               /* too old */
    assert_int_equal(coll__pages_plain(&pp, buf, sizeof buf), 1);
    for (int i = 0; i < 2 * COLL_PAGE_KIND_KEEP; i++) /* more buffers than kept: no overflow */
        (void)coll__pages_plain(&pp, buf + 4096 * (i + 1), 4096);
    coll__page_probe_close(&pp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malloc_is_plain),
        cmocka_unit_test(test_huge_page_is_not_plain),
        cmocka_unit_test(test_guess_without_an_answer),
        cmocka_unit_test(test_fork_reopens),
        cmocka_unit_test(test_answer_kept_briefly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
