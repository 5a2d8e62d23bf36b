/* The single-thread memory-copy probe (mem_copy_rate.h). */
#include "engine/mem_copy_rate.h"

#include "core/errbuf.h"
#include "coll.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_mem_copy_rate(size_t bytes, int reps, double *gbps, char *err, size_t errlen)
{
    if (bytes < MEM_COPY_MIN_BYTES || reps < 1 || !gbps) {
        coll__set_err(err, errlen, "memory-copy probe: %s",
                      !gbps      ? "no place for the result"
                      : reps < 1 ? "repetitions must be 1 or more"
                                 : "size must be at least 4096 bytes");
        return COLL_EINVAL;
    }
    char *src = malloc(bytes), *dst = malloc(bytes);
    if (!src || !dst) {
        free(src);
        free(dst);
        coll__set_err(err, errlen, "memory-copy probe: cannot allocate 2 x %zu bytes", bytes);
        return COLL_ENOMEM;
    }
    /* first touch: page faults stay out of the timed copies */
    memset(src, 1, bytes);
    memset(dst, 0, bytes);
    double best = 0;
    for (int i = 0; i < reps; i++) {
        src[(size_t)i % bytes] = (char)i;
        double t0 = now_s();
        memcpy(dst, src, bytes);
        double t = now_s() - t0;
        if (t > 0 && (best == 0 || t < best)) best = t;
    }
    /* read the copy, so the compiler cannot drop it */
    volatile char sink = dst[0];
    (void)sink;
    free(src);
    free(dst);
    if (best <= 0) {
        coll__set_err(err, errlen, "memory-copy probe: the clock did not advance");
        return COLL_ESYS;
    }
    *gbps = (double)bytes / best / 1e9;
    return COLL_OK;
}
