/* Rendezvous stores (TCP and file) and the socket helpers under them.
 * The same behaviour tests run against both stores; TCP-only tests cover
 * authentication, hostile clients, ports and inherited listening sockets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bootstrap/store.h"
#include "bootstrap/store_kv.h"
#include "coll.h"
#include "core/clock.h"
#include "core/hmac.h"
#include "core/sock.h"
#include "core/wire_version.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define LONG_TIMEOUT 20.0

enum { KIND_TCP, KIND_FILE };

typedef struct env {
    int kind;
    coll__store *server; /* TCP: the server's own store; file: a first client */
    int port;
    char dir[64];
    char path[96];
} env;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A new client store, or NULL (safe to call from helper threads). */
static coll__store *try_client(env *e, double timeout_s)
{
    coll__store *s = NULL;
    coll__err cerr = {.rank = -1};
    int rc = e->kind == KIND_TCP
                 ? coll__tcp_store_create("127.0.0.1", e->port, 0, -1, TOKEN, timeout_s, &s, &cerr)
                 : coll__file_store_create(e->path, timeout_s, &s, &cerr);
    if (rc) fprintf(stderr, "client: %s\n", cerr.msg);
    return rc ? NULL : s;
}

static coll__store *client(env *e, double timeout_s)
{
    coll__store *s = try_client(e, timeout_s);
    assert_non_null(s);
    return s;
}

static int setup(void **state, int kind)
{
    env *e = calloc(1, sizeof *e);
    coll__err cerr = {.rank = -1};
    e->kind = kind;
    if (kind == KIND_TCP) {
        int rc = coll__tcp_store_create(NULL, 0, 1, -1, TOKEN, LONG_TIMEOUT, &e->server, &cerr);
        if (rc) fprintf(stderr, "server: %s\n", cerr.msg);
        assert_int_equal(rc, COLL_OK);
        e->port = coll__tcp_store_port(e->server);
    } else {
        snprintf(e->dir, sizeof e->dir, "/tmp/test_store.XXXXXX");
        assert_non_null(mkdtemp(e->dir));
        snprintf(e->path, sizeof e->path, "%s/store", e->dir);
        e->server = client(e, LONG_TIMEOUT);
    }
    *state = e;
    return 0;
}

static int setup_tcp(void **state) { return setup(state, KIND_TCP); }
static int setup_file(void **state) { return setup(state, KIND_FILE); }

static int teardown(void **state)
{
    env *e = *state;
    coll__store_destroy(e->server);
    if (e->kind == KIND_FILE) {
        unlink(e->path);
        rmdir(e->dir);
    }
    free(e);
    return 0;
}

/* get() into a NUL-terminated string, asserting success. */
static char *get_str(coll__store *s, const char *key)
{
    void *v = NULL;
    size_t n = 0;
    int rc = coll__store_get(s, key, &v, &n);
    if (rc) fprintf(stderr, "get %s: %s\n", key, s->err.msg);
    assert_int_equal(rc, COLL_OK);
    assert_int_equal(strlen(v), n);
    return v;
}

/* ------------------------------------------------------------ both stores */

static void test_set_get_check(void **state)
{
    env *e = *state;
    coll__store *a = client(e, LONG_TIMEOUT), *b = client(e, LONG_TIMEOUT);
    assert_int_equal(coll__store_set(a, "k", "v1", 2), COLL_OK);
    char *v = get_str(b, "k");
    assert_string_equal(v, "v1");
    free(v);
    assert_int_equal(coll__store_set(b, "k", "second", 6), COLL_OK);
    v = get_str(a, "k");
    assert_string_equal(v, "second");
    free(v);
    int exists = -1;
    assert_int_equal(a->ops->check(a, "k", &exists), COLL_OK);
    assert_int_equal(exists, 1);
    assert_int_equal(b->ops->check(b, "nope", &exists), COLL_OK);
    assert_int_equal(exists, 0);
    /* An empty value is a value. */
    assert_int_equal(coll__store_set(a, "empty", "", 0), COLL_OK);
    v = get_str(e->server, "empty");
    assert_string_equal(v, "");
    free(v);
    coll__store_destroy(a);
    coll__store_destroy(b);
}

/* Helper threads do not call cmocka asserts (they longjmp): they report rc. */
typedef struct later {
    env *e;
    int delay_ms;
    const char *keys[4];
    int nkeys;
    int rc;
} later;

