/* Mesh set-up: publish our listening address in the store, connect to the
 * lower ranks, accept the higher ones. Connections are authenticated both ways
 * by challenge-response over the job token (tcp_wire.h), so a stray process
 * cannot take a rank's place, nor replay a hello it captured. */
#include "transport/tcp/tcp_connect.h"
#include "bootstrap/store.h"
#include "core/clock.h"
#include "core/fault.h"
#include "core/hmac.h"
#include "core/hostport.h"
#include "core/sock.h"
#include "core/wire_version.h"
#include "transport/tcp/tcp_wire.h"
#include "coll.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Connections accepted but not yet through the handshake, watched at once so
 * one silent stray connection cannot hold up the real peers. */
#define MAX_PENDING 64

/* What this rank proves and claims in every handshake. */
typedef struct tcp_auth {
    char token[TCP_TOKEN_MAX + 2]; /* +1 for the injected corruption of an empty token */
    size_t tokenlen;
    int rank, size;
} tcp_auth;

void coll__tcp_hello_sign(tcp_hello *h, const char *token, size_t tokenlen,
                          const unsigned char *their_nonce)
{
    static const char domain[] = "collbench-tcp"; /* a MAC for the store cannot pass here */
    const void *parts[4] = {domain, their_nonce, h, h->nonce};
    size_t lens[4] = {sizeof domain - 1, TCP_NONCE_LEN, 16, TCP_NONCE_LEN};
    coll__hmac_sha256(token, tokenlen, parts, lens, h->mac);
}

/* Our hello answering their_nonce; with_nonce: a fresh one of ours to answer. */
static int make_hello(tcp_hello *h, const tcp_auth *a, const unsigned char *their_nonce,
                      int with_nonce)
{
    memset(h, 0, sizeof *h);
    h->magic = TCP_HELLO_MAGIC;
    h->version = TCP_WIRE_VERSION;
    h->rank = a->rank;
    h->size = a->size;
    if (with_nonce && coll__nonce(h->nonce) != COLL_OK) return COLL_ESYS;
    coll__tcp_hello_sign(h, a->token, a->tokenlen, their_nonce);
    return COLL_OK;
}

/* 0 for our magic and version; -1 for another magic (not collbench), 1 for
 * another version; why says which. */
static int check_version(uint32_t magic, uint32_t want_magic, uint32_t version, char *why, size_t n)
{
    if (magic != want_magic) {
        snprintf(why, n, "not a collbench transport peer (magic 0x%08x)", (unsigned)magic);
        return -1;
    }
    if (version != TCP_WIRE_VERSION) {
        coll__wire_version_mismatch(why, n, "it", (unsigned)version);
        return 1;
    }
    return 0;
}

/* 0 if h comes from a member of this job (its mac answers my_nonce); else why not. */
static int check_hello(const tcp_hello *h, const tcp_auth *a, const unsigned char *my_nonce,
                       char *why, size_t n)
{
    if (check_version(h->magic, TCP_HELLO_MAGIC, h->version, why, n)) return -1;
    /* The MAC before anything else the peer claims: an outsider learns nothing. */
    tcp_hello want = *h;
    coll__tcp_hello_sign(&want, a->token, a->tokenlen, my_nonce);
    if (!coll__ct_equal(want.mac, h->mac, TCP_MAC_LEN)) {
        snprintf(why, n, "wrong job token");
        return -1;
    }
    if (h->size != a->size) {
        snprintf(why, n, "world size %d, this job has %d", (int)h->size, a->size);
        return -1;
    }
    return 0;
}

/* get() bounded by our deadline rather than the store's own timeout. */
static int get_by(coll__store *s, const char *key, double deadline, void **val)
{
    double pause = 0.001;
    for (;;) {
        int exists = 0;
        int rc = s->ops->check(s, key, &exists);
        if (rc) return rc;
        if (exists) return coll__store_get(s, key, val, NULL);
        double left = deadline - coll__now_s();
        if (left <= 0) return COLL_ETIMEDOUT;
        coll__sleep_s(pause < left ? pause : left);
        pause = pause * 2 > 0.05 ? 0.05 : pause * 2;
    }
}

