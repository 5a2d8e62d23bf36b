/* Inside the profiler importer (trace_import.c): one profiler event and the
 * call read from it (trace_import_event.c), before calls are ordered and put
 * into groups. Needs jansson. */
#ifndef REPLAY_TRACE_IMPORT_EVENT_H
#define REPLAY_TRACE_IMPORT_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "replay/trace_import.h"

/* Where an event comes from, in the order of preference: one kind per file.
 * IMPORT_KERNEL (a GPU's NCCL kernel) is never imported itself: it completes
 * a record_param_comms call. */
typedef enum import_kind {
    IMPORT_PARAM = 0,
    IMPORT_C10D,
    IMPORT_BACKEND,
    IMPORT_KERNEL,
    IMPORT_KINDS
} import_kind;

typedef struct import_ev {
    json_t *args;     /* the event's "args" (borrowed; may be NULL) */
    const char *name; /* the event's name */
    const char *coll; /* the collective as torch names it (no prefix, no trailing '_') */
    import_kind kind;
    replay_op op;
    double ts, dur; /* us */
    long long pid, tid;
    /* c10d: the backend's event of its work; record_param_comms: its GPU
     * kernel; backend, kernel: the event that took it; NULL: none */
    struct import_ev *inner;
    int dropped; /* not imported: inside another of its kind (counted there), or bad */
} import_ev;

/* A call as one event says it, before it has a group of the trace. */
typedef struct import_call {
    replay_call c; /* group, seq and gap not set yet; its splits owned here until moved */
    const char *pg_name, *pg_desc; /* NULL: the event names none (borrowed) */
    int *ranks;                    /* the group's global ranks; NULL: not known */
    int nranks;
    int size;     /* the group's size; -1: not known */
    int rank_arg; /* record_param_comms "Rank" of a call with no root or peer; -1 */
    int no_dtype; /* a c10d op whose events carry no dtype (its backend event missing or
                   * cut by the profiler's stop): replay_import_dtypes_fill gives it one */
    const import_ev *ev;
} import_call;

/* The elements of a c10d op's input tensors (its output's where it has no
 * input: recv), of a backend event's, or a record_param_comms event's or
 * kernel's "In msg nelems"; -1 when the event does not say. */
long long replay_import_ev_elems(const import_ev *e);

/* A line added to im->warnings (a newline appended; lost when out of memory). */
__attribute__((format(printf, 2, 3))) void replay_import_warn(replay_import *im, const char *fmt,
                                                              ...);

/* A profiler time (us, as "ts" and "dur" give it) in ns. */
int64_t replay_import_ns(double us);

/* The problem's prefix: "PATH: event NAME at ts TS us" (record_param_comms:
 * "NAME (\"COLLECTIVE\")"). */
void replay_import_where(const char *path, const import_ev *e, char *buf, size_t len);

/* The call of e (IMPORT_PARAM: its args; IMPORT_C10D/BACKEND: its shapes and
 * dtypes, and e->inner's). 0, or -1 with "PATH: event ...: problem" in err. */
int replay_import_call_read(const char *path, const import_ev *e, import_call *out, char *err,
                            size_t errlen);
/* The calls (by start) that no event gave a dtype: each takes that of the
 * latest earlier call of the same collective and element count that has one
 * (a DDP bucket's dtype is fixed), said in im's warnings; 0, or -1 with err
 * naming the first such call without one. */
int replay_import_dtypes_fill(const char *path, replay_import *im, import_call *calls, size_t n,
                              char *err, size_t errlen);
/* The calling thread's CPU times of calls (by start; out[i] is calls[i]'s
 * call) from events' CPU operators on its thread: cpu, the time some
 * operator ran from the thread's previous call's return to the call; and
 * wait_cpu, where the thread sat in no operator from 100 us before the call's
 * work ended until at most 500 us after it (it waited for the call), the
 * operators' time from its latest return to that stretch. -1 where unknown
 * (a backend event's call: not on the calling thread). trace_import_cpu.c. */
void replay_import_cpu(json_t *events, const import_call *calls, replay_call *out, size_t n);
/* The c10d/backend part of replay_import_call_read (trace_import_shapes.c). */
int replay_import_shapes_read(const char *path, const import_ev *e, import_call *out, char *err,
                              size_t errlen);
/* c->c.count from its in, out and splits, as the format means count for its
 * op (c->size for an even all-to-all). 0, or -1 said. */
int replay_import_set_count(const char *path, const import_ev *e, import_call *c, char *err,
                            size_t errlen);
/* "PATH: event NAME at ts TS us: " and the message into err; returns -1. */
__attribute__((format(printf, 5, 6))) int replay_import_bad(const char *path, const import_ev *e,
                                                            char *err, size_t errlen,
                                                            const char *fmt, ...);
void replay_import_call_free(import_call *c);

#endif
