/* TCP transport: ranks are threads of this process sharing one in-memory store.
 * Threads never call cmocka asserts (not thread-safe); they record what they
 * saw and the main thread checks it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/store.h"
#include "coll.h"
#include "core/clock.h"
#include "core/sock.h"
#include "transport/tcp/tcp_connect.h"
#include "transport/tcp/tcp_wire.h"
#include "transport/transport.h"

#define MAX_RANKS 6
#define MiB ((size_t)1 << 20)
#define WAIT_S 60.0 /* generous: sanitizers on 2 busy cores */

typedef struct rank_t rank_t;
typedef int (*body_fn)(rank_t *r);

struct rank_t {
    int rank, size;
    coll__store *store;
    const char *token;
    double timeout_s;
    body_fn body;
    const void *arg;
    int absent; /* this rank never starts */
    coll__transport *tp;
    int create_rc;
    coll__err create_err;
    double create_s; /* how long create took */
    int rc;          /* the body's verdict: 0 or -1 with msg */
    char msg[COLL__ERR_MSG + 256];
};

#define CHECK(r, cond)                                                                            \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            snprintf((r)->msg, sizeof(r)->msg, "rank %d, line %d: %s (tp errmsg: %s)", (r)->rank, \
                     __LINE__, #cond, (r)->tp ? (r)->tp->err.msg : "");                           \
            return -1;                                                                            \
        }                                                                                         \
    } while (0)

static void *rank_main(void *arg)
{
    rank_t *r = arg;
    double t0 = coll__now_s();
    r->create_rc = coll__tcp_transport_create(r->store, "job/", r->rank, r->size, NULL, r->token,
                                              r->timeout_s, NULL, 0, &r->tp, &r->create_err);
    r->create_s = coll__now_s() - t0;
    if (r->create_rc == COLL_OK && r->body) r->rc = r->body(r);
    return NULL;
}

/* Runs size ranks (minus the absent ones) to completion; destroys transports
 * the bodies left alive. */
static void run_job(rank_t *ranks, int size, body_fn body, const void *arg, double timeout_s)
{
    coll__store *store;
    assert_int_equal(coll__mem_store_create(timeout_s + 5, &store), COLL_OK);
    pthread_t th[MAX_RANKS];
    for (int i = 0; i < size; i++) {
        ranks[i].rank = i;
        ranks[i].size = size;
        ranks[i].store = store;
        ranks[i].timeout_s = timeout_s;
        ranks[i].body = body;
        ranks[i].arg = arg;
        if (!ranks[i].absent)
            assert_int_equal(pthread_create(&th[i], NULL, rank_main, &ranks[i]), 0);
    }
    for (int i = 0; i < size; i++)
        if (!ranks[i].absent) pthread_join(th[i], NULL);
    for (int i = 0; i < size; i++)
        if (ranks[i].tp) ranks[i].tp->ops->destroy(ranks[i].tp);
    coll__store_destroy(store);
}

static void expect_all_ok(const rank_t *ranks, int size)
{
    for (int i = 0; i < size; i++) {
        if (ranks[i].create_rc) fail_msg("rank %d create: %s", i, ranks[i].create_err.msg);
        if (ranks[i].rc) fail_msg("%s", ranks[i].msg);
    }
}

static coll__sig sig_of(uint32_t seq, uint64_t count)
{
    coll__sig s;
    memset(&s, 0, sizeof s);
    s.seq = seq;
    s.kind = COLL_KIND_ALLREDUCE;
    s.dtype = COLL_FLOAT32;
    s.op = COLL_SUM;
    s.count = count;
    return s;
}

static void xfer(coll__xfer *x, coll__xfer_kind kind, int peer, void *buf, size_t len,
                 coll__sig sig)
{
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->peer = peer;
    x->buf = buf;
    x->len = len;
    x->sig = sig;
}

/* Progresses until every transfer finished; the first failure, or ETIMEDOUT. */
static int wait_xfers(coll__transport *tp, coll__xfer *x, int n, double timeout_s)
{
    double deadline = coll__now_s() + timeout_s;
    for (;;) {
        int pending = 0, bad = COLL_OK;
        for (int i = 0; i < n; i++) {
            if (x[i].status == COLL_EAGAIN) pending++;
            else if (x[i].status != COLL_OK && bad == COLL_OK) bad = x[i].status;
        }
        if (!pending || bad) return bad;
        if (coll__now_s() > deadline) return COLL_ETIMEDOUT;
        int rc = tp->ops->progress(tp, 100);
        if (rc) return rc;
    }
}

/* Content that depends on the sender and the position; word-wise so that the
 * sanitizer builds check 64 MiB quickly. */
