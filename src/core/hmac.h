/* SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for the challenge-response
 * that authenticates store and transport connections: each side proves it
 * knows the job token by a MAC over a fresh nonce, so a captured exchange
 * cannot be replayed and the token never crosses the wire. */
#ifndef COLL_HMAC_H
#define COLL_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define COLL_SHA256_LEN 32
#define COLL_NONCE_LEN 16

typedef struct coll__sha256 {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char buf[64];
    size_t used;
} coll__sha256;

void coll__sha256_init(coll__sha256 *s);
void coll__sha256_update(coll__sha256 *s, const void *data, size_t len);
void coll__sha256_final(coll__sha256 *s, unsigned char out[COLL_SHA256_LEN]);

/* HMAC-SHA-256 of the concatenation of up to 4 parts (NULL parts are skipped). */
void coll__hmac_sha256(const void *key, size_t keylen, const void *const parts[4],
                       const size_t lens[4], unsigned char out[COLL_SHA256_LEN]);

/* A fresh nonce from the kernel; COLL_OK or COLL_ESYS. */
int coll__nonce(unsigned char out[COLL_NONCE_LEN]);

#endif
