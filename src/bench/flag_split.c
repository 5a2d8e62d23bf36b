/* See flag_split.h. */
#include "bench/flag_split.h"
#include "core/errbuf.h"

#include <stdio.h>
#include <string.h>

int bench_flag_split(int argc, char **argv, int *i, char *flag, size_t flaglen,
                     const char **value, char *err, size_t errlen)
{
    const char *a = argv[*i];
    const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
    if (eq) {
        snprintf(flag, flaglen, "%.*s", (int)(eq - a), a);
        *value = eq + 1;
    } else if (a[1] != '-' && a[1] != '\0' && a[2] != '\0') { /* -P2 */
        snprintf(flag, flaglen, "%.2s", a);
        *value = a + 2;
    } else {
        snprintf(flag, flaglen, "%s", a);
        if (*i + 1 >= argc) {
            coll_set_err(err, errlen, "%s: missing value", a);
            return -1;
        }
        *value = argv[++*i];
    }
    return 0;
}