static uint64_t pattern(int sender, size_t w)
{
    return (w + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(sender + 1);
}

static void fill(unsigned char *b, size_t len, int sender)
{
    size_t w = 0;
    for (; (w + 1) * 8 <= len; w++) {
        uint64_t v = pattern(sender, w);
        memcpy(b + w * 8, &v, 8);
    }
    uint64_t v = pattern(sender, w);
    memcpy(b + w * 8, &v, len - w * 8);
}

static int matches(const unsigned char *b, size_t len, int sender)
{
    size_t w = 0;
    uint64_t v;
    for (; (w + 1) * 8 <= len; w++) {
        memcpy(&v, b + w * 8, 8);
        if (v != pattern(sender, w)) return 0;
    }
    v = pattern(sender, w);
    return memcmp(b + w * 8, &v, len - w * 8) == 0;
}

/* ---- ring exchange ---------------------------------------------------------------------- */

static int ring_body(rank_t *r)
{
    size_t len = *(const size_t *)r->arg;
    int next = (r->rank + 1) % r->size, prev = (r->rank + r->size - 1) % r->size;
    unsigned char *sb = malloc(len + 1), *rb = malloc(len + 1);
    CHECK(r, sb && rb);
    fill(sb, len, r->rank);
    memset(rb, 0xEE, len + 1);
    coll__xfer x[2];
    xfer(&x[0], COLL_XFER_SEND, next, sb, len, sig_of(1, len));
    xfer(&x[1], COLL_XFER_RECV, prev, rb, len, sig_of(1, len));
    int ok = r->tp->ops->post(r->tp, &x[0]) == 0 && r->tp->ops->post(r->tp, &x[1]) == 0 &&
             wait_xfers(r->tp, x, 2, WAIT_S) == 0 && x[0].done == len && x[1].done == len &&
             matches(rb, len, prev) && rb[len] == 0xEE;
    free(sb);
    free(rb);
    CHECK(r, ok);
    return 0;
}

static void test_ring_sizes(void **state)
{
    (void)state;
    const size_t lens[] = {0, 1, 4095, MiB, 64 * MiB};
    for (int size = 2; size <= 5; size++) {
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            if (lens[i] == 64 * MiB && size != 2 && size != 4) continue; /* keep the run short */
            rank_t ranks[MAX_RANKS] = {0};
            run_job(ranks, size, ring_body, &lens[i], 20);
            expect_all_ok(ranks, size);
        }
    }
}

/* ---- many small messages, in order -------------------------------------------------------- */

#define NSMALL 500

static size_t small_len(int i) { return (size_t)(i * 7) % 61; } /* includes 0 */

/* Every rank sends NSMALL messages to every other rank, all posted up front;
 * receives are posted one at a time, so most headers arrive before their receive. */
static int small_body(rank_t *r)
{
    int n = r->size;
    unsigned char(*sb)[64] = calloc(NSMALL, 64);
    unsigned char(*rb)[64] = calloc((size_t)n * NSMALL, 64);
    coll__xfer *sx = calloc((size_t)n * NSMALL, sizeof *sx);
    CHECK(r, sb && rb && sx);
    for (int i = 0; i < NSMALL; i++) {
        fill(sb[i], 64, r->rank * 1000 + i);
        for (int p = 0; p < n; p++) {
            if (p == r->rank) continue;
            coll__xfer *x = &sx[p * NSMALL + i];
            xfer(x, COLL_XFER_SEND, p, sb[i], small_len(i), sig_of((uint32_t)i, (uint64_t)i));
            CHECK(r, r->tp->ops->post(r->tp, x) == 0);
        }
    }
    int bad = 0;
    for (int i = 0; i < NSMALL && !bad; i++) {
        coll__xfer rx[MAX_RANKS];
        int k = 0;
        for (int p = 0; p < n; p++) {
            if (p == r->rank) continue;
            xfer(&rx[k], COLL_XFER_RECV, p, rb[p * NSMALL + i], small_len(i),
                 sig_of((uint32_t)i, (uint64_t)i));
            if (r->tp->ops->post(r->tp, &rx[k++])) bad = 1;
        }
        if (!bad && wait_xfers(r->tp, rx, k, WAIT_S)) bad = 1;
        for (int p = 0; p < n && !bad; p++)
            if (p != r->rank && !matches(rb[p * NSMALL + i], small_len(i), p * 1000 + i)) bad = 1;
    }
    int rc = bad ? -1 : wait_xfers(r->tp, sx, n * NSMALL, WAIT_S);
    /* sends to self were never posted: their status is 0 from calloc */
    free(sb);
    free(rb);
    free(sx);
    CHECK(r, !bad);
    CHECK(r, rc == 0);
    return 0;
}

static void test_many_small_in_order(void **state)
{
    (void)state;
    for (int size = 2; size <= 4; size++) {
        rank_t ranks[MAX_RANKS] = {0};
        run_job(ranks, size, small_body, NULL, 20);
        expect_all_ok(ranks, size);
    }
}

