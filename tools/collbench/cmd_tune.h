/* collbench tune: the choices libcoll's plans make, measured on this machine
 * (docs/TUNING.md). A decision is one tuning variable and its arms (the
 * default first, then the values tried); each arm runs as a child
 * `collbench allreduce` per group (rank count, buffer kind) over the
 * decision's sizes, alternated with the others round by round (A B, then
 * B A), and the medians over the rounds pick the value. */
#ifndef COLLBENCH_CMD_TUNE_H
#define COLLBENCH_CMD_TUNE_H

#include <stddef.h>
#include <stdint.h>

#define TUNE_MAX_DECISIONS 12
#define TUNE_MAX_ARMS 4
#define TUNE_MAX_GROUPS 4
#define TUNE_MAX_SIZES 6
#define TUNE_MAX_ROUNDS 8
#define TUNE_NOISE 0.05      /* a gain below 5% is never beyond noise */
#define TUNE_PAIRED_ROUNDS 4 /* rounds that must all be faster, beside the default, */
                             /* to take a gain inside the rounds' spread */

typedef enum {
    TUNE_PICK,      /* the arm fastest over every cell */
    TUNE_THRESHOLD, /* arm 1 runs every size the other way: the variable becomes the
                     * size from which arm 0's way is kept (a crossover) */
    TUNE_CEILING,   /* the same for a window's end: the variable becomes the size
                     * from which arm 1's way runs, arm 0's kept below it */
} tune_kind;

typedef struct tune_group {
    int ranks;
    const char *buffers; /* malloc, thp or coll */
    int out_of_place;    /* 0: in place, as dist.all_reduce calls it */
} tune_group;

/* " out of place" for such a group, "" else: after its buffer kind in messages. */
static inline const char *tune_place(const tune_group *g)
{
    return g->out_of_place ? " out of place" : "";
}

typedef struct tune_decision {
    const char *knob;    /* the tuning variable it sets */
    const char *what;    /* what it chooses, for the progress line and the file */
    const char *backend; /* the backend it is measured on (NULL: shm) */
    int iters, warmup;   /* per run (0: the run's own): latency-bound sizes need more */
    tune_kind kind;
    int narms;
    const char *arms[TUNE_MAX_ARMS]; /* the variable's value per arm; arms[0] NULL: unset */
    int ngroups;
    tune_group groups[TUNE_MAX_GROUPS];
    int nsizes;
    uint64_t sizes[TUNE_MAX_SIZES];
    /* measured: p50 microseconds per round, arm, group, size (0: none) */
    int rounds; /* complete rounds */
    double us[TUNE_MAX_ROUNDS][TUNE_MAX_ARMS][TUNE_MAX_GROUPS][TUNE_MAX_SIZES];
} tune_decision;

/* The decisions this machine's plans make (cmd_tune_plan.c); quick: tiny sizes,
 * 2 ranks, one buffer kind, for a test of the whole path. Copies at most cap
 * and returns how many the plan has (more than cap: the caller's array is too
 * small, and nothing is silently left out). */
size_t cmd_tune_plan(tune_decision *out, size_t cap, int quick);

/* What the measurements say for d. *changed 0: keep the default (why says
 * why); 1: value (as the file writes it) and, in why, the cell that shows it
 * ("1 MiB 2 ranks thp: 408 -> 212 us, 1.9x") and the overall gain. */
void cmd_tune_choose(const tune_decision *d, int *changed, char *value, size_t valuelen, char *why,
                     size_t whylen);

/* One child run: `EXE allreduce -P ranks --backend shm|tcp --buffers B --sizes ...`
 * with knob=value in its environment (value NULL: unset), every other tuning
 * variable unset and no tuning file; p50 microseconds per size into us.
 * 0; 1 when the deadline came first (the child was stopped, nothing
 * measured); or -1 with why (the command and its last stderr lines). */
typedef struct tune_run_opts {
    const char *exe;
    const char *workdir; /* temporary files */
    int iters, warmup;
    double timeout_s;
    double deadline; /* coll__now_s() by which every run has ended (0: none) */
} tune_run_opts;
int cmd_tune_run(const tune_run_opts *o, const tune_decision *d, int arm, int group, double *us,
                 char *why, size_t whylen);
/* The iterations and warm-ups d's runs take: its own where set, else o's. */
void cmd_tune_iters(const tune_run_opts *o, const tune_decision *d, int *iters, int *warmup);

#endif
