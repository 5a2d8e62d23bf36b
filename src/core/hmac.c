/* SHA-256 and HMAC-SHA-256 (hmac.h), small and portable: the handshakes hash a
 * few dozen bytes, so speed does not matter and no crypto library is needed. */
#include "core/hmac.h"
#include "coll.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "core/be.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void block(coll__sha256 *s, const unsigned char *p)
{
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++) w[i] = coll__be_get_u32(p + 4 * i);
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, s->h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = v[7] + (rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25)) +
                      ((v[4] & v[5]) ^ (~v[4] & v[6])) + K[i] + w[i];
        uint32_t t2 = (rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22)) +
                      ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) s->h[i] += v[i];
}

void coll__sha256_init(coll__sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->bytes = 0;
    s->used = 0;
}

void coll__sha256_update(coll__sha256 *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->bytes += len;
    while (len > 0) {
        size_t take = 64 - s->used < len ? 64 - s->used : len;
        memcpy(s->buf + s->used, p, take);
        s->used += take;
        p += take;
        len -= take;
        if (s->used == 64) {
            block(s, s->buf);
            s->used = 0;
        }
    }
}

void coll__sha256_final(coll__sha256 *s, unsigned char out[COLL_SHA256_LEN])
{
    uint64_t bits = s->bytes * 8;
    unsigned char pad = 0x80, zero = 0, len[8];
    coll__sha256_update(s, &pad, 1);
    while (s->used != 56) coll__sha256_update(s, &zero, 1);
    coll__be_put_u64(len, bits);
    coll__sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++) coll__be_put_u32(out + 4 * i, s->h[i]);
}

void coll__hmac_sha256(const void *key, size_t keylen, const void *const parts[4],
                       const size_t lens[4], unsigned char out[COLL_SHA256_LEN])
{
    unsigned char k[64] = {0}, pad[64], inner[COLL_SHA256_LEN];
    coll__sha256 s;
    if (keylen > 64) { /* RFC 2104: long keys are hashed first */
        coll__sha256_init(&s);
        coll__sha256_update(&s, key, keylen);
        coll__sha256_final(&s, k);
    } else if (keylen) {
        memcpy(k, key, keylen);
    }
    for (int i = 0; i < 64; i++) pad[i] = k[i] ^ 0x36;
    coll__sha256_init(&s);
    coll__sha256_update(&s, pad, 64);
    for (int i = 0; i < 4; i++)
        if (parts[i]) coll__sha256_update(&s, parts[i], lens[i]);
    coll__sha256_final(&s, inner);
    for (int i = 0; i < 64; i++) pad[i] = k[i] ^ 0x5c;
    coll__sha256_init(&s);
    coll__sha256_update(&s, pad, 64);
    coll__sha256_update(&s, inner, sizeof inner);
    coll__sha256_final(&s, out);
}

int coll__nonce(unsigned char out[COLL_NONCE_LEN])
{
    size_t got = 0;
    while (got < COLL_NONCE_LEN) {
        ssize_t n = getrandom(out + got, COLL_NONCE_LEN - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return COLL_ESYS;
        got += (size_t)n;
    }
    return COLL_OK;
}