/* ---- both directions at once ------------------------------------------------------------ */

static int bidir_body(rank_t *r)
{
    size_t len = 32 * MiB;
    int peer = 1 - r->rank;
    unsigned char *sb = malloc(len), *rb = malloc(len);
    CHECK(r, sb && rb);
    fill(sb, len, r->rank);
    coll__xfer x[2];
    xfer(&x[0], COLL_XFER_SEND, peer, sb, len, sig_of(5, len));
    xfer(&x[1], COLL_XFER_RECV, peer, rb, len, sig_of(5, len));
    /* The send goes first and cannot fit in the socket buffers: progress must
     * read while it writes, or both ranks block forever. */
    int ok = r->tp->ops->post(r->tp, &x[0]) == 0;
    for (int i = 0; i < 3 && ok; i++) ok = r->tp->ops->progress(r->tp, 10) == 0;
    ok = ok && r->tp->ops->post(r->tp, &x[1]) == 0 && wait_xfers(r->tp, x, 2, WAIT_S) == 0 &&
         matches(rb, len, peer);
    free(sb);
    free(rb);
    CHECK(r, ok);
    return 0;
}

static void test_bidirectional_large(void **state)
{
    (void)state;
    rank_t ranks[2] = {0};
    run_job(ranks, 2, bidir_body, NULL, 20);
    expect_all_ok(ranks, 2);
}

/* ---- receives see the chunks arrive -------------------------------------------------------- */

static int pipeline_body(rank_t *r)
{
    size_t len = 16 * MiB;
    unsigned char *b = malloc(len);
    CHECK(r, b);
    coll__xfer x;
    if (r->rank == 0) {
        fill(b, len, 0);
        xfer(&x, COLL_XFER_SEND, 1, b, len, sig_of(2, len));
        int ok = r->tp->ops->post(r->tp, &x) == 0 && wait_xfers(r->tp, &x, 1, WAIT_S) == 0;
        free(b);
        CHECK(r, ok);
        return 0;
    }
    xfer(&x, COLL_XFER_RECV, 0, b, len, sig_of(2, len));
    int ok = r->tp->ops->post(r->tp, &x) == 0, partial = 0;
    size_t last = 0, monotonic = 1;
    double deadline = coll__now_s() + WAIT_S;
    while (ok && x.status == COLL_EAGAIN && coll__now_s() < deadline) {
        ok = r->tp->ops->progress(r->tp, 100) == 0;
        if (x.done < last) monotonic = 0;
        if (x.status == COLL_EAGAIN && x.done > 0 && x.done < len) partial = 1;
        last = x.done;
    }
    ok = ok && x.status == COLL_OK && monotonic && partial && matches(b, len, 0);
    free(b);
    CHECK(r, ok);
    return 0;
}

static void test_done_grows_while_receiving(void **state)
{
    (void)state;
    rank_t ranks[2] = {0};
    run_job(ranks, 2, pipeline_body, NULL, 20);
    expect_all_ok(ranks, 2);
}

/* ---- mismatches ------------------------------------------------------------------------- */

/* rank 0 sends (count 200 or len 800), rank 1 expects count 100 / len 400. */
typedef struct mismatch_case {
    uint64_t send_count, recv_count;
    size_t send_len, recv_len;
} mismatch_case;

static int mismatch_body(rank_t *r)
{
    const mismatch_case *mc = r->arg;
    char buf[1024] = {0};
    coll__xfer x;
    if (r->rank == 0) {
        xfer(&x, COLL_XFER_SEND, 1, buf, mc->send_len, sig_of(3, mc->send_count));
        CHECK(r, r->tp->ops->post(r->tp, &x) == 0);
        CHECK(r, wait_xfers(r->tp, &x, 1, WAIT_S) == 0);
        return 0;
    }
    xfer(&x, COLL_XFER_RECV, 0, buf, mc->recv_len, sig_of(3, mc->recv_count));
    CHECK(r, r->tp->ops->post(r->tp, &x) == 0);
    int rc = wait_xfers(r->tp, &x, 1, WAIT_S);
    CHECK(r, rc != COLL_OK && x.status == rc);
    char msg[sizeof r->tp->err.msg];
    snprintf(msg, sizeof msg, "%s", r->tp->err.msg);
    CHECK(r, r->tp->err.rank == 0);
    /* The stream from rank 0 is out of step now: later receives fail alike. */
    coll__xfer y;
    xfer(&y, COLL_XFER_RECV, 0, buf, 1, sig_of(4, 1));
    CHECK(r, r->tp->ops->post(r->tp, &y) == x.status && y.status == x.status);
    snprintf(r->msg, sizeof r->msg, "%s", msg);
    return 1; /* the error message is in msg */
}

