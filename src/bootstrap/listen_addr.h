/* Which address a rank's transports listen on and publish to its peers, however
 * it was launched (torchrun, srun, mpirun, our own launcher). In order:
 *   $COLL_LISTEN_ADDR                  that address, as given;
 *   $COLL_SOCKET_IFNAME                the first IPv4 address of a matching interface,
 *                                      else its first global-scope IPv6 one
 *                                      (as NCCL_SOCKET_IFNAME: "eth" prefixes,
 *                                      "=eth0" exact, "^docker,lo" excludes; commas);
 *   the job is on one host             127.0.0.1 (::1 when the store host is IPv6);
 *   the store's host is known          the address of the interface that routes to it
 *                                      (loopback when the store host itself is loopback);
 *   the job spans hosts                the first interface that is up, not loopback;
 *   unknown                            127.0.0.1.
 * A job that spans hosts and finds only loopback is an error naming the
 * variable to set: its peers could never connect. coll_listen_addr_from_env (coll.h)
 * is the public entry; these are the pieces libcoll and its tests use. */
#ifndef COLL_LISTEN_ADDR_H
#define COLL_LISTEN_ADDR_H

#include <stddef.h>

#define COLL_ENV_LISTEN_ADDR "COLL_LISTEN_ADDR"
#define COLL_ENV_SOCKET_IFNAME "COLL_SOCKET_IFNAME"

#include "coll_tool.h" /* coll_listen_pick, coll_listen_addr_from_env, coll_host_is_loopback */

/* store_host: where the rendezvous store listens (MASTER_ADDR), NULL or "" when
 * unknown or when this rank hosts it; spans: 1 when the job spans hosts, 0 on
 * one host, -1 unknown. COLL_OK, or COLL_EINVAL with err naming the variable. */
int coll__listen_addr_pick(const char *store_host, int spans, coll_listen_pick *out, char *err,
                           size_t errlen);

/* 1 when interface name is selected by spec (COLL_SOCKET_IFNAME syntax above). */
int coll__ifname_match(const char *spec, const char *name);

#endif
