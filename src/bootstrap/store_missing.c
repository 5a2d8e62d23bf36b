/* Which ranks never wrote their key: the words of a rendezvous timeout. */
#include "bootstrap/store.h"

#include <stdio.h>

int coll__store_missing_ranks(coll__store *store, const char *key_prefix, int size, char *buf,
                              size_t len)
{
    char key[192];
    int missing = 0, listed = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (int r = 0; r < size; r++) {
        int exists = 0;
        int rc = coll__store_key(key, sizeof key, NULL, key_prefix, "%d", r);
        if (!rc) rc = store->ops->check(store, key, &exists);
        if (rc) return rc;
        if (exists) continue;
        missing++;
        if (listed < 8 && used < len) {
            int n = snprintf(buf + used, len - used, "%s%d", listed ? ", " : "", r);
            if (n > 0) used += (size_t)n;
            listed++;
        }
    }
    if (missing > listed && used < len)
        snprintf(buf + used, len - used, " and %d more", missing - listed);
    return missing;
}
