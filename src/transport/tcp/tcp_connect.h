/* Full mesh of TCP connections for the transport, set up through the store. */
#ifndef COLL_TCP_CONNECT_H
#define COLL_TCP_CONNECT_H

#include <stddef.h>

#include "core/err.h"

typedef struct coll__store coll__store;

/* Every rank listens on host (NULL: 127.0.0.1) port 0 and publishes
 * "<prefix>tcp/addr/<rank>" = "host:port"; it connects to every lower rank and
 * accepts every higher one, each connection authenticated both ways by
 * challenge-response over the job token (tcp_wire.h). sockbuf > 0 sets
 * SO_SNDBUF/SO_RCVBUF.
 * fds[size] gets one connected socket per peer (fds[rank] = -1).
 * Returns 0, or a status with err naming the ranks that failed or never came,
 * as world ranks through err's map (coll__err_world). */
int coll__tcp_mesh_connect(coll__store *store, const char *prefix, int rank, int size,
                           const char *host, const char *token, double timeout_s, int sockbuf,
                           int *fds, coll__err *err);

typedef struct tcp_hello tcp_hello;

/* h's mac: HMAC-SHA-256(token, "collbench-tcp" | their_nonce | h's first 16
 * bytes | h->nonce). Exposed for tests that play a rank by hand. */
void coll__tcp_hello_sign(tcp_hello *h, const char *token, size_t tokenlen,
                          const unsigned char *their_nonce);

#endif