static void test_sig_mismatch(void **state)
{
    (void)state;
    mismatch_case mc = {200, 100, 400, 400};
    rank_t ranks[2] = {0};
    run_job(ranks, 2, mismatch_body, &mc, 20);
    assert_int_equal(ranks[0].rc, 0);
    assert_int_equal(ranks[1].create_rc, COLL_OK);
    /* rc 1: rank 1 got through its checks; msg holds its transport's errmsg */
    if (ranks[1].rc != 1) fail_msg("%s", ranks[1].msg);
    assert_non_null(strstr(ranks[1].msg, "rank 0 called allreduce(count=200, float32, sum) #3"));
    assert_non_null(strstr(ranks[1].msg, "rank 1 called allreduce(count=100, float32, sum) #3"));
}

static void test_length_mismatch(void **state)
{
    (void)state;
    mismatch_case mc = {100, 100, 800, 400};
    rank_t ranks[2] = {0};
    run_job(ranks, 2, mismatch_body, &mc, 20);
    assert_int_equal(ranks[0].rc, 0);
    if (ranks[1].rc != 1) fail_msg("%s", ranks[1].msg);
    assert_non_null(strstr(ranks[1].msg, "rank 0 sent 800 bytes"));
    assert_non_null(strstr(ranks[1].msg, "expected 400 bytes"));
}

/* The statuses themselves, recorded by a small variant of the body. */
static int status_body(rank_t *r)
{
    const mismatch_case *mc = r->arg;
    char buf[1024] = {0};
    coll__xfer x;
    xfer(&x, r->rank ? COLL_XFER_RECV : COLL_XFER_SEND, 1 - r->rank, buf,
         r->rank ? mc->recv_len : mc->send_len,
         sig_of(3, r->rank ? mc->recv_count : mc->send_count));
    CHECK(r, r->tp->ops->post(r->tp, &x) == 0);
    int rc = wait_xfers(r->tp, &x, 1, WAIT_S);
    return r->rank ? rc : (rc ? -1 : 0);
}

static void test_mismatch_statuses(void **state)
{
    (void)state;
    mismatch_case sig = {200, 100, 400, 400}, len = {100, 100, 800, 400};
    rank_t a[2] = {0}, b[2] = {0};
    run_job(a, 2, status_body, &sig, 20);
    run_job(b, 2, status_body, &len, 20);
    assert_int_equal(a[0].rc, 0);
    assert_int_equal(a[1].rc, COLL_EMISMATCH);
    assert_int_equal(b[0].rc, 0);
    assert_int_equal(b[1].rc, COLL_EPROTO);
}

/* ---- a peer goes away mid-transfer ------------------------------------------------------- */

static int died_body(rank_t *r)
{
    size_t len = 64 * MiB;
    unsigned char *b = calloc(1, len);
    CHECK(r, b);
    coll__xfer x;
    if (r->rank == 1) { /* sends part of it, then its transport is destroyed */
        xfer(&x, COLL_XFER_SEND, 0, b, len, sig_of(1, len));
        int ok = r->tp->ops->post(r->tp, &x) == 0;
        while (ok && x.done < 2 * MiB) ok = r->tp->ops->progress(r->tp, 100) == 0;
        r->tp->ops->destroy(r->tp);
        r->tp = NULL;
        free(b);
        CHECK(r, ok);
        return 0;
    }
    xfer(&x, COLL_XFER_RECV, 1, b, len, sig_of(1, len));
    CHECK(r, r->tp->ops->post(r->tp, &x) == 0);
    int rc = wait_xfers(r->tp, &x, 1, WAIT_S);
    free(b);
    CHECK(r, rc == COLL_EPEER && x.status == COLL_EPEER);
    CHECK(r, r->tp->err.rank == 1);
    CHECK(r, strstr(r->tp->err.msg, "rank 1 closed its connection") != NULL);
    return 0;
}

static void test_peer_destroyed_mid_transfer(void **state)
{
    (void)state;
    rank_t ranks[2] = {0};
    run_job(ranks, 2, died_body, NULL, 20);
    expect_all_ok(ranks, 2);
}

/* ---- abort ----------------------------------------------------------------------------- */

/* Rank 1 aborts blaming rank 2. Rank 0 waits on rank 1 (the message arrives
 * on that stream); rank 2 waits on rank 0, which never sends: it must learn of
 * the abort from an idle connection. */
