/* Bytes on a TCP transport connection: the set-up handshake and the header
 * in front of every message. Host byte order: a peer of the other endianness
 * fails the magic check instead of exchanging garbage. */
#ifndef COLL_TCP_WIRE_H
#define COLL_TCP_WIRE_H

#include <assert.h>
#include <stdint.h>

#include "core/sig.h"

#define TCP_HELLO_MAGIC 0x434c4853u /* "CLHS" */
#define TCP_WIRE_MAGIC 0x434c4d47u  /* "CLMG" */
#define TCP_WIRE_VERSION 1u
#define TCP_TOKEN_MAX 128 /* job token field, zero padded */

/* Sent by the connecting (higher) rank; the accepting rank answers with its own
 * hello, so both sides check the token. A refused connection is closed unanswered. */
typedef struct tcp_hello {
    uint32_t magic;   /* TCP_HELLO_MAGIC */
    uint32_t version; /* TCP_WIRE_VERSION */
    int32_t rank;     /* sender's rank */
    int32_t size;     /* sender's world size: both sides must agree */
    char token[TCP_TOKEN_MAX];
} tcp_hello;

static_assert(sizeof(tcp_hello) == 16 + TCP_TOKEN_MAX, "tcp_hello is a wire format");

enum { TCP_MSG_DATA = 1, TCP_MSG_ABORT = 2 };

/* Every message: this header, then len payload bytes.
 * DATA:  sig = the sender's collective signature, len = payload bytes.
 * ABORT: len = 0, sig zero except sig.root = the blamed rank (-1: none) and
 *        sig.count = -status (the sender's coll_status, as a positive number). */
typedef struct tcp_wire_hdr {
    uint32_t magic; /* TCP_WIRE_MAGIC */
    uint32_t type;  /* TCP_MSG_* */
    coll_sig sig;
    uint64_t len;
} tcp_wire_hdr;

static_assert(sizeof(coll_sig) == 24, "coll_sig is a wire format");
static_assert(sizeof(tcp_wire_hdr) == 40, "tcp_wire_hdr is a wire format");

#endif
