#include "core/errbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUT "..."

void coll__vset_err_keep_end(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (!err || errlen == 0) return;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(err, errlen, fmt, ap);
    char *full = n >= 0 && (size_t)n >= errlen ? malloc((size_t)n + 1) : NULL;
    if (full) {
        vsnprintf(full, (size_t)n + 1, fmt, again);
        size_t room = errlen - 1, head = room / 4, tail = room - head - strlen(CUT);
        if (room > 2 * strlen(CUT))
            snprintf(err, errlen, "%.*s" CUT "%s", (int)head, full, full + (size_t)n - tail);
        free(full);
    }
    va_end(again);
}

void coll__set_err_keep_end(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    coll__vset_err_keep_end(err, errlen, fmt, ap);
    va_end(ap);
}

void coll__set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
