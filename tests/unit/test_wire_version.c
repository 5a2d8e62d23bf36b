/* Builds of different wire versions (core/wire_version.h) against this one:
 * stubs that speak the older store and transport handshakes (version 2, as
 * the builds before version 3 did) or a later one (4), each in a thread of
 * this process, against the real store client and server and the real
 * transport set-up. Every mismatch must stop at once, naming both versions
 * and what to do, and the stub must see nothing derived from the token.
 * Threads never call cmocka asserts; they record, the main thread checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/store.h"
#include "coll.h"
#include "core/clock.h"
#include "core/hmac.h"
#include "core/sock.h"
#include "core/wire_version.h"
#include "transport/tcp/tcp_connect.h"
#include "transport/tcp/tcp_wire.h"

#define TOKEN "0123456789abcdef0123456789abcdef"
#define LONG_S 30.0 /* the timeout the mismatch must not wait out */
#define QUICK_S 5.0 /* "at once", generously for sanitizers on busy cores */

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* stderr into a file while fn runs; wait_for: poll the file up to QUICK_S for
 * that text (the store logs from its own thread). Returns what was logged. */
static char *capture_stderr(void (*fn)(void *), void *arg, const char *wait_for)
{
    char path[] = "/tmp/test_wire_version.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn(arg);
    char *buf = calloc(1, 8192);
    double end = coll__now_s() + QUICK_S;
    do {
        fflush(stderr);
        assert_true(pread(fd, buf, 8191, 0) >= 0);
        if (!wait_for || strstr(buf, wait_for)) break;
        coll__sleep_s(0.02);
    } while (coll__now_s() < end);
    dup2(saved, 2);
    close(saved);
    close(fd);
    unlink(path);
    return buf;
}

/* ---- a store server of another version ---- */

typedef struct store_stub {
    int listen_fd;
    unsigned version; /* 2: the bare nonce; else led by this version */
    size_t after;     /* bytes the client sent after CHALLENGE */
    unsigned char hello[128];
} store_stub;

static void *store_server_stub(void *arg)
{
    store_stub *st = arg;
    char err[128];
    double dl = coll__now_s() + LONG_S;
    int fd = coll__sock_accept(st->listen_fd, dl, err, sizeof err);
    if (fd < 0) return NULL;
    unsigned char req[5], reply[8 + COLL_NONCE_LEN] = {0};
    size_t n = st->version == 2 ? 4 + COLL_NONCE_LEN : sizeof reply;
    put_be32(reply, (uint32_t)(n - 4));
    if (st->version != 2) put_be32(reply + 4, st->version);
    if (coll__sock_read_all(fd, req, sizeof req, dl) == COLL_OK &&
        coll__sock_write_all(fd, reply, n, dl) == COLL_OK) {
        ssize_t got; /* everything until the client hangs up */
        while (st->after < sizeof st->hello &&
               (got = read(fd, st->hello + st->after, sizeof st->hello - st->after)) > 0)
            st->after += (size_t)got;
    }
    close(fd);
    return NULL;
}

static void store_client_meets(store_stub *st, coll__err *cerr, int *rc, double *took)
{
    char err[128];
    st->listen_fd = coll__sock_listen("127.0.0.1", 0, 4, err, sizeof err);
    assert_true(st->listen_fd >= 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, store_server_stub, st), 0);
    coll__store *s = NULL;
    double t0 = coll__now_s();
    *rc = coll__tcp_store_create("127.0.0.1", coll__sock_port(st->listen_fd), 0, -1, TOKEN, LONG_S,
                                 &s, cerr);
    *took = coll__now_s() - t0;
    pthread_join(t, NULL);
    close(st->listen_fd);
    assert_null(s);
}

/* A store server of a build before version 3 answers CHALLENGE with the bare
 * nonce: the client stops at once, sending nothing more. */
static void test_store_client_meets_version_2_server(void **state)
{
    (void)state;
    store_stub st = {.version = 2};
    coll__err cerr = {.rank = -1};
    int rc;
    double took;
    store_client_meets(&st, &cerr, &rc, &took);
    assert_int_equal(rc, COLL_EPROTO);
    assert_true(took < QUICK_S);
    assert_non_null(strstr(cerr.msg, "speaks collbench wire version 2, this build speaks 3"));
    assert_non_null(strstr(cerr.msg, "run the same collbench build on every host"));
    assert_int_equal(st.after, 0); /* no HELLO: nothing derived from the token */
}

/* A later build's server: the client names both versions and sends a HELLO
 * with its version and no mac, so that server can name both too. */
