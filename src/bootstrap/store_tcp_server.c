/* The TCP store's server, like torch's TCPStore: rank 0 runs it as a thread
 * (one poll() loop over every client socket, a pipe to wake it for shutdown)
 * and talks to it over loopback like every other client (store_tcp_client.c).
 * Every length is checked against a limit before anything is allocated; a
 * client that breaks the protocol loses its connection, the server goes on.
 * Wire format: store_tcp_wire.h. */
#include "bootstrap/store_tcp_wire.h"
#include "bootstrap/store.h"
#include "bootstrap/store_kv.h"
#include "coll.h"
#include "core/clock.h"
#include "core/hmac.h"
#include "core/sock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* Before HELLO only a token fits: strangers cannot make the server allocate much. */
#define MAX_HELLO_FRAME (MAX_KEY + 16u)

/* Strangers cannot crowd out the members. A connection must finish the
 * handshake (two round trips) within UNAUTHED_IDLE_S. At most
 * MAX_UNAUTHED connections wait to authenticate at once (fewer where the
 * process's descriptor limit is low: strangers must not take the descriptors
 * rank 0 needs for its own transport); a new connection past that evicts
 * the oldest waiting one instead of being refused, so a member that connects
 * during a flood gets its turn, and a member evicted mid-handshake reconnects
 * (store_tcp_client.c). */
#define MAX_UNAUTHED 1024
#define UNAUTHED_IDLE_S 3.0

/* The first drops of strangers are logged one by one, with their address;
 * after that a flood is summed up every STRANGER_SUMMARY_S and when it ends,
 * not a line each. */
#define STRANGER_LOGS 16
#define STRANGER_SUMMARY_S 10.0

