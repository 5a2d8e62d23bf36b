/* TCP store, like torch's TCPStore: rank 0 runs the server as a thread (one
 * poll() loop over every client socket, a pipe to wake it for shutdown) and
 * talks to it over loopback like every other client.
 *
 * Wire format (big-endian): request = u32 length of what follows, u8 command,
 * fields; a field is u32 length + bytes. Reply = u32 length + payload.
 *   CHALLENGE              -> 16-byte nonce, fresh for this connection
 *   HELLO mac cnonce       -> proof; mac = HMAC-SHA-256(token, "collbench-store" |
 *                             nonce | cnonce), cnonce the client's own fresh 16
 *                             bytes, proof = HMAC-SHA-256(token,
 *                             "collbench-store-server" | nonce | cnonce): each side
 *                             shows the other it holds the token, which never
 *                             crosses the wire, and a captured exchange answers no
 *                             later one (the first two requests of a connection,
 *                             in this order)
 *   SET   key value        -> ack
 *   GET   key              -> value (parked on the server until key is set)
 *   ADD   key i64          -> i64 new value (stored as decimal text)
 *   WAIT  u32 n, n keys    -> ack (parked until every key is set)
 *   CHECK key              -> u8 exists
 * Every length is checked against a limit before anything is allocated; a
 * client that breaks the protocol loses its connection, the server goes on. */
#include "bootstrap/store.h"
#include "coll.h"
#include "core/clock.h"
#include "core/fault.h"
#include "core/hmac.h"
#include "core/sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_KEY (4u << 10)
#define MAX_VALUE (64u << 20)
#define MAX_FRAME (MAX_VALUE + MAX_KEY + 64u)
/* Before HELLO only a token fits: strangers cannot make the server allocate much. */
#define MAX_HELLO_FRAME (MAX_KEY + 16u)

enum { CMD_HELLO = 1, CMD_SET, CMD_GET, CMD_ADD, CMD_WAIT, CMD_CHECK, CMD_CHALLENGE };

/* Strangers cannot crowd out the members: at most this many connections wait
 * to authenticate at once, and each gets this long before it is closed. */
#define MAX_UNAUTHED 64
#define UNAUTHED_IDLE_S 10.0

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_u64(unsigned char *p, uint64_t v)
{
    put_u32(p, (uint32_t)(v >> 32));
    put_u32(p + 4, (uint32_t)v);
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) << 32 | get_u32(p + 4);
}

/* ---------------------------------------------------------------- server */

typedef struct entry {
    struct entry *next;
    char *key;
    char *val; /* NUL-terminated past len, so ADD can strtoll it */
    size_t len;
} entry;

typedef struct conn {
    struct conn *next;
    int fd;
    int authed;
    int dead;
    int challenged;                     /* nonce sent, HELLO not yet seen */
    unsigned char nonce[COLL_NONCE_LEN];
    double since;                       /* accepted at (coll_now_s) */
    char peer[64];
    unsigned char hdr[4]; /* frame being read: header, then body */
    size_t hdr_got;
    unsigned char *body;
    size_t body_len, body_got;
    unsigned char *out; /* replies not yet sent */
    size_t out_len, out_off;
    int parked; /* CMD_GET or CMD_WAIT waiting for keys, else 0 */
    char **keys;
    int nkeys;
} conn;

typedef struct server {
    int listen_fd;
    int wake[2];
    pthread_t thread;
    char *token;
    size_t token_len;
    entry *entries;
    conn *conns;
    double linger_s; /* after stop: serve the remaining clients this long at most */
} server;

/* How long a stopping store (its host, rank 0, is done or failed) keeps
 * serving clients still connected: a rank that is late reads the verdict rank
 * 0 left ("no host list: rank 2 never arrived") instead of a closed socket. */
#define LINGER_MAX_S 1.0

static entry *find(server *s, const char *key)
{
    for (entry *e = s->entries; e; e = e->next)
        if (strcmp(e->key, key) == 0) return e;
    return NULL;
}

