/* Rendezvous: who am I (rank, world, local rank), and the store every rank shares.
 * Init methods as in torch.distributed: env://, tcp://host:port, file:///path. */
#ifndef COLL_RENDEZVOUS_H
#define COLL_RENDEZVOUS_H

#include "coll.h"
#include "bootstrap/store.h"

struct coll__rendezvous {
    int rank, world_size;
    int local_rank, local_world_size;
    coll__store *store;   /* shared and counted: coll__rendezvous_release gives it back */
    char prefix[64];      /* key namespace of this communicator ("c3/") */
    char token[65];       /* job token (hex), "" when none */
    char host[256];       /* address this rank's transports listen on (listen_addr.h) */
    char store_host[256]; /* where the store listens (MASTER_ADDR), "" when not named */
    int spans_hosts;      /* 1 the job spans hosts, 0 one host, -1 unknown */
    double timeout_s;
    /* A sub-group's ranks in the world (the auto backend's groups): rank r of
     * this group is world rank world_of[r], so its backend blames and names
     * world ranks (coll__err_init with them). NULL, 0: the group is the world. */
    const int *world_of;
    int nworld;
};
typedef struct coll__rendezvous coll__rendezvous;

/* World rank of rank r of rv's group (-1 when r is not one of its ranks). */
static inline int coll__rendezvous_world(const coll__rendezvous *rv, int r)
{
    if (!rv->world_of) return r;
    return r >= 0 && r < rv->nworld ? rv->world_of[r] : -1;
}

/* rv's rank, world and store for cfg's init method; on success rv->store is
 * held (one count per call) until coll__rendezvous_release. */
int coll__rendezvous_init(const coll_config *cfg, coll__rendezvous *rv, coll__err *err);
/* Gives back one count of a store rendezvous_init returned: the last one of a
 * tcp:// or file:// store closes it (rank 0's server first serves the clients
 * still connected, for up to a second); env:// stores stay for the process. */
void coll__rendezvous_release(coll__store *store);

/* For ranks another launcher started (or $COLL_VERIFY_RANKS=1, as the multi-host
 * launcher sets): 1 when rendezvous_verify should run. */
int coll__rendezvous_wants_verify(const coll__rendezvous *rv);
/* Collective over the store: a rank started twice or world sizes that disagree
 * fail every waiting rank with one clear message (COLL_EINVAL) instead of a hang;
 * COLL_ETIMEDOUT when not every rank arrived within rv->timeout_s. */
int coll__rendezvous_verify(const coll__rendezvous *rv, coll__err *err);

#endif