/* Thread: sets each key (value = key) after a delay, from its own store. */
static void *set_later(void *arg)
{
    later *l = arg;
    coll__store *s = try_client(l->e, LONG_TIMEOUT);
    l->rc = s ? COLL_OK : COLL_EPEER;
    for (int i = 0; i < l->nkeys && s && !l->rc; i++) {
        sleep_ms(l->delay_ms);
        l->rc = coll__store_set(s, l->keys[i], l->keys[i], strlen(l->keys[i]));
    }
    coll__store_destroy(s);
    return NULL;
}

static void test_get_blocks_until_set(void **state)
{
    env *e = *state;
    coll__store *s = client(e, LONG_TIMEOUT);
    int exists = -1;
    assert_int_equal(s->ops->check(s, "late", &exists), COLL_OK);
    assert_int_equal(exists, 0);
    later l = {e, 100, {"late"}, 1, -1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, set_later, &l), 0);
    char *v = get_str(s, "late");
    assert_string_equal(v, "late");
    free(v);
    pthread_join(t, NULL);
    assert_int_equal(l.rc, COLL_OK);
    coll__store_destroy(s);
}

static void test_wait_many_keys(void **state)
{
    env *e = *state;
    coll__store *s = client(e, LONG_TIMEOUT);
    later l = {e, 30, {"w/a", "w/b", "w/c"}, 3, -1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, set_later, &l), 0);
    const char *keys[] = {"w/c", "w/a", "w/b"};
    assert_int_equal(coll__store_wait(s, keys, 3), COLL_OK);
    for (int i = 0; i < 3; i++) {
        int exists = 0;
        assert_int_equal(s->ops->check(s, keys[i], &exists), COLL_OK);
        assert_int_equal(exists, 1);
    }
    pthread_join(t, NULL);
    assert_int_equal(l.rc, COLL_OK);
    coll__store_destroy(s);
}

#define ADDERS 4
#define ADDS 40

typedef struct adder {
    env *e;
    int rc;
} adder;

static void *add_many(void *arg)
{
    adder *a = arg;
    coll__store *s = try_client(a->e, LONG_TIMEOUT);
    a->rc = s ? COLL_OK : COLL_EPEER;
    for (int i = 0; i < ADDS && s && !a->rc; i++) {
        int64_t r;
        a->rc = coll__store_add(s, "counter", (i % 2) ? 3 : -1, &r);
    }
    coll__store_destroy(s);
    return NULL;
}

static void test_add_concurrent_sums_exactly(void **state)
{
    env *e = *state;
    pthread_t t[ADDERS];
    adder a[ADDERS];
    for (int i = 0; i < ADDERS; i++) {
        a[i] = (adder){e, -1};
        assert_int_equal(pthread_create(&t[i], NULL, add_many, &a[i]), 0);
    }
    for (int i = 0; i < ADDERS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(a[i].rc, COLL_OK);
    }
    const int64_t want = ADDERS * (ADDS / 2) * (3 - 1);
    int64_t r = -1;
    assert_int_equal(coll__store_add(e->server, "counter", 0, &r), COLL_OK);
    assert_int_equal(r, want);
    /* The value is decimal text, readable by get(). */
    char *v = get_str(e->server, "counter");
    assert_int_equal(strtoll(v, NULL, 10), want);
    free(v);
    /* A missing key counts from 0. */
    assert_int_equal(coll__store_add(e->server, "fresh", -7, &r), COLL_OK);
    assert_int_equal(r, -7);
}

static void test_timeout_names_key(void **state)
{
    env *e = *state;
    coll__store *s = client(e, 0.3);
    void *v = NULL;
    size_t n;
    assert_int_equal(coll__store_get(s, "missing/key", &v, &n), COLL_ETIMEDOUT);
    assert_null(v);
    assert_non_null(strstr(s->err.msg, "missing/key"));
    const char *keys[] = {"there", "not-there"};
    assert_int_equal(coll__store_set(s, "there", "x", 1), COLL_OK);
    assert_int_equal(coll__store_wait(s, keys, 2), COLL_ETIMEDOUT);
    assert_non_null(strstr(s->err.msg, "not-there"));
    /* The store still works after a timeout. */
    assert_int_equal(coll__store_set(s, "after", "ok", 2), COLL_OK);
    char *got = get_str(s, "after");
    assert_string_equal(got, "ok");
    free(got);
    coll__store_destroy(s);
}

