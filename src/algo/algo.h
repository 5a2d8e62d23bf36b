/* Collective algorithms over the transport vtable (Gloo style: one file per
 * <collective>_<algorithm>). Each is written as blocking code: it posts
 * transfers and drives transport progress until they finish or the deadline
 * passes. The native backend runs them on the caller's thread or on the
 * communicator's progress thread. */
#ifndef COLL_ALGO_H
#define COLL_ALGO_H

#include <stddef.h>
#include <string.h>

#include "coll.h"
#include "core/sig.h"
#include "transport/transport.h"

#define COLL_SCRATCH_SLOTS 4

/* Reusable temporary buffers, grown on demand, freed with the communicator. */
typedef struct coll__scratch {
    void *ptr[COLL_SCRATCH_SLOTS];
    size_t cap[COLL_SCRATCH_SLOTS];
} coll__scratch;

typedef struct coll__algo_ctx {
    coll__transport *tp;
    int rank, size;
    coll__sig sig;   /* stamped on every transfer this collective posts */
    double deadline; /* coll__now_s() time after which waits fail with ETIMEDOUT */
    coll__scratch *scratch;
    size_t chunk_bytes; /* pipelining granularity for large messages; 0: 1 MiB */
    double timeout_s;   /* the timeout behind deadline, for messages only; 0: unknown */
    const struct coll__algo_limits *limits; /* auto's crossovers; NULL: the defaults */
} coll__algo_ctx;

#define COLL_ALGO_DEFAULT_CHUNK ((size_t)1 << 20)

/* c->chunk_bytes rounded down to whole elements of esz bytes (at least one). */
size_t coll__chunk_elems(const coll__algo_ctx *c, size_t esz);

/* Scratch slot (0..COLL_SCRATCH_SLOTS-1) of at least bytes, 64-byte aligned;
 * NULL if out of memory. Contents are not kept when the slot grows. Slot use:
 * 0 = receive staging (p2p helpers), 1..3 = the algorithm's own. */
void *coll__scratch_get(coll__algo_ctx *c, int slot, size_t bytes);
void coll__scratch_free(coll__scratch *s);

/* ---- point-to-point helpers (p2p.c) ---- */
/* Fill a transfer for this collective (status COLL_EAGAIN, done 0). */
void coll__xfer_init(coll__algo_ctx *c, coll__xfer *x, coll__xfer_kind kind, int peer,
                     const void *buf, size_t len);
/* Post n transfers (zero-length ones too: they carry the signature). */
int coll__p2p_post(coll__algo_ctx *c, coll__xfer *xs, int n);
/* Drive progress until all n posted transfers are done; error/timeout otherwise. */
int coll__p2p_wait(coll__algo_ctx *c, coll__xfer *xs, int n);
/* One round of waiting on xs[0..n) (posted or merely initialized): the first
 * failed one's status, else progress up to the next second or the deadline.
 * COLL_OK to look again; an error ends the collective (the transport aborted). */
int coll__p2p_progress(coll__algo_ctx *c, coll__xfer *xs, int n);
int coll__p2p_send(coll__algo_ctx *c, int peer, const void *buf, size_t len);
int coll__p2p_recv(coll__algo_ctx *c, int peer, void *buf, size_t len);
/* Receive x (kind, buffer, length and signature set; its peer not) from
 * whichever peer's point-to-point message announces itself first (the
 * transport's probe_any); *from = that peer. COLL_ENOTSUP: the transport has none. */
int coll__p2p_recv_any(coll__algo_ctx *c, coll__xfer *x, int *from);
int coll__p2p_sendrecv(coll__algo_ctx *c, int to, const void *sbuf, size_t slen, int from,
                       void *rbuf, size_t rlen);
/* Send slen bytes to `to` while receiving rlen bytes from `from` into tmp; as the
 * bytes arrive, out = in op tmp is computed chunk by chunk, so the reduction of one
 * chunk overlaps the transfer of the next. out may equal in. rlen must be a
 * multiple of the dtype size. */
int coll__p2p_sendrecv_reduce(coll__algo_ctx *c, int to, const void *sbuf, size_t slen, int from,
                              void *tmp, const void *in, void *out, size_t rlen, coll_dtype dt,
                              coll_op op);