static void test_store_client_meets_version_4_server(void **state)
{
    (void)state;
    store_stub st = {.version = 4};
    coll__err cerr = {.rank = -1};
    int rc;
    double took;
    store_client_meets(&st, &cerr, &rc, &took);
    assert_int_equal(rc, COLL_EPROTO);
    assert_true(took < QUICK_S);
    assert_non_null(strstr(cerr.msg, "speaks collbench wire version 4, this build speaks 3"));
    /* HELLO: length, command 1, mac field, cnonce field, then the version field last */
    assert_true(st.after > 9 + COLL_SHA256_LEN + 4 + COLL_NONCE_LEN);
    assert_int_equal(st.hello[4], 1);
    assert_int_equal(get_be32(st.hello + st.after - 4), COLL_WIRE_VERSION);
    static const unsigned char zero[COLL_SHA256_LEN];
    assert_memory_equal(st.hello + 9, zero, COLL_SHA256_LEN);
}

/* ---- a store client of another version, against this build's server ---- */

typedef struct client_stub {
    int port;
    unsigned version;   /* 2: hangs up on an answer that is not the bare nonce */
    uint32_t reply_len; /* what the server answered CHALLENGE with */
    unsigned char reply[64];
} client_stub;

static void store_client_stub(void *arg)
{
    client_stub *cs = arg;
    char err[128];
    double dl = coll__now_s() + LONG_S;
    int fd = coll__sock_connect("127.0.0.1", cs->port, dl, err, sizeof err);
    if (fd < 0) return;
    unsigned char req[5] = {0, 0, 0, 1, 7 /* CHALLENGE */}, hdr[4];
    if (coll__sock_write_all(fd, req, sizeof req, dl) == COLL_OK &&
        coll__sock_read_all(fd, hdr, 4, dl) == COLL_OK &&
        (cs->reply_len = get_be32(hdr)) <= sizeof cs->reply &&
        coll__sock_read_all(fd, cs->reply, cs->reply_len, dl) == COLL_OK && cs->version != 2) {
        /* a later build: a HELLO with its version and no mac */
        unsigned char hello[9 + COLL_SHA256_LEN + 4 + COLL_NONCE_LEN + 8] = {0};
        put_be32(hello, sizeof hello - 4);
        hello[4] = 1;
        put_be32(hello + 5, COLL_SHA256_LEN);
        put_be32(hello + 9 + COLL_SHA256_LEN, COLL_NONCE_LEN);
        put_be32(hello + sizeof hello - 8, 4);
        put_be32(hello + sizeof hello - 4, cs->version);
        coll__sock_write_all(fd, hello, sizeof hello, dl);
        char c;
        coll__sock_read_all(fd, &c, 1, dl); /* until the server drops us */
    }
    close(fd);
}

static char *server_meets(client_stub *cs, const char *wait_for)
{
    coll__err cerr = {.rank = -1};
    coll__store *srv = NULL;
    assert_int_equal(coll__tcp_store_create("127.0.0.1", 0, 1, -1, TOKEN, LONG_S, &srv, &cerr),
                     COLL_OK);
    cs->port = coll__tcp_store_port(srv);
    char *log = capture_stderr(store_client_stub, cs, wait_for);
    coll__store_destroy(srv);
    return log;
}

/* A client of a build before version 3 cannot read our answer (it wants the
 * bare 16-byte nonce) and hangs up; the server says what that means. */
static void test_store_server_meets_version_2_client(void **state)
{
    (void)state;
    client_stub cs = {.version = 2};
    char *log = server_meets(&cs, "older than wire version 3");
    assert_int_equal(cs.reply_len, 4 + COLL_NONCE_LEN); /* not 16: version 2 stops at once */
    assert_int_equal(get_be32(cs.reply), COLL_WIRE_VERSION);
    assert_non_null(strstr(log, "closed mid-handshake, after our CHALLENGE and before a HELLO: "
                                "the peer exited or was killed, or it is a collbench build older "
                                "than wire version 3"));
    free(log);
}

static void test_store_server_meets_version_4_client(void **state)
{
    (void)state;
    client_stub cs = {.version = 4};
    char *log = server_meets(&cs, "wire version 4");
    assert_non_null(strstr(log, "the client speaks collbench wire version 4, this build speaks 3"));
    free(log);
}

/* ---- the transport ---- */

typedef struct tcp_stub {
    coll__store *store;
    int listen_fd;
    unsigned version;
    int got_hello;
    tcp_hello hello;         /* what this build's rank sent us */
    tcp_challenge challenge; /* what this build's rank challenged us with */
} tcp_stub;

/* Rank 0 of another build: challenges with its version, reads the hello. */
static void *tcp_acceptor_stub(void *arg)
{
    tcp_stub *ts = arg;
    char err[128];
    double dl = coll__now_s() + LONG_S;
    int fd = coll__sock_accept(ts->listen_fd, dl, err, sizeof err);
    if (fd < 0) return NULL;
    tcp_challenge ch = {.magic = TCP_CHALLENGE_MAGIC, .version = ts->version};
    if (coll__sock_write_all(fd, &ch, sizeof ch, dl) == COLL_OK)
        ts->got_hello = coll__sock_read_all(fd, &ts->hello, sizeof ts->hello, dl) == COLL_OK;
    close(fd);
    return NULL;
}

