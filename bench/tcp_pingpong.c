/* TCP transport ping-pong between two threads over loopback, next to a plain
 * blocking send()/recv() loop on one TCP connection (the ceiling to compare with).
 *   tcp_pingpong [max_mib (64)] [iters (20)]
 * Prints latency for 8 B (half round trip) and one-way bandwidth per size. */
#include "bootstrap/store.h"
#include "coll.h"
#include "core/clock.h"
#include "core/sock.h"
#include "transport/transport.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct side {
    int rank;
    coll__store *store;
    coll__transport *tp;
    size_t max_bytes;
    int iters;
    double lat_us;
    double bw[32]; /* GB/s per size, index log2(MiB) */
    int fd;        /* baseline socket */
} side;

static void xfer(coll__transport *tp, coll__xfer_kind kind, int peer, void *buf, size_t len)
{
    coll__xfer x;
    memset(&x, 0, sizeof x);
    x.kind = kind;
    x.peer = peer;
    x.buf = buf;
    x.len = len;
    x.sig.kind = COLL_KIND_P2P;
    x.sig.count = len;
    if (tp->ops->post(tp, &x)) goto fail;
    while (x.status == COLL_EAGAIN)
        if (tp->ops->progress(tp, -1)) goto fail;
    if (x.status == COLL_OK) return;
fail:
    fprintf(stderr, "tcp_pingpong: rank %d: %s\n", tp->rank, tp->err.msg);
    exit(3);
}

static void *transport_side(void *arg)
{
    side *s = arg;
    coll__err err = {.rank = -1};
    if (coll__tcp_transport_create(s->store, "pp/", s->rank, 2, NULL, "bench", 30, NULL, 0, &s->tp,
                                   &err)) {
        fprintf(stderr, "tcp_pingpong: %s\n", err.msg);
        exit(3);
    }
    coll__transport *tp = s->tp;
    int peer = 1 - s->rank;
    char *buf = malloc(s->max_bytes);
    memset(buf, 1, s->max_bytes);
    int n = 10000;
    double t0 = 0;
    for (int i = -100; i < n; i++) { /* 100 warm-up round trips */
        if (i == 0) t0 = coll__now_s();
        if (s->rank == 0) {
            xfer(tp, COLL_XFER_SEND, peer, buf, 8);
            xfer(tp, COLL_XFER_RECV, peer, buf, 8);
        } else {
            xfer(tp, COLL_XFER_RECV, peer, buf, 8);
            xfer(tp, COLL_XFER_SEND, peer, buf, 8);
        }
    }
    s->lat_us = (coll__now_s() - t0) / n / 2 * 1e6;
    int k = 0;
    for (size_t len = (size_t)1 << 20; len <= s->max_bytes; len *= 2, k++) {
        for (int i = -2; i < s->iters; i++) {
            if (i == 0) t0 = coll__now_s();
            xfer(tp, s->rank == 0 ? COLL_XFER_SEND : COLL_XFER_RECV, peer, buf, len);
        }
        xfer(tp, s->rank == 0 ? COLL_XFER_RECV : COLL_XFER_SEND, peer, buf, 8); /* all arrived */
        s->bw[k] = (double)len * s->iters / (coll__now_s() - t0) / 1e9;
    }
    free(buf);
    return NULL;
}

static void all(int fd, char *p, size_t len, int sending)
{
    while (len) {
        ssize_t n = sending ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n <= 0) {
            perror("tcp_pingpong baseline");
            exit(3);
        }
        p += n;
        len -= (size_t)n;
    }
}

/* The same measurements with blocking send()/recv() on one plain connection. */
static void *baseline_side(void *arg)
{
    side *s = arg;
    char *buf = malloc(s->max_bytes);
    memset(buf, 1, s->max_bytes);
    int n = 10000;
    double t0 = 0;
    for (int i = -100; i < n; i++) {
        if (i == 0) t0 = coll__now_s();
        all(s->fd, buf, 8, s->rank == 0);
        all(s->fd, buf, 8, s->rank != 0);
    }
    s->lat_us = (coll__now_s() - t0) / n / 2 * 1e6;
    int k = 0;
    for (size_t len = (size_t)1 << 20; len <= s->max_bytes; len *= 2, k++) {
        for (int i = -2; i < s->iters; i++) {
            if (i == 0) t0 = coll__now_s();
            all(s->fd, buf, len, s->rank == 0);
        }
        all(s->fd, buf, 8, s->rank != 0);
        s->bw[k] = (double)len * s->iters / (coll__now_s() - t0) / 1e9;
    }
    free(buf);
    return NULL;
}

static void run_pair(side *s, void *(*fn)(void *))
{
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, fn, &s[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
    size_t max_mib = argc > 1 ? (size_t)atol(argv[1]) : 64;
    int iters = argc > 2 ? atoi(argv[2]) : 20;
    if (max_mib < 1 || iters < 1) {
        fprintf(stderr, "usage: tcp_pingpong [max_mib >= 1] [iters >= 1]\n");
        return 2;
    }
    side tr[2], bl[2];
    coll__store *store;
    coll__mem_store_create(30, &store);
    for (int i = 0; i < 2; i++) {
        tr[i] = (side){.rank = i, .store = store, .max_bytes = max_mib << 20, .iters = iters};
        bl[i] = tr[i];
    }
    run_pair(tr, transport_side);
    for (int i = 0; i < 2; i++) tr[i].tp->ops->destroy(tr[i].tp);
    coll__store_destroy(store);

    char err[256];
    int lfd = coll__sock_listen(NULL, 0, 1, err, sizeof err);
    if (lfd < 0) {
        fprintf(stderr, "tcp_pingpong: %s\n", err);
        return 3;
    }
    bl[1].fd = coll__sock_connect(NULL, coll__sock_port(lfd), coll__now_s() + 10, err, sizeof err);
    bl[0].fd = coll__sock_accept(lfd, coll__now_s() + 10, err, sizeof err);
    if (bl[0].fd < 0 || bl[1].fd < 0) {
        fprintf(stderr, "tcp_pingpong: baseline connection: %s\n", err);
        return 3;
    }
    coll__sock_set_nonblocking(bl[0].fd, 0);
    run_pair(bl, baseline_side);

    printf("# tcp transport vs blocking send/recv on loopback (2 threads, %d iters)\n", iters);
    printf("%12s %14s %14s %8s\n", "bytes", "transport", "baseline", "ratio");
    printf("%12d %11.2f us %11.2f us %8.2f\n", 8, tr[0].lat_us, bl[0].lat_us,
           bl[0].lat_us / tr[0].lat_us);
    int k = 0;
    for (size_t len = (size_t)1 << 20; len <= max_mib << 20; len *= 2, k++)
        printf("%12zu %9.2f GB/s %9.2f GB/s %8.2f\n", len, tr[1].bw[k], bl[1].bw[k],
               tr[1].bw[k] / bl[1].bw[k]);
    close(bl[0].fd);
    close(bl[1].fd);
    close(lfd);
    return 0;
}