typedef struct conn {
    struct conn *next;
    struct coll__store_tcp_server *srv; /* logs its drop */
    int fd;
    int authed;
    int dead;
    int challenged; /* nonce sent, HELLO not yet seen */
    unsigned char nonce[COLL_NONCE_LEN];
    double since; /* accepted at (coll__now_s) */
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

typedef struct coll__store_tcp_server {
    int listen_fd; /* -1 once stopping */
    int port;      /* listen_fd's, kept: the server thread closes listen_fd */
    int wake[2];
    pthread_t thread;
    char *token;
    size_t token_len;
    coll__kv entries;
    conn *conns;
    double linger_s; /* after stop: serve the remaining clients this long at most */
    int max_unauthed;
    double listen_paused_until; /* out of descriptors and no stranger to evict */
    unsigned logged;            /* strangers' drops logged one by one so far */
    unsigned long unlogged;     /* drops since the last summary */
    double unlogged_since;
    char last_unlogged[168]; /* "ADDR: why" of the newest one */
    /* Connections refused for a wrong job token, for the rendezvous' verdict
     * (read from another thread: under refused_mu). */
    pthread_mutex_t refused_mu;
    unsigned refused;
    char last_refused[64];
} server;

/* How long a stopping store (its host, rank 0, is done or failed) keeps
 * serving clients still connected: a rank that is late reads the verdict rank
 * 0 left ("no host list: rank 2 never arrived") instead of a closed socket. */
#define LINGER_MAX_S 1.0

static coll__kv_entry *find(server *s, const char *key) { return coll__kv_find(&s->entries, key); }


/* The summary of drops not logged one by one: every STRANGER_SUMMARY_S, at
 * most once a second when no stranger is left (quiet: the flood is over),
 * and when the server stops (final). */
static void log_unlogged(server *s, double now, int quiet, int final)
{
    double waited = now - s->unlogged_since;
    if (!s->unlogged || (!final && waited < (quiet ? 1.0 : STRANGER_SUMMARY_S))) return;
    fprintf(stderr,
            "collbench store: dropped %lu more connections from strangers in %.0f s (the "
            "last from %s)\n",
            s->unlogged, now - s->unlogged_since, s->last_unlogged);
    s->unlogged = 0;
    s->unlogged_since = now;
}

static void log_drop(server *s, const conn *c, const char *why, double now)
{
    if (!s) return;
    if (c->authed || s->logged < STRANGER_LOGS) {
        fprintf(stderr, "collbench store: dropped connection from %s: %s\n", c->peer, why);
        if (!c->authed && ++s->logged == STRANGER_LOGS)
            fprintf(stderr,
                    "collbench store: %u strangers dropped; further ones are counted, "
                    "summed up every %.0f s\n",
                    STRANGER_LOGS, STRANGER_SUMMARY_S);
        return;
    }
    if (!s->unlogged) s->unlogged_since = now;
    s->unlogged++;
    snprintf(s->last_unlogged, sizeof s->last_unlogged, "%s: %.96s", c->peer, why);
    log_unlogged(s, now, 0, 0);
}

static void count_refused(server *s, const conn *c)
{
    pthread_mutex_lock(&s->refused_mu);
    s->refused++;
    snprintf(s->last_refused, sizeof s->last_refused, "%s", c->peer);
    pthread_mutex_unlock(&s->refused_mu);
}

/* Marks c for closing (the poll loop closes it) and logs why at once, before
 * any answer goes out; why is NULL for a member leaving normally. The first
 * reason wins. */
static void drop(conn *c, const char *why)
{
    if (c->dead) return;
    c->dead = 1;
    if (why) log_drop(c->srv, c, why, coll__now_s());
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
    coll__be_put_u32(p, (uint32_t)(alen + blen));
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
        coll__kv_entry *e = find(s, c->keys[0]);
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
    *v = coll__be_get_u32(k->p);
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

static int handle_challenge(conn *c, cursor *k)
{
    if (k->left) return -1;
    if (coll__nonce(c->nonce) != COLL_OK) {
        drop(c, "no random bytes for a challenge");
        return 0;
    }
    c->challenged = 1;
    unsigned char version[4];
    coll__be_put_u32(version, COLL_WIRE_VERSION);
    reply(c, version, sizeof version, c->nonce, sizeof c->nonce);
    return 0;
}

static int handle_hello(server *s, conn *c, cursor *k)
{
    const unsigned char *mac, *cnonce, *ver;
    uint32_t n, cn, vn;
    if (take_field(k, MAX_KEY, &mac, &n) || take_field(k, MAX_KEY, &cnonce, &cn)) return -1;
    /* Version 2 sent no version field. */
    unsigned version = !k->left                                            ? 2
                       : take_field(k, 4, &ver, &vn) || vn != 4 || k->left ? 0
                                                                           : coll__be_get_u32(ver);
    if (!version) return -1;
    if (!c->challenged) {
        drop(c, "bad job token: HELLO without a CHALLENGE first");
        return 0;
    }
    if (version != COLL_WIRE_VERSION) {
        char why[200];
        coll__wire_version_mismatch(why, sizeof why, "the client", version);
        drop(c, why);
        return 0;
    }
    if (cn != COLL_NONCE_LEN) return -1;
    c->challenged = 0; /* one answer per nonce */
    if (s->token_len) {
        unsigned char want[COLL_SHA256_LEN];
        coll__store_tcp_mac(s->token, s->token_len, 0, c->nonce, cnonce, want);
        if (n != sizeof want || !coll__ct_equal(mac, want, sizeof want)) {
            /* An empty answer says "refused", so the client stops at once
             * instead of retrying as it does after an eviction. */
            drop(c, "bad job token");
            count_refused(s, c);
            reply(c, NULL, 0, NULL, 0);
            return 0;
        }
    }
    c->authed = 1;
    unsigned char proof[COLL_SHA256_LEN];
    coll__store_tcp_mac(s->token_len ? s->token : "", s->token_len, 1, c->nonce, cnonce, proof);
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
        } else if (coll__kv_put(&s->entries, key, val, n)) {
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
        int64_t v;
        unsigned char out[8];
        if (coll__kv_add(&s->entries, key, (int64_t)coll__be_get_u64(k.p), &v)) {
            drop(c, "out of memory storing a value");
        } else {
            coll__be_put_u64(out, (uint64_t)v);
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
            drop(c, c->authed       ? NULL
                    : c->challenged ? "closed mid-handshake, after our CHALLENGE and before a "
                                      "HELLO: the peer exited or was killed, or it is a collbench "
                                      "build older than wire version 3, which cannot read the "
                                      "version in our answer (run the same build on every host)"
                                    : "closed before a HELLO with the job token");
            return;
        }
        if (in_hdr) {
            if ((c->hdr_got += (size_t)n) < 4) continue;
            uint32_t len = coll__be_get_u32(c->hdr);
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
    if (c->fd >= 0) close(c->fd);
    unpark(c);
    free(c->body);
    free(c->out);
    free(c);
}

static conn *oldest_stranger(server *s)
{
    conn *old = NULL;
    for (conn *o = s->conns; o; o = o->next)
        if (!o->authed && !o->dead && (!old || o->since < old->since)) old = o;
    return old;
}

/* Makes room for one more connection by evicting the stranger that has waited
 * longest; its descriptor is closed now when the process is out of them.
 * Returns 0 when no stranger is left to evict. */
static int evict_oldest(server *s, int close_now, const char *why)
{
    conn *old = oldest_stranger(s);
    if (!old) return 0;
    drop(old, why);
    if (close_now) {
        close(old->fd);
        old->fd = -1;
    }
    return 1;
}

/* Accepts what the backlog holds; waiting: the strangers already connected. */
static void accept_all(server *s, int waiting)
{
    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE) {
                if (evict_oldest(s, 1, "evicted: the process ran out of descriptors")) {
                    waiting--;
                    continue;
                }
                /* Nothing to evict: leave the rest in the backlog for a while
                 * rather than spin on a listening socket that stays readable. */
                s->listen_paused_until = coll__now_s() + 0.1;
                return;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                fprintf(stderr, "collbench store: accept on port %d: %s\n",
                        coll__sock_port(s->listen_fd), strerror(errno));
            return;
        }
        conn *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            return;
        }
        c->fd = fd;
        c->srv = s;
        c->since = coll__now_s();
        coll__sock_peer_name(fd, c->peer, sizeof c->peer);
        if (waiting >= s->max_unauthed) {
            char why[96];
            snprintf(why, sizeof why,
                     "evicted: %d connections wait to authenticate, this one "
                     "longest",
                     waiting);
            if (evict_oldest(s, 0, why)) waiting--;
        }
        waiting++;
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
    char idle_why[64];
    snprintf(idle_why, sizeof idle_why, "did not authenticate within %.0f s", UNAUTHED_IDLE_S);
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
        double now = coll__now_s();
        int paused = now < s->listen_paused_until;
        fds[1] = (struct pollfd){.fd = paused || s->listen_fd < 0 ? -1 : s->listen_fd,
                                 .events = POLLIN};
        size_t i = 2;
        for (conn *c = s->conns; c; c = c->next, i++)
            fds[i] = (struct pollfd){.fd = c->fd, .events = POLLIN | (c->out_len ? POLLOUT : 0)};
        int strangers = 0;
        for (conn *c = s->conns; c; c = c->next) strangers += !c->authed;
        int ms = stop_by > 0 ? coll__ms_until(stop_by, 1000) : strangers || s->unlogged ? 1000 : -1;
        if (paused && (ms < 0 || ms > 100)) ms = 100;
        if (stop_by > 0 && (ms == 0 || !s->conns)) break;
        if (poll(fds, n, ms) < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "collbench store: poll: %s, server stops\n", strerror(errno));
            break;
        }
        if (fds[0].revents && stop_by == 0) {
            /* Stopping: serve the clients connected now, take no new ones (a
             * rank re-creating a group on this port must reach the next server). */
            stop_by = coll__now_s() + s->linger_s;
            close(s->listen_fd);
            s->listen_fd = -1;
        }
        i = 2;
        for (conn *c = s->conns; c; c = c->next, i++) {
            if (fds[i].revents & POLLOUT) flush(c);
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) conn_read(s, c);
        }
        now = coll__now_s();
        for (conn *c = s->conns; c; c = c->next)
            if (!c->authed && !c->dead && now - c->since > UNAUTHED_IDLE_S) drop(c, idle_why);
        int waiting = 0;
        for (conn **pc = &s->conns; *pc;) {
            conn *c = *pc;
            waiting += !c->dead && !c->authed;
            if (c->dead) {
                *pc = c->next;
                conn_free(c);
            } else {
                pc = &c->next;
            }
        }
        log_unlogged(s, now, !waiting, 0);
        /* Accept last: the pollfd array above matched the list before it. */
        if (fds[1].revents && s->listen_fd >= 0) accept_all(s, waiting);
    }
    log_unlogged(s, coll__now_s(), 1, 1);
    free(fds);
    return NULL;
}

