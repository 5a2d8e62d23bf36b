/* Socket helpers: listen/connect/accept/read/write with absolute deadlines.
 * Every wait is a poll() bounded by the deadline, so nothing spins; every
 * send uses MSG_NOSIGNAL so a dead peer is an error code, never SIGPIPE. */
#include "core/sock.h"
#include "core/clock.h"
#include "core/hostport.h"
#include "coll.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Longest single poll(): deadlines are re-checked at least this often. */
#define POLL_CAP_MS 1000

static const char *host_or_default(const char *host)
{
    return (host && *host) ? host : "127.0.0.1";
}

/* IPv4 and IPv6 addresses of host:port (host may be "[ipv6]"); *res freed by
 * the caller with freeaddrinfo. */
static int resolve(const char *host, int port, struct addrinfo **res, char *err, size_t errlen)
{
    char hp[COLL_HOSTPORT_MAX], bare[COLL_HOSTPORT_MAX];
    coll__host_unbracket(host, bare, sizeof bare);
    coll__hostport_format(hp, sizeof hp, bare, port);
    if (port < 0 || port > 65535) {
        snprintf(err, errlen, "%s: port out of range 0..65535", hp);
        return COLL_EINVAL;
    }
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    int rc = getaddrinfo(bare, service, &hints, res);
    if (rc != 0) {
        snprintf(err, errlen, "%s: cannot resolve host: %s", hp,
                 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        return COLL_EINVAL;
    }
    return COLL_OK;
}

/* "host:port" for messages, bracketing an IPv6 literal. */
static const char *hostport(char *buf, size_t len, const char *host, int port)
{
    coll__hostport_format(buf, len, host, port);
    return buf;
}

int coll__sock_set_nonblocking(int fd, int on)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return COLL_ESYS;
    flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
    return fcntl(fd, F_SETFL, flags) < 0 ? COLL_ESYS : COLL_OK;
}

void coll__sock_set_buffers(int fd, int bytes)
{
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
}

static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int coll__sock_listen(const char *host, int port, int backlog, char *err, size_t errlen)
{
    host = host_or_default(host);
    struct addrinfo *res;
    int rc = resolve(host, port, &res, err, errlen);
    if (rc) return rc;
    int saved = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1, zero = 0;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        /* "::" serves IPv4 clients too, whatever net.ipv6.bindv6only says. */
        if (ai->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0) {
            freeaddrinfo(res);
            return fd;
        }
        saved = errno;
        close(fd);
    }
    freeaddrinfo(res);
    char hp[COLL_HOSTPORT_MAX];
    snprintf(err, errlen, "listen on %s: %s", hostport(hp, sizeof hp, host, port), strerror(saved));
    return COLL_ESYS;
}

int coll__sock_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) return -1;
    if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

/* poll() one fd for events until deadline. Returns 1 ready, 0 timed out, <0 status. */
static int wait_fd(int fd, short events, double deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int ms = coll__ms_until(deadline, POLL_CAP_MS);
        int n = poll(&p, 1, ms);
        if (n > 0) return 1;
        if (n < 0 && errno != EINTR) return COLL_ESYS;
        if (n == 0 && ms == 0) return 0;
        if (n == 0 && coll__now_s() >= deadline) return 0;
    }
}

/* One nonblocking connect attempt to one address. Returns the fd, or -errno
 * (-ETIMEDOUT when the deadline passed while the handshake was in progress). */
static int connect_once(const struct addrinfo *ai, double deadline)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) return -errno;
    int e = 0;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        e = errno;
        if (e == EINPROGRESS || e == EINTR) {
            int w = wait_fd(fd, POLLOUT, deadline);
            socklen_t len = sizeof e;
            if (w == 0) e = ETIMEDOUT;
            else if (w < 0) e = errno;
            else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0) e = errno;
        }
    }
    if (e) {
        close(fd);
        return -e;
    }
    return fd;
}

/* Connects, retrying refused connections until deadline where retry_refused
 * (a server not up yet), or not at all (a server known up: refused = gone). */