static int abort_body(rank_t *r)
{
    char buf[16];
    coll__xfer x;
    if (r->rank == 1) {
        usleep(50 * 1000);
        r->tp->ops->abort(r->tp, COLL_EMISMATCH, 2);
        xfer(&x, COLL_XFER_SEND, 0, buf, 1, sig_of(1, 1));
        CHECK(r, r->tp->ops->post(r->tp, &x) == COLL_EABORTED);
        CHECK(r, r->tp->ops->progress(r->tp, 0) == COLL_EABORTED);
        return 0;
    }
    xfer(&x, COLL_XFER_RECV, r->rank == 0 ? 1 : 0, buf, sizeof buf, sig_of(1, 1));
    CHECK(r, r->tp->ops->post(r->tp, &x) == 0);
    int rc = wait_xfers(r->tp, &x, 1, WAIT_S);
    CHECK(r, rc == COLL_EMISMATCH && x.status == COLL_EMISMATCH);
    CHECK(r, r->tp->err.rank == 2);
    CHECK(r, strstr(r->tp->err.msg, "rank 1 aborted:") != NULL);
    CHECK(r, strstr(r->tp->err.msg, "(blames rank 2)") != NULL);
    return 0;
}

static void test_abort_propagates(void **state)
{
    (void)state;
    rank_t ranks[3] = {0};
    run_job(ranks, 3, abort_body, NULL, 20);
    expect_all_ok(ranks, 3);
}

/* ---- bad transfers --------------------------------------------------------------------- */

static int invalid_body(rank_t *r)
{
    char buf[4];
    coll__xfer x;
    xfer(&x, COLL_XFER_SEND, r->rank, buf, sizeof buf, sig_of(0, 4));
    CHECK(r, r->tp->ops->post(r->tp, &x) == COLL_EINVAL && x.status == COLL_EINVAL);
    CHECK(r, strstr(r->tp->err.msg, "invalid transfer") != NULL);
    xfer(&x, COLL_XFER_RECV, r->size, buf, sizeof buf, sig_of(0, 4));
    CHECK(r, r->tp->ops->post(r->tp, &x) == COLL_EINVAL);
    xfer(&x, COLL_XFER_RECV, -1, buf, sizeof buf, sig_of(0, 4));
    CHECK(r, r->tp->ops->post(r->tp, &x) == COLL_EINVAL);
    /* Nothing posted: progress returns at once even when asked to block forever... */
    CHECK(r, r->tp->ops->progress(r->tp, 0) == COLL_OK);
    return 0;
}

static void test_invalid_transfers(void **state)
{
    (void)state;
    rank_t ranks[2] = {0};
    run_job(ranks, 2, invalid_body, NULL, 20);
    expect_all_ok(ranks, 2);
}

/* ---- set-up failures ------------------------------------------------------------------- */

static void test_wrong_token_refused(void **state)
{
    (void)state;
    rank_t ranks[3] = {{.token = "secret"}, {.token = "secret"}, {.token = "guess"}};
    run_job(ranks, 3, NULL, NULL, 1.0);
    assert_int_equal(ranks[2].create_rc, COLL_EAUTH);
    assert_non_null(strstr(ranks[2].create_err.msg, "rank 0"));
    assert_non_null(strstr(ranks[2].create_err.msg, "refused"));
    for (int i = 0; i < 2; i++) {
        assert_int_equal(ranks[i].create_rc, COLL_ETIMEDOUT);
        assert_non_null(strstr(ranks[i].create_err.msg, "rank 2 never connected"));
        assert_null(ranks[i].tp);
    }
    assert_non_null(strstr(ranks[0].create_err.msg, "1 connection refused"));
    for (int i = 0; i < 3; i++) assert_true(ranks[i].create_s < 1.0 + 10); /* no hang */
}

static void test_timeout_missing_rank(void **state)
{
    (void)state;
    rank_t hi[3] = {0}, lo[2] = {0};
    hi[2].absent = 1; /* the highest rank never comes: the others wait to accept it */
    run_job(hi, 3, NULL, NULL, 0.5);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(hi[i].create_rc, COLL_ETIMEDOUT);
        assert_non_null(strstr(hi[i].create_err.msg, "rank 2 never connected"));
        assert_true(hi[i].create_s < 0.5 + 10);
    }
    lo[0].absent = 1; /* rank 0 never publishes its address */
    run_job(lo, 2, NULL, NULL, 0.5);
    assert_int_equal(lo[1].create_rc, COLL_ETIMEDOUT);
    assert_non_null(strstr(lo[1].create_err.msg, "rank 0 did not publish its address"));
}

/* A hand-made rank 1: authenticates properly, then sends a corrupt header.
 * A stray connection with a bad hello comes first and must not disturb set-up. */
