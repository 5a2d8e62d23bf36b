/* One rank's replay of its trace on one backend (a "turn"): a communicator per
 * group of the trace this rank belongs to, its calls in order with the same
 * sizes, dtypes, reductions, roots and peers, the recorded gaps between them,
 * and what it measured (replay_measure). */
#ifndef REPLAY_RUN_H
#define REPLAY_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "replay/trace.h"

/* Size classes of a call's bytes (the engine's bytes of a call: the message of
 * allreduce, every rank's block together for allgather...): <64K, 64K-1M,
 * 1M-16M, >=16M. */
#define REPLAY_NSIZE 4
int replay_size_class(uint64_t bytes);
const char *replay_size_class_name(int k); /* "<64K", ...; static */

/* A gap at least this long is slept, a shorter one spun (see replay_spend_gap),
 * unless the gaps are busy (REPLAY_GAPS_BUSY). */
#define REPLAY_SLEEP_GAP_S 200e-6

/* Per op and size class, over one rank's calls (sums). */
typedef struct replay_cell {
    double calls, time_s;
    double busbytes;   /* bytes x the engine's bus factor: busbw = busbytes / time_s */
    double recorded_s; /* t1 - t0 of the trace's calls, where it has them */
} replay_cell;

/* What one rank measured in one turn. Only doubles: the ranks allgather it as
 * an array of REPLAY_MEASURE_DOUBLES float64. */
typedef struct replay_measure {
    double total_s;     /* from the start (all ranks together) to the end of its last call */
    double comm_s;      /* time some call was in flight (replay_busy.h) */
    double gap_s;       /* time spent in gaps (recorded gaps, measured as spent) */
    double capped_gaps; /* gaps cut to the cap (half of the timeout) */
    double recorded_comm_s, recorded_gap_s, recorded_total_s; /* from t0/t1/gap; 0 without */
    double has_times;                                         /* 1: the trace has t0/t1 */
    /* of comm_s, the time in collectives before their last rank arrived
     * (replay_skew.h); recorded: of recorded_comm_s, on one clock only. NAN
     * where unknown (no issue_s and call_s; the traces on several clocks) */
    double skew_s, recorded_skew_s;
    replay_cell cell[REPLAY_OP_COUNT][REPLAY_NSIZE];
} replay_measure;
#define REPLAY_MEASURE_DOUBLES (sizeof(replay_measure) / sizeof(double))

/* How the recorded compute between calls is spent (--gaps). */
typedef enum replay_gaps {
    REPLAY_GAPS_NONE = 0, /* not at all: the calls back to back */
    REPLAY_GAPS_RECORDED, /* the recorded CPU time (the trace's `cpu`) spun, the rest
                             slept (spun when short) */
    REPLAY_GAPS_BUSY,     /* spun: compute that held a core, as a CPU program's does */
    REPLAY_GAPS_SLEEP,    /* as recorded, the calls' CPU time (`cpu`) left out */
} replay_gaps;
/* --overlap: recorded keeps calls in flight as the program did, none runs
 * each alone; auto is recorded (the default, kept as a name). */
typedef enum replay_overlap {
    REPLAY_OVERLAP_NONE = 0,
    REPLAY_OVERLAP_RECORDED,
    REPLAY_OVERLAP_AUTO
} replay_overlap;
/* 1 when t's calls are kept in flight under overlap (a trace with times, and
 * overlap not none). */
int replay_keeps_in_flight(const replay_trace *t, int overlap);
/* The communicators ("lanes") each group of t is replayed on under overlap on
 * backend, its nonblocking calls dealt to them in turn, so that up to that
 * many run at once: REPLAY_LANES_MAX for a program on torch's gloo (the
 * header's backend) replayed on the gloo backend with calls in flight, as
 * torch's gloo process group runs a group's calls on its two worker threads;
 * 1 otherwise, as libcoll and the program on coll run one call of a
 * communicator at a time. */
