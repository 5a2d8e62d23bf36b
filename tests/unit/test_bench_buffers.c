/* Buffer kinds say what they are (issue 28): --buffers malloc is plain
 * posix_memalign memory with no advice, so where THP is "madvise" (Debian's
 * and Ubuntu's default) it holds no huge pages, as a framework's tensors hold
 * none; --buffers thp holds them. Both are reused across allocations of the
 * same size (first touch once per process), never across kinds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/bench_device.h"

#define BYTES ((size_t)32 << 20)

/* The bracketed word of THP's "enabled" file: always, madvise or never. */
static const char *thp_mode(void)
{
    static char mode[16] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128];
    if (f && fgets(line, sizeof line, f)) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b && b - a - 1 < (long)sizeof mode) {
            memcpy(mode, a + 1, (size_t)(b - a - 1));
            mode[b - a - 1] = 0;
        }
    }
    if (f) fclose(f);
    return mode;
}

/* KiB of AnonHugePages in the mappings that overlap [p, p + len). */
static long huge_kib(const void *p, size_t len)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    char line[512];
    int inside = 0;
    long kib = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b, v;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2) /* a mapping's header line */
            inside = a < hi && b > lo;
        else if (inside && sscanf(line, "AnonHugePages: %lu kB", &v) == 1) kib += (long)v;
    }
    fclose(f);
    return kib;
}

static void alloc(bench_buffers *b, bench_mem mem)
{
    char err[256] = "";
    int rc = bench_buffers_alloc(b, NULL, mem, BYTES, BYTES, err, sizeof err);
    if (rc) fprintf(stderr, "bench_buffers_alloc: %s\n", err);
    assert_int_equal(rc, 0);
}

static void test_malloc_holds_no_huge_pages(void **state)
{
    (void)state;
    bench_buffers b;
    alloc(&b, BENCH_MEM_MALLOC);
    assert_int_equal((uintptr_t)b.send % 64, 0);
    memset(b.send, 1, BYTES); /* touched throughout, as a benchmark does */
    long kib = huge_kib(b.send, BYTES);
    const char *mode = thp_mode();
    fprintf(stderr, "THP %s: malloc buffer of 32 MiB holds %ld KiB of huge pages\n", mode, kib);
    if (strcmp(mode, "always") != 0) assert_int_equal(kib, 0);
    bench_buffers_free(&b);
}

static void test_thp_holds_huge_pages(void **state)
{
    (void)state;
    const char *mode = thp_mode();
    if (strcmp(mode, "madvise") != 0 && strcmp(mode, "always") != 0) {
        fprintf(stderr, "skipped: THP is '%s' here, no kind can hold huge pages\n", mode);
        skip();
    }
    bench_buffers b;
    alloc(&b, BENCH_MEM_THP);
    assert_int_equal((uintptr_t)b.send % (2u << 20), 0);
    memset(b.send, 1, BYTES);
    long kib = huge_kib(b.send, BYTES);
    fprintf(stderr, "THP %s: thp buffer of 32 MiB holds %ld KiB of huge pages\n", mode, kib);
    assert_true(kib > 0);
    bench_buffers_free(&b);
}

/* Freed buffers come back for the same size and kind, never another kind. */
static void test_reuse_by_kind(void **state)
{
    (void)state;
    bench_buffers a, b;
    alloc(&a, BENCH_MEM_MALLOC);
    void *send = a.send, *recv = a.recv;
    bench_buffers_free(&a);
    alloc(&b, BENCH_MEM_THP);
    assert_true(b.send != send && b.send != recv && b.recv != send && b.recv != recv);
    send = b.send;
    recv = b.recv;
    bench_buffers_free(&b);
    alloc(&a, BENCH_MEM_THP);
    assert_true((a.send == send && a.recv == recv) || (a.send == recv && a.recv == send));
    bench_buffers_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malloc_holds_no_huge_pages),
        cmocka_unit_test(test_thp_holds_huge_pages),
        cmocka_unit_test(test_reuse_by_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
