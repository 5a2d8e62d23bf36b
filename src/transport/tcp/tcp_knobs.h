/* The tcp transport's tuning variables (tcp_knobs.c), read where its sockets
 * are made (the chunk: by the tcp backend, for its algorithms); gathered with
 * the backends' through the tcp backend's entry. */
#ifndef TCP_KNOBS_H
#define TCP_KNOBS_H

#include "core/tuning.h"

enum { TCP_KNOB_SOCKBUF, TCP_KNOB_SPIN_US, TCP_KNOB_SPIN_CROWDED_US, TCP_KNOB_CHUNK };

extern const coll__tunable_table coll__tcp_tunables;

#endif