#define REPLAY_LANES_MAX 2
size_t replay_lanes(const replay_trace *t, int overlap, const char *backend);
/* "none", "recorded", "auto"; replay_overlap_parse: 0, or -1 for another name. */
const char *replay_overlap_name(replay_overlap o);
int replay_overlap_parse(const char *name, replay_overlap *o);

/* "none", "recorded", "busy", "sleep"; replay_gaps_parse: 0, or -1 for another name. */
const char *replay_gaps_name(replay_gaps g);
int replay_gaps_parse(const char *name, replay_gaps *g);

typedef struct replay_opts {
    const char *backend; /* the turn's backend */
    int coll_buffers;    /* 1: coll_alloc on each group's communicator; 0: malloc */
    int gaps;            /* replay_gaps: how the recorded gaps are spent */
    int overlap;         /* replay_overlap: keep calls in flight together as recorded
                            (a trace with times; replay_schedule.h) or each alone */
    double timeout_s;    /* every communicator's; a gap is capped at half of it */
    double arrival_s;    /* spent before the first call as a gap: how much later than
                            the earliest rank this one made its first call
                            (replay_arrival.h) */
    coll_comm *world;    /* the groups meet through it (replay_rdv.h); barriers on it
                            start every rank together and end the turn before the
                            groups are destroyed */
    double *call_s;      /* NULL, or t->ncalls entries: each call's time (replay_median.h) */
    double *issue_s;     /* NULL, or t->ncalls entries: each call's issue, from the turn's
                            start (replay_calls.h) */
    double cpu_share;    /* the share of the trace's CPU times (cpu, wait_cpu) that was the
                            calling thread's CPU, spun with --gaps recorded: 1 for the
                            torch backend's (its thread's CPU clock); cores / ranks for a
                            profiler's operator times with more ranks than cores on the
                            host; 0: none spun (slept) */
    int recorded_plan;   /* 1: each group's communicator made with its recorded plan in
                            the environment (replay_group.plan), as the program's */
    int exit_late;       /* 1: each rank leaves a collective as late as recorded
                            (replay_exit.h); the traces need one clock (replay_arrival) */
    int one_clock;       /* 1: every rank's trace has times on one host's clock
                            (replay_arrival): the recorded skew is known */
    /* replay_run's own: NULL, or each call's recorded exit lateness */
    const double *exit_late_s;
} replay_opts;

/* The engine bytes of call c of t in its group (bench_coll_bytes: the message
 * of allreduce, every rank's block together for allgather...), and their
 * size class. */
uint64_t replay_call_bytes(const replay_trace *t, const replay_call *c);
int replay_call_size_class(const replay_trace *t, const replay_call *c);

/* Replays t as o says into m. 0, or a coll status with err naming the call
 * (seq, file, line, group) or the group whose communicator failed. */
int replay_run(const replay_trace *t, const replay_opts *o, replay_measure *m, char *err,
               size_t errlen);

/* The bytes of the buffers replay_run allocates for t (per group its largest
 * send and receive buffer, times its calls in flight at once with overlap on
 * the backend that keeps the most in flight), for the launcher's check against
 * this host's memory. */
uint64_t replay_buffer_bytes(const replay_trace *t, int overlap);

/* Spends s seconds: busy, a spin on the clock (the program's compute held
 * this rank's core); else a sleep from REPLAY_SLEEP_GAP_S up (the compute ran
 * elsewhere, a GPU, and ranks that outnumber the cores must not take each
 * other's CPU), a spin below (a sleep that short would overshoot by about its
 * own length). Returns the time spent. */
double replay_spend_gap(double s, int busy);

/* This thread's CPU clock in s (CLOCK_THREAD_CPUTIME_ID), -1 when unreadable. */
double replay_thread_cpu_s(void);

/* Spins until this thread's CPU clock reads until_s, at most cap_s of wall
 * time: the program's compute on its calling thread (the trace's `cpu`),
 * whose wall time stretches as the cores are shared, as the program's did.
 * Returns the wall time spent. */
double replay_spend_cpu(double until_s, double cap_s);

#endif
