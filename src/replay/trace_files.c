/* A trace directory's rank files (trace_files.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/trace_files.h"

int replay_is_rank_file(const char *name)
{
    if (strncmp(name, "rank", 4) != 0) return 0;
    const char *p = name + 4, *digits = p;
    while (*p >= '0' && *p <= '9') p++;
    return p > digits && p - digits < 9 && strcmp(p, ".jsonl") == 0;
}

static long rank_of(const char *path)
{
    const char *base = strrchr(path, '/');
    return strtol((base ? base + 1 : path) + 4, NULL, 10);
}

static int by_rank(const void *a, const void *b)
{
    long x = rank_of(*(char *const *)a), y = rank_of(*(char *const *)b);
    return (x > y) - (x < y);
}

void replay_rank_files_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
}

int replay_rank_files(const char *dir, char ***paths, size_t *n, char *err, size_t errlen)
{
    *paths = NULL, *n = 0;
    DIR *d = opendir(dir);
    if (!d) return snprintf(err, errlen, "%s: %s", dir, strerror(errno)), -1;
    size_t cap = 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (!replay_is_rank_file(e->d_name)) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **p = realloc(*paths, cap * sizeof *p);
            if (!p) {
                rc = -1;
                break;
            }
            *paths = p;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!((*paths)[*n] = malloc(len))) {
            rc = -1;
            break;
        }
        snprintf((*paths)[(*n)++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (rc) {
        replay_rank_files_free(*paths, *n);
        *paths = NULL, *n = 0;
        return snprintf(err, errlen, "%s: out of memory", dir), -1;
    }
    if (*n) qsort(*paths, *n, sizeof **paths, by_rank);
    return 0;
}
