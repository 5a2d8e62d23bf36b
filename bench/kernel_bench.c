/* Throughput of the reduction kernels: float32 / bfloat16 / float16 sum
 * (vectorised, src/core/reduce.c) against the same loop kept scalar.
 * The CMake target kernel_bench, run by bench/kernels.sh bench [elements].
 * GB/s counts the bytes a kernel touches: read a, read b, write out. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll.h"
#include "core/half.h"
#include "core/reduce.h"

typedef void (*kernel)(void *out, const void *a, const void *b, size_t n);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The empty asm in the loop body stops both compilers from vectorising it. */
static void scalar_f32_sum(void *out, const void *a, const void *b, size_t n)
{
    float *o = out;
    const float *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        o[i] = x[i] + y[i];
        __asm__ volatile("" ::: "memory");
    }
}

static void scalar_f16_sum(void *out, const void *a, const void *b, size_t n)
{
    uint16_t *o = out;
    const uint16_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        o[i] = coll__float_to_half(coll__half_to_float(x[i]) + coll__half_to_float(y[i]));
        __asm__ volatile("" ::: "memory");
    }
}

static void scalar_bf16_sum(void *out, const void *a, const void *b, size_t n)
{
    uint16_t *o = out;
    const uint16_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        o[i] = coll__float_to_bf16(coll__bf16_to_float(x[i]) + coll__bf16_to_float(y[i]));
        __asm__ volatile("" ::: "memory");
    }
}

/* Best of several repetitions, so a descheduled run does not count. */
static double best_seconds(kernel k, void *out, const void *a, const void *b, size_t n)
{
    double best = 1e30;
    for (int rep = 0; rep < 15; rep++) {
        double t0 = now_s();
        k(out, a, b, n);
        double t = now_s() - t0;
        if (t < best) best = t;
    }
    return best;
}

static void run(const char *name, kernel k, size_t esize, size_t n, int in_place)
{
    size_t bytes = n * esize;
    unsigned char *a = malloc(bytes), *b = malloc(bytes), *o = malloc(bytes);
    if (!a || !b || !o) {
        fprintf(stderr, "kernel_bench: cannot allocate 3 x %zu bytes\n", bytes);
        exit(1);
    }
    for (size_t i = 0; i < bytes; i++) { /* small positive values in every format */
        a[i] = (unsigned char)(i % 2 ? 0x3c : i % 7);
        b[i] = (unsigned char)(i % 2 ? 0x3c : i % 5);
    }
    memset(o, 0, bytes);
    double t = best_seconds(k, in_place ? a : o, a, b, n);
    printf("%-26s %10zu %10.1f %8.2f\n", name, n, t * 1e6, 3.0 * (double)bytes / t / 1e9);
    free(a);
    free(b);
    free(o);
}

int main(int argc, char **argv)
{
    size_t sizes[2] = {8192, argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)1 << 22};
    printf("%-26s %10s %10s %8s\n", "kernel", "elements", "best_us", "GB/s");
    printf("dispatched kernels: %s\n", coll__reduce_isa());
    for (int s = 0; s < 2; s++) {
        size_t n = sizes[s];
        static const struct {
            const char *name;
            coll_dtype dt;
            size_t esize;
            kernel scalar;
        } types[] = {{"float32", COLL_FLOAT32, 4, scalar_f32_sum},
                     {"bfloat16", COLL_BFLOAT16, 2, scalar_bf16_sum},
                     {"float16", COLL_FLOAT16, 2, scalar_f16_sum},
                     {"int32", COLL_INT32, 4, NULL},
                     {"float64", COLL_FLOAT64, 8, NULL}};
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            char name[64];
            snprintf(name, sizeof name, "%s sum", types[t].name);
            run(name, coll__reduce_kernel(types[t].dt, COLL_SUM), types[t].esize, n, 0);
            snprintf(name, sizeof name, "%s sum in-place", types[t].name);
            run(name, coll__reduce_kernel(types[t].dt, COLL_SUM), types[t].esize, n, 1);
            snprintf(name, sizeof name, "%s sum baseline", types[t].name);
            run(name, coll__reduce_kernel_baseline(types[t].dt, COLL_SUM), types[t].esize, n, 0);
            if (types[t].scalar) {
                snprintf(name, sizeof name, "%s sum scalar", types[t].name);
                run(name, types[t].scalar, types[t].esize, n, 0);
            }
        }
    }
    return 0;
}
