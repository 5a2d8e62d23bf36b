/* MPI_Allreduce timing, OSU style, for bench/shm_vs_mpi.sh: float32 sum,
 * out-of-place, per size w warm-up then n timed calls between two barriers;
 * the time of a call is the slowest rank's average.
 *
 *   mpirun -np 2 mpi_allreduce [-n ITERS] [-w WARMUP] BYTES...
 * prints "bytes time_us algbw_GBps busbw_GBps" per size (busbw = algbw*2(n-1)/n). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t parse_bytes(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k') v *= 1024.0;
    else if (*end == 'M' || *end == 'm') v *= 1024.0 * 1024.0;
    else if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024.0 * 1024.0;
    return (size_t)v;
}

int main(int argc, char **argv)
{
    int iters = 20, warmup = 5, first = 1;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while (first + 1 < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "-n") == 0) iters = atoi(argv[first + 1]);
        else if (strcmp(argv[first], "-w") == 0) warmup = atoi(argv[first + 1]);
        first += 2;
    }
    if (iters < 1) iters = 1;
    for (int a = first; a < argc; a++) {
        size_t bytes = parse_bytes(argv[a]), count = bytes / sizeof(float);
        if (count == 0) count = 1;
        float *s = malloc(count * sizeof(float)), *r = malloc(count * sizeof(float));
        if (!s || !r) MPI_Abort(MPI_COMM_WORLD, 1);
        for (size_t i = 0; i < count; i++) s[i] = (float)(i % 251);
        memset(r, 0, count * sizeof(float));
        /* Big messages: fewer calls, as the collbench runner does with its time budget. */
        int n = bytes >= (512u << 20) ? (iters < 5 ? iters : 5) : iters;
        for (int i = 0; i < warmup; i++)
            MPI_Allreduce(s, r, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) MPI_Allreduce(s, r, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / n, tmax = 0;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double real = (double)(count * sizeof(float));
            double algbw = real / tmax / 1e9;
            printf("%zu %.2f %.3f %.3f\n", bytes, tmax * 1e6, algbw,
                   algbw * 2.0 * (size - 1) / size);
            fflush(stdout);
        }
        free(s);
        free(r);
    }
    MPI_Finalize();
    return 0;
}
