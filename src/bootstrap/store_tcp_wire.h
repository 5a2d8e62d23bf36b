/* The TCP store's wire format, shared by its server (store_tcp_server.c) and
 * client (store_tcp_client.c).
 *
 * Wire format (big-endian, core/be.h): request = u32 length of what follows, u8 command,
 * fields; a field is u32 length + bytes. Reply = u32 length + payload.
 *   CHALLENGE              -> u32 wire version, 16-byte nonce, fresh for this
 *                             connection
 *   HELLO mac cnonce ver   -> proof; mac = HMAC-SHA-256(token, "collbench-store" |
 *                             nonce | cnonce), cnonce the client's own fresh 16
 *                             bytes, proof = HMAC-SHA-256(token,
 *                             "collbench-store-server" | nonce | cnonce): each side
 *                             shows the other it holds the token, which never
 *                             crosses the wire, and a captured exchange answers no
 *                             later one (the first two requests of a connection,
 *                             in this order); ver: a 4-byte field, the u32
 *                             wire version (core/wire_version.h)
 *   SET   key value        -> ack
 *   GET   key              -> value (parked on the server until key is set)
 *   ADD   key i64          -> i64 new value (stored as decimal text)
 *   WAIT  u32 n, n keys    -> ack (parked until every key is set)
 *   CHECK key              -> u8 exists
 * Versions: every build keeps CHALLENGE bare, its answer led by the version,
 * and the version last in HELLO. Version 2 answered the bare 16-byte nonce, so
 * no later answer may be 16 bytes long. A client that reads another version
 * stops at once naming both, before it sends anything derived from the token;
 * to a server of version 3 or later it first sends a HELLO without a mac,
 * which that server logs with both versions. A client of version 2 cannot
 * read our answer and hangs up: the server's log says what that means.
 * Every length is checked against a limit before anything is allocated; a
 * client that breaks the protocol loses its connection, the server goes on. */
#ifndef COLL_STORE_TCP_WIRE_H
#define COLL_STORE_TCP_WIRE_H

#include "core/err.h"
#include <stddef.h>
#include <stdint.h>

#include "core/be.h"
#include "core/hmac.h"
#include "core/wire_version.h"

#define MAX_KEY (4u << 10)
#define MAX_VALUE (64u << 20)
#define MAX_FRAME (MAX_VALUE + MAX_KEY + 64u)
/* CHALLENGE's answer: version, nonce. HELLO: length, command, mac, cnonce and
 * version fields. */
#define STORE_CHALLENGE_REPLY_LEN (4u + COLL_NONCE_LEN)
#define STORE_HELLO_LEN (9u + COLL_SHA256_LEN + 4u + COLL_NONCE_LEN + 4u + 4u)

enum { CMD_HELLO = 1, CMD_SET, CMD_GET, CMD_ADD, CMD_WAIT, CMD_CHECK, CMD_CHALLENGE };

/* HELLO's mac (server 0) or the server's proof (1), over the server's nonce
 * and the client's cnonce; the domains keep a transport MAC, or one side's,
 * from passing for the other. */
void coll__store_tcp_mac(const char *token, size_t len, int server, const unsigned char *nonce,
                         const unsigned char *cnonce, unsigned char out[COLL_SHA256_LEN]);

/* The server: a thread serving listen_fd (whose ownership it takes; closed
 * when stopped) for the clients that know token. */
typedef struct coll__store_tcp_server coll__store_tcp_server;
int coll__store_tcp_server_start(int listen_fd, const char *token, double timeout_s,
                                 coll__store_tcp_server **out, coll__err *err);
void coll__store_tcp_server_stop(coll__store_tcp_server *s);
int coll__store_tcp_server_port(const coll__store_tcp_server *s);
/* Connections refused so far for a wrong job token; the last one's address in
 * last (len bytes). */
unsigned coll__store_tcp_server_refused(coll__store_tcp_server *s, char *last, size_t len);

#endif
