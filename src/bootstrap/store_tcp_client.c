/* The TCP store's client (coll__tcp_store_create, store.h): one connection to
 * the server (store_tcp_server.c; rank 0 starts it), requests one at a time,
 * reconnecting after a timeout. Wire format: store_tcp_wire.h. */
#include "bootstrap/store_tcp_wire.h"
#include "bootstrap/store.h"
#include "coll.h"
#include "coll_tool.h"
#include "core/clock.h"
#include "core/fault.h"
#include "core/hmac.h"
#include "core/sock.h"
#include "core/wire_version.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct tcp_store {
    coll__store base;
    pthread_mutex_t lock; /* one request at a time on the connection */
    int fd;               /* -1 after a timeout or error: reconnect on next use */
    int was_up;           /* authenticated once: a refused reconnect means rank 0 is gone */
    char host[256];
    int port;
    char *token;
    coll__store_tcp_server *srv; /* rank 0: the server this store runs */
} tcp_store;

static const coll__store_ops tcp_ops;

/* errmsg setter: messages are cut at sizeof errmsg, which is fine for humans. */
__attribute__((format(printf, 2, 3))) static void errf(coll__store *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err.msg, sizeof s->err.msg, fmt, ap);
    va_end(ap);
}

/* Sends req (+ tail) and reads the reply into *rep (malloc'd, NUL-terminated). */
static int exchange(tcp_store *t, const unsigned char *req, size_t reqlen, const void *tail,
                    size_t taillen, double deadline, unsigned char **rep, size_t *replen)
{
    unsigned char hdr[4];
    int rc = coll__sock_write_all(t->fd, req, reqlen, deadline);
    if (!rc && taillen) rc = coll__sock_write_all(t->fd, tail, taillen, deadline);
    if (!rc) rc = coll__sock_read_all(t->fd, hdr, 4, deadline);
    if (rc) return rc;
    uint32_t n = coll__be_get_u32(hdr);
    if (n > MAX_FRAME) return COLL_EPROTO;
    unsigned char *buf = malloc((size_t)n + 1);
    if (!buf) return COLL_ENOMEM;
    if ((rc = coll__sock_read_all(t->fd, buf, n, deadline))) {
        free(buf);
        return rc;
    }
    buf[n] = 0;
    *rep = buf;
    *replen = n;
    return COLL_OK;
}

/* Turns a failed exchange into errmsg; the connection is out of step, so close it. */
static int fail(tcp_store *t, int rc, const char *what)
{
    if (rc == COLL_ETIMEDOUT)
        errf(&t->base, "TCP store %s:%d: timed out after %.3g s waiting for %s", t->host, t->port,
             t->base.timeout_s, what);
    else if (rc == COLL_EPEER)
        errf(&t->base,
             "store server at %s:%d closed the connection (during %s; did its host "
             "process, rank 0, die?)",
             t->host, t->port, what);
    else errf(&t->base, "TCP store %s:%d: %s during %s", t->host, t->port, coll_strerror(rc), what);
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
    return rc;
}

/* CHALLENGE and HELLO on t->fd, connected already. COLL_EPEER when the
 * server closed the connection before answering (it evicted us to make room
 * during a flood of strangers, or it is gone); COLL_EAUTH when it refused our
 * token, or could not prove it holds the token itself. */