static int put(server *s, const char *key, const void *val, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy) return COLL_ENOMEM;
    memcpy(copy, val, len);
    copy[len] = '\0';
    entry *e = find(s, key);
    if (!e) {
        if (!(e = calloc(1, sizeof *e)) || !(e->key = strdup(key))) {
            free(e);
            free(copy);
            return COLL_ENOMEM;
        }
        e->next = s->entries;
        s->entries = e;
    }
    free(e->val);
    e->val = copy;
    e->len = len;
    return COLL_OK;
}

static void drop(conn *c, const char *why)
{
    if (why) fprintf(stderr, "collbench store: dropped connection from %s: %s\n", c->peer, why);
    c->dead = 1;
}

static void flush(conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c->out_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) drop(c, NULL);
            return;
        }
    }
    free(c->out);
    c->out = NULL;
    c->out_len = c->out_off = 0;
}

/* Queues u32 len + a + b and sends what the socket takes now. */
static void reply(conn *c, const void *a, size_t alen, const void *b, size_t blen)
{
    size_t len = 4 + alen + blen;
    unsigned char *out = realloc(c->out, c->out_len + len);
    if (!out) {
        drop(c, "out of memory for a reply");
        return;
    }
    unsigned char *p = out + c->out_len;
    put_u32(p, (uint32_t)(alen + blen));
    if (alen) memcpy(p + 4, a, alen);
    if (blen) memcpy(p + 4 + alen, b, blen);
    c->out = out;
    c->out_len += len;
    flush(c);
}

static void unpark(conn *c)
{
    for (int i = 0; i < c->nkeys; i++) free(c->keys[i]);
    free(c->keys);
    c->keys = NULL;
    c->nkeys = 0;
    c->parked = 0;
}

/* Answers a parked GET/WAIT if its keys exist now; returns 1 if answered. */
static int try_answer(server *s, conn *c)
{
    for (int i = 0; i < c->nkeys; i++)
        if (!find(s, c->keys[i])) return 0;
    if (c->parked == CMD_GET) {
        entry *e = find(s, c->keys[0]);
        reply(c, e->val, e->len, NULL, 0);
    } else {
        reply(c, NULL, 0, NULL, 0);
    }
    unpark(c);
    return 1;
}

static void wake_parked(server *s)
{
    for (conn *c = s->conns; c; c = c->next)
        if (c->parked && !c->dead) try_answer(s, c);
}

/* Cursor over a request body; every take checks what is left. */
typedef struct cursor {
    const unsigned char *p;
    size_t left;
} cursor;

static int take_u32(cursor *k, uint32_t *v)
{
    if (k->left < 4) return -1;
    *v = get_u32(k->p);
    k->p += 4;
    k->left -= 4;
    return 0;
}

static int take_field(cursor *k, uint32_t max, const unsigned char **data, uint32_t *len)
{
    if (take_u32(k, len) || *len > max || *len > k->left) return -1;
    *data = k->p;
    k->p += *len;
    k->left -= *len;
    return 0;
}

/* A key field as a new C string; keys are non-empty and hold no NUL. */
static char *take_key(cursor *k)
{
    const unsigned char *d;
    uint32_t n;
    if (take_field(k, MAX_KEY, &d, &n) || n == 0 || memchr(d, 0, n)) return NULL;
    return strndup((const char *)d, n);
}

static int park(server *s, conn *c, int cmd, char **keys, int nkeys)
{
    c->parked = cmd;
    c->keys = keys;
    c->nkeys = nkeys;
    try_answer(s, c);
    return 0;
}

/* The client's MAC (server 0) or the server's proof (1) over both nonces; the
 * domains keep a transport MAC, or one side's, from passing for the other. */
