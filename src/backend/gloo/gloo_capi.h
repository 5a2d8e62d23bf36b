/* The C face of the gloo backend's C++ layer (the .cc files beside it): the only
 * header both languages include. Everything Gloo throws is caught on the C++
 * side and comes back as a coll_status and a message. */
#ifndef COLL_GLOO_CAPI_H
#define COLL_GLOO_CAPI_H

#include <stddef.h>
#include "coll.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "bootstrap/store.h" /* a C header: its inline functions keep C linkage */

typedef struct coll__gloo coll__gloo;

/* Gloo's allreduce algorithms, as --algo names them. */
typedef enum coll__gloo_algo {
  COLL_GLOO_DEFAULT = 0, /* gloo::allreduce, algorithm unspecified */
  COLL_GLOO_RING, /* gloo::allreduce, AllreduceOptions::RING */
  COLL_GLOO_BCUBE, /* gloo::allreduce, AllreduceOptions::BCUBE */
  COLL_GLOO_RING_CHUNKED, /* gloo::AllreduceRingChunked<T> */
  COLL_GLOO_HALVING_DOUBLING, /* gloo::AllreduceHalvingDoubling<T> */
} coll__gloo_algo;

/* The collectives the C++ layer runs; the C side maps coll__call onto them. */
typedef enum coll__gloo_kind {
  COLL_GLOO_ALLREDUCE = 0,
  COLL_GLOO_ALLGATHER,
  COLL_GLOO_REDUCESCATTER,
  COLL_GLOO_BROADCAST,
  COLL_GLOO_REDUCE,
  COLL_GLOO_ALLTOALL,
  COLL_GLOO_BARRIER,
  COLL_GLOO_SEND,
  COLL_GLOO_RECV,
  COLL_GLOO_SENDRECV,
} coll__gloo_kind;

typedef struct coll__gloo_call {
  coll__gloo_kind kind;
  const void *sendbuf;
  void *recvbuf;
  size_t count; /* elements: per rank block for allgather/alltoall/reducescatter */
  coll_dtype dt;
  coll_op op; /* sum, prod, min, max (avg is summed and divided by the C side) */
  int root;
  int peer_send, peer_recv;
  int recv_any; /* receive from whichever rank sends first (peer_recv unused) */
  int *recv_from; /* recv_any: the rank received from */
  int (*any_gone)(void *arg); /* recv_any: 1 once a peer's connection closed */
  void *any_arg;
  size_t recvcount;
  coll__gloo_algo algo;
  double timeout_s; /* what is left of the call's deadline */
} coll__gloo_call;

/* Meets every rank through store (keys under prefix) and connects Gloo's TCP
 * transport, listening on host. */
int coll__gloo_create(coll__store *store, const char *prefix, const char *host, int rank, int size,
                      double timeout_s, coll__gloo **out, coll__err *err);
/* 1 when Gloo has a type for dt (it has no bfloat16). */
int coll__gloo_has_dtype(coll_dtype dt);
int coll__gloo_run(coll__gloo *g, const coll__gloo_call *c, coll__err *err);
void coll__gloo_destroy(coll__gloo *g);

#ifdef __cplusplus
}
#endif
#endif
