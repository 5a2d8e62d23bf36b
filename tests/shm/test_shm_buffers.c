/* All-reduce on many distinct buffers in rotation, as a DDP step all-reduces
 * its buckets (issue 18): the direct strategy's page-table cache keeps several
 * buffer sets per rank (shm_direct.c, SHM_POP_WAYS) and must never use a set
 * it no longer holds, nor one whose heap pages a free has unmapped.
 *
 *   test_shm_buffers NPROCS coll     buffers from coll_alloc (shm's heaps:
 *                                    the direct strategy and its cache)
 *   test_shm_buffers NPROCS malloc   private buffers (the copy-in strategy and
 *                                    its scratch, which grows with the count)
 *
 * NBUF buffers, more than the cache holds, each with its own count (1, prime,
 * up to ~100K elements), every one all-reduced each round, odd ones in place;
 * between rounds some are freed and allocated again (the heap moves, frees
 * are counted). Exact int32 and float32 sums are checked on every rank; exit
 * 1 on any wrong element. Once the communicator is destroyed with every
 * buffer freed, no heap may stay mapped (the private engine's scratch once
 * kept its heap, and its memory, for the life of the process). */
#include "coll.h"
#include "rank_harness.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#define NBUF 80
#define ROUNDS 4

static int use_coll;

static void *get(coll_comm *comm, size_t bytes)
{
    return use_coll ? coll_alloc(comm, bytes) : malloc(bytes ? bytes : 1);
}

static void put(coll_comm *comm, void *p)
{
    if (use_coll) coll_free(comm, p);
    else free(p);
}

/* Mappings of shm heaps (memfd "collbench-heap") left in this process. */
static int heaps_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "collbench-heap")) n++;
    if (f) fclose(f);
    return n;
}

static size_t count_of(int i)
{
    static const size_t some[] = {1, 17, 1031, 4099, 65537, 100003};
    return i < 6 ? some[i] : 257 + (size_t)i * 1021;
}

/* Element j of rank q's input to buffer i in round r: small integers, so
 * float32 sums are exact too. */
static int32_t input(int q, int i, int r, size_t j)
{
    return (int32_t)((q + 1) * (int)(j % 97) + i + r);
}

static int32_t want(int n, int i, int r, size_t j)
{
    return (int32_t)((int)(j % 97) * n * (n + 1) / 2 + n * (i + r));
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s NPROCS coll|malloc\n", argv[0]);
        return 2;
    }
    /* The ranks are launched with rank_argv; the buffer kind goes by environment. */
    if (!getenv("COLLTEST_BUFFERS")) setenv("COLLTEST_BUFFERS", argv[2], 1);
    use_coll = strcmp(getenv("COLLTEST_BUFFERS"), "coll") == 0;
    char *rank_argv[] = {argv[0], argv[1], "shm", NULL};
    coll_comm *comm = rh_start(3, rank_argv);
    if (!comm) return rh_launch_status;
    void *send[NBUF], *recv[NBUF];
    for (int i = 0; i < NBUF; i++) {
        send[i] = get(comm, count_of(i) * 4);
        recv[i] = i & 1 ? send[i] : get(comm, count_of(i) * 4);
    }
    long wrong = 0;
    int rc = COLL_OK;
    for (int r = 0; r < ROUNDS && rc == COLL_OK; r++) {
        for (int i = 0; i < NBUF && rc == COLL_OK; i++) {
            size_t m = count_of(i);
            int flt = (i + r) % 3 == 0;
            for (size_t j = 0; j < m; j++) {
                int32_t v = input(rh_rank, i, r, j);
                if (flt) ((float *)send[i])[j] = (float)v;
                else ((int32_t *)send[i])[j] = v;
            }
            rc = coll_allreduce(comm, send[i], recv[i], m, flt ? COLL_FLOAT32 : COLL_INT32,
                                COLL_SUM);
            for (size_t j = 0; rc == COLL_OK && j < m; j++) {
                int32_t w = want(rh_size, i, r, j);
                int bad = flt ? ((float *)recv[i])[j] != (float)w : ((int32_t *)recv[i])[j] != w;
                if (bad && wrong++ < 5)
                    fprintf(stderr, "rank %d round %d buffer %d count %zu element %zu wrong\n",
                            rh_rank, r, i, m, j);
            }
        }
        /* Free and take again every fifth buffer: new addresses, heap frees. */
        for (int i = r % 5; i < NBUF; i += 5) {
            if (recv[i] != send[i]) put(comm, recv[i]);
            put(comm, send[i]);
            send[i] = get(comm, count_of(i) * 4);
            recv[i] = i & 1 ? send[i] : get(comm, count_of(i) * 4);
        }
    }
    if (rc)
        fprintf(stderr, "rank %d: %s: %s\n", rh_rank, coll_status_name(rc), coll_comm_errmsg(comm));
    for (int i = 0; i < NBUF; i++) {
        if (recv[i] != send[i]) put(comm, recv[i]);
        put(comm, send[i]);
    }
    if (wrong) fprintf(stderr, "rank %d: %ld wrong elements\n", rh_rank, wrong);
    int failed = rh_finish(comm, rc != COLL_OK || wrong != 0);
    int left = heaps_mapped();
    if (left) fprintf(stderr, "rank %d: %d heap mappings left after the destroy\n", rh_rank, left);
    return failed || left;
}
