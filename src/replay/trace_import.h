/* A torch 2.x profiler trace (the Chrome/Kineto JSON prof.export_chrome_trace
 * writes; one file per rank) read into one rank's replay_trace (trace.h).
 *
 * Which events count: the `record_param_comms` events where the backend emits
 * them (NCCL, coll), each completed by its NCCL kernel on the GPU where the
 * trace has one (the kernel's end is the call's); where a file has none (torch 2.6's gloo emits none), the
 * `c10d::<collective>` events with their "Input Dims"/"Input type" (only under
 * record_shapes=True), each completed by the backend's own event of its call
 * (`gloo:all_reduce`, on the backend's worker thread: its dtype, and its end
 * as the call's); where there are no c10d events either, the backend's events
 * alone. One source per file, and an event inside another of
 * the same source on the same thread is not counted again, so nested events
 * (c10d::allreduce_ around gloo:all_reduce around record_param_comms) count
 * once.
 *
 * What the profiler does not say is assumed and said in warnings (one line
 * each, for the caller to print): the reduction (none of torch 2.6's events
 * carries it: sum), and for events that do not name their group, the group the
 * calls were placed in and why. Errors name the file, the event (name, ts) and
 * the problem. */
#ifndef REPLAY_TRACE_IMPORT_H
#define REPLAY_TRACE_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "replay/trace.h"

/* A larger profiler trace is refused unread (it is parsed whole in memory). */
#define REPLAY_IMPORT_MAX_BYTES (2ull << 30)

typedef struct replay_import {
    replay_trace t;     /* source "torch-profiler"; calls in the order they started */
    char rank_from[48]; /* where t.rank came from: "distributedInfo", "file order" */
    char backend[32];   /* distributedInfo's backend, "" unknown */
    char *warnings;     /* lines ending in '\n' ("" none), each starting "PATH: " */
} replay_import;

/* Reads the profiler trace at path into im (freed with replay_import_free, also
 * on failure). The rank and world come from the trace's "distributedInfo";
 * where it has none, rank_fallback and world_fallback (the caller's file order
 * and count; -1: refuse such a file). 0, or -1 with "PATH: ..." in err; without
 * jansson -1 saying so. */
int replay_import_profiler(const char *path, int rank_fallback, int world_fallback,
                           replay_import *im, char *err, size_t errlen);
void replay_import_free(replay_import *im);

/* ---- the names torch uses (trace_import_names.c) ---- */

/* The format's op for a collective as torch names it: record_param_comms's
 * "Collective name", a c10d op without "c10d::" and its trailing '_', a
 * backend's event name without "gloo:" ("allreduce", "all_reduce",
 * "_allgather_base", "reduce_scatter_tensor_coalesced", "alltoall_base",
 * ...). 0 with *op set; 1 for names that are no communication call ("wait",
 * "init"); -1 unknown. */
int replay_import_op(const char *name, replay_op *op);

/* 1 for a receive from any source (recvAnySource, recv_any_source): the
 * profiler does not say from which rank, so the importer refuses it. */
int replay_import_any_source(const char *name);

/* libcoll's dtype for torch's ScalarType names ("Float", "BFloat16", "Long",
 * in record_param_comms) and its TypeMeta names ("float", "c10::Half",
 * "long int", in "Input type"). 0, or -1 for a dtype libcoll has not
 * (int16, complex, float8...). */
int replay_import_dtype(const char *name, coll_dtype *out);

#endif