/* The peer at published did not prove it holds the job token: why says how. */
static int auth_failed(int fd, int me, const char *published, int wq, const char *why,
                       coll__err *err)
{
    coll__err_set(err, 0,
                  "tcp transport rank %d: the process at %s (rank %d) failed authentication: %s",
                  me, published, wq, why);
    close(fd);
    return COLL_EAUTH;
}

static int connect_lower(coll__store *store, const char *prefix, int rank, int q,
                         const tcp_auth *auth, double deadline, double timeout_s, int sockbuf,
                         int *fd_out, coll__err *err)
{
    char key[256], addr[256], why[160];
    void *val = NULL;
    int me = coll__err_world(err, rank), wq = coll__err_world(err, q); /* for messages */
    int rc = coll__store_key(key, sizeof key, err, prefix, "tcp/addr/%d", q);
    if (rc) return rc;
    rc = get_by(store, key, deadline, &val);
    if (rc == COLL_ETIMEDOUT) {
        return coll__err_set(
            err, rc,
            "tcp transport rank %d: rank %d did not publish its address within %.1f s "
            "(store key %s)",
            me, wq, timeout_s, key);
    }
    if (rc) {
        return coll__err_set(err, rc, "tcp transport rank %d: reading store key %s: %s", me, key,
                             store->err.msg[0] ? store->err.msg : coll_strerror(rc));
    }
    char published[COLL_HOSTPORT_MAX + 8];
    snprintf(published, sizeof published, "%s", (char *)val);
    free(val);
    /* "host:port", or "[ipv6]:port" (hostport.h). */
    int port;
    if (coll__hostport_parse(published, addr, sizeof addr, &port, why, sizeof why)) {
        return coll__err_set(err, COLL_EPROTO,
                             "tcp transport rank %d: rank %d published a malformed address: %s", me,
                             wq, why);
    }
    int fd = coll__sock_connect(addr, port, deadline, why, sizeof why);
    if (fd < 0) {
        coll__err_set(err, 0, "tcp transport rank %d: cannot connect to rank %d: %s", me, wq, why);
        return fd;
    }
    if (sockbuf > 0) coll__sock_set_buffers(fd, sockbuf);
    tcp_challenge ch;
    tcp_hello mine, ack;
    rc = coll__sock_read_all(fd, &ch, sizeof ch, deadline);
    int other = rc ? 0 : check_version(ch.magic, TCP_CHALLENGE_MAGIC, ch.version, why, sizeof why);
    if (other > 0) {
        /* Our version in a hello it can read, so that it names both too. */
        tcp_hello h = {.magic = TCP_HELLO_MAGIC,
                       .version = TCP_WIRE_VERSION,
                       .rank = rank,
                       .size = auth->size};
        coll__sock_write_all(fd, &h, sizeof h, coll__now_s() + 1);
        coll__err_set(err, 0, "tcp transport rank %d: rank %d at %s: %s", me, wq, published, why);
        close(fd);
        return COLL_EPROTO;
    }
    if (other) {
        return auth_failed(fd, me, published, wq, why, err);
    }
    if (!rc) rc = make_hello(&mine, auth, ch.nonce, 1);
    if (!rc) rc = coll__sock_write_all(fd, &mine, sizeof mine, deadline);
    if (!rc) rc = coll__sock_read_all(fd, &ack, sizeof ack, deadline);
    if (rc == COLL_EPEER) {
        coll__err_set(err, 0,
                      "tcp transport rank %d: rank %d at %s refused the connection "
                      "(different job token or world size?)",
                      me, wq, published);
        close(fd);
        return COLL_EAUTH;
    }
    if (rc) {
        coll__err_set(err, 0, "tcp transport rank %d: handshake with rank %d at %s: %s", me, wq,
                      published, coll_strerror(rc));
        close(fd);
        return rc;
    }
    int bad = check_hello(&ack, auth, mine.nonce, why, sizeof why) != 0;
    if (!bad && ack.rank != q) {
        snprintf(why, sizeof why, "answered as rank %d", (int)ack.rank);
        bad = 1;
    }
    if (bad) {
        return auth_failed(fd, me, published, wq, why, err);
    }
    *fd_out = fd;
    return COLL_OK;
}