static void test_large_value(void **state)
{
    env *e = *state;
    size_t len = 1u << 20;
    unsigned char *big = malloc(len);
    for (size_t i = 0; i < len; i++) big[i] = (unsigned char)(i * 131 + (i >> 11));
    coll__store *a = client(e, LONG_TIMEOUT), *b = client(e, LONG_TIMEOUT);
    assert_int_equal(coll__store_set(a, "big", big, len), COLL_OK);
    void *v = NULL;
    size_t n = 0;
    assert_int_equal(coll__store_get(b, "big", &v, &n), COLL_OK);
    assert_int_equal(n, len);
    assert_memory_equal(v, big, len);
    assert_int_equal(((unsigned char *)v)[len], 0);
    free(v);
    free(big);
    coll__store_destroy(a);
    coll__store_destroy(b);
}

/* ------------------------------------------------------------ TCP only */

/* Runs fn with stderr sent to a file and returns what it wrote (malloc'd). */
static char *capture_stderr(void (*fn)(void *), void *arg)
{
    char path[] = "/tmp/test_store_err.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *buf = calloc(1, 4096);
    assert_true(pread(fd, buf, 4095, 0) >= 0);
    close(fd);
    unlink(path);
    return buf;
}

typedef struct bad_client {
    env *e;
    const char *token;
    int rc;
    coll__err err;
} bad_client;

static void connect_with_token(void *arg)
{
    bad_client *b = arg;
    coll__store *s = NULL;
    b->rc = coll__tcp_store_create("127.0.0.1", b->e->port, 0, -1, b->token, LONG_TIMEOUT, &s,
                                   &b->err);
    coll__store_destroy(s);
}

static void test_wrong_token_refused(void **state)
{
    env *e = *state;
    coll__store *good = client(e, LONG_TIMEOUT);
    assert_int_equal(coll__store_set(good, "before", "1", 1), COLL_OK);
    const char *tokens[] = {"not-the-token", NULL};
    for (int i = 0; i < 2; i++) {
        bad_client b = {e, tokens[i], 0, {.rank = -1}};
        char *log = capture_stderr(connect_with_token, &b);
        assert_int_equal(b.rc, COLL_EAUTH);
        char port[32];
        snprintf(port, sizeof port, "127.0.0.1:%d", e->port);
        assert_non_null(strstr(b.err.msg, port));
        assert_non_null(strstr(log, "collbench store: dropped connection from 127.0.0.1:"));
        assert_non_null(strstr(log, "bad job token"));
        free(log);
    }
    char *v = get_str(good, "before");
    assert_string_equal(v, "1");
    free(v);
    coll__store_destroy(good);
}

static int raw_connect(env *e)
{
    char err[256];
    int fd = coll__sock_connect("127.0.0.1", e->port, coll__now_s() + LONG_TIMEOUT, err,
                                sizeof err);
    assert_true(fd >= 0);
    return fd;
}

