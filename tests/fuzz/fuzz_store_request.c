/* libFuzzer target: bytes from a client of the TCP store, through the
 * server's framing, length checks, HELLO/token check and request parser
 * (coll__tcp_store_feed). Anything may come in; nothing may crash, leak or
 * read out of bounds. The server's "dropped connection" lines go to stderr. */
#include "bootstrap/store.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    coll__tcp_store_feed(data, size);
    return 0;
}
