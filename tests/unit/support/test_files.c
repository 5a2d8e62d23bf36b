#include "support/test_files.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

char *test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap) buf = realloc(buf, cap = (cap + 4096) * 2);
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

void test_spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

int test_dir_setup(void **state)
{
    struct test_dir *d = calloc(1, sizeof *d);
    const char *tmp = getenv("TMPDIR");
    snprintf(d->path, sizeof d->path, "%s/collbench_test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d->path)) return -1;
    *state = d;
    return 0;
}

int test_dir_teardown(void **state)
{
    struct test_dir *d = *state;
    DIR *dh = opendir(d->path);
    struct dirent *e;
    while (dh && (e = readdir(dh))) {
        if (e->d_name[0] == '.') continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", d->path, e->d_name);
        unlink(p);
    }
    if (dh) closedir(dh);
    rmdir(d->path);
    free(d);
    return 0;
}
