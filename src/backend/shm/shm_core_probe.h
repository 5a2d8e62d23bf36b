/* With a core per rank, how all-reduce on private buffers runs fastest here:
 * in 4 KiB pages copied through the shared heap (the private engine), through
 * the segment's staging slots, or with CMA slices (the default); in huge
 * pages staged or with the slices (the default). Measured by
 * running the ways themselves, lazily, before the communicator's first
 * all-reduce each answer decides (shm.c), because the answer is the
 * machine's and its state's. On a Zen 5 EPYC VM, at 2 ranks, the private
 * engine took 0.54-0.89x the slices' time at 32 KiB-4 MiB in one of the VM's
 * two states and 1.7-2.6x in the other, a minute apart; staging took
 * 0.54-0.95x at 4-64 MiB in the first and 1.4-2.1x in the second, while at
 * 512 KiB it was level with the slices in the second (so each answer is
 * measured at a size of its own band); on an Intel Xeon and a Zen 4 EPYC
 * the slices were as fast or faster (shm_plan.c). A probe that only timed
 * the copies (one buffer through the heap against process_vm_readv) said
 * "copies" in both states: the engine's other steps (the claims, the
 * results read back across cores) are what the slow state slows. */
#ifndef SHM_CORE_PROBE_H
#define SHM_CORE_PROBE_H

#include "backend/shm/shm_op.h"

/* The ways, as shm_knobs set them. */
enum { SHM_WAY_PRIVATE, SHM_WAY_CMA, SHM_WAY_STAGE, SHM_WAY_STREAM /* private, streaming */ };

/* With a core per rank, six questions: the window (the private engine against the slices,
 * at 512 KiB, where they differ most in the fast state: 0.66x, against
 * 0.81x at 256 KiB), the band above it (staging against the slices, at
 * 16 MiB: shm_core_probe.c says why), huge pages (staging against the slices at 1 MiB:
 * process_vm_readv on huge pages ran 2.1-2.2x slower than staging at
 * 1-10 MiB on a Zen 3 EPYC VM, and 0.45x of it on a Zen 5 one), the
 * window on huge pages (the private engine against what the last answer
 * chose, at 64 KiB, the one size it won at: shm_plan.c), and the slices'
 * lowest band on 4 KiB pages, what it takes where the window is shut (staging against
 * them at 64 KiB: on a Zen 5 EPYC VM staging took 0.84x their time in both
 * of its states, where the slices had won on issue 45's EPYC; from 128 KiB
 * the slices won in both), and the window above the band above (calls out
 * of place from 8 MiB): the private engine against what that band's answer
 * chose, at 16 MiB out of place (on that VM it took 0.6-0.7x the slices'
 * time at 10-100 MiB out of place in the slow state, but 2x at 4 MiB and
 * in place no less than theirs; 1.8-2.0x staging's in the fast one). With
 * more ranks than cores, one: the private engine's stores, streamed or
 * cached, at 1 MiB (shm_core_probe.c). */
typedef struct shm_probe_plan {
    size_t bytes;      /* a rank's, float32 */
    int way_a, way_b;  /* timed alternately: A B B A A B ... */
    int rounds, calls; /* rounds of a block of each; calls in a block */
    int huge;          /* on a buffer in huge pages, the ways setting their bound */
    double margin;     /* A wins below this share of B's time */
    int above;         /* the private way opens the window above the first */
    int out;           /* out of place: a second buffer */
} shm_probe_plan;
extern const shm_probe_plan coll__shm_probe_window, coll__shm_probe_above, coll__shm_probe_huge,
    coll__shm_probe_huge_window, coll__shm_probe_low, coll__shm_probe_above_window,
    coll__shm_probe_stream;

typedef struct shm_probe_result {
    double us_a, us_b; /* a call's time each way: the slowest rank's best block */
    int a_wins;        /* A took less than the plan's margin of B's time (B: the default) */
    int no_huge;       /* huge: some rank's buffer was not in huge pages (no verdict) */
} shm_probe_result;

/* One call through the backend, as shm_run makes it. */
typedef int (*shm_run_fn)(shm_state *st, const coll__call *c, const coll__sig *sig, double deadline,
                          coll__err *err);

/* Every rank: float32 sum all-reduces of plan->bytes in place on a private
 * buffer in 4 KiB pages (huge ones where plan->huge; out of place, into a
 * second such buffer, where plan->out), after one call each
 * way, in blocks of each way alternated, then one all-reduce (max) of the
 * ranks' best blocks, so that every rank has the same numbers and verdict.
 * The ways run with the window and the slices' bounds as read at set-up
 * (st->probe); st->k is left as it was: the caller applies the verdict.
 * The private engine's first call allocates and maps its scratch
 * (milliseconds), as a program's first would. The calls wait until deadline, the call's that the probe runs
 * before; an error (a peer died) is that call's. */
int coll__shm_probe(shm_state *st, shm_run_fn run, const shm_probe_plan *plan, double deadline,
                    shm_probe_result *r, coll__err *err);

#endif