static void store_mac(const char *token, size_t len, int server, const unsigned char *nonce,
                      const unsigned char *cnonce, unsigned char out[COLL_SHA256_LEN])
{
    static const char client_domain[] = "collbench-store", server_domain[] = "collbench-store-server";
    const void *parts[4] = {server ? server_domain : client_domain, nonce, cnonce, NULL};
    size_t lens[4] = {server ? sizeof server_domain - 1 : sizeof client_domain - 1, COLL_NONCE_LEN,
                      COLL_NONCE_LEN, 0};
    coll_hmac_sha256(token, len, parts, lens, out);
}

static int handle_challenge(conn *c, cursor *k)
{
    if (k->left) return -1;
    if (coll_nonce(c->nonce) != COLL_OK) {
        drop(c, "no random bytes for a challenge");
        return 0;
    }
    c->challenged = 1;
    reply(c, c->nonce, sizeof c->nonce, NULL, 0);
    return 0;
}

static int handle_hello(server *s, conn *c, cursor *k)
{
    const unsigned char *mac, *cnonce;
    uint32_t n, cn;
    if (take_field(k, MAX_KEY, &mac, &n) || take_field(k, MAX_KEY, &cnonce, &cn) || k->left ||
        cn != COLL_NONCE_LEN)
        return -1;
    if (!c->challenged) {
        drop(c, "bad job token: HELLO without a CHALLENGE first");
        return 0;
    }
    c->challenged = 0; /* one answer per nonce */
    if (s->token_len) {
        unsigned char want[COLL_SHA256_LEN];
        store_mac(s->token, s->token_len, 0, c->nonce, cnonce, want);
        if (n != sizeof want || !coll_ct_equal(mac, want, sizeof want)) {
            drop(c, "bad job token");
            return 0;
        }
    }
    c->authed = 1;
    unsigned char proof[COLL_SHA256_LEN];
    store_mac(s->token_len ? s->token : "", s->token_len, 1, c->nonce, cnonce, proof);
    reply(c, proof, sizeof proof, NULL, 0);
    return 0;
}

static int handle_wait(server *s, conn *c, cursor *k)
{
    uint32_t n;
    /* Each key takes at least 5 bytes: bounds n before allocating. */
    if (take_u32(k, &n) || n == 0 || n > k->left / 5) return -1;
    char **keys = calloc(n, sizeof *keys);
    if (!keys) return -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!(keys[i] = take_key(k))) {
            for (uint32_t j = 0; j < i; j++) free(keys[j]);
            free(keys);
            return -1;
        }
    }
    if (k->left) {
        for (uint32_t i = 0; i < n; i++) free(keys[i]);
        free(keys);
        return -1;
    }
    return park(s, c, CMD_WAIT, keys, (int)n);
}

/* Handles one complete request. Returns -1 if it is malformed. */
static int handle(server *s, conn *c, const unsigned char *body, size_t len)
{
    cursor k = {body + 1, len - 1};
    int cmd = body[0];
    if (!c->authed) {
        if (cmd == CMD_CHALLENGE && !c->challenged) return handle_challenge(c, &k);
        if (cmd != CMD_HELLO) {
            drop(c, "bad job token: first requests were not CHALLENGE, HELLO");
            return 0;
        }
        return handle_hello(s, c, &k);
    }
    if (cmd == CMD_HELLO || cmd == CMD_CHALLENGE) return -1; /* authenticated once */
    if (cmd == CMD_WAIT) return handle_wait(s, c, &k);
    char *key = take_key(&k);
    if (!key) return -1;
    int rc = 0;
    if (cmd == CMD_SET) {
        const unsigned char *val;
        uint32_t n;
        if (take_field(&k, MAX_VALUE, &val, &n) || k.left) {
            rc = -1;
        } else if (put(s, key, val, n)) {
            drop(c, "out of memory storing a value");
        } else {
            reply(c, NULL, 0, NULL, 0);
            wake_parked(s);
        }
    } else if (cmd == CMD_GET && !k.left) {
        char **keys = malloc(sizeof *keys);
        if (!keys) {
            rc = -1;
        } else {
            keys[0] = key;
            key = NULL;
            park(s, c, CMD_GET, keys, 1);
        }
    } else if (cmd == CMD_ADD && k.left == 8) {
        entry *e = find(s, key);
        /* Wraps like the two's complement it is: a client's delta must not be UB (fuzzed). */
        int64_t v = (int64_t)((uint64_t)(e ? strtoll(e->val, NULL, 10) : 0) + get_u64(k.p));
        char text[32];
        unsigned char out[8];
        int n = snprintf(text, sizeof text, "%lld", (long long)v);
        if (put(s, key, text, (size_t)n)) {
            drop(c, "out of memory storing a value");
        } else {
            put_u64(out, (uint64_t)v);
            reply(c, out, 8, NULL, 0);
            wake_parked(s);
        }
    } else if (cmd == CMD_CHECK && !k.left) {
        unsigned char exists = find(s, key) != NULL;
        reply(c, &exists, 1, NULL, 0);
    } else {
        rc = -1;
    }
    free(key);
    return rc;
}

