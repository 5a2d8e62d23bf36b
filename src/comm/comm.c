/* Communicator life cycle and the calls of include/coll.h: validate the
 * arguments, stamp a signature, and run the call in order on the backend. */
#include "comm/comm.h"
#include "backend/auto/auto.h"
#include "bootstrap/rendezvous.h"
#include "core/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char create_error[COLL__ERR_MSG];

const char *coll_last_create_error(void) { return create_error; }

void coll_config_init(coll_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->rank = -1;
    cfg->world_size = -1;
    cfg->timeout_s = 300.0;
}

static int set_error(coll_comm *comm, int status, int failed_rank, const char *fmt, ...)
{
    char msg[COLL__ERR_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    coll__err_blame(&comm->err, status, failed_rank, "%s", msg);
    return status;
}

/* Rank 0 usually hosts the store, which closes with its last communicator or
 * its process: a slower peer may still be reading its last set-up keys when rank 0 has
 * finished. Every rank says when it is done with them (also after a failed
 * set-up), and rank 0 returns only once all have, so a rank 0 that fails or
 * exits right after create cannot leave a peer mid-set-up facing a closed
 * store. */
static int wait_for_set_up(coll__store *store, const char *prefix, int rank, int size, int ok,
                           coll__err *err)
{
    enum { BATCH = 64 };
    char key[128], names[BATCH][128];
    if (!store || size < 2) return COLL_OK;
    if (!coll__store_key(key, sizeof key, NULL, prefix, "up/%d", rank))
        (void)coll__store_set(store, key, "1", 1); /* best effort: rank 0 may be gone */
    if (rank != 0 || !ok) return COLL_OK;          /* a failed rank 0: the others fail fast */
    for (int r = 1; r < size; r += BATCH) {
        const char *keys[BATCH];
        int n = 0;
        for (; n < BATCH && r + n < size; n++) {
            int rc = coll__store_key(names[n], sizeof names[n], err, prefix, "up/%d", r + n);
            if (rc) return rc;
            keys[n] = names[n];
        }
        int rc = coll__store_wait(store, keys, n);
        if (rc) {
            char missing[128] = "?";
            int many = 0;
            if (!coll__store_key(key, sizeof key, NULL, prefix, "up/"))
                many = coll__store_missing_ranks(store, key, size, missing, sizeof missing) > 1;
            return coll__err_set(err, rc, "set-up: %s %s never finished it: %s",
                                 many ? "ranks" : "rank", missing,
                                 store->err.msg[0] ? store->err.msg : coll_strerror(rc));
        }
    }
    return COLL_OK;
}

int coll_comm_create(const coll_config *cfg_in, coll_comm **out)
{
    coll_config cfg;
    if (cfg_in) cfg = *cfg_in;
    else coll_config_init(&cfg);
    if (!cfg.backend) cfg.backend = getenv("COLL_BACKEND");
    if (!cfg.backend || !*cfg.backend) cfg.backend = "tcp";
    if (cfg.timeout_s <= 0) cfg.timeout_s = 300.0;
    create_error[0] = '\0';
    *out = NULL;

    const coll__backend_ops *backend = coll__backend_find(cfg.backend, create_error,
                                                          sizeof create_error);
    if (!backend) return COLL_EUNAVAIL;

    coll__rendezvous rv;
    coll__err cerr;
    coll__err_init(&cerr, NULL, 0);
    int rc = coll__rendezvous_init(&cfg, &rv, &cerr);
    if (rc) {
        coll__err_copy(&cerr, create_error, sizeof create_error);
        coll__comm_note_blame(cerr.rank, rc);
        return rc;
    }

    coll_comm *comm = calloc(1, sizeof(*comm));
    if (!comm) {
        coll__rendezvous_release(rv.store);
        return COLL_ENOMEM;
    }
    comm->rank = rv.rank;
    comm->size = rv.world_size;
    comm->backend = backend;
    comm->timeout_s = cfg.timeout_s;
    coll__err_init(&comm->err, NULL, 0);
    comm->store = rv.store;
    snprintf(comm->store_prefix, sizeof comm->store_prefix, "%s", rv.prefix);
    pthread_mutex_init(&comm->lock, NULL);
    pthread_cond_init(&comm->changed, NULL);
    pthread_cond_init(&comm->work, NULL);

    rc = backend->init(&rv, &comm->state, &cerr);
    int settled = wait_for_set_up(rv.store, rv.prefix, rv.rank, rv.world_size, rc == COLL_OK,
                                  &cerr);
    if (rc == COLL_OK) rc = settled;
    if (rc == COLL_OK && cfg.algo && (rc = backend->set_algo(comm->state, cfg.algo, &cerr))) {
        coll__err_copy(&cerr, create_error, sizeof create_error);
        /* Every rank refuses alike, after every rank's set-up (wait_for_set_up):
         * destroy's closing barrier then keeps connections from closing under
         * a peer's last set-up bytes, as at any destroy. */
        coll_comm_destroy(comm);
        return rc;
    }
    if (rc) {
        coll__err_copy(&cerr, create_error, sizeof create_error);
        coll__comm_note_blame(cerr.rank, rc);
        if (comm->state) backend->fini(comm->state);
        coll__rendezvous_release(comm->store);
        pthread_mutex_destroy(&comm->lock);
        pthread_cond_destroy(&comm->changed);
        pthread_cond_destroy(&comm->work);
        free(comm);
        return rc;
    }
    *out = comm;
    return COLL_OK;
}

int coll_comm_destroy(coll_comm *comm)
{
    if (!comm) return COLL_EINVAL;
    coll__comm_stop_progress(comm);
    /* A closing barrier: no rank tears its connections down while a peer's last
     * bytes are still in flight (closing with unread data resets the stream). */
    int rc = comm->failed ? COLL_OK : coll_barrier(comm);
    comm->backend->fini(comm->state);
    coll__rendezvous_release(comm->store);
    pthread_mutex_destroy(&comm->lock);
    pthread_cond_destroy(&comm->changed);
    pthread_cond_destroy(&comm->work);
    free(comm);
    return rc;
}

int coll_comm_rank(const coll_comm *comm) { return comm ? comm->rank : -1; }
int coll_comm_size(const coll_comm *comm) { return comm ? comm->size : -1; }
const char *coll_comm_backend(const coll_comm *comm) { return comm ? comm->backend->name : ""; }
const char *coll_comm_errmsg(const coll_comm *comm) { return comm ? comm->err.msg : create_error; }
int coll_comm_failed_rank(const coll_comm *comm) { return comm ? comm->err.rank : -1; }

int coll_comm_host_count(coll_comm *comm)
{
    if (!comm) return COLL_EINVAL;
    int known = comm->backend->nhosts ? comm->backend->nhosts(comm->state) : 0;
    if (known > 0) return known;
    if (comm->size == 1) return 1;
    if (!comm->store) return COLL_ENOTSUP;
    coll__host_plan p;
    char prefix[96];
    coll__err err;
    coll__err_init(&err, NULL, 0);
    int rc = coll__store_key(prefix, sizeof prefix, NULL, comm->store_prefix, "nodes/");
    if (!rc) rc = coll__host_plan_exchange(comm->store, prefix, comm->rank, comm->size, &p, &err);
    if (rc) return rc;
    int n = p.nhosts;
    coll__host_plan_free(&p);
    return n;
}

int coll_comm_describe(const coll_comm *comm, char *buf, size_t len)
{
    if (!comm || !buf || !len) return COLL_EINVAL;
    if (!comm->backend->describe) return COLL_ENOTSUP;
    return comm->backend->describe(comm->state, buf, len);
}

int coll_comm_plan(const coll_comm *comm, char *buf, size_t len)
{
    if (!comm || !buf || !len) return COLL_EINVAL;
    if (!comm->backend->plan) return COLL_ENOTSUP;
    return comm->backend->plan(comm->state, buf, len);
}

int coll_comm_set_algo(coll_comm *comm, const char *algo)
{
    if (!comm || !algo) return COLL_EINVAL;
    coll__err e;
    coll__err_init(&e, NULL, 0);
    int rc = comm->backend->set_algo(comm->state, algo, &e);
    if (rc || e.msg[0]) coll__err_blame(&comm->err, rc, -1, "%s", e.msg);
    return rc;
}

void *coll_alloc(coll_comm *comm, size_t bytes)
{
    if (comm && comm->backend->alloc) return comm->backend->alloc(comm->state, bytes);
    return coll__alloc_aligned(bytes);
}

void coll_free(coll_comm *comm, void *ptr)
{
    if (comm && comm->backend->free) comm->backend->free(comm->state, ptr);
    else free(ptr);
}

/* ---- argument checks ---- */

static int check_dtype_op(coll_comm *comm, coll_dtype dt, int has_op, coll_op op)
{
    if (coll_dtype_size(dt) == 0)
        return set_error(comm, COLL_EINVAL, -1, "invalid dtype %d", (int)dt);
    if (has_op && coll_op_valid(dt, op) != COLL_OK)
        return set_error(comm, COLL_EINVAL, -1, "op %s is not defined for dtype %s",
                         coll_op_name(op), coll_dtype_name(dt));
    return COLL_OK;
}

static int check_rank(coll_comm *comm, const char *what, int r)
{
    if (r < 0 || r >= comm->size)
        return set_error(comm, COLL_EINVAL, -1, "%s %d is out of range (world size %d)", what, r,
                         comm->size);
    return COLL_OK;
}

static int check_bufs(coll_comm *comm, const void *s, const void *r, size_t count)
{
    if (count && (!s || !r))
        return set_error(comm, COLL_EINVAL, -1, "NULL buffer with count %zu", count);
    if (count > (SIZE_MAX / 8) / (size_t)comm->size)
        return set_error(comm, COLL_EINVAL, -1, "count %zu is too large", count);
    return COLL_OK;
}

static int validate(coll_comm *comm, coll__call *c)
{
    if (!comm) return COLL_EINVAL;
    if (c->kind == COLL_KIND_BROADCAST && !c->sendbuf) c->sendbuf = c->recvbuf; /* in-place */
    int has_op = c->kind == COLL_KIND_ALLREDUCE || c->kind == COLL_KIND_REDUCESCATTER ||
                 c->kind == COLL_KIND_REDUCE;
    int rc = c->kind == COLL_KIND_BARRIER ? COLL_OK : check_dtype_op(comm, c->dt, has_op, c->op);
    if (rc) return rc;
    switch (c->kind) {
    case COLL_KIND_BROADCAST: /* sendbuf is read at the root only */
        if ((rc = check_rank(comm, "root", c->root))) return rc;
        return check_bufs(comm, c->recvbuf, c->recvbuf, c->count);
    case COLL_KIND_REDUCE: /* recvbuf is written at the root only */
        if ((rc = check_rank(comm, "root", c->root))) return rc;
        return check_bufs(comm, c->sendbuf, comm->rank == c->root ? c->recvbuf : c->sendbuf,
                          c->count);
    case COLL_KIND_P2P:
        if (c->dest >= 0 && (rc = check_rank(comm, "destination rank", c->dest))) return rc;
        if (c->source >= 0 && (rc = check_rank(comm, "source rank", c->source))) return rc;
        if (c->dest == comm->rank || c->source == comm->rank)
            return set_error(comm, COLL_EINVAL, -1, "rank %d cannot send to or receive from itself",
                             comm->rank);
        if (c->dest >= 0 && (rc = check_bufs(comm, c->sendbuf, c->sendbuf, c->count))) return rc;
        if (coll__call_receives(c)) return check_bufs(comm, c->recvbuf, c->recvbuf, c->recvcount);
        return COLL_OK;
    case COLL_KIND_BARRIER: return COLL_OK;
    default: return check_bufs(comm, c->sendbuf, c->recvbuf, c->count);
    }
}

static void make_sig(coll_comm *comm, const coll__call *c, coll__sig *sig)
{
    memset(sig, 0, sizeof(*sig));
    sig->kind = (uint8_t)c->kind;
    sig->dtype = (uint8_t)c->dt;
    sig->op = (uint8_t)c->op;
    sig->root = c->root;
    sig->count = c->count;
    if (c->kind != COLL_KIND_P2P) sig->seq = ++comm->seq;
}

/* Blocking: wait for everything called before, then run on this thread. */
static int call_blocking(coll_comm *comm, coll__call *c)
{
    int rc = validate(comm, c);
    if (rc) return rc;
    coll__sig sig;
    pthread_mutex_lock(&comm->lock);
    make_sig(comm, c, &sig);
    while (comm->busy || comm->queue_head) pthread_cond_wait(&comm->changed, &comm->lock);
    comm->busy = 1;
    pthread_mutex_unlock(&comm->lock);

    rc = coll__comm_execute(comm, c, &sig);

    pthread_mutex_lock(&comm->lock);
    comm->busy = 0;
    pthread_cond_broadcast(&comm->changed);
    if (comm->queue_head) pthread_cond_signal(&comm->work); /* queued meanwhile */
    pthread_mutex_unlock(&comm->lock);
    return rc;
}

static int call_nonblocking(coll_comm *comm, coll__call *c, coll_request **out)
{
    if (!out) return COLL_EINVAL;
    *out = NULL;
    int rc = validate(comm, c);
    if (rc) return rc;
    coll_request *req = calloc(1, sizeof(*req));
    if (!req) return COLL_ENOMEM;
    req->comm = comm;
    req->call = *c;
    req->call.nonblocking = 1;
    pthread_mutex_lock(&comm->lock);
    make_sig(comm, c, &req->sig);
    pthread_mutex_unlock(&comm->lock);
    rc = coll__comm_enqueue(comm, req);
    if (rc) {
        free(req);
        return rc;
    }
    *out = req;
    return COLL_OK;
}

#define CALL(kind_, s_, r_, n_, dt_, op_, root_) \
    ((coll__call){.kind = (kind_),               \
                  .sendbuf = (s_),               \
                  .recvbuf = (r_),               \
                  .count = (n_),                 \
                  .dt = (dt_),                   \
                  .op = (op_),                   \
                  .root = (root_),               \
                  .dest = -1,                    \
                  .source = -1})

int coll_allreduce(coll_comm *comm, const void *s, void *r, size_t n, coll_dtype dt, coll_op op)
{
    coll__call c = CALL(COLL_KIND_ALLREDUCE, s, r, n, dt, op, 0);
    return call_blocking(comm, &c);
}

int coll_allgather(coll_comm *comm, const void *s, void *r, size_t n, coll_dtype dt)
{
    coll__call c = CALL(COLL_KIND_ALLGATHER, s, r, n, dt, COLL_SUM, 0);
    return call_blocking(comm, &c);
}

int coll_reducescatter(coll_comm *comm, const void *s, void *r, size_t n, coll_dtype dt, coll_op op)
{
    coll__call c = CALL(COLL_KIND_REDUCESCATTER, s, r, n, dt, op, 0);
    return call_blocking(comm, &c);
}

int coll_broadcast(coll_comm *comm, const void *s, void *r, size_t n, coll_dtype dt, int root)
{
    coll__call c = CALL(COLL_KIND_BROADCAST, s, r, n, dt, COLL_SUM, root);
    return call_blocking(comm, &c);
}

int coll_reduce(coll_comm *comm, const void *s, void *r, size_t n, coll_dtype dt, coll_op op,
                int root)
{
    coll__call c = CALL(COLL_KIND_REDUCE, s, r, n, dt, op, root);
    return call_blocking(comm, &c);
}

int coll_alltoall(coll_comm *comm, const void *s, void *r, size_t n, coll_dtype dt)
{
    coll__call c = CALL(COLL_KIND_ALLTOALL, s, r, n, dt, COLL_SUM, 0);
    return call_blocking(comm, &c);
}

int coll_barrier(coll_comm *comm)
{
    coll__call c = CALL(COLL_KIND_BARRIER, NULL, NULL, 0, COLL_UINT8, COLL_SUM, 0);
    return call_blocking(comm, &c);
}

int coll_sendrecv(coll_comm *comm, const void *sendbuf, size_t sendcount, int dest, void *recvbuf,
                  size_t recvcount, int source, coll_dtype dt)
{
    coll__call c = CALL(COLL_KIND_P2P, sendbuf, recvbuf, sendcount, dt, COLL_SUM, 0);
    c.dest = dest;
    c.source = source;
    c.recvcount = recvcount;
    return call_blocking(comm, &c);
}

int coll_send(coll_comm *comm, const void *buf, size_t count, coll_dtype dt, int peer)
{
    if (!comm) return COLL_EINVAL;
    if (peer < 0)
        return set_error(comm, COLL_EINVAL, -1, "destination rank %d is out of range", peer);
    return coll_sendrecv(comm, buf, count, peer, NULL, 0, -1, dt);
}

int coll_recv(coll_comm *comm, void *buf, size_t count, coll_dtype dt, int peer)
{
    if (!comm) return COLL_EINVAL;
    if (peer < 0) return set_error(comm, COLL_EINVAL, -1, "source rank %d is out of range", peer);
    return coll_sendrecv(comm, NULL, 0, -1, buf, count, peer, dt);
}

int coll_sendrecv_any(coll_comm *comm, const void *sendbuf, size_t sendcount, int dest,
                      void *recvbuf, size_t recvcount, coll_dtype dt, int *source)
{
    if (!comm) return COLL_EINVAL;
    if (!source) return set_error(comm, COLL_EINVAL, -1, "recv_any: source is NULL");
    *source = -1;
    if (comm->size < 2)
        return set_error(comm, COLL_EINVAL, -1,
                         "recv_any: no other rank to receive from (world size %d)", comm->size);
    coll__call c = CALL(COLL_KIND_P2P, sendbuf, recvbuf, sendcount, dt, COLL_SUM, 0);
    c.dest = dest;
    c.source = COLL__ANY_SOURCE;
    c.recvcount = recvcount;
    c.from = source;
    int rc = call_blocking(comm, &c);
    if (rc) *source = -1;
    return rc;
}

int coll_recv_any(coll_comm *comm, void *buf, size_t count, coll_dtype dt, int *source)
{
    return coll_sendrecv_any(comm, NULL, 0, -1, buf, count, dt, source);
}

int coll_iallreduce(coll_comm *comm, const void *s, void *r, size_t n, coll_dtype dt, coll_op op,
                    coll_request **req)
{
    coll__call c = CALL(COLL_KIND_ALLREDUCE, s, r, n, dt, op, 0);
    return call_nonblocking(comm, &c, req);
}

int coll_iallgather(coll_comm *comm, const void *s, void *r, size_t n, coll_dtype dt,
                    coll_request **req)
{
    coll__call c = CALL(COLL_KIND_ALLGATHER, s, r, n, dt, COLL_SUM, 0);
    return call_nonblocking(comm, &c, req);
}

int coll_ireducescatter(coll_comm *comm, const void *s, void *r, size_t n, coll_dtype dt,
                        coll_op op, coll_request **req)
{
    coll__call c = CALL(COLL_KIND_REDUCESCATTER, s, r, n, dt, op, 0);
    return call_nonblocking(comm, &c, req);
}

int coll_ibroadcast(coll_comm *comm, const void *s, void *r, size_t n, coll_dtype dt, int root,
                    coll_request **req)
{
    coll__call c = CALL(COLL_KIND_BROADCAST, s, r, n, dt, COLL_SUM, root);
    return call_nonblocking(comm, &c, req);
}