static int handshake(tcp_store *t, double deadline)
{
    size_t toklen = t->token ? strlen(t->token) : 0;
    unsigned char creq[5] = {0, 0, 0, 1, CMD_CHALLENGE};
    unsigned char *rep;
    size_t replen;
    int rc = exchange(t, creq, sizeof creq, NULL, 0, deadline, &rep, &replen);
    if (rc) return fail(t, rc, "CHALLENGE");
    unsigned char snonce[COLL_NONCE_LEN], hello[STORE_HELLO_LEN];
    unsigned char *mac = hello + 9, *cnonce = mac + COLL_SHA256_LEN + 4;
    /* Version 2 answered with the bare nonce; from 3 on the version leads. */
    unsigned version = replen == COLL_NONCE_LEN ? 2 : replen >= 4 ? coll__be_get_u32(rep) : 0;
    int bad = replen != STORE_CHALLENGE_REPLY_LEN;
    if (!bad) memcpy(snonce, rep + 4, sizeof snonce);
    free(rep);
    memset(hello, 0, sizeof hello);
    coll__be_put_u32(hello, sizeof hello - 4);
    hello[4] = CMD_HELLO;
    coll__be_put_u32(hello + 5, COLL_SHA256_LEN);
    coll__be_put_u32(mac + COLL_SHA256_LEN, COLL_NONCE_LEN);
    coll__be_put_u32(cnonce + COLL_NONCE_LEN, 4);
    coll__be_put_u32(cnonce + COLL_NONCE_LEN + 4, COLL_WIRE_VERSION);
    if (version && version != COLL_WIRE_VERSION) {
        /* A HELLO without a mac, so that a server from version 3 on names both
         * versions too; version 2 cannot read it, nor anything else we send. */
        if (version > 2) coll__sock_write_all(t->fd, hello, sizeof hello, coll__now_s() + 1);
        char who[300], why[sizeof t->base.err.msg];
        snprintf(who, sizeof who, "the store server at %s:%d", t->host, t->port);
        coll__wire_version_mismatch(why, sizeof why, who, version);
        fail(t, COLL_EPROTO, "CHALLENGE");
        errf(&t->base, "%s", why);
        return COLL_EPROTO;
    }
    if (bad) return fail(t, COLL_EPROTO, "CHALLENGE");
    if (coll__nonce(cnonce) != COLL_OK) return fail(t, COLL_ESYS, "HELLO (no random bytes)");
    coll__store_tcp_mac(t->token ? t->token : "", toklen, 0, snonce, cnonce, mac);
    if ((rc = exchange(t, hello, sizeof hello, NULL, 0, deadline, &rep, &replen)))
        return fail(t, rc, "HELLO");
    if (replen == 0) { /* the server's explicit refusal */
        free(rep);
        fail(t, COLL_EAUTH, "HELLO");
        errf(&t->base, "store server at %s:%d refused our job token (wrong job token?)", t->host,
             t->port);
        return COLL_EAUTH;
    }
    /* The server answers for the token too: a stranger on the store's port
     * (rank 0 gone, the port taken over) must not be handed the job's keys. */
    unsigned char want[COLL_SHA256_LEN];
    coll__store_tcp_mac(t->token ? t->token : "", toklen, 1, snonce, cnonce, want);
    int proven = replen == sizeof want && coll__ct_equal(rep, want, sizeof want);
    free(rep);
    if (!proven) {
        fail(t, COLL_EAUTH, "HELLO");
        errf(&t->base,
             "store server at %s:%d did not prove it holds the job token (not rank "
             "0's store, or another job's)",
             t->host, t->port);
        return COLL_EAUTH;
    }
    return COLL_OK;
}

/* Connects and authenticates, unless connected already. A connection the
 * server closes before the handshake is done (strangers crowding its port
 * make it evict the longest-waiting) is retried until the deadline: strangers
 * cost a member a delay, never the job. */