/* Sends bytes and expects the server to hang up (not to answer, not to crash). */
static void expect_hangup(int fd, const void *bytes, size_t len)
{
    assert_int_equal(coll__sock_write_all(fd, bytes, len, coll__now_s() + LONG_TIMEOUT), COLL_OK);
    char c;
    assert_int_equal(coll__sock_read_all(fd, &c, 1, coll__now_s() + LONG_TIMEOUT), COLL_EPEER);
    close(fd);
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* CHALLENGE on fd: the server's nonce. */
static void raw_challenge(int fd, unsigned char nonce[COLL_NONCE_LEN])
{
    unsigned char req[5] = {0, 0, 0, 1, 7 /* CHALLENGE */}, hdr[4];
    double dl = coll__now_s() + LONG_TIMEOUT;
    assert_int_equal(coll__sock_write_all(fd, req, sizeof req, dl), COLL_OK);
    assert_int_equal(coll__sock_read_all(fd, hdr, 4, dl), COLL_OK);
    assert_memory_equal(hdr, "\0\0\0\x14", 4);
    assert_int_equal(coll__sock_read_all(fd, hdr, 4, dl), COLL_OK); /* the wire version */
    assert_int_equal(coll__sock_read_all(fd, nonce, COLL_NONCE_LEN, dl), COLL_OK);
}

/* A client nonce of the tests: fixed, the server must not care. */
static const unsigned char CNONCE[COLL_NONCE_LEN] = "client-nonce-16b";

/* HELLO with mac and CNONCE; 1 when the server answered (*proof, its proof of
 * the token, when asked for), 0 when it hung up. */
static int raw_send_hello(int fd, const unsigned char mac[COLL_SHA256_LEN], unsigned char *proof)
{
    unsigned char req[9 + COLL_SHA256_LEN + 4 + COLL_NONCE_LEN + 8], hdr[4], got[COLL_SHA256_LEN];
    put_be32(req, sizeof req - 4);
    req[4] = 1; /* HELLO */
    put_be32(req + 5, COLL_SHA256_LEN);
    memcpy(req + 9, mac, COLL_SHA256_LEN);
    put_be32(req + 9 + COLL_SHA256_LEN, COLL_NONCE_LEN);
    memcpy(req + 13 + COLL_SHA256_LEN, CNONCE, COLL_NONCE_LEN);
    put_be32(req + 13 + COLL_SHA256_LEN + COLL_NONCE_LEN, 4);
    put_be32(req + 17 + COLL_SHA256_LEN + COLL_NONCE_LEN, COLL_WIRE_VERSION);
    double dl = coll__now_s() + LONG_TIMEOUT;
    assert_int_equal(coll__sock_write_all(fd, req, sizeof req, dl), COLL_OK);
    int rc = coll__sock_read_all(fd, hdr, 4, dl);
    if (rc == COLL_EPEER) return 0;
    assert_int_equal(rc, COLL_OK);
    if (memcmp(hdr, "\0\0\0\0", 4) == 0) { /* refused: an empty answer, then the close */
        assert_int_equal(coll__sock_read_all(fd, got, 1, dl), COLL_EPEER);
        return 0;
    }
    assert_memory_equal(hdr, "\0\0\0\x20", 4);
    assert_int_equal(coll__sock_read_all(fd, got, sizeof got, dl), COLL_OK);
    if (proof) memcpy(proof, got, sizeof got);
    return 1;
}

/* The client's MAC (server 0) or the server's proof (1) for nonce and CNONCE. */
static void store_mac_for(int server, const unsigned char *nonce,
                          unsigned char mac[COLL_SHA256_LEN])
{
    const char *domain = server ? "collbench-store-server" : "collbench-store";
    const void *parts[4] = {domain, nonce, CNONCE, NULL};
    size_t lens[4] = {strlen(domain), COLL_NONCE_LEN, COLL_NONCE_LEN, 0};
    coll__hmac_sha256(TOKEN, strlen(TOKEN), parts, lens, mac);
}

static void mac_for(const unsigned char *nonce, unsigned char mac[COLL_SHA256_LEN])
{
    store_mac_for(0, nonce, mac);
}

/* Opens a raw connection that has passed CHALLENGE and HELLO. */
static int raw_hello(env *e)
{
    int fd = raw_connect(e);
    unsigned char nonce[COLL_NONCE_LEN], mac[COLL_SHA256_LEN];
    raw_challenge(fd, nonce);
    unsigned char proof[COLL_SHA256_LEN], want[COLL_SHA256_LEN];
    mac_for(nonce, mac);
    assert_true(raw_send_hello(fd, mac, proof));
    store_mac_for(1, nonce, want); /* the server holds the token too */
    assert_memory_equal(proof, want, sizeof want);
    return fd;
}

/* A HELLO captured on one connection answers no other connection's challenge. */
static void replay(void *arg)
{
    env *e = arg;
    int first = raw_connect(e), second = raw_connect(e);
    unsigned char n1[COLL_NONCE_LEN], n2[COLL_NONCE_LEN], mac[COLL_SHA256_LEN];
    raw_challenge(first, n1);
    mac_for(n1, mac); /* what an eavesdropper saw */
    raw_challenge(second, n2);
    assert_memory_not_equal(n1, n2, COLL_NONCE_LEN);
    assert_false(raw_send_hello(second, mac, NULL));
    close(second);
    assert_true(raw_send_hello(first, mac, NULL)); /* the genuine one, once */
    close(first);
}

static void test_replayed_hello_is_refused(void **state)
{
    env *e = *state;
    char *log = capture_stderr(replay, e);
    assert_non_null(strstr(log, "bad job token"));
    free(log);
}

/* A listener on the store's port that is not the job's store: it answers
 * CHALLENGE and acknowledges any HELLO, but cannot prove the token. */
typedef struct impostor {
    int listen_fd;
    int answered;
} impostor;

static void *impostor_serve(void *arg)
{
    impostor *im = arg;
    char err[128];
    double dl = coll__now_s() + LONG_TIMEOUT;
    int fd = coll__sock_accept(im->listen_fd, dl, err, sizeof err);
    if (fd < 0) return NULL;
    unsigned char req[80],
        nonce[8 + COLL_NONCE_LEN] = {0, 0, 0, 4 + COLL_NONCE_LEN, 0, 0, 0, COLL_WIRE_VERSION};
    unsigned char ack[4 + COLL_SHA256_LEN] = {0, 0, 0, COLL_SHA256_LEN}; /* a proof of zeros */
    uint32_t n;
    if (coll__sock_read_all(fd, req, 5, dl) == COLL_OK && /* CHALLENGE */
        coll__sock_write_all(fd, nonce, sizeof nonce, dl) == COLL_OK &&
        coll__sock_read_all(fd, req, 4, dl) == COLL_OK &&
        (n = (uint32_t)req[0] << 24 | (uint32_t)req[1] << 16 | (uint32_t)req[2] << 8 | req[3]) <=
            sizeof req &&
        coll__sock_read_all(fd, req, n, dl) == COLL_OK && req[0] == 1 /* HELLO */)
        im->answered = coll__sock_write_all(fd, ack, sizeof ack, dl) == COLL_OK;
    close(fd);
    return NULL;
}

/* A client finds out that the server on the port does not hold the token. */
static void test_server_must_prove_token(void **state)
{
    (void)state;
    char err[256];
    coll__err cerr = {.rank = -1};
    impostor im = {coll__sock_listen("127.0.0.1", 0, 4, err, sizeof err), 0};
    assert_true(im.listen_fd >= 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, impostor_serve, &im), 0);
    coll__store *s = NULL;
    int rc = coll__tcp_store_create("127.0.0.1", coll__sock_port(im.listen_fd), 0, -1, TOKEN,
                                    LONG_TIMEOUT, &s, &cerr);
    pthread_join(t, NULL);
    close(im.listen_fd);
    assert_true(im.answered);
    assert_int_equal(rc, COLL_EAUTH);
    assert_null(s);
    assert_non_null(strstr(cerr.msg, "did not prove it holds the job token"));
}

