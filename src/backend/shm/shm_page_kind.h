/* Whether a buffer lies in 4 KiB pages or in huge ones (THP or hugetlb).
 * process_vm_readv/writev pin every page they copy: on 4 KiB pages that costs
 * about 0.3-0.5 us a page here, 4x what huge pages cost (bench/floor.c), so
 * shm's plan sends plain-page buffers through the private engine's shared
 * copies instead (src/backend/shm/shm_plan.c). */
#ifndef SHM_PAGE_KIND_H
#define SHM_PAGE_KIND_H

#include <stddef.h>

/* The answers of the last few questions, each kept COLL_PAGE_KIND_KEEP_S:
 * the scan costs 0.9 us for 64 KiB and 12 us for 4 MiB on a Zen 5 VM, a
 * fifth of a 64 KiB all-reduce, and a program asks about the same buffers
 * call after call. A buffer freed and another given the same address and
 * size within that time may be taken for the old one's kind: the plan then
 * picks the other engine, with the same result (every engine is exact on
 * every page kind; every rank plans from what all posted). */
#define COLL_PAGE_KIND_KEEP 4
#define COLL_PAGE_KIND_KEEP_S 0.1
typedef struct coll__page_answer {
    const void *p;
    size_t bytes;
    int plain;
    double at; /* seconds (coll__now_s); 0: empty */
} coll__page_answer;

/* A descriptor of /proc/self/pagemap names the process that opened it, and a
 * forked child inherits it: the probe opens it again after a fork (a count
 * that a pthread_atfork handler advances in the child: asking getpid at
 * every call was a system call, 0.2 us of a 64 KiB all-reduce on a VM). */
typedef struct coll__page_probe {
    int fd;         /* /proc/self/pagemap, -1: not opened or refused */
    int opened;     /* open tried */
    unsigned forks; /* the fork count when it was opened */
    int thp_always; /* THP "always": the guess without PAGEMAP_SCAN */
    int scan_ok;    /* the last question had the kernel's answer */
    coll__page_answer kept[COLL_PAGE_KIND_KEEP];
    unsigned next; /* the entry the next new answer replaces */
} coll__page_probe;

void coll__page_probe_init(coll__page_probe *pp);
void coll__page_probe_close(coll__page_probe *pp);

/* 1 when most of the present pages of the first 4 MiB of [p, p + bytes) are
 * base pages (4 KiB on x86-64), not huge ones (an answer kept from the last
 * COLL_PAGE_KIND_KEEP_S about the same p and bytes, else the kernel's). Without PAGEMAP_SCAN (Linux < 6.7) or with nothing present, a
 * guess: plain unless THP is "always". */
int coll__pages_plain(coll__page_probe *pp, const void *p, size_t bytes);

#endif