static int ensure_connected(tcp_store *t, double deadline)
{
    if (t->fd >= 0) return COLL_OK;
    /* A server that answered before and now refuses has exited: retrying
     * until the deadline would only delay a rank's exit by its timeout. */
    char why[sizeof t->base.err.msg];
    int fd = t->was_up ? coll__sock_connect_again(t->host, t->port, deadline, why, sizeof why)
                       : coll__sock_connect(t->host, t->port, deadline, why, sizeof why);
    if (fd == COLL_EPEER) {
        errf(&t->base, "store server at %s:%d (rank 0) is gone: it refuses new connections",
             t->host, t->port);
        return fd;
    }
    if (fd < 0) errf(&t->base, "%s", why);
    double pause = 0.002;
    for (int closed = 1;; closed++) {
        if (fd < 0) return fd;
        t->fd = fd;
        int rc = handshake(t, deadline);
        if (rc == COLL_OK) t->was_up = 1;
        if (rc != COLL_EPEER) return rc;
        if (coll__now_s() + pause >= deadline) {
            errf(&t->base,
                 "store server at %s:%d closed the connection before authentication "
                 "%d times within %.3g s (too many strangers connecting to its port?)",
                 t->host, t->port, closed, t->base.timeout_s);
            return COLL_ETIMEDOUT;
        }
        coll__sleep_s(pause);
        pause = pause * 2 > 0.1 ? 0.1 : pause * 2;
        /* Evicted, or the server is gone: a short connect tells the two apart. */
        fd = coll__sock_connect(t->host, t->port, coll__now_s() + 0.2, why, sizeof why);
        if (fd < 0) {
            errf(&t->base,
                 "store server at %s:%d (rank 0) is gone: it closed the connection "
                 "before authentication and accepts no new one (%s)",
                 t->host, t->port, why);
            return COLL_EPEER;
        }
    }
}

/* Request builder: u32 len, u8 cmd, then key fields; the caller adds the rest. */
typedef struct req {
    unsigned char *buf;
    size_t len, cap;
} req;

static int req_put(req *r, const void *data, size_t n)
{
    if (r->len + n > r->cap) {
        size_t cap = (r->len + n) * 2;
        unsigned char *b = realloc(r->buf, cap);
        if (!b) return COLL_ENOMEM;
        r->buf = b;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, data, n);
    r->len += n;
    return COLL_OK;
}

static int req_u32(req *r, uint32_t v)
{
    unsigned char b[4];
    coll__be_put_u32(b, v);
    return req_put(r, b, 4);
}

static int check_key(tcp_store *t, const char *key)
{
    size_t n = strlen(key);
    if (n == 0 || n > MAX_KEY) {
        errf(&t->base, "TCP store: key of %zu bytes (must be 1..%u)", n, MAX_KEY);
        return COLL_EINVAL;
    }
    return COLL_OK;
}

static int req_key(req *r, const char *key)
{
    size_t n = strlen(key);
    int rc = req_u32(r, (uint32_t)n);
    return rc ? rc : req_put(r, key, n);
}

/* One request/reply: req holds cmd and fields after a 4-byte gap for the length;
 * tail (a value) goes after. */
static int call(tcp_store *t, req *r, const void *tail, size_t taillen, const char *what,
                unsigned char **rep, size_t *replen)
{
    double deadline = coll__now_s() + t->base.timeout_s;
    coll__be_put_u32(r->buf, (uint32_t)(r->len - 4 + taillen));
    coll__fault_action fa = coll__fault_hit(COLL_FAULT_STORE, 1);
    if (fa == COLL_FAULT_CORRUPT) r->buf[4] = 0xff; /* no such command: the server must drop us */
    pthread_mutex_lock(&t->lock);
    int rc = ensure_connected(t, deadline);
    if (!rc && fa == COLL_FAULT_CLOSE_SOCKET) shutdown(t->fd, SHUT_RDWR);
    if (!rc && (rc = exchange(t, r->buf, r->len, tail, taillen, deadline, rep, replen)))
        fail(t, rc, what);
    pthread_mutex_unlock(&t->lock);
    free(r->buf);
    return rc;
}

/* One request of cmd about one key: the key, then a fixed-size field (may be
 * empty), then tail (a value) after; the reply lands in *rep (caller frees). */
static int key_call(tcp_store *t, int cmd, const char *key, const void *field, size_t fieldlen,
                    const void *tail, size_t taillen, unsigned char **rep, size_t *replen)
{
    int rc = check_key(t, key);
    if (rc) return rc;
    unsigned char head[5] = {0, 0, 0, 0, (unsigned char)cmd};
    req r = {0};
    if ((rc = req_put(&r, head, 5)) || (rc = req_key(&r, key)) ||
        (fieldlen && (rc = req_put(&r, field, fieldlen)))) {
        free(r.buf);
        return rc;
    }
    char what[300];
    snprintf(what, sizeof what, "key '%.200s'", key);
    return call(t, &r, tail, taillen, what, rep, replen);
}