static void *fake_rank1(void *arg)
{
    coll__store *store = arg;
    void *val = NULL;
    if (coll__store_get(store, "job/tcp/addr/0", &val, NULL)) return NULL;
    int port = atoi(strrchr((char *)val, ':') + 1);
    free(val);
    char err[128];
    double deadline = coll__now_s() + 10;
    int stray = coll__sock_connect("127.0.0.1", port, deadline, err, sizeof err);
    if (stray >= 0) {
        char junk[sizeof(tcp_hello)];
        memset(junk, 'x', sizeof junk);
        coll__sock_write_all(stray, junk, sizeof junk, deadline);
    }
    int fd = coll__sock_connect("127.0.0.1", port, deadline, err, sizeof err);
    tcp_challenge ch;
    tcp_hello h, ack;
    memset(&h, 0, sizeof h);
    h.magic = TCP_HELLO_MAGIC;
    h.version = TCP_WIRE_VERSION;
    h.rank = 1;
    h.size = 2;
    int got_challenge = fd >= 0 && coll__sock_read_all(fd, &ch, sizeof ch, deadline) == 0;
    if (got_challenge) coll__tcp_hello_sign(&h, "tok", 3, ch.nonce);
    tcp_wire_hdr bad;
    memset(&bad, 0, sizeof bad);
    bad.magic = 0xdeadbeef;
    bad.type = TCP_MSG_DATA;
    bad.len = (uint64_t)1 << 60;
    if (got_challenge && coll__sock_write_all(fd, &h, sizeof h, deadline) == 0 &&
        coll__sock_read_all(fd, &ack, sizeof ack, deadline) == 0)
        coll__sock_write_all(fd, &bad, sizeof bad, deadline);
    usleep(300 * 1000); /* keep the connection open while rank 0 reads */
    if (fd >= 0) close(fd);
    if (stray >= 0) close(stray);
    return NULL;
}

static void test_corrupt_header_and_stray_connection(void **state)
{
    (void)state;
    coll__store *store;
    assert_int_equal(coll__mem_store_create(10, &store), COLL_OK);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fake_rank1, store), 0);
    coll__transport *tp = NULL;
    coll__err err = {.rank = -1};
    int rc = coll__tcp_transport_create(store, "job/", 0, 2, NULL, "tok", 10, NULL, 0, &tp, &err);
    if (rc) fail_msg("create: %s", err.msg);
    char buf[64];
    coll__xfer x;
    xfer(&x, COLL_XFER_RECV, 1, buf, sizeof buf, sig_of(1, 16));
    assert_int_equal(tp->ops->post(tp, &x), 0);
    rc = wait_xfers(tp, &x, 1, WAIT_S);
    assert_int_equal(rc, COLL_EPROTO);
    assert_int_equal(tp->err.rank, 1);
    assert_non_null(strstr(tp->err.msg, "corrupt message header from rank 1"));
    pthread_join(th, NULL);
    tp->ops->destroy(tp);
    coll__store_destroy(store);
}

/* An eavesdropper's replay: a hello signed correctly, but for the challenge of
 * an earlier connection. Rank 0 must refuse it (close unanswered): the token is
 * never on the wire and an old answer fits no new challenge. */
static void *replaying_rank1(void *arg)
{
    coll__store *store = arg;
    void *val = NULL;
    if (coll__store_get(store, "job/tcp/addr/0", &val, NULL)) return NULL;
    int port = atoi(strrchr((char *)val, ':') + 1);
    free(val);
    char err[128];
    double deadline = coll__now_s() + 5;
    tcp_challenge first, second;
    tcp_hello h, ack;
    memset(&h, 0, sizeof h);
    h.magic = TCP_HELLO_MAGIC;
    h.version = TCP_WIRE_VERSION;
    h.rank = 1;
    h.size = 2;
    int a = coll__sock_connect("127.0.0.1", port, deadline, err, sizeof err);
    if (a < 0 || coll__sock_read_all(a, &first, sizeof first, deadline)) return NULL;
    coll__tcp_hello_sign(&h, "tok", 3, first.nonce); /* the captured hello */
    int b = coll__sock_connect("127.0.0.1", port, deadline, err, sizeof err);
    long answered = -1;
    if (b >= 0 && coll__sock_read_all(b, &second, sizeof second, deadline) == 0 &&
        coll__sock_write_all(b, &h, sizeof h, deadline) == 0)
        answered = coll__sock_read_all(b, &ack, sizeof ack, deadline) == 0;
    close(a);
    if (b >= 0) close(b);
    return (void *)answered;
}

static void test_replayed_hello_is_refused(void **state)
{
    (void)state;
    coll__store *store;
    assert_int_equal(coll__mem_store_create(10, &store), COLL_OK);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, replaying_rank1, store), 0);
    coll__transport *tp = NULL;
    coll__err err = {.rank = -1};
    int rc = coll__tcp_transport_create(store, "job/", 0, 2, NULL, "tok", 1.5, NULL, 0, &tp, &err);
    void *answered;
    pthread_join(th, &answered);
    assert_int_equal((long)answered, 0); /* closed unanswered */
    assert_int_equal(rc, COLL_ETIMEDOUT);
    assert_non_null(strstr(err.msg, "rank 1 never connected (1 connection refused"));
    coll__store_destroy(store);
}

