/* Store keys: a prefix plus a formatted suffix (store.h, coll__store_key). */
#include "bootstrap/store.h"
#include "coll.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int coll__store_key(char *key, size_t len, coll__err *err, const char *prefix, const char *fmt, ...)
{
    size_t np = strlen(prefix);
    int n = -1;
    if (np < len) {
        memcpy(key, prefix, np);
        va_list ap;
        va_start(ap, fmt);
        n = vsnprintf(key + np, len - np, fmt, ap);
        va_end(ap);
    }
    if (n >= 0 && (size_t)n < len - np) return COLL_OK;
    if (len) key[len - 1] = '\0';
    if (len && np >= len) memcpy(key, prefix, len - 1);
    return coll__err_set(err, COLL_EINVAL, "store key %.64s... does not fit in %zu bytes", key,
                         len);
}