static int tcp_set(coll__store *s, const char *key, const void *val, size_t len)
{
    tcp_store *t = (tcp_store *)s;
    if (len > MAX_VALUE) {
        errf(s,
             "TCP store: value of %zu bytes for key '%s' "
             "exceeds the limit of %u",
             len, key, MAX_VALUE);
        return COLL_EINVAL;
    }
    unsigned char n[4], *rep;
    size_t replen;
    coll__be_put_u32(n, (uint32_t)len);
    int rc = key_call(t, CMD_SET, key, n, 4, val, len, &rep, &replen);
    if (rc) return rc;
    free(rep);
    return COLL_OK;
}

static int tcp_get(coll__store *s, const char *key, void **val, size_t *len)
{
    unsigned char *rep;
    size_t replen;
    int rc = key_call((tcp_store *)s, CMD_GET, key, NULL, 0, NULL, 0, &rep, &replen);
    if (rc) return rc;
    *val = rep;
    if (len) *len = replen;
    return COLL_OK;
}

static int tcp_add(coll__store *s, const char *key, int64_t delta, int64_t *result)
{
    tcp_store *t = (tcp_store *)s;
    unsigned char d[8], *rep;
    size_t replen;
    coll__be_put_u64(d, (uint64_t)delta);
    int rc = key_call(t, CMD_ADD, key, d, 8, NULL, 0, &rep, &replen);
    if (rc) return rc;
    if (replen != 8) {
        free(rep);
        errf(s, "TCP store %s:%d: bad reply to ADD of key '%.200s'", t->host, t->port, key);
        return COLL_EPROTO;
    }
    if (result) *result = (int64_t)coll__be_get_u64(rep);
    free(rep);
    return COLL_OK;
}

static int tcp_wait(coll__store *s, const char *const *keys, int nkeys)
{
    tcp_store *t = (tcp_store *)s;
    if (nkeys <= 0) return COLL_OK;
    char what[200];
    int used = snprintf(what, sizeof what, "key%s", nkeys > 1 ? "s" : "");
    req r = {0};
    unsigned char head[5] = {0, 0, 0, 0, CMD_WAIT};
    int rc = req_put(&r, head, 5);
    if (!rc) rc = req_u32(&r, (uint32_t)nkeys);
    for (int i = 0; i < nkeys && !rc; i++) {
        if (!(rc = check_key(t, keys[i]))) rc = req_key(&r, keys[i]);
        if (used < (int)sizeof what)
            used += snprintf(what + used, sizeof what - (size_t)used, "%s '%.100s'", i ? "," : "",
                             keys[i]);
    }
    if (!rc && r.len > MAX_FRAME) rc = COLL_EINVAL;
    if (rc) {
        free(r.buf);
        return rc;
    }
    unsigned char *rep;
    size_t replen;
    if ((rc = call(t, &r, NULL, 0, what, &rep, &replen))) return rc;
    free(rep);
    return COLL_OK;
}

static int tcp_check(coll__store *s, const char *key, int *exists)
{
    unsigned char *rep;
    size_t replen;
    int rc = key_call((tcp_store *)s, CMD_CHECK, key, NULL, 0, NULL, 0, &rep, &replen);
    if (rc) return rc;
    *exists = replen == 1 && rep[0];
    free(rep);
    return COLL_OK;
}

static void tcp_destroy(coll__store *s)
{
    tcp_store *t = (tcp_store *)s;
    if (t->fd >= 0) close(t->fd);
    coll__store_tcp_server_stop(t->srv);
    pthread_mutex_destroy(&t->lock);
    free(t->token);
    free(t);
}

static const coll__store_ops tcp_ops = {
    .size = sizeof(coll__store_ops),
    .name = "tcp",
    .set = tcp_set,
    .get = tcp_get,
    .add = tcp_add,
    .wait = tcp_wait,
    .check = tcp_check,
    .destroy = tcp_destroy,
};