typedef struct pending_conn {
    int fd;
    size_t got;
    unsigned char nonce[TCP_NONCE_LEN]; /* our challenge to it */
    char peer[64];                      /* named at accept: a closed socket has no peer */
    tcp_hello hello;
} pending_conn;

static void refuse(int rank, pending_conn *c, const char *why)
{
    fprintf(stderr, "collbench: tcp transport rank %d: refused a connection from %s: %s\n", rank,
            c->peer, why);
    close(c->fd);
    c->fd = -1;
}

/* Reads what has arrived of c's hello; once complete, admits or refuses it.
 * Returns 1 if c became peer connection fds[r]. */
static int serve_pending(pending_conn *c, const tcp_auth *auth, int rank, int me, int size,
                         int *fds, double deadline, int *refused)
{
    while (c->got < sizeof c->hello) {
        ssize_t n = recv(c->fd, (char *)&c->hello + c->got, sizeof c->hello - c->got, MSG_DONTWAIT);
        if (n > 0) {
            c->got += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        refuse(me, c, "closed before finishing the handshake");
        return 0;
    }
    char why[160];
    int r = c->hello.rank;
    if (check_hello(&c->hello, auth, c->nonce, why, sizeof why) != 0) {
        (*refused)++;
        refuse(me, c, why);
        return 0;
    }
    if (r <= rank || r >= size || fds[r] >= 0) {
        snprintf(why, sizeof why, "claims rank %d, expected an unconnected rank in %d..%d", r,
                 rank + 1, size - 1);
        (*refused)++;
        refuse(me, c, why);
        return 0;
    }
    tcp_hello answer;
    if (make_hello(&answer, auth, c->hello.nonce, 0) != COLL_OK ||
        coll__sock_write_all(c->fd, &answer, sizeof answer, deadline) != COLL_OK) {
        refuse(me, c, "closed before receiving our answer");
        return 0;
    }
    fds[r] = c->fd;
    c->fd = -1;
    return 1;
}

/* The group's ranks from `from` on that never connected, as world ranks. */
static void missing_ranks(const int *fds, int from, int size, const coll__err *map, char *buf,
                          size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int r = from; r < size && off < len; r++)
        if (fds[r] < 0)
            off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? "," : "",
                                    coll__err_world(map, r));
}

/* A fresh challenge to a connection just accepted; 0, or -1 when it cannot go. */
static int challenge(pending_conn *c, double deadline)
{
    tcp_challenge ch = {.magic = TCP_CHALLENGE_MAGIC, .version = TCP_WIRE_VERSION};
    if (coll__nonce(c->nonce) != COLL_OK) return -1;
    memcpy(ch.nonce, c->nonce, sizeof ch.nonce);
    return coll__sock_write_all(c->fd, &ch, sizeof ch, deadline) == COLL_OK ? 0 : -1;
}

