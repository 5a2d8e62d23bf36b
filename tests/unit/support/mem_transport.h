/* In-process coll__transport for ranks running as threads of one test program.
 * Sends are rendezvous style: the receiver copies straight from the sender's
 * buffer, at most piece_bytes per progress call, so algorithms see partial
 * transfers (x->done) and a schedule that relies on buffered sends deadlocks
 * here as it would on a real transport. Signature and length are checked on
 * receive as transport.h says. */
#ifndef MEM_TRANSPORT_H
#define MEM_TRANSPORT_H

#include <stddef.h>
#include "coll.h"
#include "transport/transport.h"

/* size connected endpoints; eps[r] is rank r's transport, each released with
 * eps[r]->ops->destroy (the shared state goes with the last one).
 * piece_bytes 0: a receive moves everything at once. */
int mem_transport_create(int size, size_t piece_bytes, coll__transport **eps);

#endif