static int connect_until(const char *host, int port, double deadline, int retry_refused, char *err,
                         size_t errlen)
{
    host = host_or_default(host);
    struct addrinfo *res;
    int rc = resolve(host, port, &res, err, errlen);
    if (rc) return rc;
    double backoff = 0.010;
    int last = 0;
    for (;;) {
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
            int fd = connect_once(ai, deadline);
            if (fd >= 0) {
                freeaddrinfo(res);
                coll__sock_set_nonblocking(fd, 0);
                set_nodelay(fd);
                return fd;
            }
            last = -fd;
        }
        /* Refused = the server is not listening yet: retry. Anything else is final. */
        int retry = retry_refused && (last == ECONNREFUSED || last == ECONNRESET || last == EAGAIN);
        double now = coll__now_s();
        if (!retry || now >= deadline) break;
        double pause = backoff < deadline - now ? backoff : deadline - now;
        coll__sleep_s(pause);
        backoff = backoff * 2 > 0.200 ? 0.200 : backoff * 2;
    }
    freeaddrinfo(res);
    char hp[COLL_HOSTPORT_MAX];
    hostport(hp, sizeof hp, host, port);
    if (!retry_refused && (last == ECONNREFUSED || last == ECONNRESET)) {
        snprintf(err, errlen, "connect to %s: %s", hp, strerror(last));
        return COLL_EPEER;
    }
    if (last == ETIMEDOUT || last == ECONNREFUSED) {
        snprintf(err, errlen, "connect to %s: timed out (%s)", hp, strerror(last));
        return COLL_ETIMEDOUT;
    }
    snprintf(err, errlen, "connect to %s: %s", hp, strerror(last));
    return COLL_ESYS;
}

int coll__sock_connect(const char *host, int port, double deadline, char *err, size_t errlen)
{
    return connect_until(host, port, deadline, 1, err, errlen);
}

int coll__sock_connect_again(const char *host, int port, double deadline, char *err, size_t errlen)
{
    return connect_until(host, port, deadline, 0, err, errlen);
}

void coll__sock_peer_name(int fd, char *buf, size_t len)
{
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    if (getpeername(fd, (struct sockaddr *)&sa, &sl) < 0 ||
        getnameinfo((struct sockaddr *)&sa, sl, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV))
        snprintf(buf, len, "?");
    else coll__hostport_format(buf, len, host, atoi(serv));
}

int coll__sock_accept(int listen_fd, double deadline, char *err, size_t errlen)
{
    for (;;) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            set_nodelay(fd);
            return fd;
        }
        int e = errno;
        /* A client that gave up before we accepted is not our failure. */
        if (e == EINTR || e == ECONNABORTED) continue;
        if (e != EAGAIN && e != EWOULDBLOCK) {
            snprintf(err, errlen, "accept on port %d: %s", coll__sock_port(listen_fd), strerror(e));
            return COLL_ESYS;
        }
        int w = wait_fd(listen_fd, POLLIN, deadline);
        if (w == 0) {
            snprintf(err, errlen, "accept on port %d: timed out waiting for a connection",
                     coll__sock_port(listen_fd));
            return COLL_ETIMEDOUT;
        }
        if (w < 0) {
            snprintf(err, errlen, "poll on port %d: %s", coll__sock_port(listen_fd),
                     strerror(errno));
            return COLL_ESYS;
        }
    }
}

static int io_errno_status(int e)
{
    return (e == ECONNRESET || e == EPIPE || e == ENOTCONN || e == ETIMEDOUT) ? COLL_EPEER
                                                                              : COLL_ESYS;
}

int coll__sock_write_all(int fd, const void *buf, size_t len, double deadline)
{
    const char *p = buf;
    while (len > 0) {
        /* MSG_DONTWAIT: never block past the deadline even on a blocking fd. */
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return io_errno_status(errno);
        int w = wait_fd(fd, POLLOUT, deadline);
        if (w == 0) return COLL_ETIMEDOUT;
        if (w < 0) return w;
    }
    return COLL_OK;
}

int coll__sock_read_all(int fd, void *buf, size_t len, double deadline)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0) return COLL_EPEER;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return io_errno_status(errno);
        int w = wait_fd(fd, POLLIN, deadline);
        if (w == 0) return COLL_ETIMEDOUT;
        if (w < 0) return w;
    }
    return COLL_OK;
}

int coll__ct_equal(const void *a, const void *b, size_t len)
{
    const volatile unsigned char *x = a, *y = b;
    unsigned char diff = 0;
    for (size_t i = 0; i < len; i++) diff |= (unsigned char)(x[i] ^ y[i]);
    return diff == 0;
}
