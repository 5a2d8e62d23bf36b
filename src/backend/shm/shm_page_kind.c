/* Page kind of a buffer (shm_page_kind.h), by the PAGEMAP_SCAN ioctl. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend/shm/shm_page_kind.h"

#include "core/clock.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* linux/fs.h of Linux 6.7; older headers lack it, the ABI is fixed. */
#define PM_PAGE_IS_PRESENT (1ull << 3)
#define PM_PAGE_IS_HUGE (1ull << 6)
struct pm_region {
    uint64_t start, end, categories;
};
struct pm_scan {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PM_SCAN _IOWR('f', 16, struct pm_scan)

#define SAMPLE_BYTES ((uintptr_t)4 << 20) /* holds a whole 2 MiB page wherever it starts */

static int thp_always(void)
{
    char line[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return 0;
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    fclose(f);
    return strstr(line, "[always]") != NULL;
}

/* Forks of this process's lineage so far: a child's answers are its own. */
static _Atomic unsigned forks;
static pthread_once_t forks_once = PTHREAD_ONCE_INIT;
static void forked(void) { atomic_fetch_add_explicit(&forks, 1, memory_order_relaxed); }
static void count_forks(void) { (void)pthread_atfork(NULL, NULL, forked); }

void coll__page_probe_init(coll__page_probe *pp)
{
    (void)pthread_once(&forks_once, count_forks);
    *pp = (coll__page_probe){.fd = -1};
}

void coll__page_probe_close(coll__page_probe *pp)
{
    if (pp->opened && pp->fd >= 0) close(pp->fd); /* a zeroed probe holds no descriptor */
    coll__page_probe_init(pp);
}

static int scan_plain(coll__page_probe *pp, const void *p, size_t bytes);

int coll__pages_plain(coll__page_probe *pp, const void *p, size_t bytes)
{
    if (pp->opened && pp->forks != atomic_load_explicit(&forks, memory_order_relaxed))
        coll__page_probe_close(pp); /* forked */
    double now = coll__now_s();
    for (int i = 0; i < COLL_PAGE_KIND_KEEP; i++) {
        const coll__page_answer *a = &pp->kept[i];
        if (a->at > 0 && a->p == p && a->bytes == bytes && now - a->at < COLL_PAGE_KIND_KEEP_S)
            return a->plain;
    }
    int plain = scan_plain(pp, p, bytes);
    if (pp->scan_ok) /* a guess is not kept: it costs nothing to make again */
        pp->kept[pp->next++ % COLL_PAGE_KIND_KEEP] =
            (coll__page_answer){.p = p, .bytes = bytes, .plain = plain, .at = now};
    return plain;
}

static int scan_plain(coll__page_probe *pp, const void *p, size_t bytes)
{
    if (!pp->opened) {
        pp->opened = 1;
        pp->forks = atomic_load_explicit(&forks, memory_order_relaxed);
        pp->fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
        pp->thp_always = thp_always();
    }
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096u; /* the scan wants page-aligned bounds */
    uintptr_t lo = (uintptr_t)p / page * page, hi = (uintptr_t)p + bytes;
    if (hi - lo > SAMPLE_BYTES) hi = lo + SAMPLE_BYTES;
    struct pm_region vec[16] = {{0}}; /* zeroed: tools that do not know the ioctl see it set */
    struct pm_scan a = {.size = sizeof a,
                        .start = lo,
                        .end = (hi + page - 1) / page * page,
                        .vec = (uint64_t)(uintptr_t)vec,
                        .vec_len = sizeof vec / sizeof vec[0],
                        .category_mask = PM_PAGE_IS_PRESENT,
                        .return_mask = PM_PAGE_IS_HUGE | PM_PAGE_IS_PRESENT};
    long got = pp->fd >= 0 && bytes > 0 ? ioctl(pp->fd, PM_SCAN, &a) : -1;
    pp->scan_ok = got >= 0;
    uint64_t present = 0, huge = 0;
    for (long i = 0; i < got; i++) {
        present += vec[i].end - vec[i].start;
        if (vec[i].categories & PM_PAGE_IS_HUGE) huge += vec[i].end - vec[i].start;
    }
    if (got <= 0 || present == 0) return !pp->thp_always; /* refused, or nothing to see */
    return huge * 2 < present;
}