/* The same over element counts, split into messages of at most chunk_bytes so
 * scratch stays one chunk (staged in scratch slot 0): send scnt elements of sbuf
 * to `to` while receiving rcnt elements from `from`, out = in op received.
 * to/from < 0: that direction is unused. Peers must pass matching counts; a
 * zero count still sends one zero-length message (it carries the signature). */
int coll__p2p_exchange_reduce(coll__algo_ctx *c, int to, const void *sbuf, size_t scnt, int from,
                              const void *in, void *out, size_t rcnt, coll_dtype dt, coll_op op);

/* ---- block ranges (blocks.c) ---- */
/* Split count elements into size blocks as evenly as possible: block i starts at
 * element *off and has *cnt elements (the first count % size blocks get one more). */
void coll__block_range(size_t count, int size, int i, size_t *off, size_t *cnt);
/* The window of blocks [first, last) (first < last) of that split, as one range. */
void coll__blocks_span(size_t count, int size, int first, int last, size_t *off, size_t *cnt);
/* Chunk k (of ce elements, see coll__chunk_range) of block i of that split, as an
 * element range of the whole vector; *cnt is 0 past the block's end. */
void coll__block_chunk(size_t count, int size, int i, size_t ce, size_t k, size_t *off,
                       size_t *cnt);

/* ---- non-power-of-two fold (fold.c) ----
 * Recursive doubling/halving run on p = coll__pow2_floor(n) ranks; the first
 * 2*rem (rem = n - p) ranks pair up first (MPICH's scheme): even ones fold
 * their vector into the odd neighbour and sit out, then get the result back. */
int coll__pow2_floor(int n);
/* Real rank of participant nr (0..p-1). */
int coll__fold_real_rank(int nr, int rem);
/* Fold-in: rbuf = sbuf, reduced with the even neighbour's sbuf on odd ranks
 * below 2*rem. *nr: this rank's participant number, or -1 if it sits out. */
int coll__fold_in(coll__algo_ctx *c, int rem, const void *sbuf, void *rbuf, size_t count,
                  coll_dtype dt, coll_op op, int *nr);
/* Fold-out: odd ranks below 2*rem send the bytes of rbuf back to the even ones. */
int coll__fold_out(coll__algo_ctx *c, int rem, void *rbuf, size_t bytes);

/* Element i of buf (NULL stays NULL: empty buffers may be passed as NULL). */
static inline char *coll__elem(const void *buf, size_t i, size_t esz)
{
    return buf ? (char *)buf + i * esz : NULL;
}
static inline int coll__mod(int a, int n) { return ((a % n) + n) % n; }
/* memcpy that tolerates empty or identical buffers (in-place calls). */
static inline void coll__copy(void *dst, const void *src, size_t bytes)
{
    if (bytes && dst != src) memcpy(dst, src, bytes);
}
/* A world of one: the result is the input. Returns 1 when it did the call. */
static inline int coll__alone(const coll__algo_ctx *c, void *rbuf, const void *sbuf, size_t bytes)
{
    if (c->size != 1) return 0;
    coll__copy(rbuf, sbuf, bytes);
    return 1;
}
static inline size_t coll__div_up(size_t a, size_t b) { return (a + b - 1) / b; }
/* Chunk k (of ce elements) of a block of cnt elements: offset and length inside it. */
static inline void coll__chunk_range(size_t cnt, size_t ce, size_t k, size_t *off, size_t *len)
{
    size_t o = k * ce;
    *off = o < cnt ? o : cnt;
    *len = o < cnt ? (cnt - o < ce ? cnt - o : ce) : 0;
}

/* ---- algorithms ----
 * Same argument meaning as the coll.h call; counts in elements; op is never
 * COLL_AVG here (the backend reduces avg as sum and divides afterwards). */
int coll__allreduce_ring(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                         coll_dtype dt, coll_op op); /* 2 ranks: coll__allreduce_pair */
int coll__allreduce_pair(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                         coll_dtype dt, coll_op op); /* 2 ranks only: the ring, pipelined */
int coll__allreduce_rhd(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                        coll_dtype dt, coll_op op); /* Rabenseifner: halving RS + doubling AG */
int coll__allreduce_direct(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                           coll_dtype dt, coll_op op); /* one-shot: every rank reduces all */
int coll__allreduce_rd(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count, coll_dtype dt,
                       coll_op op); /* recursive doubling, small messages */
