/* Stray connections (issue 9, item 2): garbage bytes, a wrong job token, half
 * a hello then silence, connect-and-close, aimed at the TCP store during the
 * rendezvous and mid-run, and at ranks' transport ports during set-up and
 * mid-run. The job must go on with correct results, and every stranger must
 * be dropped and logged with its address. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bootstrap/store.h"
#include "coll.h"
#include "core/clock.h"
#include "core/sock.h"
#include "transport/tcp/tcp_connect.h"
#include "transport/tcp/tcp_wire.h"
#include "transport/transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TOKEN "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define WRONG "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdee"
#define NRANKS 3
#define MSG_BYTES (256u << 10)
#define MAX_STRAYS 32

enum stray_kind { GARBAGE, WRONG_TOKEN, HALF_HELLO, CONNECT_CLOSE, NKINDS };

static int strays[MAX_STRAYS];
static int nstrays;

/* stderr into a file for the length of a test, to read the log lines back. */
static int saved_stderr = -1;
static char log_path[64];

static void capture_stderr(void)
{
    snprintf(log_path, sizeof log_path, "/tmp/collbench-stray-log.XXXXXX");
    int fd = mkstemp(log_path);
    assert_true(fd >= 0);
    fflush(stderr);
    saved_stderr = dup(2);
    dup2(fd, 2);
    close(fd);
}

/* Restores stderr and returns what was logged (caller frees). */
static char *release_stderr(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    saved_stderr = -1;
    FILE *f = fopen(log_path, "r");
    assert_non_null(f);
    char *text = calloc(1, 1 << 16);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(log_path);
    fputs(text, stderr); /* still visible in the test's output */
    return text;
}

/* cmocka runs a test's teardown also when an assertion ended it early: the
 * captured log, and cmocka's message about the failure in it, are put back
 * on stderr (else a failure under load shows only its name). */
static int release_if_captured(void **state)
{
    (void)state;
    if (saved_stderr >= 0) free(release_stderr());
    return 0;
}

