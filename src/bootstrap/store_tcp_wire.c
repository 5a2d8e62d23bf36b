/* The TCP store's wire format: see store_tcp_wire.h. */
#include "bootstrap/store_tcp_wire.h"

#include "core/hmac.h"

void coll__store_tcp_mac(const char *token, size_t len, int server, const unsigned char *nonce,
                         const unsigned char *cnonce, unsigned char out[COLL_SHA256_LEN])
{
    static const char client_domain[] = "collbench-store",
                      server_domain[] = "collbench-store-server";
    const void *parts[4] = {server ? server_domain : client_domain, nonce, cnonce, NULL};
    size_t lens[4] = {server ? sizeof server_domain - 1 : sizeof client_domain - 1, COLL_NONCE_LEN,
                      COLL_NONCE_LEN, 0};
    coll__hmac_sha256(token, len, parts, lens, out);
}
