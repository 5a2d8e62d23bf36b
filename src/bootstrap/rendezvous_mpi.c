/* Rendezvous through MPI (see rendezvous_mpi.h). */
#include "bootstrap/rendezvous_mpi.h"
#include "coll_tool.h"
#include "bootstrap/launch_env.h"
#include "bootstrap/listen_addr.h"
#include "bootstrap/runtime_mpi.h"
#include "core/token.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What rank 0 broadcasts: where its store listens, or why it does not. */
typedef struct store_address {
    int status; /* COLL_OK, else rank 0's failure */
    int port;
    char host[256];
    char token[COLL_TOKEN_HEX_LEN + 1];
    char err[256];
} store_address;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static coll__store *store; /* one per process, like rendezvous.c's cache */
static char token[COLL_TOKEN_HEX_LEN + 1];
static unsigned created;     /* communicators made on it: their key prefix */
static char store_host[256]; /* the address rank 0 published */

int coll__rendezvous_mpi_wanted(const char *method)
{
    coll_launch_env env;
    if (strcmp(method, "env://") != 0 || getenv("MASTER_PORT")) return 0;
    if (!coll_launch_env_detect(&env)) return 0;
    if (strcmp(env.source, "mpirun") == 0 || strcmp(env.source, "pmi") == 0) return 1;
    /* srun wires MPI up only through PMIx (or PMI-2) */
    return strcmp(env.source, "srun") == 0 && (getenv("PMIX_RANK") || getenv("PMI_FD"));
}

static void serve(const coll__rendezvous *rv, store_address *a)
{
    if (coll__token_is_valid(rv->token)) snprintf(a->token, sizeof a->token, "%s", rv->token);
    else if ((a->status = coll__token_generate(a->token))) {
        snprintf(a->err, sizeof a->err, "no random bytes for the job token");
        return;
    }
    /* Rank 0's store listens where its transports do: the same rule, routed to
     * MASTER_ADDR when the user names one, else found from the interfaces. */
    coll_listen_pick pick;
    const char *master = getenv("MASTER_ADDR");
    if ((a->status = coll__listen_addr_pick(master, rv->spans_hosts, &pick, a->err, sizeof a->err)))
        return;
    snprintf(a->host, sizeof a->host, "%s", pick.addr);
    coll__err e;
    coll__err_init(&e, NULL, 0);
    a->status = coll__tcp_store_create(a->host, 0, 1, -1, a->token, rv->timeout_s, &store, &e);
    if (a->status) coll__err_copy(&e, a->err, sizeof a->err);
    if (a->status == COLL_OK) a->port = coll__tcp_store_port(store);
}

/* Collective: rank 0 starts the store, everyone learns its address by MPI_Bcast
 * (also when rank 0 failed, so that no rank waits for a store that never comes). */
static int open_store(const coll__rendezvous *rv, coll__err *err)
{
    int level, mrank = rv->rank;
    int rc = coll__mpi_runtime_join(rv->rank, rv->world_size, &level, err->msg, sizeof err->msg);
    if (rc) return rc;
    store_address a;
    memset(&a, 0, sizeof a);
    if (mrank == 0) serve(rv, &a);
    coll__mpi_lock();
    int mrc = MPI_Bcast(&a, (int)sizeof a, MPI_BYTE, 0, MPI_COMM_WORLD);
    coll__mpi_unlock();
    if (mrc != MPI_SUCCESS) {
        coll__mpi_describe(mrc, "MPI_Bcast of the store's address", err->msg, sizeof err->msg);
        coll__store_destroy(store);
        store = NULL;
        return COLL_EPEER;
    }
    if (a.status) {
        if (mrank == 0) coll__err_set(err, 0, "cannot start the rendezvous store: %s", a.err);
        else coll__err_set(err, 0, "rank 0 could not start the rendezvous store: %s", a.err);
        return a.status;
    }
    if (mrank != 0) {
        rc = coll__tcp_store_create(a.host, a.port, 0, -1, a.token, rv->timeout_s, &store, err);
        if (rc) {
            coll__err_prefix(err, "cannot reach rank 0's rendezvous store at %s:%d", a.host,
                             a.port);
            return rc;
        }
    }
    snprintf(token, sizeof token, "%s", a.token);
    snprintf(store_host, sizeof store_host, "%s", a.host);
    return COLL_OK;
}

/* Every rank listens on the address that routes to the store rank 0 published. */
static int pick_listen(coll__rendezvous *rv, coll__err *err)
{
    coll_listen_pick pick;
    char why[400];
    snprintf(rv->store_host, sizeof rv->store_host, "%s", store_host);
    int rc = coll__listen_addr_pick(store_host, rv->spans_hosts, &pick, why, sizeof why);
    if (rc) coll__err_set(err, 0, "no address for the other ranks to reach: %s", why);
    else snprintf(rv->host, sizeof rv->host, "%s", pick.addr);
    return rc;
}

int coll__rendezvous_mpi(coll__rendezvous *rv, coll__err *err)
{
    int rc = COLL_OK;
    pthread_mutex_lock(&lock);
    if (!store) rc = open_store(rv, err);
    if (rc == COLL_OK) {
        rv->store = store;
        snprintf(rv->prefix, sizeof rv->prefix, "m%u/", created++);
        snprintf(rv->token, sizeof rv->token, "%s", token);
        rc = pick_listen(rv, err);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