static int raw_connect(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void keep(int fd)
{
    if (fd >= 0 && nstrays < MAX_STRAYS) strays[nstrays++] = fd;
    else if (fd >= 0) close(fd);
}

static void close_strays(void)
{
    for (int i = 0; i < nstrays; i++) close(strays[i]);
    nstrays = 0;
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* One stray of each kind at the store on port. Returns how many connected. */
static int store_strays(int port)
{
    int connected = 0;
    for (int k = 0; k < NKINDS; k++) {
        int fd = raw_connect(port);
        if (fd < 0) continue;
        connected++;
        unsigned char hello[9 + 64 + 4 + 16]; /* HELLO mac cnonce, a MAC of nothing */
        put_be32(hello, sizeof hello - 4);
        hello[4] = 1; /* HELLO */
        put_be32(hello + 5, 64);
        memcpy(hello + 9, WRONG, 64);
        put_be32(hello + 9 + 64, 16);
        memcpy(hello + 9 + 64 + 4, WRONG, 16);
        static const char garbage[] = "GET / HTTP/1.1\r\nHost: collbench\r\n\r\n";
        if (k == GARBAGE)
            assert_int_equal(write(fd, garbage, sizeof garbage - 1), sizeof garbage - 1);
        if (k == WRONG_TOKEN) assert_int_equal(write(fd, hello, sizeof hello), sizeof hello);
        if (k == HALF_HELLO) assert_int_equal(write(fd, hello, 20), 20);
        if (k == CONNECT_CLOSE) {
            close(fd);
            continue;
        }
        keep(fd);
    }
    return connected;
}

/* One stray of each kind at a rank's transport port. */
static int transport_strays(int port)
{
    int connected = 0;
    for (int k = 0; k < NKINDS; k++) {
        int fd = raw_connect(port);
        if (fd < 0) continue;
        connected++;
        tcp_hello h;
        memset(&h, 0, sizeof h);
        h.magic = TCP_HELLO_MAGIC;
        h.version = TCP_WIRE_VERSION;
        h.rank = NRANKS - 1; /* claims a real rank's place */
        h.size = NRANKS;
        unsigned char guess[TCP_NONCE_LEN] = {0}; /* it never read our challenge */
        coll__tcp_hello_sign(&h, WRONG, 64, guess);
        static const char garbage[sizeof h] = "\x7f"
                                              "ELF garbage garbage garbage";
        if (k == GARBAGE) assert_int_equal(write(fd, garbage, sizeof garbage), sizeof garbage);
        if (k == WRONG_TOKEN) assert_int_equal(write(fd, &h, sizeof h), sizeof h);
        if (k == HALF_HELLO) assert_int_equal(write(fd, &h, 10), 10);
        if (k == CONNECT_CLOSE) {
            close(fd);
            continue;
        }
        keep(fd);
    }
    return connected;
}

/* A stranger the server dropped reads EOF (or a reset), never a reply. */
static void assert_dropped(int fd)
{
    char b;
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    assert_true(read(fd, &b, 1) <= 0);
}

static coll__store *client(int port)
{
    coll__store *s = NULL;
    coll__err err = {.rank = -1};
    int rc = coll__tcp_store_create("127.0.0.1", port, 0, -1, TOKEN, 10, &s, &err);
    if (rc) fprintf(stderr, "store client: %s\n", err.msg);
    assert_int_equal(rc, COLL_OK);
    return s;
}

static coll__store *server(void)
{
    coll__store *s = NULL;
    coll__err err = {.rank = -1};
    int rc = coll__tcp_store_create("127.0.0.1", 0, 1, -1, TOKEN, 10, &s, &err);
    if (rc) fprintf(stderr, "store server: %s\n", err.msg);
    assert_int_equal(rc, COLL_OK);
    return s;
}

static void test_store_strays(void **state)
{
    (void)state;
    capture_stderr();
    coll__store *srv = server();
    int port = coll__tcp_store_port(srv);
    /* During the rendezvous: before the members connect. */
    assert_int_equal(store_strays(port), NKINDS);
    coll__store *a = client(port), *b = client(port);
    assert_int_equal(coll__store_set(a, "rank/0", "alpha", 5), COLL_OK);
    /* Mid-run: members are connected and working. */
    assert_int_equal(store_strays(port), NKINDS);
    assert_int_equal(coll__store_set(b, "rank/1", "beta", 4), COLL_OK);
    void *v = NULL;
    size_t n = 0;
    assert_int_equal(coll__store_get(b, "rank/0", &v, &n), COLL_OK);
    assert_int_equal(n, 5);
    assert_memory_equal(v, "alpha", 5);
    free(v);
    assert_int_equal(coll__store_get(a, "rank/1", &v, &n), COLL_OK);
    assert_int_equal(n, 4);
    assert_memory_equal(v, "beta", 4);
    free(v);
    /* strays[0] garbage, [1] wrong token: both dropped; [2] half hello stays. */
    assert_dropped(strays[0]);
    assert_dropped(strays[1]);
    coll__store_destroy(a);
    coll__store_destroy(b);
    coll__store_destroy(srv);
    close_strays();
    char *log = release_stderr();
    assert_non_null(strstr(log, "dropped connection from 127.0.0.1:"));
    assert_non_null(strstr(log, "bad job token"));
    assert_non_null(strstr(log, "closed before a HELLO"));
    assert_non_null(strstr(log, "request of")); /* the garbage, read as a huge length */
    free(log);
}

typedef struct rank_arg {
    int rank, store_port;
    pthread_mutex_t *lock;
    pthread_cond_t *cond;
    int *go; /* the last rank waits for it, so the others are still in set-up */
    int ok;
    coll__err err;
} rank_arg;

static void fill(char *buf, int rank, size_t n)
{
    for (size_t i = 0; i < n; i++) buf[i] = (char)(rank * 31 + (int)(i % 251));
}

static void *rank_main(void *p)
{
    rank_arg *a = p;
    if (a->rank == NRANKS - 1) {
        pthread_mutex_lock(a->lock);
        while (!*a->go) pthread_cond_wait(a->cond, a->lock);
        pthread_mutex_unlock(a->lock);
    }
    coll__store *s = NULL;
    if (coll__tcp_store_create("127.0.0.1", a->store_port, 0, -1, TOKEN, 20, &s, &a->err))
        return NULL;
    coll__transport *tp = NULL;
    if (coll__tcp_transport_create(s, "t/", a->rank, NRANKS, NULL, TOKEN, 20, NULL, 0, &tp,
                                   &a->err)) {
        coll__store_destroy(s);
        return NULL;
    }
    char *out = malloc(MSG_BYTES), *in = malloc(MSG_BYTES), *want = malloc(MSG_BYTES);
    int from = (a->rank + NRANKS - 1) % NRANKS, ok = 1;
    for (int round = 0; round < 4 && ok; round++) { /* the test strays between rounds */
        fill(out, a->rank + round, MSG_BYTES);
        memset(in, 0, MSG_BYTES);
        coll__xfer x[2];
        memset(x, 0, sizeof x);
        x[0] = (coll__xfer){.kind = COLL_XFER_SEND,
                            .peer = (a->rank + 1) % NRANKS,
                            .buf = out,
                            .len = MSG_BYTES};
        x[1] = (coll__xfer){.kind = COLL_XFER_RECV, .peer = from, .buf = in, .len = MSG_BYTES};
        x[0].sig.seq = x[1].sig.seq = (uint32_t)round;
        ok = tp->ops->post(tp, &x[0]) == COLL_OK && tp->ops->post(tp, &x[1]) == COLL_OK;
        while (ok && (x[0].status == COLL_EAGAIN || x[1].status == COLL_EAGAIN))
            ok = tp->ops->progress(tp, 1000) == COLL_OK;
        fill(want, from + round, MSG_BYTES);
        if (ok && (x[0].status || x[1].status || memcmp(in, want, MSG_BYTES))) ok = 0;
        if (!ok) coll__err_set(&a->err, 0, "rank %d round %d: %s", a->rank, round, tp->err.msg);
    }
    a->ok = ok;
    free(out);
    free(in);
    free(want);
    tp->ops->destroy(tp);
    coll__store_destroy(s);
    return NULL;
}

static int published_port(coll__store *s, int rank)
{
    char key[64];
    snprintf(key, sizeof key, "t/tcp/addr/%d", rank);
    void *v = NULL;
    size_t n;
    assert_int_equal(coll__store_get(s, key, &v, &n), COLL_OK);
    const char *colon = strrchr(v, ':');
    assert_non_null(colon);
    int port = atoi(colon + 1);
    free(v);
    return port;
}

static void test_transport_strays(void **state)
{
    (void)state;
    capture_stderr();
    coll__store *srv = server();
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    int go = 0;
    rank_arg args[NRANKS];
    pthread_t th[NRANKS];
    for (int r = 0; r < NRANKS; r++) {
        args[r] = (rank_arg){.rank = r,
                             .store_port = coll__tcp_store_port(srv),
                             .lock = &lock,
                             .cond = &cond,
                             .go = &go};
        assert_int_equal(pthread_create(&th[r], NULL, rank_main, &args[r]), 0);
    }
    /* Ranks 0 and 1 have published their ports and wait for rank 2: stray now. */
    int port0 = published_port(srv, 0), port1 = published_port(srv, 1);
    assert_int_equal(transport_strays(port0), NKINDS);
    assert_int_equal(transport_strays(port1), NKINDS);
    pthread_mutex_lock(&lock);
    go = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    /* Mid-run: the ranks close their listening sockets once the mesh is up; a
     * stranger gets at most a refused connection (or, racing set-up, a refusal). */
    transport_strays(port0);
    transport_strays(port1);
    store_strays(coll__tcp_store_port(srv));
    for (int r = 0; r < NRANKS; r++) pthread_join(th[r], NULL);
    coll__store_destroy(srv);
    close_strays();
    char *log = release_stderr();
    for (int r = 0; r < NRANKS; r++) {
        if (!args[r].ok) fprintf(stderr, "rank %d failed: %s\n", r, args[r].err.msg);
        assert_true(args[r].ok);
    }
    assert_non_null(strstr(log, "tcp transport rank 0: refused a connection from 127.0.0.1:"));
    assert_non_null(strstr(log, "tcp transport rank 1: refused a connection from 127.0.0.1:"));
    assert_non_null(strstr(log, "wrong job token"));
    assert_non_null(strstr(log, "not a collbench transport peer"));
    assert_non_null(strstr(log, "closed before finishing the handshake"));
    assert_non_null(strstr(log, "no complete handshake by the end of set-up"));
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_store_strays, release_if_captured),
        cmocka_unit_test_teardown(test_transport_strays, release_if_captured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