static void test_single_rank(void **state)
{
    (void)state;
    coll__store *store;
    assert_int_equal(coll__mem_store_create(1, &store), COLL_OK);
    coll__transport *tp = NULL;
    coll__err err = {.rank = -1};
    assert_int_equal(coll__tcp_transport_create(store, "", 0, 1, NULL, NULL, 1, NULL, 0, &tp, &err),
                     0);
    assert_int_equal(tp->ops->progress(tp, -1), COLL_OK); /* nothing to wait for */
    tp->ops->destroy(tp);
    coll__store_destroy(store);
}

/* probe_any until it names a peer or fails; the peer, or the status. */
static int probe_until(coll__transport *tp, double timeout_s, int *peer)
{
    double deadline = coll__now_s() + timeout_s;
    for (;;) {
        int rc = tp->ops->probe_any(tp, peer);
        if (rc || *peer >= 0) return rc;
        if (coll__now_s() > deadline) return COLL_ETIMEDOUT;
        if ((rc = tp->ops->progress(tp, 100))) return rc;
    }
}

static int post_wait(coll__transport *tp, coll__xfer_kind kind, int peer, void *buf, size_t len,
                     coll__sig sig)
{
    coll__xfer x;
    xfer(&x, kind, peer, buf, len, sig);
    int rc = tp->ops->post(tp, &x);
    return rc ? rc : wait_xfers(tp, &x, 1, WAIT_S);
}

/* ---- waiting: spin, then sleep --------------------------------------------------------- */

