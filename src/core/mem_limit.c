/* The memory this process may use (mem_limit.h). */
#include "core/mem_limit.h"

#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>

/* v1's "unlimited" is a page-rounded LLONG_MAX; anything this large is no limit. */
#define NO_LIMIT (1ull << 62)

const coll__cgroup_where coll__cgroup_here = {"/proc/self/cgroup", "/sys/fs/cgroup"};

/* The number a cgroup file starts with; -1 for none ("max") or no file. */
static int read_u64(const char *path, uint64_t *v)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    unsigned long long x;
    int ok = fscanf(f, "%llu", &x) == 1;
    fclose(f);
    if (ok) *v = x;
    return ok ? 0 : -1;
}

typedef struct found {
    int any;
    uint64_t limit, left;
} found;

/* Group dir's limit (file max_name) and usage (cur_name), into f. */
static void look(const char *dir, const char *max_name, const char *cur_name, found *f)
{
    char path[1200];
    uint64_t max, cur = 0;
    snprintf(path, sizeof path, "%s/%s", dir, max_name);
    if (read_u64(path, &max) || max >= NO_LIMIT) return;
    snprintf(path, sizeof path, "%s/%s", dir, cur_name);
    if (read_u64(path, &cur)) cur = 0;
    uint64_t left = max > cur ? max - cur : 0;
    if (!f->any || max < f->limit) f->limit = max;
    if (!f->any || left < f->left) f->left = left;
    f->any = 1;
}

/* The group at path under base, and every group above it up to base. */
static void walk_up(const char *base, const char *path, const char *max_name, const char *cur_name,
                    found *f)
{
    char dir[1024];
    int len = snprintf(dir, sizeof dir, "%s%s", base, path);
    if (len < 0 || (size_t)len >= sizeof dir) return;
    size_t stop = strlen(base);
    for (;;) {
        while ((size_t)len > stop && dir[len - 1] == '/') dir[--len] = '\0';
        look(dir, max_name, cur_name, f);
        char *slash = strrchr(dir, '/');
        if ((size_t)len <= stop || !slash || (size_t)(slash - dir) < stop) return;
        *slash = '\0';
        len = (int)(slash - dir);
    }
}

/* 1 when the comma-separated list names "memory". */
static int names_memory(const char *controllers)
{
    size_t n = strlen("memory");
    for (const char *p = controllers; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, "memory", n) == 0) return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

int coll__cgroup_mem_limit(const coll__cgroup_where *at, uint64_t *limit, uint64_t *left)
{
    FILE *f = fopen(at->self, "r");
    if (!f) return -1;
    found got = {0};
    char line[768], base[600];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* hierarchy-ID:controllers:path */
        char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;
        if (!p) continue;
        *p++ = '\0';
        c++;
        if (strncmp(line, "0:", 2) == 0 && *c == '\0') {
            walk_up(at->root, p, "memory.max", "memory.current", &got);
        } else if (names_memory(c)) {
            snprintf(base, sizeof base, "%s/memory", at->root);
            walk_up(base, p, "memory.limit_in_bytes", "memory.usage_in_bytes", &got);
        }
    }
    fclose(f);
    if (!got.any) return -1;
    if (limit) *limit = got.limit;
    if (left) *left = got.left;
    return 0;
}

uint64_t coll__mem_limit_of(const coll__cgroup_where *at, uint64_t ram)
{
    uint64_t lim;
    if (coll__cgroup_mem_limit(at, &lim, NULL) == 0 && (ram == 0 || lim < ram)) return lim;
    return ram;
}

uint64_t coll__mem_limit(void)
{
    struct sysinfo si;
    uint64_t ram = sysinfo(&si) == 0 ? (uint64_t)si.totalram * si.mem_unit : 0;
    return coll__mem_limit_of(&coll__cgroup_here, ram);
}
