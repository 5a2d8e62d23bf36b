/* Inside the profiler importer: the trace's rank and world, and each call put
 * into a group of the trace (trace_import_groups.c). record_param_comms names
 * its group (torch's group name, its ranks); the c10d and backend events do
 * not, so their calls go to the one group their size allows, the world group
 * when nothing tells otherwise, and a warning says so. Needs jansson. */
#ifndef REPLAY_TRACE_IMPORT_GROUPS_H
#define REPLAY_TRACE_IMPORT_GROUPS_H

#include <stddef.h>

#include <jansson.h>

#include "replay/trace_import_event.h"

typedef struct import_groups {
    const char *path;
    replay_import *im;
    int rank, world; /* distributedInfo's; -1: it has none */
    int rank_fallback, world_fallback;
    json_t *pg_config;     /* distributedInfo's groups (borrowed; may be NULL) */
    const char *kind_name; /* the events the calls came from, for the warnings */
} import_groups;

/* Sets g->im's rank, world and groups, and each call's group; the calls are
 * then copied in order by the caller. Warnings go to g->im->warnings. 0, or
 * -1 with "PATH: ..." in err. */
int replay_import_groups_place(import_groups *g, import_call *calls, size_t n, char *err,
                               size_t errlen);
void replay_import_groups_free(import_groups *g);

#endif
