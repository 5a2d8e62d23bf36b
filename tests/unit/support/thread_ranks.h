/* Run a function on N ranks as threads of this process, each with its own
 * coll__algo_ctx over the in-process mem transport. */
#ifndef THREAD_RANKS_H
#define THREAD_RANKS_H

#include "algo/algo.h"

typedef struct thread_ranks_opts {
    size_t chunk_bytes; /* coll__algo_ctx.chunk_bytes (0: library default) */
    size_t piece_bytes; /* mem transport: bytes per receive per progress call (0: all) */
    double timeout_s;   /* deadline of each collective stamped with thread_ranks_stamp */
    int no_abort;       /* 1: a failing rank does not abort the others (they time out) */
} thread_ranks_opts;

/* Runs one rank; returns 0 or a coll_status. */
typedef int (*thread_rank_fn)(coll__algo_ctx *c, void *arg);

/* Runs fn on n ranks at once; status[r] gets rank r's return (may be NULL).
 * A rank that fails aborts the transport (as the backend does), so peers
 * blocked on it fail too instead of hanging (unless o->no_abort). Returns 0 when every rank
 * returned 0, else the first failing rank's status. */
int thread_ranks_run(int n, const thread_ranks_opts *o, thread_rank_fn fn, void *arg, int *status);

/* Prepare c for the next collective call: signature (seq incremented) and deadline. */
void thread_ranks_stamp(coll__algo_ctx *c, coll__kind kind, size_t count, coll_dtype dt, coll_op op,
                        int root);

#endif
