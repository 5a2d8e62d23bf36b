/* float16 and bfloat16 all-reduce sums that lose no more than summing in
 * float32 and rounding once: `test_half_sum NPROCS BACKEND`. Every rank's
 * inputs are random in [-1, 1) (known to every rank from a seed), summed by
 * the backend at sizes that take each shm strategy (staging, the CMA slice,
 * the direct strategy on coll_alloc buffers; in and out of place) and compared
 * with the exact sum (float64): the largest error must be no larger than
 * that of the float32 sum in rank order rounded once (the reference), give or
 * take 1%. Per-step rounding (each partial sum rounded back to 16 bits) lands
 * about twice as far from the exact sum at 4 ranks and more at 6. */
#include "rank_harness.h"

#include "core/half.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint16_t to16(coll_dtype dt, float f)
{
    return dt == COLL_FLOAT16 ? coll__float_to_half(f) : coll__float_to_bf16(f);
}

static float from16(coll_dtype dt, uint16_t h)
{
    return dt == COLL_FLOAT16 ? coll__half_to_float(h) : coll__bf16_to_float(h);
}

/* Rank p's input element i: uniform in [-1, 1), in dt. */
static uint16_t input(coll_dtype dt, int p, size_t i)
{
    uint64_t r = mix(((uint64_t)p << 40) ^ i ^ 0x5eedull);
    return to16(dt, (float)((double)(r >> 11) / 4503599627370496.0 - 1.0));
}

/* Largest |got - exact| over the vector, and the reference's. */
static void errors(coll_dtype dt, const uint16_t *got, size_t n, double *got_max, double *ref_max)
{
    *got_max = *ref_max = 0;
    for (size_t i = 0; i < n; i++) {
        double exact = 0;
        float f32 = 0;
        for (int p = 0; p < rh_size; p++) {
            float x = from16(dt, input(dt, p, i));
            exact += x;
            f32 += x;
        }
        double g = fabs(from16(dt, got[i]) - exact), r = fabs(from16(dt, to16(dt, f32)) - exact);
        *got_max = g > *got_max ? g : *got_max;
        *ref_max = r > *ref_max ? r : *ref_max;
    }
}

static int one(coll_comm *comm, coll_dtype dt, size_t n, int shared, int in_place)
{
    size_t bytes = n * 2;
    uint16_t *in = shared ? coll_alloc(comm, bytes) : malloc(bytes);
    uint16_t *out = in_place ? in : shared ? coll_alloc(comm, bytes) : malloc(bytes);
    if (!in || !out) {
        fprintf(stderr, "rank %d: no buffers of %zu bytes\n", rh_rank, bytes);
        return 1;
    }
    for (size_t i = 0; i < n; i++) in[i] = input(dt, rh_rank, i);
    int rc = coll_allreduce(comm, in, out, n, dt, COLL_SUM);
    double got, ref;
    if (rc == COLL_OK) errors(dt, out, n, &got, &ref);
    int bad = rc != COLL_OK || got > ref * 1.01 + 1e-9;
    if (bad || rh_rank == 0)
        printf("rank %d: %s %zu elements, %s buffers, %s: %s, largest error %.4g (rounded once: "
               "%.4g)%s\n",
               rh_rank, dt == COLL_FLOAT16 ? "float16" : "bfloat16", n,
               shared ? "coll_alloc" : "malloc", in_place ? "in place" : "out of place",
               rc == COLL_OK ? "ok" : coll_status_name(rc), rc == COLL_OK ? got : NAN,
               rc == COLL_OK ? ref : NAN, bad ? "  FAIL" : "");
    if (shared) {
        if (out != in) coll_free(comm, out);
        coll_free(comm, in);
    } else {
        if (out != in) free(out);
        free(in);
    }
    return bad;
}

int main(int argc, char **argv)
{
    coll_comm *comm = rh_start(argc, argv);
    if (!comm) return rh_launch_status;
    static const coll_dtype dts[] = {COLL_FLOAT16, COLL_BFLOAT16};
    /* staging (small), the CMA slice (malloc, large), the direct strategy (coll_alloc) */
    static const size_t counts[] = {300, 150000};
    int failures = 0;
    for (size_t d = 0; d < 2; d++)
        for (size_t c = 0; c < 2; c++)
            for (int shared = 0; shared < 2; shared++)
                for (int in_place = 0; in_place < 2; in_place++)
                    failures += one(comm, dts[d], counts[c], shared, in_place);
    return rh_finish(comm, failures);
}