/* Where the server's own client connects: the bound address, or loopback of
 * its family for a wildcard (0.0.0.0 or ::). */
static void self_address(int listen_fd, char *host, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    const struct sockaddr_in *v4 = (const struct sockaddr_in *)(const void *)&ss;
    const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)(const void *)&ss;
    int ok = getsockname(listen_fd, (struct sockaddr *)&ss, &sl) == 0;
    if (ok && ss.ss_family == AF_INET6)
        ok = inet_ntop(AF_INET6,
                       IN6_IS_ADDR_UNSPECIFIED(&v6->sin6_addr) ? &in6addr_loopback : &v6->sin6_addr,
                       host, (socklen_t)len) != NULL;
    else
        ok = ok && ss.ss_family == AF_INET && v4->sin_addr.s_addr != htonl(INADDR_ANY) &&
             inet_ntop(AF_INET, &v4->sin_addr, host, (socklen_t)len);
    if (!ok) snprintf(host, len, "127.0.0.1");
}

/* 1 when host is an IPv6 literal or a name with an IPv6 address. */
static int has_ipv6(const char *host)
{
    if (strchr(host, ':')) return 1;
    struct addrinfo hints = {.ai_family = AF_INET6, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0) return 0;
    freeaddrinfo(res);
    return 1;
}

/* Like torch's TCPStore, a server named by a non-loopback address listens on every
 * interface: MASTER_ADDR often resolves differently on the master itself (Debian
 * maps the hostname to 127.0.1.1). The job token keeps strangers out. A host with
 * an IPv6 address gets "::", which takes IPv4 clients too (sock.h). */
static const char *bind_host(const char *host)
{
    if (!host || !*host || coll_host_is_loopback(host)) return host;
    return has_ipv6(host) ? "::" : "0.0.0.0";
}

int coll__tcp_store_create(const char *host, int port, int is_server, int listen_fd,
                           const char *token, double timeout_s, coll__store **out, coll__err *err)
{
    tcp_store *t = calloc(1, sizeof *t);
    if (!t) return COLL_ENOMEM;
    t->base.ops = &tcp_ops;
    t->base.timeout_s = timeout_s;
    t->fd = -1;
    pthread_mutex_init(&t->lock, NULL);
    if (token && *token && !(t->token = strdup(token))) {
        tcp_destroy(&t->base);
        return COLL_ENOMEM;
    }
    int rc = COLL_OK;
    snprintf(t->host, sizeof t->host, "%s", host && *host ? host : "127.0.0.1");
    t->port = port;
    if (is_server) {
        if (listen_fd < 0)
            listen_fd = coll__sock_listen(bind_host(host), port, 128, err->msg, sizeof err->msg);
        if (listen_fd < 0) {
            tcp_destroy(&t->base);
            return listen_fd;
        }
        t->port = coll__sock_port(listen_fd);
        self_address(listen_fd, t->host, sizeof t->host);
        rc = coll__store_tcp_server_start(listen_fd, token, timeout_s, &t->srv, err);
    }
    if (!rc && (rc = ensure_connected(t, coll__now_s() + timeout_s)))
        coll__err_set(err, 0, "%s", t->base.err.msg);
    if (rc) {
        tcp_destroy(&t->base);
        return rc;
    }
    *out = &t->base;
    return COLL_OK;
}

unsigned coll__tcp_store_refused(const coll__store *s, char *last, size_t len)
{
    if (len) last[0] = '\0';
    if (!s || s->ops != &tcp_ops) return 0;
    const tcp_store *t = (const tcp_store *)s;
    return t->srv ? coll__store_tcp_server_refused(t->srv, last, len) : 0;
}

int coll__tcp_store_port(const coll__store *s)
{
    if (!s || s->ops != &tcp_ops) return -1;
    const tcp_store *t = (const tcp_store *)s;
    return t->srv ? coll__store_tcp_server_port(t->srv) : -1;
}
