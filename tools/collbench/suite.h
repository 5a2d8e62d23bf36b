/* collbench suite: what its files share. The suite is a list of steps, each a
 * run of our own binary as a subprocess (a collective on one backend x process
 * count, then the training benchmark, then the report), so a step that crashes
 * or hangs costs that step only. */
#ifndef COLLBENCH_SUITE_H
#define COLLBENCH_SUITE_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/eta.h"

#define SUITE_MAX_ARGS 48

typedef enum suite_kind { SUITE_COLLECTIVE, SUITE_TRAIN, SUITE_REPORT } suite_kind;

typedef struct suite_step {
    suite_kind kind;
    char title[128]; /* "allreduce tcp 4 ranks", "allreduce shm/coll 2 ranks" */
    char group[96];  /* steps alike for the ETA: "allreduce shm/coll" */
    char *argv[SUITE_MAX_ARGS + 1];
    int argc;
    char strings[4096]; /* where argv points */
    size_t used;
    double weight; /* expected cost relative to the others, for the ETA */
    /* outcome */
    int code; /* exit code; 128+signal when killed; -1 not run */
    double seconds;
    int unavailable;  /* exit 4: skipped, not a failure */
    double timed_out; /* stopped after this many seconds (a hang), else 0 */
    char note[256];   /* the step's last stderr line, for the summary */
} suite_step;

/* Adds one printf-formatted argument to step->argv. 0, or -1 when full. */
__attribute__((format(printf, 2, 3))) int suite_step_arg(suite_step *step, const char *fmt, ...);

/* ---- backends (suite_plan.c) ---- */

/* The backends to sweep into out: each one named in list (comma-separated),
 * which must be known (else 2) and runnable here (else 4, with why printed);
 * list NULL: every available one: mpi when mpirun is there, nccl when it is
 * available (it runs with --device cuda); the others skipped are said on log. */
int suite_pick_backends(const char *list, char out[][16], size_t cap, size_t *n, FILE *log);

/* ---- the progress display (suite_progress.c) ---- */

typedef struct suite_progress {
    int tty;             /* redraw one line on stderr; else plain lines */
    int shown;           /* the progress line is on screen */
    size_t total, index; /* steps; the current one, from 1 */
    double t0, step_t0, last_draw;
    const char *title;
    eta_step *eta; /* total of them: weights, groups, seconds of those done */
} suite_progress;

void suite_progress_init(suite_progress *p, size_t total, eta_step *eta);
void suite_progress_begin(suite_progress *p, size_t index, const char *title);
/* Redraw the line (a terminal only; at most a few times a second). */
void suite_progress_tick(suite_progress *p);
/* A line of text (a step's stderr) shown above the progress line. */
void suite_progress_print(suite_progress *p, const char *line);
/* The step is over: one permanent line "[3/11] allreduce tcp 4 ranks: ok (6.1 s)". */
void suite_progress_end(suite_progress *p, const char *outcome, double seconds);
void suite_progress_clear(suite_progress *p);

/* ---- running a step (suite_exec.c) ---- */

/* Runs step->argv[0] with its arguments; stdout goes to log, stderr to log and
 * through p. Kills it (SIGTERM, then SIGKILL) after limit_s. Sets step->code,
 * ->seconds and ->note. *interrupted (set by a signal handler) stops it too. */
void suite_exec(suite_step *step, FILE *log, suite_progress *p, double limit_s,
                volatile sig_atomic_t *interrupted);

/* The tuning file (suite_tuning.c). Before anything runs: 0, or EXIT_USAGE
 * when it is malformed (said on stderr: every step would refuse it); the
 * steps are told not to say it again. Then one line on stderr when there is
 * none for this machine (suggesting `collbench tune`) or it is another
 * machine's, and in the log in every case. */
int suite_tuning_check(const char *prefix);
void suite_tuning_note(FILE *log);

#endif
