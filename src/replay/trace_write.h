/* One rank's trace written in the trace format (docs/DESIGN.md "Trace
 * format", version 1): the header, every group, the calls in order, the
 * footer; atomically (a temporary beside the file, renamed into place), so a
 * reader finds the whole trace or none. */
#ifndef REPLAY_TRACE_WRITE_H
#define REPLAY_TRACE_WRITE_H

#include <stddef.h>

#include "replay/trace.h"
#include "replay/trace_import.h"

/* The header's fields beyond rank and world; NULL strings are written "". */
typedef struct replay_write_meta {
    const char *source; /* NULL: t->source */
    const char *host, *torch, *backend;
    long pid;
    double created_unix; /* 0: now */
} replay_write_meta;

/* Writes t to path (an uneven all-to-all's splits as in_splits/out_splits). 0,
 * or -1 with "PATH: problem" in err (path untouched). Without jansson -1
 * saying so. */
int replay_trace_write(const char *path, const replay_trace *t, const replay_write_meta *meta,
                       char *err, size_t errlen);

#endif