static void hostile_clients(void *arg)
{
    env *e = arg;
    const char http[] = "GET / HTTP/1.0\r\n\r\n";
    expect_hangup(raw_connect(e), http, sizeof http - 1);
    unsigned char huge[4] = {0xff, 0xff, 0xff, 0xf0};
    expect_hangup(raw_hello(e), huge, 4);
    /* Frame of 9 bytes: SET whose key length claims more than the frame holds. */
    unsigned char lying[13] = {0, 0, 0, 9, 2, 0, 0x10, 0, 0, 'k', 'e', 'y', '!'};
    expect_hangup(raw_hello(e), lying, sizeof lying);
    unsigned char unknown[5] = {0, 0, 0, 1, 99};
    expect_hangup(raw_hello(e), unknown, sizeof unknown);
    /* Half a frame, then gone. */
    int fd = raw_hello(e);
    assert_int_equal(coll__sock_write_all(fd, lying, 6, coll__now_s() + LONG_TIMEOUT), COLL_OK);
    close(fd);
}

static void test_hostile_clients_do_not_hurt_server(void **state)
{
    env *e = *state;
    coll__store *good = client(e, LONG_TIMEOUT);
    assert_int_equal(coll__store_set(good, "x", "1", 1), COLL_OK);
    char *log = capture_stderr(hostile_clients, e);
    assert_non_null(strstr(log, "request of 4294967280 bytes"));
    assert_non_null(strstr(log, "malformed request"));
    free(log);
    /* Old and new clients keep working. */
    coll__store *fresh = client(e, LONG_TIMEOUT);
    assert_int_equal(coll__store_set(fresh, "y", "2", 1), COLL_OK);
    char *v = get_str(good, "y");
    assert_string_equal(v, "2");
    free(v);
    v = get_str(fresh, "x");
    assert_string_equal(v, "1");
    free(v);
    coll__store_destroy(fresh);
    coll__store_destroy(good);
}