/* Reads what the socket has, handling each complete frame. */
static void conn_read(server *s, conn *c)
{
    while (!c->dead) {
        int in_hdr = c->hdr_got < 4;
        unsigned char *dst = in_hdr ? c->hdr + c->hdr_got : c->body + c->body_got;
        size_t want = in_hdr ? 4 - c->hdr_got : c->body_len - c->body_got;
        ssize_t n = recv(c->fd, dst, want, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            /* A member going away is normal; a stranger that never proved itself is logged. */
            drop(c, c->authed ? NULL : "closed before a HELLO with the job token");
            return;
        }
        if (in_hdr) {
            if ((c->hdr_got += (size_t)n) < 4) continue;
            uint32_t len = get_u32(c->hdr);
            uint32_t limit = c->authed ? MAX_FRAME : MAX_HELLO_FRAME;
            if (len == 0 || len > limit) {
                char why[96];
                snprintf(why, sizeof why, "request of %u bytes (limit %u)", len, limit);
                drop(c, why);
                return;
            }
            if (!(c->body = malloc(len))) {
                drop(c, "out of memory for a request");
                return;
            }
            c->body_len = len;
            c->body_got = 0;
            continue;
        }
        if ((c->body_got += (size_t)n) < c->body_len) continue;
        /* Clients are synchronous: a request while one is parked is a protocol error. */
        int bad = c->parked || handle(s, c, c->body, c->body_len) < 0;
        free(c->body);
        c->body = NULL;
        c->hdr_got = 0;
        if (bad && !c->dead) drop(c, "malformed request");
    }
}

static void conn_free(conn *c)
{
    close(c->fd);
    unpark(c);
    free(c->body);
    free(c->out);
    free(c);
}

static void accept_all(server *s)
{
    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                fprintf(stderr, "collbench store: accept on port %d: %s\n",
                        coll_sock_port(s->listen_fd), strerror(errno));
            return;
        }
        conn *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            return;
        }
        c->fd = fd;
        c->since = coll_now_s();
        coll_sock_peer_name(fd, c->peer, sizeof c->peer);
        int waiting = 0;
        for (conn *o = s->conns; o; o = o->next) waiting += !o->authed && !o->dead;
        if (waiting >= MAX_UNAUTHED) {
            char why[96];
            snprintf(why, sizeof why, "%d connections already wait to authenticate", waiting);
            drop(c, why);
            conn_free(c);
            continue;
        }
        c->next = s->conns;
        s->conns = c;
    }
}

