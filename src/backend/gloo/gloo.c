/* The gloo backend: collbench's calls on Gloo's own collectives (libgloo, the
 * library torch.distributed's gloo backend links), through the C interface of
 * the thin C++ layer beside it (gloo_capi.h). Built only when CMake finds Gloo.
 *
 * What stays in C: the refusals (Gloo has no bfloat16 arithmetic; algorithm
 * names), avg (a sum divided once where the result lands, as coll.h defines
 * it), the world of one rank (Gloo's ring needs a peer), the fault point. */
#include "backend/gloo/gloo_backend.h"
#include "backend/gloo/gloo_capi.h"
#include "backend/gloo/gloo_peers.h"
#include "bootstrap/blame_chain.h"
#include "bootstrap/rendezvous.h"
#include "core/clock.h"
#include "core/env.h"
#include "core/fault.h"
#include "core/reduce.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gloo_state {
  coll__gloo *g; /* NULL in a world of one */
  coll__gloo_peers peers; /* whose socket an error names */
  int rank, size;
  const int *world_of; /* rank -> world rank (NULL: the group is the world) */
  int nworld;
  coll__store *store; /* the rendezvous store: who blamed whom */
  char prefix[96]; /* this communicator's keys in it */
  coll__gloo_algo algo;
  char algo_name[32];
} gloo_state;

static const struct {
  const char *name;
  coll__gloo_algo algo;
} algos[] = {
    {"auto", COLL_GLOO_DEFAULT},
    {"default", COLL_GLOO_DEFAULT},
    {"ring", COLL_GLOO_RING},
    {"ring_chunked", COLL_GLOO_RING_CHUNKED},
    {"halving_doubling", COLL_GLOO_HALVING_DOUBLING},
    {"bcube", COLL_GLOO_BCUBE},
};
#define GLOO_ALGO_LIST "auto (Gloo's default), ring, ring_chunked, halving_doubling, bcube"

static int gloo_init(const coll__rendezvous *rv, void **state, coll__err *err) {
  /* gloo_context.cc turns the check off for "0": anything but 0 or 1 is refused here. */
  uint64_t check;
  if (coll__tunable_read(&coll__gloo_tunables.rows[COLL__GLOO_KNOB_CHECK], 0, 0, &check, err))
    return COLL_EINVAL;
  gloo_state *st = calloc(1, sizeof *st);
  if (!st) return COLL_ENOMEM;
  st->rank = rv->rank;
  st->size = rv->world_size;
  st->world_of = rv->world_of;
  st->nworld = rv->nworld;
  st->store = rv->store;
  snprintf(st->prefix, sizeof st->prefix, "%s", rv->prefix);
  strcpy(st->algo_name, "auto");
  if (st->size > 1) {
    /* Gloo writes to its sockets without MSG_NOSIGNAL: a peer that died
     * would kill this rank with SIGPIPE instead of an error naming it.
     * Python (so torch) ignores SIGPIPE; do as it does, unless the
     * program chose a handler of its own. */
    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
    coll__fault_hit(COLL_FAULT_CONNECT, 0);
    int rc = coll__gloo_create(rv->store, rv->prefix, rv->host, rv->rank, rv->world_size,
                               rv->timeout_s, &st->g, err);
    if (!rc)
      rc = coll__gloo_peers_exchange(rv->store, rv->prefix, rv->rank, rv->world_size, &st->peers,
                                     err);
    if (rc) {
      coll__gloo_destroy(st->g);
      coll__gloo_peers_free(&st->peers);
      free(st);
      return rc;
    }
  }
  *state = st;
  return COLL_OK;
}

static void gloo_fini(void *state) {
  gloo_state *st = state;
  if (!st) return;
  coll__gloo_destroy(st->g);
  coll__gloo_peers_free(&st->peers);
  free(st);
}

static int gloo_set_algo(void *state, const char *algo, coll__err *err) {
  gloo_state *st = state;
  for (size_t i = 0; algo && i < sizeof algos / sizeof algos[0]; i++)
    if (strcmp(algo, algos[i].name) == 0) {
      st->algo = algos[i].algo;
      snprintf(st->algo_name, sizeof st->algo_name, "%s", algo);
      return COLL_OK;
    }
  return coll__err_set(err, COLL_ENOTSUP,
                       "the gloo backend runs Gloo's allreduce algorithms (" GLOO_ALGO_LIST
                       "), not '%s'",
                       algo ? algo : "(null)");
}

