/* What the profiler importer's readers share (trace_import_event.h): where
 * an event is in a message, times in ns, the format's count of a call, and
 * the warnings. */
#ifdef COLL_HAVE_JANSSON

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/trace_import_event.h"

void replay_import_where(const char *path, const import_ev *e, char *buf, size_t len)
{
    if (e->kind == IMPORT_PARAM) /* the collective, which its name does not say */
        snprintf(buf, len, "%s: event \"%.80s\" (\"%.60s\") at ts %.3f us", path, e->name, e->coll,
                 e->ts);
    else snprintf(buf, len, "%s: event \"%.80s\" at ts %.3f us", path, e->name, e->ts);
}

int replay_import_bad(const char *path, const import_ev *e, char *err, size_t errlen,
                      const char *fmt, ...)
{
    char where[256], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    replay_import_where(path, e, where, sizeof where);
    snprintf(err, errlen, "%s: %s", where, msg);
    return -1;
}

int64_t replay_import_ns(double us)
{
    /* whole microseconds apart from the fraction: us * 1000 as a double would
     * round absolute times (1.7e15 us) to 256 ns */
    double whole = floor(us);
    return (int64_t)whole * 1000 + (int64_t)llround((us - whole) * 1000.0);
}

/* The profiler's splits count rows (dimension 0, as torch's split sizes do);
 * the format's count elements: each list times its tensor's row size, its
 * elements over its rows. 0, or -1 said when the rows do not divide them. */
static int splits_to_elements(const char *path, const import_ev *e, size_t *v, size_t n,
                              uint64_t elems, const char *which, char *err, size_t errlen)
{
    uint64_t rows = 0;
    for (size_t i = 0; i < n; i++) rows += v[i];
    if (rows == 0 ? elems != 0 : elems % rows != 0)
        return replay_import_bad(path, e, err, errlen,
                                 "the all-to-all's %s splits add up to %llu rows, which do not "
                                 "divide its %llu elements",
                                 which, (unsigned long long)rows, (unsigned long long)elems);
    for (size_t i = 0; rows && i < n; i++) v[i] *= elems / rows;
    return 0;
}

/* count, in, out per the format's meaning of count for each op. */
int replay_import_set_count(const char *path, const import_ev *e, import_call *c, char *err,
                            size_t errlen)
{
    replay_call *k = &c->c;
    switch (k->op) {
    case REPLAY_ALLGATHER:
    case REPLAY_GATHER:
    case REPLAY_SEND: k->count = k->in; break;
    case REPLAY_REDUCESCATTER:
    case REPLAY_SCATTER:
    case REPLAY_RECV: k->count = k->out; break;
    case REPLAY_BARRIER: k->count = k->in = k->out = 0; break;
    case REPLAY_ALLTOALL:
        if (c->c.sp.n) { /* uneven: the mean per peer, as an even all-to-all of its total */
            if (splits_to_elements(path, e, c->c.sp.in, c->c.sp.n, k->in, "input", err, errlen) ||
                splits_to_elements(path, e, c->c.sp.out, c->c.sp.n, k->out, "output", err, errlen))
                return -1;
            k->count = k->in / c->c.sp.n;
            break;
        }
        if (c->size <= 0) { /* per peer once the group is known (trace_import_groups.c) */
            k->count = 0;
            break;
        }
        if (k->in % (uint64_t)c->size)
            return replay_import_bad(
                path, e, err, errlen,
                "an all-to-all of %llu elements does not split evenly over %d ranks "
                "and the event lists no splits",
                (unsigned long long)k->in, c->size);
        k->count = k->in / (uint64_t)c->size;
        break;
    default: k->count = k->in; break;
    }
    return 0;
}

void replay_import_warn(replay_import *im, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t have = strlen(im->warnings), add = strlen(line);
    char *w = realloc(im->warnings, have + add + 2);
    if (!w) return; /* the warning is lost, the import is not */
    memcpy(w + have, line, add);
    memcpy(w + have + add, "\n", 2);
    im->warnings = w;
}

#endif