static void test_tcp_rank_meets_version_2_acceptor(void **state)
{
    (void)state;
    char err[128], addr[64];
    tcp_stub ts = {.version = 2};
    ts.listen_fd = coll__sock_listen("127.0.0.1", 0, 4, err, sizeof err);
    assert_true(ts.listen_fd >= 0);
    assert_int_equal(coll__mem_store_create(LONG_S, &ts.store), COLL_OK);
    int alen = snprintf(addr, sizeof addr, "127.0.0.1:%d", coll__sock_port(ts.listen_fd));
    assert_int_equal(coll__store_set(ts.store, "job/tcp/addr/0", addr, (size_t)alen), COLL_OK);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, tcp_acceptor_stub, &ts), 0);
    int fds[2];
    coll__err cerr;
    coll__err_init(&cerr, NULL, 0);
    double t0 = coll__now_s();
    int rc = coll__tcp_mesh_connect(ts.store, "job/", 1, 2, "127.0.0.1", "tok", LONG_S, 0, fds,
                                    &cerr);
    double took = coll__now_s() - t0;
    pthread_join(t, NULL);
    close(ts.listen_fd);
    coll__store_destroy(ts.store);
    assert_int_equal(rc, COLL_EPROTO);
    assert_true(took < QUICK_S);
    assert_non_null(strstr(cerr.msg, "rank 0 at 127.0.0.1:"));
    assert_non_null(strstr(cerr.msg, "speaks collbench wire version 2, this build speaks 3"));
    /* Our hello told it our version, and carries no mac. */
    assert_true(ts.got_hello);
    assert_int_equal(ts.hello.magic, TCP_HELLO_MAGIC);
    assert_int_equal(ts.hello.version, COLL_WIRE_VERSION);
    static const unsigned char zero[TCP_MAC_LEN];
    assert_memory_equal(ts.hello.mac, zero, TCP_MAC_LEN);
}

/* Rank 1 of another build: reads rank 0's challenge, answers with its hello. */
static void *tcp_connector_stub(void *arg)
{
    tcp_stub *ts = arg;
    void *val = NULL;
    if (coll__store_get(ts->store, "job/tcp/addr/0", &val, NULL)) return NULL;
    int port = atoi(strrchr((char *)val, ':') + 1);
    free(val);
    char err[128];
    double dl = coll__now_s() + LONG_S;
    int fd = coll__sock_connect("127.0.0.1", port, dl, err, sizeof err);
    if (fd < 0) return NULL;
    tcp_hello h = {.magic = TCP_HELLO_MAGIC, .version = ts->version, .rank = 1, .size = 2};
    if (coll__sock_read_all(fd, &ts->challenge, sizeof ts->challenge, dl) == COLL_OK)
        coll__sock_write_all(fd, &h, sizeof h, dl);
    char c;
    coll__sock_read_all(fd, &c, 1, dl); /* until rank 0 refuses us */
    close(fd);
    return NULL;
}

typedef struct acceptor_run {
    tcp_stub *ts;
    int rc;
    coll__err err;
} acceptor_run;

static void run_rank0(void *arg)
{
    acceptor_run *ar = arg;
    pthread_t t;
    if (pthread_create(&t, NULL, tcp_connector_stub, ar->ts)) return;
    int fds[2];
    coll__err_init(&ar->err, NULL, 0);
    ar->rc = coll__tcp_mesh_connect(ar->ts->store, "job/", 0, 2, "127.0.0.1", "tok", 1.5, 0, fds,
                                    &ar->err);
    pthread_join(t, NULL);
}

/* Rank 0 names the other build's version when it refuses its hello; like any
 * stranger's, the refusal does not end the job (a stray packet must not), so
 * rank 0 waits out its timeout while the other build's rank stops at once. */
static void test_tcp_acceptor_meets_version_2_rank(void **state)
{
    (void)state;
    tcp_stub ts = {.version = 2};
    assert_int_equal(coll__mem_store_create(LONG_S, &ts.store), COLL_OK);
    acceptor_run ar = {.ts = &ts, .rc = -1};
    char *log = capture_stderr(run_rank0, &ar, NULL);
    coll__store_destroy(ts.store);
    assert_int_equal(ts.challenge.magic, TCP_CHALLENGE_MAGIC);
    assert_int_equal(ts.challenge.version, COLL_WIRE_VERSION);
    assert_int_equal(ar.rc, COLL_ETIMEDOUT);
    assert_non_null(strstr(ar.err.msg, "1 connection refused"));
    assert_non_null(strstr(log, "refused a connection from 127.0.0.1:"));
    assert_non_null(strstr(log, "it speaks collbench wire version 2, this build speaks 3: run "
                                "the same collbench build on every host"));
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_client_meets_version_2_server),
        cmocka_unit_test(test_store_client_meets_version_4_server),
        cmocka_unit_test(test_store_server_meets_version_2_client),
        cmocka_unit_test(test_store_server_meets_version_4_client),
        cmocka_unit_test(test_tcp_rank_meets_version_2_acceptor),
        cmocka_unit_test(test_tcp_acceptor_meets_version_2_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