/* MAX_UNAUTHED, or a quarter of the descriptor limit where that is lower:
 * the other three quarters stay for rank 0's transport, files and members. */
static int max_unauthed(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY) return MAX_UNAUTHED;
    rlim_t quarter = rl.rlim_cur / 4;
    if (quarter < 16) return 16;
    return quarter < MAX_UNAUTHED ? (int)quarter : MAX_UNAUTHED;
}

static void server_free(server *s)
{
    if (!s) return;
    for (conn *c = s->conns, *n; c; c = n) {
        n = c->next;
        conn_free(c);
    }
    coll__kv_clear(&s->entries);
    if (s->listen_fd >= 0) close(s->listen_fd);
    if (s->wake[0] >= 0) close(s->wake[0]);
    if (s->wake[1] >= 0) close(s->wake[1]);
    free(s->token);
    pthread_mutex_destroy(&s->refused_mu);
    free(s);
}

/* Starts the server thread; takes ownership of listen_fd (closed by server_free). */
int coll__store_tcp_server_start(int listen_fd, const char *token, double timeout_s,
                                 coll__store_tcp_server **out, coll__err *err)
{
    server *s = calloc(1, sizeof *s);
    if (!s) {
        close(listen_fd);
        return COLL_ENOMEM;
    }
    s->listen_fd = listen_fd;
    pthread_mutex_init(&s->refused_mu, NULL);
    s->port = coll__sock_port(listen_fd);
    s->max_unauthed = max_unauthed();
    s->linger_s = timeout_s / 2 < LINGER_MAX_S ? timeout_s / 2 : LINGER_MAX_S;
    s->wake[0] = s->wake[1] = -1;
    if (token && *token) {
        s->token_len = strlen(token);
        if (!(s->token = strdup(token))) {
            server_free(s);
            return COLL_ENOMEM;
        }
    }
    if (coll__sock_set_nonblocking(listen_fd, 1) || pipe2(s->wake, O_CLOEXEC) < 0) {
        coll__err_set(err, 0, "TCP store server: %s", strerror(errno));
        server_free(s);
        return COLL_ESYS;
    }
    int rc = pthread_create(&s->thread, NULL, serve, s);
    if (rc) {
        coll__err_set(err, 0, "TCP store server: cannot start thread: %s", strerror(rc));
        server_free(s);
        return COLL_ESYS;
    }
    *out = s;
    return COLL_OK;
}