/* Strangers waiting to authenticate: a silent one is closed after 3 s, and
 * members still get in meanwhile and afterwards. (More strangers than the
 * server keeps waiting: tests/fault/test_store_flood.c.) */
static void crowd(void *arg)
{
    env *e = arg;
    int fds[8];
    for (int i = 0; i < 8; i++) fds[i] = raw_connect(e);
    coll__store *member = client(e, LONG_TIMEOUT);
    assert_int_equal(coll__store_set(member, "during-crowd", "1", 1), COLL_OK);
    coll__store_destroy(member);
    char c;
    double t0 = coll__now_s();
    assert_int_equal(coll__sock_read_all(fds[0], &c, 1, coll__now_s() + LONG_TIMEOUT), COLL_EPEER);
    assert_true(coll__now_s() - t0 < 4.5);
    for (int i = 0; i < 8; i++) close(fds[i]);
}

static void test_unauthenticated_capped_and_closed(void **state)
{
    env *e = *state;
    char *log = capture_stderr(crowd, e);
    assert_non_null(strstr(log, "did not authenticate within 3 s"));
    free(log);
    coll__store *fresh = client(e, LONG_TIMEOUT);
    assert_int_equal(coll__store_set(fresh, "after-crowd", "1", 1), COLL_OK);
    coll__store_destroy(fresh);
}

static void test_port_zero_and_client_port(void **state)
{
    env *e = *state;
    assert_true(e->port > 0);
    coll__store *c = client(e, LONG_TIMEOUT);
    assert_int_equal(coll__tcp_store_port(c), -1);
    coll__store_destroy(c);
}

static void test_inherited_listen_fd_and_server_exit(void **state)
{
    (void)state;
    char err[256];
    coll__err cerr = {.rank = -1};
    int lfd = coll__sock_listen(NULL, 0, 16, err, sizeof err);
    assert_true(lfd >= 0);
    int port = coll__sock_port(lfd);
    assert_true(port > 0);
    coll__store *srv = NULL, *c = NULL;
    /* No token: anyone may connect. */
    assert_int_equal(coll__tcp_store_create(NULL, 0, 1, lfd, NULL, LONG_TIMEOUT, &srv, &cerr),
                     COLL_OK);
    assert_int_equal(coll__tcp_store_port(srv), port);
    assert_int_equal(coll__tcp_store_create("localhost", port, 0, -1, "", LONG_TIMEOUT, &c, &cerr),
                     COLL_OK);
    assert_int_equal(coll__store_set(srv, "from-server", "s", 1), COLL_OK);
    char *v = get_str(c, "from-server");
    assert_string_equal(v, "s");
    free(v);
    coll__store_destroy(srv);
    /* The server is gone: the client says so and names it. */
    void *got = NULL;
    assert_int_equal(coll__store_get(c, "anything", &got, NULL), COLL_EPEER);
    char want[80];
    snprintf(want, sizeof want, "store server at localhost:%d closed the connection", port);
    assert_non_null(strstr(c->err.msg, want));
    /* Once up, a server that refuses has exited: no retrying it until the
     * timeout (a failed rank's last "I gave up" would hold its exit that long). */
    double t0 = coll__now_s();
    assert_int_equal(coll__store_set(c, "after", "x", 1), COLL_EPEER);
    assert_true(coll__now_s() - t0 < LONG_TIMEOUT / 4);
    assert_non_null(strstr(c->err.msg, "is gone"));
    coll__store_destroy(c);
}

static void test_client_without_server_times_out(void **state)
{
    (void)state;
    char err[256];
    coll__err cerr = {.rank = -1};
    int lfd = coll__sock_listen(NULL, 0, 1, err, sizeof err);
    int port = coll__sock_port(lfd);
    close(lfd); /* nobody listens there now */
    coll__store *c = NULL;
    assert_int_equal(coll__tcp_store_create("127.0.0.1", port, 0, -1, TOKEN, 0.3, &c, &cerr),
                     COLL_ETIMEDOUT);
    assert_null(c);
    char want[40];
    snprintf(want, sizeof want, "127.0.0.1:%d", port);
    assert_non_null(strstr(cerr.msg, want));
}