static void *serve(void *arg)
{
    server *s = arg;
    struct pollfd *fds = NULL;
    size_t cap = 0;
    double stop_by = 0; /* set once server_stop asks */
    for (;;) {
        size_t n = 2;
        for (conn *c = s->conns; c; c = c->next) n++;
        if (n > cap) {
            struct pollfd *bigger = realloc(fds, n * 2 * sizeof *fds);
            if (!bigger) {
                fprintf(stderr, "collbench store: out of memory, server stops\n");
                break;
            }
            fds = bigger;
            cap = n * 2;
        }
        /* once stopping, the wake byte stays unread: stop polling for it */
        fds[0] = (struct pollfd){.fd = stop_by > 0 ? -1 : s->wake[0], .events = POLLIN};
        fds[1] = (struct pollfd){.fd = s->listen_fd, .events = POLLIN};
        size_t i = 2;
        for (conn *c = s->conns; c; c = c->next, i++)
            fds[i] = (struct pollfd){.fd = c->fd, .events = POLLIN | (c->out_len ? POLLOUT : 0)};
        int strangers = 0;
        for (conn *c = s->conns; c; c = c->next) strangers += !c->authed;
        int ms = stop_by > 0 ? coll_ms_until(stop_by, 1000) : strangers ? 1000 : -1;
        if (stop_by > 0 && (ms == 0 || !s->conns)) break;
        if (poll(fds, n, ms) < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "collbench store: poll: %s, server stops\n", strerror(errno));
            break;
        }
        if (fds[0].revents && stop_by == 0) stop_by = coll_now_s() + s->linger_s;
        i = 2;
        for (conn *c = s->conns; c; c = c->next, i++) {
            if (fds[i].revents & POLLOUT) flush(c);
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) conn_read(s, c);
        }
        double now = coll_now_s();
        for (conn *c = s->conns; c; c = c->next)
            if (!c->authed && !c->dead && now - c->since > UNAUTHED_IDLE_S)
                drop(c, "did not authenticate within 10 s");
        for (conn **pc = &s->conns; *pc;) {
            conn *c = *pc;
            if (c->dead) {
                *pc = c->next;
                conn_free(c);
            } else {
                pc = &c->next;
            }
        }
        /* Accept last: the pollfd array above matched the list before it. */
        if (fds[1].revents) accept_all(s);
    }
    free(fds);
    return NULL;
}

static void server_free(server *s)
{
    if (!s) return;
    for (conn *c = s->conns, *n; c; c = n) {
        n = c->next;
        conn_free(c);
    }
    for (entry *e = s->entries, *n; e; e = n) {
        n = e->next;
        free(e->key);
        free(e->val);
        free(e);
    }
    if (s->listen_fd >= 0) close(s->listen_fd);
    if (s->wake[0] >= 0) close(s->wake[0]);
    if (s->wake[1] >= 0) close(s->wake[1]);
    free(s->token);
    free(s);
}

/* Starts the server thread; takes ownership of listen_fd (closed by server_free). */
static int server_start(int listen_fd, const char *token, double timeout_s, server **out,
                        char *err, size_t errlen)
{
    server *s = calloc(1, sizeof *s);
    if (!s) {
        close(listen_fd);
        return COLL_ENOMEM;
    }
    s->listen_fd = listen_fd;
    s->linger_s = timeout_s / 2 < LINGER_MAX_S ? timeout_s / 2 : LINGER_MAX_S;
    s->wake[0] = s->wake[1] = -1;
    if (token && *token) {
        s->token_len = strlen(token);
        if (!(s->token = strdup(token))) {
            server_free(s);
            return COLL_ENOMEM;
        }
    }
    if (coll_sock_set_nonblocking(listen_fd, 1) || pipe2(s->wake, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "TCP store server: %s", strerror(errno));
        server_free(s);
        return COLL_ESYS;
    }
    int rc = pthread_create(&s->thread, NULL, serve, s);
    if (rc) {
        snprintf(err, errlen, "TCP store server: cannot start thread: %s", strerror(rc));
        server_free(s);
        return COLL_ESYS;
    }
    *out = s;
    return COLL_OK;
}

static void server_stop(server *s)
{
    if (!s) return;
    char b = 1;
    while (write(s->wake[1], &b, 1) < 0 && errno == EINTR) {}
    pthread_join(s->thread, NULL);
    server_free(s);
}

