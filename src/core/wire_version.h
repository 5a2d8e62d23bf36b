/* One version for every byte collbench processes exchange with each other: the
 * socket store's handshake (bootstrap/store_tcp_wire.h) and the socket
 * transport's (its wire header under src/transport/). Builds that differ in it cannot talk; from
 * version 3 on, each handshake carries it where every later build will look
 * for it, so both ends name both versions at once (docs/DESIGN.md,
 * "Handshakes"). */
#ifndef COLL_WIRE_VERSION_H
#define COLL_WIRE_VERSION_H

#include <stddef.h>

/* 2: the store's handshake carried no version (its CHALLENGE answer is the bare
 *    nonce); 3: the store's CHALLENGE answer and HELLO carry it. */
#define COLL_WIRE_VERSION 3u

/* "<who> speaks collbench wire version <theirs>, this build speaks <ours>:
 * run the same collbench build on every host" into buf. */
void coll__wire_version_mismatch(char *buf, size_t n, const char *who, unsigned theirs);

#endif