/* Gloo has no abort: peers learn of a failure when the connection closes. */
static void gloo_abort(void *state, int status, int failed_rank) {
  (void)state;
  (void)status;
  (void)failed_rank;
}

static int reduces(coll__kind k) {
  return k == COLL_KIND_ALLREDUCE || k == COLL_KIND_REDUCESCATTER || k == COLL_KIND_REDUCE;
}

/* A world of one: every collective is a copy (p2p with oneself is refused earlier). */
static void run_alone(const coll__call *c) {
  size_t bytes = c->count * coll_dtype_size(c->dt);
  if (c->kind != COLL_KIND_BARRIER && c->kind != COLL_KIND_P2P && bytes && c->sendbuf != c->recvbuf)
    memmove(c->recvbuf, c->sendbuf, bytes);
}

static coll__gloo_kind gloo_kind(const coll__call *c) {
  switch (c->kind) {
    case COLL_KIND_ALLREDUCE: return COLL_GLOO_ALLREDUCE;
    case COLL_KIND_ALLGATHER: return COLL_GLOO_ALLGATHER;
    case COLL_KIND_REDUCESCATTER: return COLL_GLOO_REDUCESCATTER;
    case COLL_KIND_BROADCAST: return COLL_GLOO_BROADCAST;
    case COLL_KIND_REDUCE: return COLL_GLOO_REDUCE;
    case COLL_KIND_ALLTOALL: return COLL_GLOO_ALLTOALL;
    case COLL_KIND_BARRIER: return COLL_GLOO_BARRIER;
    default:
      if (c->dest >= 0 && coll__call_receives(c)) return COLL_GLOO_SENDRECV;
      return c->dest >= 0 ? COLL_GLOO_SEND : COLL_GLOO_RECV;
  }
}

/* Refusals every rank reaches alike, before anything is sent. */
static int refuse(const gloo_state *st, const coll__call *c, coll__err *err) {
  if (c->kind != COLL_KIND_BARRIER && reduces(c->kind) && !coll__gloo_has_dtype(c->dt)) {
    return coll__err_set(err, COLL_ENOTSUP,
                         "the gloo backend cannot %s %s with %s: Gloo has no %s arithmetic (use "
                         "float16 or float32, or another backend)",
                         coll__kind_name(c->kind), coll_dtype_name(c->dt), coll_op_name(c->op),
                         coll_dtype_name(c->dt));
  }
  if (c->source == COLL__ANY_SOURCE && c->recvcount == 0)
    return coll__err_set(err, COLL_ENOTSUP,
                         "the gloo backend cannot receive 0 elements from any source: Gloo "
                         "moves no message for 0 elements, so none would say who sent");
  /* barrier and p2p have no algorithm to choose (the harness's barriers run under any --algo) */
  if (st->algo != COLL_GLOO_DEFAULT && c->kind != COLL_KIND_ALLREDUCE && c->kind != COLL_KIND_P2P &&
      c->kind != COLL_KIND_BARRIER) {
    return coll__err_set(
        err, COLL_ENOTSUP,
        "the gloo backend has algorithm choices for allreduce only; %s runs Gloo's "
        "one algorithm (use --algo auto, not '%s')",
        coll__kind_name(c->kind), st->algo_name);
  }
  return COLL_OK;
}

#define GONE_WAIT_S 0.5

/* Gloo names a lost peer by address: say which rank that is. A timeout names
 * nobody (Gloo does not say whom it waited for). */