void coll__store_tcp_server_stop(coll__store_tcp_server *s)
{
    if (!s) return;
    char b = 1;
    while (write(s->wake[1], &b, 1) < 0 && errno == EINTR) {
    }
    pthread_join(s->thread, NULL);
    server_free(s);
}

int coll__store_tcp_server_port(const coll__store_tcp_server *s) { return s->port; }

unsigned coll__store_tcp_server_refused(coll__store_tcp_server *s, char *last, size_t len)
{
    pthread_mutex_lock(&s->refused_mu);
    unsigned n = s->refused;
    if (len) snprintf(last, len, "%s", s->last_refused);
    pthread_mutex_unlock(&s->refused_mu);
    return n;
}

/* Fuzzing entry (store.h): one connection over a socketpair, no thread. */
int coll__tcp_store_feed(const unsigned char *data, size_t len)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) return -1;
    server s = {.listen_fd = -1,
                .wake = {-1, -1},
                .token = "k",
                .token_len = 1,
                .refused_mu = PTHREAD_MUTEX_INITIALIZER};
    conn c = {.fd = sv[0]};
    snprintf(c.peer, sizeof c.peer, "fuzz");
    s.conns = &c;
    char sink[4096];
    size_t off = 0;
    while (off < len && !c.dead) {
        ssize_t n = send(sv[1], data + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) off += (size_t)n;
        conn_read(&s, &c);
        while (recv(sv[1], sink, sizeof sink, MSG_DONTWAIT) > 0) {
        } /* replies */
        if (n <= 0 && c.out_len) flush(&c);
    }
    close(sv[1]);
    if (!c.dead) conn_read(&s, &c); /* sees the EOF */
    unpark(&c);
    free(c.body);
    free(c.out);
    close(c.fd);
    coll__kv_clear(&s.entries);
    return 0;
}
