#include "engine/host_label.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int label_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

int bench_host_label(char *buf, size_t n, char *why, size_t whylen)
{
    const char *set = getenv(HOST_LABEL_ENV);
    if (set) {
        size_t len = strlen(set), i = 0;
        while (i < len && label_char(set[i])) i++;
        if (len == 0 || len > 63 || i < len) {
            snprintf(why, whylen,
                     "%s=\"%.80s\": a machine name is 1 to 63 of A-Z a-z 0-9 . _ - (it goes into "
                     "CSV fields)",
                     HOST_LABEL_ENV, set);
            snprintf(buf, n, "unknown");
            return -1;
        }
        snprintf(buf, n, "%s", set);
        return 0;
    }
    if (gethostname(buf, n) != 0) snprintf(buf, n, "unknown");
    buf[n - 1] = '\0';
    return 0;
}
