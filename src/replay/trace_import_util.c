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
        if (c->sp.n) { /* uneven: the mean per peer, as an even all-to-all of its total */
            k->count = k->in / c->sp.n;
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
