/* The shm backend's tuning variables and their reading, in one place. */
#include "backend/shm/shm_backend.h"
#include "backend/shm/shm_plan.h"

#include "coll.h"
#include "core/mem_limit.h"
#include "core/tuning.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIB COLL__KIB
#define MIB COLL__MIB
#define GIB COLL__GIB
#define ANY SIZE_MAX /* read into a size_t */

/* The shm backend's tuning variables; the crossovers are measured: why each
 * sits where it does is in shm_plan.c. Row i goes to knobs[i]'s field. */
static const coll__tunable rows[] = {
    COLL__TUNABLE("COLL_SHM_SLOT_BYTES", BYTES, MIB, ALWAYS, 4 * KIB, GIB,
                  "shm staging slot per rank and parity (rounded up to 4 KiB)"),
    COLL__TUNABLE("COLL_SHM_MBOX_BYTES", BYTES, 64 * KIB, ALWAYS, 64, 64 * MIB,
                  "shm point-to-point buffer per pair of ranks"),
    COLL__TUNABLE("COLL_SHM_CHUNK_BYTES", BYTES, 256 * KIB, ALWAYS, 64, 64 * MIB,
                  "shm CMA pipeline chunk and largest direct all-reduce chunk"),
    COLL__TUNABLE("COLL_SHM_CMA_MIN", BYTES, 128 * KIB, ALWAYS, 0, ANY,
                  "per-rank bytes from which shm collectives other than all-reduce use CMA"),
    COLL__TUNABLE("COLL_SHM_CMA_ALLREDUCE_MIN", BYTES, 64 * KIB, ALWAYS, 0, ANY,
                  "per-rank bytes from which shm all-reduce on private buffers in 4 KiB pages "
                  "uses CMA slices (never where COLL_SHM_CORE_PROBE finds staging faster, from "
                  "twice this where it finds staging faster at this, unless given)"),
    COLL__TUNABLE("COLL_SHM_CMA_HUGE_MIN", BYTES, 64 * KIB, ALWAYS, 0, ANY,
                  "the same where some rank holds its buffers in huge pages (process_vm_readv's "
                  "cost per page differs by page kind and host: collbench tune measures each; "
                  "never where COLL_SHM_CORE_PROBE finds staging faster, unless given)"),
    COLL__TUNABLE("COLL_SHM_CMA_WHOLE_MIN", BYTES, 32 * KIB, PAIR, 0, ANY,
                  "per-rank bytes from which shm all-reduce out of place on private buffers "
                  "reads whole inputs with CMA"),
    COLL__TUNABLE("COLL_SHM_CMA_WHOLE_MAX", BYTES, 256 * KIB, PAIR, 0, ANY,
                  "per-rank bytes up to which (excluded) it does"),
    COLL__TUNABLE("COLL_SHM_DIRECT_MIN", BYTES, 4 * KIB, ALWAYS, 0, ANY,
                  "per-rank bytes from which shm all-reduce on coll_alloc'd buffers goes direct"),
    COLL__TUNABLE("COLL_SHM_STREAM_MIN", BYTES, 16 * MIB, ALWAYS, 0, ANY,
                  "all ranks' output bytes from which shm direct all-reduce out of place "
                  "writes with streaming stores (in place never: its output lines were just "
                  "read)"),
    COLL__TUNABLE("COLL_SHM_PRIV_STREAM_MIN", BYTES, 16 * MIB, ALWAYS, 0, ANY,
                  "all ranks' bytes from which shm's private engine (private buffers copied "
                  "through the shared heap) copies in and writes its results with streaming "
                  "stores, in place too (its results go to a scratch first); with more ranks "
                  "than cores the default applies where COLL_SHM_CORE_PROBE finds the cached "
                  "stores faster, else streaming from 1 MiB a rank"),
    COLL__TUNABLE("COLL_SHM_TOUCH_MAX", BYTES, 256 * MIB, ALWAYS, 0, ANY,
                  "all ranks' buffer bytes up to which shm direct all-reduce touches every "
                  "page on a buffer set's first call"),
    COLL__TUNABLE("COLL_SHM_HEAP_BYTES", BYTES, 16 * GIB, ALWAYS, 0, 1ull << 44,
                  "address space of each rank's coll_alloc heap (0: coll_alloc gives private "
                  "memory)"),
    COLL__TUNABLE("COLL_SHM_PRIV_MIN", BYTES, 4 * KIB, OVERSUB, 0, ANY,
                  "per-rank bytes from which shm all-reduce on private buffers copies into the "
                  "shared heap and reduces there"),
    COLL__TUNABLE("COLL_SHM_PRIV_MAX", BYTES, MIB, OVERSUB, 0, ANY,
                  "per-rank bytes up to which (excluded) it does"),
    COLL__TUNABLE("COLL_SHM_PRIV_PLAIN_MAX", BYTES, 512 * MIB, OVERSUB, 0, ANY,
                  "per-rank bytes up to which (excluded) it does in place when every rank's "
                  "buffers are in 4 KiB pages, COLL_SHM_PRIV_MAX applying otherwise; its "
                  "scratch holds 2x the bytes in each rank's heap, so unset it shrinks until "
                  "all ranks' scratch fits a quarter of the memory the process may use (RAM, "
                  "or its cgroup's lower limit)"),
    COLL__TUNABLE("COLL_SHM_PRIV_PLAIN_OUT_MAX", BYTES, 512 * MIB, OVERSUB, 0, ANY,
                  "the same out of place (both bind a call some ranks make in place and "
                  "others not)"),
    COLL__TUNABLE("COLL_SHM_PRIV_CORE_MIN", BYTES, 64 * KIB, CORES, 0, ANY,
                  "with a core per rank: per-rank bytes from which shm all-reduce on private "
                  "buffers in 4 KiB pages copies through the shared heap"),
    COLL__TUNABLE("COLL_SHM_PRIV_CORE_MAX", BYTES, 4 * MIB, CORES, 0, ANY,
                  "per-rank bytes up to which (excluded) it does (0: never); the default "
                  "applies where COLL_SHM_CORE_PROBE finds copies through the shared heap "
                  "faster than CMA, a value given applies as it is"),
    COLL__TUNABLE("COLL_SHM_PRIV_CORE_ABOVE_MIN", BYTES, 8 * MIB, CORES, 0, ANY,
                  "with a core per rank: per-rank bytes from which a second window copies "
                  "4 KiB pages through the shared heap, out of place"),
    COLL__TUNABLE("COLL_SHM_PRIV_CORE_ABOVE_MAX", BYTES, 512 * MIB, CORES, 0, ANY,
                  "per-rank bytes up to which (excluded) it does (0: never); the default "
                  "applies where COLL_SHM_CORE_PROBE finds copies through the shared heap "
                  "faster there than what 4 KiB pages take otherwise, a value given applies "
                  "as it is; unset it shrinks as COLL_SHM_PRIV_PLAIN_MAX does"),
    COLL__TUNABLE("COLL_SHM_PRIV_CORE_HUGE_MAX", BYTES, 128 * KIB, CORES, 0, ANY,
                  "the same where some rank holds its buffers in huge pages (0: never); the "
                  "default applies where COLL_SHM_CORE_PROBE finds copies through the shared "
                  "heap faster than CMA on huge pages"),
    COLL__TUNABLE("COLL_SHM_NONBLOCKING_CMA_MIN", BYTES, 4 * MIB, ALWAYS, 0, ANY,
                  "per-rank bytes from which shm all-reduce issued nonblocking (coll_iallreduce: "
                  "torch's asynchronous collectives, DDP's gradient buckets) on private buffers "
                  "in 4 KiB pages takes the CMA slices wherever the plan would copy through the "
                  "shared heap (staging, the private engine): those hand slots between the "
                  "ranks in lock step, which the caller's own work on the same cores stretches"),
    COLL__TUNABLE("COLL_SHM_SPIN_US", COUNT, 50, ALWAYS, 0, 1000000,
                  "microseconds an shm waiter spins before it sleeps (with more ranks than "
                  "cores it yields the CPU at every miss)"),
    COLL__TUNABLE("COLL_SHM_CMA", FLAG, 1, ALWAYS, 0, 1,
                  "0: shm never uses CMA (process_vm_readv)"),
    COLL__TUNABLE("COLL_SHM_CORE_PROBE", COUNT, 1, ALWAYS, 0, 2,
                  "with a core per rank: 1 times, on 4 KiB pages where COLL_SHM_PRIV_CORE_MAX "
                  "is not given, the private engine against CMA slices (512 KiB, 50 calls) "
                  "before the communicator's first all-reduce in that window and keeps the "
                  "window only where it wins, and staging against the slices (16 MiB, 14 calls) "
                  "before the first from the window's end and stages there where staging wins; "
                  "on huge pages where COLL_SHM_CMA_HUGE_MIN is not given, staging against the "
                  "slices (1 MiB, 14 calls) before the first from the window's start, and "
                  "stages huge pages where staging wins, then, where "
                  "COLL_SHM_PRIV_CORE_HUGE_MAX is not given, the private engine against "
                  "what huge pages take (64 KiB, 300 calls) and keeps that window only where "
                  "it wins; on 4 KiB pages where COLL_SHM_CMA_ALLREDUCE_MIN is not given, staging "
                  "against the slices (64 KiB, 300 calls) before the first from the window's "
                  "start, and stages "
                  "up to twice the slices' bound where staging wins; where "
                  "COLL_SHM_PRIV_CORE_ABOVE_MAX is not given, the private engine against what "
                  "4 KiB pages take there (16 MiB out of place, 14 calls) before the first from "
                  "COLL_SHM_PRIV_CORE_ABOVE_MIN, and keeps that window only where it wins; "
                  "with more ranks than cores, where COLL_SHM_PRIV_STREAM_MIN is not given, the "
                  "private engine with streaming stores against cached ones (1 MiB, 26 calls) "
                  "before the first all-reduce from 1 MiB, and streams from 1 MiB a rank where "
                  "streaming wins; a few milliseconds each, about 100 at 16 MiB (a first "
                  "all-reduce from 16 MiB runs every probe due: 0.2-0.3 s on a 2-core VM), "
                  "once; 0 shuts the windows without probing; 2 also prints the times on "
                  "rank 0's stderr"),
    COLL__TUNABLE("COLL_SHM_PROBE_EVERY_S", COUNT, 0, ALWAYS, 0, 86400,
                  "seconds after which rank 0 asks for COLL_SHM_CORE_PROBE's probes again, "
                  "each band's at its next all-reduce (0: once a communicator); for long runs "
                  "on a machine whose memory changes speed (a VM: 10), at a few milliseconds "
                  "inside whichever call comes next"),
    COLL__TUNABLE("COLL_SHM_PROBE_GIVEN", FLAG, 0, ALWAYS, 0, 1,
                  "1: COLL_SHM_CORE_PROBE's probes run also where the knob a probe sets is "
                  "given, at the calls they would run at without it, and the value given "
                  "stands: a program's recorded verdicts replayed with their time "
                  "(collbench replay --plan recorded sets it)"),
};