/* Fuzzing entry (store.h): one connection over a socketpair, no thread. */
int coll_tcp_store_feed(const unsigned char *data, size_t len)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) return -1;
    server s = {.listen_fd = -1, .wake = {-1, -1}, .token = "k", .token_len = 1};
    conn c = {.fd = sv[0]};
    snprintf(c.peer, sizeof c.peer, "fuzz");
    s.conns = &c;
    char sink[4096];
    size_t off = 0;
    while (off < len && !c.dead) {
        ssize_t n = send(sv[1], data + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) off += (size_t)n;
        conn_read(&s, &c);
        while (recv(sv[1], sink, sizeof sink, MSG_DONTWAIT) > 0) {} /* replies */
        if (n <= 0 && c.out_len) flush(&c);
    }
    close(sv[1]);
    if (!c.dead) conn_read(&s, &c); /* sees the EOF */
    unpark(&c);
    free(c.body);
    free(c.out);
    close(c.fd);
    for (entry *e = s.entries, *nx; e; e = nx) {
        nx = e->next;
        free(e->key);
        free(e->val);
        free(e);
    }
    return 0;
}

/* ---------------------------------------------------------------- client */

typedef struct tcp_store {
    coll_store base;
    pthread_mutex_t lock; /* one request at a time on the connection */
    int fd;               /* -1 after a timeout or error: reconnect on next use */
    char host[256];
    int port;
    char *token;
    server *srv;
} tcp_store;

static const coll_store_ops tcp_ops;

/* errmsg setter: messages are cut at sizeof errmsg, which is fine for humans. */
__attribute__((format(printf, 2, 3))) static void errf(coll_store *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
    va_end(ap);
}

