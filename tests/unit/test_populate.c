/* coll__populate and coll__touch: they change no byte, read nothing outside the
 * buffer (a PROT_NONE page right after it faults on any over-read, with or
 * without ASan), and do nothing for NULL or 0 bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/populate.h"

static void test_contents_unchanged(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 63, 4095, 4096, 4097, 3 * 4096 + 5, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i];
        unsigned char *buf = malloc(n), *copy = malloc(n);
        assert_non_null(buf);
        assert_non_null(copy);
        for (size_t j = 0; j < n; j++) buf[j] = (unsigned char)(j * 131 + i);
        memcpy(copy, buf, n);
        coll__populate(buf, n, 0);
        coll__populate(buf, n, 1);
        coll__touch(buf, n);
        assert_memory_equal(buf, copy, n);
        free(buf);
        free(copy);
    }
}

/* Buffers that end exactly at a guard page: lengths below, at and across page
 * boundaries, so starts both aligned and not. */
static void test_no_read_past_the_end(void **state)
{
    (void)state;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + 3 * page, page, PROT_NONE), 0);
    char *end = map + 3 * page;
    const size_t lens[] = {1, 2, page - 1, page, page + 1, 2 * page + 7, 3 * page};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        coll__touch(end - lens[i], lens[i]);
        coll__populate(end - lens[i], lens[i], 1);
    }
    assert_int_equal(munmap(map, 4 * page), 0);
}

static void test_null_and_empty(void **state)
{
    (void)state;
    coll__touch(NULL, 4096);
    coll__populate(NULL, 4096, 1);
    /* 0 bytes of a PROT_NONE page: nothing may be read. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    coll__touch(map, 0);
    coll__populate(map, 0, 0);
    assert_int_equal(munmap(map, page), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contents_unchanged),
        cmocka_unit_test(test_no_read_past_the_end),
        cmocka_unit_test(test_null_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