const coll__tunable_table coll__shm_tunables = {rows, sizeof rows / sizeof rows[0]};

/* Where each row goes. */
#define KNOB(field)                                                 \
    {                                                               \
        offsetof(shm_knobs, field), sizeof(((shm_knobs *)0)->field) \
    }
static const struct {
    size_t at, size;
} knobs[] = {
    KNOB(slot_bytes),
    KNOB(mbox_bytes),
    KNOB(chunk_bytes),
    KNOB(cma_min),
    KNOB(cma_allreduce_min),
    KNOB(cma_huge_min),
    KNOB(cma_whole_min),
    KNOB(cma_whole_max),
    KNOB(direct_min),
    KNOB(stream_min),
    KNOB(priv_stream_min),
    KNOB(touch_max),
    KNOB(heap_bytes),
    KNOB(priv_min),
    KNOB(priv_max),
    KNOB(priv_plain_max),
    KNOB(priv_plain_out_max),
    KNOB(priv_core_min),
    KNOB(priv_core_max),
    KNOB(priv_core_above_min),
    KNOB(priv_core_above_max),
    KNOB(priv_core_huge_max),
    KNOB(nonblocking_cma_min),
    KNOB(spin_us),
    KNOB(cma),
    KNOB(core_probe),
    KNOB(probe_every_s),
    KNOB(probe_given),
};
_Static_assert(sizeof knobs / sizeof knobs[0] == sizeof rows / sizeof rows[0],
               "a field for every shm tuning variable");

