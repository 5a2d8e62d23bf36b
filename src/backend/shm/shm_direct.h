/* The direct and private all-reduce engines (shm_direct.c), and the state
 * they keep per communicator: the maps of every rank's buffers, the private
 * engine's scratch and the cache of buffer sets whose pages are mapped. */
#ifndef COLL_SHM_DIRECT_H
#define COLL_SHM_DIRECT_H

#include <stddef.h>
#include <stdint.h>

struct shm_op;
struct shm_state;

#define SHM_SUB_BYTES 16384 /* stays in L1 while it is reduced and written out */

typedef struct shm_direct_state {
    int ok;                   /* every rank mapped every heap: direct all-reduce possible */
    char **in_map, **out_map; /* [n] every rank's buffers as mapped here */
    char *sub;                /* SHM_SUB_BYTES: one reduced block on its way out */
} shm_direct_state;

typedef struct shm_private_state {
    char *scratch; /* this rank's copy-in area in its own heap */
    size_t scratch_bytes;
    unsigned char *mine; /* [mine_cap] chunks this rank reduced in a call */
    size_t mine_cap;
} shm_private_state;

/* A rank's buffers of a direct all-reduce whose pages this process's page
 * tables already map (while its heap_frees count has not moved). */
typedef struct shm_populated {
    uint64_t send, recv, bytes, frees;
    uint64_t used; /* LRU stamp (0: empty); not part of the key */
} shm_populated;

/* The page-table cache of buffer sets per rank: a DDP step all-reduces one
 * bucket after another, each at its own address (issue 18), so it holds many:
 * SHM_POP_SETS x SHM_POP_WAYS, set-associative by a hash of the buffer set,
 * the least recently used of a set's ways replaced (a rotation through fewer
 * than about SHM_POP_SETS buffer sets stays in it). */
#define SHM_POP_SETS 256
#define SHM_POP_WAYS 4

typedef struct shm_pages {
    shm_populated *set; /* [n][SHM_POP_SETS][SHM_POP_WAYS] */
    uint64_t clock;     /* LRU stamps */
} shm_pages;

/* After the arrival: 1 when every rank's buffers are in the shared heaps,
 * then mapped here in direct.in_map and direct.out_map. */
int coll__shm_direct_map(struct shm_op *o);
int coll__shm_direct_allreduce(struct shm_op *o); /* on those maps */
/* Before the arrival of an all-reduce that may take the private engine
 * (SHM_ENGINE_ARRIVE_COPY): copy the input into this rank's scratch when it
 * is large enough. */
void coll__shm_private_stage(struct shm_op *o);
/* The scratch given back to the heap, between calls (every peer returned
 * from the last that read it): a probe's, where no window needs it. */
void coll__shm_private_release(struct shm_state *st);
/* Copy-in to the heap, then direct; SHM_NO_ROOM (shm_op.h) when some rank's
 * heap had no room for its scratch (every rank sees it after the same step). */
int coll__shm_private_allreduce(struct shm_op *o);

#endif
