/* The table of libcoll's tuning variables: see tuning.h. */
#include "core/tuning.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "coll.h"
#include "core/env.h"

#define KIB 1024ull
#define MIB (KIB * KIB)
#define GIB (MIB * KIB)
#define ANY SIZE_MAX /* read into a size_t */
#define T(name, kind, dflt, when, lo, hi, meaning)                        \
    {                                                                     \
        name, COLL__TUNE_##kind, dflt, COLL__TUNE_##when, lo, hi, meaning \
    }

/* The shm crossovers are measured: why each sits where it does is in
 * src/backend/shm/shm_plan.c. */
static const coll__tunable table[] = {
    T("COLL_SHM_SLOT_BYTES", BYTES, MIB, ALWAYS, 4 * KIB, GIB,
      "shm staging slot per rank and parity (rounded up to 4 KiB)"),
    T("COLL_SHM_MBOX_BYTES", BYTES, 64 * KIB, ALWAYS, 64, 64 * MIB,
      "shm point-to-point buffer per pair of ranks"),
    T("COLL_SHM_CHUNK_BYTES", BYTES, 256 * KIB, ALWAYS, 64, 64 * MIB,
      "shm CMA pipeline chunk and largest direct all-reduce chunk"),
    T("COLL_SHM_CMA_MIN", BYTES, 128 * KIB, ALWAYS, 0, ANY,
      "per-rank bytes from which shm collectives other than all-reduce use CMA"),
    T("COLL_SHM_CMA_ALLREDUCE_MIN", BYTES, 64 * KIB, ALWAYS, 0, ANY,
      "per-rank bytes from which shm all-reduce on private buffers uses CMA slices"),
    T("COLL_SHM_CMA_WHOLE_MIN", BYTES, 32 * KIB, PAIR, 0, ANY,
      "per-rank bytes from which shm all-reduce out of place on private buffers reads "
      "whole inputs with CMA"),
    T("COLL_SHM_CMA_WHOLE_MAX", BYTES, 256 * KIB, PAIR, 0, ANY,
      "per-rank bytes up to which (excluded) it does"),
    T("COLL_SHM_DIRECT_MIN", BYTES, 4 * KIB, ALWAYS, 0, ANY,
      "per-rank bytes from which shm all-reduce on coll_alloc'd buffers goes direct"),
    T("COLL_SHM_STREAM_MIN", BYTES, 16 * MIB, ALWAYS, 0, ANY,
      "all ranks' output bytes from which shm direct all-reduce writes with streaming stores"),
    T("COLL_SHM_TOUCH_MAX", BYTES, 256 * MIB, ALWAYS, 0, ANY,
      "all ranks' buffer bytes up to which shm direct all-reduce touches every page on a "
      "buffer set's first call"),
    T("COLL_SHM_HEAP_BYTES", BYTES, 16 * GIB, ALWAYS, 0, 1ull << 44,
      "address space of each rank's coll_alloc heap (0: coll_alloc gives private memory)"),
    T("COLL_SHM_PRIV_MIN", BYTES, 4 * KIB, OVERSUB, 0, ANY,
      "per-rank bytes from which shm all-reduce on private buffers copies into the shared "
      "heap and reduces there"),
    T("COLL_SHM_PRIV_MAX", BYTES, MIB, OVERSUB, 0, ANY,
      "per-rank bytes up to which (excluded) it does"),
    T("COLL_SHM_PRIV_PLAIN_MAX", BYTES, 512 * MIB, OVERSUB, 0, ANY,
      "per-rank bytes up to which (excluded) it does when every rank's buffers are in 4 KiB "
      "pages, COLL_SHM_PRIV_MAX applying otherwise; its scratch holds 2x the bytes in each "
      "rank's heap, so unset it shrinks until all ranks' scratch fits a quarter of the host's "
      "memory"),
    T("COLL_SHM_SPIN_US", COUNT, 50, ALWAYS, 0, 1000000,
      "microseconds an shm waiter spins before it sleeps (with more ranks than cores it "
      "yields the CPU at every miss)"),
    T("COLL_SHM_CMA", FLAG, 1, ALWAYS, 0, 1, "0: shm never uses CMA (process_vm_readv)"),
    T("COLL_TCP_SOCKBUF", BYTES, 0, ALWAYS, 0, GIB,
      "tcp socket buffer bytes (0: the kernel's autotuning)"),
    T("COLL_AUTO_RANKS_PER_HOST", COUNT, 0, ALWAYS, 0, INT_MAX,
      "auto: emulate hosts of this many ranks each (0: the real hosts)"),
    T("COLL_AUTO_HIER", FLAG, 1, ALWAYS, 0, 1, "0: auto runs flat, not hierarchical, across hosts"),
    T("COLL_AUTO_PIPE_BYTES", BYTES, 4 * MIB, ALWAYS, 0, UINT64_MAX >> 1,
      "auto: pipeline chunk of hierarchical collectives (0: not pipelined)"),
    T("COLL_MPI_MAX_COUNT", COUNT, INT_MAX, ALWAYS, 1, INT_MAX,
      "mpi: largest element count of one MPI call"),
    T("COLL_GLOO_CHECK", FLAG, 1, ALWAYS, 0, 1,
      "0: gloo runs collectives without comparing every rank's arguments first"),
};

