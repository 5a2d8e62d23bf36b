/* Whether, with a core per rank, all-reduce on private buffers in 4 KiB pages
 * runs faster copied through the shared heap (the private engine) or through
 * the segment's staging slots than with CMA slices: measured by running all
 * three before the communicator's first all-reduce from the core window's
 * start (shm.c), because the answer is the machine's and its state's. On a
 * Zen 5 EPYC VM the private engine took 0.54-0.89x the slices' time at 2
 * ranks, 32 KiB-4 MiB, in one of the VM's two states and 1.7-2.6x in the
 * other, a minute apart, and staging 0.54-0.83x at 16-64 MiB in the first
 * and 1.4-2.1x at 4-64 MiB in the second; on an Intel Xeon and a Zen 4 EPYC
 * the slices were as fast or faster (shm_plan.c). A probe that only timed
 * the copies (one buffer through the heap against process_vm_readv) said
 * "copies" in both states: the engine's other steps (the claims, the
 * results read back across cores) are what the slow state slows, so the
 * probe runs the engines. */
#ifndef SHM_CORE_PROBE_H
#define SHM_CORE_PROBE_H

#include "backend/shm/shm_op.h"

/* Per rank: inside the window it decides (COLL_SHM_PRIV_CORE_MIN 64K to
 * COLL_SHM_PRIV_CORE_MAX 4M by default), where the two engines differ most
 * in the fast state (0.66x at 512 KiB, 0.81x at 256 KiB, Zen 5 VM). */
#define SHM_CORE_PROBE_BYTES ((size_t)512 << 10)

/* The ways the probe times, all-reduce on private buffers in 4 KiB pages
 * with a core per rank. */
enum { SHM_WAY_PRIVATE, SHM_WAY_CMA, SHM_WAY_STAGE, SHM_WAYS };

typedef struct shm_core_probe {
    double us[SHM_WAYS]; /* a call's time each way: the slowest rank's best block */
    int private_wins;    /* the private engine beat CMA slices */
    int stage_wins;      /* staging through the segment beat CMA slices */
} shm_core_probe;

/* One call through the backend, as shm_run makes it. */
typedef int (*shm_run_fn)(shm_state *st, const coll__call *c, const coll__sig *sig, double deadline,
                          coll__err *err);

/* Every rank: float32 sum all-reduces of SHM_CORE_PROBE_BYTES in place on a
 * private buffer, in blocks of each way alternated (the private engine:
 * st->k.priv_core_max as read; CMA slices: that window shut, and
 * cma_allreduce_min as read; staging: both shut), then one all-reduce (max)
 * of the ranks' best blocks, so that every rank has the same numbers and
 * verdicts. st->k is left as read: the caller applies the verdicts. A way
 * wins where it saves a twentieth of CMA's time (the default). The first
 * call in the window allocates and maps the scratch (milliseconds), as a
 * program's first would. The calls wait until deadline, the call's that
 * the probe runs before; an error (a peer died) is that call's. */
int coll__shm_core_probe(shm_state *st, shm_run_fn run, double deadline, shm_core_probe *p,
                         coll__err *err);

#endif