/* The table's ranges keep every value within its field (an int's are below
 * INT_MAX), so the stores below never wrap. */
static void store(shm_knobs *k, size_t i, uint64_t v)
{
    char *at = (char *)k + knobs[i].at;
    if (knobs[i].size == sizeof(int)) *(int *)(void *)at = (int)v;
    else *(size_t *)(void *)at = (size_t)v;
}

static int read_all(shm_knobs *k, int n, int oversub, int env, coll__err *err)
{
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        uint64_t v = coll__tunable_default(&rows[i], n, oversub);
        if (env) {
            int rc = coll__tunable_read(&rows[i], n, oversub, &v, err);
            if (rc) return rc;
        }
        store(k, i, v);
    }
    return COLL_OK;
}

int coll__shm_knobs_read(shm_knobs *k, int n, int oversub, coll__err *err)
{
    return read_all(k, n, oversub, 1, err);
}

void coll__shm_knobs_default(shm_knobs *k, int n, int oversub)
{
    (void)read_all(k, n, oversub, 0, NULL);
}

static void cap(size_t *max, uint64_t cap, int set_by_user)
{
    if (!set_by_user && cap < *max) *max = (size_t)cap;
}

void coll__shm_knobs_cap_scratch(shm_knobs *k, int n, uint64_t mem_limit, int set_in, int set_out,
                                 int set_core, int set_above)
{
    if (mem_limit == 0 || n < 1) return;
    /* n scratch areas of 2 x the window's end within mem_limit / 4 */
    uint64_t most = mem_limit / 8 / (uint64_t)n;
    cap(&k->priv_plain_max, most, set_in);
    cap(&k->priv_plain_out_max, most, set_out);
    cap(&k->priv_core_max, most, set_core);
    cap(&k->priv_core_above_max, most, set_above);
}

