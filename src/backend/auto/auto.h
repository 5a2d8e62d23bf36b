/* The auto backend (README.md "Backends"): shm between the ranks of one host,
 * tcp between hosts, all-reduce hierarchical (intra-host reduce-scatter,
 * inter-host all-reduce among the ranks with the same local index, intra-host
 * all-gather). Hosts are told apart by a host id every rank publishes. */
#ifndef COLL_BACKEND_AUTO_H
#define COLL_BACKEND_AUTO_H

#include <stddef.h>

#include "coll_tool.h"
#include "backend/backend.h"
#include "bootstrap/store.h"
#include "core/tuning.h"

#define COLL_HOST_ID_MAX 160

/* This rank's host id into buf: $COLL_HOST_ID when set, else the kernel's boot
 * id and the inode of this process's network namespace (so that network
 * namespaces count as hosts). $COLL_AUTO_RANKS_PER_HOST=K appends "/emuN" with
 * N = rank / K: K ranks per emulated host on one machine (tests, benchmarks);
 * a K that is not a count is COLL_EINVAL, err naming it (err may be NULL). */
int coll__host_id(int rank, char *buf, size_t len, coll__err *err);

/* Which ranks share a host. Hosts are numbered by their lowest rank, ranks
 * within a host ascending. */
typedef struct coll__host_plan {
    int size; /* ranks in the world */
    int nhosts;
    int host; /* this rank's host */
    int local_rank, local_size;
    int regular;   /* every host has local_size ranks */
    int *host_of;  /* [size]: host of each rank */
    int *local_of; /* [size]: index of each rank on its host */
    int *members;  /* [local_size]: ranks of this host, ascending */
    int *peers;    /* [nhosts]: rank with this local index on each host; NULL unless regular */
} coll__host_plan;

/* From every rank's host id (ids[r], size of them): the plan of rank `rank`. */
int coll__host_plan_build(const char *const *ids, int size, int rank, coll__host_plan *p);
void coll__host_plan_free(coll__host_plan *p);

/* Collective over the store: every rank publishes its id under prefix, rank 0
 * gathers them into one key and every rank reads that one key back. */
int coll__host_plan_exchange(coll__store *store, const char *prefix, int rank, int size,
                             coll__host_plan *p, coll__err *err);

/* coll_auto_intra_name (coll.h): the backend auto uses inside a host. */

extern const coll__backend_ops coll__backend_auto;

/* Its tuning variables (auto_knobs.c), row by row. */
enum { AUTO_KNOB_RANKS_PER_HOST, AUTO_KNOB_HIER, AUTO_KNOB_PIPE_BYTES };
extern const coll__tunable_table coll__auto_tunables;

#endif