/* Voluntary context switches of this thread so far: each is a sleep. */
static long thread_sleeps(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

typedef struct spin_case {
    int host_ranks;      /* coll__tcp_transport_spin's: 1 fits any host, 1 << 20 none */
    long sleeps;         /* rank 0's, while it waited */
    double short_wait_s; /* rank 0's progress(20 ms) with nothing to come */
} spin_case;

/* Rank 1 sends 200 ms late; rank 0 waits for it. */
static int spin_body(rank_t *r)
{
    spin_case *sc = (spin_case *)r->arg;
    uint64_t v = 42, got = 0;
    coll__err err = {.rank = -1};
    CHECK(r, coll__tcp_transport_spin(r->tp, r->rank == 0 ? sc->host_ranks : 1, &err) == 0);
    if (r->rank == 1) {
        usleep(200000); /* well after rank 0 posted its receive */
        return post_wait(r->tp, COLL_XFER_SEND, 0, &v, sizeof v, sig_of(1, 1)) ? -1 : 0;
    }
    double t0 = coll__now_s();
    CHECK(r, r->tp->ops->progress(r->tp, 20) == 0); /* nothing comes in 20 ms */
    sc->short_wait_s = coll__now_s() - t0;
    coll__xfer x;
    xfer(&x, COLL_XFER_RECV, 1, &got, sizeof got, sig_of(1, 1));
    CHECK(r, r->tp->ops->post(r->tp, &x) == 0);
    long s0 = thread_sleeps();
    CHECK(r, wait_xfers(r->tp, &x, 1, WAIT_S) == 0 && got == 42);
    sc->sleeps = thread_sleeps() - s0;
    return 0;
}

/* With the host's ranks within its cores a wait polls and never sleeps (up to
 * COLL_TCP_SPIN_US); with more ranks than cores it sleeps at once, unless
 * COLL_TCP_SPIN_CROWDED_US says to poll; an out of range value is refused. */
static void test_wait_spins_or_sleeps(void **state)
{
    (void)state;
    setenv("COLL_TCP_SPIN_US", "1000000", 1); /* longer than rank 1's delay */
    spin_case fits = {.host_ranks = 1}, crowded = {.host_ranks = 1 << 20};
    rank_t ranks[2] = {0};
    run_job(ranks, 2, spin_body, &fits, 20);
    expect_all_ok(ranks, 2);
    memset(ranks, 0, sizeof ranks);
    run_job(ranks, 2, spin_body, &crowded, 20);
    expect_all_ok(ranks, 2);
    setenv("COLL_TCP_SPIN_CROWDED_US", "1000000", 1); /* crowded, yet told to spin */
    spin_case told = {.host_ranks = 1 << 20};
    memset(ranks, 0, sizeof ranks);
    run_job(ranks, 2, spin_body, &told, 20);
    unsetenv("COLL_TCP_SPIN_CROWDED_US");
    expect_all_ok(ranks, 2);
    assert_int_equal(fits.sleeps, 0);
    assert_true(crowded.sleeps >= 1);
    assert_int_equal(told.sleeps, 0);
    assert_true(fits.short_wait_s < 0.5); /* the spin (1 s) ends with the wait's 20 ms */

    setenv("COLL_TCP_SPIN_US", "2000000", 1);
    coll__store *store;
    assert_int_equal(coll__mem_store_create(1, &store), COLL_OK);
    coll__transport *tp = NULL;
    coll__err err = {.rank = -1};
    assert_int_equal(coll__tcp_transport_create(store, "", 0, 1, NULL, NULL, 1, NULL, 0, &tp, &err),
                     COLL_EINVAL);
    assert_non_null(strstr(err.msg, "COLL_TCP_SPIN_US"));
    assert_null(tp);
    coll__store_destroy(store);
    unsetenv("COLL_TCP_SPIN_US");
}

/* Rank 1 is in a collective (its message to rank 0 a collective's), rank 2
 * sends a point-to-point message later: rank 0's probe_any names rank 2, and
 * rank 1's header, read ahead, still goes to the collective's receive. */
static int any_parked_body(rank_t *r)
{
    coll__sig p2p = sig_of(0, 2);
    p2p.kind = COLL_KIND_P2P;
    uint32_t v[2] = {(uint32_t)r->rank, 7}, got[2] = {0};
    if (r->rank > 0) {
        if (r->rank == 2) usleep(100000); /* rank 1's header is read first */
        CHECK(r, post_wait(r->tp, COLL_XFER_SEND, 0, v, sizeof v,
                           r->rank == 2 ? p2p : sig_of(5, 2)) == 0);
        return post_wait(r->tp, COLL_XFER_RECV, 0, got, 1, sig_of(6, 1)) ? -1 : 0; /* until done */
    }
    int peer = -1;
    CHECK(r, probe_until(r->tp, WAIT_S, &peer) == 0 && peer == 2);
    CHECK(r, post_wait(r->tp, COLL_XFER_RECV, 2, got, sizeof got, p2p) == 0 && got[0] == 2);
    CHECK(r,
          post_wait(r->tp, COLL_XFER_RECV, 1, got, sizeof got, sig_of(5, 2)) == 0 && got[0] == 1);
    for (int q = 1; q < 3; q++)
        CHECK(r, post_wait(r->tp, COLL_XFER_SEND, q, v, 1, sig_of(6, 1)) == 0);
    return 0;
}

static void test_probe_any_skips_collectives(void **state)
{
    (void)state;
    rank_t ranks[3] = {0};
    run_job(ranks, 3, any_parked_body, NULL, 20);
    expect_all_ok(ranks, 3);
}

/* Every other rank's next message is a collective's: none can send rank 0 a
 * point-to-point one before rank 0 joins, so probe_any says so at once. */
static int any_deadlock_body(rank_t *r)
{
    uint32_t v = 1;
    if (r->rank > 0) {
        CHECK(r, post_wait(r->tp, COLL_XFER_SEND, 0, &v, sizeof v, sig_of(5, 1)) == 0);
        return post_wait(r->tp, COLL_XFER_RECV, 0, &v, sizeof v, sig_of(6, 1)) ? -1 : 0;
    }
    int peer = -1, rc = probe_until(r->tp, WAIT_S, &peer);
    CHECK(r, rc == COLL_EMISMATCH && peer == -1);
    CHECK(r, strstr(r->tp->err.msg, "every other rank called a collective") != NULL);
    for (int q = 1; q < 3; q++) {
        CHECK(r, post_wait(r->tp, COLL_XFER_RECV, q, &v, sizeof v, sig_of(5, 1)) == 0);
        CHECK(r, post_wait(r->tp, COLL_XFER_SEND, q, &v, sizeof v, sig_of(6, 1)) == 0);
    }
    return 0;
}

static void test_probe_any_all_in_collectives(void **state)
{
    (void)state;
    rank_t ranks[3] = {0};
    run_job(ranks, 3, any_deadlock_body, NULL, 20);
    expect_all_ok(ranks, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_sizes),
        cmocka_unit_test(test_many_small_in_order),
        cmocka_unit_test(test_bidirectional_large),
        cmocka_unit_test(test_done_grows_while_receiving),
        cmocka_unit_test(test_sig_mismatch),
        cmocka_unit_test(test_length_mismatch),
        cmocka_unit_test(test_mismatch_statuses),
        cmocka_unit_test(test_peer_destroyed_mid_transfer),
        cmocka_unit_test(test_abort_propagates),
        cmocka_unit_test(test_invalid_transfers),
        cmocka_unit_test(test_wrong_token_refused),
        cmocka_unit_test(test_timeout_missing_rank),
        cmocka_unit_test(test_corrupt_header_and_stray_connection),
        cmocka_unit_test(test_replayed_hello_is_refused),
        cmocka_unit_test(test_single_rank),
        cmocka_unit_test(test_wait_spins_or_sleeps),
        cmocka_unit_test(test_probe_any_skips_collectives),
        cmocka_unit_test(test_probe_any_all_in_collectives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
