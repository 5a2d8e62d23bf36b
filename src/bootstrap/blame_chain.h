/* Who failed first. A rank whose call failed because of rank b says so in the
 * rendezvous store; a rank that blames b then follows b's word, and the word
 * of the rank b blamed, to the rank at the end of the chain. Backends whose
 * peers cannot tell them why they stopped use it: auto (a group sees only
 * "rank 1 aborted" when rank 1 stopped for a rank of another group) and gloo
 * (no abort message: a rank that failed just exits, and its closed sockets
 * may reach a third rank before those of the rank that died). Best effort and
 * brief: the store's host may be the rank that died. */
#ifndef COLL_BLAME_CHAIN_H
#define COLL_BLAME_CHAIN_H

#include "bootstrap/store.h"

/* Rank `rank` of `size` (keys "<prefix><tag>/blame/<rank>") blames `blamed`:
 * publishes that, follows the chain from it, waiting up to grace_s for the
 * rank at its end to speak (a rank that timed out waiting for a peer: the peer
 * may have waited for a third rank and time out about as late), publishes
 * the end too, and returns it (blamed itself when nobody said more). */
int coll__blame_chain(coll__store *store, const char *prefix, const char *tag, int rank, int size,
                      int blamed, double grace_s);

#endif