static int accept_higher(int lfd, int rank, int size, const tcp_auth *auth, double deadline,
                         double timeout_s, int *fds, coll__err *err)
{
    pending_conn pend[MAX_PENDING];
    struct pollfd pfd[MAX_PENDING + 1];
    int npend = 0, arrived = 0, refused = 0, expect = size - 1 - rank;
    int me = coll__err_world(err, rank); /* for messages */
    while (arrived < expect) {
        int ms = coll__ms_until(deadline, 1000);
        if (ms == 0) break;
        int n = 0;
        if (npend < MAX_PENDING) pfd[n++] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < npend; i++)
            pfd[n++] = (struct pollfd){.fd = pend[i].fd, .events = POLLIN};
        if (poll(pfd, (nfds_t)n, ms) < 0 && errno != EINTR) {
            coll__err_set(err, 0, "tcp transport rank %d: poll: %s", me, strerror(errno));
            for (int i = 0; i < npend; i++) close(pend[i].fd);
            return COLL_ESYS;
        }
        for (int i = 0; i < npend; i++)
            if (pfd[n - npend + i].revents)
                arrived += serve_pending(&pend[i], auth, rank, me, size, fds, deadline, &refused);
        int kept = 0; /* drop finished entries */
        for (int i = 0; i < npend; i++)
            if (pend[i].fd >= 0) pend[kept++] = pend[i];
        npend = kept;
        while (npend < MAX_PENDING) {
            int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) break;
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            pend[npend] = (pending_conn){.fd = fd};
            coll__sock_peer_name(fd, pend[npend].peer, sizeof pend[npend].peer);
            if (challenge(&pend[npend], deadline) != 0) {
                refuse(me, &pend[npend], "closed before receiving our challenge");
                continue;
            }
            arrived += serve_pending(&pend[npend], auth, rank, me, size, fds, deadline, &refused);
            if (pend[npend].fd >= 0) npend++;
        }
    }
    for (int i = 0; i < npend; i++)
        refuse(me, &pend[i], "no complete handshake by the end of set-up");
    if (arrived == expect) return COLL_OK;
    char missing[200];
    missing_ranks(fds, rank + 1, size, err, missing, sizeof missing);
    char note[96] = "";
    if (refused)
        snprintf(note, sizeof note, " (%d connection%s refused, see the log above)", refused,
                 refused == 1 ? "" : "s");
    int first = rank + 1; /* one rank missing: the launcher hears whom we waited for */
    while (first < size && fds[first] >= 0) first++;
    return coll__err_blame(
        err, COLL_ETIMEDOUT, strchr(missing, ',') ? -1 : first,
        "tcp transport rank %d: timed out after %.1f s: rank%s %s never connected%s", me, timeout_s,
        strchr(missing, ',') ? "s" : "", missing, note);
}

int coll__tcp_mesh_connect(coll__store *store, const char *prefix, int rank, int size,
                           const char *host, const char *token, double timeout_s, int sockbuf,
                           int *fds, coll__err *err)
{
    for (int i = 0; i < size; i++) fds[i] = -1;
    if (size == 1) return COLL_OK;
    if (token && strlen(token) > TCP_TOKEN_MAX) {
        return coll__err_set(err, COLL_EINVAL, "tcp transport: job token longer than %d bytes",
                             TCP_TOKEN_MAX);
    }
    if (!host || !*host) host = "127.0.0.1";
    double deadline = coll__now_s() + timeout_s;
    tcp_auth auth = {.rank = rank, .size = size, .tokenlen = token ? strlen(token) : 0};
    if (token) memcpy(auth.token, token, auth.tokenlen);

    char why[200];
    int lfd = coll__sock_listen(host, 0, size + 16, why, sizeof why);
    if (lfd < 0) {
        coll__err_set(err, 0, "tcp transport rank %d: %s", coll__err_world(err, rank), why);
        return lfd;
    }
    /* Accepted sockets inherit the buffer sizes, set before the handshake sizes the window. */
    if (sockbuf > 0) coll__sock_set_buffers(lfd, sockbuf);
    char key[256], addr[300];
    int alen = coll__hostport_format(addr, sizeof addr, host, coll__sock_port(lfd));
    int rc = coll__store_key(key, sizeof key, err, prefix, "tcp/addr/%d", rank);
    if (rc) {
        close(lfd);
        return rc;
    }
    if ((rc = coll__store_set(store, key, addr, (size_t)alen))) {
        coll__err_set(err, 0, "tcp transport rank %d: publishing store key %s: %s",
                      coll__err_world(err, rank), key,
                      store->err.msg[0] ? store->err.msg : coll_strerror(rc));
        close(lfd);
        return rc;
    }
    /* Injected: a hello with a wrong token must be refused by the lower ranks. */
    if (coll__fault_hit(COLL_FAULT_CONNECT, 0) == COLL_FAULT_CORRUPT) {
        if (auth.tokenlen == 0) auth.tokenlen = 1; /* "" becomes "\x20" */
        auth.token[0] ^= 0x20;
    }
    for (int q = 0; q < rank && rc == COLL_OK; q++)
        rc = connect_lower(store, prefix, rank, q, &auth, deadline, timeout_s, sockbuf, &fds[q],
                           err);
    if (rc == COLL_OK) rc = accept_higher(lfd, rank, size, &auth, deadline, timeout_s, fds, err);
    close(lfd);
    if (rc) {
        for (int i = 0; i < size; i++) {
            if (fds[i] >= 0) close(fds[i]);
            fds[i] = -1;
        }
    }
    return rc;
}