int coll__allgather_ring(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t sendcount,
                         coll_dtype dt);
int coll__allgather_rd(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t sendcount,
                       coll_dtype dt);
int coll__reducescatter_ring(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t recvcount,
                             coll_dtype dt, coll_op op);
int coll__broadcast_tree(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                         coll_dtype dt, int root); /* binomial tree */
int coll__broadcast_ring(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                         coll_dtype dt, int root); /* pipelined chain, large messages */
int coll__reduce_tree(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count, coll_dtype dt,
                      coll_op op, int root); /* binomial tree */
int coll__alltoall_pairwise(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                            coll_dtype dt);
int coll__barrier_dissemination(coll__algo_ctx *c);

/* ---- selection (select.c) ---- */
typedef enum coll__algo_id {
    COLL_ALGO_AUTO = 0,
    COLL_ALGO_RING,
    COLL_ALGO_RHD,
    COLL_ALGO_RD,
    COLL_ALGO_TREE,
    COLL_ALGO_PAIRWISE,
    COLL_ALGO_DISSEMINATION,
    COLL_ALGO_DIRECT,
    COLL_ALGO_COUNT
} coll__algo_id;

const char *coll__algo_name(coll__algo_id id);
/* COLL_EINVAL for an unknown name. */
int coll__algo_parse(const char *name, coll__algo_id *out);
/* Does collective `kind` have algorithm `id`? (AUTO: always). */
int coll__algo_exists(coll__kind kind, coll__algo_id id);
/* Names of the algorithms of `kind`, comma separated, for error messages. */
const char *coll__algo_list(coll__kind kind);
/* The tuning table's crossovers: from each size on (whole-vector bytes), the
 * larger messages' algorithm. Measured over TCP loopback (bench/algo_crossover.sh,
 * docs/PERFORMANCE.md); a backend may read its own (the tcp backend's
 * COLL_TCP_*_MIN variables, collbench tune). */
typedef enum {
    COLL__CROSS_PAIR_RING,      /* all-reduce of 2 ranks: one exchange (rd), then the pair */
    COLL__CROSS_ALLREDUCE_RHD,  /* all-reduce: recursive doubling, then Rabenseifner */
    COLL__CROSS_ALLREDUCE_RING, /* all-reduce: Rabenseifner, then the ring */
    COLL__CROSS_ALLGATHER_RING, /* all-gather of a power-of-two world: rd, then the ring */
    COLL__CROSS_BROADCAST_RING, /* broadcast: binomial tree, then the pipelined chain */
    COLL__CROSS_COUNT
} coll__crossover;
typedef struct coll__algo_limits {
    size_t from[COLL__CROSS_COUNT];
} coll__algo_limits;
#define COLL__CROSS_PAIR_RING_DEFAULT ((size_t)4 << 10)
#define COLL__CROSS_ALLREDUCE_RHD_DEFAULT ((size_t)32 << 10)
#define COLL__CROSS_ALLREDUCE_RING_DEFAULT ((size_t)1 << 20)
#define COLL__CROSS_ALLGATHER_RING_DEFAULT ((size_t)64 << 10)
#define COLL__CROSS_BROADCAST_RING_DEFAULT ((size_t)16 << 20)
extern const coll__algo_limits coll__algo_limits_default;
/* The tuning table: the algorithm for this collective, message size in bytes
 * (the whole vector: count * dtype size; for allgather/reducescatter/alltoall the
 * total across ranks) and world size, at the crossovers lim (NULL: the
 * defaults). requested != AUTO and existing wins. */
coll__algo_id coll__algo_select(coll__kind kind, coll__algo_id requested, size_t bytes, int world,
                                const coll__algo_limits *lim);
/* The bytes coll__algo_select is keyed by for a call of kind with this count. */
size_t coll__algo_bytes(coll__kind kind, size_t count, coll_dtype dt, int world);
/* Run collective `kind` with algorithm `id` (not AUTO). */
int coll__algo_run(coll__algo_ctx *c, coll__algo_id id, coll__kind kind, const void *sbuf,
                   void *rbuf, size_t count, coll_dtype dt, coll_op op, int root);

#endif
