/* One rank's trace of a program's communication (docs/DESIGN.md "Trace
 * format": JSON lines, a header, the groups, the calls in order, a footer), read
 * into memory (replay_trace_read), and every rank's traces checked against each
 * other before anything runs (replay_trace_check). Errors name the file, the
 * line and the problem. */
#ifndef REPLAY_TRACE_H
#define REPLAY_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"

#define REPLAY_TRACE_FORMAT "collbench-trace"
#define REPLAY_TRACE_VERSION 1
/* A larger file is refused before it is read (a trace is read whole into memory). */
#define REPLAY_TRACE_MAX_BYTES (1ull << 30)
/* A group's plan line (replay_group.plan): at most this many COLL_NAME=VALUE
 * pairs and characters, what the replay puts in its environment. */
#define REPLAY_PLAN_MAX_VARS 16
#define REPLAY_PLAN_MAX_LEN 1023

/* The format's ops, in its order. */
typedef enum replay_op {
    REPLAY_ALLREDUCE = 0,
    REPLAY_ALLGATHER,
    REPLAY_REDUCESCATTER,
    REPLAY_BROADCAST,
    REPLAY_REDUCE,
    REPLAY_ALLTOALL,
    REPLAY_BARRIER,
    REPLAY_SEND,
    REPLAY_RECV,
    REPLAY_GATHER,
    REPLAY_SCATTER,
    REPLAY_OP_COUNT
} replay_op;

/* "allreduce", ...; "invalid-op" outside the enum. Static. */
const char *replay_op_name(replay_op op);
/* 0 and *out set, or -1 for a name the format does not have. */
int replay_op_parse(const char *name, replay_op *out);
/* 1 for ops with a reduction (allreduce, reducescatter, reduce), a root
 * (broadcast, reduce, gather, scatter), a peer (send, recv). */
int replay_op_has_red(replay_op op);
int replay_op_has_root(replay_op op);
int replay_op_is_p2p(replay_op op);

typedef struct replay_group {
    char *id;   /* equal on every member */
    char *desc; /* "" when none */
    int *ranks; /* global ranks in group-rank order */
    int nranks;
    int my_rank; /* this trace's rank in the group */
    long line;
    char *plan; /* NULL, or what its communicator's probes decided, as tuning
                   variables ("COLL_SHM_...=VALUE ..."; coll_comm_plan) */
} replay_group;

/* An uneven all-to-all's elements to (in) and from (out) each group rank, n
 * of each; n 0 for every other call, and for an even all-to-all (count each). */
typedef struct replay_splits {
    size_t *in, *out; /* size_t: coll_alltoallv's counts */
    size_t n;
} replay_splits;

typedef struct replay_call {
    int64_t seq;
    size_t group; /* index into the trace's groups */
    replay_op op;
    coll_dtype dtype;
    coll_op red; /* meaningful where replay_op_has_red */
    uint64_t count, in, out;
    int root, peer;      /* group ranks; -1 where the op has none */
    int64_t t0, t1, gap; /* ns; t0/t1 -1 when the trace has none, gap 0 */
    int64_t cpu;         /* ns of the calling thread's CPU since its previous call
                            returned (the program's work on it); -1 when unknown */
    int64_t wait_cpu;    /* the calling thread was blocked when this call ended, after
                            this many ns of CPU since its latest call returned (it
                            waited for the call); -1: it was running, or unknown */
    int blocking;        /* 1: the call ran on the calling thread, which went on once
                            it ended (the torch backend's inline calls) */
    replay_splits sp;    /* owned by the trace */
    long line;
} replay_call;

/* Elements an all-to-all sends group rank peer (out 0) or receives from it
 * (out 1): its splits where it has them, else its count. */
uint64_t replay_call_split(const replay_call *c, int peer, int out);

typedef struct replay_trace {
    char *path;
    int rank, world;
    char source[32];
    char backend[32]; /* the program's backend, as the header names it ("" when not) */
    char host[64];    /* the recording's host, as the header names it ("" when not) */
    int cpus;         /* the CPUs the program's rank could run on ("cpus"), 0 when not said */
    replay_group *groups;
    size_t ngroups;
    replay_call *calls;
    size_t ncalls;
    int has_times; /* every call carries t0 and t1 */
} replay_trace;

/* Reads path (refused unreadable or over max_bytes without reading it) into t,
 * which the caller frees with replay_trace_free also on failure. 0, or -1 with
 * "PATH:LINE: problem" (or "PATH: problem") in err. Without jansson: -1 saying
 * so, and *no_json set (may be NULL). */
int replay_trace_read(const char *path, uint64_t max_bytes, replay_trace *t, int *no_json,
                      char *err, size_t errlen);
void replay_trace_free(replay_trace *t);

/* The group of t with this id, or -1. */
long replay_trace_group(const replay_trace *t, const char *id);

/* All ranks' traces (n of them, any order) against each other: one world, one
 * trace per rank; each group's member list equal on every member; per group
 * the members' collective calls the same in order (op, dtype, reduction,
 * count, root), and the i-th send from a to b matching the i-th receive at b
 * from a (count, dtype). 0, or -1 with the first disagreement in err (files,
 * seq, line, group, what differs). On 0, *by_rank (n entries, may be NULL)
 * lists the traces by rank. */
int replay_trace_check(replay_trace *const *traces, size_t n, replay_trace **by_rank, char *err,
                       size_t errlen);

/* 0 when every call of t is one libcoll runs; else -1 naming the call, the op
 * and the file (gather and scatter: libcoll has none). */
int replay_trace_replayable(const replay_trace *t, char *err, size_t errlen);

#endif
