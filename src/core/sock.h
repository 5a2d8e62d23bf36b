/* Small socket helpers shared by the socket store and the socket transport.
 * Every wait takes an absolute deadline (coll__now_s() clock) and never spins. */
#ifndef COLL_SOCK_H
#define COLL_SOCK_H

#include <stddef.h>

/* Listen on host:port (host NULL or "" = 127.0.0.1; port 0 = any free port;
 * host an IPv4 or IPv6 literal, bracketed or not, or a name).
 * Returns the fd (nonblocking, CLOEXEC) or a negative coll_status; err gets why. */
int coll__sock_listen(const char *host, int port, int backlog, char *err, size_t errlen);
/* Port a bound socket listens on, or -1. */
int coll__sock_port(int fd);
/* Connect to host:port, retrying refused connections until deadline (the server
 * may not be up yet). Returns a blocking fd with TCP_NODELAY, or a negative status. */
int coll__sock_connect(const char *host, int port, double deadline, char *err, size_t errlen);
/* Connect to a server that was up before: a refused connection means it is
 * gone, so no retry; returns COLL_EPEER then. */
int coll__sock_connect_again(const char *host, int port, double deadline, char *err, size_t errlen);
/* Accept one connection before deadline; returns a blocking fd with TCP_NODELAY. */
int coll__sock_accept(int listen_fd, double deadline, char *err, size_t errlen);
/* Write/read exactly len bytes before deadline (poll-based; fd may be blocking or not).
 * Return 0, COLL_ETIMEDOUT, COLL_EPEER (closed/reset) or COLL_ESYS. */
int coll__sock_write_all(int fd, const void *buf, size_t len, double deadline);
int coll__sock_read_all(int fd, void *buf, size_t len, double deadline);
int coll__sock_set_nonblocking(int fd, int on);
/* Large send/receive buffers for bandwidth; best effort. */
void coll__sock_set_buffers(int fd, int bytes);
/* "a.b.c.d:port" or "[ipv6]:port" of fd's peer into buf ("?" if unknown), for messages. */
void coll__sock_peer_name(int fd, char *buf, size_t len);
/* Constant-time comparison of two byte strings (job tokens). */
int coll__ct_equal(const void *a, const void *b, size_t len);

#endif
