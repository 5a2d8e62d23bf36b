/* Which engine runs an shm call (shm_op.h lists them): one pure function of
 * what every rank reported (sizes, where the buffers live, in place or not,
 * ranks) and the knobs (shm_knobs.c's table, read once per communicator by
 * coll__shm_knobs_read). shm.c asks it before the arrival step and, where
 * the answer depends on the peers' buffers, again after it. */
#ifndef COLL_SHM_PLAN_H
#define COLL_SHM_PLAN_H

#include <stddef.h>

#include "core/err.h"
#include "core/sig.h"

/* The COLL_SHM_* tuning variables, in bytes unless named otherwise. */
typedef struct shm_knobs {
    size_t slot_bytes, mbox_bytes; /* staging slot per rank and parity; p2p buffer per pair */
    size_t chunk_bytes;            /* CMA pipeline chunk, largest direct chunk */
    size_t cma_min;                /* per-rank bytes from which collectives use CMA */
    size_t cma_allreduce_min;      /* the same for all-reduce's CMA slices, 4 KiB pages */
    size_t cma_huge_min;           /* ... where some rank holds huge pages */
    size_t cma_whole_min,
        cma_whole_max;         /* [min, max): all-reduce out of place reads whole inputs */
    size_t direct_min;         /* per-rank bytes from which direct all-reduce runs */
    size_t stream_min;         /* all ranks' bytes from which direct writes past the caches */
    size_t priv_stream_min;    /* ... the private engine's copies and results */
    size_t touch_max;          /* all 2n buffers' bytes up to which direct pre-touches them */
    size_t heap_bytes;         /* each rank's coll_alloc heap (0: none) */
    size_t priv_min, priv_max; /* [min, max): all-reduce on private buffers copies into the heap */
    size_t priv_plain_max;     /* past priv_max up to this on buffers in 4 KiB pages, in place */
    size_t priv_plain_out_max; /* ... out of place */
    size_t priv_core_min,
        priv_core_max; /* [min, max): the same with a core per rank, 4 KiB pages */
    size_t priv_core_above_min,
        priv_core_above_max;    /* [min, max): a second such window, 4 KiB pages, out of place */
    size_t priv_core_huge_max;  /* [priv_core_min, this): ... where some rank holds huge pages */
    size_t nonblocking_cma_min; /* per-rank bytes from which a nonblocking all-reduce on
                                   4 KiB pages takes the CMA slices */
    int spin_us;                /* a waiter's spin before it sleeps */
    int cma;                    /* 0: never use CMA */
    int core_probe;             /* 0: no probes; 1: probe; 2: and print the times */
    int probe_every_s;          /* seconds after which the probes run again (0: once) */
    int probe_given;            /* 1: the probes run for knobs given too, their values kept */
} shm_knobs;

typedef enum shm_engine {
    SHM_ENGINE_STAGE,      /* rounds through the segment's staging slots */
    SHM_ENGINE_P2P,        /* send, recv, sendrecv through the mailboxes */
    SHM_ENGINE_CMA,        /* the collective's CMA engine; all-reduce: each rank its slice */
    SHM_ENGINE_CMA_WHOLE,  /* all-reduce: every rank reads the peers' whole inputs */
    SHM_ENGINE_DIRECT,     /* all-reduce: loads and stores in the shared heaps */
    SHM_ENGINE_PRIVATE,    /* all-reduce: copy into the shared heap, then direct */
    SHM_ENGINE_ARRIVE,     /* not known yet: arrive, then ask again with every post */
    SHM_ENGINE_ARRIVE_COPY /* the same, this rank's input copied to its scratch first */
} shm_engine;

typedef struct shm_plan_in {
    coll__kind kind;
    size_t bytes;         /* per rank: count x element size */
    int n;                /* ranks */
    int cma;              /* process_vm_readv works between every pair of ranks */
    int heaps;            /* every rank mapped every rank's shared heap */
    int mine_in_heap;     /* this rank's send and receive buffers are in its heap */
    int mine_plain;       /* ... are in 4 KiB pages */
    int mine_in_place;    /* ... are one buffer */
    int mine_nonblocking; /* this rank's call runs on its progress thread */
    int arrived;          /* every rank's post was read: the fields below hold */
    int all_in_heap;      /* every rank's send and receive buffers are in the heaps */
    int any_in_place;     /* some rank's send buffer is its receive buffer */
    int all_in_place;     /* every rank's is */
    int all_plain;        /* every rank's buffers are in 4 KiB pages */
    int any_nonblocking;  /* some rank's call runs on its progress thread */
    int no_scratch;       /* some rank's heap had no room for the private engine */
} shm_plan_in;

/* The engine for the call. Every rank that made the same call gets the same
 * answer after the arrival (its inputs are then the same everywhere); before
 * it, the answer depends only on the call and the communicator. */
shm_engine coll__shm_plan(const shm_plan_in *in, const shm_knobs *k);
/* Where the private engine's window ends on buffers in 4 KiB pages for a call
 * some ranks make in place (in) and some out of place (out): the lower end
 * of the places it has, so that every rank's own place agrees before the
 * arrival with what all of them say after it. */
