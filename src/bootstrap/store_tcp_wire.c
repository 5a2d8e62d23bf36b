/* The TCP store's wire format: see store_tcp_wire.h. */
#include "bootstrap/store_tcp_wire.h"

#include "core/hmac.h"

void coll__store_tcp_mac(const char *token, size_t len, const unsigned char *nonce,
                         unsigned char out[COLL_SHA256_LEN])
{
    static const char domain[] = "collbench-store"; /* a transport MAC cannot pass here */
    const void *parts[4] = {domain, nonce, NULL, NULL};
    size_t lens[4] = {sizeof domain - 1, COLL_NONCE_LEN, 0, 0};
    coll_hmac_sha256(token, len, parts, lens, out);
}