static void blame(const gloo_state *st, int rc, coll__err *err) {
  if (rc != COLL_EPEER) return;
  char gloo_says[512], gone[128];
  int *dead = malloc((size_t)st->size * sizeof *dead);
  if (!dead) return;
  int ngone = coll__gloo_peers_gone(&st->peers, dead, gone, sizeof gone);
  int r = coll__gloo_peers_blame(&st->peers, st->rank, err->msg), r_gone = 0;
  /* An address Gloo names that no rank published, before the dead rank's
   * other sockets show closed here: they do within moments (its kernel
   * closed them all at once), so look again for a while rather than name nobody. */
  for (double until = coll__now_s() + GONE_WAIT_S; r < 0 && ngone == 0 && coll__now_s() < until;) {
    poll(NULL, 0, 10);
    ngone = coll__gloo_peers_gone(&st->peers, dead, gone, sizeof gone);
  }
  for (int i = 0; i < ngone; i++) r_gone |= dead[i] == r;
  coll__err map; /* the group's: messages and blame name world ranks */
  coll__err_init(&map, st->world_of, st->nworld);
  if (st->world_of) { /* the list of closed ones, in world ranks */
    size_t used = 0;
    gone[0] = '\0';
    for (int i = 0; i < ngone && used < sizeof gone; i++) {
      int k = snprintf(gone + used, sizeof gone - used, "%s%d", i ? ", " : "",
                       coll__err_world(&map, dead[i]));
      if (k > 0) used += (size_t)k;
    }
  }
  coll__err_copy(err, gloo_says, sizeof gloo_says);
  /* Gloo has no abort: a rank that failed because another died just exits,
   * and its closed connection may reach this rank first. A rank whose every
   * connection is closed is the better witness than the one Gloo names, and
   * the blame chain in the store the best: the rank that stopped first said
   * there whom it lost before it exited. */
  int named = r >= 0 && (ngone == 0 || r_gone);
  int culprit = named ? r : ngone > 0 ? dead[0] : -1;
  if (named) {
    err->rank = coll__err_world(&map, r);
    if (ngone > 1)
      coll__err_set(err, 0,
                    "lost the connection to rank %d (process died?); connections to ranks %s "
                    "are closed by now: %s",
                    err->rank, gone, gloo_says);
    else
      coll__err_set(err, 0, "lost the connection to rank %d (process died?): %s", err->rank,
                    gloo_says);
  } else if (ngone > 0) {
    err->rank = coll__err_world(&map, dead[0]);
    coll__err_set(err, 0, "connections to rank%s %s are closed (process died?): %s",
                  ngone > 1 ? "s" : "", gone, gloo_says);
  }
  int root = coll__blame_chain(st->store, st->prefix, "g", st->rank, st->size, culprit, 0);
  if (root != culprit) {
    coll__err_append(err, "; rank %d had stopped because rank %d failed",
                     coll__err_world(&map, culprit), coll__err_world(&map, root));
    err->rank = coll__err_world(&map, root);
  }
  free(dead);
}

/* recv_any's watch (gloo_colls.cc): 1 once every socket to some peer closed. */
static int any_peer_gone(void *arg) {
  const gloo_state *st = arg;
  int *dead = malloc((size_t)st->size * sizeof *dead);
  char list[16];
  int n = dead ? coll__gloo_peers_gone(&st->peers, dead, list, sizeof list) : 0;
  free(dead);
  return n > 0;
}

static int gloo_run(void *state, const coll__call *c, const coll__sig *sig, double deadline,
                    coll__err *err) {
  gloo_state *st = state;
  (void)sig;
  int rc = refuse(st, c, err);
  if (rc) return rc;
  coll__fault_hit(COLL_FAULT_COLLECTIVE, c->count * coll_dtype_size(c->dt));
  if (!st->g) {
    run_alone(c);
    return COLL_OK;
  }
  coll__gloo_call gc = {
      .kind = gloo_kind(c),
      .sendbuf = c->sendbuf,
      .recvbuf = c->recvbuf,
      .count = c->count,
      /* bfloat16 only moves here (reductions were refused): as 2-byte elements */
      .dt = c->dt == COLL_BFLOAT16 ? COLL_FLOAT16 : c->dt,
      .op = c->op == COLL_AVG ? COLL_SUM : c->op,
      .root = c->root,
      .peer_send = c->dest,
      .peer_recv = c->source,
      .recv_any = c->source == COLL__ANY_SOURCE,
      .recv_from = c->from,
      .any_gone = any_peer_gone,
      .any_arg = st,
      .recvcount = c->recvcount,
      .algo = st->algo,
      .timeout_s = deadline - coll__now_s(),
  };
  rc = coll__gloo_run(st->g, &gc, err);
  if (rc) {
    blame(st, rc, err);
    return rc;
  }
  if (c->op == COLL_AVG && reduces(c->kind) && (c->kind != COLL_KIND_REDUCE || st->rank == c->root))
    coll__scale_div(c->recvbuf, c->count, c->dt, st->size);
  return COLL_OK;
}

const coll__backend_ops coll__backend_gloo = {
    .size = sizeof(coll__backend_ops),
    .name = "gloo",
    .init = gloo_init,
    .run = gloo_run,
    .set_algo = gloo_set_algo,
    .abort = gloo_abort,
    .fini = gloo_fini,
};
