/* The fuzz targets without libFuzzer: every file named on the command line
 * (a directory: every file in it) goes once through LLVMFuzzerTestOneInput.
 * Built with the ordinary compiler in every build, so a source list that
 * drifted from the parsers fails to link in make test, not first in CI's
 * clang fuzz build, and the checked-in corpus is replayed as a regression
 * test (under ASan/UBSan in the sanitizer builds). */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *grown = realloc(buf, cap *= 2);
            if (!grown) free(buf);
            buf = grown;
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int run_path(const char *path, size_t *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        ++*count;
        return run_file(path);
    }
    DIR *d = opendir(path);
    if (!d) {
        perror(path);
        return 1;
    }
    int bad = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char sub[4096];
        if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub) {
            fprintf(stderr, "%s/%s: path too long\n", path, e->d_name);
            bad = 1;
            continue;
        }
        bad |= run_file(sub);
        ++*count;
    }
    closedir(d);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    size_t count = 0;
    int bad = 0;
    for (int i = 1; i < argc; i++) bad |= run_path(argv[i], &count);
    if (count == 0) {
        fprintf(stderr, "no inputs found in the paths given\n");
        return 1;
    }
    printf("%zu inputs replayed\n", count);
    return bad;
}