/* ------------------------------------------------------------ file only */

static void test_file_store_bad_path(void **state)
{
    (void)state;
    coll__store *s = NULL;
    coll__err cerr = {.rank = -1};
    assert_int_equal(coll__file_store_create("/nonexistent-dir/x/store", 1.0, &s, &cerr),
                     COLL_ESYS);
    assert_null(s);
    assert_non_null(strstr(cerr.msg, "/nonexistent-dir/x/store"));
}

static void test_file_store_survives_reopen(void **state)
{
    env *e = *state;
    assert_int_equal(coll__store_set(e->server, "persist", "yes", 3), COLL_OK);
    coll__store *later = client(e, LONG_TIMEOUT);
    char *v = get_str(later, "persist");
    assert_string_equal(v, "yes");
    free(v);
    coll__store_destroy(later);
}

/* ------------------------------------------------------------ sockets */

typedef struct late_listener {
    int port;
    int rc;
} late_listener;

static void *listen_late(void *arg)
{
    late_listener *l = arg;
    char err[256];
    sleep_ms(150);
    int lfd = coll__sock_listen("127.0.0.1", l->port, 4, err, sizeof err);
    l->rc = lfd;
    if (lfd < 0) return NULL;
    int fd = coll__sock_accept(lfd, coll__now_s() + LONG_TIMEOUT, err, sizeof err);
    if (fd >= 0) {
        l->rc = coll__sock_write_all(fd, "hi", 2, coll__now_s() + LONG_TIMEOUT);
        close(fd);
    } else {
        l->rc = fd;
    }
    close(lfd);
    return NULL;
}

static void test_sock_connect_retries_until_listener(void **state)
{
    (void)state;
    char err[256];
    int lfd = coll__sock_listen(NULL, 0, 1, err, sizeof err);
    late_listener l = {coll__sock_port(lfd), 0};
    close(lfd);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, listen_late, &l), 0);
    int fd = coll__sock_connect("127.0.0.1", l.port, coll__now_s() + LONG_TIMEOUT, err, sizeof err);
    if (fd < 0) fprintf(stderr, "connect: %s\n", err);
    assert_true(fd >= 0);
    char buf[3] = "";
    assert_int_equal(coll__sock_read_all(fd, buf, 2, coll__now_s() + LONG_TIMEOUT), COLL_OK);
    assert_string_equal(buf, "hi");
    pthread_join(t, NULL);
    assert_int_equal(l.rc, COLL_OK);
    /* The listener closed: reads see the peer gone. */
    assert_int_equal(coll__sock_read_all(fd, buf, 1, coll__now_s() + LONG_TIMEOUT), COLL_EPEER);
    close(fd);
}

static void test_sock_read_timeout_and_dead_peer(void **state)
{
    (void)state;
    char err[256];
    int lfd = coll__sock_listen(NULL, 0, 4, err, sizeof err);
    assert_true(lfd >= 0);
    int port = coll__sock_port(lfd);
    assert_true(port > 0);
    assert_int_equal(coll__sock_accept(lfd, coll__now_s() + 0.05, err, sizeof err), COLL_ETIMEDOUT);
    int c = coll__sock_connect(NULL, port, coll__now_s() + LONG_TIMEOUT, err, sizeof err);
    assert_true(c >= 0);
    int s = coll__sock_accept(lfd, coll__now_s() + LONG_TIMEOUT, err, sizeof err);
    assert_true(s >= 0);
    char buf[8];
    assert_int_equal(coll__sock_read_all(c, buf, 4, coll__now_s() + 0.1), COLL_ETIMEDOUT);
    assert_int_equal(coll__sock_write_all(s, "abcd", 4, coll__now_s() + LONG_TIMEOUT), COLL_OK);
    assert_int_equal(coll__sock_read_all(c, buf, 4, coll__now_s() + LONG_TIMEOUT), COLL_OK);
    assert_memory_equal(buf, "abcd", 4);
    close(s);
    /* Writing to a closed peer is an error code, not SIGPIPE (which would kill us). */
    static char chunk[1 << 16];
    int rc = COLL_OK;
    for (int i = 0; i < 1000 && rc == COLL_OK; i++)
        rc = coll__sock_write_all(c, chunk, sizeof chunk, coll__now_s() + LONG_TIMEOUT);
    assert_int_equal(rc, COLL_EPEER);
    close(c);
    close(lfd);
}