const coll__tunable *coll__tunables(size_t *count)
{
    *count = sizeof table / sizeof table[0];
    return table;
}

const coll__tunable *coll__tunable_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

uint64_t coll__tunable_default(const coll__tunable *t, int ranks, int oversub)
{
    switch (t->when) {
    case COLL__TUNE_PAIR: return ranks == 2 ? t->dflt : 0;
    case COLL__TUNE_OVERSUB: return oversub ? t->dflt : 0;
    default: return t->dflt;
    }
}

static int read_row(const coll__tunable *t, uint64_t dflt, uint64_t *out, coll__err *err)
{
    if (t->kind == COLL__TUNE_FLAG) {
        int on;
        int rc = coll__env_flag(t->name, dflt != 0, &on, err);
        if (rc == COLL_OK) *out = (uint64_t)on;
        return rc;
    }
    if (t->kind == COLL__TUNE_BYTES) return coll__env_bytes(t->name, dflt, t->lo, t->hi, out, err);
    return coll__env_count(t->name, dflt, t->lo, t->hi, out, err);
}

int coll__tunable_read(const char *name, int ranks, int oversub, uint64_t *out, coll__err *err)
{
    const coll__tunable *t = coll__tunable_find(name);
    if (!t) return coll__err_set(err, COLL_EINVAL, "%s: not a tuning variable", name);
    return read_row(t, coll__tunable_default(t, ranks, oversub), out, err);
}

int coll__env_check_tuning(coll__err *err)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        uint64_t v;
        int rc = read_row(&table[i], 0, &v, err);
        if (rc) return rc;
    }
    return COLL_OK;
}

void coll__tunable_format(const coll__tunable *t, uint64_t v, char *buf, size_t len)
{
    static const char units[] = "GMK";
    if (t->kind == COLL__TUNE_BYTES && v) {
        for (int i = 0; units[i]; i++) {
            unsigned shift = 10u * (unsigned)(3 - i);
            if (v % (1ull << shift) == 0) {
                snprintf(buf, len, "%llu%c", (unsigned long long)(v >> shift), units[i]);
                return;
            }
        }
    }
    snprintf(buf, len, "%llu", (unsigned long long)v);
}

void coll__tunable_format_default(const coll__tunable *t, char *buf, size_t len)
{
    char v[32];
    coll__tunable_format(t, t->dflt, v, sizeof v);
    const char *when = t->when == COLL__TUNE_PAIR      ? " at 2 ranks, else 0"
                       : t->when == COLL__TUNE_OVERSUB ? " with more ranks than cores, else 0"
                                                       : "";
    snprintf(buf, len, "%s%s", v, when);
}
