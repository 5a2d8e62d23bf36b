/* libFuzzer target: bytes arriving on a TCP transport connection, read by
 * coll__tcp_peer_recv/coll__tcp_peer_peek as they are in a run (message headers checked
 * against the posted receive: magic, type, signature, length; ABORT headers).
 * Input: 2 bytes = receive length (0..65535), 1 byte = signature seq, then the
 * stream. Nothing may crash or write past the posted buffer. */
#include "coll.h"
#include "transport/tcp/tcp_peer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    size_t want = (size_t)data[0] << 8 | data[1];
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0) return 0;
    char *buf = malloc(want ? want : 1);
    tcp_peer p = {.fd = sv[0], .rank = 1, .me = 0, .wrank = 1, .wme = 0};
    coll__xfer x = {
        .kind = COLL_XFER_RECV, .peer = 1, .buf = buf, .len = want, .status = COLL_EAGAIN};
    x.sig.seq = data[2];
    x.sig.kind = COLL_KIND_ALLREDUCE;
    coll__tcp_queue_push(&p.recvs, &x);
    const uint8_t *in = data + 3;
    size_t left = size - 3, moved = 0;
    tcp_error err;
    int rc = COLL_OK;
    /* Bounded: each turn either moves bytes or ends (EOF, error, a header
     * parked with no receive posted). */
    for (int turn = 0; rc == COLL_OK && turn < 1000; turn++) {
        ssize_t n = left ? send(sv[1], in, left, MSG_DONTWAIT | MSG_NOSIGNAL) : 0;
        if (n > 0) {
            in += n;
            left -= (size_t)n;
        }
        if (!left) shutdown(sv[1], SHUT_WR); /* EOF after the input */
        if (p.recvs.head) {
            rc = coll__tcp_peer_recv(&p, (size_t)1 << 20, &moved, &err);
        } else {
            if (p.eof || p.rhdr_got == sizeof(tcp_wire_hdr)) break;
            rc = coll__tcp_peer_peek(&p, &moved, &err);
        }
    }
    if (rc) coll__tcp_peer_fail(&p, &err);
    close(sv[0]);
    close(sv[1]);
    free(buf);
    return 0;
}
