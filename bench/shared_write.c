/* What a cache line costs to write when another core has just read it: one
 * process memcpy's a buffer into shared memory, a second (pinned to the other
 * core) reads it before the next round (mode 1) or does not (mode 0). The
 * ratio of the two is what any copy-through-shared-memory collective pays per
 * byte on this machine (docs/PERFORMANCE.md, shm, private buffers).
 *   cc -O2 -o shared_write bench/shared_write.c && ./shared_write [bytes...]  */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 2000

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}

/* Average GB/s of the writer's memcpy over ROUNDS rounds. */
static double run(size_t n, int peer_reads)
{
    char *sh = mmap(NULL, n + 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) return perror("mmap"), -1;
    _Atomic int *turn = (_Atomic int *)(sh + n);
    char *src = malloc(n);
    memset(sh, 0, n);
    memset(src, 3, n);
    pid_t child = fork();
    if (child == 0) {
        pin(1);
        volatile long sum = 0;
        for (int it = 1; it <= ROUNDS; it++) {
            while (atomic_load(turn) != 2 * it - 1) sched_yield();
            if (peer_reads)
                for (size_t i = 0; i < n; i += 64) sum += sh[i];
            atomic_store(turn, 2 * it);
        }
        _exit(sum < 0); /* uses sum (never negative): the reads must happen */
    }
    pin(0);
    double total = 0;
    for (int it = 1; it <= ROUNDS; it++) {
        double t0 = now();
        memcpy(sh, src, n);
        total += now() - t0;
        atomic_store(turn, 2 * it - 1);
        while (atomic_load(turn) != 2 * it) sched_yield();
    }
    waitpid(child, NULL, 0);
    munmap(sh, n + 4096);
    free(src);
    return (double)n * ROUNDS / total / 1e9;
}

int main(int argc, char **argv)
{
    static const size_t dflt[] = {256u << 10, 1u << 20, 4u << 20};
    int nsizes = argc > 1 ? argc - 1 : 3;
    printf("| bytes | memcpy into shared memory, GB/s | after the other core read it | ratio |\n");
    printf("|---|---|---|---|\n");
    for (int i = 0; i < nsizes; i++) {
        size_t n = argc > 1 ? strtoull(argv[i + 1], NULL, 0) : dflt[i];
        double alone = run(n, 0), read = run(n, 1);
        printf("| %zu | %.1f | %.1f | %.2fx |\n", n, alone, read, alone / read);
    }
    return 0;
}
