/* Bytes on a TCP transport connection: the set-up handshake and the header
 * in front of every message. Host byte order: a peer of the other endianness
 * fails the magic check instead of exchanging garbage. */
#ifndef COLL_TCP_WIRE_H
#define COLL_TCP_WIRE_H

#include <assert.h>
#include <stdint.h>

#include "core/sig.h"
#include "core/wire_version.h"

#define TCP_HELLO_MAGIC 0x434c4853u        /* "CLHS" */
#define TCP_CHALLENGE_MAGIC 0x434c4348u    /* "CLCH" */
#define TCP_WIRE_MAGIC 0x434c4d47u         /* "CLMG" */
#define TCP_WIRE_VERSION COLL_WIRE_VERSION /* shared with the store (core/wire_version.h) */
#define TCP_TOKEN_MAX 128                  /* longest job token accepted */
#define TCP_NONCE_LEN 16
#define TCP_MAC_LEN 32

/* Set-up, challenge-response so that the token never crosses the wire and a
 * captured hello cannot be replayed:
 *   accepting rank  -> tcp_challenge with a fresh nonce, as soon as it accepts;
 *   connecting rank -> tcp_hello: its rank and size, its own fresh nonce, and
 *                      mac = HMAC-SHA-256(token, "collbench-tcp" | acceptor's nonce
 *                      | the hello's first 16 bytes | its nonce);
 *   accepting rank  -> tcp_hello answer, nonce zero, the mac over the connecting
 *                      rank's nonce. A refused connection is closed unanswered.
 * Versions: magic and version open both messages, in every build. A connecting
 * rank that reads another version in the challenge still sends its hello (mac
 * zero) before it stops, so the accepting rank logs both versions too; that
 * one refuses the connection and goes on waiting, as for any stranger (a
 * stray packet must not end the job). */
typedef struct tcp_challenge {
    uint32_t magic;   /* TCP_CHALLENGE_MAGIC */
    uint32_t version; /* TCP_WIRE_VERSION */
    unsigned char nonce[TCP_NONCE_LEN];
} tcp_challenge;

typedef struct tcp_hello {
    uint32_t magic;   /* TCP_HELLO_MAGIC */
    uint32_t version; /* TCP_WIRE_VERSION */
    int32_t rank;     /* sender's rank */
    int32_t size;     /* sender's world size: both sides must agree */
    unsigned char nonce[TCP_NONCE_LEN];
    unsigned char mac[TCP_MAC_LEN];
} tcp_hello;

static_assert(sizeof(tcp_challenge) == 8 + TCP_NONCE_LEN, "tcp_challenge is a wire format");
static_assert(sizeof(tcp_hello) == 16 + TCP_NONCE_LEN + TCP_MAC_LEN, "tcp_hello is a wire format");

enum { TCP_MSG_DATA = 1, TCP_MSG_ABORT = 2 };

/* Every message: this header, then len payload bytes.
 * DATA:  sig = the sender's collective signature, len = payload bytes.
 * ABORT: len = 0, sig zero except sig.root = the blamed world rank (-1: none;
 *        it may be outside the transport's group) and
 *        sig.count = -status (the sender's coll_status, as a positive number). */
typedef struct tcp_wire_hdr {
    uint32_t magic; /* TCP_WIRE_MAGIC */
    uint32_t type;  /* TCP_MSG_* */
    coll__sig sig;
    uint64_t len;
} tcp_wire_hdr;

static_assert(sizeof(coll__sig) == 24, "coll__sig is a wire format");
static_assert(sizeof(tcp_wire_hdr) == 40, "tcp_wire_hdr is a wire format");

#endif
