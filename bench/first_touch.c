/* What a process's first access of a shared page costs, with and without
 * MADV_POPULATE_*: one process writes a memfd, a child maps it and passes
 * over it twice, one byte a page (docs/PERFORMANCE.md, shm: on a VM whose
 * page tables the hypervisor shadows, the first pass stays slow after
 * populating, which is why the direct all-reduce touches its buffers).
 *   cc -O2 -o first_touch bench/first_touch.c && ./first_touch [MiB]  */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static volatile unsigned char sink;

/* One byte a page, read or written; seconds. */
static double pass(unsigned char *p, size_t n, int write)
{
    double t = now();
    for (size_t i = 0; i < n; i += 4096) {
        if (write) p[i] = 1;
        else sink ^= p[i];
    }
    return now() - t;
}

int main(int argc, char **argv)
{
    size_t n = (size_t)(argc > 1 ? atol(argv[1]) : 64) << 20;
    int fd = memfd_create("first_touch", 0);
    if (fd < 0 || ftruncate(fd, (off_t)n) != 0) return perror("memfd"), 1;
    unsigned char *a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (a == MAP_FAILED) return perror("mmap"), 1;
    memset(a, 3, n);
    printf("%zu MiB written by the parent; a child maps it and passes over it twice\n", n >> 20);
    for (int mode = 0; mode < 4; mode++) {
        int write = mode >= 2, populate = mode & 1;
        fflush(stdout);
        if (fork() == 0) {
            unsigned char *b = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (b == MAP_FAILED) _exit(1);
            double tp = now();
            if (populate) madvise(b, n, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
            tp = now() - tp;
            double t1 = pass(b, n, write), t2 = pass(b, n, write);
            printf("%-5s %-9s populate %6.1f ms, first pass %6.1f ms (%.2f us a page), second %.2f "
                   "ms\n",
                   write ? "write" : "read", populate ? "populated" : "", tp * 1e3, t1 * 1e3,
                   t1 * 1e6 / (double)(n / 4096), t2 * 1e3);
            fflush(stdout);
            _exit(0);
        }
        wait(NULL);
    }
    return 0;
}
