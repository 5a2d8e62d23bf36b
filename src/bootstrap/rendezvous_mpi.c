/* Rendezvous through MPI (see rendezvous_mpi.h). */
#include "bootstrap/rendezvous_mpi.h"
#include "bootstrap/launch_env.h"
#include "core/errbuf.h"
#include "core/runtime_mpi.h"
#include "core/token.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What rank 0 broadcasts: where its store listens, or why it does not. */
typedef struct store_address {
    int status;                          /* COLL_OK, else rank 0's failure */
    int port;
    char host[256];
    char token[COLL_TOKEN_HEX_LEN + 1];
    char err[256];
} store_address;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static coll_store *store;        /* one per process, like rendezvous.c's cache */
static char token[COLL_TOKEN_HEX_LEN + 1];
static unsigned created;         /* communicators made on it: their key prefix */

int coll_rendezvous_mpi_wanted(const char *method)
{
    coll_launch_env env;
    if (strcmp(method, "env://") != 0 || getenv("MASTER_PORT")) return 0;
    if (!coll_launch_env_detect(&env)) return 0;
    if (strcmp(env.source, "mpirun") == 0 || strcmp(env.source, "pmi") == 0) return 1;
    /* srun wires MPI up only through PMIx (or PMI-2) */
    return strcmp(env.source, "srun") == 0 && (getenv("PMIX_RANK") || getenv("PMI_FD"));
}

/* The first address of an interface that is up and not loopback: what ranks on
 * other hosts can reach (the hostname often maps to 127.0.1.1 on Debian). */
static int outside_address(char *host, size_t len)
{
    struct ifaddrs *all, *i;
    int found = 0;
    if (getifaddrs(&all) != 0) return 0;
    for (i = all; i && !found; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK))
            found = inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, host,
                              (socklen_t)len) != NULL;
    freeifaddrs(all);
    return found;
}

/* Where rank 0's store listens: the address the user named (COLL_LISTEN_ADDR,
 * MASTER_ADDR), loopback when every rank is on this host, else this host's address. */
static void store_host(char *host, size_t len)
{
    const char *named = getenv("COLL_LISTEN_ADDR");
    if (!named || !*named) named = getenv("MASTER_ADDR");
    coll_launch_env env;
    coll_launch_env_detect(&env);
    int one_host = env.local_world_size <= 0 || env.local_world_size >= env.world_size;
    if (named && *named) snprintf(host, len, "%s", named);
    else if (one_host || !outside_address(host, len)) snprintf(host, len, "127.0.0.1");
}

static void serve(const coll_rendezvous *rv, store_address *a)
{
    if (coll_token_is_valid(rv->token)) snprintf(a->token, sizeof a->token, "%s", rv->token);
    else if ((a->status = coll_token_generate(a->token))) {
        snprintf(a->err, sizeof a->err, "no random bytes for the job token");
        return;
    }
    store_host(a->host, sizeof a->host);
    a->status = coll_tcp_store_create(a->host, 0, 1, -1, a->token, rv->timeout_s, &store, a->err,
                                      sizeof a->err);
    if (a->status == COLL_OK) a->port = coll_tcp_store_port(store);
}

/* Collective: rank 0 starts the store, everyone learns its address by MPI_Bcast
 * (also when rank 0 failed, so that no rank waits for a store that never comes). */
static int open_store(const coll_rendezvous *rv, char *err, size_t errlen)
{
    int level, mrank = -1, msize = -1;
    int rc = coll_mpi_runtime_init(&level, err, errlen);
    if (rc) return rc;
    coll_mpi_lock();
    MPI_Comm_rank(MPI_COMM_WORLD, &mrank);
    MPI_Comm_size(MPI_COMM_WORLD, &msize);
    coll_mpi_unlock();
    if (mrank != rv->rank || msize != rv->world_size) {
        coll_set_err(err, errlen,
                     "rank %d of %d from the config or environment does not match MPI_COMM_WORLD "
                     "(rank %d of %d)", rv->rank, rv->world_size, mrank, msize);
        return COLL_EINVAL;
    }
    store_address a;
    memset(&a, 0, sizeof a);
    if (mrank == 0) serve(rv, &a);
    coll_mpi_lock();
    int mrc = MPI_Bcast(&a, (int)sizeof a, MPI_BYTE, 0, MPI_COMM_WORLD);
    coll_mpi_unlock();
    if (mrc != MPI_SUCCESS) {
        coll_mpi_describe(mrc, "MPI_Bcast of the store's address", err, errlen);
        coll_store_destroy(store);
        store = NULL;
        return COLL_EPEER;
    }
    if (a.status) {
        if (mrank == 0) coll_set_err(err, errlen, "cannot start the rendezvous store: %s", a.err);
        else coll_set_err(err, errlen, "rank 0 could not start the rendezvous store: %s", a.err);
        return a.status;
    }
    if (mrank != 0) {
        char why[256] = "";
        rc = coll_tcp_store_create(a.host, a.port, 0, -1, a.token, rv->timeout_s, &store, why,
                                   sizeof why);
        if (rc) {
            coll_set_err(err, errlen, "cannot reach rank 0's rendezvous store at %s:%d: %s", a.host,
                         a.port, why);
            return rc;
        }
    }
    snprintf(token, sizeof token, "%s", a.token);
    return COLL_OK;
}

int coll_rendezvous_mpi(coll_rendezvous *rv, char *err, size_t errlen)
{
    int rc = COLL_OK;
    pthread_mutex_lock(&lock);
    if (!store) rc = open_store(rv, err, errlen);
    if (rc == COLL_OK) {
        rv->store = store;
        snprintf(rv->prefix, sizeof rv->prefix, "m%u/", created++);
        snprintf(rv->token, sizeof rv->token, "%s", token);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
