/* Where each group of a replay meets (docs/DESIGN.md "Replay"): the group's
 * rank 0 picks an address of its host (coll_listen_addr_from_env: the one
 * that reaches the world's store, 127.0.0.1 on one host) and a free port, and
 * every rank of the world learns each of its groups' tcp:// address from one
 * all-gather on the world communicator. Nothing is shared but the network, so
 * groups span hosts. */
#ifndef REPLAY_RDV_H
#define REPLAY_RDV_H

#include <stddef.h>

#include "coll.h"
#include "replay/trace.h"

#define REPLAY_METHOD_LEN 120 /* "tcp://[v6 address]:port" and its NUL */

/* Collective over world (every world rank calls it at once, once per turn,
 * with the same lanes): methods[g * lanes + k] (t->ngroups * lanes entries)
 * gets the init method of group g's communicator k (a group replayed on
 * several communicators: replay_run.h, replay_lanes). 0, or a coll status
 * with err saying what failed. */
int replay_group_methods(const replay_trace *t, coll_comm *world, size_t lanes,
                         char (*methods)[REPLAY_METHOD_LEN], char *err, size_t errlen);

#endif