static void test_ct_equal(void **state)
{
    (void)state;
    assert_true(coll__ct_equal("abc", "abc", 3));
    assert_false(coll__ct_equal("abc", "abd", 3));
    assert_false(coll__ct_equal("xbc", "abc", 3));
    assert_true(coll__ct_equal("", "", 0));
}

static void test_store_key(void **state)
{
    (void)state;
    char key[16];
    coll__err cerr = {.rank = -1};
    assert_int_equal(coll__store_key(key, sizeof key, &cerr, "c0/", "tcp/addr/%d", 3), COLL_OK);
    assert_string_equal(key, "c0/tcp/addr/3");
    assert_string_equal(cerr.msg, "");
    /* 16 bytes hold 15 characters: one more is an error, not a cut key */
    assert_int_equal(coll__store_key(key, sizeof key, &cerr, "c0/", "tcp/addr/%d", 123), COLL_OK);
    assert_int_equal(coll__store_key(key, sizeof key, &cerr, "c0/", "tcp/addr/%d", 1234),
                     COLL_EINVAL);
    assert_non_null(strstr(cerr.msg, "does not fit in 16 bytes"));
    assert_int_equal(coll__store_key(key, 4, NULL, "c12/", "x"), COLL_EINVAL);
    assert_string_equal(key, "c12");
}

/* The table every store keeps: last put wins, ADD's counter wraps. */
static void test_kv_table(void **state)
{
    (void)state;
    coll__kv t = {NULL};
    int64_t v = 0;
    void *out = NULL;
    size_t len = 0;
    assert_null(coll__kv_find(&t, "a"));
    assert_int_equal(coll__kv_put(&t, "a", "one", 3), COLL_OK);
    assert_int_equal(coll__kv_put_n(&t, "ab", 1, "two", 3), COLL_OK); /* key "a" */
    assert_int_equal(coll__kv_copy_out(coll__kv_find(&t, "a"), &out, &len), COLL_OK);
    assert_int_equal(len, 3);
    assert_string_equal(out, "two");
    free(out);
    assert_int_equal(coll__kv_add(&t, "n", 5, &v), COLL_OK);
    assert_int_equal(coll__kv_add(&t, "n", -7, &v), COLL_OK);
    assert_int_equal(v, -2);
    assert_string_equal(coll__kv_find(&t, "n")->val, "-2");
    assert_int_equal(coll__kv_put(&t, "m", "9223372036854775807", 19), COLL_OK);
    assert_int_equal(coll__kv_add(&t, "m", 1, &v), COLL_OK);
    assert_true(v == INT64_MIN);
    coll__kv_clear(&t);
    assert_null(t.head);
}

/* Named per store so a failure says which one. */
#define TCP(fn)                                   \
    {                                             \
        "tcp_" #fn, fn, setup_tcp, teardown, NULL \
    }
#define FILE_ONLY(fn)                               \
    {                                               \
        "file_" #fn, fn, setup_file, teardown, NULL \
    }
#define BOTH(fn) TCP(fn), FILE_ONLY(fn)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_set_get_check),
        BOTH(test_get_blocks_until_set),
        BOTH(test_wait_many_keys),
        BOTH(test_add_concurrent_sums_exactly),
        BOTH(test_timeout_names_key),
        BOTH(test_large_value),
        TCP(test_wrong_token_refused),
        TCP(test_hostile_clients_do_not_hurt_server),
        TCP(test_replayed_hello_is_refused),
        cmocka_unit_test(test_server_must_prove_token),
        TCP(test_unauthenticated_capped_and_closed),
        TCP(test_port_zero_and_client_port),
        cmocka_unit_test(test_inherited_listen_fd_and_server_exit),
        cmocka_unit_test(test_client_without_server_times_out),
        cmocka_unit_test(test_file_store_bad_path),
        FILE_ONLY(test_file_store_survives_reopen),
        cmocka_unit_test(test_sock_connect_retries_until_listener),
        cmocka_unit_test(test_sock_read_timeout_and_dead_peer),
        cmocka_unit_test(test_ct_equal),
        cmocka_unit_test(test_store_key),
        cmocka_unit_test(test_kv_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