size_t coll__shm_plain_max(const shm_knobs *k, int in, int out);
/* Whether all-reduce of bytes per rank on private buffers falls in the private
 * engine's window: [priv_min, priv_max), and on buffers in 4 KiB pages up to
 * plain_max (coll__shm_plain_max; 0 on huge pages). */
int coll__shm_private_window(const shm_knobs *k, size_t bytes, size_t plain_max);
/* Whether it falls in the windows a core per rank has, from direct_min: on
 * buffers every rank holds in 4 KiB pages (plain) [priv_core_min,
 * priv_core_max), and [priv_core_above_min, priv_core_above_max) where every
 * rank's call is out of place (out), where some rank holds huge pages
 * [priv_core_min, priv_core_huge_max). */
int coll__shm_core_window(const shm_knobs *k, size_t bytes, int plain, int out);
/* Whether the plan's answer for this call may depend on the page kind of this
 * rank's buffers (mine_plain), before the arrival: only then are they looked
 * at (a system call). A rank that does not ask posts them as not plain. */
int coll__shm_asks_page_kind(const shm_plan_in *in, const shm_knobs *k);
/* Whether a direct all-reduce writes with streaming stores: all_bytes (every
 * rank's output together) from stream_min, and never into outputs that are
 * their inputs (in_place: some rank's), whose lines the chunk has just read
 * (shm_direct.c). */
int coll__shm_streams(const shm_knobs *k, size_t all_bytes, int in_place);
/* Whether the private engine copies in and writes its results with them:
 * all_bytes from priv_stream_min, in place too (its results go to a scratch,
 * then out with a copy). */
int coll__shm_private_streams(const shm_knobs *k, size_t all_bytes);
/* The scratch the private engine takes in each rank's heap for a call of bytes
 * per rank: inputs and results, each rounded up to SHM_SCRATCH_ROUND so that
 * nearby sizes reuse it (shm_direct.c). */
#define SHM_SCRATCH_ROUND ((size_t)1 << 20)
size_t coll__shm_private_scratch(size_t bytes);
/* The most the private engine's scratch takes in each rank's heap over
 * all-reduce calls of these per-rank bytes with knobs k: an upper bound, as if
 * every rank's buffers were private and in 4 KiB pages (the widest window);
 * 0 without heaps (heap_bytes 0) or ranks to share them (n < 2). */
size_t coll__shm_scratch_bound(const shm_knobs *k, int n, const uint64_t *bytes, size_t nbytes);

/* "stage", "cma", ...: for messages and tests. */
const char *coll__shm_engine_name(shm_engine e);

/* The knobs for n ranks (oversub: more ranks than cores) from the table's
 * defaults and the environment; COLL_EINVAL naming a bad variable. */
int coll__shm_knobs_read(shm_knobs *k, int n, int oversub, coll__err *err);
/* The same from the defaults alone. */
void coll__shm_knobs_default(shm_knobs *k, int n, int oversub);
/* The private engine's scratch on 4 KiB pages holds 2x a rank's bytes in
 * each rank's heap: each end of its window the user did not set (set_in:
 * COLL_SHM_PRIV_PLAIN_MAX, set_out: COLL_SHM_PRIV_PLAIN_OUT_MAX, set_core:
 * COLL_SHM_PRIV_CORE_MAX, set_above: COLL_SHM_PRIV_CORE_ABOVE_MAX) shrinks so
 * that n ranks' scratch stays within a quarter of mem_limit (bytes the
 * process may use: RAM, or its cgroup's lower limit, core/mem_limit.h; 0:
 * unknown, no cap). */
void coll__shm_knobs_cap_scratch(shm_knobs *k, int n, uint64_t mem_limit, int set_in, int set_out,
                                 int set_core, int set_above);
/* What a communicator of n ranks plans with: coll__shm_knobs_read, then the
 * scratch capped by this process's memory limit (core/mem_limit.h) where the
 * user set no end. shm's set-up and the launcher's memory check
 * (coll_backend_scratch_bytes) both read them so. */
int coll__shm_knobs_setup(shm_knobs *k, int n, int oversub, coll__err *err);
/* Each of the size_t fields at these offsets whose variable was given set
 * back in k to what setup gives it where none is (its default, capped as
 * coll__shm_knobs_setup caps it). */
void coll__shm_knobs_ungiven(shm_knobs *k, int n, int oversub, const size_t *fields,
                             size_t nfields);
/* Whether the variable behind shm_knobs' field at offset field was given
 * (environment or tuning file): then it applies as it is, whatever a probe
 * finds. */
int coll__shm_knob_given(size_t field);
/* "COLL_SHM_...=VALUE" for the knob at offset field of k, as the environment
 * takes it, into buf: its length, or -1 where it does not fit (or no knob
 * sits there). */
int coll__shm_knob_setting(const shm_knobs *k, size_t field, char *buf, size_t len);
/* Whether the plan's probes run (shm_core_probe.h): COLL_SHM_CORE_PROBE
 * on, 2 ranks or more. Without its probe the default window a core per rank
 * has stays shut. */
int coll__shm_core_probe_wanted(const shm_knobs *k, int n);

#endif
