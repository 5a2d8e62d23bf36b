/* Naming the rank a Gloo error is about. Gloo's TCP pairs name a peer by
 * socket address only ("Connection closed by peer [127.0.0.1]:57529"): after
 * Gloo connects, every rank publishes the local addresses of its sockets and
 * reads everyone else's, so an address in an error maps back to a rank even
 * when the store (rank 0's) is gone by then. */
#ifndef COLL_GLOO_PEERS_H
#define COLL_GLOO_PEERS_H

#include <stddef.h>
#include "bootstrap/store.h"

typedef struct coll__gloo_peer_fd {
  int fd, rank;
  char peer[64]; /* getpeername at connect time, to notice a reused fd */
} coll__gloo_peer_fd;

typedef struct coll__gloo_peers {
  int size;
  char **socks; /* socks[r]: " [ip]:port [ip]:port ... " of rank r, or NULL */
  coll__gloo_peer_fd *fds; /* this process's sockets to other ranks */
  int nfds;
} coll__gloo_peers;

/* Collective over the store (keys under prefix). */
int coll__gloo_peers_exchange(coll__store *store, const char *prefix, int rank, int size,
                              coll__gloo_peers *out, coll__err *err);
/* The rank owning an "[ip]:port" in text, else -1. */
int coll__gloo_peers_blame(const coll__gloo_peers *p, int self, const char *text);
/* Ranks whose every socket to this process is closed or hung up, in ranks[]
 * (room for size) and listed in buf ("0, 2"): how many. A failure that
 * cascades (rank 0 dies, rank 2 fails and exits, rank 1 sees rank 2 go)
 * then still names the first rank. */
int coll__gloo_peers_gone(const coll__gloo_peers *p, int *ranks, char *buf, size_t len);
void coll__gloo_peers_free(coll__gloo_peers *p);

#endif
