/* File helpers for unit tests that write result files: read a whole file,
 * write one, and a cmocka fixture holding a fresh temporary directory. */
#ifndef TEST_FILES_H
#define TEST_FILES_H

#include <stddef.h>

/* Whole file into a malloc'd, NUL-terminated string (NULL if absent). */
char *test_slurp(const char *path, size_t *len);
/* Replace path's content with text (asserts on failure). */
void test_spit(const char *path, const char *text);

struct test_dir {
    char path[256];
};

/* cmocka setup/teardown: *state is a struct test_dir under $TMPDIR (or /tmp),
 * removed with its files afterwards. */
int test_dir_setup(void **state);
int test_dir_teardown(void **state);

#endif