/* Sends req (+ tail) and reads the reply into *rep (malloc'd, NUL-terminated). */
static int exchange(tcp_store *t, const unsigned char *req, size_t reqlen, const void *tail,
                    size_t taillen, double deadline, unsigned char **rep, size_t *replen)
{
    unsigned char hdr[4];
    int rc = coll_sock_write_all(t->fd, req, reqlen, deadline);
    if (!rc && taillen) rc = coll_sock_write_all(t->fd, tail, taillen, deadline);
    if (!rc) rc = coll_sock_read_all(t->fd, hdr, 4, deadline);
    if (rc) return rc;
    uint32_t n = get_u32(hdr);
    if (n > MAX_FRAME) return COLL_EPROTO;
    unsigned char *buf = malloc((size_t)n + 1);
    if (!buf) return COLL_ENOMEM;
    if ((rc = coll_sock_read_all(t->fd, buf, n, deadline))) {
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
        errf(&t->base,
                 "TCP store %s:%d: timed out after %.3g s waiting for %s", t->host, t->port,
                 t->base.timeout_s, what);
    else if (rc == COLL_EPEER)
        errf(&t->base,
                 "store server at %s:%d closed the connection (during %s; did its host "
                 "process, rank 0, die?)", t->host, t->port, what);
    else
        errf(&t->base, "TCP store %s:%d: %s during %s",
                 t->host, t->port, coll_strerror(rc), what);
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
    return rc;
}

/* Connects and authenticates, unless connected already. */
static int ensure_connected(tcp_store *t, double deadline)
{
    if (t->fd >= 0) return COLL_OK;
    int fd = coll_sock_connect(t->host, t->port, deadline, t->base.errmsg, sizeof t->base.errmsg);
    if (fd < 0) return fd;
    t->fd = fd;
    size_t toklen = t->token ? strlen(t->token) : 0;
    unsigned char creq[5] = {0, 0, 0, 1, CMD_CHALLENGE};
    unsigned char *rep;
    size_t replen;
    int rc = exchange(t, creq, sizeof creq, NULL, 0, deadline, &rep, &replen);
    unsigned char snonce[COLL_NONCE_LEN], hello[9 + COLL_SHA256_LEN + 4 + COLL_NONCE_LEN];
    unsigned char *mac = hello + 9, *cnonce = mac + COLL_SHA256_LEN + 4;
    if (rc == COLL_OK) {
        int bad = replen != COLL_NONCE_LEN;
        if (!bad) memcpy(snonce, rep, sizeof snonce);
        free(rep);
        if (bad) return fail(t, COLL_EPROTO, "CHALLENGE");
        if (coll_nonce(cnonce) != COLL_OK) return fail(t, COLL_ESYS, "HELLO (no random bytes)");
        store_mac(t->token ? t->token : "", toklen, 0, snonce, cnonce, mac);
        put_u32(hello, sizeof hello - 4);
        hello[4] = CMD_HELLO;
        put_u32(hello + 5, COLL_SHA256_LEN);
        put_u32(mac + COLL_SHA256_LEN, COLL_NONCE_LEN);
        rc = exchange(t, hello, sizeof hello, NULL, 0, deadline, &rep, &replen);
    }
    if (rc == COLL_EPEER) {
        /* A server that drops us at HELLO refused our token, unless it is gone
         * altogether: a second short connect tells the two apart. */
        fail(t, rc, "HELLO");
        char why[128];
        int probe = coll_sock_connect(t->host, t->port, coll_now_s() + 0.2, why, sizeof why);
        if (probe < 0) {
            errf(&t->base, "store server at %s:%d (rank 0) is gone: it closed the connection at "
                 "HELLO and accepts no new one (%s)", t->host, t->port, why);
            return COLL_EPEER;
        }
        close(probe);
        errf(&t->base, "store server at %s:%d closed the connection at HELLO (wrong job token?)",
             t->host, t->port);
        return COLL_EAUTH;
    }
    if (rc) return fail(t, rc, "HELLO");
    /* The server answers for the token too: a stranger on the store's port
     * (rank 0 gone, the port taken over) must not be handed the job's keys. */
    unsigned char want[COLL_SHA256_LEN];
    store_mac(t->token ? t->token : "", toklen, 1, snonce, cnonce, want);
    int proven = replen == sizeof want && coll_ct_equal(rep, want, sizeof want);
    free(rep);
    if (!proven) {
        fail(t, COLL_EAUTH, "HELLO");
        errf(&t->base, "store server at %s:%d did not prove it holds the job token (not rank "
             "0's store, or another job's)", t->host, t->port);
        return COLL_EAUTH;
    }
    return COLL_OK;
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
    put_u32(b, v);
    return req_put(r, b, 4);
}

static int check_key(tcp_store *t, const char *key)
{
    size_t n = strlen(key);
    if (n == 0 || n > MAX_KEY) {
        errf(&t->base,
                 "TCP store: key of %zu bytes (must be 1..%u)", n, MAX_KEY);
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
    double deadline = coll_now_s() + t->base.timeout_s;
    put_u32(r->buf, (uint32_t)(r->len - 4 + taillen));
    coll_fault_action fa = coll_fault_hit(COLL_FAULT_STORE, 1);
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

static int tcp_set(coll_store *s, const char *key, const void *val, size_t len)
{
    tcp_store *t = (tcp_store *)s;
    if (len > MAX_VALUE) {
        errf(s, "TCP store: value of %zu bytes for key '%s' "
                 "exceeds the limit of %u", len, key, MAX_VALUE);
        return COLL_EINVAL;
    }
    unsigned char n[4], *rep;
    size_t replen;
    put_u32(n, (uint32_t)len);
    int rc = key_call(t, CMD_SET, key, n, 4, val, len, &rep, &replen);
    if (rc) return rc;
    free(rep);
    return COLL_OK;
}

static int tcp_get(coll_store *s, const char *key, void **val, size_t *len)
{
    unsigned char *rep;
    size_t replen;
    int rc = key_call((tcp_store *)s, CMD_GET, key, NULL, 0, NULL, 0, &rep, &replen);
    if (rc) return rc;
    *val = rep;
    if (len) *len = replen;
    return COLL_OK;
}

static int tcp_add(coll_store *s, const char *key, int64_t delta, int64_t *result)
{
    tcp_store *t = (tcp_store *)s;
    unsigned char d[8], *rep;
    size_t replen;
    put_u64(d, (uint64_t)delta);
    int rc = key_call(t, CMD_ADD, key, d, 8, NULL, 0, &rep, &replen);
    if (rc) return rc;
    if (replen != 8) {
        free(rep);
        errf(s, "TCP store %s:%d: bad reply to ADD of key '%.200s'", t->host, t->port, key);
        return COLL_EPROTO;
    }
    if (result) *result = (int64_t)get_u64(rep);
    free(rep);
    return COLL_OK;
}

static int tcp_wait(coll_store *s, const char *const *keys, int nkeys)
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

static int tcp_check(coll_store *s, const char *key, int *exists)
{
    unsigned char *rep;
    size_t replen;
    int rc = key_call((tcp_store *)s, CMD_CHECK, key, NULL, 0, NULL, 0, &rep, &replen);
    if (rc) return rc;
    *exists = replen == 1 && rep[0];
    free(rep);
    return COLL_OK;
}

static void tcp_destroy(coll_store *s)
{
    tcp_store *t = (tcp_store *)s;
    if (t->fd >= 0) close(t->fd);
    server_stop(t->srv);
    pthread_mutex_destroy(&t->lock);
    free(t->token);
    free(t);
}

static const coll_store_ops tcp_ops = {
    .size = sizeof(coll_store_ops),
    .name = "tcp",
    .set = tcp_set,
    .get = tcp_get,
    .add = tcp_add,
    .wait = tcp_wait,
    .check = tcp_check,
    .destroy = tcp_destroy,
};

/* Where the server's own client connects: the bound address, or loopback for 0.0.0.0. */
static void self_address(int listen_fd, char *host, size_t len)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    if (getsockname(listen_fd, (struct sockaddr *)&sa, &sl) < 0 ||
        sa.sin_addr.s_addr == htonl(INADDR_ANY) ||
        !inet_ntop(AF_INET, &sa.sin_addr, host, (socklen_t)len))
        snprintf(host, len, "127.0.0.1");
}

/* Like torch's TCPStore, a server named by a non-loopback address listens on every
 * interface: MASTER_ADDR often resolves differently on the master itself (Debian
 * maps the hostname to 127.0.1.1). The job token keeps strangers out. */
static const char *bind_host(const char *host)
{
    if (!host || !*host || strncmp(host, "127.", 4) == 0 || strcmp(host, "localhost") == 0)
        return host;
    return "0.0.0.0";
}

int coll_tcp_store_create(const char *host, int port, int is_server, int listen_fd,
                          const char *token, double timeout_s, coll_store **out, char *err,
                          size_t errlen)
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
        if (listen_fd < 0) listen_fd = coll_sock_listen(bind_host(host), port, 128, err, errlen);
        if (listen_fd < 0) {
            tcp_destroy(&t->base);
            return listen_fd;
        }
        t->port = coll_sock_port(listen_fd);
        self_address(listen_fd, t->host, sizeof t->host);
        rc = server_start(listen_fd, token, timeout_s, &t->srv, err, errlen);
    }
    if (!rc && (rc = ensure_connected(t, coll_now_s() + timeout_s)))
        snprintf(err, errlen, "%s", t->base.errmsg);
    if (rc) {
        tcp_destroy(&t->base);
        return rc;
    }
    *out = &t->base;
    return COLL_OK;
}

int coll_tcp_store_port(const coll_store *s)
{
    if (!s || s->ops != &tcp_ops) return -1;
    const tcp_store *t = (const tcp_store *)s;
    return t->srv ? coll_sock_port(t->srv->listen_fd) : -1;
}