int coll__shm_knob_given(size_t field)
{
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
        if (knobs[i].at == field) return strcmp(coll__tunable_source(&rows[i]), "default") != 0;
    return 0;
}

int coll__shm_knob_setting(const shm_knobs *k, size_t field, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        if (knobs[i].at != field) continue;
        const char *at = (const char *)k + field;
        uint64_t v = knobs[i].size == sizeof(int) ? (uint64_t) * (const int *)(const void *)at
                                                  : (uint64_t) * (const size_t *)(const void *)at;
        char value[32];
        coll__tunable_format(&rows[i], v, value, sizeof value);
        int n = snprintf(buf, len, "%s=%s", rows[i].name, value);
        return n > 0 && (size_t)n < len ? n : -1;
    }
    return -1;
}

void coll__shm_knobs_ungiven(shm_knobs *k, int n, int oversub, const size_t *fields, size_t nfields)
{
    shm_knobs d;
    coll__shm_knobs_default(&d, n, oversub);
    coll__shm_knobs_cap_scratch(&d, n, coll__mem_limit(), 0, 0, 0, 0);
    for (size_t i = 0; i < nfields; i++)
        if (coll__shm_knob_given(fields[i]))
            memcpy((char *)k + fields[i], (const char *)&d + fields[i], sizeof(size_t));
}

int coll__shm_knobs_setup(shm_knobs *k, int n, int oversub, coll__err *err)
{
    int rc = coll__shm_knobs_read(k, n, oversub, err);
    /* RAM, or the cgroup's lower limit: past that the scratch calls the OOM
     * killer; a value given is the user's */
    if (rc == COLL_OK)
        coll__shm_knobs_cap_scratch(k, n, coll__mem_limit(),
                                    coll__shm_knob_given(offsetof(shm_knobs, priv_plain_max)),
                                    coll__shm_knob_given(offsetof(shm_knobs, priv_plain_out_max)),
                                    coll__shm_knob_given(offsetof(shm_knobs, priv_core_max)),
                                    coll__shm_knob_given(offsetof(shm_knobs, priv_core_above_max)));
    return rc;
}

int coll__shm_core_probe_wanted(const shm_knobs *k, int n) { return k->core_probe && n >= 2; }
